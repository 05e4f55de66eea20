//! The decoder reads bytes a provider (or anything answering on its URL) sends. Whatever
//! they are, decoding never panics and never produces more than a bounded multiple of
//! what came in: random bytes, recorded transcripts damaged at random (bytes replaced,
//! cut out, repeated), and `data:` frames of random JSON built from the formats' own
//! field names, each in random network pieces, through every wire format's mapper.
//!
//! `PROPTEST_CASES=100000 cargo nextest run -p colloquy-providers -E 'binary(decoder_properties)'`
//! runs longer.

use std::path::Path;

use colloquy_providers::{CompletionEvent, ProviderError, StreamDecoder};
use proptest::prelude::*;
use proptest::sample::Index;
use protocol::api::ApiFormat;
use serde_json::Value;

type Item = Result<CompletionEvent, ProviderError>;

fn format() -> impl Strategy<Value = ApiFormat> {
    proptest::sample::select(ApiFormat::ALL.to_vec())
}

fn transcripts() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut out = Vec::new();
    for format in ApiFormat::ALL {
        for entry in std::fs::read_dir(root.join(format.as_str())).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "sse") {
                out.push(std::fs::read(path).unwrap());
            }
        }
    }
    out
}

/// One way to damage a byte stream.
#[derive(Clone, Debug)]
enum Damage {
    Replace(Index, Vec<u8>),
    CutOut(Index, Index),
    Repeat(Index, Index),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Damage::Replace(at, bytes)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Damage::CutOut(a, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Damage::Repeat(a, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, damages: &[Damage]) -> Vec<u8> {
    for damage in damages {
        let len = bytes.len();
        let range = |a: &Index, b: &Index| {
            let (a, b) = (a.index(len + 1), b.index(len + 1));
            a.min(b)..a.max(b).min(a.min(b) + 64)
        };
        match damage {
            Damage::Replace(at, with) => {
                let at = at.index(len + 1);
                let end = (at + with.len()).min(len);
                bytes.splice(at..end, with.iter().copied());
            }
            Damage::CutOut(a, b) => {
                bytes.drain(range(a, b));
            }
            Damage::Repeat(a, b) => {
                let range = range(a, b);
                let copy = bytes[range.clone()].to_vec();
                bytes.splice(range.end..range.end, copy);
            }
        }
    }
    bytes
}

/// Field names and values the four formats use, so random frames reach the mappers.
const KEYS: &[&str] = &[
    "type",
    "choices",
    "delta",
    "content",
    "reasoning_content",
    "tool_calls",
    "index",
    "id",
    "function",
    "name",
    "arguments",
    "finish_reason",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "error",
    "message",
    "code",
    "response",
    "output",
    "item",
    "output_index",
    "summary_index",
    "text",
    "status",
    "incomplete_details",
    "reason",
    "content_block",
    "input",
    "partial_json",
    "thinking",
    "signature",
    "data",
    "stop_reason",
    "input_tokens",
    "output_tokens",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "thought",
    "thoughtSignature",
    "finishReason",
    "usageMetadata",
    "promptFeedback",
    "blockReason",
];
const WORDS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "signature_delta",
    "tool_use",
    "text",
    "response.output_text.delta",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.failed",
    "response.incomplete",
    "function_call",
    "stop",
    "length",
    "tool_calls",
    "content_filter",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "error",
    "overloaded_error",
];

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (0u64..8).prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::String),
        proptest::sample::select(WORDS).prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((proptest::sample::select(KEYS).prop_map(str::to_owned), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// A stream of `event:`/`data:` frames holding random JSON.
fn frames() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((proptest::option::of(proptest::sample::select(WORDS)), json()), 0..12).prop_map(|frames| {
        let mut out = Vec::new();
        for (event, data) in frames {
            if let Some(event) = event {
                out.extend_from_slice(format!("event: {event}\n").as_bytes());
            }
            out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
        }
        out
    })
}

/// What a decoder made of `bytes`, arriving cut at `cuts`.
fn decode(format: ApiFormat, bytes: &[u8], cuts: &[Index]) -> Vec<Item> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut decoder = StreamDecoder::new(format, "Acme");
    let mut items = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        items.extend(decoder.push(&bytes[start..cut]));
        start = cut;
    }
    items.extend(decoder.finish());
    items
}

/// Output stays within a bounded multiple of the input: no event repeats or inflates
/// what it read.
fn bounded(format: ApiFormat, bytes: &[u8], items: &[Item]) -> Result<(), TestCaseError> {
    let size: usize = items.iter().map(|item| format!("{item:?}").len()).sum();
    prop_assert!(items.len() <= bytes.len() + 4, "{format}: {} items from {} bytes", items.len(), bytes.len());
    prop_assert!(
        size <= 16 * bytes.len() + 4096,
        "{format}: {size} bytes of events from {} bytes: {items:?}",
        bytes.len()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_and_yield_bounded_output(
        format in format(),
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let items = decode(format, &bytes, &cuts);
        bounded(format, &bytes, &items)?;
    }

    #[test]
    fn damaged_transcripts_never_panic_and_yield_bounded_output(
        format in format(),
        which in any::<Index>(),
        damages in prop::collection::vec(damage(), 1..6),
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let all = transcripts();
        let bytes = apply(all[which.index(all.len())].clone(), &damages);
        let items = decode(format, &bytes, &cuts);
        bounded(format, &bytes, &items)?;
    }

    #[test]
    fn frames_of_random_json_never_panic_and_yield_bounded_output(
        format in format(),
        bytes in frames(),
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let items = decode(format, &bytes, &cuts);
        bounded(format, &bytes, &items)?;
    }
}
