//! Full-text search over every conversation's messages: the `messages_search` request and
//! its ranked, paged results.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ids::{MessageId, ModelRef, TopicId, TurnId};
use crate::message::MessageRole;

/// How many results a page holds when the request does not say.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;
/// The most results one page may hold.
pub const MAX_SEARCH_LIMIT: u32 = 100;

/// Search messages. `query` is plain words (every word must begin a word of the message:
/// `pyth` finds "Python"; Chinese, Japanese, Korean or Thai text is found anywhere), or
/// FTS5 syntax when it uses double quotes, parentheses or the operators `AND`, `OR`,
/// `NOT`, `NEAR` (then a mistake in it is a `bad_request` on `query`). Results are ranked
/// best first (bm25) and paged by `offset` + `limit`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    pub query: String,
    /// Only this topic's messages.
    #[serde(default)]
    #[ts(optional)]
    pub topic_id: Option<TopicId>,
    /// Only messages of this role.
    #[serde(default)]
    #[ts(optional)]
    pub role: Option<MessageRole>,
    /// Only replies of this model (its name, e.g. `gpt-4o`).
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    /// Only messages written at or after this time (RFC 3339, or a date `2026-01-31`).
    #[serde(default)]
    #[ts(optional)]
    pub from: Option<String>,
    /// Only messages written before this time (RFC 3339), or on or before this date.
    #[serde(default)]
    #[ts(optional)]
    pub to: Option<String>,
    /// Whether agent sessions' messages are searched too (default: yes).
    #[serde(default)]
    #[ts(optional)]
    pub include_agent_sessions: Option<bool>,
    /// How many of the best results to skip (default 0).
    #[serde(default)]
    #[ts(optional)]
    pub offset: Option<u32>,
    /// At most this many results (default 20, at most 100).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// One page of results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// The `offset` of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub next_offset: Option<u32>,
}

/// A message that matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub topic_id: TopicId,
    pub topic_title: String,
    pub message_id: MessageId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<TurnId>,
    pub role: MessageRole,
    /// The model that wrote a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    pub created_at: String,
    /// A short excerpt around the match; the pieces with `hit` are what matched.
    pub snippet: Vec<SnippetPiece>,
    /// Whether the topic shows this message now; if not, `message_select` switches the
    /// conversation to its branch.
    pub on_active_path: bool,
}

/// A piece of a snippet: plain text, or text that matched the query (`hit`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SnippetPiece {
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub hit: bool,
}
