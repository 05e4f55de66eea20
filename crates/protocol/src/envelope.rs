//! What a stream subscriber (a window, an SSE client) receives.
//!
//! Every chunk leaving the stream manager is wrapped in a [`StreamEvent`] that names its
//! topic, turn, execution, model and message, with `seq` counting from 1 per execution.
//! A subscriber that joins late first gets an [`ExecutionSnapshot`] (the message so far
//! and the `seq` it covers), then every later chunk, so it never sees a chunk twice or
//! misses one.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::chunk::UiChunk;
use crate::ids::{ExecutionId, MessageId, ModelRef, TopicId, TurnId};
use crate::message::UiMessage;

/// Which reply a chunk belongs to. One per execution, shared by all of its chunks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionRef {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    pub execution_id: ExecutionId,
    pub model: ModelRef,
    pub message_id: MessageId,
}

/// One numbered chunk of one reply. On the wire the [`ExecutionRef`]'s fields sit beside
/// `seq` and `chunk`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StreamEvent {
    #[serde(flatten)]
    pub execution: Arc<ExecutionRef>,
    /// 1-based, contiguous per execution.
    #[ts(type = "number")]
    pub seq: u64,
    pub chunk: UiChunk,
}

/// The accumulated message of one live execution, covering chunks `1..=seq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionSnapshot {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    pub execution_id: ExecutionId,
    pub model: ModelRef,
    pub message_id: MessageId,
    #[ts(type = "number")]
    pub seq: u64,
    pub message: UiMessage,
}

/// How an execution ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TerminalStatus {
    Success,
    Paused,
    Error,
    AwaitingApproval,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionTerminal {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    pub execution_id: ExecutionId,
    pub message_id: MessageId,
    pub status: TerminalStatus,
    /// True when this was the topic's last live execution.
    pub is_topic_done: bool,
}

/// One message on a subscriber's channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StreamMessage {
    /// The execution's message so far; replaces whatever the subscriber had for it.
    Snapshot(Box<ExecutionSnapshot>),
    /// Shared by every subscriber it goes to.
    Chunk(Arc<StreamEvent>),
    Terminal(Box<ExecutionTerminal>),
    /// The subscriber fell too far behind and was dropped. Nothing more arrives on this
    /// subscription: attach again with the last `seq` seen per execution to catch up.
    Lagged(LaggedNotice),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LaggedNotice {
    pub topic_id: TopicId,
}

/// Where a subscriber is in one execution's stream: the last `seq` it has applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionCursor {
    pub execution_id: ExecutionId,
    #[ts(type = "number")]
    pub seq: u64,
}

/// A topic's state as every window sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TopicStatus {
    /// A turn was admitted; no model output yet.
    Pending,
    Streaming,
    AwaitingApproval,
    /// The last turn finished (at least one reply succeeded).
    Done,
    /// The last turn was stopped.
    Aborted,
    /// Every reply of the last turn failed.
    Error,
}

/// A change of one topic's status. `unseen` is true from the moment a turn finishes
/// until someone looks at the topic (`topic_mark_seen`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopicStatusEvent {
    pub topic_id: TopicId,
    pub status: TopicStatus,
    pub unseen: bool,
}

/// What a status-feed subscriber receives: first every known status, then changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StatusMessage {
    /// The full picture; replaces anything the subscriber had.
    Snapshot(StatusSnapshot),
    Changed(TopicStatusEvent),
    /// The topic's active path changed without a new turn (a version was selected, a
    /// message deleted): windows showing the topic read it again unless what they read
    /// is newer (see [`PathVersion`]).
    PathChanged(PathChanged),
    /// Something a list answers changed (a topic created, renamed, deleted or written in,
    /// a session's settings): windows read the list again unless what they read is newer
    /// (see [`ListVersion`]).
    ListChanged(ListChanged),
}

/// A list the status feed tells the changes of: `topics_list` or `agent_sessions_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ListName {
    Topics,
    AgentSessions,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListChanged {
    pub list: ListName,
    /// The list version of the change (see [`ListVersion`]).
    #[ts(type = "number")]
    pub version: u64,
}

/// The version of each list's last change since the backend started (0: none since).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListVersions {
    #[ts(type = "number")]
    pub topics: u64,
    #[ts(type = "number")]
    pub agent_sessions: u64,
}

/// Orders reads of the topic and agent-session lists against their changes, as
/// [`PathVersion`] does for paths: every change of either list takes the next number of
/// one counter that starts at 0 when the backend starts, named by the same epoch. A list
/// answered with `{ epoch, version }` saw every change up to `version`: a reader needs to
/// read it again only when the list's last change is newer, or the epoch is another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListVersion {
    pub epoch: String,
    #[ts(type = "number")]
    pub version: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PathChanged {
    pub topic_id: TopicId,
    /// The path version of the change (see [`PathVersion`]).
    #[ts(type = "number")]
    pub version: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    pub statuses: Vec<TopicStatusEvent>,
    /// The running backend's epoch of path versions (see [`PathVersion`]).
    pub path_epoch: String,
    /// The version of each topic's last path change since the backend started; a topic
    /// not listed has not changed since then (version 0).
    pub path_versions: Vec<TopicPathVersion>,
    /// Each list's last change since the backend started, counted in the same epoch as
    /// path versions (see [`ListVersion`]).
    pub list_versions: ListVersions,
}

/// When a topic's active path last changed without a new turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopicPathVersion {
    pub topic_id: TopicId,
    #[ts(type = "number")]
    pub version: u64,
}

/// Orders reads of the conversation against changes of its path. Every path change (a
/// version selected, a message edited or deleted) takes the next number of one counter
/// that starts at 0 when the backend starts; `epoch` names that start. A page answered
/// with `{ epoch, version }` saw every change up to `version`: a reader holding it needs
/// to read again only when a topic's change is newer, or the epoch is another (the
/// backend restarted and its counter started over).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PathVersion {
    pub epoch: String,
    #[ts(type = "number")]
    pub version: u64,
}

/// The answer to `stream_open` and `stream_attach`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachReply {
    /// False when the topic has no live (or recently finished) stream: nothing will arrive.
    pub live: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<TurnId>,
}
