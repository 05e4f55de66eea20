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

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::task::TaskTracker;
use turn::ToolGate;

use crate::driver::{Driver, DriverError, PermissionMode, PromptCapabilities, PromptFile, SessionSpec};
use crate::slot::{Decision, Slot, State};
use crate::turn::{SessionTurn, TokenStore, TurnHost};

/// How a change of the agent's mode went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeSwitch {
    /// The agent switched (its reply, or the next one, shows the new mode).
    Now,
    /// No connection is live: the agent switches as soon as its next one starts.
    AtNextStart,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetModeError {
    /// The agent did not offer that mode when its session started.
    #[error("{}", not_offered(mode, offered))]
    NotOffered { mode: String, offered: Vec<String> },
    /// The agent refused the change, or did not answer.
    #[error("{0}")]
    Refused(String),
}

fn not_offered(mode: &str, offered: &[String]) -> String {
    if offered.is_empty() {
        format!("the agent offers no modes, so it cannot switch to `{mode}`")
    } else {
        format!("the agent offers no mode `{mode}` (it offers: {})", offered.join(", "))
    }
}

/// Every session's state. Cheap to clone.
#[derive(Clone)]
pub struct SessionHost {
    inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    driver: Arc<dyn Driver>,
    idle_timeout: Duration,
    sessions: Mutex<HashMap<String, Arc<Slot>>>,
    tracker: TaskTracker,
    /// Ends idle timers at shutdown.
    stop: tokio_util::sync::CancellationToken,
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
        sessions.entry(session_id.to_owned()).or_insert_with(|| Arc::new(Slot::new())).clone()
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

    /// [`SessionHost::turn`] run by `driver` instead of the host's own (a session of an
    /// ACP agent: each agent is a driver of its own).
    pub fn turn_with(
        &self,
        driver: Arc<dyn Driver>,
        spec: SessionSpec,
        prompt: String,
        resume_token: Option<String>,
        gate: Arc<dyn ToolGate>,
        tokens: Arc<dyn TokenStore>,
    ) -> streams::Runner {
        self.turn_with_files(driver, spec, prompt, Vec::new(), resume_token, gate, tokens)
    }

    /// [`SessionHost::turn_with`] with files sent beside the prompt (checked with
    /// [`SessionHost::prompt_capabilities`] first).
    #[allow(clippy::too_many_arguments)]
    pub fn turn_with_files(
        &self,
        driver: Arc<dyn Driver>,
        spec: SessionSpec,
        prompt: String,
        files: Vec<PromptFile>,
        resume_token: Option<String>,
        gate: Arc<dyn ToolGate>,
        tokens: Arc<dyn TokenStore>,
    ) -> streams::Runner {
        let mut turn = self.session_turn(spec, prompt, resume_token, gate, tokens);
        turn.driver = driver;
        turn.files = files;
        Box::new(turn)
    }

    /// What the session's runtime takes in a prompt besides text (`None`: text only),
    /// starting it (as a turn would, resuming `resume_token`) when no connection is live;
    /// the next turn goes on on that connection. `Failed` while a turn runs.
    pub async fn prompt_capabilities(
        &self,
        driver: Arc<dyn Driver>,
        spec: &SessionSpec,
        resume_token: Option<&str>,
    ) -> Result<Option<PromptCapabilities>, DriverError> {
        let slot = self.slot(&spec.session_id);
        let Ok(mut state) = slot.state.try_lock() else {
            return Err(DriverError::Failed(format!("{} is busy with a turn", driver.name())));
        };
        slot.touch();
        crate::turn::connect(&mut state, &slot, driver.as_ref(), spec, resume_token).await?;
        let capabilities = state.connection.as_ref().and_then(|c| c.prompt_capabilities());
        drop(state);
        // Closed again after the idle time if no turn comes.
        crate::turn::TurnHost::turn_ended(self, &slot);
        Ok(capabilities)
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
        let driver = self.inner.driver.clone();
        SessionTurn {
            host: Arc::new(self.clone()),
            driver,
            slot,
            spec,
            prompt,
            files: Vec::new(),
            resume_token,
            gate,
            tokens,
        }
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

    /// Interrupt: the session's running turn is about to be stopped so that the user's
    /// message goes now; the stopped reply is marked `data-steer` `interrupted` rather than
    /// plainly stopped. Call it before stopping the turn.
    pub fn interrupting(&self, session_id: &str) {
        self.slot(session_id).interrupting();
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

    /// Switches the agent of the session to `mode` (an ACP agent's own modes): at once on
    /// a live connection, mid-turn too; else as soon as its next connection starts. A mode
    /// the agent did not offer when its session last started is refused.
    pub async fn set_agent_mode(&self, session_id: &str, mode: &str) -> Result<ModeSwitch, SetModeError> {
        let slot = self.slot(session_id);
        let control = {
            let mut modes = slot.modes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(offered) = &modes.offered
                && !offered.iter().any(|m| m == mode)
            {
                return Err(SetModeError::NotOffered { mode: mode.to_owned(), offered: offered.clone() });
            }
            match modes.control.clone().filter(|control| !control.is_closed()) {
                Some(control) => {
                    modes.wanted = None;
                    control
                }
                None => {
                    modes.wanted = Some(mode.to_owned());
                    return Ok(ModeSwitch::AtNextStart);
                }
            }
        };
        control.set_mode(mode).await.map_err(|e| SetModeError::Refused(e.to_string()))?;
        Ok(ModeSwitch::Now)
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
        // An interrupt that found no turn to stop marks nothing later.
        slot.take_interrupting();
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
}

impl TurnHost for SessionHost {
    /// After a turn: close the connection once it has been idle for the idle timeout.
    fn turn_ended(&self, slot: &Arc<Slot>) {
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
