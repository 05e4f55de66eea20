//! The request body: a [`CompletionRequest`] in `generateContent` form.

use serde::Serialize;

use crate::language_model::{ChatRole, CompletionRequest};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest<'a> {
    pub contents: Vec<Content<'a>>,
    /// System messages, joined: Gemini takes the system prompt apart from the turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<SystemInstruction>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub generation_config: GenerationConfig,
}

#[derive(Debug, Serialize)]
pub struct Content<'a> {
    /// `user` or `model`.
    pub role: &'static str,
    pub parts: Vec<Part<'a>>,
}

#[derive(Debug, Serialize)]
pub struct Part<'a> {
    pub text: &'a str,
}

#[derive(Debug, Serialize)]
pub struct SystemInstruction {
    pub parts: Vec<OwnedPart>,
}

#[derive(Debug, Serialize)]
pub struct OwnedPart {
    pub text: String,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

impl GenerationConfig {
    fn is_empty(&self) -> bool {
        self.temperature.is_none() && self.max_output_tokens.is_none()
    }
}

impl<'a> GenerateContentRequest<'a> {
    pub fn new(request: &'a CompletionRequest) -> Self {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| m.content.trim())
            .filter(|text| !text.is_empty())
            .collect();
        let contents = request
            .messages
            .iter()
            .filter(|m| !m.content.trim().is_empty())
            .filter_map(|m| {
                let role = match m.role {
                    ChatRole::System => return None,
                    ChatRole::User => "user",
                    ChatRole::Assistant => "model",
                };
                Some(Content { role, parts: vec![Part { text: &m.content }] })
            })
            .collect();
        Self {
            contents,
            system_instruction: (!system.is_empty())
                .then(|| SystemInstruction { parts: vec![OwnedPart { text: system.join("\n\n") }] }),
            generation_config: GenerationConfig {
                temperature: request.temperature,
                max_output_tokens: request.max_tokens,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::ChatMessage;

    #[test]
    fn maps_roles_and_takes_the_system_prompt_apart() {
        let request = CompletionRequest {
            model: "gemini-2.5-flash".into(),
            messages: vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("Hi"),
                ChatMessage::assistant("Hello"),
                ChatMessage::user("Again"),
            ],
            temperature: Some(1.0),
            max_tokens: Some(200),
        };
        insta::assert_json_snapshot!(GenerateContentRequest::new(&request), @r#"
        {
          "contents": [
            {
              "role": "user",
              "parts": [
                {
                  "text": "Hi"
                }
              ]
            },
            {
              "role": "model",
              "parts": [
                {
                  "text": "Hello"
                }
              ]
            },
            {
              "role": "user",
              "parts": [
                {
                  "text": "Again"
                }
              ]
            }
          ],
          "systemInstruction": {
            "parts": [
              {
                "text": "Be brief."
              }
            ]
          },
          "generationConfig": {
            "temperature": 1.0,
            "maxOutputTokens": 200
          }
        }
        "#);
    }

    #[test]
    fn omits_what_is_unset() {
        let request = CompletionRequest { messages: vec![ChatMessage::user("x")], ..CompletionRequest::default() };
        let body = serde_json::to_value(GenerateContentRequest::new(&request)).unwrap();
        assert_eq!(body, serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "x"}]}]}));
    }
}
