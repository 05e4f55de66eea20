//! The topic actor: one task per topic that owns its live turn and its listeners.
//!
//! Every operation on a topic goes through the actor's mailbox, so open, attach, abort
//! and the executions' reports are applied one at a time, in order. The actor never
//! waits on the network or the database: model calls run in execution tasks and writes
//! in the persister; both report back through the actor's own channel.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use protocol::{
    AttachReply, ExecutionSnapshot, ExecutionTerminal, MessageStatus, StreamEvent, StreamMessage, TopicId, TurnId,
    UiChunk,
};
use store::{AssistantSlot, NewTurn, Store};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::execution::{self, Execution, Phase, Report};
use crate::listener::{Delivery, Listener, ListenerId};
use crate::persist::Persister;
use crate::{PreparedTurn, StreamConfig, StreamError};

pub(crate) enum Command {
    Open { turn: Box<PreparedTurn>, listener: Listener, reply: oneshot::Sender<Result<AttachReply, StreamError>> },
    Attach { listener: Listener, reply: oneshot::Sender<AttachReply> },
    Detach { listener_id: ListenerId },
    Abort { reply: oneshot::Sender<()> },
    IsStreaming { reply: oneshot::Sender<bool> },
    Shutdown { reply: oneshot::Sender<()> },
}

struct LiveTurn {
    id: TurnId,
    executions: Vec<Execution>,
    span: tracing::Span,
    /// Set once every execution is done: the turn is evicted then.
    evict_at: Option<Instant>,
    abort_waiters: Vec<oneshot::Sender<()>>,
}

impl LiveTurn {
    fn is_running(&self) -> bool {
        self.executions.iter().any(|e| !e.is_done())
    }
}

pub(crate) struct TopicActor {
    topic_id: TopicId,
    store: Store,
    config: StreamConfig,
    persister: Persister,
    tracker: TaskTracker,
    listeners: Vec<Listener>,
    turn: Option<LiveTurn>,
    reports_tx: mpsc::Sender<Report>,
    reports_rx: mpsc::Receiver<Report>,
    shutdown: Option<oneshot::Sender<()>>,
    /// Turns still producing output, across all topics.
    live_turns: Arc<AtomicUsize>,
}

impl TopicActor {
    pub(crate) fn new(
        topic_id: TopicId,
        store: Store,
        config: StreamConfig,
        persister: Persister,
        tracker: TaskTracker,
        live_turns: Arc<AtomicUsize>,
    ) -> Self {
        let (reports_tx, reports_rx) = mpsc::channel(256);
        Self {
            topic_id,
            store,
            config,
            persister,
            tracker,
            listeners: Vec::new(),
            turn: None,
            reports_tx,
            reports_rx,
            shutdown: None,
            live_turns,
        }
    }

    pub(crate) async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let mut checkpoints = tokio::time::interval(self.config.checkpoint_interval);
        checkpoints.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let evict_at = self.turn.as_ref().and_then(|t| t.evict_at);
            let running = self.turn.as_ref().is_some_and(LiveTurn::is_running);
            tokio::select! {
                command = commands.recv(), if self.shutdown.is_none() => match command {
                    Some(command) => self.handle(command).await,
                    None => self.begin_shutdown(None),
                },
                Some(report) = self.reports_rx.recv() => self.on_report(report),
                _ = checkpoints.tick(), if running => self.checkpoint(),
                _ = sleep_until_opt(evict_at) => {
                    tracing::debug!(topic_id = %self.topic_id, "evicting finished turn");
                    self.turn = None;
                }
            }
            if self.shutdown.is_some() && !self.turn.as_ref().is_some_and(LiveTurn::is_running) {
                if let Some(reply) = self.shutdown.take() {
                    let _ = reply.send(());
                }
                return;
            }
        }
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Open { turn, listener, reply } => {
                let result = self.open(*turn, listener).await;
                let _ = reply.send(result);
            }
            Command::Attach { listener, reply } => {
                let _ = reply.send(self.attach(listener));
            }
            Command::Detach { listener_id } => self.listeners.retain(|l| l.id != listener_id),
            Command::Abort { reply } => match self.turn.as_mut() {
                Some(turn) if turn.is_running() => {
                    for execution in &turn.executions {
                        execution.cancel.cancel();
                    }
                    turn.abort_waiters.push(reply);
                }
                _ => {
                    let _ = reply.send(());
                }
            },
            Command::IsStreaming { reply } => {
                let _ = reply.send(self.turn.as_ref().is_some_and(LiveTurn::is_running));
            }
            Command::Shutdown { reply } => self.begin_shutdown(Some(reply)),
        }
    }

    fn begin_shutdown(&mut self, reply: Option<oneshot::Sender<()>>) {
        if let Some(turn) = &self.turn {
            for execution in &turn.executions {
                execution.cancel.cancel();
            }
        }
        let (fallback, _) = oneshot::channel();
        self.shutdown = Some(reply.unwrap_or(fallback));
    }

    async fn open(&mut self, prepared: PreparedTurn, listener: Listener) -> Result<AttachReply, StreamError> {
        if self.turn.as_ref().is_some_and(LiveTurn::is_running) {
            return Err(StreamError::Busy);
        }
        let new_turn = NewTurn {
            topic_id: prepared.topic_id.clone(),
            turn_id: prepared.turn_id.clone(),
            user_message_id: prepared.user_message_id.clone(),
            user_text: prepared.user_text.clone(),
            assistants: prepared
                .executions
                .iter()
                .map(|e| AssistantSlot {
                    message_id: e.message_id.clone(),
                    model: e.model_ref.clone(),
                    metadata: start_metadata(&prepared.turn_id, e),
                })
                .collect(),
        };
        self.store.insert_turn(&new_turn).await?;

        let span = tracing::info_span!("turn", topic_id = %self.topic_id, turn_id = %prepared.turn_id);
        let executions =
            prepared.executions.iter().map(|e| Execution::new(e.message_id.clone(), e.model_ref.clone())).collect();
        self.live_turns.fetch_add(1, Ordering::SeqCst);
        self.turn = Some(LiveTurn {
            id: prepared.turn_id.clone(),
            executions,
            span: span.clone(),
            evict_at: None,
            abort_waiters: Vec::new(),
        });
        self.add_listener(listener);

        for (index, prepared_execution) in prepared.executions.iter().enumerate() {
            let start = UiChunk::Start {
                message_id: Some(prepared_execution.message_id.to_string()),
                message_metadata: Some(start_metadata(&prepared.turn_id, prepared_execution)),
            };
            self.emit(index, start);
            let Some(execution) = self.turn.as_ref().and_then(|t| t.executions.get(index)) else { continue };
            let request = execution::request(prepared_execution, self.config.idle_timeout);
            let cancel = execution.cancel.clone();
            let exec_span = tracing::info_span!(parent: &span, "execution", model = %prepared_execution.model_ref);
            self.tracker.spawn(execution::run(index, request, cancel, self.reports_tx.clone()).instrument(exec_span));
        }
        Ok(AttachReply { live: true, turn_id: Some(prepared.turn_id) })
    }

    fn attach(&mut self, listener: Listener) -> AttachReply {
        let reply = match &self.turn {
            Some(turn) => {
                for execution in &turn.executions {
                    let snapshot = ExecutionSnapshot {
                        topic_id: self.topic_id.clone(),
                        turn_id: turn.id.clone(),
                        execution_id: execution.id.clone(),
                        model: execution.model.clone(),
                        message_id: execution.message_id.clone(),
                        seq: execution.seq,
                        message: execution.message.message().clone(),
                    };
                    if listener.deliver(StreamMessage::Snapshot(snapshot)) == Delivery::Dropped {
                        return AttachReply { live: false, turn_id: None };
                    }
                    if let Phase::Done(status) = execution.phase {
                        let terminal = self.terminal_message(turn, execution, status);
                        listener.deliver(terminal);
                    }
                }
                AttachReply { live: true, turn_id: Some(turn.id.clone()) }
            }
            None => AttachReply { live: false, turn_id: None },
        };
        self.add_listener(listener);
        reply
    }

    fn add_listener(&mut self, listener: Listener) {
        self.listeners.retain(|l| l.id != listener.id && !l.is_closed());
        self.listeners.push(listener);
    }

    fn on_report(&mut self, report: Report) {
        match report {
            Report::Chunk { index, chunk } => self.emit(index, chunk),
            Report::Done { index, outcome } => self.finish(index, outcome),
            Report::Persisted { index } => self.persisted(index),
        }
    }

    /// Numbers a chunk, folds it into the snapshot, and fans it out.
    fn emit(&mut self, index: usize, chunk: UiChunk) {
        let Some(turn) = self.turn.as_mut() else { return };
        let Some(execution) = turn.executions.get_mut(index) else { return };
        if execution.is_done() {
            return;
        }
        execution.seq += 1;
        if let Err(err) = execution.message.apply(&chunk) {
            tracing::warn!(error = %err, "chunk does not fit the message; delivered but not folded");
        }
        if execution.status == MessageStatus::Pending && !matches!(chunk, UiChunk::Start { .. }) {
            execution.status = MessageStatus::Streaming;
        }
        execution.dirty = true;
        let event = StreamEvent {
            topic_id: self.topic_id.clone(),
            turn_id: turn.id.clone(),
            execution_id: execution.id.clone(),
            model: execution.model.clone(),
            message_id: execution.message_id.clone(),
            seq: execution.seq,
            chunk,
        };
        self.broadcast(StreamMessage::Chunk(event));
    }

    fn finish(&mut self, index: usize, outcome: agent::TurnOutcome) {
        let interrupted = self.shutdown.is_some();
        let (status, reason, terminal_status, chunks) = execution::terminal(&outcome, interrupted);
        for chunk in chunks {
            self.emit(index, chunk);
        }
        let Some(turn) = self.turn.as_mut() else { return };
        let Some(execution) = turn.executions.get_mut(index) else { return };
        execution.message.close_open_parts();
        execution.status = status;
        execution.status_reason = reason;
        execution.phase = Phase::Finishing(terminal_status);
        execution.dirty = false;
        let _span = turn.span.enter();
        tracing::info!(model = %execution.model, status = status.as_str(), seq = execution.seq, "reply finished");
        let written = self.persister.finish(execution.checkpoint());
        let tx = self.reports_tx.clone();
        // Subscribers hear about the end only once it is on disk, so a window that
        // reloads the history right after sees the final state.
        self.tracker.spawn(async move {
            let _ = written.await;
            let _ = tx.send(Report::Persisted { index }).await;
        });
    }

    fn persisted(&mut self, index: usize) {
        let Some(turn) = self.turn.as_mut() else { return };
        let Some(execution) = turn.executions.get_mut(index) else { return };
        let Phase::Finishing(status) = execution.phase else { return };
        execution.phase = Phase::Done(status);
        let finished = !turn.is_running();
        if finished {
            self.live_turns.fetch_sub(1, Ordering::SeqCst);
            turn.evict_at = Some(Instant::now() + self.config.grace_period);
            for waiter in turn.abort_waiters.drain(..) {
                let _ = waiter.send(());
            }
        }
        let Some(turn) = self.turn.as_ref() else { return };
        let message = self.terminal_message(turn, &turn.executions[index], status);
        self.broadcast(message);
    }

    fn terminal_message(
        &self,
        turn: &LiveTurn,
        execution: &Execution,
        status: protocol::TerminalStatus,
    ) -> StreamMessage {
        StreamMessage::Terminal(ExecutionTerminal {
            topic_id: self.topic_id.clone(),
            turn_id: turn.id.clone(),
            execution_id: execution.id.clone(),
            message_id: execution.message_id.clone(),
            status,
            is_topic_done: !turn.is_running(),
        })
    }

    fn checkpoint(&mut self) {
        let Some(turn) = self.turn.as_mut() else { return };
        for execution in turn.executions.iter_mut().filter(|e| e.is_running() && e.dirty) {
            execution.dirty = false;
            self.persister.checkpoint(execution.checkpoint());
        }
    }

    fn broadcast(&mut self, message: StreamMessage) {
        match self.listeners.len() {
            0 => {}
            1 => {
                if self.listeners[0].deliver(message) == Delivery::Dropped {
                    self.listeners.clear();
                }
            }
            _ => self.listeners.retain(|listener| listener.deliver(message.clone()) == Delivery::Sent),
        }
    }
}

fn start_metadata(turn_id: &TurnId, execution: &crate::PreparedExecution) -> serde_json::Value {
    serde_json::json!({
        "model": execution.model_ref.model,
        "providerName": execution.provider_name,
        "turnId": turn_id,
        "status": "streaming",
    })
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
