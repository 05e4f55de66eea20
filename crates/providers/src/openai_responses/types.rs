//! Lenient wire types for the Responses API's stream events and response objects.
//!
//! One flat struct covers every event type: each event uses a few of these fields, and a
//! field that is missing, null or of an unexpected type reads as absent instead of
//! failing the frame (values that vary are read through [`Value`]).

use serde::Deserialize;
use serde_json::Value;

/// One `data:` frame, `{"type": "response.output_text.delta", ...}` (the mapper reads `type` first).
#[derive(Debug, Default, Deserialize)]
pub struct StreamEvent {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// An error report (`type: "error"`, or a compatible server's untyped `{"error": …}`).
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub output_index: Option<u32>,
    #[serde(default)]
    pub item_id: Option<String>,
    #[serde(default)]
    pub item: Option<OutputItem>,
    /// Text or argument fragment (`*.delta` events).
    #[serde(default)]
    pub delta: Option<Value>,
    /// Whole arguments (`response.function_call_arguments.done`).
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default)]
    pub summary_index: Option<u32>,
    #[serde(default)]
    pub response: Option<ResponseObject>,
}

/// An item of `response.output`.
#[derive(Debug, Default, Deserialize)]
pub struct OutputItem {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<Value>,
    /// A message's content parts (`output_text`, `refusal`).
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub content: Vec<ContentPart>,
    /// A reasoning item's summary parts.
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub summary: Vec<ContentPart>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ContentPart {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
}

/// The response object of `response.completed|incomplete|failed`, or a whole answer.
#[derive(Debug, Default, Deserialize)]
pub struct ResponseObject {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub output: Vec<OutputItem>,
}

#[derive(Debug, Default, Deserialize)]
pub struct IncompleteDetails {
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// `{"cached_tokens": n}` (any shape: read leniently).
    #[serde(default)]
    pub input_tokens_details: Option<Value>,
    /// `{"reasoning_tokens": n}`.
    #[serde(default)]
    pub output_tokens_details: Option<Value>,
}

/// A string field that some servers send as something else: only a string counts.
pub fn text(value: Option<&Value>) -> Option<&str> {
    value?.as_str()
}

impl crate::decoder::TypedEvent for StreamEvent {
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    fn has_error(&self) -> bool {
        self.error.as_ref().is_some_and(|error| !error.is_null())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_odd_shapes_without_failing() {
        let event: StreamEvent = serde_json::from_str(
            r#"{"type":"response.completed","delta":7,"response":{"output":[null,{"type":"message","content":"x"}],"usage":null}}"#,
        )
        .unwrap();
        assert_eq!(text(event.delta.as_ref()), None);
        let response = event.response.unwrap();
        assert_eq!(response.output.len(), 1);
        assert!(response.output[0].content.is_empty());
    }
}
