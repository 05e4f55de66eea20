//! [`FakeModel`]: an in-process model that streams its text as fast as the pipeline takes
//! it and then either stays silent (but open), so the reply remains live for attaching,
//! or finishes.

use std::sync::Arc;

use futures::StreamExt;
use providers::{CompletionEvent, CompletionRequest, CompletionStream, LanguageModel, ProviderError, StopReason};
use tokio::sync::Notify;

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
        let events = (0..deltas.len()).map(move |i| Ok(CompletionEvent::TextDelta(deltas[i].clone())));
        let hold = futures::stream::once(async move {
            emitted.notify_one();
            if !finish {
                std::future::pending::<()>().await;
            }
            Ok::<_, ProviderError>(CompletionEvent::Finish { reason: StopReason::Stop })
        });
        futures::stream::iter(events).chain(hold).boxed()
    }
}
