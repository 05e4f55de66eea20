//! [`FakeModel`]: an in-process model that streams its text as fast as the pipeline takes
//! it and then either stays silent (but open), so the reply remains live for attaching,
//! or finishes.

use std::sync::Arc;

use futures::StreamExt;
use providers::{CompletionEvent, CompletionRequest, CompletionStream, LanguageModel, ProviderError, StopReason};
use tokio::sync::Notify;

/// Deltas handed over between yields: about what one 16 KiB socket read holds of 7-byte
/// chunks in SSE frames.
const YIELD_EVERY: usize = 256;

pub struct FakeModel {
    deltas: Arc<Vec<String>>,
    /// Notified once every delta has been handed to the agent loop.
    pub emitted: Arc<Notify>,
    finish: bool,
}

impl FakeModel {
    /// `total_bytes` of text in `chunks` equal deltas, then silence until cancelled.
    pub fn holding_open(total_bytes: usize, chunks: usize) -> Self {
        Self { finish: false, ..Self::finishing(total_bytes, chunks) }
    }

    /// `total_bytes` of text in `chunks` equal deltas, then a normal finish.
    pub fn finishing(total_bytes: usize, chunks: usize) -> Self {
        let size = total_bytes / chunks;
        let text: Vec<u8> = b"lorem ipsum dolor sit amet, ".iter().copied().cycle().take(size).collect();
        let delta = String::from_utf8(text).unwrap_or_default();
        Self { deltas: Arc::new(vec![delta; chunks]), emitted: Arc::new(Notify::new()), finish: true }
    }
}

impl LanguageModel for FakeModel {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        let deltas = Arc::clone(&self.deltas);
        let emitted = Arc::clone(&self.emitted);
        let finish = self.finish;
        // Yield now and then, as a socket read's worth of chunks would: a producer that never
        // awaits can keep its worker thread from the listeners until they lag.
        let events = futures::stream::iter(0..deltas.len()).then(move |i| {
            let delta = deltas[i].clone();
            async move {
                if i % YIELD_EVERY == YIELD_EVERY - 1 {
                    tokio::task::yield_now().await;
                }
                Ok(CompletionEvent::TextDelta(delta))
            }
        });
        let hold = futures::stream::once(async move {
            emitted.notify_one();
            if !finish {
                std::future::pending::<()>().await;
            }
            Ok::<_, ProviderError>(CompletionEvent::Finish { reason: StopReason::Stop })
        });
        events.chain(hold).boxed()
    }
}
