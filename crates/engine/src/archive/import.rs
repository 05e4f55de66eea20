//! Reading an import file: which export it is, and its conversations as topics to write
//! (each checked to hold together as a tree), with what was left out and why.

use std::collections::{HashMap, HashSet};

use protocol::archive::{EXPORT_FORMAT, ExportedMessage, ExportedTopic, ImportSkip, ImportSource};
use protocol::{ApiError, ErrorKind, MessageRole};
use serde_json::Value;

use super::{chatgpt, claude, colloquy};

/// The conversations of a file, ready to write, and what was skipped while reading it.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub source: ImportSource,
    pub topics: Vec<ExportedTopic>,
    pub skipped: Vec<ImportSkip>,
}

/// Reads a file's text. A file that is not JSON, or none of the known exports, is a
/// `bad_request` on `content` saying so; anything readable is taken as far as it is valid.
pub(crate) fn parse(content: &str) -> Result<Parsed, ApiError> {
    let value: Value = serde_json::from_str(content.trim_start_matches('\u{feff}'))
        .map_err(|e| refused(format!("the file is not valid JSON ({e})")))?;
    match &value {
        Value::Object(object) if object.get("format").and_then(Value::as_str) == Some(EXPORT_FORMAT) => {
            colloquy::read(object)
        }
        Value::Object(object) if object.contains_key("format") => {
            Err(refused("the file is a JSON document of another program, not a conversations export".to_owned()))
        }
        Value::Array(items) => {
            let first = items.iter().find_map(Value::as_object);
            match first {
                None if items.is_empty() => Err(refused("the file holds no conversations".to_owned())),
                Some(first) if first.contains_key("mapping") => Ok(chatgpt::read(items)),
                Some(first) if first.contains_key("chat_messages") => Ok(claude::read(items)),
                _ => Err(refused(UNKNOWN.to_owned())),
            }
        }
        // A single conversation rather than the list.
        Value::Object(object) if object.contains_key("mapping") => Ok(chatgpt::read(std::slice::from_ref(&value))),
        Value::Object(object) if object.contains_key("chat_messages") => Ok(claude::read(std::slice::from_ref(&value))),
        _ => Err(refused(UNKNOWN.to_owned())),
    }
}

const UNKNOWN: &str = "this is not a file Colloquy can import: use a Colloquy JSON export, or conversations.json from a ChatGPT or Claude.ai data export";

pub(crate) fn refused(message: String) -> ApiError {
    ApiError { field: Some("content".to_owned()), ..ApiError::new(ErrorKind::BadRequest, message) }
}

pub(crate) fn skip(conversation: &str, message: Option<&str>, reason: impl Into<String>) -> ImportSkip {
    ImportSkip {
        conversation: conversation.to_owned(),
        message: message.map(str::to_owned),
        setting: None,
        reason: reason.into(),
    }
}

/// The messages that hold together as our tree, parents first (in file order otherwise):
/// a user message under a user message or at the top, a reply under a user message, ids
/// unique. Each message left out is reported, with what hung below it.
pub(crate) fn tree_order(
    conversation: &str,
    messages: Vec<ExportedMessage>,
    skipped: &mut Vec<ImportSkip>,
) -> Vec<ExportedMessage> {
    let mut seen = HashSet::new();
    let mut unique = Vec::with_capacity(messages.len());
    for message in messages {
        if seen.insert(message.id.clone()) {
            unique.push(message);
        } else {
            skipped.push(skip(conversation, Some(&message.id), "another message of this conversation has the same id"));
        }
    }
    let roles: HashMap<&str, MessageRole> = unique.iter().map(|m| (m.id.as_str(), m.role)).collect();
    let mut children: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for (index, message) in unique.iter().enumerate() {
        children.entry(message.parent_id.as_deref()).or_default().push(index);
    }
    // Breadth-first from the top: what is reached through valid links is kept.
    let mut kept = vec![false; unique.len()];
    let mut reported: HashSet<usize> = HashSet::new();
    let mut queue: std::collections::VecDeque<usize> = children.get(&None).cloned().unwrap_or_default().into();
    while let Some(index) = queue.pop_front() {
        let message = &unique[index];
        let parent_role = message.parent_id.as_deref().and_then(|p| roles.get(p)).copied();
        let fits = matches!(
            (message.role, parent_role),
            (MessageRole::User, None | Some(MessageRole::User)) | (MessageRole::Assistant, Some(MessageRole::User))
        );
        if !fits {
            let reason = match message.role {
                MessageRole::Assistant => "a reply must answer a user message",
                MessageRole::User => "a user message must follow a user message or start the conversation",
                MessageRole::System => "system messages are not imported",
            };
            skipped.push(skip(conversation, Some(&message.id), reason));
            reported.insert(index);
            continue;
        }
        kept[index] = true;
        if let Some(below) = children.get(&Some(message.id.as_str())) {
            queue.extend(below.iter().copied());
        }
    }
    let mut order: Vec<usize> = Vec::with_capacity(unique.len());
    // Parents first: repeat passes in file order (a file we wrote is already in order).
    let mut placed: HashSet<&str> = HashSet::new();
    let mut remaining: Vec<usize> = (0..unique.len()).filter(|&i| kept[i]).collect();
    while !remaining.is_empty() {
        let before = remaining.len();
        remaining.retain(|&i| {
            let ready = unique[i].parent_id.as_deref().is_none_or(|p| placed.contains(p));
            if ready {
                order.push(i);
                placed.insert(unique[i].id.as_str());
            }
            !ready
        });
        if remaining.len() == before {
            break;
        }
    }
    let reached: HashSet<usize> = order.iter().copied().collect();
    for (index, message) in unique.iter().enumerate() {
        if !kept[index] && !reached.contains(&index) && !reported.contains(&index) {
            let reason = match &message.parent_id {
                Some(parent) if roles.contains_key(parent.as_str()) => format!("its parent {parent} was not imported"),
                Some(parent) => format!("its parent {parent} is not in the file"),
                None => "it is not reachable from the start of the conversation".to_owned(),
            };
            skipped.push(skip(conversation, Some(&message.id), reason));
        }
    }
    let mut slots: Vec<Option<ExportedMessage>> = unique.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}
