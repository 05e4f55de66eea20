//! The request body: a [`CompletionRequest`] in Messages form.

use serde::Serialize;

use crate::language_model::{ChatRole, CompletionRequest};

/// Messages requires `max_tokens`; this is used when the request leaves it open. Every
/// current Claude model allows at least this many output tokens.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

#[derive(Debug, Serialize)]
pub struct MessagesRequest<'a> {
    pub model: &'a str,
    pub max_tokens: u32,
    /// System messages, joined: Messages takes the system prompt apart from the turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<WireMessage<'a>>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

#[derive(Debug, Serialize)]
pub struct WireMessage<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

impl<'a> MessagesRequest<'a> {
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| m.content.trim())
            .filter(|text| !text.is_empty())
            .collect();
        // Messages rejects empty turns; consecutive turns of one role are merged upstream.
        let messages = request
            .messages
            .iter()
            .filter(|m| !m.content.trim().is_empty())
            .filter_map(|m| match m.role {
                ChatRole::System => None,
                ChatRole::User => Some(WireMessage { role: "user", content: &m.content }),
                ChatRole::Assistant => Some(WireMessage { role: "assistant", content: &m.content }),
            })
            .collect();
        Self {
            model: &request.model,
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: (!system.is_empty()).then(|| system.join("\n\n")),
            messages,
            stream: true,
            temperature: request.temperature,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::ChatMessage;

    #[test]
    fn takes_system_messages_apart_and_skips_empty_turns() {
        let request = CompletionRequest {
            model: "claude-sonnet-4-5".into(),
            messages: vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("Hi"),
                ChatMessage::assistant("  "),
                ChatMessage::system("Use British spelling."),
                ChatMessage::user("Colour?"),
            ],
            temperature: Some(0.2),
            max_tokens: None,
        };
        insta::assert_json_snapshot!(MessagesRequest::streaming(&request), @r#"
        {
          "model": "claude-sonnet-4-5",
          "max_tokens": 8192,
          "system": "Be brief.\n\nUse British spelling.",
          "messages": [
            {
              "role": "user",
              "content": "Hi"
            },
            {
              "role": "user",
              "content": "Colour?"
            }
          ],
          "stream": true,
          "temperature": 0.2
        }
        "#);
    }

    #[test]
    fn keeps_an_explicit_max_tokens_and_omits_what_is_unset() {
        let request = CompletionRequest {
            model: "m".into(),
            messages: vec![ChatMessage::user("x")],
            max_tokens: Some(64),
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(MessagesRequest::streaming(&request)).unwrap();
        assert_eq!(body["max_tokens"], 64);
        assert!(body.get("system").is_none() && body.get("temperature").is_none());
    }
}
