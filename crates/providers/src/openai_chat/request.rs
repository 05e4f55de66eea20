//! The request body: a [`CompletionRequest`] in Chat Completions form.

use serde::Serialize;

use crate::language_model::{ChatRole, CompletionRequest};

#[derive(Debug, Serialize)]
pub struct ChatCompletionRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage<'a>>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// `max_tokens` rather than the newer `max_completion_tokens`: every compatible server
    /// understands it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct WireMessage<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

#[derive(Debug, Serialize)]
pub struct StreamOptions {
    /// Asks for a final chunk with token usage.
    pub include_usage: bool,
}

impl<'a> ChatCompletionRequest<'a> {
    /// A streaming request with usage reporting.
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let messages = request
            .messages
            .iter()
            .map(|message| WireMessage { role: role_name(message.role), content: &message.content })
            .collect();
        Self {
            model: &request.model,
            messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            temperature: request.temperature,
            max_tokens: request.max_tokens,
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
    use serde_json::json;

    #[test]
    fn asks_for_a_stream_with_usage_and_omits_unset_options() {
        let request = CompletionRequest {
            model: "gpt-4o-mini".into(),
            messages: vec![ChatMessage::system("Be brief."), ChatMessage::user("Hi"), ChatMessage::assistant("Hello")],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::streaming(&request)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello"}
                ],
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn sends_temperature_and_max_tokens_when_set() {
        let request = CompletionRequest {
            model: "m".into(),
            temperature: Some(0.5),
            max_tokens: Some(64),
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::streaming(&request)).unwrap();
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(64));
    }
}
