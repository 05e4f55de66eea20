//! Lenient wire types for what OpenAI-compatible servers send back.
//!
//! Every field is optional or defaulted and unknown fields are ignored: compatible servers
//! omit, null out or add fields freely, and none of that may break a stream.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One `data:` frame of a streaming completion.
#[derive(Debug, Default, Deserialize)]
pub struct ChatCompletionChunk {
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// Some servers report failures mid-stream as `{"error": {...}}`.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<Content>,
    /// DeepSeek, vLLM, LM Studio and others.
    #[serde(default)]
    pub reasoning_content: Option<String>,
    /// OpenRouter and Ollama.
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub tool_calls: Vec<ToolCallFragment>,
}

/// `content` as text: a string almost everywhere, a list of parts on a few servers
/// (non-text parts are skipped), anything else reads as empty.
#[derive(Debug, Default, Deserialize)]
#[serde(from = "Value")]
pub struct Content(pub String);

impl From<Value> for Content {
    fn from(value: Value) -> Self {
        Content(match value {
            Value::String(text) => text,
            Value::Array(parts) => parts.iter().filter_map(|part| part.get("text")?.as_str()).collect(),
            _ => String::new(),
        })
    }
}

/// A piece of a tool call; the first piece of each `index` carries the id and name.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCallFragment {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionFragment>,
}

#[derive(Debug, Default, Deserialize)]
pub struct FunctionFragment {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// `{"cached_tokens": n}` (any shape: read leniently).
    #[serde(default)]
    pub prompt_tokens_details: Option<Value>,
    /// `{"reasoning_tokens": n}`.
    #[serde(default)]
    pub completion_tokens_details: Option<Value>,
}

/// A whole (non-streaming) completion, for servers that ignore `stream: true`.
#[derive(Debug, Default, Deserialize)]
pub struct ChatCompletion {
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub struct CompletionChoice {
    #[serde(default)]
    pub index: Option<u32>,
    /// Shaped like a delta that holds everything at once.
    #[serde(default)]
    pub message: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// `GET /models`.
#[derive(Debug, Default, Deserialize)]
pub struct ModelList {
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: Vec<ModelEntry>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ModelEntry {
    #[serde(default)]
    pub id: Option<String>,
}

/// `null` reads as the default, so `"choices": null` is an empty list rather than an error.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
