//! The replay ring: an execution's most recent chunks, for subscribers that come back
//! with a cursor (a reloaded window, a listener dropped for lagging).
//!
//! Most of a reply is deltas, so runs of text, reasoning and tool-input deltas of one part
//! are kept merged: the text once, plus where each chunk ended. A remembered delta then
//! costs its bytes and four more, instead of an event of its own; replay cuts the run
//! back into the chunks that were sent, with their original `seq`. Any other chunk is
//! kept as the very event the listeners got.

use std::collections::VecDeque;
use std::sync::Arc;

use protocol::{ExecutionRef, StreamEvent, UiChunk};
use serde_json::Value;

/// Deltas per merged run at most: eviction drops whole runs, so the ring holds between
/// its capacity and a run's length more (a quarter of the capacity, up to this).
const RUN_LENGTH: usize = 64;

/// Bytes of remembered content past which the oldest entries go, whatever the chunk
/// count: a few huge chunks must not pin a lot of memory per reply.
const MAX_BYTES: usize = 64 * 1024;

/// Text per merged run at most. Eviction drops whole runs, so this bounds what it drops
/// at once: the ring always covers the latest `MAX_BYTES - MAX_RUN_BYTES` or so of text,
/// even when the chunks are large.
const MAX_RUN_BYTES: usize = MAX_BYTES / 8;

pub(crate) struct ReplayRing {
    /// Keep at least this many of the latest chunks (0: remember nothing).
    capacity: usize,
    /// Deltas per merged run at most.
    run_length: usize,
    entries: VecDeque<Entry>,
    /// Chunks held, over all entries.
    chunks: usize,
    /// Approximate content bytes held, over all entries.
    bytes: usize,
}

enum Entry {
    /// A chunk that is not a delta, shared with the listeners that received it.
    Whole { event: Arc<StreamEvent>, bytes: usize },
    /// Consecutive deltas of one part: chunk `first_seq + i` carried
    /// `text[ends[i - 1]..ends[i]]` (from 0 for the first).
    Deltas { first_seq: u64, kind: DeltaKind, id: String, text: String, ends: Vec<u32> },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum DeltaKind {
    Text,
    Reasoning,
    ToolInput,
}

impl DeltaKind {
    fn of(chunk: &UiChunk) -> Option<(Self, &str, &str)> {
        match chunk {
            UiChunk::TextDelta { id, delta } => Some((Self::Text, id, delta)),
            UiChunk::ReasoningDelta { id, delta } => Some((Self::Reasoning, id, delta)),
            UiChunk::ToolInputDelta { tool_call_id, input_text_delta } => {
                Some((Self::ToolInput, tool_call_id, input_text_delta))
            }
            _ => None,
        }
    }

    fn chunk(self, id: &str, delta: &str) -> UiChunk {
        let (id, delta) = (id.to_owned(), delta.to_owned());
        match self {
            Self::Text => UiChunk::TextDelta { id, delta },
            Self::Reasoning => UiChunk::ReasoningDelta { id, delta },
            Self::ToolInput => UiChunk::ToolInputDelta { tool_call_id: id, input_text_delta: delta },
        }
    }
}

impl Entry {
    fn first_seq(&self) -> u64 {
        match self {
            Entry::Whole { event, .. } => event.seq,
            Entry::Deltas { first_seq, .. } => *first_seq,
        }
    }

    fn chunks(&self) -> usize {
        match self {
            Entry::Whole { .. } => 1,
            Entry::Deltas { ends, .. } => ends.len(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Entry::Whole { bytes, .. } => *bytes,
            Entry::Deltas { text, ends, .. } => text.len() + 4 * ends.len(),
        }
    }

    /// Appends `delta` if it continues this run; false if it starts a new entry.
    fn extend(&mut self, seq: u64, kind: DeltaKind, id: &str, delta: &str, run_length: usize) -> bool {
        let Entry::Deltas { first_seq, kind: run_kind, id: run_id, text, ends } = self else { return false };
        let continues = *run_kind == kind
            && run_id == id
            && *first_seq + ends.len() as u64 == seq
            && ends.len() < run_length
            && text.len() + delta.len() <= MAX_RUN_BYTES;
        if continues {
            text.push_str(delta);
            ends.push(text.len() as u32);
        }
        continues
    }
}

impl ReplayRing {
    pub(crate) fn new(capacity: usize) -> Self {
        let run_length = (capacity / 4).clamp(1, RUN_LENGTH);
        Self { capacity, run_length, entries: VecDeque::new(), chunks: 0, bytes: 0 }
    }

    /// Remembers the chunk just sent, forgetting the oldest ones beyond the capacity.
    pub(crate) fn push(&mut self, event: &Arc<StreamEvent>) {
        if self.capacity == 0 {
            return;
        }
        match DeltaKind::of(&event.chunk) {
            Some((kind, id, delta)) => {
                let run_length = self.run_length;
                let extended =
                    self.entries.back_mut().is_some_and(|last| last.extend(event.seq, kind, id, delta, run_length));
                if extended {
                    self.chunks += 1;
                    self.bytes += delta.len() + 4;
                } else {
                    let text = delta.to_owned();
                    let ends = vec![text.len() as u32];
                    self.push_entry(Entry::Deltas { first_seq: event.seq, kind, id: id.to_owned(), text, ends });
                }
            }
            None => {
                let bytes = approximate_size(&event.chunk);
                self.push_entry(Entry::Whole { event: event.clone(), bytes });
            }
        }
        self.evict();
    }

    fn push_entry(&mut self, entry: Entry) {
        self.chunks += entry.chunks();
        self.bytes += entry.bytes();
        self.entries.push_back(entry);
    }

    fn evict(&mut self) {
        while let Some(front) = self.entries.front() {
            let rest = self.chunks - front.chunks();
            let too_many = rest >= self.capacity;
            let too_big = self.bytes > MAX_BYTES && self.entries.len() > 1;
            if !(too_many || too_big) {
                break;
            }
            self.chunks = rest;
            self.bytes -= front.bytes();
            self.entries.pop_front();
        }
    }

    /// The chunks after `seq` up to `last_seq` (the execution's latest), as events of
    /// `header`; `None` when the ring no longer reaches back to `seq + 1`.
    pub(crate) fn after(&self, seq: u64, last_seq: u64, header: &Arc<ExecutionRef>) -> Option<Vec<Arc<StreamEvent>>> {
        if seq >= last_seq {
            return Some(Vec::new());
        }
        let oldest = self.entries.front()?.first_seq();
        if oldest > seq + 1 {
            return None;
        }
        let mut events = Vec::with_capacity((last_seq - seq) as usize);
        for entry in &self.entries {
            match entry {
                Entry::Whole { event, .. } if event.seq > seq => events.push(event.clone()),
                Entry::Whole { .. } => {}
                Entry::Deltas { first_seq, kind, id, text, ends } => {
                    let mut start = 0;
                    for (offset, end) in ends.iter().enumerate() {
                        let end = *end as usize;
                        let chunk_seq = first_seq + offset as u64;
                        if chunk_seq > seq {
                            let chunk = kind.chunk(id, &text[start..end]);
                            events.push(Arc::new(StreamEvent { execution: header.clone(), seq: chunk_seq, chunk }));
                        }
                        start = end;
                    }
                }
            }
        }
        Some(events)
    }
}

/// Roughly what a kept chunk weighs: its strings and JSON values.
fn approximate_size(chunk: &UiChunk) -> usize {
    const BASE: usize = 64;
    BASE + match chunk {
        UiChunk::ToolInputAvailable { input, .. } | UiChunk::ToolInputError { input, .. } => value_size(input),
        UiChunk::ToolOutputAvailable { output, .. } => value_size(output),
        UiChunk::ToolOutputError { error_text, .. } | UiChunk::Error { error_text } => error_text.len(),
        UiChunk::MessageMetadata { message_metadata } => value_size(message_metadata),
        UiChunk::Start { message_metadata, .. } => message_metadata.as_ref().map_or(0, value_size),
        UiChunk::Data(data) => value_size(&data.data),
        UiChunk::File { url, .. } => url.len(),
        _ => 0,
    }
}

fn value_size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 8,
        Value::Array(items) => 8 + items.iter().map(value_size).sum::<usize>(),
        Value::Object(map) => 8 + map.iter().map(|(k, v)| k.len() + value_size(v)).sum::<usize>(),
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use protocol::{ExecutionId, MessageId, ModelRef, ProviderId, TopicId, TurnId};
    use serde_json::json;

    use super::*;

    fn header() -> Arc<ExecutionRef> {
        Arc::new(ExecutionRef {
            topic_id: TopicId::new(),
            turn_id: TurnId::new(),
            execution_id: ExecutionId::new(),
            model: ModelRef { provider_id: ProviderId::from("p"), model: "m".into() },
            message_id: MessageId::new(),
        })
    }

    /// A reply as sent: start, text in `n` deltas, a tool call with input deltas, more text.
    fn reply(header: &Arc<ExecutionRef>, n: usize) -> Vec<Arc<StreamEvent>> {
        let mut chunks = vec![UiChunk::Start { message_id: None, message_metadata: None }];
        chunks.push(UiChunk::TextStart { id: "t0".into() });
        chunks.extend((0..n).map(|i| UiChunk::TextDelta { id: "t0".into(), delta: format!("w{i} ") }));
        chunks.push(UiChunk::TextEnd { id: "t0".into() });
        chunks.push(UiChunk::ToolInputStart { tool_call_id: "c1".into(), tool_name: "read".into(), dynamic: None });
        chunks.extend(
            ["{\"pa", "th\":", "\"a\"}"]
                .map(|d| UiChunk::ToolInputDelta { tool_call_id: "c1".into(), input_text_delta: d.into() }),
        );
        chunks.push(UiChunk::ToolOutputAvailable {
            tool_call_id: "c1".into(),
            output: json!("x"),
            dynamic: None,
            preliminary: None,
        });
        chunks.push(UiChunk::ReasoningDelta { id: "r1".into(), delta: "hm".into() });
        chunks.push(UiChunk::TextDelta { id: "t2".into(), delta: "end".into() });
        chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| Arc::new(StreamEvent { execution: header.clone(), seq: i as u64 + 1, chunk }))
            .collect()
    }

    fn remembered(capacity: usize, events: &[Arc<StreamEvent>]) -> ReplayRing {
        let mut ring = ReplayRing::new(capacity);
        for event in events {
            ring.push(event);
        }
        ring
    }

    #[test]
    fn replay_gives_back_exactly_the_chunks_that_were_sent_after_any_cursor_it_covers() {
        let header = header();
        let sent = reply(&header, 300);
        let last = sent.len() as u64;
        let ring = remembered(1000, &sent);
        for cursor in 0..=last {
            let replayed = ring.after(cursor, last, &header).expect("covered");
            let expected: Vec<&StreamEvent> = sent.iter().skip(cursor as usize).map(Arc::as_ref).collect();
            assert_eq!(replayed.iter().map(Arc::as_ref).collect::<Vec<_>>(), expected, "after {cursor}");
        }
    }

    #[test]
    fn a_full_ring_keeps_at_least_its_capacity_and_rebases_older_cursors() {
        let header = header();
        let sent = reply(&header, 1000);
        let last = sent.len() as u64;
        let ring = remembered(256, &sent);
        assert!(ring.chunks >= 256 && ring.chunks < 256 + RUN_LENGTH, "{}", ring.chunks);
        let oldest = last - ring.chunks as u64 + 1;
        assert!(ring.after(oldest - 2, last, &header).is_none(), "older than the ring: rebase");
        let replayed = ring.after(last - 256, last, &header).expect("the last 256 are always there");
        assert_eq!(replayed.len(), 256);
        assert_eq!(replayed.iter().map(|e| e.seq).collect::<Vec<_>>(), (last - 255..=last).collect::<Vec<_>>());
        assert!(ring.bytes < 8 * 1024, "merged deltas cost their bytes: {}", ring.bytes);
    }

    #[test]
    fn huge_chunks_are_forgotten_by_size_not_only_by_count() {
        let header = header();
        let big = "x".repeat(40 * 1024);
        let sent: Vec<Arc<StreamEvent>> = (1..=4)
            .map(|seq| {
                let chunk = UiChunk::ToolOutputAvailable {
                    tool_call_id: format!("c{seq}"),
                    output: json!(big),
                    dynamic: None,
                    preliminary: None,
                };
                Arc::new(StreamEvent { execution: header.clone(), seq, chunk })
            })
            .collect();
        let ring = remembered(256, &sent);
        assert_eq!(ring.entries.len(), 1, "only the latest huge chunk stays");
        assert!(ring.after(2, 4, &header).is_none());
        assert_eq!(ring.after(3, 4, &header).unwrap().len(), 1);
    }

    #[test]
    fn large_deltas_still_leave_most_of_the_byte_budget_replayable() {
        // 1,000-byte deltas: a run of 64 would be the whole budget, and evicting it would
        // leave almost nothing to replay. Runs are cut by size too.
        let header = header();
        let delta = "y".repeat(1000);
        let sent: Vec<Arc<StreamEvent>> = (1..=500)
            .map(|seq| {
                let chunk = UiChunk::TextDelta { id: "t".into(), delta: delta.clone() };
                Arc::new(StreamEvent { execution: header.clone(), seq, chunk })
            })
            .collect();
        let mut ring = ReplayRing::new(1024);
        let covered = (MAX_BYTES - MAX_RUN_BYTES) / (delta.len() + 4);
        for event in &sent {
            ring.push(event);
            assert!(ring.bytes <= MAX_BYTES + MAX_RUN_BYTES, "{}", ring.bytes);
            let back = (covered as u64).min(event.seq);
            let replayed = ring.after(event.seq - back, event.seq, &header).expect("the latest text is covered");
            assert_eq!(replayed.len() as u64, back);
        }
    }

    #[test]
    fn a_ring_of_capacity_zero_remembers_nothing() {
        let header = header();
        let sent = reply(&header, 10);
        let ring = remembered(0, &sent);
        assert!(ring.after(1, sent.len() as u64, &header).is_none());
        assert_eq!(ring.after(sent.len() as u64, sent.len() as u64, &header), Some(Vec::new()));
    }
}
