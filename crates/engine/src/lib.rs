//! The engine: everything a user can do, as one Rust API.
//!
//! It composes the store, the providers, the agent loop and the stream manager, and is
//! the only thing `src-tauri` and `crates/server` talk to. Both serve the same
//! operations: plain ones through [`Engine::call`] (name + JSON request → JSON response),
//! streaming ones through [`Engine::stream_open`] / [`Engine::stream_attach`] with a
//! [`Listener`] the transport drains.
//!
//! - `operations`: the plain operations and their request validation.
//! - `turns`: preparing a turn (model resolution, prompt) for the stream manager.
//! - `demo`: the local scripted demo provider.
//! - `settings`: app-wide settings (the stream idle timeout), read when a turn starts.
//! - [`telemetry`]: tracing setup, with OTLP export when configured.

mod approvals;
mod assistants;
mod capabilities;
mod data_folder;
mod demo;
mod error;
mod images;
mod inbox;
pub mod instance;
mod limits;
mod mcp;
mod operations;
mod sessions;
mod settings;
pub mod telemetry;
mod tools;
mod turns;

use std::path::PathBuf;
use std::sync::Arc;

use protocol::api::{AddModelRequest, AppInfo, ReplyRequest, StreamOpenRequest};
use protocol::{ApiError, AttachReply, ExecutionCursor, TopicId};
use store::Store;
use store::secrets::SecretStore;
use streams::{StreamConfig, StreamManager};

pub use error::{DATABASE_DAMAGED, DATABASE_NEWER, store_error};
pub use operations::OPERATIONS;
pub use streams::{Listener, ListenerId, StatusFeed, Subscription};
pub use turns::{MAX_ATTACHMENT_BYTES, MAX_TOTAL_ATTACHMENT_BYTES};

/// Where the engine keeps its data and how it presents itself.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// `desktop` or `server`, reported to the UI.
    pub mode: String,
    pub streams: StreamConfig,
    /// Delay between tokens of the demo provider.
    pub demo_token_delay: std::time::Duration,
    /// How refused provider requests are retried (before the first byte only).
    pub retry: providers::RetryPolicy,
    /// Where the Claude Code CLI is, and what it runs with.
    pub claude: ::sessions::ClaudeCodeConfig,
    /// An agent session's connection closes after this long without a turn.
    pub agent_idle_timeout: std::time::Duration,
}

impl EngineConfig {
    pub fn new(data_dir: PathBuf, mode: &str) -> Self {
        Self {
            data_dir,
            mode: mode.to_owned(),
            streams: StreamConfig::default(),
            demo_token_delay: std::time::Duration::from_millis(25),
            retry: providers::RetryPolicy::default(),
            claude: ::sessions::ClaudeCodeConfig::default(),
            agent_idle_timeout: std::time::Duration::from_secs(300),
        }
    }

    /// Applies `COLLOQUY_GRACE_SECONDS` (how long a finished reply stays attachable),
    /// `COLLOQUY_IDLE_TIMEOUT_SECONDS` (the default of how long a silent reply may wait
    /// before it is stopped as stalled; a value chosen in Settings wins over it),
    /// `COLLOQUY_AGENT_IDLE_SECONDS` (how long an agent session's
    /// connection stays open between turns) and `COLLOQUY_CLAUDE_PATH` (the Claude Code
    /// CLI). A number that is not a whole number of seconds is reported and ignored.
    pub fn with_env_overrides(mut self) -> Self {
        if let Some(secs) = env_seconds("COLLOQUY_GRACE_SECONDS") {
            self.streams.grace_period = secs;
        }
        if let Some(secs) = env_seconds("COLLOQUY_IDLE_TIMEOUT_SECONDS") {
            self.streams.idle_timeout = secs;
        }
        if let Some(secs) = env_seconds("COLLOQUY_AGENT_IDLE_SECONDS") {
            self.agent_idle_timeout = secs;
        }
        if let Some(path) = std::env::var_os("COLLOQUY_CLAUDE_PATH").filter(|p| !p.is_empty()) {
            self.claude.program = PathBuf::from(path);
        }
        self
    }
}

/// The topic status a finished turn leaves, from its replies' stored statuses.
pub(crate) fn settled_status(statuses: &[protocol::MessageStatus]) -> protocol::TopicStatus {
    use protocol::{MessageStatus, TopicStatus};
    if statuses.contains(&MessageStatus::Success) {
        TopicStatus::Done
    } else if statuses.contains(&MessageStatus::Error) {
        TopicStatus::Error
    } else {
        TopicStatus::Aborted
    }
}

fn env_seconds(name: &str) -> Option<std::time::Duration> {
    let value = std::env::var(name).ok()?;
    match value.trim().parse::<u64>() {
        Ok(secs) => Some(std::time::Duration::from_secs(secs)),
        Err(_) => {
            tracing::warn!(name, value, "not a whole number of seconds; using the default");
            None
        }
    }
}

/// The user-facing operations. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    config: EngineConfig,
    store: Store,
    secrets: Arc<dyn SecretStore>,
    streams: StreamManager,
    /// For tools and MCP servers.
    http: reqwest::Client,
    /// For model providers: never follows a redirect to another origin (the API key
    /// would go along).
    provider_http: providers::ProviderHttp,
    demo: demo::DemoProvider,
    /// MCP servers, kept connected; their tools come from its cache.
    mcp: ::tools::mcp::McpHub,
    /// Agent sessions' connections, resume tokens, steering and approval waits.
    sessions: ::sessions::SessionHost,
    /// Replies being resumed after their last approval was answered (see
    /// `approvals::ResumeClaim`): two answers that land together resume a reply once.
    resuming: approvals::Resuming,
    /// The engine's own background tasks (the inbox dispatcher).
    tasks: tokio_util::task::TaskTracker,
    stop: tokio_util::sync::CancellationToken,
    /// This process's hold on the data folder, let go at shutdown.
    lock: std::sync::Mutex<Option<instance::DataFolderLock>>,
}

impl Engine {
    /// Takes the data folder for this process ([`instance::claim`]; another process
    /// holding it is an error naming it), then opens it as [`Engine::open_claimed`] does.
    pub async fn open(config: EngineConfig) -> Result<Self, ApiError> {
        let lock = instance::claim(&config.data_dir, &config.mode).map_err(|e| ApiError::internal(e.to_string()))?;
        Self::open_claimed(config, lock).await
    }

    /// Opens the database of a data folder this process holds (running migrations),
    /// recovers replies a crash left behind, and restarts the demo provider if one is
    /// configured.
    pub async fn open_claimed(config: EngineConfig, lock: instance::DataFolderLock) -> Result<Self, ApiError> {
        let store = Store::open(&database_path(&config.data_dir)).await.map_err(store_error)?;
        let recovered = store.recover_interrupted().await.map_err(store_error)?;
        if recovered > 0 {
            tracing::info!(recovered, "marked replies left unfinished by the last run as interrupted");
        }
        let cut_off = store.recover_running_calls().await.map_err(store_error)?;
        if cut_off > 0 {
            tracing::warn!(cut_off, "tool calls were running when the last run ended; they are not run again");
        }
        // An agent's question waits again for its answer (first: the step below settles
        // every question whose reply does not wait).
        sessions::keep_orphaned_approvals(&store).await?;
        let repaired = store.recover_approvals(approvals::ORPHANED_BY_A_CRASH).await.map_err(store_error)?;
        if repaired.settled > 0 {
            tracing::warn!(
                settled = repaired.settled,
                "approvals were pending for replies the last run left interrupted; they are denied"
            );
        }
        if repaired.made_continuable > 0 {
            tracing::warn!(
                replies = repaired.made_continuable,
                "replies whose approvals were all answered had not resumed when the last run ended; \
                 they are interrupted and can be continued"
            );
        }
        let secrets: Arc<dyn SecretStore> = Arc::from(store::secrets::open(&config.data_dir));
        tracing::info!(store = %secrets.describe(), "API keys and MCP server secrets are kept in");
        let streams = StreamManager::new(store.clone(), config.streams.clone());
        // A turn that finished while the user looked elsewhere stays unseen across restarts.
        let unseen = store.unseen_topics().await.map_err(store_error)?;
        for (topic_id, statuses) in store.latest_turn_statuses().await.map_err(store_error)? {
            let was_unseen = unseen.contains(&topic_id);
            streams.status().restore(&topic_id, settled_status(&statuses), was_unseen);
        }
        // Replies still waiting for approval wait across restarts, and say so.
        for approval in store.list_approvals(None, true).await.map_err(store_error)? {
            streams.status().seed(&approval.topic_id, protocol::TopicStatus::AwaitingApproval);
        }
        let client = || {
            reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(15))
                .user_agent(concat!("Colloquy/", env!("CARGO_PKG_VERSION")))
        };
        let cannot_start = |e: reqwest::Error| ApiError::internal(format!("cannot start the HTTP client: {e}"));
        let http = client().build().map_err(cannot_start)?;
        let provider_http = providers::ProviderHttp::from_builder(client()).map_err(cannot_start)?;
        // MCP servers get their configured headers on every request: no cross-origin redirect.
        let mcp_http = ::tools::mcp::McpHttp::from_builder(client()).map_err(cannot_start)?;
        let held = store.hold_inbox(None, inbox::HELD_AFTER_RESTART).await.map_err(store_error)?;
        if held > 0 {
            tracing::info!(held, "queued messages from the last run are held until released");
        }
        let mcp = ::tools::mcp::McpHub::new(mcp::hub_options(&config.data_dir, &store, mcp_http));
        mcp::load(&store, secrets.as_ref(), &mcp).await?;
        // Claude Code's process groups are recorded with the MCP servers' (reaped above, in
        // `McpHub::new`, before any session can start one).
        let driver = Arc::new(::sessions::ClaudeCode::new(config.claude.clone()).with_processes(mcp.processes()));
        let sessions = ::sessions::SessionHost::new(driver, config.agent_idle_timeout);
        let demo = demo::DemoProvider::new(config.demo_token_delay);
        let tasks = tokio_util::task::TaskTracker::new();
        let stop = tokio_util::sync::CancellationToken::new();
        let engine = Self {
            inner: Arc::new(Inner {
                config,
                store,
                secrets,
                streams,
                http,
                provider_http,
                demo,
                mcp,
                sessions,
                resuming: approvals::Resuming::default(),
                tasks,
                stop,
                lock: std::sync::Mutex::new(Some(lock)),
            }),
        };
        engine.restart_demo().await?;
        engine.inner.tasks.spawn(engine.clone().run_dispatcher(engine.inner.stop.clone()));
        Ok(engine)
    }

    pub fn info(&self) -> AppInfo {
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            mode: self.inner.config.mode.clone(),
            data_dir: self.inner.config.data_dir.display().to_string(),
            secret_store: self.inner.secrets.describe(),
        }
    }

    /// A subscription to one topic, for the streaming operations below.
    pub fn listener(&self, id: ListenerId, topic_id: &TopicId) -> (Listener, Subscription) {
        self.inner.streams.listener(id, topic_id)
    }

    /// Starts a turn in the topic (one reply per model) and subscribes `listener` to it.
    pub async fn stream_open(&self, request: StreamOpenRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let turn = self.prepare_turn(request).await?;
        self.inner.streams.open(turn, listener).await.map_err(error::stream_error)
    }

    /// Generates one reply again, in place, and subscribes `listener` to the turn.
    pub async fn stream_retry(&self, request: ReplyRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let turn = self.prepare_reply(request, turns::Continuation::None).await?;
        self.inner.streams.open(turn, listener).await.map_err(error::stream_error)
    }

    /// Continues a stopped or interrupted reply after the text it kept.
    pub async fn stream_continue(&self, request: ReplyRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let turn = self.prepare_reply(request, turns::Continuation::Continue).await?;
        self.inner.streams.open(turn, listener).await.map_err(error::stream_error)
    }

    /// Asks one more model to answer an existing turn (it joins a live turn too).
    pub async fn stream_add_model(
        &self,
        request: AddModelRequest,
        listener: Listener,
    ) -> Result<AttachReply, ApiError> {
        let turn = self.prepare_added_model(request).await?;
        self.inner.streams.open(turn, listener).await.map_err(error::stream_error)
    }

    /// Subscribes `listener` to the topic's live reply, if any, continuing after the
    /// given cursors where possible.
    pub async fn stream_attach(
        &self,
        topic_id: &TopicId,
        after: Vec<ExecutionCursor>,
        listener: Listener,
    ) -> Result<AttachReply, ApiError> {
        self.inner.store.get_topic(topic_id).await.map_err(store_error)?;
        Ok(self.inner.streams.attach(topic_id, after, listener).await)
    }

    /// Every topic's status, then each change (for the topic list in every window).
    pub fn status_subscribe(&self) -> StatusFeed {
        self.inner.streams.status().subscribe()
    }

    /// Stops delivery to one listener; the stream goes on.
    pub async fn stream_detach(&self, topic_id: &TopicId, listener_id: &ListenerId) {
        self.inner.streams.detach(topic_id, listener_id).await;
    }

    /// Stops delivery to a listener on every topic (its window closed).
    pub async fn detach_everywhere(&self, listener_id: &ListenerId) {
        self.inner.streams.detach_everywhere(listener_id).await;
    }

    /// Stops the topic's live reply; resolves once it is persisted as paused. A reply
    /// waiting for approvals is stopped too: its open calls are denied.
    pub async fn stream_abort(&self, topic_id: &TopicId) -> Result<(), ApiError> {
        self.inner.store.get_topic(topic_id).await.map_err(store_error)?;
        self.inner.streams.abort(topic_id).await;
        self.stop_waiting_replies(topic_id).await?;
        if sessions::is_session(topic_id) {
            let session = self.inner.store.session_of_topic(topic_id).await.map_err(store_error)?;
            self.inner.sessions.stop(&session.id).await;
        }
        Ok(())
    }

    /// How many replies are still streaming, across all topics. The desktop app stays
    /// alive while this is not zero, even with no window open.
    pub fn live_turns(&self) -> usize {
        self.inner.streams.live_turns()
    }

    /// Stops live replies (persisting them) and the demo server.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        self.inner.streams.shutdown().await;
        self.inner.sessions.shutdown().await;
        self.inner.mcp.shutdown().await;
        self.inner.demo.stop().await;
        self.inner.store.close().await;
        // The database is closed: another process may take the folder now.
        if let Ok(mut lock) = self.inner.lock.lock() {
            lock.take();
        }
    }
}

#[cfg(test)]
mod tests;

/// The database file in a data folder.
pub fn database_path(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("colloquy.db")
}

/// Moves a database that [`Engine::open`] refused (`code` [`DATABASE_DAMAGED`] or
/// [`DATABASE_NEWER`]) out of the way, keeping it next to where it was, so the next open
/// starts fresh. Returns where it is now. Call it only while no engine has the folder
/// open.
pub fn move_database_aside(data_dir: &std::path::Path) -> Result<PathBuf, ApiError> {
    let path = database_path(data_dir);
    store::move_aside(&path).map_err(|e| ApiError::internal(format!("cannot move {} aside: {e}", path.display())))
}

/// The data folder when none is given: `COLLOQUY_DATA_DIR`, else the platform's user data
/// folder for the app (the same one the desktop app uses).
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("COLLOQUY_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    const APP_ID: &str = "dev.colloquy.app";
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    if cfg!(target_os = "macos") {
        return home.join("Library/Application Support").join(APP_ID);
    }
    if let Some(dir) = std::env::var_os("APPDATA").filter(|_| cfg!(windows)) {
        return PathBuf::from(dir).join(APP_ID);
    }
    match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(APP_ID),
        None => home.join(".local/share").join(APP_ID),
    }
}
