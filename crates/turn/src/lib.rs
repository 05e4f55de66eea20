//! The turn contract: what the stream manager, the agent loop and agent sessions agree on.
//!
//! - [`TurnRunner`]: what produces one reply, given a [`RunContext`] (stop, steer, part
//!   offset, idle timeout) and a [`ChunkSink`] to write into.
//! - [`TurnOutcome`]: how the reply ended; the stream manager turns it into the terminal.
//! - [`PartWriter`]: part ids a snapshot reader can continue (`t<index>`, `r<index>`).
//! - [`gate`]: [`ToolGate`], the approvals and the tool-call ledger as a turn sees them.
//!
//! API boundary: plain data and traits over `protocol`; no model, tool, network or storage
//! code. A crate that only runs or records turns (`streams`, `sessions`) depends on this,
//! not on the agent loop.

pub mod gate;
mod writer;

use std::time::Duration;

use protocol::{ApiError, FinishReason, StatusReason, UiChunk};
use tokio_util::sync::CancellationToken;

pub use gate::{AllowAll, Allowed, CallRecord, GateCall, GateDecision, GateError, PendingCall, PendingState, ToolGate};
pub use writer::PartWriter;

/// Where a turn's chunks go. Sending waits when the receiver is busy, which slows the
/// provider stream down instead of buffering without bound.
pub trait ChunkSink: Send {
    /// Err means nobody will read further chunks: the turn stops.
    fn send(&mut self, chunk: UiChunk) -> impl Future<Output = Result<(), SinkClosed>> + Send;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkClosed;

impl ChunkSink for tokio::sync::mpsc::Sender<UiChunk> {
    async fn send(&mut self, chunk: UiChunk) -> Result<(), SinkClosed> {
        tokio::sync::mpsc::Sender::send(self, chunk).await.map_err(|_| SinkClosed)
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Finished {
        reason: FinishReason,
    },
    /// Stopped before the end: `user_stop`, `stalled` or `tool_limit`.
    Paused {
        reason: StatusReason,
    },
    /// A tool call waits for the user; answering it continues the reply.
    AwaitingApproval,
    /// Yielded at a step boundary for a steering message.
    Steered,
    Failed {
        error: ApiError,
    },
}

/// What a turn gets from the one who runs it (the stream manager's topic actor).
pub struct RunContext {
    /// Stop was pressed (or the app is shutting down).
    pub cancel: CancellationToken,
    /// A steering message waits: yield at the next step boundary.
    pub steer: CancellationToken,
    /// Parts the message already has; new parts are numbered after them.
    pub part_offset: usize,
    /// A reply silent this long is cut off as `stalled`.
    pub idle_timeout: Duration,
}

/// What produces one reply: the agent loop, or an agent session's driver. It writes
/// chunks (after the runner's own `start`) into `sink` and says how the reply ended; the
/// one who runs it does the rest (numbering, fan-out, persistence, the terminal).
#[async_trait::async_trait]
pub trait TurnRunner<S: ChunkSink>: Send + Sync {
    async fn run(self: Box<Self>, context: RunContext, sink: &mut S) -> TurnOutcome;
}
