//! The scanner reads text a model wrote, which can be anything. Whatever the text and
//! however the stream splits it: no panic; the visible text is exactly the text outside
//! `<tool_call>…</tool_call>` blocks (nothing dropped, nothing shown twice, no markup
//! shown); there is one call per block opened; and the result does not depend on the
//! splitting. `PROPTEST_CASES=100000 cargo nextest run -p colloquy-agent -E 'test(prompt_tools::properties)'`
//! runs longer.

use proptest::prelude::*;
use proptest::sample::Index;

use super::*;

/// Pieces that stress the markers: whole and partial markers, JSON calls good and bad,
/// multi-byte characters, and random text.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(OPEN.to_owned()),
        Just(CLOSE.to_owned()),
        Just("<tool_".to_owned()),
        Just("<".to_owned()),
        Just("</tool".to_owned()),
        Just(r#"{"name": "read_file", "arguments": {"path": "a"}}"#.to_owned()),
        Just(r#"{"arguments": {}}"#.to_owned()),
        Just("é✓🦀".to_owned()),
        "\\PC{0,12}",
    ]
}

/// The text outside call blocks, and how many blocks were opened (a reference reading).
fn outside_calls(input: &str) -> (String, usize) {
    let (mut text, mut calls, mut rest) = (String::new(), 0, input);
    while let Some(start) = rest.find(OPEN) {
        text.push_str(&rest[..start]);
        calls += 1;
        rest = &rest[start + OPEN.len()..];
        match rest.find(CLOSE) {
            Some(end) => rest = &rest[end + CLOSE.len()..],
            None => return (text, calls),
        }
    }
    text.push_str(rest);
    (text, calls)
}

/// Scans `input` delivered in pieces cut at `cuts` (moved to character boundaries).
fn scan(input: &str, cuts: &[Index]) -> Vec<Scanned> {
    let mut cuts: Vec<usize> = cuts
        .iter()
        .map(|cut| {
            let mut at = cut.index(input.len() + 1);
            while !input.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    cuts.sort_unstable();
    let mut scanner = CallScanner::default();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([input.len()]) {
        out.extend(scanner.push(&input[start..cut]));
        start = cut;
    }
    out.extend(scanner.finish());
    // Adjacent text pieces are one text for the reader.
    let mut merged: Vec<Scanned> = Vec::new();
    for item in out {
        match (merged.last_mut(), item) {
            (Some(Scanned::Text(prev)), Scanned::Text(next)) => prev.push_str(&next),
            (_, item) => merged.push(item),
        }
    }
    merged
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_in_any_pieces_scans_to_its_outside_text_and_one_call_per_block(
        pieces in prop::collection::vec(piece(), 0..24),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let input = pieces.concat();
        let scanned = scan(&input, &cuts);
        prop_assert_eq!(&scanned, &scan(&input, &[]), "the splitting changed the result");
        let text: String =
            scanned.iter().filter_map(|item| if let Scanned::Text(t) = item { Some(t.as_str()) } else { None }).collect();
        let calls = scanned.iter().filter(|item| matches!(item, Scanned::Call(_))).count();
        let (expected_text, expected_calls) = outside_calls(&input);
        prop_assert_eq!(text, expected_text);
        prop_assert_eq!(calls, expected_calls);
    }
}
