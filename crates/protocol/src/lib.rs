//! The vocabulary every Colloquy layer speaks.
//!
//! - [`ids`]: typed identifiers for topics, messages, turns, executions, providers; a topic
//!   id tells its [`TopicKind`] (chat or agent session).
//! - [`chunk`]: [`UiChunk`], one event of the AI SDK v6 UI message stream.
//! - [`message`]: [`UiMessage`] and its parts, and the fold that builds a message from chunks.
//! - [`envelope`]: what a stream subscriber receives ([`StreamEvent`], snapshots, terminals).
//! - [`api`]: request and response bodies of the user-facing operations.
//! - [`archive`]: the export format, and the bodies of export, import and backup.
//! - [`operations`]: the table of operations ([`for_each_operation!`]) and what is derived from it.
//! - [`sampling`]: completions MCP servers ask of the reply's model, and the user's say.
//! - [`search`]: the `messages_search` request and its results.
//! - [`elicitation`]: forms MCP servers ask the user to fill in, and the answers.
//! - [`error`]: [`ApiError`], the one error shape that crosses IPC and HTTP.
//! - [`tool`]: tools, their results, approval rules, approvals and the audit log.
//! - [`mcp`]: MCP servers: how to reach them and how they are doing.
//! - [`typescript`]: the generated TypeScript declarations the UI imports.
//! - [`usage`]: usage and cost of replies, topics and periods; the reply inspector's timeline.

pub mod acp;
pub mod api;
pub mod archive;
pub mod chunk;
pub mod elicitation;
pub mod envelope;
pub mod error;
pub mod ids;
pub mod mcp;
pub mod mcp_content;
pub mod message;
pub mod operations;
pub mod sampling;
pub mod search;
pub mod tool;
pub mod typescript;
pub mod usage;

pub use chunk::{DataChunk, FinishReason, UiChunk};
pub use envelope::{
    AttachReply, ExecutionCursor, ExecutionRef, ExecutionSnapshot, ExecutionTerminal, LaggedNotice, ListChanged,
    ListName, ListVersion, ListVersions, PathChanged, PathVersion, StatusMessage, StatusSnapshot, StreamEvent,
    StreamMessage, TerminalStatus, TopicPathVersion, TopicStatus, TopicStatusEvent,
};
pub use error::{ApiError, ErrorKind, parse_body};
pub use ids::{ExecutionId, MessageId, ModelRef, ProviderId, TopicId, TopicKind, TurnId};
pub use message::{
    MessageAccumulator, MessageMetadata, MessageRole, MessageStatus, PartState, StatusReason, UiMessage, UiPart,
};
pub use operations::{OPERATIONS, Operations, dispatch};
