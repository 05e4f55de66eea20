//! The request body: a [`CompletionRequest`] in Chat Completions form.
//!
//! Attachments become content arrays (`image_url` for images, `file` for PDFs, inline text
//! for text documents); tool calls ride on the assistant message and each result is a
//! `tool` message. Earlier reasoning is not sent back: compatible servers (DeepSeek)
//! reject `reasoning_content` in requests.

use serde::Serialize;
use serde_json::Value;

use crate::language_model::{ChatMessage, ChatRole, CompletionRequest, ContentPart, Media, ToolSpec};

#[derive(Debug, Serialize)]
pub struct ChatCompletionRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// `max_tokens` rather than the newer `max_completion_tokens`: every compatible server
    /// understands it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct WireMessage {
    pub role: &'static str,
    /// A string for plain text, an array of parts with attachments, `null` for an
    /// assistant message that only calls tools.
    pub content: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct WireToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunctionCall,
}

#[derive(Debug, Serialize)]
pub struct WireFunctionCall {
    pub name: String,
    /// JSON text, as the API wants it.
    pub arguments: String,
}

#[derive(Debug, Serialize)]
pub struct WireTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
pub struct WireFunction<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
}

#[derive(Debug, Serialize)]
pub struct StreamOptions {
    /// Asks for a final chunk with token usage.
    pub include_usage: bool,
}

impl<'a> ChatCompletionRequest<'a> {
    /// A streaming request with usage reporting.
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len());
        for message in request.messages.iter().filter(|m| !m.is_blank()) {
            wire_messages(message, &mut messages);
        }
        Self {
            model: &request.model,
            messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            tools: request.tools.iter().map(wire_tool).collect(),
            reasoning_effort: request.reasoning.map(|effort| effort.as_str()),
            temperature: request.temperature,
            top_p: request.top_p,
            max_tokens: request.max_tokens,
        }
    }
}

fn wire_tool(tool: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireFunction { name: &tool.name, description: &tool.description, parameters: &tool.input_schema },
    }
}

fn wire_messages(message: &ChatMessage, out: &mut Vec<WireMessage>) {
    let plain = |role, content| WireMessage { role, content, tool_calls: Vec::new(), tool_call_id: None };
    match message.role {
        ChatRole::System => out.push(plain("system", Value::String(message.text()))),
        ChatRole::User => out.push(plain("user", user_content(&message.content))),
        ChatRole::Assistant => {
            let text = message.text();
            let tool_calls: Vec<WireToolCall> = message
                .tool_calls()
                .map(|call| WireToolCall {
                    id: call.id.clone(),
                    kind: "function",
                    function: WireFunctionCall { name: call.name.clone(), arguments: call.arguments.to_string() },
                })
                .collect();
            let content = if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) };
            out.push(WireMessage { role: "assistant", content, tool_calls, tool_call_id: None });
        }
        ChatRole::Tool => {
            for part in &message.content {
                if let ContentPart::ToolResult(result) = part {
                    out.push(WireMessage {
                        role: "tool",
                        content: Value::String(tool_result_text(&result.content)),
                        tool_calls: Vec::new(),
                        tool_call_id: Some(result.call_id.clone()),
                    });
                }
            }
        }
    }
}

/// A plain string when the message is only text (what every server takes), else parts.
fn user_content(content: &[ContentPart]) -> Value {
    if content.iter().all(|part| matches!(part, ContentPart::Text { .. })) {
        let text: String = content
            .iter()
            .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
            .collect();
        return Value::String(text);
    }
    let parts = content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } => Some(serde_json::json!({ "type": "text", "text": text })),
            ContentPart::Media(media) => Some(media_part(media)),
            _ => None,
        })
        .collect();
    Value::Array(parts)
}

fn media_part(media: &Media) -> Value {
    if media.is_image() {
        return serde_json::json!({ "type": "image_url", "image_url": { "url": media.data_url() } });
    }
    if let Some(text) = media.inline_text() {
        return serde_json::json!({ "type": "text", "text": crate::attachment_text(media, &text) });
    }
    if media.media_type == "application/pdf" {
        let filename = media.filename.clone().unwrap_or_else(|| "document.pdf".to_owned());
        return serde_json::json!({ "type": "file", "file": { "filename": filename, "file_data": media.data_url() } });
    }
    serde_json::json!({ "type": "text", "text": crate::unsupported_attachment(media) })
}

/// Tool messages carry text only: images a tool returned are named, not sent.
fn tool_result_text(content: &[ContentPart]) -> String {
    let texts: Vec<String> = content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } => Some(text.clone()),
            ContentPart::Media(media) => Some(crate::unsupported_attachment(media)),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::{MediaSource, Reasoning, ReasoningEffort, ToolCall, ToolResult};
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
    fn sends_temperature_top_p_max_tokens_and_reasoning_effort_when_set() {
        let request = CompletionRequest {
            model: "m".into(),
            temperature: Some(0.5),
            top_p: Some(0.25),
            max_tokens: Some(64),
            reasoning: Some(ReasoningEffort::High),
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::streaming(&request)).unwrap();
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["top_p"], json!(0.25));
        assert_eq!(body["max_tokens"], json!(64));
        assert_eq!(body["reasoning_effort"], json!("high"));
    }

    #[test]
    fn a_tool_loop_sends_tools_calls_and_results() {
        let request = CompletionRequest {
            model: "gpt-4o".into(),
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            messages: vec![
                ChatMessage::user("What is in notes.txt?"),
                ChatMessage::new(
                    ChatRole::Assistant,
                    vec![
                        ContentPart::Reasoning(Reasoning { text: "look".into(), ..Reasoning::default() }),
                        ContentPart::ToolCall(ToolCall {
                            id: "call_1".into(),
                            name: "read_file".into(),
                            arguments: json!({"path": "notes.txt"}),
                        }),
                    ],
                ),
                ChatMessage::tool_results(vec![ToolResult::text("call_1", "read_file", "hello", false)]),
            ],
            ..CompletionRequest::default()
        };
        insta::assert_json_snapshot!(ChatCompletionRequest::streaming(&request), @r#"
        {
          "model": "gpt-4o",
          "messages": [
            {
              "role": "user",
              "content": "What is in notes.txt?"
            },
            {
              "role": "assistant",
              "content": null,
              "tool_calls": [
                {
                  "id": "call_1",
                  "type": "function",
                  "function": {
                    "name": "read_file",
                    "arguments": "{\"path\":\"notes.txt\"}"
                  }
                }
              ]
            },
            {
              "role": "tool",
              "content": "hello",
              "tool_call_id": "call_1"
            }
          ],
          "stream": true,
          "stream_options": {
            "include_usage": true
          },
          "tools": [
            {
              "type": "function",
              "function": {
                "name": "read_file",
                "description": "Reads a file",
                "parameters": {
                  "properties": {
                    "path": {
                      "type": "string"
                    }
                  },
                  "type": "object"
                }
              }
            }
          ]
        }
        "#);
    }

    #[test]
    fn attachments_become_content_parts() {
        let request = CompletionRequest {
            model: "gpt-4o".into(),
            messages: vec![ChatMessage::new(
                ChatRole::User,
                vec![
                    ContentPart::text("Compare these"),
                    ContentPart::Media(Media {
                        media_type: "image/png".into(),
                        source: MediaSource::Base64("iVBO".into()),
                        filename: Some("a.png".into()),
                    }),
                    ContentPart::Media(Media {
                        media_type: "application/pdf".into(),
                        source: MediaSource::Base64("JVBE".into()),
                        filename: Some("b.pdf".into()),
                    }),
                    ContentPart::Media(Media {
                        media_type: "text/plain".into(),
                        source: MediaSource::Base64("aGk=".into()),
                        filename: Some("c.txt".into()),
                    }),
                ],
            )],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ChatCompletionRequest::streaming(&request)).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "Compare these"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                {"type": "file", "file": {"filename": "b.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
                {"type": "text", "text": "<file name=\"c.txt\">\nhi\n</file>"}
            ])
        );
    }
}
