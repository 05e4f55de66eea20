//! The stream manager: the backend owns every live reply.
//!
//! - [`StreamManager`]: registry `topic → TopicActor`; the only entry point.
//! - `actor`: one tokio task per topic with a mailbox; it owns the topic's live turn,
//!   its executions (one per model) and its listeners, and serializes every operation on
//!   the topic.
//! - `execution`: one model's reply: accumulated snapshot, `seq`, cancellation.
//! - [`listener`]: a subscriber (window, SSE response) fed without ever blocking the actor.
//! - `persist`: the single writer task that batches checkpoints and final writes.
//! - `thread`: the one thread all of these tasks run on (fewer wake-ups per chunk).
//!
//! Invariants: a subscriber sees, per execution, a snapshot covering `1..=n` and then
//! chunks `n+1, n+2, …` with no gap and no repeat; closing a subscriber never stops a
//! stream; the final state of a reply is written exactly once, after every checkpoint
//! of it.

mod actor;
mod execution;
pub mod listener;
mod persist;
mod replay;
mod status;
mod thread;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::{AttachReply, ExecutionCursor, MessageId, ModelRef, TopicId, TurnId, UiMessage, UiPart};
use store::{Store, StoreError};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use listener::{Listener, ListenerId, Subscription};
pub use status::{StatusFeed, StatusHub};
pub use thread::StreamThreads;

use actor::{Command, TopicActor};
use persist::Persister;
use thread::Spawner;

/// Tunables; the defaults are what the app uses.
#[derive(Clone, Debug)]
pub struct StreamConfig {
    /// How long a finished turn stays attachable before it is evicted.
    pub grace_period: Duration,
    /// Recent chunks kept per execution for subscribers that reattach with a cursor.
    pub replay_capacity: usize,
    /// The loss bound: a reply's output is committed to disk within this long of
    /// reaching the actor, so a crash (SIGKILL, power loss) costs at most this much.
    pub max_unsaved: Duration,
    /// The part of `max_unsaved` kept for a checkpoint to be queued and committed: a reply
    /// is checkpointed `max_unsaved - write_allowance` after its oldest unsaved chunk,
    /// which is also the least time between two checkpoints of it.
    pub write_allowance: Duration,
    /// A reply silent this long is cut off as `stalled`.
    pub idle_timeout: Duration,
    /// Per-listener buffer; a listener that falls this far behind is dropped.
    pub listener_capacity: usize,
    /// Where the actors, executions and persister run.
    pub threads: StreamThreads,
}

impl StreamConfig {
    /// How long after its oldest unsaved chunk a reply's checkpoint is taken.
    pub(crate) fn checkpoint_delay(&self) -> Duration {
        self.max_unsaved.saturating_sub(self.write_allowance)
    }
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            grace_period: Duration::from_secs(30),
            // Deltas are remembered merged (their bytes plus 4 each): 1,024 covers a reload
            // or a lag of several seconds; a longer gap rebases on a snapshot, exact too.
            replay_capacity: 1024,
            max_unsaved: Duration::from_millis(500),
            // A checkpoint transaction commits in milliseconds; 150 ms covers a busy disk
            // and a writer still finishing another topic's batch.
            write_allowance: Duration::from_millis(150),
            idle_timeout: Duration::from_secs(120),
            listener_capacity: 4096,
            threads: StreamThreads::Own,
        }
    }
}

/// A turn ready to run: the engine has resolved models and built the prompts.
pub struct PreparedTurn {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    /// The user's new message. `None` when the turn already exists and only replies are
    /// (re)started: retry one model, continue a paused reply, or add a model.
    pub user: Option<UserInput>,
    pub executions: Vec<PreparedExecution>,
}

pub struct UserInput {
    pub message_id: MessageId,
    /// The message's text and attachments.
    pub parts: Vec<UiPart>,
    /// The user message this one is a new version of (an edit); `None`: it continues the
    /// topic's active path.
    pub edit_of: Option<MessageId>,
}

/// One model's part of a turn.
pub struct PreparedExecution {
    pub message_id: MessageId,
    pub model_ref: ModelRef,
    pub provider_name: String,
    /// What produces the reply. The actor supplies its idle timeout, part offset and
    /// steer signal.
    pub runner: Runner,
    pub slot: ReplySlot,
    /// How long this reply may stay silent before it is stopped as `stalled`; `None`:
    /// [`StreamConfig::idle_timeout`]. The engine passes the user's setting, read when
    /// the turn starts.
    pub idle_timeout: Option<Duration>,
}

/// What produces one reply's chunks: the agent loop (a chat turn's `agent::TurnRequest`)
/// or an agent session's turn. The actor gives it a `turn::RunContext` and a
/// [`ChunkSender`], and does the rest (numbering, fan-out, persistence, the terminal).
pub type Runner = Box<dyn turn::TurnRunner<ChunkSender>>;

pub use execution::ChunkSender;

/// What the reply's row holds before the execution starts.
#[derive(Clone, Debug)]
pub enum ReplySlot {
    /// A new row in the turn (a new turn, or another model added to one).
    New,
    /// A new row in the turn beside the model's earlier replies: a new version of its
    /// reply (retry), which becomes the active one. Refused while another version of the
    /// same model is still running in the live turn.
    Version,
    /// An existing row whose parts are kept; generation continues after them. `seen` is
    /// the row's revision when the run was prepared: admission is refused if it changed
    /// since.
    Continue { message: UiMessage, seen: u64 },
}

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("a reply is still streaming in this topic; stop it or wait for it to finish")]
    Busy,
    #[error("{0} is already answering in this turn")]
    ModelInTurn(ModelRef),
    #[error("this reply is streaming right now; stop it first")]
    ReplyRunning,
    /// The reply was written between the caller reading it and the turn's admission
    /// (another window retried, continued or answered it first).
    #[error("this reply changed since you asked (another window may have retried or continued it); look at it again")]
    ReplyChanged,
    #[error(transparent)]
    Store(StoreError),
    #[error("the stream manager is shutting down")]
    ShuttingDown,
}

/// What [`StreamManager::send`] does for a topic without a live actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ActorMissing {
    /// Start one (opening a turn).
    Start,
    /// Fail with `ShuttingDown`, which callers read as "nothing is streaming there".
    Fail,
}

impl From<StoreError> for StreamError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Changed { .. } => StreamError::ReplyChanged,
            other => StreamError::Store(other),
        }
    }
}

/// Owns all topic actors. Cheap to clone.
#[derive(Clone)]
pub struct StreamManager {
    inner: Arc<Inner>,
}

struct Inner {
    topics: Mutex<HashMap<TopicId, mpsc::Sender<Command>>>,
    store: Store,
    config: StreamConfig,
    persister: Persister,
    tracker: TaskTracker,
    spawner: Spawner,
    /// Cancelled when the manager is dropped: the stream thread then ends once its
    /// tasks have.
    dropped: CancellationToken,
    shutdown: CancellationToken,
    live_turns: Arc<AtomicUsize>,
    status: StatusHub,
}

impl StreamManager {
    pub fn new(store: Store, config: StreamConfig) -> Self {
        let writer = Arc::new(store.clone());
        Self::with_writer(store, writer, config)
    }

    /// Reply states go to `writer` instead of the store (tests record them).
    fn with_writer(store: Store, writer: Arc<dyn persist::ReplyWriter>, config: StreamConfig) -> Self {
        let tracker = TaskTracker::new();
        let dropped = CancellationToken::new();
        let spawner = Spawner::start(config.threads, tracker.clone(), dropped.clone());
        let persister = Persister::spawn(writer, &spawner);
        Self {
            inner: Arc::new(Inner {
                topics: Mutex::new(HashMap::new()),
                store,
                config,
                persister,
                tracker,
                spawner,
                dropped,
                shutdown: CancellationToken::new(),
                live_turns: Arc::new(AtomicUsize::new(0)),
                status: StatusHub::new(),
            }),
        }
    }

    /// Admits a turn (user row + pending replies, atomically), starts one execution per
    /// model, and subscribes `listener`. Fails with [`StreamError::Busy`] while the topic
    /// has a live turn.
    pub async fn open(&self, turn: PreparedTurn, listener: Listener) -> Result<AttachReply, StreamError> {
        let (reply, rx) = oneshot::channel();
        let topic_id = turn.topic_id.clone();
        self.send(&topic_id, Command::Open { turn: Box::new(turn), listener, reply }, ActorMissing::Start).await?;
        rx.await.map_err(|_| StreamError::ShuttingDown)?
    }

    /// Subscribes `listener` to the topic's live (or recently finished) turn. For each
    /// execution named in `after`, delivery continues right after that `seq` (replayed
    /// from the ring) when possible; every other execution starts with a snapshot. Then
    /// every later chunk. `live: false` when there is no turn.
    pub async fn attach(&self, topic_id: &TopicId, after: Vec<ExecutionCursor>, listener: Listener) -> AttachReply {
        let (reply, rx) = oneshot::channel();
        if self.send(topic_id, Command::Attach { listener, after, reply }, ActorMissing::Fail).await.is_err() {
            return AttachReply { live: false, turn_id: None };
        }
        rx.await.unwrap_or(AttachReply { live: false, turn_id: None })
    }

    /// Stops delivering to one listener. Never stops the stream.
    pub async fn detach(&self, topic_id: &TopicId, listener_id: &ListenerId) {
        let _ = self.send(topic_id, Command::Detach { listener_id: listener_id.clone() }, ActorMissing::Fail).await;
    }

    /// Removes a listener from every topic (its window is gone).
    pub async fn detach_everywhere(&self, listener_id: &ListenerId) {
        let senders: Vec<_> = self.inner.topics.lock().map(|t| t.values().cloned().collect()).unwrap_or_default();
        for tx in senders {
            let _ = tx.send(Command::Detach { listener_id: listener_id.clone() }).await;
        }
    }

    /// Asks the topic's running turn to yield at its next step boundary (a steering
    /// message waits). False when no turn is running.
    pub async fn steer(&self, topic_id: &TopicId) -> bool {
        let (reply, rx) = oneshot::channel();
        if self.send(topic_id, Command::Steer { reply }, ActorMissing::Fail).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    /// Stops the topic's live turn. Resolves once every reply is persisted as paused;
    /// a no-op when nothing is live.
    pub async fn abort(&self, topic_id: &TopicId) {
        let (reply, rx) = oneshot::channel();
        if self.send(topic_id, Command::Abort { reply }, ActorMissing::Fail).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Stops one reply of the topic's live turn (a model column of a multi-model turn);
    /// the others go on. Resolves once it is persisted as paused; a no-op when that reply
    /// is not live.
    pub async fn abort_reply(&self, topic_id: &TopicId, message_id: &MessageId) {
        let (reply, rx) = oneshot::channel();
        let command = Command::AbortReply { message_id: message_id.clone(), reply };
        if self.send(topic_id, command, ActorMissing::Fail).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// How many turns, across all topics, are still producing output.
    pub fn live_turns(&self) -> usize {
        self.inner.live_turns.load(Ordering::SeqCst)
    }

    /// A listener for the topic with this manager's buffer size, and its subscription.
    pub fn listener(&self, id: ListenerId, topic_id: &TopicId) -> (Listener, Subscription) {
        Listener::channel(id, topic_id.clone(), self.inner.config.listener_capacity)
    }

    /// The stream thread's runtime (`None` when tasks run on the caller's runtime).
    pub fn runtime(&self) -> Option<tokio::runtime::Handle> {
        self.inner.spawner.handle().cloned()
    }

    /// The topic-status feed (all topics), and the hub to mark topics seen.
    pub fn status(&self) -> &StatusHub {
        &self.inner.status
    }

    /// Marks each batch of reply states written to the database (checkpoints while a
    /// reply streams, final states), so a caller can await a mid-turn save: subscribe,
    /// read the store, and read it again after each mark. No status change announces
    /// those saves.
    pub fn replies_written(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.persister.written()
    }

    /// Stops the topic's stream and forgets the topic (it is being deleted).
    pub async fn close_topic(&self, topic_id: &TopicId) {
        let tx = self.inner.topics.lock().ok().and_then(|mut topics| topics.remove(topic_id));
        if let Some(tx) = tx {
            let (reply, rx) = oneshot::channel();
            if tx.send(Command::Shutdown { reply }).await.is_ok() {
                let _ = rx.await;
            }
        }
        self.inner.status.forget(topic_id);
    }

    /// The messages were deleted: a finished live turn holding any of them is dropped, so
    /// a window attaching later is not given replies that no longer exist. (A running turn
    /// cannot hold them: the store refuses to delete a reply that is being written.)
    pub async fn forget_messages(&self, topic_id: &TopicId, message_ids: Vec<MessageId>) {
        let (reply, rx) = oneshot::channel();
        if self.send(topic_id, Command::Forget { message_ids, reply }, ActorMissing::Fail).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Whether the topic has a turn that is still producing output.
    pub async fn is_streaming(&self, topic_id: &TopicId) -> bool {
        let (reply, rx) = oneshot::channel();
        if self.send(topic_id, Command::IsStreaming { reply }, ActorMissing::Fail).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    /// Stops every live turn (persisting them as paused/interrupted) and waits for all
    /// tasks, including the persistence writer, to finish.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let senders: Vec<_> =
            self.inner.topics.lock().map(|mut t| t.drain().map(|(_, tx)| tx).collect()).unwrap_or_default();
        for tx in senders {
            let (reply, rx) = oneshot::channel();
            if tx.send(Command::Shutdown { reply }).await.is_ok() {
                let _ = rx.await;
            }
        }
        self.inner.persister.close();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }

    /// Delivers a command to the topic's actor; when the topic has none (or had one that
    /// has since gone idle and exited), `missing` says whether to start one.
    async fn send(&self, topic_id: &TopicId, mut command: Command, missing: ActorMissing) -> Result<(), StreamError> {
        for _ in 0..2 {
            if self.inner.shutdown.is_cancelled() {
                return Err(StreamError::ShuttingDown);
            }
            let tx = {
                let Ok(mut topics) = self.inner.topics.lock() else { return Err(StreamError::ShuttingDown) };
                match topics.get(topic_id) {
                    Some(tx) if !tx.is_closed() => Some(tx.clone()),
                    _ if missing == ActorMissing::Start => {
                        let tx = self.spawn_actor(topic_id.clone());
                        topics.insert(topic_id.clone(), tx.clone());
                        Some(tx)
                    }
                    _ => {
                        topics.remove(topic_id);
                        None
                    }
                }
            };
            let Some(tx) = tx else { return Err(StreamError::ShuttingDown) };
            match tx.send(command).await {
                Ok(()) => return Ok(()),
                // The actor exited between lookup and send: take the command back and retry.
                Err(mpsc::error::SendError(returned)) => command = returned,
            }
        }
        Err(StreamError::ShuttingDown)
    }

    fn spawn_actor(&self, topic_id: TopicId) -> mpsc::Sender<Command> {
        let (tx, rx) = mpsc::channel(64);
        let actor = TopicActor::new(
            topic_id,
            self.inner.store.clone(),
            self.inner.config.clone(),
            self.inner.persister.clone(),
            self.inner.tracker.clone(),
            self.inner.live_turns.clone(),
            self.inner.status.clone(),
        );
        self.inner.spawner.spawn(actor.run(rx));
        tx
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.tracker.close();
        self.dropped.cancel();
    }
}

#[cfg(test)]
mod tests;
