//! The agent loop: one model reply, streamed as UI chunks.
//!
//! For now a turn is a single step (prompt → model → text); tools and multi-step loops
//! come with the tool layer. The loop knows nothing about topics, listeners or storage:
//! it writes chunks into a [`ChunkSink`] and returns a [`TurnOutcome`]. The caller emits
//! the terminal chunks (`finish` / `abort`) because only it knows how the turn is recorded.

mod prompt;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use protocol::{ApiError, DataChunk, ErrorKind, FinishReason, UiChunk};
use providers::{CompletionEvent, CompletionRequest, LanguageModel, ProviderError, ProviderErrorKind, StopReason};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub use prompt::build_prompt;

/// Where the loop's chunks go. Sending waits when the receiver is busy, which slows the
/// provider stream down instead of buffering without bound.
pub trait ChunkSink: Send {
    /// Err means nobody will read further chunks: the loop stops.
    fn send(&mut self, chunk: UiChunk) -> impl Future<Output = Result<(), SinkClosed>> + Send;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkClosed;

impl ChunkSink for tokio::sync::mpsc::Sender<UiChunk> {
    async fn send(&mut self, chunk: UiChunk) -> Result<(), SinkClosed> {
        tokio::sync::mpsc::Sender::send(self, chunk).await.map_err(|_| SinkClosed)
    }
}

/// One turn's input.
pub struct TurnRequest {
    pub model: Arc<dyn LanguageModel>,
    pub completion: CompletionRequest,
    /// A reply that stays silent this long is cut off as `stalled`.
    pub idle_timeout: Duration,
    /// How many parts the message already has (a continued reply): new parts are
    /// numbered after them.
    pub part_offset: usize,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Finished {
        reason: FinishReason,
    },
    /// Stopped before the end; `reason` is `user_stop` or `stalled`.
    Paused {
        reason: String,
    },
    Failed {
        error: ApiError,
    },
}

pub const REASON_USER_STOP: &str = "user_stop";
pub const REASON_STALLED: &str = "stalled";

/// Runs one turn to its end, writing chunks (after the caller's `start`) into `sink`.
pub async fn run_turn(request: TurnRequest, cancel: CancellationToken, sink: &mut impl ChunkSink) -> TurnOutcome {
    let span = tracing::info_span!("model_call", model = %request.completion.model, chunks = tracing::field::Empty);
    async move {
        let mut writer = PartWriter { parts: request.part_offset, ..PartWriter::default() };
        let outcome = stream_step(&request, &cancel, sink, &mut writer).await;
        // Whatever happened, leave no part open.
        let closing = writer.close_open_parts();
        let mut outcome = outcome;
        for chunk in closing {
            if sink.send(chunk).await.is_err() {
                outcome = TurnOutcome::Paused { reason: REASON_USER_STOP.into() };
            }
        }
        if let TurnOutcome::Failed { error } = &outcome {
            let _ = sink.send(writer.data(UiChunk::error_part(error))).await;
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        if writer.step_open {
            let _ = sink.send(UiChunk::FinishStep).await;
        }
        tracing::Span::current().record("chunks", writer.chunks);
        outcome
    }
    .instrument(span)
    .await
}

async fn stream_step(
    request: &TurnRequest,
    cancel: &CancellationToken,
    sink: &mut impl ChunkSink,
    writer: &mut PartWriter,
) -> TurnOutcome {
    let mut stream = request.model.stream(request.completion.clone());
    if sink.send(writer.start_step()).await.is_err() {
        return stopped();
    }
    let mut finish = FinishReason::Stop;
    // A provider waiting to retry is not silent: its announced wait extends the next deadline.
    let mut announced_wait = Duration::ZERO;
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => return stopped(),
            next = tokio::time::timeout(request.idle_timeout + announced_wait, stream.next()) => next,
        };
        announced_wait = Duration::ZERO;
        let event = match next {
            Err(_elapsed) => return TurnOutcome::Paused { reason: REASON_STALLED.into() },
            Ok(None) => return TurnOutcome::Finished { reason: finish },
            Ok(Some(Err(error))) => return TurnOutcome::Failed { error: api_error(error) },
            Ok(Some(Ok(event))) => event,
        };
        let chunks = match event {
            CompletionEvent::TextDelta(delta) => writer.text(delta),
            CompletionEvent::ReasoningDelta(delta) => writer.reasoning(delta),
            CompletionEvent::Usage(usage) => vec![UiChunk::MessageMetadata {
                message_metadata: serde_json::json!({ "usage": { "inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens } }),
            }],
            CompletionEvent::Finish { reason } => {
                finish = finish_reason(&reason);
                Vec::new()
            }
            CompletionEvent::Retrying { attempt, delay_ms, reason } => {
                announced_wait = Duration::from_millis(delay_ms);
                // Transient: the UI shows "retrying in N s" while it lasts; nothing is stored.
                vec![UiChunk::Data(DataChunk {
                    kind: "data-retrying".into(),
                    id: Some("retrying".into()),
                    data: serde_json::json!({ "attempt": attempt, "delayMs": delay_ms, "reason": reason }),
                    transient: Some(true),
                })]
            }
            // Tool calls arrive with the tool layer, and signatures are echoed back once
            // requests can carry reasoning parts; a plain chat turn ignores them.
            CompletionEvent::ToolCallStart { .. }
            | CompletionEvent::ToolCallDelta { .. }
            | CompletionEvent::ReasoningSignature { .. }
            | CompletionEvent::RedactedReasoning { .. } => Vec::new(),
        };
        for chunk in chunks {
            if sink.send(chunk).await.is_err() {
                return stopped();
            }
        }
    }
}

fn stopped() -> TurnOutcome {
    TurnOutcome::Paused { reason: REASON_USER_STOP.into() }
}

fn finish_reason(reason: &StopReason) -> FinishReason {
    match reason {
        StopReason::Stop => FinishReason::Stop,
        StopReason::Length => FinishReason::Length,
        StopReason::ToolCalls => FinishReason::ToolCalls,
        StopReason::ContentFilter => FinishReason::ContentFilter,
        StopReason::Other(_) => FinishReason::Other,
    }
}

/// A provider failure as the user sees it.
pub fn api_error(error: ProviderError) -> ApiError {
    let retryable = error.retryable || matches!(error.kind, ProviderErrorKind::Network | ProviderErrorKind::Timeout);
    ApiError { kind: ErrorKind::Provider, message: error.message, retryable, field: None }
}

/// Emits chunks with the part ids a snapshot reader can rebuild: an open text part is
/// `t<index>` and an open reasoning part `r<index>`, where index is the part's position in
/// the message. The UI relies on this to continue a part after reattaching.
#[derive(Default)]
struct PartWriter {
    parts: usize,
    open_text: Option<String>,
    open_reasoning: Option<String>,
    step_open: bool,
    chunks: u64,
}

impl PartWriter {
    fn start_step(&mut self) -> UiChunk {
        self.parts += 1;
        self.step_open = true;
        self.chunks += 1;
        UiChunk::StartStep
    }

    fn text(&mut self, delta: String) -> Vec<UiChunk> {
        let mut out = Vec::with_capacity(2);
        if let Some(id) = self.open_reasoning.take() {
            out.push(UiChunk::ReasoningEnd { id });
        }
        let id = match &self.open_text {
            Some(id) => id.clone(),
            None => {
                let id = format!("t{}", self.parts);
                self.parts += 1;
                self.open_text = Some(id.clone());
                out.push(UiChunk::TextStart { id: id.clone() });
                id
            }
        };
        out.push(UiChunk::TextDelta { id, delta });
        self.chunks += out.len() as u64;
        out
    }

    fn reasoning(&mut self, delta: String) -> Vec<UiChunk> {
        let mut out = Vec::with_capacity(2);
        if let Some(id) = self.open_text.take() {
            out.push(UiChunk::TextEnd { id });
        }
        let id = match &self.open_reasoning {
            Some(id) => id.clone(),
            None => {
                let id = format!("r{}", self.parts);
                self.parts += 1;
                self.open_reasoning = Some(id.clone());
                out.push(UiChunk::ReasoningStart { id: id.clone() });
                id
            }
        };
        out.push(UiChunk::ReasoningDelta { id, delta });
        self.chunks += out.len() as u64;
        out
    }

    fn data(&mut self, chunk: UiChunk) -> UiChunk {
        self.parts += 1;
        self.chunks += 1;
        chunk
    }

    fn close_open_parts(&mut self) -> Vec<UiChunk> {
        let mut out = Vec::new();
        if let Some(id) = self.open_reasoning.take() {
            out.push(UiChunk::ReasoningEnd { id });
        }
        if let Some(id) = self.open_text.take() {
            out.push(UiChunk::TextEnd { id });
        }
        self.chunks += out.len() as u64;
        out
    }
}

#[cfg(test)]
mod tests;
