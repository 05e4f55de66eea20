//! Agent sessions in the engine: their settings, turns that run the agent instead of the
//! chat loop, and the places where a session topic is handled differently (approvals
//! go to the waiting turn, steering goes through the host, Stop also reaches a turn
//! split by a steering message).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ::tools::mcp::processes::ProcessRegistry;
use protocol::api::{
    AgentSession, AgentSessionInput, ApprovalScope, ReplyRequest, StreamOpenRequest, UpdateAgentSession,
};
use protocol::tool::{Approval, ApprovalState};
use protocol::{ApiError, ErrorKind, MessageId, MessageStatus, ModelRef, ProviderId, TopicId, TurnId, UiMessage};
use serde_json::Value;
use sessions::{AcpAgentConfig, AcpDriver, Decision, PermissionMode, PromptFile, SessionHost, SessionSpec};
use store::Store;
use store::secrets::SecretStore;
use store::sessions::{NewSession, SessionRow};
use store::tools::{CallDecision, NewCall, Recorded};
use streams::{ListenerId, PreparedExecution, PreparedTurn, ReplySlot, StreamManager, UserInput};
use tokio_util::task::TaskTracker;
use turn::{Allowed, CallRecord, GateCall, GateDecision, GateError, ToolGate};

use crate::acp_agents::AcpAgents;
use crate::error::stream_error;
use crate::model_providers::Providers;
use crate::resuming::{ResumeClaim, Resuming};
use crate::tools::EngineGate;

pub(crate) const DEFAULT_SESSION_TITLE: &str = "New session";
const CLAUDE_CODE: &str = "claude_code";
/// A session of an agent from settings' list of ACP agents.
const ACP: &str = "acp";
/// How long an ACP agent may take to start a session.
const ACP_START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// What a session's replies are attributed to when no provider is chosen.
const OWN_LOGIN: &str = "claude-code";

pub(crate) fn is_session(topic_id: &TopicId) -> bool {
    topic_id.kind() == protocol::TopicKind::AgentSession
}

fn permission_mode(field: &str, text: &str) -> Result<PermissionMode, ApiError> {
    match text {
        "default" => Ok(PermissionMode::Default),
        "acceptEdits" => Ok(PermissionMode::AcceptEdits),
        "plan" => Ok(PermissionMode::Plan),
        "dontAsk" => Ok(PermissionMode::DontAsk),
        other => Err(ApiError::bad_request(
            field,
            format!("`{other}` is not a permission mode (default, acceptEdits, plan, dontAsk)"),
        )),
    }
}

/// What the Agents list calls the agent a session runs.
fn agent_name(row: &SessionRow, agents: &HashMap<String, String>) -> String {
    match row.acp_agent_id.as_deref() {
        Some(id) if row.agent == ACP => agents.get(id).cloned().unwrap_or_else(|| "a deleted ACP agent".to_owned()),
        _ if row.agent == ACP => "a deleted ACP agent".to_owned(),
        _ => "Claude Code".to_owned(),
    }
}

fn view(row: SessionRow, agents: &HashMap<String, String>) -> AgentSession {
    AgentSession {
        agent_name: agent_name(&row, agents),
        acp_agent_id: row.acp_agent_id,
        id: row.id,
        topic_id: row.topic_id,
        title: row.title,
        agent: row.agent,
        workspace: row.workspace,
        provider_id: row.provider_id,
        model: row.model,
        permission_mode: row.permission_mode,
        resumable: row.resume_token.is_some(),
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// Agent sessions: their settings, their turns (the agent runs them, not the chat loop),
/// and the host that keeps their connections.
pub(crate) struct AgentSessions {
    store: Store,
    streams: StreamManager,
    /// Agent sessions' connections, resume tokens, steering and approval waits.
    host: SessionHost,
    providers: Arc<Providers>,
    /// Where a change of permission mode waits for the running turn.
    tasks: TaskTracker,
    resuming: Arc<Resuming>,
    acp: AcpSupport,
}

/// What sessions of ACP agents need besides what every session does.
pub(crate) struct AcpSupport {
    /// The ACP agents sessions may run, and what starts them.
    pub(crate) agents: Arc<AcpAgents>,
    /// Where agents' process groups are recorded (reaped after a crash).
    pub(crate) processes: Arc<ProcessRegistry>,
    /// For the user's enabled MCP servers, passed to ACP agents (their values are secrets).
    pub(crate) secrets: Arc<dyn SecretStore>,
}

impl AgentSessions {
    pub(crate) fn new(
        store: Store,
        streams: StreamManager,
        host: SessionHost,
        providers: Arc<Providers>,
        tasks: TaskTracker,
        resuming: Arc<Resuming>,
        acp: AcpSupport,
    ) -> Self {
        Self { store, streams, host, providers, tasks, resuming, acp }
    }

    /// ACP agents by id → name, for the Agents list.
    async fn agent_names(&self) -> Result<HashMap<String, String>, ApiError> {
        Ok(self.store.list_acp_agents().await?.into_iter().map(|a| (a.id, a.name)).collect())
    }

    async fn view(&self, row: SessionRow) -> Result<AgentSession, ApiError> {
        Ok(view(row, &self.agent_names().await?))
    }

    /// Stops the session's running turn, if the topic is a session's (Stop).
    pub(crate) async fn stop(&self, topic_id: &TopicId) -> Result<(), ApiError> {
        if is_session(topic_id) {
            let session = self.store.session_of_topic(topic_id).await?;
            self.host.stop(&session.id).await;
        }
        Ok(())
    }

    /// Interrupt is about to stop the session's running turn for a message sent now (if
    /// the topic is a session's): its reply is marked interrupted rather than stopped.
    pub(crate) async fn interrupting(&self, topic_id: &TopicId) -> Result<(), ApiError> {
        if is_session(topic_id) && self.streams.is_streaming(topic_id).await {
            let session = self.store.session_of_topic(topic_id).await?;
            self.host.interrupting(&session.id);
        }
        Ok(())
    }

    /// Closes every session's connection (at shutdown).
    pub(crate) async fn shutdown(&self) {
        self.host.shutdown().await;
    }

    pub(crate) async fn list_sessions(&self) -> Result<Vec<AgentSession>, ApiError> {
        let agents = self.agent_names().await?;
        Ok(self.store.list_sessions().await?.into_iter().map(|row| view(row, &agents)).collect())
    }

    pub(crate) async fn create_session(&self, input: AgentSessionInput) -> Result<AgentSession, ApiError> {
        let acp_agent_id = input.acp_agent_id.as_deref().map(str::trim).filter(|a| !a.is_empty());
        let default_agent = if acp_agent_id.is_some() { ACP } else { CLAUDE_CODE };
        let agent = input.agent.as_deref().map(str::trim).filter(|a| !a.is_empty()).unwrap_or(default_agent);
        let mut workspace = input.workspace.clone();
        match (agent, acp_agent_id) {
            (CLAUDE_CODE, None) => {}
            (CLAUDE_CODE, Some(_)) => {
                return Err(ApiError::bad_request("acpAgentId", "a Claude Code session runs no ACP agent"));
            }
            (ACP, None) => return Err(ApiError::bad_request("acpAgentId", "choose which ACP agent the session runs")),
            (ACP, Some(id)) => {
                let chosen = self.store.get_acp_agent(id).await.map_err(|e| match e {
                    store::StoreError::NotFound { .. } => {
                        ApiError::bad_request("acpAgentId", format!("no ACP agent {id}"))
                    }
                    other => other.into(),
                })?;
                if input.provider_id.is_some() {
                    return Err(ApiError::bad_request(
                        "providerId",
                        format!(
                            "{} uses its own settings and login; set its variables in settings instead",
                            chosen.name
                        ),
                    ));
                }
                if workspace.trim().is_empty()
                    && let Some(own) = chosen.workspace
                {
                    workspace = own;
                }
            }
            (other, _) => {
                return Err(ApiError::bad_request(
                    "agent",
                    format!("`{other}` is not an agent Colloquy can run (claude_code, acp)"),
                ));
            }
        }
        let workspace = crate::assistants::checked_workspace("workspace", &workspace)?;
        if let Some(provider) = &input.provider_id {
            self.session_provider(provider, "providerId").await?;
        }
        let mode = input.permission_mode.as_deref().unwrap_or("default");
        permission_mode("permissionMode", mode)?;
        let title = input.title.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or(DEFAULT_SESSION_TITLE);
        crate::limits::at_most("title", title, crate::limits::TITLE)?;
        crate::limits::at_most("model", input.model.trim(), crate::limits::MODEL_NAME)?;
        let id = uuid::Uuid::now_v7().to_string();
        let new = NewSession {
            id: &id,
            title,
            agent,
            acp_agent_id: if agent == ACP { acp_agent_id } else { None },
            workspace: &workspace,
            provider_id: input.provider_id.as_ref(),
            model: input.model.trim(),
            permission_mode: mode,
        };
        let row = self.store.create_session(&new).await?;
        self.view(row).await
    }

    pub(crate) async fn update_session(&self, request: UpdateAgentSession) -> Result<AgentSession, ApiError> {
        let mode = match request.permission_mode.as_deref() {
            Some(text) => Some((text, permission_mode("permissionMode", text)?)),
            None => None,
        };
        if let Some(model) = request.model.as_deref() {
            crate::limits::at_most("model", model.trim(), crate::limits::MODEL_NAME)?;
        }
        let existing = self.store.get_session(&request.id).await?;
        if let Some(title) = request.title.as_deref().map(str::trim) {
            if title.is_empty() {
                return Err(ApiError::bad_request("title", "must not be empty"));
            }
            crate::limits::at_most("title", title, crate::limits::TITLE)?;
            self.store.update_topic(&existing.topic_id, Some(title), None).await?;
        }
        let row = self
            .store
            .update_session(&request.id, request.model.as_deref().map(str::trim), mode.map(|(text, _)| text))
            .await?;
        if let Some((_, mode)) = mode {
            // A live connection changes mode once its running turn (if any) is over.
            let host = self.host.clone();
            let id = request.id.clone();
            self.tasks.spawn(async move { host.set_permission_mode(&id, mode).await });
        }
        self.view(row).await
    }

    pub(crate) async fn delete_session(&self, id: &str) -> Result<(), ApiError> {
        let session = self.store.get_session(id).await?;
        self.streams.close_topic(&session.topic_id).await;
        self.host.close(id).await;
        self.store.delete_session(id).await?;
        Ok(())
    }

    /// The next turn starts a fresh agent session (after a resume that failed, say).
    pub(crate) async fn reset_session(&self, id: &str) -> Result<AgentSession, ApiError> {
        self.store.get_session(id).await?;
        // The host first: it waits for a running turn, whose tokens are stored as they come.
        self.host.reset(id).await;
        self.store.set_resume_token(id, None).await?;
        let row = self.store.get_session(id).await?;
        self.view(row).await
    }

    /// Switches an ACP session's agent to one of its modes: now on a live connection
    /// (mid-turn too), else when the agent next starts.
    pub(crate) async fn set_agent_mode(
        &self,
        request: protocol::api::AgentModeRequest,
    ) -> Result<protocol::api::AgentModeChange, ApiError> {
        use protocol::api::{AgentModeApplied, AgentModeChange};
        let mode = request.mode_id.trim();
        if mode.is_empty() {
            return Err(ApiError::bad_request("modeId", "choose a mode"));
        }
        crate::limits::at_most("modeId", mode, crate::limits::MODEL_NAME)?;
        let session = self.store.get_session(&request.id).await?;
        if session.agent != ACP {
            return Err(ApiError::bad_request(
                "id",
                "only an ACP agent's session has modes of its own; Claude Code's permission mode is in the session's \
                 settings",
            ));
        }
        match self.host.set_agent_mode(&session.id, mode).await {
            Ok(switch) => Ok(AgentModeChange {
                mode_id: mode.to_owned(),
                applied: match switch {
                    sessions::ModeSwitch::Now => AgentModeApplied::Now,
                    sessions::ModeSwitch::AtNextStart => AgentModeApplied::NextStart,
                },
            }),
            Err(error @ sessions::SetModeError::NotOffered { .. }) => {
                Err(ApiError::bad_request("modeId", error.to_string()))
            }
            Err(sessions::SetModeError::Refused(message)) => Err(ApiError {
                kind: ErrorKind::Provider,
                message,
                retryable: true,
                field: None,
                code: Some("agent".to_owned()),
            }),
        }
    }

    /// The provider a session talks through: it must speak Anthropic Messages.
    async fn session_provider(&self, id: &ProviderId, field: &str) -> Result<store::providers::ProviderRow, ApiError> {
        let provider = self.store.get_provider(id).await.map_err(|e| match e {
            store::StoreError::NotFound { .. } => ApiError::bad_request(field, format!("no provider {id}")),
            other => other.into(),
        })?;
        if provider.format != protocol::api::ApiFormat::Anthropic {
            return Err(ApiError::bad_request(
                field,
                format!("{} does not speak the Anthropic Messages format, which Claude Code needs", provider.name),
            ));
        }
        Ok(provider)
    }

    /// A turn of an agent session: the user's message goes to the agent.
    pub(crate) async fn prepare_session_turn(&self, request: StreamOpenRequest) -> Result<PreparedTurn, ApiError> {
        let attachments = request.attachments.as_deref().unwrap_or_default();
        let text = request.text.trim();
        if text.is_empty() && attachments.is_empty() {
            return Err(ApiError::bad_request("text", "the message is empty"));
        }
        let session = self.store.session_of_topic(&request.topic_id).await?;
        if !attachments.is_empty() && session.agent != ACP {
            return Err(ApiError::bad_request(
                "attachments",
                "Claude Code sessions take text only; put files in the session's folder",
            ));
        }
        let file_parts = crate::attachments::attachment_parts(attachments)?;
        // As in chat: a permission prompt left from before a restart is answered (which
        // resumes the agent) or stopped first.
        if let Some(waiting) = self.waiting_after_restart(&session.topic_id).await? {
            return Err(ApiError::conflict(format!(
                "the agent is waiting for your approval of a {} call; answer it or press Stop first",
                waiting.tool_name
            )));
        }
        let history = self.store.active_path(&session.topic_id).await?;
        if session.title == DEFAULT_SESSION_TITLE && history.is_empty() {
            let title = crate::topics::auto_title(text);
            if let Err(err) = self.store.update_topic(&session.topic_id, Some(&title), None).await {
                tracing::warn!(error = %err, "could not title the session");
            }
        }
        // Checked against what the agent takes before anything is stored.
        let files = self.acp_files(&session, &file_parts).await?;
        let message_id = MessageId::new();
        let execution =
            self.session_execution(&session, message_id, text.to_owned(), files, ReplySlot::New, None).await?;
        let user_id = request.message_id.unwrap_or_default();
        let mut user = UiMessage::user_text(user_id.as_str(), text);
        user.parts.extend(file_parts);
        Ok(PreparedTurn {
            topic_id: session.topic_id,
            turn_id: TurnId::new(),
            user: Some(UserInput { message_id: user_id, parts: user.parts, edit_of: None }),
            executions: vec![execution],
        })
    }

    /// Continue a stopped agent reply: the agent is asked to go on, into the same reply.
    pub(crate) async fn prepare_session_reply(&self, request: ReplyRequest) -> Result<PreparedTurn, ApiError> {
        let session = self.store.session_of_topic(&request.topic_id).await?;
        let reply = self.store.get_message(&request.message_id).await?;
        if reply.topic_id != session.topic_id || reply.status != protocol::MessageStatus::Paused {
            return Err(ApiError::bad_request(
                "messageId",
                "only a stopped or interrupted reply of this session can be continued",
            ));
        }
        if reply.status_reason.as_deref() == Some(protocol::StatusReason::AwaitingApproval.as_str()) {
            return Err(ApiError::conflict(
                "this reply is waiting for your approval of a tool call; answer it to go on",
            ));
        }
        let Some(turn_id) = reply.turn_id.clone() else {
            return Err(ApiError::bad_request("messageId", "this reply has no turn to continue"));
        };
        let prompt = "Continue from where you left off.".to_owned();
        let slot = ReplySlot::Continue { message: reply.message, seen: reply.revision };
        let execution = self.session_execution(&session, reply.id.clone(), prompt, Vec::new(), slot, None).await?;
        Ok(PreparedTurn { topic_id: session.topic_id, turn_id, user: None, executions: vec![execution] })
    }

    /// `carried`: the answer to a permission prompt the agent asked before a restart,
    /// which this turn delivers.
    async fn session_execution(
        &self,
        session: &SessionRow,
        message_id: MessageId,
        prompt: String,
        files: Vec<PromptFile>,
        slot: ReplySlot,
        carried: Option<Carried>,
    ) -> Result<PreparedExecution, ApiError> {
        let mode = permission_mode("permissionMode", &session.permission_mode)?;
        if session.agent == ACP {
            return self.acp_execution(session, message_id, prompt, files, slot, carried).await;
        }
        let mut env = Vec::new();
        let chosen = session.model.trim();
        let model_ref = match &session.provider_id {
            Some(provider_id) => {
                let provider = self.session_provider(provider_id, "providerId").await?;
                // Claude Code adds `/v1/messages` itself.
                let base = provider.base_url.trim_end_matches('/');
                let base = base.strip_suffix("/v1").unwrap_or(base);
                env.push(("ANTHROPIC_BASE_URL".to_owned(), base.to_owned()));
                if let Some(key) = self.providers.api_key(provider_id)? {
                    env.push(("ANTHROPIC_API_KEY".to_owned(), key));
                }
                // No model chosen: the provider's default, as a chat with it would use (the
                // CLI's own default may be a model this provider does not serve).
                let model = if chosen.is_empty() { provider.default_model.trim() } else { chosen };
                ModelRef { provider_id: provider_id.clone(), model: model.to_owned() }
            }
            // Claude Code's own login: an empty model lets the CLI choose.
            None => ModelRef { provider_id: ProviderId(OWN_LOGIN.into()), model: chosen.to_owned() },
        };
        let spec = SessionSpec {
            session_id: session.id.clone(),
            runtime: CLAUDE_CODE.to_owned(),
            workspace: PathBuf::from(&session.workspace),
            model: model_ref.model.clone(),
            permission_mode: mode,
            env,
        };
        let (gate, tokens) = self.turn_parts(session, &message_id, &model_ref, self.host.driver_name(), carried);
        let runner = self.host.turn(spec, prompt, session.resume_token.clone(), gate, tokens);
        Ok(PreparedExecution {
            message_id,
            model_ref,
            provider_name: self.host.driver_name().to_owned(),
            runner,
            slot,
            // The agent program keeps its own watch on a silent model.
            idle_timeout: None,
        })
    }

    /// What a turn of either driver answers to: the gate its permission requests go
    /// through (delivering `carried` first), and where its resume token and usage go.
    fn turn_parts(
        &self,
        session: &SessionRow,
        message_id: &MessageId,
        model_ref: &ModelRef,
        agent: &str,
        carried: Option<Carried>,
    ) -> (Arc<dyn ToolGate>, Arc<SessionTokens>) {
        let gate = EngineGate {
            store: self.store.clone(),
            topic_id: session.topic_id.clone(),
            message_id: message_id.clone(),
            defaults: HashMap::new(),
        };
        let gate: Arc<dyn ToolGate> = match carried {
            Some(carried) => Arc::new(ResumedGate { gate, carried: Mutex::new(Some(carried)) }),
            None => Arc::new(gate),
        };
        let tokens = Arc::new(SessionTokens {
            store: self.store.clone(),
            session_id: session.id.clone(),
            topic_id: session.topic_id.to_string(),
            message_id: message_id.to_string(),
            provider_id: model_ref.provider_id.to_string(),
            agent: agent.to_owned(),
            model: model_ref.model.clone(),
        });
        (gate, tokens)
    }

    /// A turn of a session that runs an ACP agent: the agent from settings, started with
    /// its variables and handed the user's enabled MCP servers.
    async fn acp_execution(
        &self,
        session: &SessionRow,
        message_id: MessageId,
        prompt: String,
        files: Vec<PromptFile>,
        slot: ReplySlot,
        carried: Option<Carried>,
    ) -> Result<PreparedExecution, ApiError> {
        let (driver, spec, name) = self.acp_runtime(session).await?;
        let agent_id = session.acp_agent_id.as_deref().unwrap_or_default();
        let model_ref = ModelRef { provider_id: ProviderId(format!("acp:{agent_id}")), model: spec.model.clone() };
        let (gate, tokens) = self.turn_parts(session, &message_id, &model_ref, &name, carried);
        let runner = self.host.turn_with_files(driver, spec, prompt, files, session.resume_token.clone(), gate, tokens);
        Ok(PreparedExecution { message_id, model_ref, provider_name: name, runner, slot, idle_timeout: None })
    }

    /// Files for an ACP agent's prompt, each checked against what the agent says it takes
    /// (`promptCapabilities`, learned by starting it if it is not running): one it cannot
    /// take is refused naming it (`attachments.N`), before anything is stored.
    async fn acp_files(&self, session: &SessionRow, parts: &[protocol::UiPart]) -> Result<Vec<PromptFile>, ApiError> {
        let files: Vec<PromptFile> = parts
            .iter()
            .filter_map(|part| match part {
                protocol::UiPart::File { media_type, url, filename } => Some(PromptFile {
                    media_type: media_type.clone(),
                    filename: filename.clone().unwrap_or_else(|| "attachment".to_owned()),
                    data: url.split_once(";base64,").map(|(_, data)| data.to_owned()).unwrap_or_default(),
                }),
                _ => None,
            })
            .collect();
        if files.is_empty() {
            return Ok(files);
        }
        let (driver, spec, name) = self.acp_runtime(session).await?;
        let capabilities = match self.host.prompt_capabilities(driver, &spec, session.resume_token.as_deref()).await {
            Ok(capabilities) => capabilities.unwrap_or_default(),
            Err(sessions::DriverError::Failed(message)) if message.ends_with("is busy with a turn") => {
                return Err(ApiError::conflict(format!(
                    "{message}; files go with a new message: wait for the reply to finish, or Interrupt it"
                )));
            }
            Err(error) => {
                return Err(ApiError {
                    kind: ErrorKind::Provider,
                    message: format!("{name} could not be started to check what it takes: {error}"),
                    retryable: true,
                    field: None,
                    code: Some("agent".to_owned()),
                });
            }
        };
        for (index, file) in files.iter().enumerate() {
            if let Some(why) = capabilities.refusal(&name, file) {
                return Err(ApiError::bad_request(format!("attachments.{index}"), why));
            }
        }
        Ok(files)
    }

    /// The driver and spec of a session of an ACP agent (the agent from settings, started
    /// with its variables and handed the user's enabled MCP servers), and the agent's name.
    async fn acp_runtime(
        &self,
        session: &SessionRow,
    ) -> Result<(Arc<dyn sessions::Driver>, SessionSpec, String), ApiError> {
        let Some(agent_id) = session.acp_agent_id.as_deref() else {
            return Err(ApiError::bad_request("acpAgentId", "this session's agent was deleted from settings"));
        };
        let launch = self.acp.agents.launch(agent_id).await?;
        let config = AcpAgentConfig {
            name: launch.row.name.clone(),
            command: launch.row.command.clone(),
            args: launch.row.args.clone(),
            env: launch.env,
            mcp_servers: crate::mcp::enabled_endpoints(&self.store, self.acp.secrets.as_ref()).await?,
            start_timeout: ACP_START_TIMEOUT,
        };
        let driver: Arc<dyn sessions::Driver> =
            Arc::new(AcpDriver::new(config).with_processes(self.acp.processes.clone()));
        let spec = SessionSpec {
            session_id: session.id.clone(),
            // Edited settings start a new connection.
            runtime: format!("acp:{agent_id}@{}", launch.row.updated_at),
            workspace: PathBuf::from(&session.workspace),
            model: session.model.trim().to_owned(),
            permission_mode: permission_mode("permissionMode", &session.permission_mode)?,
            env: Vec::new(),
        };
        Ok((driver, spec, launch.row.name))
    }

    /// A permission prompt of the session whose reply waits for it across a restart (not
    /// one whose turn ended some other way, which nobody waits for).
    async fn waiting_after_restart(&self, topic_id: &TopicId) -> Result<Option<Approval>, ApiError> {
        let store = &self.store;
        for approval in store.list_approvals(Some(topic_id), true).await? {
            let reply = store.get_message(&MessageId(approval.message_id.clone())).await?;
            if reply.status == MessageStatus::Paused
                && reply.status_reason.as_deref() == Some(protocol::StatusReason::AwaitingApproval.as_str())
            {
                return Ok(Some(approval));
            }
        }
        Ok(None)
    }

    /// Hands an answered approval of a session to the turn waiting for it. When none
    /// waits because the app was restarted since the agent asked, the agent is resumed
    /// to hear the answer (`resume_after_restart`).
    pub(crate) async fn session_decided(&self, approval: &Approval, scope: ApprovalScope) {
        let decision = Decision {
            approved: approval.state == ApprovalState::Approved,
            input: approval.input.clone(),
            reason: approval.reason.clone(),
            always: scope != ApprovalScope::Once,
        };
        if self.host.decide(&approval.id, decision) {
            return;
        }
        match self.resume_after_restart(approval).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(approval = %approval.id, "no agent turn waits for this approval any more"),
            // Another answer resumed it first.
            Err(err) if err.kind == ErrorKind::Conflict => {}
            Err(err) => tracing::error!(error = %err, "the agent could not be resumed with the answer"),
        }
    }

    /// The agent's process that asked is gone (the app was restarted while the prompt
    /// waited): the prompt cannot be answered in place. The session is resumed with its
    /// token into the same reply and told the answer in a message; an approved call that
    /// the agent then makes again (Claude Code asks again) runs without a second card.
    /// False when the reply does not wait across a restart.
    async fn resume_after_restart(&self, approval: &Approval) -> Result<bool, ApiError> {
        let store = &self.store;
        let message_id = MessageId(approval.message_id.clone());
        let reply = store.get_message(&message_id).await?;
        let waiting = reply.status == MessageStatus::Paused
            && reply.status_reason.as_deref() == Some(protocol::StatusReason::AwaitingApproval.as_str());
        if !waiting || store.pending_approvals_of(&approval.message_id).await? > 0 {
            return Ok(false);
        }
        let Some(turn_id) = reply.turn_id.clone() else { return Ok(false) };
        let Some(_claim) = ResumeClaim::take(&self.resuming, &approval.message_id) else { return Ok(true) };
        let session = store.session_of_topic(&approval.topic_id).await?;
        let approved = approval.state == ApprovalState::Approved;
        let prompt = answer_after_restart(approval);
        let carried =
            approved.then(|| Carried { tool_name: approval.tool_name.clone(), input: approval.input.clone() });
        let slot = ReplySlot::Continue { message: reply.message, seen: reply.revision };
        let execution = self.session_execution(&session, reply.id.clone(), prompt, Vec::new(), slot, carried).await?;
        let turn =
            PreparedTurn { topic_id: session.topic_id.clone(), turn_id, user: None, executions: vec![execution] };
        // Windows showing the session follow the resumed reply through the status feed.
        let (listener, _unheard) = self.streams.listener(ListenerId::unique(), &session.topic_id);
        self.streams.open(turn, listener).await.map_err(stream_error)?;
        tracing::info!(approval = %approval.id, approved, "resumed an agent session to deliver an answer given after a restart");
        Ok(true)
    }
}

/// What the resumed agent is told: the prompt it asked before the restart is gone, and
/// the user's answer to it.
fn answer_after_restart(approval: &Approval) -> String {
    let tool = &approval.tool_name;
    let lost = format!(
        "Colloquy, the app you run in, was restarted while you waited for permission to use {tool}, so that \
         request was lost and the call did not run."
    );
    if approval.state == ApprovalState::Approved {
        let input = serde_json::to_string(&approval.input).unwrap_or_default();
        format!(
            "{lost} The user has since allowed it. Make the same {tool} call again now, with exactly this input, \
             and it will run without asking again:\n{input}\nThen go on with your task."
        )
    } else {
        let reason = approval.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
        let why = reason.map(|r| format!(" Their reason: {r}")).unwrap_or_default();
        format!("{lost} The user has since denied it.{why} Do not make that call; go on without it.")
    }
}

/// A call the user approved after a restart, for the resumed agent to make again.
struct Carried {
    tool_name: String,
    input: Value,
}

/// The gate of a turn that delivers an answer given after a restart: the approved call,
/// made again by the agent with the same input, is allowed as the user's (once); any
/// other call goes through the policy as usual, and its card says why it asks again.
struct ResumedGate {
    gate: EngineGate,
    carried: Mutex<Option<Carried>>,
}

/// Shown on a card kept across a restart: what answering it does now.
const KEPT_AFTER_RESTART: &str = "Colloquy was restarted while Claude Code waited for this answer. Answering resumes \
                                  the session and tells Claude Code your answer; if you allow the call, it makes it \
                                  again and it runs without asking.";

/// The same for an ACP agent, whose request (`session/request_permission`) ended with its
/// process: the card says it is no longer open, and what answering does instead.
fn kept_after_restart_acp(agent: &str) -> String {
    format!(
        "Colloquy was restarted while {agent} waited for this answer, so its request is no longer open. Answering \
         starts {agent} again on this session and tells it your answer; if you allow the call and it makes the same \
         call again, it runs without asking."
    )
}

/// Shown on a card the resumed agent asks for instead of the call the user approved.
const ASKED_AGAIN: &str = "Asked again: Colloquy was restarted while Claude Code waited for an answer, and on \
                           resuming it asked for a call other than the one you approved.";

#[async_trait::async_trait]
impl ToolGate for ResumedGate {
    async fn check(&self, call: &GateCall) -> Result<GateDecision, GateError> {
        let (matches, same_tool) = {
            let mut carried = self.carried.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let same_tool = carried.as_ref().is_some_and(|c| c.tool_name == call.tool_name);
            let matches = same_tool && carried.as_ref().is_some_and(|c| c.input == call.input);
            if matches {
                carried.take();
            }
            (matches, same_tool)
        };
        if !matches {
            let mut call = call.clone();
            if same_tool && call.preview.is_none() {
                call.preview = Some(ASKED_AGAIN.to_owned());
            }
            return self.gate.check(&call).await;
        }
        let new = NewCall {
            topic_id: &self.gate.topic_id,
            message_id: self.gate.message_id.as_str(),
            call_id: &call.call_id,
            tool_name: &call.tool_name,
            input: &call.input,
        };
        let recorded = self
            .gate
            .store
            .record_call(&new, &CallDecision::Allow { actor: "user" })
            .await
            .map_err(|e| GateError(e.to_string()))?;
        tracing::info!(tool = %call.tool_name, "a call approved before the restart was made again; allowed");
        Ok(match recorded {
            Recorded::Approved | Recorded::Settled => GateDecision::Allow,
            Recorded::Denied { reason } => GateDecision::Deny { reason: reason.unwrap_or_default() },
            Recorded::Waiting { approval_id } => GateDecision::Ask { approval_id },
        })
    }

    async fn begin(&self, call_id: &str) -> Result<Option<Allowed>, GateError> {
        self.gate.begin(call_id).await
    }

    async fn finish(&self, call_id: &str, record: &CallRecord) -> Result<(), GateError> {
        self.gate.finish(call_id, record).await
    }
}

/// Keeps a session's resume token on its row, where the next turn after a restart reads
/// it (the turn awaits each save), and the agent's reported usage in the usage ledger.
struct SessionTokens {
    store: store::Store,
    session_id: String,
    topic_id: String,
    message_id: String,
    provider_id: String,
    /// The agent's name ("Claude Code"): the ledger's provider for its turns.
    agent: String,
    /// Empty when the agent chose its own.
    model: String,
}

#[async_trait::async_trait]
impl sessions::TokenStore for SessionTokens {
    async fn save(&self, token: &str) -> Result<(), String> {
        self.store.set_resume_token(&self.session_id, Some(token)).await.map_err(|e| e.to_string())
    }

    async fn turn_usage(&self, usage: &sessions::AgentUsage) -> Result<(), String> {
        let model =
            if self.model.trim().is_empty() { format!("{} default model", self.agent) } else { self.model.clone() };
        let row = store::usage::UsageCall {
            topic_id: self.topic_id.clone(),
            message_id: self.message_id.clone(),
            kind: store::usage::UsageKind::Agent,
            step: 0,
            attempt: 0,
            provider_id: Some(self.provider_id.clone()),
            provider_name: self.agent.clone(),
            model,
            tokens: store::usage::Tokens {
                input: usage.input_tokens.unwrap_or(0),
                output: usage.output_tokens.unwrap_or(0),
                reasoning: 0,
                cached: 0,
            },
            request_messages: None,
            request_chars: None,
            started_at: store::timestamp(time::OffsetDateTime::from(usage.started_at)),
            ttft_ms: None,
            duration_ms: u64::try_from(usage.duration.as_millis()).unwrap_or(u64::MAX),
            provider_retries: 0,
            finish: if usage.interrupted {
                "stopped"
            } else if usage.error.is_some() {
                "failed"
            } else {
                "stop"
            }
            .to_owned(),
            error: usage.error.clone(),
            reported_cost_usd: usage.cost_usd,
        };
        self.store.record_usage(&row).await.map_err(|e| e.to_string())
    }
}

/// At start-up, after recovery: an agent's permission prompt outlives the agent's
/// process. It stays for the user to answer, and its reply waits for the answer as a chat
/// reply does (`paused`/`awaiting_approval`); answering resumes the agent
/// (`AgentSessions::resume_after_restart`).
/// A prompt whose turn had already ended otherwise (the agent exited while it waited) has
/// nothing to go on with: it is answered "no".
pub(crate) async fn keep_orphaned_approvals(store: &store::Store) -> Result<(), ApiError> {
    let pending = store.list_approvals(None, true).await?;
    for approval in pending.into_iter().filter(|a| is_session(&a.topic_id)) {
        let note = match store.session_of_topic(&approval.topic_id).await {
            Ok(session) if session.agent == ACP => {
                let name = match session.acp_agent_id.as_deref() {
                    Some(id) => store.get_acp_agent(id).await.ok().map(|agent| agent.name),
                    None => None,
                };
                kept_after_restart_acp(name.as_deref().unwrap_or("the agent"))
            }
            _ => KEPT_AFTER_RESTART.to_owned(),
        };
        if store.await_approval_again(&approval.message_id, &note).await? {
            continue;
        }
        let answer = store::tools::ApprovalAnswer {
            approval_id: &approval.id,
            decided_by: protocol::message::Decider::App,
            decision: protocol::api::ApprovalDecision::Deny,
            scope: ApprovalScope::Once,
            reason: Some("the agent's turn had already ended"),
            updated_input: None,
            rule_id: "",
            rule_conditions: Vec::new(),
        };
        store.respond_approval(&answer).await?;
    }
    Ok(())
}
