//! The request body: a [`CompletionRequest`] in Responses form.
//!
//! Messages are input items in order: "easy" `{role, content}` messages, `function_call`
//! items for the assistant's calls and `function_call_output` items for their results.
//! Earlier reasoning is not sent back: with `store: false` the API only takes encrypted
//! reasoning items, which Colloquy does not request.

use serde::Serialize;
use serde_json::{Value, json};

use crate::language_model::{ChatMessage, ChatRole, CompletionRequest, ContentPart, Media, ToolSpec};

#[derive(Debug, Serialize)]
pub struct ResponsesRequest<'a> {
    pub model: &'a str,
    /// The conversation as input items, system included, in order.
    pub input: Vec<Value>,
    pub stream: bool,
    /// Colloquy keeps the conversation itself; nothing needs to be stored upstream.
    pub store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct WireTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'a str,
    pub description: &'a str,
    pub parameters: &'a Value,
    /// Strict mode needs schemas written for it; tools from MCP servers are not.
    pub strict: bool,
}

impl<'a> ResponsesRequest<'a> {
    pub fn streaming(request: &'a CompletionRequest) -> Self {
        let mut input = Vec::with_capacity(request.messages.len());
        for message in request.messages.iter().filter(|m| !m.is_blank()) {
            input_items(message, &mut input);
        }
        Self {
            model: &request.model,
            input,
            stream: true,
            store: false,
            tools: request.tools.iter().map(wire_tool).collect(),
            // Summaries are what a reasoning model shows of its thinking.
            reasoning: request.reasoning.map(|effort| json!({ "effort": effort.as_str(), "summary": "auto" })),
            temperature: request.temperature,
            top_p: request.top_p,
            max_output_tokens: request.max_tokens,
        }
    }
}

fn wire_tool(tool: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        name: &tool.name,
        description: &tool.description,
        parameters: &tool.input_schema,
        strict: false,
    }
}

fn input_items(message: &ChatMessage, out: &mut Vec<Value>) {
    match message.role {
        ChatRole::System => out.push(json!({ "role": "system", "content": message.text() })),
        ChatRole::User => {
            if message.content.iter().all(|part| matches!(part, ContentPart::Text { .. })) {
                out.push(json!({ "role": "user", "content": message.text() }));
                return;
            }
            let content: Vec<Value> = message
                .content
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(json!({ "type": "input_text", "text": text })),
                    ContentPart::Media(media) => Some(media_item(media)),
                    _ => None,
                })
                .collect();
            out.push(json!({ "role": "user", "content": content }));
        }
        ChatRole::Assistant => {
            let text = message.text();
            if !text.is_empty() {
                out.push(json!({ "role": "assistant", "content": text }));
            }
            for call in message.tool_calls() {
                out.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments.to_string(),
                }));
            }
        }
        ChatRole::Tool => {
            for part in &message.content {
                if let ContentPart::ToolResult(result) = part {
                    let output: Vec<String> = result
                        .content
                        .iter()
                        .filter_map(|part| match part {
                            ContentPart::Text { text } => Some(text.clone()),
                            ContentPart::Media(media) => Some(crate::unsupported_attachment(media)),
                            _ => None,
                        })
                        .collect();
                    out.push(json!({
                        "type": "function_call_output",
                        "call_id": result.call_id,
                        "output": output.join("\n"),
                    }));
                }
            }
        }
    }
}

fn media_item(media: &Media) -> Value {
    if media.is_image() {
        return json!({ "type": "input_image", "image_url": media.data_url() });
    }
    if let Some(text) = media.inline_text() {
        return json!({ "type": "input_text", "text": crate::attachment_text(media, &text) });
    }
    if media.media_type == "application/pdf" {
        let filename = media.filename.clone().unwrap_or_else(|| "document.pdf".to_owned());
        return json!({ "type": "input_file", "filename": filename, "file_data": media.data_url() });
    }
    json!({ "type": "input_text", "text": crate::unsupported_attachment(media) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::{MediaSource, ReasoningEffort, ToolCall, ToolResult};

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
            top_p: Some(0.25),
            max_tokens: Some(100),
            ..CompletionRequest::default()
        };
        insta::assert_json_snapshot!(ResponsesRequest::streaming(&request), @r#"
        {
          "model": "gpt-5-mini",
          "input": [
            {
              "content": "Be brief.",
              "role": "system"
            },
            {
              "content": "Hi",
              "role": "user"
            },
            {
              "content": "Hello",
              "role": "assistant"
            },
            {
              "content": "Again",
              "role": "user"
            }
          ],
          "stream": true,
          "store": false,
          "temperature": 0.5,
          "top_p": 0.25,
          "max_output_tokens": 100
        }
        "#);
    }

    #[test]
    fn a_tool_loop_sends_function_calls_and_outputs_with_reasoning_summaries_on() {
        let request = CompletionRequest {
            model: "o4-mini".into(),
            reasoning: Some(ReasoningEffort::Medium),
            tools: vec![ToolSpec {
                name: "list_dir".into(),
                description: "Lists a folder".into(),
                input_schema: json!({"type": "object"}),
            }],
            messages: vec![
                ChatMessage::user("What is here?"),
                ChatMessage::new(
                    ChatRole::Assistant,
                    vec![
                        ContentPart::text("Let me look."),
                        ContentPart::ToolCall(ToolCall {
                            id: "call_9".into(),
                            name: "list_dir".into(),
                            arguments: json!({"path": "."}),
                        }),
                    ],
                ),
                ChatMessage::tool_results(vec![ToolResult::text("call_9", "list_dir", "a.txt", false)]),
            ],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ResponsesRequest::streaming(&request)).unwrap();
        assert_eq!(
            body["input"],
            json!([
                {"role": "user", "content": "What is here?"},
                {"role": "assistant", "content": "Let me look."},
                {"type": "function_call", "call_id": "call_9", "name": "list_dir", "arguments": "{\"path\":\".\"}"},
                {"type": "function_call_output", "call_id": "call_9", "output": "a.txt"}
            ])
        );
        assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "name": "list_dir", "description": "Lists a folder", "parameters": {"type": "object"}, "strict": false}])
        );
    }

    #[test]
    fn attachments_are_input_parts() {
        let request = CompletionRequest {
            model: "m".into(),
            messages: vec![ChatMessage::new(
                ChatRole::User,
                vec![
                    ContentPart::text("See"),
                    ContentPart::Media(Media {
                        media_type: "image/webp".into(),
                        source: MediaSource::Base64("UklG".into()),
                        filename: None,
                    }),
                    ContentPart::Media(Media {
                        media_type: "application/pdf".into(),
                        source: MediaSource::Base64("JVBE".into()),
                        filename: Some("x.pdf".into()),
                    }),
                ],
            )],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(ResponsesRequest::streaming(&request)).unwrap();
        assert_eq!(
            body["input"][0]["content"],
            json!([
                {"type": "input_text", "text": "See"},
                {"type": "input_image", "image_url": "data:image/webp;base64,UklG"},
                {"type": "input_file", "filename": "x.pdf", "file_data": "data:application/pdf;base64,JVBE"}
            ])
        );
    }
}
