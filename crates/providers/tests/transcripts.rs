//! Recorded-style transcripts of every wire format (`tests/transcripts/<format>/*.sse`)
//! decoded into events: each one snapshot-tested, and every one checked to decode the same
//! however the network splits its bytes (one property test per format).
//!
//! To add a case, drop a `.sse` file into its format's folder and run the tests with
//! `INSTA_UPDATE=always` once; review the new `.snap` file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use colloquy_providers::{CompletionEvent, ProviderError, StreamDecoder};
use proptest::prelude::*;
use proptest::sample::Index;
use protocol::api::ApiFormat;

type Item = Result<CompletionEvent, ProviderError>;

struct Transcript {
    format: ApiFormat,
    name: String,
    bytes: Vec<u8>,
}

fn transcripts() -> Vec<Transcript> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut out = Vec::new();
    for format in ApiFormat::ALL {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(format.as_str()))
            .unwrap_or_else(|err| panic!("transcripts for {format}: {err}"))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "sse"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no transcripts for {format}");
        for path in files {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push(Transcript { format, name, bytes: std::fs::read(&path).unwrap() });
        }
    }
    out
}

/// Decodes `chunks` as one body arriving in those pieces.
fn decode(format: ApiFormat, chunks: &[&[u8]]) -> Vec<Item> {
    let mut decoder = StreamDecoder::new(format, "Acme");
    let mut items: Vec<Item> = chunks.iter().flat_map(|chunk| decoder.push(chunk)).collect();
    items.extend(decoder.finish());
    items
}

/// One line per item, for reading in review.
fn render(items: &[Item]) -> String {
    let mut out = String::new();
    for item in items {
        let line = match item {
            Ok(CompletionEvent::TextDelta(text)) => format!("text {text:?}"),
            Ok(CompletionEvent::ReasoningDelta(text)) => format!("reasoning {text:?}"),
            Ok(CompletionEvent::ToolCallStart { index, id, name }) => {
                format!("tool #{index} start id={id} name={name}")
            }
            Ok(CompletionEvent::ToolCallDelta { index, arguments }) => format!("tool #{index} args {arguments:?}"),
            Ok(CompletionEvent::ReasoningSignature { signature }) => format!("reasoning signature {signature:?}"),
            Ok(CompletionEvent::RedactedReasoning { data }) => format!("redacted reasoning {data:?}"),
            Ok(CompletionEvent::Usage(usage)) => format!("usage in={} out={}", usage.input_tokens, usage.output_tokens),
            Ok(CompletionEvent::Finish { reason }) => format!("finish {}", reason.as_str()),
            Ok(CompletionEvent::Retrying { attempt, delay_ms, reason }) => {
                format!("retrying attempt={attempt} delay_ms={delay_ms} {reason}")
            }
            Err(err) => format!(
                "error {} retryable={} status={:?}: {}",
                err.kind.as_str(),
                err.retryable,
                err.status,
                err.message
            ),
        };
        let _ = writeln!(out, "{line}");
    }
    out
}

#[test]
fn transcripts_decode_to_their_snapshots() {
    for transcript in transcripts() {
        let items = decode(transcript.format, &[&transcript.bytes]);
        insta::assert_snapshot!(format!("{}__{}", transcript.format, transcript.name), render(&items));
    }
}

#[test]
fn every_transcript_ends_with_finish_or_one_error() {
    for transcript in transcripts() {
        let items = decode(transcript.format, &[&transcript.bytes]);
        let errors = items.iter().filter(|item| item.is_err()).count();
        let finishes = items.iter().filter(|item| matches!(item, Ok(CompletionEvent::Finish { .. }))).count();
        let last = items.last().expect("something comes out");
        let ok = match last {
            Err(_) => errors == 1 && finishes == 0,
            Ok(CompletionEvent::Finish { .. }) => errors == 0 && finishes == 1,
            Ok(_) => false,
        };
        assert!(ok, "{} {}: {}", transcript.format, transcript.name, render(&items));
    }
}

#[test]
fn one_byte_at_a_time_decodes_like_the_whole() {
    for transcript in transcripts() {
        let whole = decode(transcript.format, &[&transcript.bytes]);
        let bytes: Vec<&[u8]> = transcript.bytes.chunks(1).collect();
        assert_eq!(decode(transcript.format, &bytes), whole, "{} {}", transcript.format, transcript.name);
    }
}

/// `bytes` cut at `cuts` (positions in `0..=len`, any order, repeats allowed: empty pieces
/// are legal network reads too).
fn split_at<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    chunks.push(&bytes[start..]);
    chunks
}

/// One of `format`'s transcripts, split however the cuts say, decodes like the whole.
fn split_decodes_like_the_whole(format: ApiFormat, which: Index, cuts: &[Index]) -> Result<(), TestCaseError> {
    let all: Vec<Transcript> = transcripts().into_iter().filter(|t| t.format == format).collect();
    let transcript = &all[which.index(all.len())];
    let chunks = split_at(&transcript.bytes, cuts);
    prop_assert_eq!(
        decode(format, &chunks),
        decode(format, &[&transcript.bytes]),
        "{} {} split into {} pieces",
        format,
        transcript.name,
        chunks.len()
    );
    Ok(())
}

// One property per wire format, so each format's transcripts get their own 128 random
// splittings (up to 24 cuts, enough to land inside multi-byte characters, `\r\n` pairs and
// `data:` prefixes). A failing case is kept in `transcripts.proptest-regressions`.
proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_an_openai_chat_stream_yields_the_same_events(which in any::<Index>(), cuts in prop::collection::vec(any::<Index>(), 0..24)) {
        split_decodes_like_the_whole(ApiFormat::OpenaiChat, which, &cuts)?;
    }

    #[test]
    fn any_split_of_an_openai_responses_stream_yields_the_same_events(which in any::<Index>(), cuts in prop::collection::vec(any::<Index>(), 0..24)) {
        split_decodes_like_the_whole(ApiFormat::OpenaiResponses, which, &cuts)?;
    }

    #[test]
    fn any_split_of_an_anthropic_stream_yields_the_same_events(which in any::<Index>(), cuts in prop::collection::vec(any::<Index>(), 0..24)) {
        split_decodes_like_the_whole(ApiFormat::Anthropic, which, &cuts)?;
    }

    #[test]
    fn any_split_of_a_gemini_stream_yields_the_same_events(which in any::<Index>(), cuts in prop::collection::vec(any::<Index>(), 0..24)) {
        split_decodes_like_the_whole(ApiFormat::Gemini, which, &cuts)?;
    }
}
