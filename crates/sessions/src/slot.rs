//! [`Slot`]: one session's state, shared by its host and the turn running in it: the
//! connection and resume token (held by the running turn), the approval decisions it
//! waits for, and the steering messages on their way to a tool boundary.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::driver::{Connection, ConnectionControl, SessionSpec};

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

pub(crate) struct Slot {
    pub(crate) state: tokio::sync::Mutex<State>,
    pub(crate) decisions: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
    pub(crate) steer: Mutex<Steer>,
    pub(crate) modes: Mutex<Modes>,
    /// Bumped by every turn: an idle timer only closes the connection if no turn ran since.
    pub(crate) idle_generation: AtomicU64,
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

/// The agent's modes (ACP): what it offers, and how to switch while a turn holds the
/// connection.
#[derive(Default)]
pub(crate) struct Modes {
    /// The live connection's handle; `None` (or closed) when there is no live connection.
    pub(crate) control: Option<std::sync::Arc<dyn ConnectionControl>>,
    /// The ids of the modes the agent offered when its session last started; `None`
    /// until one has started since the app did.
    pub(crate) offered: Option<Vec<String>>,
    /// Chosen while no connection was live: switched to as soon as the next one starts.
    pub(crate) wanted: Option<String>,
}

#[derive(Default)]
pub(crate) struct Steer {
    /// Waiting for the next tool boundary, oldest first (the inbox's order).
    pub(crate) pending: VecDeque<String>,
    /// Delivered into the runtime's turn, whose next reply goes on with it.
    delivered: Option<String>,
    /// The user interrupted the running turn to send a message now (Interrupt, not a
    /// plain Stop): the stopped reply says so.
    interrupting: bool,
}

impl Slot {
    pub(crate) fn new() -> Self {
        Slot {
            state: tokio::sync::Mutex::new(State::default()),
            decisions: Mutex::new(HashMap::new()),
            steer: Mutex::new(Steer::default()),
            modes: Mutex::new(Modes::default()),
            idle_generation: AtomicU64::new(0),
        }
    }

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

    /// The running turn is being stopped for a message the user sends now.
    pub(crate) fn interrupting(&self) {
        if let Ok(mut steer) = self.steer.lock() {
            steer.interrupting = true;
        }
    }

    /// Whether the turn that just stopped was interrupted for a message (and forgets it).
    pub(crate) fn take_interrupting(&self) -> bool {
        self.steer.lock().map(|mut steer| std::mem::take(&mut steer.interrupting)).unwrap_or(false)
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
