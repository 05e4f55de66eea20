//! The request body: a [`CompletionRequest`] in `generateContent` form.
//!
//! Roles are `user` and `model`; tool results are `functionResponse` parts in a user turn,
//! matched to their calls by name and order. A `thoughtSignature` Gemini gave goes back on
//! the part it came with: the part right after the reasoning that recorded it.

use protocol::api::ApiFormat;
use serde::Serialize;
use serde_json::{Value, json};

use crate::language_model::{ChatMessage, ChatRole, CompletionRequest, ContentPart, Media, MediaSource, ToolSpec};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest {
    pub contents: Vec<Content>,
    /// System messages, joined: Gemini takes the system prompt apart from the turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub generation_config: GenerationConfig,
}

#[derive(Debug, Serialize)]
pub struct Content {
    /// `user` or `model`; absent for the system instruction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    pub parts: Vec<Value>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<Value>,
}

impl GenerationConfig {
    fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.max_output_tokens.is_none()
            && self.thinking_config.is_none()
    }
}

impl GenerateContentRequest {
    pub fn new(request: &CompletionRequest) -> Self {
        let system: Vec<String> = request
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| m.text().trim().to_owned())
            .filter(|text| !text.is_empty())
            .collect();
        let contents = request.messages.iter().filter_map(content).collect();
        let tools = if request.tools.is_empty() {
            Vec::new()
        } else {
            vec![json!({ "functionDeclarations": request.tools.iter().map(declaration).collect::<Vec<_>>() })]
        };
        Self {
            contents,
            system_instruction: (!system.is_empty())
                .then(|| Content { role: None, parts: vec![json!({ "text": system.join("\n\n") })] }),
            tools,
            generation_config: GenerationConfig {
                temperature: request.temperature,
                top_p: request.top_p,
                max_output_tokens: request.max_tokens,
                thinking_config: request
                    .reasoning
                    .map(|effort| json!({ "includeThoughts": true, "thinkingBudget": effort.budget_tokens() })),
            },
        }
    }
}

/// `parametersJsonSchema` takes any JSON Schema; the older `parameters` field only an
/// OpenAPI subset that tool schemas from MCP servers often step outside of.
fn declaration(tool: &ToolSpec) -> Value {
    json!({ "name": tool.name, "description": tool.description, "parametersJsonSchema": tool.input_schema })
}

fn content(message: &ChatMessage) -> Option<Content> {
    let role = match message.role {
        ChatRole::System => return None,
        ChatRole::User | ChatRole::Tool => "user",
        ChatRole::Assistant => "model",
    };
    let mut parts = Vec::new();
    let mut signature: Option<&str> = None;
    for part in &message.content {
        let mut wire = match part {
            ContentPart::Text { text } if text.trim().is_empty() => continue,
            ContentPart::Text { text } => json!({ "text": text }),
            ContentPart::Media(media) => media_part(media),
            ContentPart::Reasoning(reasoning) => {
                if reasoning.format.as_deref() == Some(ApiFormat::Gemini.as_str()) {
                    signature = reasoning.signature.as_deref().or(signature);
                }
                continue;
            }
            ContentPart::ToolCall(call) => {
                let args = if call.arguments.is_object() { call.arguments.clone() } else { json!({}) };
                json!({ "functionCall": { "name": call.name, "args": args } })
            }
            ContentPart::ToolResult(result) => {
                let text = result.text_content();
                let response = if result.is_error { json!({ "error": text }) } else { json!({ "result": text }) };
                json!({ "functionResponse": { "name": result.name, "response": response } })
            }
        };
        if let Some(signature) = signature.take() {
            wire["thoughtSignature"] = Value::String(signature.to_owned());
        }
        parts.push(wire);
    }
    (!parts.is_empty()).then_some(Content { role: Some(role), parts })
}

/// An attachment as Gemini takes it: text documents as text (named), the media types
/// Gemini reads (images, PDFs, audio, video, text it could not decode) as inline data or a
/// file reference with their MIME type, anything else as a note the model can read
/// (Gemini refuses the whole request over a MIME type it does not know).
fn media_part(media: &Media) -> Value {
    if let Some(text) = media.inline_text() {
        return json!({ "text": crate::attachment_text(media, &text) });
    }
    let kind = media.media_type.as_str();
    let readable = ["image/", "audio/", "video/", "text/"].iter().any(|prefix| kind.starts_with(prefix))
        || matches!(kind, "application/pdf" | "application/json");
    if !readable {
        return json!({ "text": crate::unsupported_attachment(media) });
    }
    match &media.source {
        MediaSource::Base64(data) => json!({ "inlineData": { "mimeType": media.media_type, "data": data } }),
        MediaSource::Url(url) => json!({ "fileData": { "mimeType": media.media_type, "fileUri": url } }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::{Reasoning, ReasoningEffort, ToolCall, ToolResult};

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
            top_p: Some(0.5),
            max_tokens: Some(200),
            ..CompletionRequest::default()
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
            "topP": 0.5,
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

    #[test]
    fn a_tool_loop_echoes_the_thought_signature_on_the_call_it_came_with() {
        let request = CompletionRequest {
            model: "gemini-2.5-pro".into(),
            reasoning: Some(ReasoningEffort::Low),
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads".into(),
                input_schema: json!({"type": "object", "additionalProperties": false}),
            }],
            messages: vec![
                ChatMessage::user("Read a.txt"),
                ChatMessage::new(
                    ChatRole::Assistant,
                    vec![
                        ContentPart::Reasoning(Reasoning {
                            text: "I should read it".into(),
                            signature: Some("c2ln".into()),
                            redacted: None,
                            format: Some("gemini".into()),
                        }),
                        ContentPart::ToolCall(ToolCall {
                            id: "call_x_0".into(),
                            name: "read_file".into(),
                            arguments: json!({"path": "a.txt"}),
                        }),
                    ],
                ),
                ChatMessage::tool_results(vec![ToolResult::text("call_x_0", "read_file", "contents", false)]),
            ],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(GenerateContentRequest::new(&request)).unwrap();
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "Read a.txt"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}, "thoughtSignature": "c2ln"}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"result": "contents"}}}]}
            ])
        );
        assert_eq!(
            body["tools"],
            json!([{"functionDeclarations": [{"name": "read_file", "description": "Reads", "parametersJsonSchema": {"type": "object", "additionalProperties": false}}]}])
        );
        assert_eq!(
            body["generationConfig"],
            json!({"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024}})
        );
    }

    #[test]
    fn images_are_inline_data() {
        let request = CompletionRequest {
            messages: vec![ChatMessage::new(
                ChatRole::User,
                vec![
                    ContentPart::text("What is this?"),
                    ContentPart::Media(Media {
                        media_type: "image/png".into(),
                        source: MediaSource::Base64("iVBO".into()),
                        filename: None,
                    }),
                ],
            )],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(GenerateContentRequest::new(&request)).unwrap();
        assert_eq!(
            body["contents"][0]["parts"],
            json!([{"text": "What is this?"}, {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}])
        );
    }

    #[test]
    fn pdfs_and_other_files_go_as_gemini_takes_them() {
        let media = |media_type: &str, source: MediaSource, filename: &str| {
            ContentPart::Media(Media { media_type: media_type.into(), source, filename: Some(filename.into()) })
        };
        let base64 = |data: &str| MediaSource::Base64(data.into());
        let request = CompletionRequest {
            messages: vec![ChatMessage::new(
                ChatRole::User,
                vec![
                    ContentPart::text("Summarise these"),
                    media("application/pdf", base64("JVBERi0xLjQ="), "report.pdf"),
                    media("application/pdf", MediaSource::Url("https://example.com/spec.pdf".into()), "spec.pdf"),
                    // "hi" in UTF-8, and a Latin-1 "é" that is no UTF-8 text.
                    media("text/markdown", base64("aGk="), "notes.md"),
                    media("text/csv", base64("6Q=="), "legacy.csv"),
                    media("application/zip", base64("UEsDBA=="), "bundle.zip"),
                ],
            )],
            ..CompletionRequest::default()
        };
        let body = serde_json::to_value(GenerateContentRequest::new(&request)).unwrap();
        assert_eq!(
            body["contents"][0]["parts"],
            json!([
                {"text": "Summarise these"},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQ="}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/spec.pdf"}},
                {"text": "<file name=\"notes.md\">\nhi\n</file>"},
                {"inlineData": {"mimeType": "text/csv", "data": "6Q=="}},
                {"text": "[bundle.zip (application/zip) was attached but cannot be sent to this model]"}
            ])
        );
    }
}
