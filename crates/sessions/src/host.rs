//! [`SessionHost`]: everything Colloquy keeps per agent session between and during turns.
//!
//! Per session: the live connection (kept warm between turns, closed after an idle
//! timeout), the latest resume token, steering messages waiting for a tool boundary
//! (and one delivered, whose turn goes on in the next reply), and the channels that
//! carry the user's approval decisions to the turn waiting for them. One turn runs at a
//! time per session: it holds the session's state for its whole run.
//!
//! Messages waiting for the next turn are not kept here: they are the engine's durable
//! inbox, which starts each as a turn of its own. A steering message is in both places
//! until it is settled, exactly once: delivered at a boundary (its inbox turn then
//! continues the runtime's turn instead of sending it again), sent as its own turn, or
//! cancelled.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;
use turn::ToolGate;

use crate::driver::{Connection, Driver, PermissionMode, SessionSpec};
use crate::turn::SessionTurn;

/// The user's answer to a permission prompt, from the approval card.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub approved: bool,
    /// The input to run with (the user may have edited it).
    pub input: Value,
    pub reason: Option<String>,
    /// "Always": the runtime stops asking for this tool in this session.
    pub always: bool,
}

/// Where a session's resume tokens are kept. The turn awaits each save before it reads
/// on, so a token the runtime announced is stored before the turn can end (or the app
/// can be closed) on top of it.
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync {
    /// Stores the newest token; an error is reported and the turn goes on (the reply's
    /// metadata still carries the token).
    async fn save(&self, token: &str) -> Result<(), String>;
}

/// Every session's state. Cheap to clone.
#[derive(Clone)]
pub struct SessionHost {
    pub(crate) inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    pub(crate) driver: Arc<dyn Driver>,
    idle_timeout: Duration,
    sessions: Mutex<HashMap<String, Arc<Slot>>>,
    tracker: TaskTracker,
    /// Ends idle timers at shutdown.
    stop: tokio_util::sync::CancellationToken,
}

pub(crate) struct Slot {
    pub(crate) state: tokio::sync::Mutex<State>,
    decisions: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
    steer: Mutex<Steer>,
    /// Bumped by every turn: an idle timer only closes the connection if no turn ran since.
    idle_generation: AtomicU64,
}

/// What a turn holds while it runs.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) connection: Option<Box<dyn Connection>>,
    /// What the connection was made for; a change (model, folder) means a new one.
    pub(crate) connected_as: Option<SessionSpec>,
    pub(crate) resume_token: Option<String>,
    /// The runtime's turn was split by a delivered steering message and goes on in the
    /// next reply, which must not send that message again.
    pub(crate) continuing: bool,
}

#[derive(Default)]
struct Steer {
    /// Waiting for the next tool boundary, oldest first (the inbox's order).
    pending: VecDeque<String>,
    /// Delivered into the runtime's turn, whose next reply goes on with it.
    delivered: Option<String>,
}

impl SessionHost {
    pub fn new(driver: Arc<dyn Driver>, idle_timeout: Duration) -> Self {
        Self {
            inner: Arc::new(HostInner {
                driver,
                idle_timeout,
                sessions: Mutex::new(HashMap::new()),
                tracker: TaskTracker::new(),
                stop: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    pub fn driver_name(&self) -> &str {
        self.inner.driver.name()
    }

    pub(crate) fn slot(&self, session_id: &str) -> Arc<Slot> {
        let mut sessions = self.inner.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sessions
            .entry(session_id.to_owned())
            .or_insert_with(|| {
                Arc::new(Slot {
                    state: tokio::sync::Mutex::new(State::default()),
                    decisions: Mutex::new(HashMap::new()),
                    steer: Mutex::new(Steer::default()),
                    idle_generation: AtomicU64::new(0),
                })
            })
            .clone()
    }

    /// The runner for one turn: `prompt` goes to the session (`resume_token` is the
    /// stored token, for the first turn after a restart); `gate` decides tool calls;
    /// `tokens` stores each new resume token.
    pub fn turn(
        &self,
        spec: SessionSpec,
        prompt: String,
        resume_token: Option<String>,
        gate: Arc<dyn ToolGate>,
        tokens: Arc<dyn TokenStore>,
    ) -> streams::Runner {
        Box::new(self.session_turn(spec, prompt, resume_token, gate, tokens))
    }

    pub(crate) fn session_turn(
        &self,
        spec: SessionSpec,
        prompt: String,
        resume_token: Option<String>,
        gate: Arc<dyn ToolGate>,
        tokens: Arc<dyn TokenStore>,
    ) -> SessionTurn {
        let slot = self.slot(&spec.session_id);
        SessionTurn { host: self.clone(), slot, spec, prompt, resume_token, gate, tokens }
    }

    /// Hands the user's answer to the turn waiting for it. False when no turn waits
    /// (it was stopped, or the app restarted since).
    pub fn decide(&self, approval_id: &str, decision: Decision) -> bool {
        let sessions: Vec<Arc<Slot>> =
            self.inner.sessions.lock().map(|s| s.values().cloned().collect()).unwrap_or_default();
        for slot in sessions {
            let waiting = slot.decisions.lock().ok().and_then(|mut d| d.remove(approval_id));
            if let Some(waiting) = waiting {
                return waiting.send(decision).is_ok();
            }
        }
        false
    }

    /// A steering message for the session's running turn: it goes in at the next tool
    /// boundary, if one comes; if none does, it stays what it also is, an inbox message
    /// for the next turn.
    pub fn steer(&self, session_id: &str, text: String) {
        if let Ok(mut steer) = self.slot(session_id).steer.lock() {
            steer.pending.push_back(text);
        }
    }

    /// The steering message was cancelled before it went in.
    pub fn forget_steer(&self, session_id: &str, text: &str) {
        self.replace_steer(session_id, text, None);
    }

    /// A steering message still waiting was edited in the inbox: it goes in as `now`, in
    /// its place (`None`: it is no steering message any more). One already delivered or
    /// settled is not touched.
    pub fn replace_steer(&self, session_id: &str, was: &str, now: Option<String>) {
        if let Ok(mut steer) = self.slot(session_id).steer.lock()
            && let Some(at) = steer.pending.iter().position(|p| p == was)
        {
            match now {
                Some(text) => steer.pending[at] = text,
                None => {
                    steer.pending.remove(at);
                }
            }
        }
    }

    /// Forgets the resume token: the next turn starts a fresh runtime session.
    pub async fn reset(&self, session_id: &str) {
        let slot = self.slot(session_id);
        let mut state = slot.state.lock().await;
        if let Some(connection) = state.connection.take() {
            connection.close().await;
        }
        state.resume_token = None;
        state.connected_as = None;
        state.continuing = false;
    }

    /// Changes the permission mode of a live connection (the next connection starts with
    /// it anyway). Waits for a running turn to end first.
    pub async fn set_permission_mode(&self, session_id: &str, mode: PermissionMode) {
        let slot = self.slot(session_id);
        let mut state = slot.state.lock().await;
        let State { connection, connected_as, .. } = &mut *state;
        if let (Some(connection), Some(spec)) = (connection.as_mut(), connected_as.as_mut())
            && connection.set_permission_mode(mode).await.is_ok()
        {
            spec.permission_mode = mode;
        }
    }

    /// Stops what the session's runtime is doing when no reply is running: a turn split
    /// by a steering message whose continuation never started.
    pub async fn stop(&self, session_id: &str) {
        let slot = self.slot(session_id);
        let Ok(mut state) = slot.state.try_lock() else { return };
        if state.continuing {
            state.continuing = false;
            if let Some(connection) = state.connection.take() {
                connection.close().await;
            }
            state.connected_as = None;
        }
        // The inbox holds its messages after a stop; none of them is for a later turn's
        // boundary.
        slot.end_turn();
    }

    /// Ends the session's connection (it is being deleted).
    pub async fn close(&self, session_id: &str) {
        let slot = self.inner.sessions.lock().ok().and_then(|mut s| s.remove(session_id));
        if let Some(slot) = slot {
            let mut state = slot.state.lock().await;
            if let Some(connection) = state.connection.take() {
                connection.close().await;
            }
        }
    }

    /// Ends every connection.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        let slots: Vec<Arc<Slot>> =
            self.inner.sessions.lock().map(|mut s| s.drain().map(|(_, slot)| slot).collect()).unwrap_or_default();
        for slot in slots {
            // A turn still running was stopped by the stream manager; wait briefly for it.
            if let Ok(mut state) = tokio::time::timeout(Duration::from_secs(5), slot.state.lock()).await
                && let Some(connection) = state.connection.take()
            {
                connection.close().await;
            }
        }
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }

    /// After a turn: close the connection once it has been idle for the idle timeout.
    pub(crate) fn schedule_idle_close(&self, slot: &Arc<Slot>) {
        let generation = slot.idle_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let slot = slot.clone();
        let idle = self.inner.idle_timeout;
        let stop = self.inner.stop.clone();
        self.inner.tracker.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(idle) => {}
            }
            if slot.idle_generation.load(Ordering::SeqCst) != generation {
                return;
            }
            let Ok(mut state) = slot.state.try_lock() else { return };
            if state.continuing {
                return;
            }
            if let Some(connection) = state.connection.take() {
                tracing::info!("closing an idle agent session connection");
                connection.close().await;
            }
            state.connected_as = None;
        });
    }
}

impl Slot {
    pub(crate) fn touch(&self) {
        self.idle_generation.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn wait_for_decision(&self, approval_id: &str) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut decisions) = self.decisions.lock() {
            decisions.insert(approval_id.to_owned(), tx);
        }
        rx
    }

    pub(crate) fn stop_waiting(&self, approval_id: &str) {
        if let Ok(mut decisions) = self.decisions.lock() {
            decisions.remove(approval_id);
        }
    }

    /// A turn starts with `prompt`: whether it is the steering message already inside
    /// the runtime's turn (so this reply goes on with that turn instead of sending it).
    /// Either way the prompt is settled: a steering message with its text no longer
    /// waits for a boundary, and a delivered one that is not this prompt is given up.
    pub(crate) fn begin_turn(&self, prompt: &str) -> bool {
        let Ok(mut steer) = self.steer.lock() else { return false };
        if let Some(at) = steer.pending.iter().position(|p| p == prompt) {
            steer.pending.remove(at);
        }
        steer.delivered.take().is_some_and(|delivered| delivered == prompt)
    }

    /// At a tool boundary of the turn that started with `prompt`: the oldest steering
    /// message waiting, now delivered. The turn's own prompt is never steered into it (a
    /// steering message can reach the host just after the inbox started it as a turn).
    pub(crate) fn deliver_steer(&self, prompt: &str) -> Option<String> {
        let mut steer = self.steer.lock().ok()?;
        while let Some(text) = steer.pending.pop_front() {
            if text != prompt {
                steer.delivered = Some(text.clone());
                return Some(text);
            }
        }
        None
    }

    /// The turn ended for good (not split by a steering message): what still waits, or
    /// was delivered but never acted on, runs as its own turn from the inbox, so it is
    /// forgotten here. True when there was such a message.
    pub(crate) fn end_turn(&self) -> bool {
        let Ok(mut steer) = self.steer.lock() else { return false };
        let left = !steer.pending.is_empty() || steer.delivered.is_some();
        steer.pending.clear();
        steer.delivered = None;
        left
    }
}
