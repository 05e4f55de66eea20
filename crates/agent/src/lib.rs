//! The agent loop: model → tool calls → results → model, streamed as UI chunks.
//!
//! - `turn`: [`run_turn`], the loop, with [`TurnRequest`] in and a `TurnOutcome` out.
//! - `runner`: a [`TurnRequest`] is a `TurnRunner` the stream manager can run.
//! - `step`: one model call, its events turned into chunks.
//! - [`hooks`]: [`AgentHooks`] and their composition rules ([`Hooks`]).
//! - [`features`]: per-turn plugins ([`Feature`]) registered by name, and prompt-based tool calling.
//! - `prompt`: stored messages → the model's prompt ([`build_prompt`]).
//! - `call_ids`: no two calls of a reply share an id (the ledger knows a call by it).
//! - `waits`: the `approval_wait` spans of a continued reply ([`AnsweredWait`]).
//!
//! The contract it fulfils (the chunk sink, the outcome, the tool gate, the part writer)
//! lives in the `turn` crate, so the stream manager and agent sessions need not depend on
//! the loop.
//!
//! API boundary: the loop knows nothing of topics, listeners or storage. It writes chunks
//! into a `ChunkSink` and returns how the turn ended; the caller emits the
//! terminal chunks (`finish` / `abort`) because only it knows how the turn is recorded.

mod call_ids;
pub mod features;
pub mod hooks;
mod prompt;
mod prompt_tools;
mod runner;
mod step;
mod turn;
mod waits;

use protocol::{ApiError, FinishReason};
use providers::{ProviderError, ProviderErrorKind, StopReason};

pub use self::turn::{DEFAULT_MAX_TOOL_CALLS, TurnRequest, TurnRequestBuilder, run_turn};
pub use self::waits::AnsweredWait;
pub use features::{Feature, ToolCalling};
pub use hooks::{AgentHooks, HookSource, Hooks, ModelCallEnd, ModelCallReport, UsageObserver};
pub use prompt::{MODEL_TEXT_LIMIT, PromptOptions, build_prompt, context_rounds_left, media_from_url};

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
