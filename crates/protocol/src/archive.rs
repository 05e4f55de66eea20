//! Colloquy's own export format (`colloquy-export`, version 1): a topic with every row of
//! its conversation tree, as stored. Documented in `docs/export-format.md`.
//!
//! Reading is per topic and per message (the importer takes each as a `Value` first), so
//! one damaged message is reported and skipped rather than failing the whole file.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::api::{ForkOrigin, ModelParams};
use crate::ids::{ModelRef, TopicId};
use crate::message::{MessageRole, MessageStatus};

/// The `format` field of every export document.
pub const EXPORT_FORMAT: &str = "colloquy-export";
/// The version this build writes; it reads this one and refuses newer ones.
pub const EXPORT_VERSION: u32 = 1;

/// A whole export file: one topic or many.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportDocument {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    pub version: u32,
    /// RFC 3339.
    pub exported_at: String,
    /// The app that wrote it, e.g. `colloquy 0.4.0`.
    pub app: String,
    pub topics: Vec<ExportedTopic>,
}

/// A topic and its settings, with every message of its tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedTopic {
    pub id: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkOrigin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "ModelParams::is_empty")]
    pub params: ModelParams,
    pub created_at: String,
    pub updated_at: String,
    /// Every row of the tree (every version and branch), parents before children.
    pub messages: Vec<ExportedMessage>,
}

/// One row of the conversation tree, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedMessage {
    pub id: String,
    /// A user message: the previous turn's user message (absent: the first turn). A
    /// reply: its user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub role: MessageRole,
    pub status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Among siblings, the shown one has the highest value (ties: the later one).
    #[serde(default)]
    pub selected: i64,
    /// UI message parts (text, reasoning, tool calls with input and output, files as
    /// `data:` URLs, sources, `data-*` parts), exactly as stored.
    pub parts: Vec<Value>,
    /// Message metadata as stored (turn id, model, usage, finish reason, …).
    #[serde(default)]
    pub metadata: Value,
    pub created_at: String,
    pub updated_at: String,
}

/// The file types a topic can be exported as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// Readable text: the shown conversation, reasoning and tool calls folded.
    Markdown,
    /// [`ExportDocument`]: every version and branch, lossless, importable.
    Json,
    /// One self-contained page (inline CSS, no script, no remote resource).
    Html,
}

/// Export one topic, or (without `topicId`) every chat topic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportRequest {
    #[serde(default)]
    #[ts(optional)]
    pub topic_id: Option<TopicId>,
    pub format: ExportFormat,
}

/// An exported file, for the UI to hand to the user (a download, or `file_save`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportedFile {
    /// A suggested file name, safe on every file system.
    pub file_name: String,
    pub media_type: String,
    pub content: String,
}

/// Import conversations from a file's text: Colloquy's own JSON, a ChatGPT data export's
/// `conversations.json` or a Claude.ai export's `conversations.json` (told apart by shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportRequest {
    pub content: String,
}

/// Where imported conversations came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ImportSource {
    Colloquy,
    Chatgpt,
    Claude,
}

/// What an import did: each conversation became a new topic or was skipped, and each
/// message left out says why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub source: ImportSource,
    pub imported: Vec<ImportedTopic>,
    pub skipped: Vec<ImportSkip>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportedTopic {
    pub topic_id: TopicId,
    pub title: String,
    pub messages: u32,
}

/// A conversation, or one message of it, that was not imported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportSkip {
    /// The conversation's title (or its position in the file when it has none).
    pub conversation: String,
    /// The message's id in the file; absent (and no `setting`): the whole conversation
    /// was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// A topic setting that was left out (`systemPrompt`, `params`); the conversation
    /// itself was imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub setting: Option<String>,
    pub reason: String,
}

/// Save an exported file on this computer (desktop only: a browser downloads it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveFileRequest {
    pub file_name: String,
    pub content: String,
}

/// Where a file was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SavedFile {
    pub path: String,
}

/// A copy of the database made while the app runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackupInfo {
    /// The backup file, in the data folder's `backups` folder.
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// RFC 3339.
    pub created_at: String,
}

/// Restore a backup from the data folder's `backups` folder, by file name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestoreRequest {
    pub file_name: String,
}

/// A restore waits for the next start: the current database is then kept aside.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RestorePlan {
    /// What happens at the next start, in words.
    pub message: String,
}
