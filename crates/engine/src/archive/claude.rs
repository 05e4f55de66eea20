//! Reading a Claude.ai export's `conversations.json`: a list of conversations (`uuid`,
//! `name`, `created_at`, `updated_at`, `chat_messages`), each message with `sender`
//! (`human` or `assistant`), `text` and/or `content` blocks (`text`, `thinking`,
//! `tool_use`, `tool_result`), and `attachments` (with their extracted text) or `files`
//! (names only). The export is linear: each human message starts a turn, the assistant
//! message after it answers it.

use base64::Engine as _;
use protocol::archive::{ExportedMessage, ExportedTopic, ImportSource};
use protocol::{MessageRole, MessageStatus};
use serde_json::{Value, json};

use super::import::{Parsed, skip, tree_order};
use super::timestamps::{from_rfc3339, now};

pub(crate) fn read(conversations: &[Value]) -> Parsed {
    let mut parsed = Parsed { source: ImportSource::Claude, topics: Vec::new(), skipped: Vec::new() };
    for (position, conversation) in conversations.iter().enumerate() {
        let title = conversation
            .get("name")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| format!("Claude conversation {}", position + 1));
        let Some(chat) = conversation.get("chat_messages").and_then(Value::as_array) else {
            parsed.skipped.push(skip(&title, None, "it has no chat_messages list"));
            continue;
        };
        let mut messages: Vec<ExportedMessage> = Vec::new();
        let mut last_user: Option<String> = None;
        let mut answered = false;
        for (index, message) in chat.iter().enumerate() {
            let id = message
                .get("uuid")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{title}#{}", index + 1));
            let created_at = message.get("created_at").and_then(from_rfc3339).unwrap_or_else(now);
            let updated_at = message.get("updated_at").and_then(from_rfc3339).unwrap_or_else(|| created_at.clone());
            let sender = message.get("sender").and_then(Value::as_str).unwrap_or("");
            let parts = parts_of(message);
            if parts.is_empty() {
                parsed.skipped.push(skip(&title, Some(&id), "the message has no text"));
                continue;
            }
            let (role, parent) = match sender {
                "human" => (MessageRole::User, last_user.clone()),
                "assistant" => match &last_user {
                    Some(user) if !answered => (MessageRole::Assistant, Some(user.clone())),
                    Some(_) => {
                        // A second answer to one message: appended to the first.
                        if let Some(reply) = messages.last_mut().filter(|m| m.role == MessageRole::Assistant) {
                            reply.parts.extend(parts);
                        }
                        continue;
                    }
                    None => {
                        parsed.skipped.push(skip(&title, Some(&id), "a reply before any user message"));
                        continue;
                    }
                },
                other => {
                    parsed.skipped.push(skip(&title, Some(&id), format!("messages from {other:?} are not imported")));
                    continue;
                }
            };
            let user = role == MessageRole::User;
            let turn = if user { id.clone() } else { parent.clone().unwrap_or_default() };
            messages.push(ExportedMessage {
                id: id.clone(),
                parent_id: parent,
                turn_id: Some(turn),
                role,
                status: MessageStatus::Success,
                status_reason: None,
                model: None,
                selected: 1,
                parts,
                metadata: json!({}),
                created_at,
                updated_at,
            });
            if user {
                last_user = Some(id);
                answered = false;
            } else {
                answered = true;
            }
        }
        if messages.is_empty() {
            parsed.skipped.push(skip(&title, None, "it has no message that can be imported"));
            continue;
        }
        let messages = tree_order(&title, messages, &mut parsed.skipped);
        let created_at = conversation.get("created_at").and_then(from_rfc3339).unwrap_or_else(now);
        let updated_at = conversation.get("updated_at").and_then(from_rfc3339).unwrap_or_else(|| created_at.clone());
        parsed.topics.push(ExportedTopic {
            id: conversation.get("uuid").and_then(Value::as_str).unwrap_or_default().to_owned(),
            title: title.trim().chars().take(200).collect(),
            model: None,
            workspace: None,
            assistant_id: None,
            forked_from: None,
            system_prompt: None,
            params: protocol::api::ModelParams::default(),
            created_at,
            updated_at,
            messages,
        });
    }
    parsed
}

/// A message's parts: its content blocks when there are any (else its `text`), then its
/// attachments (their extracted text, as a text file) and files (named only).
fn parts_of(message: &Value) -> Vec<Value> {
    let mut parts = Vec::new();
    let blocks = message.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
                    parts.push(json!({ "type": "text", "text": text }));
                }
            }
            Some("thinking") => {
                if let Some(text) = block.get("thinking").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
                    parts.push(json!({ "type": "reasoning", "text": text }));
                }
            }
            Some("tool_use") => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                let id = block.get("id").and_then(Value::as_str).unwrap_or(name);
                parts.push(json!({
                    "type": "dynamic-tool", "toolName": name, "toolCallId": id,
                    "state": "input-available", "input": block.get("input").cloned().unwrap_or(json!({})),
                }));
            }
            Some("tool_result") => {
                let id = block.get("tool_use_id").and_then(Value::as_str);
                let output = block.get("content").cloned().unwrap_or(Value::Null);
                // The result completes its call when the call is in this message.
                let call = parts
                    .iter_mut()
                    .rev()
                    .find(|p| p["type"] == "dynamic-tool" && (id.is_none() || p["toolCallId"].as_str() == id));
                match call {
                    Some(call) => {
                        call["state"] = json!("output-available");
                        call["output"] = output;
                    }
                    None => parts.push(json!({
                        "type": "dynamic-tool", "toolName": block.get("name").and_then(Value::as_str).unwrap_or("tool"),
                        "toolCallId": id.unwrap_or("tool"), "state": "output-available", "output": output,
                    })),
                }
            }
            _ => {}
        }
    }
    if parts.is_empty()
        && let Some(text) = message.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty())
    {
        parts.push(json!({ "type": "text", "text": text }));
    }
    for attachment in message.get("attachments").and_then(Value::as_array).into_iter().flatten() {
        let name = attachment.get("file_name").and_then(Value::as_str).unwrap_or("attachment.txt");
        match attachment.get("extracted_content").and_then(Value::as_str) {
            Some(text) => {
                let data = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                parts.push(json!({
                    "type": "file", "mediaType": "text/plain", "filename": name,
                    "url": format!("data:text/plain;base64,{data}"),
                }));
            }
            None => parts
                .push(json!({ "type": "text", "text": format!("[attachment not included in the export: {name}]") })),
        }
    }
    for file in message.get("files").and_then(Value::as_array).into_iter().flatten() {
        let name = file.get("file_name").and_then(Value::as_str).unwrap_or("file");
        parts.push(json!({ "type": "text", "text": format!("[file not included in the export: {name}]") }));
    }
    parts
}
