//! Reading Colloquy's own export (`colloquy-export`): topic by topic and message by
//! message, so one damaged entry is reported and the rest imported.

use protocol::api::ModelParams;
use protocol::archive::{EXPORT_VERSION, ExportedMessage, ExportedTopic, ImportSkip, ImportSource};
use protocol::{ApiError, ModelRef};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::import::{Parsed, refused, skip, tree_order};

/// A topic with its messages still unread.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TopicEntry {
    #[serde(default)]
    id: String,
    title: String,
    #[serde(default)]
    model: Option<ModelRef>,
    #[serde(default)]
    workspace: Option<String>,
    #[serde(default)]
    assistant_id: Option<String>,
    #[serde(default)]
    forked_from: Option<protocol::api::ForkOrigin>,
    /// Read apart (see [`settings`]): a bad one leaves the topic's messages in.
    #[serde(default)]
    system_prompt: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    created_at: String,
    updated_at: String,
    messages: Vec<Value>,
}

pub(crate) fn read(document: &Map<String, Value>) -> Result<Parsed, ApiError> {
    let version = document.get("version").and_then(Value::as_u64);
    match version {
        Some(version) if version > u64::from(EXPORT_VERSION) => {
            return Err(refused(format!(
                "the file is export version {version}, written by a newer Colloquy; this one reads version {EXPORT_VERSION}: update Colloquy to import it"
            )));
        }
        Some(_) => {}
        None => return Err(refused("the file has no export version".to_owned())),
    }
    let Some(entries) = document.get("topics").and_then(Value::as_array) else {
        return Err(refused("the file has no list of topics".to_owned()));
    };
    let mut parsed = Parsed { source: ImportSource::Colloquy, topics: Vec::new(), skipped: Vec::new() };
    for (position, entry) in entries.iter().enumerate() {
        let label = entry
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("topic {} of the file", position + 1));
        let entry = match TopicEntry::deserialize(entry) {
            Ok(entry) => entry,
            Err(err) => {
                parsed.skipped.push(skip(&label, None, format!("the topic cannot be read: {err}")));
                continue;
            }
        };
        let mut messages = Vec::with_capacity(entry.messages.len());
        for (index, message) in entry.messages.into_iter().enumerate() {
            let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
            match ExportedMessage::deserialize(&message) {
                Ok(message) => messages.push(message),
                Err(err) => {
                    let id = id.unwrap_or_else(|| format!("#{}", index + 1));
                    parsed.skipped.push(skip(&label, Some(&id), format!("the message cannot be read: {err}")));
                }
            }
        }
        let messages = tree_order(&label, messages, &mut parsed.skipped);
        let (system_prompt, params) = settings(&label, entry.system_prompt, entry.params, &mut parsed.skipped);
        parsed.topics.push(ExportedTopic {
            id: entry.id,
            title: entry.title,
            model: entry.model,
            workspace: entry.workspace,
            assistant_id: entry.assistant_id,
            forked_from: entry.forked_from,
            system_prompt,
            params,
            created_at: entry.created_at,
            updated_at: entry.updated_at,
            messages,
        });
    }
    Ok(parsed)
}

/// A topic's system prompt and model settings from the file, each left out (and
/// reported) when it is not what this build would store.
fn settings(
    label: &str,
    system_prompt: Option<Value>,
    params: Option<Value>,
    skipped: &mut Vec<ImportSkip>,
) -> (Option<String>, ModelParams) {
    let mut left_out = |setting: &str, reason: String| {
        skipped.push(ImportSkip {
            conversation: label.to_owned(),
            message: None,
            setting: Some(setting.to_owned()),
            reason,
        });
    };
    let system_prompt = match system_prompt {
        None | Some(Value::Null) => None,
        Some(Value::String(prompt)) => {
            match crate::limits::at_most("systemPrompt", prompt.trim(), crate::limits::SYSTEM_PROMPT) {
                Ok("") => None,
                Ok(prompt) => Some(prompt.to_owned()),
                Err(err) => {
                    left_out("systemPrompt", err.message);
                    None
                }
            }
        }
        Some(_) => {
            left_out("systemPrompt", "the system prompt is not text".to_owned());
            None
        }
    };
    let params = match params.map(ModelParams::deserialize) {
        None => ModelParams::default(),
        Some(Ok(params)) => crate::model_params::checked("params", params).unwrap_or_else(|err| {
            left_out("params", err.message);
            ModelParams::default()
        }),
        Some(Err(err)) => {
            left_out("params", format!("the model settings cannot be read: {err}"));
            ModelParams::default()
        }
    };
    (system_prompt, params)
}
