//! Turning stored messages into the model's prompt.
//!
//! An assistant message is split at its steps: each step becomes an assistant message
//! (reasoning, text, tool calls) followed by the results of its calls. Error parts are
//! left out (a failed reply is not something the model said); a call that never got a
//! result is answered with an error so the conversation stays valid, except the open
//! calls of a message being continued, which the loop is about to resolve.
//!
//! The prompt is built in the native shape (tool calls and tool results as such); when
//! the loop sends it, its features shorten results whose context rounds are used up
//! ([`context_rounds_left`], feature `context-rounds`) and then, for a model without
//! native tool calling, turn it into text ([`prompt_form`], feature `prompt-tool-calling`).

use std::collections::HashMap;

use base64::Engine as _;
use protocol::mcp_content::{RESOURCE_PART, ResourceAttachment, ResourceContent};
use protocol::message::{DataPart, Decider, ToolApproval, ToolState};
use protocol::tool::{ToolContent, ToolOutput};
use protocol::{MessageRole, UiMessage, UiPart};
use providers::{ChatMessage, ChatRole, ContentPart, Media, MediaSource, Reasoning, ToolCall, ToolResult};
use serde_json::Value;

use crate::prompt_tools;

/// How much of a tool result's text a model is shown; the rest stays in the app.
pub const MODEL_TEXT_LIMIT: usize = 40_000;

/// How the prompt is built for one model.
#[derive(Clone, Copy, Debug)]
pub struct PromptOptions<'a> {
    /// The target model's wire format (`ApiFormat::as_str`); reasoning signed by
    /// another format is not sent.
    pub format: &'a str,
    /// Whether the model takes images; without it attached images are named, not sent.
    pub vision: bool,
    /// The id of the reply being continued: calls of its last step stay open.
    pub open_message: Option<&'a str>,
}

impl Default for PromptOptions<'_> {
    fn default() -> Self {
        Self { format: "", vision: true, open_message: None }
    }
}

/// The conversation as the model sees it.
pub fn build_prompt<'a>(
    history: impl IntoIterator<Item = &'a UiMessage>,
    options: &PromptOptions<'_>,
) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    for message in history {
        match message.role {
            MessageRole::System => {
                let text = message.text();
                if !text.trim().is_empty() {
                    out.push(ChatMessage::system(text));
                }
            }
            MessageRole::User => {
                let content: Vec<ContentPart> = message.parts.iter().flat_map(|p| user_part(p, options)).collect();
                let message = ChatMessage::new(ChatRole::User, content);
                if !message.is_blank() {
                    out.push(message);
                }
            }
            MessageRole::Assistant => {
                let open = options.open_message == Some(message.id.as_str());
                assistant_steps(message, open, options, &mut out);
            }
        }
    }
    out
}

fn user_part(part: &UiPart, options: &PromptOptions<'_>) -> Vec<ContentPart> {
    match part {
        UiPart::Text { text, .. } => vec![ContentPart::text(text.clone())],
        UiPart::File { media_type, url, filename } => {
            let Some(media) = media_from_url(media_type, url, filename.clone()) else { return Vec::new() };
            if media.is_image() && !options.vision {
                let name = filename.as_deref().unwrap_or("an image");
                return vec![ContentPart::text(format!("[{name} was attached, but this model cannot see images]"))];
            }
            vec![ContentPart::Media(media)]
        }
        UiPart::Data(DataPart { kind, data, .. }) if kind == RESOURCE_PART => {
            match serde_json::from_value::<ResourceAttachment>(data.clone()) {
                Ok(resource) => resource_parts(&resource, options),
                Err(_) => vec![ContentPart::text("[an attached MCP resource could not be read back]")],
            }
        }
        _ => Vec::new(),
    }
}

/// An attached MCP resource as the model sees it: text inside a `<resource>` element
/// naming it; binary contents as media when the model takes that type, otherwise a note.
fn resource_parts(resource: &ResourceAttachment, options: &PromptOptions<'_>) -> Vec<ContentPart> {
    let updated = if resource.updated { " updated=\"true\"" } else { "" };
    let open = |uri: &str, mime: Option<&str>| {
        let mime = mime.map(|m| format!(" mimeType=\"{m}\"")).unwrap_or_default();
        format!("<resource uri=\"{uri}\" server=\"{}\"{mime}{updated}>", resource.server_name)
    };
    let mut out = Vec::new();
    for content in &resource.contents {
        match content {
            ResourceContent::Text { uri, mime_type, text } => {
                out.push(ContentPart::text(format!("{}\n{text}\n</resource>", open(uri, mime_type.as_deref()))));
            }
            ResourceContent::Blob { uri, mime_type, blob } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                let texty = mime.starts_with("text/") || mime == "application/json";
                let decoded = texty
                    .then(|| base64::engine::general_purpose::STANDARD.decode(blob).ok())
                    .flatten()
                    .and_then(|bytes| String::from_utf8(bytes).ok());
                if let Some(text) = decoded {
                    out.push(ContentPart::text(format!("{}\n{text}\n</resource>", open(uri, Some(mime)))));
                } else if (mime.starts_with("image/") && options.vision) || mime == "application/pdf" {
                    out.push(ContentPart::text(format!("{}(attached below)</resource>", open(uri, Some(mime)))));
                    out.push(ContentPart::Media(Media {
                        media_type: mime.to_owned(),
                        source: MediaSource::Base64(blob.clone()),
                        filename: uri.rsplit('/').next().map(str::to_owned),
                    }));
                } else {
                    let why = if mime.starts_with("image/") {
                        "this model cannot see images"
                    } else {
                        "models are not sent binary data of this type"
                    };
                    out.push(ContentPart::text(format!(
                        "{}[{} bytes of {mime} were attached, but {why}]</resource>",
                        open(uri, Some(mime)),
                        blob.len() / 4 * 3
                    )));
                }
            }
        }
    }
    out
}

/// A stored file part as media: a `data:` URL's bytes, or a web URL.
pub fn media_from_url(media_type: &str, url: &str, filename: Option<String>) -> Option<Media> {
    let source = if let Some(rest) = url.strip_prefix("data:") {
        let (_, data) = rest.split_once(";base64,")?;
        MediaSource::Base64(data.to_owned())
    } else if url.starts_with("http://") || url.starts_with("https://") {
        MediaSource::Url(url.to_owned())
    } else {
        return None;
    };
    Some(Media { media_type: media_type.to_owned(), source, filename })
}

fn assistant_steps(message: &UiMessage, open: bool, options: &PromptOptions<'_>, out: &mut Vec<ChatMessage>) {
    let steps: Vec<&[UiPart]> =
        message.parts.split(|p| matches!(p, UiPart::StepStart)).filter(|s| !s.is_empty()).collect();
    let last = steps.len().saturating_sub(1);
    for (index, step) in steps.into_iter().enumerate() {
        let leave_open = open && index == last;
        let mut content = Vec::new();
        let mut results = Vec::new();
        for part in step {
            match part {
                UiPart::Text { text, .. } if !text.is_empty() => content.push(ContentPart::text(text.clone())),
                UiPart::Reasoning { text, provider_metadata, .. } => {
                    if let Some(reasoning) = reasoning(text, provider_metadata.as_ref(), options.format) {
                        content.push(ContentPart::Reasoning(reasoning));
                    }
                }
                UiPart::DynamicTool { tool_name, tool_call_id, state, input, output, error_text, approval } => {
                    if *state == ToolState::InputStreaming {
                        continue; // cut off before its arguments were complete: never a call
                    }
                    let arguments = input.clone().unwrap_or(Value::Object(Default::default()));
                    content.push(ContentPart::ToolCall(ToolCall {
                        id: tool_call_id.clone(),
                        name: tool_name.clone(),
                        arguments,
                    }));
                    let result = match state {
                        ToolState::OutputAvailable => {
                            Some(result_from_output(tool_call_id, tool_name, output.as_ref(), options.vision))
                        }
                        ToolState::OutputError => Some(ToolResult::text(
                            tool_call_id,
                            tool_name,
                            error_text.clone().unwrap_or_else(|| "the call failed".to_owned()),
                            true,
                        )),
                        ToolState::OutputDenied => Some(ToolResult::text(
                            tool_call_id,
                            tool_name,
                            match approval {
                                // The app settled it (start-up recovery): not the user's no.
                                Some(ToolApproval { decided_by: Some(Decider::App), reason, .. }) => {
                                    refusal_text(reason.as_deref().unwrap_or("the app denied it"))
                                }
                                _ => denial_text(approval.as_ref().and_then(|a| a.reason.as_deref())),
                            },
                            true,
                        )),
                        _ if leave_open => None,
                        _ => Some(ToolResult::text(
                            tool_call_id,
                            tool_name,
                            "no result: the turn ended before this call ran",
                            true,
                        )),
                    };
                    results.extend(result);
                }
                _ => {}
            }
        }
        let assistant = ChatMessage::new(ChatRole::Assistant, content);
        if !assistant.is_blank() {
            out.push(assistant);
        }
        if !results.is_empty() {
            out.push(ChatMessage::tool_results(results));
        }
    }
}

/// The steps of the assistant messages of `history`, in order: each step's results that
/// are shown to a limited number of model calls, with that number.
fn limited_results<'a>(history: impl IntoIterator<Item = &'a UiMessage>) -> Vec<Vec<(String, u32)>> {
    let mut steps = Vec::new();
    for message in history.into_iter().filter(|m| m.role == MessageRole::Assistant) {
        for step in message.parts.split(|p| matches!(p, UiPart::StepStart)).filter(|s| !s.is_empty()) {
            let limited = step
                .iter()
                .filter_map(|part| match part {
                    UiPart::DynamicTool {
                        tool_call_id,
                        state: ToolState::OutputAvailable,
                        output: Some(output),
                        ..
                    } => {
                        let rounds = output.get("contextRounds").and_then(Value::as_u64)?;
                        Some((tool_call_id.clone(), u32::try_from(rounds).unwrap_or(u32::MAX)))
                    }
                    _ => None,
                })
                .collect();
            steps.push(limited);
        }
    }
    steps
}

/// For each stored result that only a limited number of model calls see (its output's
/// `contextRounds`), how many more see it: that number less the model calls made since
/// it came (the later steps of its reply and the steps of later replies in `history`, the
/// same conversation [`build_prompt`] is given). 0: it is left out from now on.
pub fn context_rounds_left<'a>(history: impl IntoIterator<Item = &'a UiMessage>) -> HashMap<String, u32> {
    let steps = limited_results(history);
    let total = steps.len();
    steps
        .into_iter()
        .enumerate()
        .flat_map(|(index, results)| {
            let seen = u32::try_from(total - 1 - index).unwrap_or(u32::MAX);
            results.into_iter().map(move |(call_id, rounds)| (call_id, rounds.saturating_sub(seen)))
        })
        .collect()
}

/// Messages as a model without native tool calling reads them: its calls as
/// `<tool_call>` text in its own messages, results as `<tool_result>` blocks in a user
/// message (reasoning is left out: it was not written for this model).
pub(crate) fn prompt_form(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|message| match message.role {
            ChatRole::Assistant => {
                let text: String = message
                    .content
                    .iter()
                    .filter_map(|part| match part {
                        ContentPart::Text { text } => Some(text.clone()),
                        ContentPart::ToolCall(call) => Some(prompt_tools::render_call(&call.name, &call.arguments)),
                        _ => None,
                    })
                    .collect();
                (!text.trim().is_empty()).then(|| ChatMessage::assistant(text))
            }
            ChatRole::Tool => {
                let results: Vec<ToolResult> = message
                    .content
                    .into_iter()
                    .filter_map(|part| if let ContentPart::ToolResult(r) = part { Some(r) } else { None })
                    .collect();
                (!results.is_empty()).then(|| prompt_results(&results))
            }
            _ => Some(message),
        })
        .collect()
}

/// What the model is told about a call the user denied.
pub fn denial_text(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("The user denied this tool call. Their reason: {reason}"),
        None => "The user denied this tool call.".to_owned(),
    }
}

/// What the model is told about a call the app refused (a rule, or start-up recovery).
pub fn refusal_text(reason: &str) -> String {
    format!("This tool call was not run: {reason}.")
}

/// Results as the user message a prompt-tools model reads.
pub(crate) fn prompt_results(results: &[ToolResult]) -> ChatMessage {
    let blocks: Vec<String> = results
        .iter()
        .map(|r| prompt_tools::render_result(&r.name, &r.call_id, &r.text_content(), r.is_error))
        .collect();
    ChatMessage::user(blocks.join("\n"))
}

fn reasoning(text: &str, metadata: Option<&Value>, format: &str) -> Option<Reasoning> {
    let signed = metadata.and_then(|m| m.as_object()).and_then(|m| m.iter().next());
    let (signature, redacted, from) = match signed {
        Some((from, value)) => (
            value.get("signature").and_then(Value::as_str).map(str::to_owned),
            value.get("redactedData").and_then(Value::as_str).map(str::to_owned),
            Some(from.clone()),
        ),
        None => (None, None, None),
    };
    // Only the format that signed it takes reasoning back; to others it is just noise.
    if from.as_deref() != Some(format) || (signature.is_none() && redacted.is_none()) {
        return None;
    }
    Some(Reasoning { text: text.to_owned(), signature, redacted, format: from })
}

/// A stored tool output as the model sees it: its text (cut at [`MODEL_TEXT_LIMIT`]) and,
/// for a model that takes images, its images.
pub(crate) fn result_from_output(call_id: &str, name: &str, output: Option<&Value>, vision: bool) -> ToolResult {
    let parsed: Option<ToolOutput> = output.and_then(|o| serde_json::from_value(o.clone()).ok());
    match parsed {
        Some(output) => {
            let (content, _) = model_content(&output, vision);
            ToolResult { call_id: call_id.to_owned(), name: name.to_owned(), content, is_error: output.is_error }
        }
        None => {
            let text = output.map(Value::to_string).unwrap_or_default();
            ToolResult::text(call_id, name, cut(&text).0, false)
        }
    }
}

/// A tool's output for the model, and whether text was cut.
pub(crate) fn model_content(output: &ToolOutput, vision: bool) -> (Vec<ContentPart>, bool) {
    let (text, truncated) = cut(&output.text_content());
    let mut content = vec![ContentPart::text(text)];
    for item in &output.content {
        if let ToolContent::Image { mime_type, data } = item {
            if vision && base64::engine::general_purpose::STANDARD.decode(data.as_bytes()).is_ok() {
                content.push(ContentPart::Media(Media {
                    media_type: mime_type.clone(),
                    source: MediaSource::Base64(data.clone()),
                    filename: None,
                }));
            } else {
                content.push(ContentPart::text(format!(
                    "[the tool returned an image ({mime_type}) the model cannot see]"
                )));
            }
        }
    }
    if let Some(structured) = &output.structured_content
        && output.text_content().is_empty()
    {
        content.push(ContentPart::text(cut(&structured.to_string()).0));
    }
    (content, truncated)
}

fn cut(text: &str) -> (String, bool) {
    if text.len() <= MODEL_TEXT_LIMIT {
        return (text.to_owned(), false);
    }
    let mut end = MODEL_TEXT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let rest = text.len() - end;
    (format!("{}\n[… {rest} more bytes not shown; the user sees the whole result]", &text[..end]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{MessageRole, PartState};
    use serde_json::json;

    fn assistant(id: &str, parts: Vec<UiPart>) -> UiMessage {
        UiMessage { id: id.into(), role: MessageRole::Assistant, parts, metadata: None }
    }

    fn tool(id: &str, state: ToolState, output: Option<Value>) -> UiPart {
        UiPart::DynamicTool {
            tool_name: "read_file".into(),
            tool_call_id: id.into(),
            state,
            input: Some(json!({"path": "a"})),
            output,
            error_text: None,
            approval: None,
        }
    }

    #[test]
    fn steps_become_assistant_and_tool_messages() {
        let history = [
            UiMessage::user_text("u1", "read a"),
            assistant(
                "a1",
                vec![
                    UiPart::StepStart,
                    UiPart::Reasoning {
                        id: None,
                        text: "think".into(),
                        state: None,
                        provider_metadata: Some(json!({"anthropic": {"signature": "s"}})),
                    },
                    UiPart::Text { text: "Reading.".into(), state: Some(PartState::Done) },
                    tool("c1", ToolState::OutputAvailable, Some(json!({"content": [{"type": "text", "text": "A!"}]}))),
                    UiPart::StepStart,
                    UiPart::Text { text: "It says A!".into(), state: None },
                ],
            ),
        ];
        let prompt = build_prompt(&history, &PromptOptions { format: "anthropic", ..PromptOptions::default() });
        assert_eq!(prompt.len(), 4);
        assert_eq!(prompt[1].role, ChatRole::Assistant);
        assert!(matches!(&prompt[1].content[0], ContentPart::Reasoning(r) if r.signature.as_deref() == Some("s")));
        assert!(matches!(&prompt[1].content[2], ContentPart::ToolCall(c) if c.id == "c1"));
        assert_eq!(prompt[2], ChatMessage::tool_results(vec![ToolResult::text("c1", "read_file", "A!", false)]));
        assert_eq!(prompt[3], ChatMessage::assistant("It says A!"));

        let other = build_prompt(&history, &PromptOptions { format: "gemini", ..PromptOptions::default() });
        assert!(
            !other[1].content.iter().any(|p| matches!(p, ContentPart::Reasoning(_))),
            "signatures stay with their format"
        );
    }

    #[test]
    fn unanswered_calls_get_an_error_unless_the_reply_is_being_continued() {
        let history = [
            UiMessage::user_text("u1", "go"),
            assistant("a1", vec![UiPart::StepStart, tool("c1", ToolState::ApprovalRequested, None)]),
        ];
        let closed = build_prompt(&history, &PromptOptions::default());
        assert!(matches!(&closed[2].content[0], ContentPart::ToolResult(r) if r.is_error));
        let open = build_prompt(&history, &PromptOptions { open_message: Some("a1"), ..PromptOptions::default() });
        assert_eq!(open.len(), 2, "the open call waits for the loop");
    }

    #[test]
    fn denials_carry_the_reason_and_prompt_mode_writes_calls_as_text() {
        let mut denied = tool("c1", ToolState::OutputDenied, None);
        if let UiPart::DynamicTool { approval, .. } = &mut denied {
            *approval = Some(ToolApproval {
                id: "ap".into(),
                approved: Some(false),
                reason: Some("not that file".into()),
                decided_by: None,
            });
        }
        let history = [UiMessage::user_text("u", "go"), assistant("a", vec![UiPart::StepStart, denied])];
        let prompt = prompt_form(build_prompt(&history, &PromptOptions::default()));
        assert_eq!(prompt[1].text(), "<tool_call>{\"arguments\":{\"path\":\"a\"},\"name\":\"read_file\"}</tool_call>");
        assert_eq!(prompt[2].role, ChatRole::User);
        assert!(prompt[2].text().contains("Their reason: not that file"), "{}", prompt[2].text());
    }

    #[test]
    fn audit_followup_b_a_denial_the_app_made_at_start_up_is_not_told_as_the_users() {
        let mut denied = tool("c1", ToolState::OutputDenied, None);
        if let UiPart::DynamicTool { approval, .. } = &mut denied {
            *approval = Some(ToolApproval {
                id: "ap".into(),
                approved: Some(false),
                reason: Some("Colloquy stopped before this question reached the user".into()),
                decided_by: Some(Decider::App),
            });
        }
        let history = [UiMessage::user_text("u", "go"), assistant("a", vec![UiPart::StepStart, denied])];
        let prompt = prompt_form(build_prompt(&history, &PromptOptions::default()));
        let text = prompt[2].text();
        assert!(!text.contains("The user denied"), "{text}");
        assert!(
            text.contains("This tool call was not run: Colloquy stopped before this question reached the user."),
            "{text}"
        );
    }

    #[test]
    fn attached_resources_reach_the_model_as_text_media_or_a_note() {
        let resource = ResourceAttachment {
            server_id: "s".into(),
            server_name: "Everything".into(),
            uri: "demo://r".into(),
            contents: vec![
                ResourceContent::Text {
                    uri: "demo://r".into(),
                    mime_type: Some("text/plain".into()),
                    text: "hello".into(),
                },
                ResourceContent::Blob {
                    uri: "demo://p".into(),
                    mime_type: Some("image/png".into()),
                    blob: "aGk=".into(),
                },
                ResourceContent::Blob {
                    uri: "demo://z".into(),
                    mime_type: Some("application/zip".into()),
                    blob: "aGk=".into(),
                },
            ],
            updated: true,
        };
        let mut user = UiMessage::user_text("u", "look");
        user.parts.push(UiPart::Data(DataPart {
            kind: RESOURCE_PART.into(),
            id: None,
            data: serde_json::to_value(&resource).unwrap(),
        }));
        let seeing = build_prompt([&user], &PromptOptions::default());
        let text = seeing[0].text();
        assert!(
            text.contains(
                "<resource uri=\"demo://r\" server=\"Everything\" mimeType=\"text/plain\" updated=\"true\">\nhello"
            ),
            "{text}"
        );
        assert!(text.contains("application/zip were attached, but models are not sent"), "{text}");
        assert_eq!(seeing[0].content.iter().filter(|c| matches!(c, ContentPart::Media(_))).count(), 1);
        let blind = build_prompt([&user], &PromptOptions { vision: false, ..PromptOptions::default() });
        assert!(blind[0].text().contains("this model cannot see images"));
        assert!(blind[0].content.iter().all(|c| !matches!(c, ContentPart::Media(_))));
    }

    #[test]
    fn limited_results_count_the_model_calls_made_since() {
        let fetched = |id: &str, rounds: u32| {
            tool(
                id,
                ToolState::OutputAvailable,
                Some(json!({"content": [{"type": "text", "text": "page"}], "contextRounds": rounds})),
            )
        };
        let history = [
            UiMessage::user_text("u1", "fetch"),
            // Step 0 fetched (for 3 rounds); step 1 and the three steps below saw it since.
            assistant(
                "a1",
                vec![
                    UiPart::StepStart,
                    fetched("f1", 3),
                    tool("r1", ToolState::OutputAvailable, None),
                    UiPart::StepStart,
                    UiPart::Text { text: "ok".into(), state: None },
                ],
            ),
            UiMessage::user_text("u2", "more"),
            // Then a reply of three steps, the last one's fetch not seen by anyone yet.
            assistant(
                "a2",
                vec![
                    UiPart::StepStart,
                    fetched("f2", 1),
                    UiPart::StepStart,
                    fetched("f3", 2),
                    UiPart::StepStart,
                    fetched("f4", 2),
                ],
            ),
        ];
        let left = context_rounds_left(&history);
        assert_eq!(
            left,
            HashMap::from([("f1".into(), 0), ("f2".into(), 0), ("f3".into(), 1), ("f4".into(), 2)]),
            "results without a limit are not listed"
        );
    }

    #[test]
    fn images_reach_only_models_that_see() {
        let message = UiMessage {
            id: "u".into(),
            role: MessageRole::User,
            parts: vec![
                UiPart::Text { text: "what is it".into(), state: None },
                UiPart::File {
                    media_type: "image/png".into(),
                    url: "data:image/png;base64,iVBO".into(),
                    filename: Some("cat.png".into()),
                },
            ],
            metadata: None,
        };
        let seeing = build_prompt([&message], &PromptOptions::default());
        assert!(
            matches!(&seeing[0].content[1], ContentPart::Media(m) if m.source == MediaSource::Base64("iVBO".into()))
        );
        let blind = build_prompt([&message], &PromptOptions { vision: false, ..PromptOptions::default() });
        assert!(blind[0].text().contains("cat.png was attached"));
    }

    #[test]
    fn long_results_are_cut_for_the_model() {
        let output = ToolOutput::text("x".repeat(MODEL_TEXT_LIMIT + 10));
        let (content, truncated) = model_content(&output, true);
        assert!(truncated);
        assert!(matches!(&content[0], ContentPart::Text { text } if text.ends_with("the user sees the whole result]")));
    }
}
