//! Writes (and checks) `ui/tests/fixtures/ui-stream.json`: a representative chunk
//! transcript and the message our accumulator folds it into. The UI test suite feeds the
//! same chunks to the stock `ai` package (`uiMessageChunkSchema`, `readUIMessageStream`)
//! and asserts it builds the identical message.

use colloquy_protocol::{ApiError, DataChunk, ErrorKind, FinishReason, MessageAccumulator, UiChunk};
use serde_json::json;
use std::path::PathBuf;

fn transcript() -> Vec<UiChunk> {
    let text = |delta: &str| UiChunk::TextDelta { id: "t0".into(), delta: delta.into() };
    vec![
        UiChunk::Start {
            message_id: Some("msg-1".into()),
            message_metadata: Some(json!({"model": "demo/scripted", "status": "streaming"})),
        },
        UiChunk::StartStep,
        UiChunk::ReasoningStart { id: "r0".into(), provider_metadata: None },
        UiChunk::ReasoningDelta { id: "r0".into(), delta: "Thinking about ".into() },
        UiChunk::ReasoningDelta { id: "r0".into(), delta: "fences.".into() },
        UiChunk::ReasoningEnd {
            id: "r0".into(),
            provider_metadata: Some(serde_json::json!({"anthropic": {"signature": "c2ln"}})),
        },
        UiChunk::TextStart { id: "t0".into() },
        text("# Hello\n\n"),
        text("Here is ```rust\nfn main() {}\n```\n"),
        text("Ünïcödé ✓ and emoji 🎉"),
        UiChunk::TextEnd { id: "t0".into() },
        UiChunk::SourceUrl { source_id: "s1".into(), url: "https://example.com/doc".into(), title: Some("Doc".into()) },
        UiChunk::FinishStep,
        UiChunk::StartStep,
        UiChunk::TextStart { id: "t1".into() },
        UiChunk::TextDelta { id: "t1".into(), delta: "Partial second step".into() },
        UiChunk::TextEnd { id: "t1".into() },
        UiChunk::Data(DataChunk {
            kind: "data-progress".into(),
            id: Some("p".into()),
            data: json!({"done": 1}),
            transient: None,
        }),
        UiChunk::Data(DataChunk {
            kind: "data-progress".into(),
            id: Some("p".into()),
            data: json!({"done": 2}),
            transient: None,
        }),
        UiChunk::error_part(&ApiError {
            kind: ErrorKind::Provider,
            message: "connection reset".into(),
            retryable: true,
            field: None,
            code: Some("network".into()),
        }),
        UiChunk::FinishStep,
        // A step with tool calls: one that ran, one the user denied, one that failed, one sent
        // with arguments that are not JSON.
        UiChunk::StartStep,
        UiChunk::ToolInputStart { tool_call_id: "call-1".into(), tool_name: "read_file".into(), dynamic: Some(true) },
        UiChunk::ToolInputDelta { tool_call_id: "call-1".into(), input_text_delta: "{\"path\":".into() },
        UiChunk::ToolInputDelta { tool_call_id: "call-1".into(), input_text_delta: "\"a.txt\"}".into() },
        UiChunk::ToolInputAvailable {
            tool_call_id: "call-1".into(),
            tool_name: "read_file".into(),
            input: json!({"path": "a.txt"}),
            dynamic: Some(true),
        },
        UiChunk::ToolInputStart { tool_call_id: "call-2".into(), tool_name: "write_file".into(), dynamic: Some(true) },
        UiChunk::ToolInputAvailable {
            tool_call_id: "call-2".into(),
            tool_name: "write_file".into(),
            input: json!({"path": "b.txt", "content": "x"}),
            dynamic: Some(true),
        },
        UiChunk::ToolApprovalRequest { approval_id: "approval-1".into(), tool_call_id: "call-2".into() },
        UiChunk::ToolOutputAvailable {
            tool_call_id: "call-1".into(),
            output: json!({"content": [{"type": "text", "text": "hello"}]}),
            dynamic: Some(true),
            preliminary: None,
        },
        UiChunk::ToolOutputDenied { tool_call_id: "call-2".into() },
        UiChunk::ToolInputStart {
            tool_call_id: "call-3".into(),
            tool_name: "current_time".into(),
            dynamic: Some(true),
        },
        UiChunk::ToolInputAvailable {
            tool_call_id: "call-3".into(),
            tool_name: "current_time".into(),
            input: json!({}),
            dynamic: Some(true),
        },
        UiChunk::ToolOutputError {
            tool_call_id: "call-3".into(),
            error_text: "timed out after 60 s".into(),
            dynamic: Some(true),
        },
        // Arguments that are not JSON: the error keeps the raw text the model sent.
        UiChunk::ToolInputStart { tool_call_id: "call-4".into(), tool_name: "read_file".into(), dynamic: Some(true) },
        UiChunk::ToolInputDelta { tool_call_id: "call-4".into(), input_text_delta: "{\"path\": \"a.t".into() },
        UiChunk::ToolInputError {
            tool_call_id: "call-4".into(),
            tool_name: "read_file".into(),
            input: json!("{\"path\": \"a.t"),
            error_text: "the arguments are not valid JSON (EOF while parsing a string at line 1 column 13)".into(),
            dynamic: Some(true),
        },
        UiChunk::FinishStep,
        UiChunk::MessageMetadata { message_metadata: json!({"usage": {"inputTokens": 12, "outputTokens": 34}}) },
        UiChunk::Finish {
            finish_reason: Some(FinishReason::Stop),
            message_metadata: Some(json!({"status": "success"})),
        },
    ]
}

#[test]
fn aisdk_fixture_is_up_to_date() {
    let chunks = transcript();
    let mut acc = MessageAccumulator::new("");
    for chunk in &chunks {
        acc.apply(chunk).unwrap();
    }
    let fixture = json!({ "chunks": chunks, "message": acc.into_message() });
    let expected = serde_json::to_string_pretty(&fixture).unwrap() + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/tests/fixtures/ui-stream.json");
    if std::env::var_os("COLLOQUY_UPDATE_GENERATED").is_some() {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(actual == expected, "ui/tests/fixtures/ui-stream.json is stale: run `cargo xtask gen`");
}
