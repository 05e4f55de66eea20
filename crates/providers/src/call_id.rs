//! Ids for tool calls a provider sent without one (some OpenAI-compatible servers do, and
//! Gemini usually does). The rest of Colloquy keys a call by its id — its result, its
//! approval, its one run in the ledger — so a made-up id must never repeat: each stream
//! gets a fresh seed, and its calls are `call_<seed>_<n>`.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A seed no other stream of this process shares, and (being random) none of an earlier run.
pub(crate) fn fresh_seed() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    // `RandomState` is keyed randomly per process: 48 random bits set runs apart, the
    // counter keeps this run's streams apart for certain.
    let random = std::collections::hash_map::RandomState::new().build_hasher().finish() & 0xffff_ffff_ffff;
    format!("{random:012x}{count:x}")
}

/// The id of a stream's `index`th call.
pub(crate) fn synthesized(seed: &str, index: u32) -> String {
    format!("call_{seed}_{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    use protocol::api::ApiFormat;

    use crate::{CompletionEvent, StreamDecoder};

    fn first_call_id(format: ApiFormat, body: &str) -> String {
        let mut decoder = StreamDecoder::new(format, "Acme");
        let mut events = decoder.push(body.as_bytes());
        events.extend(decoder.finish());
        events
            .into_iter()
            .find_map(|e| match e {
                Ok(CompletionEvent::ToolCallStart { id, .. }) => Some(id),
                _ => None,
            })
            .expect("a tool call")
    }

    /// A server that sends calls without ids, answering two steps the same way: the two
    /// calls must not share an id, or the second would pass for the first.
    #[test]
    fn calls_without_ids_get_a_different_id_in_every_stream() {
        let chat = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        let responses = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}}\n\n\
                         event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n";
        for (format, body) in [(ApiFormat::OpenaiChat, chat), (ApiFormat::OpenaiResponses, responses)] {
            let (first, second) = (first_call_id(format, body), first_call_id(format, body));
            assert!(first.starts_with("call_"), "{format}: {first}");
            assert_ne!(first, second, "{format}");
        }
    }

    #[test]
    fn seeds_never_repeat() {
        let seeds: std::collections::HashSet<String> = (0..1000).map(|_| fresh_seed()).collect();
        assert_eq!(seeds.len(), 1000);
    }
}
