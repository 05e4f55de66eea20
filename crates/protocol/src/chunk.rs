//! [`UiChunk`]: one event of the AI SDK v6 *UI message stream*.
//!
//! The JSON form is exactly what the `ai` npm package's `uiMessageChunkSchema` accepts, so
//! a stock AI SDK client can consume our streams; `ui/tests/aisdk-compat.test.ts` proves
//! it on a transcript produced by this crate.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// One chunk of a streamed assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum UiChunk {
    #[serde(rename_all = "camelCase")]
    Start {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "MessageMetadata")]
        message_metadata: Option<Value>,
    },
    StartStep,
    FinishStep,
    TextStart {
        id: String,
    },
    TextDelta {
        id: String,
        delta: String,
    },
    TextEnd {
        id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        id: String,
        /// What the provider needs back with this reasoning (a signature, redacted data),
        /// keyed by wire format: `{"anthropic": {"signature": "…"}}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "Record<string, unknown>")]
        provider_metadata: Option<Value>,
    },
    ReasoningDelta {
        id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "Record<string, unknown>")]
        provider_metadata: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputStart {
        tool_call_id: String,
        tool_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dynamic: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputDelta {
        tool_call_id: String,
        input_text_delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputAvailable {
        tool_call_id: String,
        tool_name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dynamic: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputError {
        tool_call_id: String,
        tool_name: String,
        input: Value,
        error_text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dynamic: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ToolApprovalRequest {
        approval_id: String,
        tool_call_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolOutputAvailable {
        tool_call_id: String,
        output: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dynamic: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        preliminary: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ToolOutputError {
        tool_call_id: String,
        error_text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        dynamic: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ToolOutputDenied {
        tool_call_id: String,
    },
    #[serde(rename_all = "camelCase")]
    SourceUrl {
        source_id: String,
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    File {
        url: String,
        media_type: String,
    },
    #[serde(rename_all = "camelCase")]
    MessageMetadata {
        #[ts(type = "MessageMetadata")]
        message_metadata: Value,
    },
    /// A stream-level error. Stock clients surface it as the chat's error; our own UI
    /// renders the `data-error` part that precedes it.
    #[serde(rename_all = "camelCase")]
    Error {
        error_text: String,
    },
    Abort {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Finish {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        finish_reason: Option<FinishReason>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "MessageMetadata")]
        message_metadata: Option<Value>,
    },
    /// `data-<name>` chunks: application data that becomes a message part.
    #[serde(untagged)]
    Data(DataChunk),
}

/// Why generation ended, as the AI SDK names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    Stop,
    Length,
    ContentFilter,
    ToolCalls,
    Error,
    Other,
}

/// A `data-*` chunk. `kind` is serialized as `type` and always starts with `data-`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DataChunk {
    #[serde(rename = "type", deserialize_with = "data_type")]
    #[ts(type = "`data-${string}`")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    pub data: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub transient: Option<bool>,
}

fn data_type<'de, D: Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    let kind = String::deserialize(de)?;
    if kind.starts_with("data-") && kind.len() > 5 {
        Ok(kind)
    } else {
        Err(serde::de::Error::custom(format!("unknown chunk type `{kind}`")))
    }
}

impl UiChunk {
    /// A `data-error` part followed by nothing: the persisted, user-visible form of an error.
    pub fn error_part(error: &crate::ApiError) -> Self {
        UiChunk::Data(DataChunk {
            kind: "data-error".to_owned(),
            id: None,
            data: serde_json::to_value(error).unwrap_or(Value::Null),
            transient: None,
        })
    }

    /// True for chunks after which the execution emits nothing more.
    pub fn is_terminal(&self) -> bool {
        matches!(self, UiChunk::Finish { .. } | UiChunk::Abort { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunks_use_the_ai_sdk_field_names() {
        let cases = [
            (
                UiChunk::Start { message_id: Some("m1".into()), message_metadata: None },
                json!({"type": "start", "messageId": "m1"}),
            ),
            (UiChunk::StartStep, json!({"type": "start-step"})),
            (
                UiChunk::TextDelta { id: "t".into(), delta: "hi".into() },
                json!({"type": "text-delta", "id": "t", "delta": "hi"}),
            ),
            (
                UiChunk::ToolInputDelta { tool_call_id: "c".into(), input_text_delta: "{".into() },
                json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"}),
            ),
            (UiChunk::Error { error_text: "boom".into() }, json!({"type": "error", "errorText": "boom"})),
            (
                UiChunk::Finish { finish_reason: Some(FinishReason::ContentFilter), message_metadata: None },
                json!({"type": "finish", "finishReason": "content-filter"}),
            ),
            (
                UiChunk::Data(DataChunk {
                    kind: "data-error".into(),
                    id: None,
                    data: json!({"a": 1}),
                    transient: None,
                }),
                json!({"type": "data-error", "data": {"a": 1}}),
            ),
        ];
        for (chunk, expected) in cases {
            let value = serde_json::to_value(&chunk).unwrap();
            assert_eq!(value, expected);
            assert_eq!(serde_json::from_value::<UiChunk>(value).unwrap(), chunk);
        }
    }

    #[test]
    fn unknown_chunk_types_are_rejected() {
        let err = serde_json::from_value::<UiChunk>(json!({"type": "text-explode", "id": "x"}));
        assert!(err.is_err());
        let err = serde_json::from_value::<UiChunk>(json!({"type": "data-", "data": 1}));
        assert!(err.is_err());
    }
}
