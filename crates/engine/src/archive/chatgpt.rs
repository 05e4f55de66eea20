//! Reading a ChatGPT data export's `conversations.json`: a list of conversations, each a
//! `mapping` of nodes (`id`, `message`, `parent`, `children`) with `current_node`, the
//! leaf the user last saw.
//!
//! Our tree from theirs: a user node hangs under the nearest user node above it (an edit
//! is then a sibling, as in ours); an assistant node under the nearest user node is a
//! version of the reply (a regeneration); assistant nodes that follow one another (a
//! reasoning node, then the answer) are one reply. Nodes without content (the root, system
//! and hidden messages) are passed through. The path to `current_node` is the shown one.

use std::collections::{HashMap, HashSet};

use protocol::archive::{ExportedMessage, ExportedTopic, ImportSource};
use protocol::{MessageRole, MessageStatus, ModelRef, ProviderId};
use serde_json::{Value, json};

use super::import::{Parsed, skip, tree_order};
use super::timestamps::{from_epoch, now};

/// The provider name imported ChatGPT replies carry (no such provider is configured:
/// they are history, and a retry asks for another model).
const PROVIDER: &str = "chatgpt";

pub(crate) fn read(conversations: &[Value]) -> Parsed {
    let mut parsed = Parsed { source: ImportSource::Chatgpt, topics: Vec::new(), skipped: Vec::new() };
    for (position, conversation) in conversations.iter().enumerate() {
        let title = conversation
            .get("title")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| format!("ChatGPT conversation {}", position + 1));
        let Some(mapping) = conversation.get("mapping").and_then(Value::as_object) else {
            parsed.skipped.push(skip(&title, None, "it has no message mapping"));
            continue;
        };
        let messages = read_mapping(
            &title,
            mapping,
            conversation.get("current_node").and_then(Value::as_str),
            &mut parsed.skipped,
        );
        if messages.is_empty() {
            parsed.skipped.push(skip(&title, None, "it has no message that can be imported"));
            continue;
        }
        let messages = tree_order(&title, messages, &mut parsed.skipped);
        let created_at = conversation.get("create_time").and_then(from_epoch).unwrap_or_else(now);
        let updated_at = conversation.get("update_time").and_then(from_epoch).unwrap_or_else(|| created_at.clone());
        parsed.topics.push(ExportedTopic {
            id: conversation.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
            title: truncate_title(&title),
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

/// What one node holds, read from its `message`.
enum Content {
    /// Nothing to show (root, system, hidden, empty): its children take its place.
    Nothing,
    User(Vec<Value>),
    Assistant {
        parts: Vec<Value>,
        model: Option<String>,
    },
    /// Not imported, with why.
    Skipped(String),
}

fn read_node(message: &Value) -> Content {
    if message.is_null() {
        return Content::Nothing;
    }
    let role = message.pointer("/author/role").and_then(Value::as_str).unwrap_or("");
    let hidden =
        message.pointer("/metadata/is_visually_hidden_from_conversation").and_then(Value::as_bool) == Some(true);
    if hidden || role == "system" {
        return Content::Nothing;
    }
    let content = message.get("content").unwrap_or(&Value::Null);
    let kind = content.get("content_type").and_then(Value::as_str).unwrap_or("text");
    let texts = |key: &str| -> Vec<String> {
        content
            .get(key)
            .and_then(Value::as_array)
            .map(|parts| parts.iter().filter_map(part_text).collect())
            .unwrap_or_default()
    };
    match role {
        "user" => {
            let text = match kind {
                "text" | "multimodal_text" => texts("parts").join("\n\n"),
                other => return Content::Skipped(format!("user content of type {other} is not imported")),
            };
            if text.trim().is_empty() {
                Content::Nothing
            } else {
                Content::User(vec![json!({ "type": "text", "text": text })])
            }
        }
        "assistant" => {
            let model = message.pointer("/metadata/model_slug").and_then(Value::as_str).map(str::to_owned);
            let parts = match kind {
                "text" | "multimodal_text" => {
                    let text = texts("parts").join("\n\n");
                    if text.trim().is_empty() { vec![] } else { vec![json!({ "type": "text", "text": text })] }
                }
                "thoughts" => {
                    let thoughts = content.get("thoughts").and_then(Value::as_array).cloned().unwrap_or_default();
                    let text = thoughts
                        .iter()
                        .filter_map(|t| t.get("content").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    if text.trim().is_empty() { vec![] } else { vec![json!({ "type": "reasoning", "text": text })] }
                }
                "code" => {
                    let code = content.get("text").and_then(Value::as_str).unwrap_or("");
                    let language =
                        content.get("language").and_then(Value::as_str).filter(|l| *l != "unknown").unwrap_or("");
                    if code.trim().is_empty() {
                        vec![]
                    } else {
                        vec![json!({ "type": "text", "text": format!("```{language}\n{code}\n```") })]
                    }
                }
                "reasoning_recap" => vec![],
                other => return Content::Skipped(format!("assistant content of type {other} is not imported")),
            };
            if parts.is_empty() { Content::Nothing } else { Content::Assistant { parts, model } }
        }
        "tool" => Content::Skipped("tool output (browsing, code runs, images) is not imported".to_owned()),
        other => Content::Skipped(format!("messages from {other:?} are not imported")),
    }
}

/// A part of `content.parts`: text, or a reference to a file that the export does not hold.
fn part_text(part: &Value) -> Option<String> {
    match part {
        Value::String(text) => Some(text.clone()),
        Value::Object(object) => {
            if let Some(text) = object.get("text").and_then(Value::as_str) {
                return Some(text.to_owned());
            }
            let pointer = object.get("asset_pointer").and_then(Value::as_str)?;
            let name = pointer.rsplit('/').next().unwrap_or(pointer);
            Some(format!("[image not included in the export: {name}]"))
        }
        _ => None,
    }
}

fn read_mapping(
    title: &str,
    mapping: &serde_json::Map<String, Value>,
    current_node: Option<&str>,
    skipped: &mut Vec<protocol::archive::ImportSkip>,
) -> Vec<ExportedMessage> {
    // The shown path: current_node and its ancestors.
    let mut shown: HashSet<&str> = HashSet::new();
    let mut cursor = current_node;
    while let Some(id) = cursor {
        if !shown.insert(id) {
            break;
        }
        cursor = mapping.get(id).and_then(|n| n.get("parent")).and_then(Value::as_str);
    }
    let roots: Vec<&str> = mapping
        .iter()
        .filter(|(_, node)| node.get("parent").and_then(Value::as_str).is_none_or(|p| !mapping.contains_key(p)))
        .map(|(id, _)| id.as_str())
        .collect();

    let mut messages: Vec<ExportedMessage> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut visited: HashSet<&str> = HashSet::new();
    // (node, nearest user message above, the reply this node continues)
    let mut stack: Vec<(&str, Option<String>, Option<String>)> = roots.iter().rev().map(|r| (*r, None, None)).collect();
    while let Some((id, user, reply)) = stack.pop() {
        if !visited.insert(id) {
            continue;
        }
        let Some(node) = mapping.get(id) else { continue };
        let message = node.get("message").unwrap_or(&Value::Null);
        let created_at = message.get("create_time").and_then(from_epoch);
        let selected = i64::from(shown.contains(id));
        let (next_user, next_reply) = match read_node(message) {
            Content::Nothing => (user, reply),
            Content::Skipped(reason) => {
                skipped.push(skip(title, Some(id), reason));
                (user, reply)
            }
            Content::User(parts) => {
                let created = created_at.unwrap_or_else(now);
                index_of.insert(id.to_owned(), messages.len());
                messages.push(ExportedMessage {
                    id: id.to_owned(),
                    parent_id: user,
                    turn_id: Some(id.to_owned()),
                    role: MessageRole::User,
                    status: MessageStatus::Success,
                    status_reason: None,
                    model: None,
                    selected,
                    parts,
                    metadata: json!({}),
                    created_at: created.clone(),
                    updated_at: created,
                });
                (Some(id.to_owned()), None)
            }
            Content::Assistant { parts, model } => match (user.clone(), reply.clone()) {
                (_, Some(reply)) => {
                    // A continuation of the reply above it (reasoning, then the answer).
                    if let Some(&index) = index_of.get(&reply) {
                        messages[index].parts.extend(parts);
                    }
                    (user, Some(reply))
                }
                (Some(user_id), None) => {
                    let created = created_at.unwrap_or_else(now);
                    index_of.insert(id.to_owned(), messages.len());
                    messages.push(ExportedMessage {
                        id: id.to_owned(),
                        parent_id: Some(user_id.clone()),
                        turn_id: Some(user_id),
                        role: MessageRole::Assistant,
                        status: MessageStatus::Success,
                        status_reason: None,
                        model: Some(model_ref(model.unwrap_or_else(|| "chatgpt".to_owned()))),
                        selected,
                        parts,
                        metadata: json!({}),
                        created_at: created.clone(),
                        updated_at: created,
                    });
                    (user, Some(id.to_owned()))
                }
                (None, None) => {
                    skipped.push(skip(title, Some(id), "a reply before any user message"));
                    (user, reply)
                }
            },
        };
        if let Some(children) = node.get("children").and_then(Value::as_array) {
            for child in children.iter().rev().filter_map(Value::as_str) {
                stack.push((child, next_user.clone(), next_reply.clone()));
            }
        }
    }
    // A reply chain whose later node is on the shown path is shown.
    for (id, &index) in &index_of {
        if shown.contains(id.as_str()) {
            messages[index].selected = 1;
        }
    }
    messages
}

fn model_ref(slug: String) -> ModelRef {
    ModelRef { provider_id: ProviderId(PROVIDER.to_owned()), model: slug }
}

fn truncate_title(title: &str) -> String {
    title.trim().chars().take(200).collect()
}
