//! The engine: everything a user can do, as one Rust API.
//!
//! It composes the store, the providers, the agent loop and the stream manager, and is
//! the only thing `src-tauri` and `crates/server` talk to. Both serve the same
//! operations: plain ones through [`Operations::call`] (name + JSON request → JSON response),
//! streaming ones through [`Engine::stream_open`] / [`Engine::stream_attach`] with a
//! [`Listener`] the transport drains.
//!
//! [`Engine`] is a façade over services that each hold only what they use:
//!
//! - `dispatch`: `impl Operations for Engine`, one method per operation of the table in
//!   `protocol::operations`, handing its typed request to the services below.
//! - `settings`, `model_providers` (with `demo`, the local scripted demo provider),
//!   `topics`, `mcp`, `tools`, `assistants`: what settings and the topic list change.
//! - `sessions` (agent sessions), `turns` (preparing a turn: model resolution, prompt,
//!   tools, for the stream manager), `approvals`, `inbox` (queue, steer, dispatcher).
//! - `archive`: export (Markdown, JSON, HTML), import (ours, ChatGPT, Claude.ai), backup.
//! - `config`: [`EngineConfig`], with the environment's overrides.
//! - [`telemetry`]: tracing setup, with OTLP export when configured.

mod acp_agents;
mod approvals;
mod archive;
mod assistants;
mod attachments;
mod branches;
mod capabilities;
mod config;
mod data_folder;
mod demo;
mod dispatch;
mod error;
mod images;
mod inbox;
pub mod instance;
mod limits;
mod mcp;
mod model_params;
mod model_providers;
mod resources;
mod resuming;
mod sessions;
mod settings;
pub mod telemetry;
pub mod tls;
mod tools;
mod topics;
mod turns;
mod usage;

use std::path::PathBuf;
use std::sync::Arc;

use protocol::api::{AddModelRequest, AppInfo, EditMessageRequest, ReplyRequest, StreamOpenRequest};
use protocol::{ApiError, AttachReply, ExecutionCursor, TopicId};
use store::Store;
use store::secrets::SecretStore;
use streams::StreamManager;

pub use attachments::{MAX_ATTACHMENT_BYTES, MAX_TOTAL_ATTACHMENT_BYTES};
pub use config::EngineConfig;
pub use protocol::{OPERATIONS, Operations};
pub use store::{DATABASE_DAMAGED, DATABASE_NEWER};
pub use streams::{Listener, ListenerId, StatusFeed, StreamConfig, Subscription};

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

/// The user-facing operations. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

/// The services, each holding only what it uses; the façade hands each operation to the
/// one that owns it.
struct Inner {
    config: EngineConfig,
    store: Store,
    secrets: Arc<dyn SecretStore>,
    streams: StreamManager,
    settings: Arc<settings::Settings>,
    providers: Arc<model_providers::Providers>,
    topics: topics::Topics,
    branches: branches::Branches,
    mcp: mcp::Mcp,
    tools: Arc<tools::Tools>,
    assistants: assistants::Assistants,
    sessions: Arc<sessions::AgentSessions>,
    acp_agents: Arc<acp_agents::AcpAgents>,
    turns: Arc<turns::Turns>,
    approvals: approvals::Approvals,
    archive: archive::Archive,
    inbox: Arc<inbox::Inbox>,
    usage: usage::Usage,
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
        if let Some(kept) = archive::apply_pending_restore(&config.data_dir)? {
            tracing::info!(kept = %kept.display(), "the database before the restore is kept");
        }
        let store = Store::open(&database_path(&config.data_dir)).await?;
        let recovered = store.recover_interrupted().await?;
        if recovered > 0 {
            tracing::info!(recovered, "marked replies left unfinished by the last run as interrupted");
        }
        let cut_off = store.recover_running_calls().await?;
        if cut_off > 0 {
            tracing::warn!(cut_off, "tool calls were running when the last run ended; they are not run again");
        }
        // An agent's question waits again for its answer (first: the step below settles
        // every question whose reply does not wait).
        sessions::keep_orphaned_approvals(&store).await?;
        let repaired = store.recover_approvals(approvals::ORPHANED_BY_A_CRASH).await?;
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
        // Every window hears of each stored change to the topic and session lists.
        let status = streams.status().clone();
        store.watch_lists(move |list| status.list_changed(list));
        // A turn that finished while the user looked elsewhere stays unseen across restarts.
        let unseen = store.unseen_topics().await?;
        for (topic_id, statuses) in store.latest_turn_statuses().await? {
            let was_unseen = unseen.contains(&topic_id);
            streams.status().restore(&topic_id, settled_status(&statuses), was_unseen);
        }
        // Replies still waiting for approval wait across restarts, and say so.
        for approval in store.list_approvals(None, true).await? {
            streams.status().seed(&approval.topic_id, protocol::TopicStatus::AwaitingApproval);
        }
        // One TLS setup for the four clients (see `tls`).
        let tls = tls::shared().await.map_err(ApiError::internal)?;
        let client = || {
            reqwest::Client::builder()
                .tls_backend_preconfigured(tls.clone())
                .connect_timeout(std::time::Duration::from_secs(15))
                .user_agent(concat!("Colloquy/", env!("CARGO_PKG_VERSION")))
        };
        let cannot_start = |e: reqwest::Error| ApiError::internal(format!("cannot start the HTTP client: {e}"));
        let http = client().build().map_err(cannot_start)?;
        let provider_http = providers::ProviderHttp::from_builder(client())
            .and_then(|http| http.with_stream_pool(client()))
            .map_err(cannot_start)?;
        // MCP servers get their configured headers on every request: no cross-origin redirect.
        let mcp_http = ::tools::mcp::McpHttp::from_builder(client()).map_err(cannot_start)?;
        let held = store.hold_inbox(None, inbox::HELD_AFTER_RESTART).await?;
        if held > 0 {
            tracing::info!(held, "queued messages from the last run are held until released");
        }
        let hub = ::tools::mcp::McpHub::new(mcp::hub_options(&config.data_dir, &store, mcp_http));
        // Roots first: a server asks for them as soon as its handshake is done.
        mcp::offer_roots(&store, &hub).await?;
        mcp::load(&store, secrets.as_ref(), &hub).await?;
        // Claude Code's process groups are recorded with the MCP servers' (reaped above, in
        // `McpHub::new`, before any session can start one).
        let processes = hub.processes();
        let driver = Arc::new(::sessions::ClaudeCode::new(config.claude.clone()).with_processes(processes.clone()));
        let host = ::sessions::SessionHost::new(driver, config.agent_idle_timeout);
        let demo = demo::DemoProvider::new(config.demo_token_delay);
        let tasks = tokio_util::task::TaskTracker::new();
        let stop = tokio_util::sync::CancellationToken::new();
        // Two answers that land together resume a reply once, whichever service resumes it.
        let resuming = Arc::new(resuming::Resuming::default());
        let settings = Arc::new(settings::Settings::new(store.clone(), config.streams.idle_timeout));
        let providers = Arc::new(model_providers::Providers::new(store.clone(), secrets.clone(), provider_http, demo));
        let topics = topics::Topics::new(store.clone(), providers.clone());
        let branches = branches::Branches::new(store.clone(), streams.clone());
        let tools = Arc::new(tools::Tools::new(store.clone(), hub.clone()));
        let assistants = assistants::Assistants::new(store.clone(), providers.clone(), tools.clone());
        let questions = Arc::new(::tools::asks::OpenQuestions::default());
        let mcp = mcp::Mcp::new(store.clone(), secrets.clone(), hub, questions.clone());
        let acp_agents = Arc::new(acp_agents::AcpAgents::new(store.clone(), secrets.clone()));
        let sessions = Arc::new(sessions::AgentSessions::new(
            store.clone(),
            streams.clone(),
            host.clone(),
            providers.clone(),
            tasks.clone(),
            resuming.clone(),
            sessions::AcpSupport { agents: acp_agents.clone(), processes, secrets: secrets.clone() },
        ));
        let turns = Arc::new(turns::Turns::new(
            store.clone(),
            streams.clone(),
            http,
            config.retry,
            providers.clone(),
            tools.clone(),
            settings.clone(),
            sessions.clone(),
            questions,
        ));
        let approvals = approvals::Approvals::new(
            store.clone(),
            streams.clone(),
            tools.clone(),
            turns.clone(),
            sessions.clone(),
            resuming,
        );
        let inbox = Arc::new(inbox::Inbox::new(store.clone(), streams.clone(), host, turns.clone()));
        let store_for_usage = store.clone();
        let archive = archive::Archive::new(store.clone(), config.data_dir.clone());
        let engine = Self {
            inner: Arc::new(Inner {
                config,
                store,
                secrets,
                streams,
                settings,
                providers,
                topics,
                branches,
                mcp,
                tools,
                assistants,
                sessions,
                acp_agents,
                turns,
                approvals,
                archive,
                inbox,
                usage: usage::Usage::new(store_for_usage),
                tasks,
                stop,
                lock: std::sync::Mutex::new(Some(lock)),
            }),
        };
        engine.inner.providers.restart_demo().await?;
        engine.inner.tasks.spawn(engine.inner.inbox.clone().run_dispatcher(engine.inner.stop.clone()));
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

    /// The stream thread's runtime, where every topic's chunks are numbered and handed to
    /// listeners; `None` when streams run on the caller's runtime (tests on a paused
    /// clock). `colloquy serve` runs its connections there so an event stream is fed
    /// without waking another thread.
    pub fn stream_runtime(&self) -> Option<tokio::runtime::Handle> {
        self.inner.streams.runtime()
    }

    /// A subscription to one topic, for the streaming operations below.
    pub fn listener(&self, id: ListenerId, topic_id: &TopicId) -> (Listener, Subscription) {
        self.inner.streams.listener(id, topic_id)
    }

    /// Starts a turn in the topic (one reply per model) and subscribes `listener` to it.
    pub async fn stream_open(&self, request: StreamOpenRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        self.inner.turns.open(request, listener).await
    }

    /// Generates a reply again as a new version of it (the old one is kept) and
    /// subscribes `listener` to the turn.
    pub async fn stream_retry(&self, request: ReplyRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let topic_id = request.topic_id.clone();
        let turn = self.inner.turns.prepare_reply(request, turns::Continuation::None).await?;
        let reply = self.inner.turns.start(turn, listener).await?;
        self.inner.streams.status().path_changed(&topic_id);
        Ok(reply)
    }

    /// Edits a sent message: a new version of it, answered by the models that answered
    /// the original, becomes the active branch; `listener` follows its turn.
    pub async fn stream_edit(&self, request: EditMessageRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let topic_id = request.topic_id.clone();
        let turn = self.inner.turns.prepare_edit(request).await?;
        let reply = self.inner.turns.start(turn, listener).await?;
        self.inner.streams.status().path_changed(&topic_id);
        Ok(reply)
    }

    /// Continues a stopped or interrupted reply after the text it kept.
    pub async fn stream_continue(&self, request: ReplyRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let turn = self.inner.turns.prepare_reply(request, turns::Continuation::Continue).await?;
        self.inner.turns.start(turn, listener).await
    }

    /// Asks one more model to answer an existing turn (it joins a live turn too).
    pub async fn stream_add_model(
        &self,
        request: AddModelRequest,
        listener: Listener,
    ) -> Result<AttachReply, ApiError> {
        let turn = self.inner.turns.prepare_added_model(request).await?;
        self.inner.turns.start(turn, listener).await
    }

    /// Subscribes `listener` to the topic's live reply, if any, continuing after the
    /// given cursors where possible.
    pub async fn stream_attach(
        &self,
        topic_id: &TopicId,
        after: Vec<ExecutionCursor>,
        listener: Listener,
    ) -> Result<AttachReply, ApiError> {
        self.inner.store.get_topic(topic_id).await?;
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
        self.inner.store.get_topic(topic_id).await?;
        self.inner.streams.abort(topic_id).await;
        self.inner.turns.stop_waiting_replies(topic_id).await?;
        self.inner.sessions.stop(topic_id).await
    }

    /// Stops one reply of the topic's live turn (a model column of a multi-model turn);
    /// the others go on. An agent session has one reply at a time: it stops.
    pub(crate) async fn stop_reply(&self, request: ReplyRequest) -> Result<(), ApiError> {
        if sessions::is_session(&request.topic_id) {
            return self.stream_abort(&request.topic_id).await;
        }
        self.inner.turns.stop_reply(request).await
    }

    /// Interrupt: stop the live turn (persisted as paused), then send this message now.
    pub async fn stream_interrupt(
        &self,
        request: StreamOpenRequest,
        listener: Listener,
    ) -> Result<protocol::AttachReply, ApiError> {
        // An agent session's stopped reply says it was interrupted for this message.
        self.inner.sessions.interrupting(&request.topic_id).await?;
        self.stream_abort(&request.topic_id).await?;
        self.stream_open(request, listener).await
    }

    /// Whether the topic has a turn still producing output (not one that has just ended
    /// and is only kept attachable for a while).
    pub async fn is_streaming(&self, topic_id: &TopicId) -> bool {
        self.inner.streams.is_streaming(topic_id).await
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
        self.inner.providers.stop_demo().await;
        self.inner.store.close().await;
        // The database is closed: another process may take the folder now.
        if let Ok(mut lock) = self.inner.lock.lock() {
            lock.take();
        }
    }

    // The plain operations, each handed to the service that owns it.

    pub(crate) async fn settings(&self) -> Result<protocol::api::AppSettings, ApiError> {
        self.inner.settings.settings().await
    }

    pub(crate) async fn update_settings(
        &self,
        update: protocol::api::UpdateAppSettings,
    ) -> Result<protocol::api::AppSettings, ApiError> {
        self.inner.settings.update_settings(update).await
    }

    /// The topic an AI SDK client's chat `id` names: the topic with that id, made (with the
    /// default title, answered by the default model) if there is none. An id must be 1–100
    /// letters, digits, `-` or `_`, and cannot name an agent session.
    pub async fn chat_topic(&self, id: &str) -> Result<TopicId, ApiError> {
        let plausible =
            (1..=100).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !plausible {
            return Err(ApiError::bad_request("id", "a chat id is 1–100 letters, digits, `-` or `_`"));
        }
        let id = TopicId(id.to_owned());
        Ok(self.inner.store.create_topic_with_id(&id, crate::topics::DEFAULT_TOPIC_TITLE, None).await?.id)
    }

    /// Stores the desktop's "show Colloquy" shortcut once the shell has registered it
    /// (`None`: off). The desktop shell's `show_shortcut_set` calls this; over HTTP the
    /// operation is refused, as there is no desktop to bring forward.
    pub async fn store_show_shortcut(&self, shortcut: Option<&str>) -> Result<protocol::api::AppSettings, ApiError> {
        self.inner.settings.set_show_shortcut(shortcut).await
    }

    pub(crate) async fn create_topic(
        &self,
        request: protocol::api::CreateTopic,
    ) -> Result<protocol::api::Topic, ApiError> {
        let topic = self.inner.topics.create_topic(request).await?;
        self.offer_mcp_roots().await;
        Ok(topic)
    }

    pub(crate) async fn update_topic(
        &self,
        request: protocol::api::UpdateTopic,
    ) -> Result<protocol::api::Topic, ApiError> {
        let topic = self.inner.topics.update_topic(request).await?;
        self.offer_mcp_roots().await;
        Ok(topic)
    }

    /// A workspace folder may have come or gone: MCP servers are offered the new set.
    pub(crate) async fn offer_mcp_roots(&self) {
        if let Err(err) = mcp::offer_roots(&self.inner.store, self.inner.mcp.hub()).await {
            tracing::warn!(error = %err, "could not read the workspace folders offered to MCP servers");
        }
    }

    pub(crate) async fn list_providers(&self) -> Result<Vec<protocol::api::Provider>, ApiError> {
        self.inner.providers.list_providers().await
    }

    pub(crate) async fn create_provider(
        &self,
        input: protocol::api::ProviderInput,
    ) -> Result<protocol::api::Provider, ApiError> {
        self.inner.providers.create_provider(input).await
    }

    pub(crate) async fn update_provider(
        &self,
        request: protocol::api::UpdateProvider,
    ) -> Result<protocol::api::Provider, ApiError> {
        self.inner.providers.update_provider(request).await
    }

    pub(crate) async fn provider_models(
        &self,
        request: protocol::api::ListModelsRequest,
    ) -> Result<protocol::api::ModelList, ApiError> {
        self.inner.providers.provider_models(request).await
    }

    pub(crate) async fn demo_provider(&self) -> Result<protocol::api::Provider, ApiError> {
        self.inner.providers.demo_provider().await
    }

    pub(crate) async fn list_tools(&self) -> Result<Vec<protocol::tool::ToolInfo>, ApiError> {
        self.inner.tools.list_tools().await
    }

    pub(crate) async fn set_tool_enabled(&self, request: protocol::api::ToolEnableRequest) -> Result<(), ApiError> {
        self.inner.tools.set_tool_enabled(request).await
    }

    pub(crate) async fn save_assistant(
        &self,
        id: Option<String>,
        input: protocol::api::AssistantInput,
    ) -> Result<protocol::api::Assistant, ApiError> {
        let assistant = self.inner.assistants.save_assistant(id, input).await?;
        self.offer_mcp_roots().await;
        Ok(assistant)
    }

    pub(crate) async fn update_assistant(
        &self,
        request: protocol::api::UpdateAssistant,
    ) -> Result<protocol::api::Assistant, ApiError> {
        let assistant = self.inner.assistants.update_assistant(request).await?;
        self.offer_mcp_roots().await;
        Ok(assistant)
    }

    pub(crate) async fn list_mcp_servers(&self) -> Result<Vec<protocol::mcp::McpServer>, ApiError> {
        self.inner.mcp.list_mcp_servers().await
    }

    pub(crate) async fn save_mcp_server(
        &self,
        id: Option<String>,
        input: protocol::mcp::McpServerInput,
    ) -> Result<protocol::mcp::McpServer, ApiError> {
        self.inner.mcp.save_mcp_server(id, input).await
    }

    pub(crate) async fn update_mcp_server(
        &self,
        request: protocol::mcp::UpdateMcpServer,
    ) -> Result<protocol::mcp::McpServer, ApiError> {
        self.inner.mcp.update_mcp_server(request).await
    }

    pub(crate) async fn delete_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        self.inner.mcp.delete_mcp_server(id).await
    }

    pub(crate) async fn refresh_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        self.inner.mcp.refresh_mcp_server(id).await
    }

    pub(crate) async fn inbox_add(
        &self,
        request: protocol::api::InboxAddRequest,
    ) -> Result<protocol::api::InboxItem, ApiError> {
        self.inner.inbox.inbox_add(request).await
    }

    pub(crate) async fn inbox_update(
        &self,
        request: protocol::api::InboxUpdateRequest,
    ) -> Result<protocol::api::InboxItem, ApiError> {
        self.inner.inbox.inbox_update(request).await
    }

    pub(crate) async fn inbox_move(
        &self,
        request: protocol::api::InboxMoveRequest,
    ) -> Result<Vec<protocol::api::InboxItem>, ApiError> {
        self.inner.inbox.inbox_move(request).await
    }

    pub(crate) async fn inbox_cancel(&self, request: protocol::api::InboxItemRequest) -> Result<(), ApiError> {
        self.inner.inbox.inbox_cancel(request).await
    }

    pub(crate) async fn inbox_release(
        &self,
        request: protocol::api::InboxItemRequest,
    ) -> Result<protocol::api::InboxItem, ApiError> {
        self.inner.inbox.inbox_release(request).await
    }

    pub(crate) async fn respond_approval(
        &self,
        request: protocol::api::ToolApprovalRespond,
    ) -> Result<protocol::tool::Approval, ApiError> {
        self.inner.approvals.respond_approval(request).await
    }

    pub(crate) async fn list_approvals(
        &self,
        request: protocol::api::ApprovalsListRequest,
    ) -> Result<Vec<protocol::tool::Approval>, ApiError> {
        self.inner.approvals.list_approvals(request).await
    }

    pub(crate) async fn save_rule(
        &self,
        id: Option<String>,
        input: protocol::api::ToolRuleInput,
    ) -> Result<protocol::tool::PolicyRule, ApiError> {
        self.inner.approvals.save_rule(id, input).await
    }

    pub(crate) async fn update_rule(
        &self,
        request: protocol::api::UpdateToolRule,
    ) -> Result<protocol::tool::PolicyRule, ApiError> {
        self.inner.approvals.update_rule(request).await
    }

    pub(crate) async fn list_audit(
        &self,
        request: protocol::api::AuditListRequest,
    ) -> Result<Vec<protocol::tool::AuditEntry>, ApiError> {
        self.inner.approvals.list_audit(request).await
    }

    pub(crate) async fn list_sessions(&self) -> Result<Vec<protocol::api::AgentSession>, ApiError> {
        self.inner.sessions.list_sessions().await
    }

    pub(crate) async fn create_session(
        &self,
        input: protocol::api::AgentSessionInput,
    ) -> Result<protocol::api::AgentSession, ApiError> {
        self.inner.sessions.create_session(input).await
    }

    pub(crate) async fn update_session(
        &self,
        request: protocol::api::UpdateAgentSession,
    ) -> Result<protocol::api::AgentSession, ApiError> {
        self.inner.sessions.update_session(request).await
    }

    pub(crate) async fn delete_session(&self, id: &str) -> Result<(), ApiError> {
        self.inner.sessions.delete_session(id).await
    }

    pub(crate) async fn reset_session(&self, id: &str) -> Result<protocol::api::AgentSession, ApiError> {
        self.inner.sessions.reset_session(id).await
    }

    /// A new turn as the stream manager gets it (tests look at what a model is told).
    #[cfg(test)]
    pub(crate) async fn prepare_turn(&self, request: StreamOpenRequest) -> Result<streams::PreparedTurn, ApiError> {
        self.inner.turns.prepare_turn(request).await
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
