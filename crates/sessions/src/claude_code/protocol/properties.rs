//! Claude Code's stdout is outside input: a newer CLI, a wrapper script or another program
//! can write anything. Whatever a line holds, reading it never panics and yields events
//! bounded by a multiple of its size. Lines are random text, and JSON built from the
//! protocol's own field names and values, whole or cut short.
//! `PROPTEST_CASES=100000 cargo nextest run -p colloquy-sessions -E 'test(protocol::properties)'`
//! runs longer.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

use super::*;

const KEYS: &[&str] = &[
    "type",
    "subtype",
    "session_id",
    "parent_tool_use_id",
    "message",
    "id",
    "content",
    "text",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "event",
    "index",
    "content_block",
    "delta",
    "partial_json",
    "thinking",
    "request_id",
    "request",
    "response",
    "error",
    "tool_name",
    "result",
    "usage",
    "total_cost_usd",
    "cwd",
    "model",
    "tools",
];
const WORDS: &[&str] = &[
    "stream_event",
    "assistant",
    "user",
    "system",
    "result",
    "control_request",
    "control_response",
    "control_cancel_request",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "text_delta",
    "thinking_delta",
    "input_json_delta",
    "tool_use",
    "tool_result",
    "text",
    "image",
    "can_use_tool",
    "hook_callback",
    "init",
    "success",
    "error",
    "error_max_turns",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u32>().prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::String),
        proptest::sample::select(WORDS).prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((proptest::sample::select(KEYS).prop_map(str::to_owned), inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// A stdout line: random text, or a JSON object possibly cut short.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,200}",
        (json(), any::<bool>(), any::<Index>()).prop_map(|(value, cut, at)| {
            let value = match value {
                object @ Value::Object(_) => object,
                other => serde_json::json!({ "type": "assistant", "message": { "content": [other] } }),
            };
            let mut text = value.to_string();
            if cut {
                let mut at = at.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.truncate(at);
            }
            text
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_stdout_line_reads_without_panic_into_bounded_events(lines in prop::collection::vec(line(), 1..8)) {
        let mut reader = LineReader::default();
        for line in &lines {
            let read = reader.read(line);
            let size = format!("{read:?}").len();
            // Debug escapes a character into at most 10 bytes; a few constant words per event.
            prop_assert!(size <= 16 * line.len() + 1024, "a {}-byte line read as {size} bytes: {read:?}", line.len());
        }
    }
}
