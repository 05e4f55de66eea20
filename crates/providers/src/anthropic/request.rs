//! The request body: a [`CompletionRequest`] in Messages form.
//!
//! System messages go to `system`; tool results are `tool_result` blocks in a user turn;
//! thinking blocks from an earlier Anthropic reply go back verbatim with their signature
//! (a tool loop with extended thinking requires it).

use protocol::api::ApiFormat;
use serde::Serialize;
use serde_json::{Value, json};

use crate::language_model::{ChatMessage, ChatRole, CompletionRequest, ContentPart, Media, MediaSource, ToolSpec};

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
    pub messages: Vec<WireMessage>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
}

#[derive(Debug, Serialize)]
pub struct WireMessage {
    pub role: &'static str,
    /// A string for plain text, else content blocks.
    pub content: Value,
}

#[derive(Debug, Serialize)]
pub struct WireTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
}

impl<'a> MessagesRequest<'a> {
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let system: Vec<String> = request
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| m.text().trim().to_owned())
            .filter(|text| !text.is_empty())
            .collect();
        let messages = request.messages.iter().filter_map(wire_message).collect();
        let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let thinking = request.reasoning.map(|effort| {
            let budget = effort.budget_tokens();
            // The budget is part of `max_tokens` and must leave room for the answer.
            max_tokens = max_tokens.max(budget + 1024);
            json!({ "type": "enabled", "budget_tokens": budget })
        });
        Self {
            model: &request.model,
            max_tokens,
            system: (!system.is_empty()).then(|| system.join("\n\n")),
            messages,
            stream: true,
            tools: request.tools.iter().map(wire_tool).collect(),
            // Extended thinking only runs at the default temperature, and with a top-p of
            // 0.95 or more. Newer models take a temperature or a top-p, not both: the
            // temperature wins.
            temperature: if thinking.is_some() { None } else { request.temperature },
            top_p: match (thinking.is_some(), request.temperature, request.top_p) {
                (true, _, Some(top_p)) if top_p >= 0.95 => Some(top_p),
                (false, None, top_p) => top_p,
                _ => None,
            },
            thinking,
        }
    }
}

fn wire_tool(tool: &ToolSpec) -> WireTool<'_> {
    WireTool { name: &tool.name, description: &tool.description, input_schema: &tool.input_schema }
}

/// One turn, or `None` when nothing of it can be sent (Messages rejects empty turns).
fn wire_message(message: &ChatMessage) -> Option<WireMessage> {
    let role = match message.role {
        ChatRole::System => return None,
        ChatRole::User | ChatRole::Tool => "user",
        ChatRole::Assistant => "assistant",
    };
    if message.content.iter().all(|part| matches!(part, ContentPart::Text { .. })) {
        let text = message.text();
        return (!text.trim().is_empty()).then_some(WireMessage { role, content: Value::String(text) });
    }
    let blocks: Vec<Value> = message.content.iter().filter_map(block).collect();
    (!blocks.is_empty()).then_some(WireMessage { role, content: Value::Array(blocks) })
}

fn block(part: &ContentPart) -> Option<Value> {
    match part {
        ContentPart::Text { text } if text.trim().is_empty() => None,
        ContentPart::Text { text } => Some(json!({ "type": "text", "text": text })),
        ContentPart::Media(media) => Some(media_block(media)),
        ContentPart::Reasoning(reasoning) => {
            if reasoning.format.as_deref() != Some(ApiFormat::Anthropic.as_str()) {
                return None;
            }
            if let Some(data) = &reasoning.redacted {
                return Some(json!({ "type": "redacted_thinking", "data": data }));
            }
            let signature = reasoning.signature.as_ref()?;
            Some(json!({ "type": "thinking", "thinking": reasoning.text, "signature": signature }))
        }
        ContentPart::ToolCall(call) => {
            // `input` must be an object even when the model sent something else.
            let input = if call.arguments.is_object() { call.arguments.clone() } else { json!({}) };
            Some(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }))
        }
        ContentPart::ToolResult(result) => {
            let content: Vec<Value> = result
                .content
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(json!({ "type": "text", "text": text })),
                    ContentPart::Media(media) if media.is_image() => Some(media_block(media)),
                    ContentPart::Media(media) => {
                        Some(json!({ "type": "text", "text": crate::unsupported_attachment(media) }))
                    }
                    _ => None,
                })
                .collect();
            let mut block = json!({ "type": "tool_result", "tool_use_id": result.call_id, "content": content });
            if result.is_error {
                block["is_error"] = Value::Bool(true);
            }
            Some(block)
        }
    }
}

fn media_block(media: &Media) -> Value {
    let source = match &media.source {
        MediaSource::Base64(data) => json!({ "type": "base64", "media_type": media.media_type, "data": data }),
        MediaSource::Url(url) => json!({ "type": "url", "url": url }),
    };
    if media.is_image() {
        return json!({ "type": "image", "source": source });
    }
    if let Some(text) = media.inline_text() {
        return json!({ "type": "text", "text": crate::attachment_text(media, &text) });
    }
    if media.media_type == "application/pdf" {
        return json!({ "type": "document", "source": source });
    }
    json!({ "type": "text", "text": crate::unsupported_attachment(media) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::{Reasoning, ReasoningEffort, ToolCall, ToolResult};

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
            ..CompletionRequest::default()
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

    #[test]
    fn top_p_is_sent_alone_and_with_thinking_only_from_0_95() {
        let body = |temperature, top_p, reasoning| {
            let request = CompletionRequest {
                model: "m".into(),
                messages: vec![ChatMessage::user("x")],
                temperature,
                top_p,
                reasoning,
                ..CompletionRequest::default()
            };
            let body = serde_json::to_value(MessagesRequest::streaming(&request)).unwrap();
            (body.get("temperature").cloned(), body.get("top_p").cloned())
        };
        assert_eq!(body(None, Some(0.5), None), (None, Some(json!(0.5))));
        assert_eq!(body(Some(0.25), Some(0.5), None), (Some(json!(0.25)), None), "the temperature wins");
        assert_eq!(body(Some(0.25), Some(0.5), Some(ReasoningEffort::Low)), (None, None));
        assert_eq!(body(None, Some(0.96875), Some(ReasoningEffort::Low)).1, Some(json!(0.96875)));
    }

    #[test]
    fn a_thinking_tool_loop_sends_signed_thinking_back_and_results_in_a_user_turn() {
        let request = CompletionRequest {
            model: "claude-sonnet-4-5".into(),
            reasoning: Some(ReasoningEffort::Low),
            temperature: Some(0.3),
            tools: vec![ToolSpec {
                name: "current_time".into(),
                description: "The time".into(),
                input_schema: json!({"type": "object"}),
            }],
            messages: vec![
                ChatMessage::user("Time?"),
                ChatMessage::new(
                    ChatRole::Assistant,
                    vec![
                        ContentPart::Reasoning(Reasoning {
                            text: "call the clock".into(),
                            signature: Some("sig".into()),
                            redacted: None,
                            format: Some("anthropic".into()),
                        }),
                        ContentPart::Reasoning(Reasoning {
                            text: "from another provider".into(),
                            signature: Some("other".into()),
                            redacted: None,
                            format: Some("gemini".into()),
                        }),
                        ContentPart::ToolCall(ToolCall {
                            id: "toolu_1".into(),
                            name: "current_time".into(),
                            arguments: json!({}),
                        }),
                    ],
                ),
                ChatMessage::tool_results(vec![ToolResult::text("toolu_1", "current_time", "denied", true)]),
            ],
            ..CompletionRequest::default()
        };
        insta::assert_json_snapshot!(MessagesRequest::streaming(&request), @r#"
        {
          "model": "claude-sonnet-4-5",
          "max_tokens": 8192,
          "messages": [
            {
              "role": "user",
              "content": "Time?"
            },
            {
              "role": "assistant",
              "content": [
                {
                  "signature": "sig",
                  "thinking": "call the clock",
                  "type": "thinking"
                },
                {
                  "id": "toolu_1",
                  "input": {},
                  "name": "current_time",
                  "type": "tool_use"
                }
              ]
            },
            {
              "role": "user",
              "content": [
                {
                  "content": [
                    {
                      "text": "denied",
                      "type": "text"
                    }
                  ],
                  "is_error": true,
                  "tool_use_id": "toolu_1",
                  "type": "tool_result"
                }
              ]
            }
          ],
          "stream": true,
          "tools": [
            {
              "name": "current_time",
              "description": "The time",
              "input_schema": {
                "type": "object"
              }
            }
          ],
          "thinking": {
            "budget_tokens": 1024,
            "type": "enabled"
          }
        }
        "#);
    }

    #[test]
    fn images_and_pdfs_are_blocks() {
        let request = CompletionRequest {
            model: "m".into(),
            messages: vec![ChatMessage::new(
                ChatRole::User,
                vec![
                    ContentPart::text("Look"),
                    ContentPart::Media(Media {
                        media_type: "image/jpeg".into(),
                        source: MediaSource::Base64("/9j/".into()),
                        filename: None,
                    }),
                    ContentPart::Media(Media {
                        media_type: "application/pdf".into(),
                        source: MediaSource::Base64("JVBE".into()),
                        filename: Some("r.pdf".into()),
                    }),
                ],
            )],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(MessagesRequest::streaming(&request)).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "Look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}
            ])
        );
    }
}
