//! An MCP server's tool results and its stdout are outside input. Whatever a result
//! holds, mapping it never panics and yields output bounded by a multiple of its size;
//! whatever bytes a server prints, the noise kept for messages stays within its caps.
//! `PROPTEST_CASES=100000 cargo nextest run -p colloquy-tools -E 'test(client::properties)'`
//! runs longer.

use proptest::prelude::*;
use serde_json::Value;

use super::*;

const KEYS: &[&str] = &[
    "content",
    "type",
    "text",
    "data",
    "mimeType",
    "resource",
    "uri",
    "blob",
    "name",
    "description",
    "structuredContent",
    "isError",
    "_meta",
    "annotations",
];
const WORDS: &[&str] = &["text", "image", "resource", "resource_link", "audio", "video", ""];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::String),
        proptest::sample::select(WORDS).prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((proptest::sample::select(KEYS).prop_map(str::to_owned), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_tool_result_maps_to_output_bounded_by_its_size(result in json()) {
        let size = serde_json::to_string(&result).unwrap().len();
        let output = tool_output(result);
        let mapped = serde_json::to_string(&output).unwrap().len();
        // An unknown block of a few bytes becomes a line saying what it was: a constant
        // per block, so a multiple of the input bounds it.
        prop_assert!(mapped <= 32 * size + 256, "{size} bytes of result became {mapped} bytes of output");
    }

    #[test]
    fn any_stdout_keeps_at_most_the_capped_noise(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..12)) {
        let noise = StdoutNoise::default();
        let mut watched = WatchedStdout::new(tokio::io::empty(), noise.clone());
        for chunk in &chunks {
            watched.watch(chunk);
        }
        let kept = noise.0.lock().unwrap().clone();
        prop_assert!(kept.len() <= NOISE_LINES);
        for line in &kept {
            // Lossy UTF-8 turns a stray byte into up to 3 bytes.
            prop_assert!(line.len() <= 3 * NOISE_LINE_BYTES, "a kept line of {} bytes", line.len());
        }
    }
}
