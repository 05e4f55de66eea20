//! The agent loop: model → tool calls → results → model, streamed as UI chunks.
//!
//! - `turn`: [`run_turn`], the loop, with [`TurnRequest`] in and [`TurnOutcome`] out.
//! - `step`: one model call, its events turned into chunks.
//! - [`PartWriter`]: part ids a snapshot reader can continue (`t<index>`, `r<index>`).
//! - [`gate`]: [`ToolGate`], the approvals and the tool-call ledger as the loop sees them.
//! - [`hooks`]: [`AgentHooks`] and their composition rules ([`Hooks`]).
//! - [`features`]: per-turn plugins ([`Feature`]) registered by name, and prompt-based tool calling.
//! - `prompt`: stored messages → the model's prompt ([`build_prompt`]).
//! - `call_ids`: no two calls of a reply share an id (the ledger knows a call by it).
//!
//! API boundary: the loop knows nothing of topics, listeners or storage. It writes chunks
//! into a [`ChunkSink`] and returns how the turn ended; the caller emits the terminal
//! chunks (`finish` / `abort`) because only it knows how the turn is recorded.

mod call_ids;
pub mod features;
pub mod gate;
pub mod hooks;
mod prompt;
mod prompt_tools;
mod step;
mod turn;
mod writer;

pub use writer::PartWriter;

use protocol::{ApiError, FinishReason, UiChunk};
use providers::{ProviderError, ProviderErrorKind, StopReason};

pub use features::{Feature, ToolCalling};
pub use gate::{AllowAll, Allowed, CallRecord, GateCall, GateDecision, GateError, PendingCall, PendingState, ToolGate};
pub use hooks::{AgentHooks, HookSource, Hooks, UsageObserver};
pub use prompt::{MODEL_TEXT_LIMIT, PromptOptions, build_prompt, context_rounds_left, media_from_url};
pub use turn::{
    DEFAULT_MAX_TOOL_CALLS, REASON_AWAITING_APPROVAL, REASON_LENGTH, REASON_STALLED, REASON_STEERED, REASON_TOOL_LIMIT,
    REASON_USER_STOP, TurnOutcome, TurnRequest, TurnRequestBuilder, run_turn,
};

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

fn finish_reason(reason: &StopReason) -> FinishReason {
    match reason {
        StopReason::Stop => FinishReason::Stop,
        StopReason::Length => FinishReason::Length,
        StopReason::ToolCalls => FinishReason::ToolCalls,
        StopReason::ContentFilter => FinishReason::ContentFilter,
        StopReason::Other(_) => FinishReason::Other,
    }
}

/// A provider failure as the user sees it: kind `provider`, with the provider's own
/// classification (`auth`, `rate_limit`, …) as its `code`.
pub fn api_error(error: ProviderError) -> ApiError {
    let retryable = error.retryable || matches!(error.kind, ProviderErrorKind::Network | ProviderErrorKind::Timeout);
    ApiError { retryable, ..ApiError::from(error) }
}

#[cfg(test)]
mod tests;
