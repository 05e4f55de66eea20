//! The request body: a [`CompletionRequest`] in Responses form.

use serde::Serialize;

use crate::language_model::{ChatRole, CompletionRequest};

#[derive(Debug, Serialize)]
pub struct ResponsesRequest<'a> {
    pub model: &'a str,
    /// The conversation as "easy" input messages (`{role, content}`), system included, in order.
    pub input: Vec<InputMessage<'a>>,
    pub stream: bool,
    /// Colloquy keeps the conversation itself; nothing needs to be stored upstream.
    pub store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct InputMessage<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

impl<'a> ResponsesRequest<'a> {
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let input = request
            .messages
            .iter()
            .filter(|message| !message.content.is_empty())
            .map(|message| InputMessage { role: role_name(message.role), content: &message.content })
            .collect();
        Self {
            model: &request.model,
            input,
            stream: true,
            store: false,
            temperature: request.temperature,
            max_output_tokens: request.max_tokens,
        }
    }
}

fn role_name(role: ChatRole) -> &'static str {
    match role {
        ChatRole::System => "system",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::ChatMessage;

    #[test]
    fn maps_the_conversation_to_input_messages() {
        let request = CompletionRequest {
            model: "gpt-5-mini".into(),
            messages: vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("Hi"),
                ChatMessage::assistant(""),
                ChatMessage::assistant("Hello"),
                ChatMessage::user("Again"),
            ],
            temperature: Some(0.5),
            max_tokens: Some(100),
        };
        insta::assert_json_snapshot!(ResponsesRequest::streaming(&request), @r#"
        {
          "model": "gpt-5-mini",
          "input": [
            {
              "role": "system",
              "content": "Be brief."
            },
            {
              "role": "user",
              "content": "Hi"
            },
            {
              "role": "assistant",
              "content": "Hello"
            },
            {
              "role": "user",
              "content": "Again"
            }
          ],
          "stream": true,
          "store": false,
          "temperature": 0.5,
          "max_output_tokens": 100
        }
        "#);
    }
}
