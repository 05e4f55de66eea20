//! The in-process model the benchmarks use: the testkit's [`ScriptedModel`] streaming its
//! text as fast as the pipeline takes it and then either staying silent (but open), so the
//! reply remains live for attaching, or finishing.

use std::sync::Arc;

use providers::{CompletionEvent, StopReason};
use testkit::ScriptedModel;
use testkit::scripted_model::{End, Reply, Step};
use tokio::sync::Notify;

/// Deltas handed over between yields: about what one 16 KiB socket read holds of 7-byte
/// chunks in SSE frames.
const YIELD_EVERY: usize = 256;

/// `total_bytes` of text in `chunks` equal deltas, then silence until cancelled. The
/// [`Notify`] is notified once every delta has been handed to the agent loop.
pub fn holding_open(total_bytes: usize, chunks: usize) -> (ScriptedModel, Arc<Notify>) {
    let emitted = Arc::new(Notify::new());
    let mut steps = text(total_bytes, chunks);
    steps.push(Step::Signal(Arc::clone(&emitted)));
    (ScriptedModel::repeating(Reply::steps(steps).ending(End::HoldOpen)), emitted)
}

/// `total_bytes` of text in `chunks` equal deltas, then a normal finish.
pub fn finishing(total_bytes: usize, chunks: usize) -> ScriptedModel {
    let mut steps = text(total_bytes, chunks);
    steps.push(Step::Event(Ok(CompletionEvent::Finish { reason: StopReason::Stop })));
    ScriptedModel::repeating(Reply::steps(steps))
}

/// The deltas, with a yield now and then, as a socket read's worth of chunks would: a
/// producer that never awaits can keep its worker thread from the listeners until they lag.
fn text(total_bytes: usize, chunks: usize) -> Vec<Step> {
    let size = total_bytes / chunks;
    let text: Vec<u8> = b"lorem ipsum dolor sit amet, ".iter().copied().cycle().take(size).collect();
    let delta = String::from_utf8(text).unwrap_or_default();
    let mut steps = Vec::with_capacity(chunks + chunks / YIELD_EVERY + 2);
    for i in 0..chunks {
        if i % YIELD_EVERY == YIELD_EVERY - 1 {
            steps.push(Step::YieldNow);
        }
        steps.push(Step::Event(Ok(CompletionEvent::TextDelta(delta.clone()))));
    }
    steps
}
