//! The topic actor: one task per topic that owns its live turn and its listeners.
//!
//! Every operation on a topic goes through the actor's mailbox, so open, attach, abort
//! and the executions' reports are applied one at a time, in order. The actor never
//! waits on the network. It waits on the database in one place only: admitting a turn
//! (`open` → `admit`: the user row and pending replies, or a reply reopened at the
//! revision it was prepared from), so a turn that cannot be written is refused before
//! anything streams; meanwhile its mailbox and its executions' reports queue. Model calls
//! run in execution tasks; checkpoints and final writes go to the persister, and a final
//! write's completion comes back as a report, so the actor never waits on those.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use protocol::{
    AttachReply, ExecutionCursor, ExecutionSnapshot, ExecutionTerminal, MessageId, MessageStatus, StreamEvent,
    StreamMessage, TerminalStatus, TopicId, TopicStatus, TurnId, UiChunk,
};
use store::{AssistantSlot, NewTurn, Store};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::execution::{self, App, Execution, Phase, Report};
use crate::listener::{Delivery, Listener, ListenerId};
use crate::persist::Persister;
use crate::status::StatusHub;
use crate::{PreparedExecution, PreparedTurn, ReplySlot, StreamConfig, StreamError};

pub(crate) enum Command {
    Open {
        turn: Box<PreparedTurn>,
        listener: Listener,
        reply: oneshot::Sender<Result<AttachReply, StreamError>>,
    },
    Attach {
        listener: Listener,
        after: Vec<ExecutionCursor>,
        reply: oneshot::Sender<AttachReply>,
    },
    Detach {
        listener_id: ListenerId,
    },
    Abort {
        reply: oneshot::Sender<()>,
    },
    /// Stops one reply of the live turn; the others go on.
    AbortReply {
        message_id: MessageId,
        reply: oneshot::Sender<()>,
    },
    Steer {
        reply: oneshot::Sender<bool>,
    },
    IsStreaming {
        reply: oneshot::Sender<bool>,
    },
    Forget {
        message_ids: Vec<MessageId>,
        reply: oneshot::Sender<()>,
    },
    Shutdown {
        reply: oneshot::Sender<()>,
    },
}

struct LiveTurn {
    id: TurnId,
    executions: Vec<Execution>,
    span: tracing::Span,
    /// Set once every execution is done: the turn is evicted then.
    evict_at: Option<Instant>,
    /// Who waits for a stop: of the whole turn (`None`), or of one reply.
    abort_waiters: Vec<(Option<MessageId>, oneshot::Sender<()>)>,
    /// Whether `streaming` has been published since the turn (re)started.
    streaming_published: bool,
    /// Whether `awaiting_approval` is the topic's published status right now.
    awaiting_approval: bool,
}

impl LiveTurn {
    fn is_running(&self) -> bool {
        self.executions.iter().any(|e| !e.is_done())
    }

    /// When the next checkpoint is due: `delay` after the oldest unsaved change of any
    /// running reply. Scheduling from that change (not on a fixed tick) bounds how long
    /// any output waits, including a reply's first chunk, whatever its phase.
    fn next_checkpoint(&self, delay: std::time::Duration) -> Option<Instant> {
        self.executions.iter().filter(|e| e.is_running()).filter_map(|e| e.unsaved_since).min().map(|at| at + delay)
    }

    /// The topic status a finished turn leaves behind. A reply waiting for approval
    /// needs the user more than any other outcome.
    fn final_status(&self) -> TopicStatus {
        let statuses: Vec<TerminalStatus> =
            self.executions.iter().filter_map(|e| if let Phase::Done(s) = e.phase { Some(s) } else { None }).collect();
        if statuses.contains(&TerminalStatus::AwaitingApproval) {
            TopicStatus::AwaitingApproval
        } else if statuses.contains(&TerminalStatus::Success) {
            TopicStatus::Done
        } else if statuses.contains(&TerminalStatus::Error) {
            TopicStatus::Error
        } else {
            TopicStatus::Aborted
        }
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
    status: StatusHub,
}

impl TopicActor {
    pub(crate) fn new(
        topic_id: TopicId,
        store: Store,
        config: StreamConfig,
        persister: Persister,
        tracker: TaskTracker,
        live_turns: Arc<AtomicUsize>,
        status: StatusHub,
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
            status,
        }
    }

    pub(crate) async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let checkpoint_delay = self.config.checkpoint_delay();
        loop {
            let evict_at = self.turn.as_ref().and_then(|t| t.evict_at);
            let checkpoint_at = self.turn.as_ref().and_then(|t| t.next_checkpoint(checkpoint_delay));
            tokio::select! {
                command = commands.recv(), if self.shutdown.is_none() => match command {
                    Some(command) => self.handle(command).await,
                    None => self.begin_shutdown(None),
                },
                Some(report) = self.reports_rx.recv() => self.on_report(report),
                _ = sleep_until_opt(checkpoint_at) => self.checkpoint(),
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
            Command::Attach { listener, after, reply } => {
                let _ = reply.send(self.attach(listener, &after));
            }
            Command::Detach { listener_id } => self.listeners.retain(|l| l.id != listener_id),
            Command::Abort { reply } => match self.turn.as_mut() {
                Some(turn) if turn.is_running() => {
                    for execution in &turn.executions {
                        execution.cancel.cancel();
                    }
                    turn.abort_waiters.push((None, reply));
                }
                _ => {
                    let _ = reply.send(());
                }
            },
            Command::AbortReply { message_id, reply } => {
                let live = |turn: &&mut LiveTurn| {
                    turn.executions.iter().any(|e| e.message_id() == &message_id && !e.is_done())
                };
                match self.turn.as_mut().filter(live) {
                    Some(turn) => {
                        for execution in turn.executions.iter().filter(|e| e.message_id() == &message_id) {
                            execution.cancel.cancel();
                        }
                        turn.abort_waiters.push((Some(message_id), reply));
                    }
                    None => {
                        let _ = reply.send(());
                    }
                }
            }
            Command::Steer { reply } => {
                let running = self.turn.as_ref().filter(|t| t.is_running());
                if let Some(turn) = running {
                    for execution in turn.executions.iter().filter(|e| e.is_running()) {
                        execution.steer.cancel();
                    }
                }
                let _ = reply.send(running.is_some());
            }
            Command::IsStreaming { reply } => {
                let _ = reply.send(self.turn.as_ref().is_some_and(LiveTurn::is_running));
            }
            Command::Forget { message_ids, reply } => {
                let holds = |turn: &LiveTurn| turn.executions.iter().any(|e| message_ids.contains(e.message_id()));
                if self.turn.as_ref().is_some_and(|turn| !turn.is_running() && holds(turn)) {
                    self.turn = None;
                }
                let _ = reply.send(());
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
        let same_turn = self.turn.as_ref().is_some_and(|t| t.id == prepared.turn_id);
        if prepared.user.is_some() || !same_turn {
            if self.turn.as_ref().is_some_and(LiveTurn::is_running) {
                return Err(StreamError::Busy);
            }
        } else if let Some(turn) = &self.turn {
            check_additions(turn, &prepared.executions)?;
        }
        self.admit(&prepared).await?;

        if !same_turn || prepared.user.is_some() {
            let span = tracing::info_span!("turn", topic_id = %self.topic_id, turn_id = %prepared.turn_id);
            self.turn = Some(LiveTurn {
                id: prepared.turn_id.clone(),
                executions: Vec::new(),
                span,
                evict_at: None,
                abort_waiters: Vec::new(),
                streaming_published: false,
                awaiting_approval: false,
            });
        }
        let Some(turn) = self.turn.as_mut() else { return Err(StreamError::ShuttingDown) };
        if !turn.is_running() {
            self.live_turns.fetch_add(1, Ordering::SeqCst);
            self.status.publish(&self.topic_id, TopicStatus::Pending);
            turn.streaming_published = false;
            turn.awaiting_approval = false;
        }
        turn.evict_at = None;
        let turn_span = turn.span.clone();

        // Place each execution: a retried or continued reply takes its old slot (its
        // previous execution is done), anything else goes at the end.
        let mut placed = Vec::with_capacity(prepared.executions.len());
        for prepared_execution in &prepared.executions {
            let mut execution = Execution::new(
                self.topic_id.clone(),
                turn.id.clone(),
                prepared_execution.message_id.clone(),
                prepared_execution.model_ref.clone(),
                self.config.replay_capacity,
            );
            if let ReplySlot::Continue { message, .. } = &prepared_execution.slot {
                execution.message = protocol::MessageAccumulator::resume(message.clone());
            }
            let index = match turn.executions.iter().position(|e| *e.message_id() == prepared_execution.message_id) {
                Some(index) => {
                    turn.executions[index] = execution;
                    index
                }
                None => {
                    turn.executions.push(execution);
                    turn.executions.len() - 1
                }
            };
            placed.push(index);
        }

        // A brand-new turn starts at seq 1 for everyone; otherwise the caller first gets
        // the turn as it stands (including what a continued reply already holds).
        let reply = if prepared.user.is_some() || (!same_turn && placed.iter().all(|i| self.is_empty_execution(*i))) {
            self.add_listener(listener);
            AttachReply { live: true, turn_id: Some(prepared.turn_id.clone()) }
        } else {
            self.attach(listener, &[])
        };

        let turn_id = prepared.turn_id.clone();
        for (prepared_execution, index) in prepared.executions.into_iter().zip(placed) {
            let start = UiChunk::Start {
                message_id: Some(prepared_execution.message_id.to_string()),
                message_metadata: Some(start_metadata(&turn_id, &prepared_execution)),
            };
            self.emit(index, start);
            let Some(execution) = self.turn.as_ref().and_then(|t| t.executions.get(index)) else { continue };
            let part_offset = execution.message.message().parts.len();
            let context = turn::RunContext {
                cancel: execution.cancel.clone(),
                steer: execution.steer.clone(),
                part_offset,
                idle_timeout: prepared_execution.idle_timeout.unwrap_or(self.config.idle_timeout),
            };
            let exec_span = tracing::info_span!(parent: &turn_span, "execution", model = %prepared_execution.model_ref);
            let run = execution::run(index, prepared_execution.runner, context, self.reports_tx.clone());
            self.tracker.spawn(run.instrument(exec_span));
        }
        Ok(reply)
    }

    fn is_empty_execution(&self, index: usize) -> bool {
        self.turn.as_ref().and_then(|t| t.executions.get(index)).is_some_and(|e| e.message.message().parts.is_empty())
    }

    /// Writes the rows the turn needs before anything streams.
    async fn admit(&self, prepared: &PreparedTurn) -> Result<(), StreamError> {
        let slot = |e: &PreparedExecution| AssistantSlot {
            message_id: e.message_id.clone(),
            model: e.model_ref.clone(),
            metadata: start_metadata(&prepared.turn_id, e),
        };
        if let Some(user) = &prepared.user {
            let new_turn = NewTurn {
                topic_id: prepared.topic_id.clone(),
                turn_id: prepared.turn_id.clone(),
                user_message_id: user.message_id.clone(),
                user_parts: user.parts.clone(),
                edit_of: user.edit_of.clone(),
                assistants: prepared.executions.iter().map(slot).collect(),
            };
            self.store.insert_turn(&new_turn).await?;
            return Ok(());
        }
        let new: Vec<AssistantSlot> = prepared
            .executions
            .iter()
            .filter(|e| matches!(e.slot, ReplySlot::New | ReplySlot::Version))
            .map(slot)
            .collect();
        if !new.is_empty() {
            self.store.insert_replies(&prepared.topic_id, &prepared.turn_id, &new).await?;
        }
        for execution in &prepared.executions {
            if let ReplySlot::Continue { seen, .. } = &execution.slot {
                self.store.reopen_reply(&execution.message_id, *seen).await?;
            }
        }
        Ok(())
    }

    fn attach(&mut self, listener: Listener, after: &[ExecutionCursor]) -> AttachReply {
        let reply = match &self.turn {
            Some(turn) => {
                for execution in &turn.executions {
                    if !self.catch_up(&listener, turn, execution, after) {
                        return AttachReply { live: false, turn_id: None };
                    }
                }
                AttachReply { live: true, turn_id: Some(turn.id.clone()) }
            }
            None => AttachReply { live: false, turn_id: None },
        };
        self.add_listener(listener);
        reply
    }

    /// Brings one listener up to date on one execution: the chunks after its cursor when
    /// the ring still has them all (continuous), else a snapshot (rebase); then the
    /// terminal if the execution is done. False if the listener could not keep up.
    fn catch_up(&self, listener: &Listener, turn: &LiveTurn, execution: &Execution, after: &[ExecutionCursor]) -> bool {
        let cursor = after.iter().find(|c| c.execution_id == *execution.id()).map(|c| c.seq);
        // A replay longer than the listener's free buffer would only drop it again: one
        // snapshot is the cheaper catch-up then.
        let replay = cursor.and_then(|seq| execution.replay_after(seq)).filter(|events| events.len() < listener.room());
        let delivered = match replay {
            Some(events) => {
                events.into_iter().all(|event| listener.deliver(StreamMessage::Chunk(event)) == Delivery::Sent)
            }
            None => {
                let header = &execution.header;
                let snapshot = ExecutionSnapshot {
                    topic_id: header.topic_id.clone(),
                    turn_id: header.turn_id.clone(),
                    execution_id: header.execution_id.clone(),
                    model: header.model.clone(),
                    message_id: header.message_id.clone(),
                    seq: execution.seq,
                    message: execution.message.message().clone(),
                };
                listener.deliver(StreamMessage::Snapshot(Box::new(snapshot))) == Delivery::Sent
            }
        };
        if delivered && let Phase::Done(status) = execution.phase {
            return listener.deliver(self.terminal_message(turn, execution, status)) == Delivery::Sent;
        }
        delivered
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
            if !turn.streaming_published {
                turn.streaming_published = true;
                self.status.publish(&self.topic_id, TopicStatus::Streaming);
            }
        }
        // A live reply can wait for the user (an agent session's permission prompt): the
        // topic says so, and says "streaming" again once the reply moves on.
        match &chunk {
            UiChunk::ToolApprovalRequest { .. } if !turn.awaiting_approval => {
                turn.awaiting_approval = true;
                self.status.publish(&self.topic_id, TopicStatus::AwaitingApproval);
            }
            UiChunk::ToolOutputAvailable { .. }
            | UiChunk::ToolOutputError { .. }
            | UiChunk::ToolOutputDenied { .. }
                if turn.awaiting_approval =>
            {
                turn.awaiting_approval = false;
                self.status.publish(&self.topic_id, TopicStatus::Streaming);
            }
            _ => {}
        }
        execution.unsaved_since.get_or_insert_with(Instant::now);
        // One allocation per chunk, shared by the ring and every listener.
        let event = Arc::new(StreamEvent { execution: execution.header.clone(), seq: execution.seq, chunk });
        execution.remember(&event);
        self.broadcast(StreamMessage::Chunk(event));
    }

    fn finish(&mut self, index: usize, outcome: turn::TurnOutcome) {
        let app = if self.shutdown.is_some() { App::ShuttingDown } else { App::Running };
        let (status, reason, terminal_status, chunks) = execution::terminal(&outcome, app);
        for chunk in chunks {
            self.emit(index, chunk);
        }
        let Some(turn) = self.turn.as_mut() else { return };
        let Some(execution) = turn.executions.get_mut(index) else { return };
        execution.message.close_open_parts();
        execution.status = status;
        execution.status_reason = reason;
        execution.phase = Phase::Finishing(terminal_status);
        execution.unsaved_since = None;
        let _span = turn.span.enter();
        tracing::info!(model = %execution.model(), status = status.as_str(), seq = execution.seq, "reply finished");
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
        let stopped = execution.message_id().clone();
        let finished = !turn.is_running();
        if finished {
            self.live_turns.fetch_sub(1, Ordering::SeqCst);
            self.status.publish(&self.topic_id, turn.final_status());
            turn.evict_at = Some(Instant::now() + self.config.grace_period);
        }
        let (done, waiting) = std::mem::take(&mut turn.abort_waiters)
            .into_iter()
            .partition(|(reply, _)| finished || reply.as_ref() == Some(&stopped));
        turn.abort_waiters = waiting;
        for (_, waiter) in done {
            let _ = waiter.send(());
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
        StreamMessage::Terminal(Box::new(ExecutionTerminal {
            topic_id: self.topic_id.clone(),
            turn_id: turn.id.clone(),
            execution_id: execution.id().clone(),
            message_id: execution.message_id().clone(),
            status,
            is_topic_done: !turn.is_running(),
        }))
    }

    /// Hands every running reply with unsaved output to the persister: the one that is
    /// due and any other, so the replies of a multi-model turn share one transaction.
    fn checkpoint(&mut self) {
        let Some(turn) = self.turn.as_mut() else { return };
        for execution in turn.executions.iter_mut().filter(|e| e.is_running()) {
            if execution.unsaved_since.take().is_some() {
                self.persister.checkpoint(execution.checkpoint());
            }
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

/// Rules for adding executions to the live turn.
fn check_additions(turn: &LiveTurn, additions: &[PreparedExecution]) -> Result<(), StreamError> {
    for addition in additions {
        match turn.executions.iter().find(|e| *e.message_id() == addition.message_id) {
            Some(existing) if !existing.is_done() => return Err(StreamError::ReplyRunning),
            Some(_) => {}
            None => {
                let same_model = || turn.executions.iter().filter(|e| *e.model() == addition.model_ref);
                match addition.slot {
                    ReplySlot::New if same_model().next().is_some() => {
                        return Err(StreamError::ModelInTurn(addition.model_ref.clone()));
                    }
                    ReplySlot::Version if same_model().any(|e| !e.is_done()) => {
                        return Err(StreamError::ReplyRunning);
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}
