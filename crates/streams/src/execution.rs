//! One model's reply within a turn.

use std::sync::Arc;

use protocol::{
    ExecutionId, ExecutionRef, MessageAccumulator, MessageId, MessageStatus, ModelRef, StatusReason, StreamEvent,
    TerminalStatus, TopicId, TurnId, UiChunk,
};
use store::Checkpoint;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use turn::{ChunkSink, RunContext, SinkClosed, TurnOutcome};

use crate::Runner;
use crate::replay::ReplayRing;

/// Where an execution is in its life. Transitions happen only in the topic actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The model is producing chunks.
    Running,
    /// The terminal chunks are out; the final write is on its way to disk.
    Finishing(TerminalStatus),
    /// The final state is on disk; subscribers have been told.
    Done(TerminalStatus),
}

pub(crate) struct Execution {
    /// Topic, turn, execution, model and message: shared by every chunk it sends.
    pub header: Arc<ExecutionRef>,
    /// Last `seq` handed out; chunks are numbered from 1.
    pub seq: u64,
    pub message: MessageAccumulator,
    pub status: MessageStatus,
    pub status_reason: Option<String>,
    pub phase: Phase,
    pub cancel: CancellationToken,
    /// Cancelled when a steering message arrives: the loop yields at its next step boundary.
    pub steer: CancellationToken,
    /// When the oldest change not yet handed to the persister was made; `None` when the
    /// last checkpoint holds everything. Its checkpoint is due a fixed delay after this.
    pub unsaved_since: Option<Instant>,
    /// The most recent chunks, for subscribers that reattach with a cursor.
    ring: ReplayRing,
}

impl Execution {
    pub fn new(
        topic_id: TopicId,
        turn_id: TurnId,
        message_id: MessageId,
        model: ModelRef,
        ring_capacity: usize,
    ) -> Self {
        Self {
            message: MessageAccumulator::new(message_id.as_str()),
            header: Arc::new(ExecutionRef { topic_id, turn_id, execution_id: ExecutionId::new(), model, message_id }),
            seq: 0,
            status: MessageStatus::Pending,
            status_reason: None,
            phase: Phase::Running,
            cancel: CancellationToken::new(),
            steer: CancellationToken::new(),
            unsaved_since: None,
            ring: ReplayRing::new(ring_capacity),
        }
    }

    pub fn id(&self) -> &ExecutionId {
        &self.header.execution_id
    }

    pub fn message_id(&self) -> &MessageId {
        &self.header.message_id
    }

    pub fn model(&self) -> &ModelRef {
        &self.header.model
    }

    /// Remembers an emitted chunk for replay.
    pub fn remember(&mut self, event: &Arc<StreamEvent>) {
        self.ring.push(event);
    }

    /// The chunks after `seq`, if the ring still holds all of them (empty when the
    /// subscriber is up to date); `None` when it must rebase on a snapshot instead.
    pub fn replay_after(&self, seq: u64) -> Option<Vec<Arc<StreamEvent>>> {
        if seq > self.seq {
            return None;
        }
        self.ring.after(seq, self.seq, &self.header)
    }

    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            message_id: self.header.message_id.clone(),
            status: self.status,
            status_reason: self.status_reason.clone(),
            message: self.message.message().clone(),
        }
    }

    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }
}

/// Whether the app is going on when a turn ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum App {
    Running,
    /// Shutting down: a reply it stopped is recorded as `interrupted`, not `user_stop`.
    ShuttingDown,
}

/// How a finished turn is recorded: final status, reason, and the chunks that close the
/// message for subscribers (`message-metadata` with the status, then `finish` or `abort`).
pub(crate) fn terminal(
    outcome: &TurnOutcome,
    app: App,
) -> (MessageStatus, Option<String>, TerminalStatus, Vec<UiChunk>) {
    let finish = |reason| UiChunk::Finish { finish_reason: Some(reason), message_metadata: None };
    // Stored and sent as its wire spelling: an error's code shares the field.
    let said = |reason: StatusReason| Some(reason.as_str().to_owned());
    let (status, reason, terminal, last) = match outcome {
        // Cut at the output limit: complete as far as it went, and the reason lets the user
        // see it and Continue it.
        TurnOutcome::Finished { reason: protocol::FinishReason::Length } => (
            MessageStatus::Success,
            said(StatusReason::Length),
            TerminalStatus::Success,
            finish(protocol::FinishReason::Length),
        ),
        TurnOutcome::Finished { reason } => (MessageStatus::Success, None, TerminalStatus::Success, finish(*reason)),
        // The reply is complete as far as it went; the steering message goes next.
        TurnOutcome::Steered => (
            MessageStatus::Success,
            said(StatusReason::Steered),
            TerminalStatus::Success,
            finish(protocol::FinishReason::Stop),
        ),
        // Paused, not finished: answering the approval continues this same reply.
        TurnOutcome::AwaitingApproval => (
            MessageStatus::Paused,
            said(StatusReason::AwaitingApproval),
            TerminalStatus::AwaitingApproval,
            finish(protocol::FinishReason::ToolCalls),
        ),
        TurnOutcome::Paused { reason } => {
            let reason = match app {
                App::ShuttingDown => StatusReason::Interrupted,
                App::Running => *reason,
            };
            (MessageStatus::Paused, said(reason), TerminalStatus::Paused, UiChunk::Abort { reason: said(reason) })
        }
        TurnOutcome::Failed { error } => {
            // The finer provider classification (`rate_limit`, `auth`, …) when there is one.
            let reason = error
                .code
                .clone()
                .or_else(|| serde_json::to_value(error.kind).ok().and_then(|v| v.as_str().map(str::to_owned)));
            (MessageStatus::Error, reason, TerminalStatus::Error, finish(protocol::FinishReason::Error))
        }
    };
    // `statusReason: null` clears a reason the reply had before (it waited for an
    // approval, then went on).
    let metadata = serde_json::json!({ "status": status, "statusReason": reason });
    let metadata = UiChunk::MessageMetadata { message_metadata: metadata };
    (status, reason, terminal, vec![metadata, last])
}

/// What an execution task tells its topic actor.
pub(crate) enum Report {
    Chunk { index: usize, chunk: UiChunk },
    Done { index: usize, outcome: TurnOutcome },
    Persisted { index: usize },
}

/// A reply's chunks, addressed to its topic actor. Sending waits while the actor is
/// busy, which slows the producer down instead of buffering without bound.
pub struct ChunkSender {
    index: usize,
    tx: mpsc::Sender<Report>,
}

impl ChunkSender {
    /// Err means nobody will read further chunks: stop producing.
    pub async fn send(&mut self, chunk: UiChunk) -> Result<(), SinkClosed> {
        self.tx.send(Report::Chunk { index: self.index, chunk }).await.map_err(|_| SinkClosed)
    }
}

impl ChunkSink for ChunkSender {
    async fn send(&mut self, chunk: UiChunk) -> Result<(), SinkClosed> {
        ChunkSender::send(self, chunk).await
    }
}

/// Runs one execution to its end and reports the outcome.
pub(crate) async fn run(index: usize, runner: Runner, context: RunContext, tx: mpsc::Sender<Report>) {
    let mut sink = ChunkSender { index, tx: tx.clone() };
    let outcome = runner.run(context, &mut sink).await;
    let _ = tx.send(Report::Done { index, outcome }).await;
}
