//! Lenient wire types for Anthropic Messages stream events, messages and model lists.
//!
//! One flat struct per level covers every event type; missing or null fields read as
//! absent, unknown ones are ignored.

use serde::Deserialize;
use serde_json::Value;

/// One `data:` frame, `{"type": "content_block_delta", ...}` (the mapper reads `type` first).
#[derive(Debug, Default, Deserialize)]
pub struct StreamEvent {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// An error report (`type: "error"`, or a compatible server's untyped `{"error": …}`).
    #[serde(default)]
    pub error: Option<Value>,
    /// `message_start`.
    #[serde(default)]
    pub message: Option<Message>,
    /// `content_block_*`: the block's position in the message.
    #[serde(default)]
    pub index: Option<u32>,
    /// `content_block_start`.
    #[serde(default)]
    pub content_block: Option<ContentBlock>,
    /// `content_block_delta` (a block delta) and `message_delta` (stop reason).
    #[serde(default)]
    pub delta: Option<Delta>,
    /// `message_delta`: cumulative usage.
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

/// The message of `message_start`, or a whole (non-streamed) answer.
#[derive(Debug, Default, Deserialize)]
pub struct Message {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ContentBlock {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    /// `tool_use`.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    /// `thinking`.
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub signature: Option<String>,
    /// `redacted_thinking`.
    #[serde(default)]
    pub data: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Delta {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub partial_json: Option<String>,
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub signature: Option<String>,
    #[serde(default)]
    pub stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

/// `GET /v1/models`.
#[derive(Debug, Default, Deserialize)]
pub struct ModelPage {
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub data: Vec<ModelEntry>,
    #[serde(default)]
    pub has_more: Option<bool>,
    #[serde(default)]
    pub last_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ModelEntry {
    #[serde(default)]
    pub id: Option<String>,
}

impl crate::decoder::TypedEvent for StreamEvent {
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    fn has_error(&self) -> bool {
        self.error.as_ref().is_some_and(|error| !error.is_null())
    }
}
