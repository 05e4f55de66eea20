//! Preparing turns for the stream manager: which models answer, what they are told,
//! which tools they may call, and, for a reply that goes on, which of its calls are still
//! open.
//!
//! A new turn appends the user's message to the conversation; retry, continue and
//! add-model (re)start replies of an existing turn, whose prompt is the conversation up
//! to that turn's user message (plus, for continue, the reply itself: its last step's
//! unanswered calls are settled first).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use protocol::api::{
    AddModelRequest, Assistant, EditMessageRequest, ModelCapabilities, ProviderKind, ReplyRequest, StoredMessage,
    StreamOpenRequest, Topic,
};
use protocol::message::ToolState;
use protocol::tool::{PolicyDecision, ToolOutput};
use protocol::{
    ApiError, AttachReply, MessageId, MessageRole, MessageStatus, ModelRef, TopicId, TurnId, UiMessage, UiPart,
};
use providers::{ChatMessage, CompletionRequest, LanguageModel, ProviderConfig};
use store::tools::LedgerState;
use store::{Store, StoreError};
use streams::{Listener, PreparedExecution, PreparedTurn, ReplySlot, StreamManager, UserInput};

use crate::error::stream_error;
use crate::model_providers::Providers;
use crate::sessions::AgentSessions;
use crate::settings::Settings;
use crate::tools::{EngineGate, Tools};
use crate::topics::{DEFAULT_TOPIC_TITLE, auto_title};

/// Most models one turn may ask at once.
const MAX_MODELS: usize = 8;

/// What a reply stopped while waiting is told about its open calls.
pub(crate) const STOPPED_WHILE_WAITING: &str = "the user stopped the reply instead of answering";

/// What every reply of a turn shares: the topic's assistant, workspace and tools.
struct TurnSetup {
    topic: Topic,
    assistant: Option<Assistant>,
    workspace: Option<PathBuf>,
    tools: tools::ToolSet,
    defaults: HashMap<String, PolicyDecision>,
    /// How long a reply may stay silent: the user's setting as the turn starts.
    idle_timeout: std::time::Duration,
}

/// How a reply goes on from what it holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Continuation {
    /// A fresh reply (new turn, retry, added model).
    None,
    /// The user pressed Continue (after a stop, a stall, a crash, the tool-call limit, or
    /// the model's output limit).
    Continue,
    /// Every approval of the reply was answered.
    Resume,
}

/// Turn planning: what each reply of a new, retried, continued or resumed turn is asked,
/// by which model, with which tools.
pub(crate) struct Turns {
    store: Store,
    streams: StreamManager,
    /// For tools.
    http: reqwest::Client,
    retry: providers::RetryPolicy,
    providers: Arc<Providers>,
    tools: Arc<Tools>,
    settings: Arc<Settings>,
    sessions: Arc<AgentSessions>,
    /// Where servers' questions during a reply's calls wait for the user.
    questions: Arc<::tools::asks::OpenQuestions>,
}

impl Turns {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        store: Store,
        streams: StreamManager,
        http: reqwest::Client,
        retry: providers::RetryPolicy,
        providers: Arc<Providers>,
        tools: Arc<Tools>,
        settings: Arc<Settings>,
        sessions: Arc<AgentSessions>,
        questions: Arc<::tools::asks::OpenQuestions>,
    ) -> Self {
        Self { store, streams, http, retry, providers, tools, settings, sessions, questions }
    }

    /// Starts a new turn in the topic and subscribes `listener` to it.
    pub(crate) async fn open(&self, request: StreamOpenRequest, listener: Listener) -> Result<AttachReply, ApiError> {
        let turn = self.prepare_turn(request).await?;
        self.streams.open(turn, listener).await.map_err(stream_error)
    }

    /// Starts a prepared turn and subscribes `listener` to it.
    pub(crate) async fn start(&self, turn: PreparedTurn, listener: Listener) -> Result<AttachReply, ApiError> {
        self.streams.open(turn, listener).await.map_err(stream_error)
    }

    /// A new turn: the user's message, answered by one model or several side by side.
    pub(crate) async fn prepare_turn(&self, request: StreamOpenRequest) -> Result<PreparedTurn, ApiError> {
        if crate::sessions::is_session(&request.topic_id) {
            return self.sessions.prepare_session_turn(request).await;
        }
        let files = crate::attachments::attachment_parts(request.attachments.as_deref().unwrap_or_default())?;
        let topic = self.store.get_topic(&request.topic_id).await?;
        self.refuse_while_waiting(&topic).await?;
        let hub = self.tools.mcp();
        let resources =
            crate::resources::resource_parts(hub, request.mcp_resources.as_deref().unwrap_or_default()).await?;
        let mut parts = user_parts(&request.text, files, resources)?;
        let setup = self.turn_setup(topic).await?;
        let assistant_models = setup.assistant.as_ref().map(|a| a.models.clone()).unwrap_or_default();
        let models = match (request.models, request.model) {
            (Some(models), _) if !models.is_empty() => models,
            (_, Some(model)) => vec![model],
            _ if !assistant_models.is_empty() => assistant_models,
            _ => match setup.topic.model.clone() {
                Some(model) => vec![model],
                None => vec![self.default_model().await?],
            },
        };
        let history = self.store.active_path(&setup.topic.id).await?;
        parts.extend(crate::resources::updated_parts(hub, &history).await);
        if setup.topic.title == DEFAULT_TOPIC_TITLE && history.is_empty() {
            let text = request.text.trim();
            let first = if text.is_empty() {
                request.attachments.as_ref().and_then(|a| a.first()).map(|a| a.filename.as_str()).unwrap_or("Files")
            } else {
                text
            };
            let title = auto_title(first);
            if let Err(err) = self.store.update_topic(&setup.topic.id, Some(&title), None).await {
                tracing::warn!(error = %err, "could not title the topic");
            }
        }
        let user = UserInput { message_id: request.message_id.unwrap_or_default(), parts, edit_of: None };
        self.begin_turn(&setup, &history, distinct(models)?, user).await
    }

    /// An edited message: a new version of a user message (beside it, under the same
    /// parent), answered by the models that answered the original.
    pub(crate) async fn prepare_edit(&self, request: EditMessageRequest) -> Result<PreparedTurn, ApiError> {
        if crate::sessions::is_session(&request.topic_id) {
            return Err(ApiError::bad_request(
                "messageId",
                "an agent session's messages cannot be edited (the agent has already acted on them); send a new message instead",
            ));
        }
        let files = crate::attachments::attachment_parts(request.attachments.as_deref().unwrap_or_default())?;
        let topic = self.store.get_topic(&request.topic_id).await?;
        let edited = self.message_of(&topic.id, &request.message_id).await?;
        // The resources it carried stay attached (as they were read then).
        let resources =
            edited.message.parts.iter().filter(|p| crate::resources::attachment(p).is_some()).cloned().collect();
        let parts = user_parts(&request.text, files, resources)?;
        if edited.message.role != MessageRole::User {
            return Err(ApiError::bad_request(
                "messageId",
                "only your own messages can be edited; retry a reply instead",
            ));
        }
        self.refuse_while_waiting(&topic).await?;
        let setup = self.turn_setup(topic).await?;
        // The models of the original's columns, in their order.
        let original = self.store.path_through(&setup.topic.id, &edited.id).await?;
        let mut models: Vec<ModelRef> = Vec::new();
        for reply in original
            .iter()
            .filter(|m| m.message.role == MessageRole::Assistant && m.parent_id.as_ref() == Some(&edited.id))
        {
            if let Some(model) = reply.model.clone().filter(|m| !models.contains(m)) {
                models.push(model);
            }
        }
        if models.is_empty() {
            models.push(match setup.topic.model.clone() {
                Some(model) => model,
                None => self.default_model().await?,
            });
        }
        // The conversation the original continued: everything before its turn.
        let history = match &edited.parent_id {
            Some(parent) => self.store.path_through(&setup.topic.id, parent).await?,
            None => Vec::new(),
        };
        let user =
            UserInput { message_id: request.new_message_id.unwrap_or_default(), parts, edit_of: Some(edited.id) };
        self.begin_turn(&setup, &history, distinct(models)?, user).await
    }

    /// A turn whose user message continues `history`, one reply per model.
    async fn begin_turn(
        &self,
        setup: &TurnSetup,
        history: &[StoredMessage],
        models: Vec<ModelRef>,
        user: UserInput,
    ) -> Result<PreparedTurn, ApiError> {
        let message = UiMessage {
            id: user.message_id.to_string(),
            role: MessageRole::User,
            parts: user.parts.clone(),
            metadata: None,
        };
        let conversation: Vec<&UiMessage> = prompt_messages(history, None).chain([&message]).collect();
        let mut executions = Vec::with_capacity(models.len());
        for model in models {
            let execution = self
                .execution(setup, MessageId::new(), model, &conversation, ReplySlot::New, Continuation::None)
                .await?;
            executions.push(execution);
        }
        Ok(PreparedTurn { topic_id: setup.topic.id.clone(), turn_id: TurnId::new(), user: Some(user), executions })
    }

    /// A message of the topic (one of another topic is not found here).
    async fn message_of(&self, topic_id: &TopicId, message_id: &MessageId) -> Result<StoredMessage, ApiError> {
        match self.store.get_message(message_id).await {
            Ok(message) if &message.topic_id == topic_id => Ok(message),
            Ok(_) | Err(StoreError::NotFound { .. }) => Err(ApiError::not_found("message in this topic", message_id)),
            Err(err) => Err(err.into()),
        }
    }

    /// A reply waiting for the user's approval must be answered (or stopped) before the
    /// topic takes another message.
    async fn refuse_while_waiting(&self, topic: &Topic) -> Result<(), ApiError> {
        let waiting = self.store.list_approvals(Some(&topic.id), true).await?;
        if let Some(first) = waiting.first() {
            return Err(ApiError::conflict(format!(
                "a {} call in this topic is waiting for your approval; answer it or press Stop first",
                first.tool_name
            )));
        }
        Ok(())
    }

    async fn turn_setup(&self, topic: Topic) -> Result<TurnSetup, ApiError> {
        let assistant = match &topic.assistant_id {
            Some(id) => match self.store.get_assistant(id).await {
                Ok(assistant) => Some(assistant),
                Err(StoreError::NotFound { .. }) => None,
                Err(err) => return Err(err.into()),
            },
            None => None,
        };
        let workspace = topic
            .workspace
            .clone()
            .or_else(|| assistant.as_ref().and_then(|a| a.workspace.clone()))
            .map(PathBuf::from)
            // A folder that was moved or deleted since: file tools are left out, the chat works.
            .filter(|path| path.is_dir());
        let (tools, defaults) = self.tools.turn_tools(assistant.as_ref(), workspace.as_deref()).await?;
        let idle_timeout = self.settings.idle_timeout().await;
        Ok(TurnSetup { topic, assistant, workspace, tools, defaults, idle_timeout })
    }

    /// Generate one reply again from scratch (`Continuation::None`), or continue it
    /// after what it kept (`Continue`: a stopped, stalled or interrupted reply, one that
    /// reached the tool-call limit, or one the model's output limit cut short).
    pub(crate) async fn prepare_reply(
        &self,
        request: ReplyRequest,
        mode: Continuation,
    ) -> Result<PreparedTurn, ApiError> {
        if crate::sessions::is_session(&request.topic_id) {
            if mode != Continuation::Continue {
                return Err(ApiError::bad_request(
                    "messageId",
                    "an agent session's reply cannot be generated again (the agent has already acted); send a new message instead",
                ));
            }
            return self.sessions.prepare_session_reply(request).await;
        }
        self.prepare_existing_reply(request, mode).await
    }

    /// Continue a reply whose approvals were all answered.
    pub(crate) async fn prepare_resume(&self, request: ReplyRequest) -> Result<PreparedTurn, ApiError> {
        self.prepare_existing_reply(request, Continuation::Resume).await
    }

    async fn prepare_existing_reply(
        &self,
        request: ReplyRequest,
        mode: Continuation,
    ) -> Result<PreparedTurn, ApiError> {
        let store = &self.store;
        let topic = store.get_topic(&request.topic_id).await?;
        let reply = match self.message_of(&topic.id, &request.message_id).await {
            Ok(reply) if reply.message.role == MessageRole::Assistant => reply,
            Ok(_) | Err(_) => return Err(ApiError::not_found("reply", &request.message_id)),
        };
        let (Some(turn_id), Some(model), Some(user)) =
            (reply.turn_id.clone(), reply.model.clone(), reply.parent_id.clone())
        else {
            return Err(ApiError::bad_request("messageId", "this reply has no turn or model to run again"));
        };
        let waiting = reply.status == MessageStatus::Paused
            && reply.status_reason.as_deref() == Some(protocol::StatusReason::AwaitingApproval.as_str());
        let seen = reply.revision;
        match mode {
            Continuation::Continue if waiting => {
                return Err(ApiError::conflict(
                    "this reply is waiting for your approval of a tool call; answer it to go on",
                ));
            }
            Continuation::Continue if !can_continue(&reply) => {
                return Err(ApiError::bad_request(
                    "messageId",
                    "only a stopped, interrupted or cut-off reply can be continued; retry it instead",
                ));
            }
            Continuation::Resume if !waiting => {
                return Err(ApiError::conflict("this reply is not waiting for an approval any more"));
            }
            Continuation::None if waiting => {
                // Regenerating drops the open question: it is answered "no" first, and the
                // waiting version is stopped (it stays, as a version).
                self.stop_waiting_replies(&request.topic_id).await?;
            }
            _ => {}
        }
        let setup = self.turn_setup(topic).await?;
        // The conversation the reply answers: the path through its user message.
        let history = store.path_through(&request.topic_id, &user).await?;
        let mut conversation: Vec<&UiMessage> = prompt_messages(&history, Some(&turn_id)).collect();
        let (message_id, slot) = if mode == Continuation::None {
            (MessageId::new(), ReplySlot::Version)
        } else {
            conversation.push(&reply.message);
            (reply.id.clone(), ReplySlot::Continue { message: reply.message.clone(), seen })
        };
        let execution = self.execution(&setup, message_id, model, &conversation, slot, mode).await?;
        Ok(PreparedTurn { topic_id: request.topic_id, turn_id, user: None, executions: vec![execution] })
    }

    /// One more model answers an existing turn, in a new reply beside the others.
    pub(crate) async fn prepare_added_model(&self, request: AddModelRequest) -> Result<PreparedTurn, ApiError> {
        if crate::sessions::is_session(&request.topic_id) {
            return Err(ApiError::bad_request(
                "turnId",
                "an agent session has one agent; other models answer in chat topics",
            ));
        }
        let store = &self.store;
        let topic = store.get_topic(&request.topic_id).await?;
        let rows = store.list_messages(&request.topic_id).await?;
        let Some(user) =
            rows.iter().find(|m| m.turn_id.as_ref() == Some(&request.turn_id) && m.message.role == MessageRole::User)
        else {
            return Err(ApiError::not_found("turn", &request.turn_id));
        };
        // The stored turn is the truth even after the live one was evicted.
        if rows.iter().any(|m| {
            m.turn_id.as_ref() == Some(&request.turn_id)
                && m.message.role == MessageRole::Assistant
                && m.model.as_ref() == Some(&request.model)
        }) {
            return Err(ApiError::conflict(format!("{} is already answering in this turn", request.model.model)));
        }
        let setup = self.turn_setup(topic).await?;
        let history = store.path_through(&request.topic_id, &user.id).await?;
        let conversation: Vec<&UiMessage> = prompt_messages(&history, Some(&request.turn_id)).collect();
        let execution = self
            .execution(&setup, MessageId::new(), request.model, &conversation, ReplySlot::New, Continuation::None)
            .await?;
        Ok(PreparedTurn {
            topic_id: request.topic_id,
            turn_id: request.turn_id,
            user: None,
            executions: vec![execution],
        })
    }

    /// Everything the agent loop needs for one model's reply.
    async fn execution(
        &self,
        setup: &TurnSetup,
        message_id: MessageId,
        model_ref: ModelRef,
        conversation: &[&UiMessage],
        slot: ReplySlot,
        mode: Continuation,
    ) -> Result<PreparedExecution, ApiError> {
        let provider = match self.store.get_provider(&model_ref.provider_id).await {
            Ok(provider) => provider,
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::bad_request(
                    "model",
                    format!("no provider {} (was it removed?): pick another model", model_ref.provider_id),
                ));
            }
            Err(err) => return Err(err.into()),
        };
        let api_key = match provider.kind {
            ProviderKind::Demo => None,
            ProviderKind::OpenaiCompatible => self.providers.api_key(&provider.id)?,
        };
        let capabilities: ModelCapabilities = provider
            .capabilities
            .get(&model_ref.model)
            .copied()
            .unwrap_or_else(|| crate::capabilities::guess(provider.format, provider.kind, &model_ref.model));
        let mut config = ProviderConfig::new(
            provider.name.clone(),
            provider.base_url.clone(),
            api_key,
            self.providers.http().clone(),
        );
        config.retry = self.retry;
        let format = provider.format;
        let model: Arc<dyn LanguageModel> = providers::model_for(format, config);
        let tool_calling = if capabilities.tools { agent::ToolCalling::Native } else { agent::ToolCalling::Prompt };

        let open = match &slot {
            ReplySlot::Continue { message, .. } => Some(message),
            _ => None,
        };
        let options = agent::PromptOptions {
            format: format.as_str(),
            vision: capabilities.vision,
            open_message: open.map(|m| m.id.as_str()),
        };
        let mut messages: Vec<ChatMessage> = agent::build_prompt(conversation.iter().copied(), &options);
        let context_rounds_left = agent::context_rounds_left(conversation.iter().copied());
        if messages.iter().all(|m| m.role == providers::ChatRole::System) {
            return Err(ApiError::bad_request("text", "there is nothing to answer in this conversation"));
        }
        let mut system = Vec::new();
        if let Some(prompt) = setup.assistant.as_ref().map(|a| a.system_prompt.trim()).filter(|p| !p.is_empty()) {
            system.push(prompt.to_owned());
        }
        if let Some(prompt) = setup.topic.system_prompt.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
            system.push(prompt.to_owned());
        }
        if let Some(workspace) = &setup.workspace
            && setup.tools.iter().any(|t| tools::builtin::FILE_TOOLS.contains(&t.definition().name.as_str()))
        {
            system.push(format!(
                "You can work with the files in the user's workspace folder {} through your file tools; paths are relative to it.",
                workspace.display()
            ));
        }
        if let Some(instructions) = self.tools.mcp_instructions(&setup.tools) {
            system.push(instructions);
        }
        if !system.is_empty() {
            messages.insert(0, ChatMessage::system(system.join("\n\n")));
        }

        let (pending, waits, used, usage) = match (open, mode) {
            (Some(message), Continuation::Continue | Continuation::Resume) => {
                let pending = self.pending_calls(message).await?;
                let waits = self.answered_waits(&message.id, &pending).await?;
                let after_limit = mode == Continuation::Continue
                    && message.typed_metadata().status_reason.as_deref()
                        == Some(protocol::StatusReason::ToolLimit.as_str());
                // Continuing past the limit gives the reply a fresh allowance.
                let used = if after_limit { 0 } else { tool_part_count(message) };
                let usage = message.typed_metadata().usage.map(|u| providers::TokenUsage {
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                    reasoning_tokens: u.reasoning_tokens.unwrap_or(0),
                    cached_tokens: u.cached_tokens.unwrap_or(0),
                });
                (pending, waits, used, usage.unwrap_or_default())
            }
            _ => (Vec::new(), Vec::new(), 0, providers::TokenUsage::default()),
        };

        // A new call never takes an id the conversation already has (some servers number
        // their calls afresh in every reply): results are matched to calls, and their
        // context rounds counted, by id. A retried or continued reply's earlier calls
        // (its ledger rows, its stored parts) keep their ids to themselves too.
        let call_ids_of = |message: &UiMessage| -> Vec<String> {
            message
                .parts
                .iter()
                .filter_map(|part| match part {
                    UiPart::DynamicTool { tool_call_id, .. } => Some(tool_call_id.clone()),
                    _ => None,
                })
                .collect()
        };
        let mut used_call_ids: Vec<String> = conversation.iter().flat_map(|m| call_ids_of(m)).collect();
        if !matches!(slot, ReplySlot::New) {
            let ledger = self.store.calls_of_message(message_id.as_str()).await?;
            used_call_ids.extend(ledger.into_iter().map(|row| row.call_id));
            used_call_ids.extend(open.into_iter().flat_map(call_ids_of));
        }

        let mut completion =
            CompletionRequest { model: model_ref.model.clone(), messages, ..CompletionRequest::default() };
        let params = setup.topic.params.or(setup.assistant.as_ref().map(|a| a.params).unwrap_or_default());
        crate::model_params::apply(params, capabilities.reasoning, &mut completion);
        let gate = EngineGate {
            store: self.store.clone(),
            topic_id: setup.topic.id.clone(),
            message_id: message_id.clone(),
            defaults: setup.defaults.clone(),
        };
        let max_tool_calls =
            setup.assistant.as_ref().map(|a| a.max_tool_calls).unwrap_or(crate::assistants::DEFAULT_MAX_TOOL_CALLS);
        let agent_request = agent::TurnRequest::builder(model, completion, setup.idle_timeout)
            .tools(setup.tools.clone())
            .tool_calling(tool_calling)
            .gate(Arc::new(gate))
            .workspace(setup.workspace.clone())
            .http(self.http.clone())
            .vision(capabilities.vision)
            .questions(self.questions.clone())
            .max_tool_calls(max_tool_calls)
            .tool_calls_used(used)
            .pending(pending)
            .answered_waits(waits)
            .usage(usage)
            .used_call_ids(used_call_ids)
            .context_rounds_left(context_rounds_left)
            .feature_names(setup.assistant.as_ref().and_then(|a| a.features.clone()))
            .hook(Arc::new(crate::usage::ledger::LedgerHook {
                store: self.store.clone(),
                topic_id: setup.topic.id.to_string(),
                message_id: message_id.to_string(),
                provider_id: provider.id.to_string(),
                provider_name: provider.name.clone(),
                model: model_ref.model.clone(),
            }))
            .build();
        Ok(PreparedExecution {
            message_id,
            model_ref,
            provider_name: provider.name,
            runner: Box::new(agent_request),
            slot,
            idle_timeout: Some(setup.idle_timeout),
        })
    }

    /// The calls of a reply's last step that have no result yet, with what the ledger
    /// knows of each.
    async fn pending_calls(&self, message: &UiMessage) -> Result<Vec<turn::PendingCall>, ApiError> {
        let last_step = message.parts.rsplit(|p| matches!(p, UiPart::StepStart)).next().unwrap_or_default();
        let open: Vec<(&String, &String, Option<&serde_json::Value>)> = last_step
            .iter()
            .filter_map(|part| match part {
                UiPart::DynamicTool {
                    tool_name,
                    tool_call_id,
                    state: ToolState::InputAvailable | ToolState::ApprovalRequested | ToolState::ApprovalResponded,
                    input,
                    ..
                } => Some((tool_call_id, tool_name, input.as_ref())),
                _ => None,
            })
            .collect();
        if open.is_empty() {
            return Ok(Vec::new());
        }
        let ledger = self.store.calls_of_message(&message.id).await?;
        Ok(open
            .into_iter()
            .map(|(call_id, tool_name, input)| {
                let row = ledger.iter().find(|row| &row.call_id == call_id);
                let state = match row {
                    None => turn::PendingState::Unchecked,
                    Some(row) => match row.state {
                        LedgerState::Requested => match &row.approval_id {
                            Some(id) => turn::PendingState::Waiting { approval_id: id.clone() },
                            None => turn::PendingState::Unchecked,
                        },
                        LedgerState::Approved => turn::PendingState::Approved,
                        // With an approval the user said no (unless start-up recovery
                        // settled it), without one a rule did.
                        LedgerState::Denied => match &row.approval_id {
                            Some(_) if row.decided_by.as_deref() != Some(protocol::message::Decider::App.as_str()) => {
                                turn::PendingState::Denied { reason: row.reason.clone() }
                            }
                            _ => turn::PendingState::Refused {
                                reason: row.reason.clone().unwrap_or_else(|| "the approval policy refused it".into()),
                            },
                        },
                        LedgerState::Running => turn::PendingState::Interrupted,
                        LedgerState::Done => turn::PendingState::Done(
                            row.output.clone().and_then(|o| serde_json::from_value(o).ok()).unwrap_or_default(),
                        ),
                        LedgerState::Error => turn::PendingState::Done(ToolOutput {
                            is_error: true,
                            ..ToolOutput::text(row.error.clone().unwrap_or_else(|| "the call failed".into()))
                        }),
                    },
                };
                // The ledger holds the input that runs (the user may have edited it).
                let input = row.map(|r| r.input.clone()).or_else(|| input.cloned()).unwrap_or_default();
                turn::PendingCall { call_id: call_id.clone(), tool_name: tool_name.clone(), input, state }
            })
            .collect())
    }

    /// The answered questions of a continued reply's open calls, for their
    /// `approval_wait` spans.
    async fn answered_waits(
        &self,
        message_id: &str,
        pending: &[turn::PendingCall],
    ) -> Result<Vec<agent::AnsweredWait>, ApiError> {
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        Ok(answered_waits(self.store.approval_waits_of_message(message_id).await?, pending))
    }

    /// Stops one live reply of the topic; a reply that is not live is left as it is.
    pub(crate) async fn stop_reply(&self, request: ReplyRequest) -> Result<(), ApiError> {
        let topic = self.store.get_topic(&request.topic_id).await?;
        match self.message_of(&topic.id, &request.message_id).await {
            Ok(reply) if reply.message.role == MessageRole::Assistant => {}
            Ok(_) | Err(_) => return Err(ApiError::not_found("reply", &request.message_id)),
        }
        self.streams.abort_reply(&topic.id, &request.message_id).await;
        Ok(())
    }

    /// Stop on a topic whose reply waits for approvals: its questions are answered "no"
    /// and the reply is stopped. True if there was such a reply.
    pub(crate) async fn stop_waiting_replies(&self, topic_id: &TopicId) -> Result<bool, ApiError> {
        let messages = self.store.deny_pending_approvals(topic_id, STOPPED_WHILE_WAITING).await?;
        for message in &messages {
            self.store.stop_awaiting_reply(message).await?;
        }
        if !messages.is_empty() {
            self.streams.status().publish(topic_id, protocol::TopicStatus::Aborted);
        }
        Ok(!messages.is_empty())
    }

    /// The first provider's default model: what a topic without a model of its own uses.
    async fn default_model(&self) -> Result<ModelRef, ApiError> {
        let providers = self.store.list_providers().await?;
        providers.into_iter().next().map(|p| ModelRef { provider_id: p.id, model: p.default_model }).ok_or_else(|| {
            ApiError::bad_request("model", "no provider is configured: add one in Settings, or try the demo provider")
        })
    }
}

/// The user's message as parts: its text, checked files and read resources; refused
/// when all are empty.
fn user_parts(text: &str, files: Vec<UiPart>, resources: Vec<UiPart>) -> Result<Vec<UiPart>, ApiError> {
    let text = text.trim();
    if text.is_empty() && files.is_empty() && resources.is_empty() {
        return Err(ApiError::bad_request("text", "the message is empty"));
    }
    let mut parts = Vec::with_capacity(files.len() + resources.len() + 1);
    if !text.is_empty() {
        parts.push(UiPart::Text { text: text.to_owned(), state: Some(protocol::PartState::Done) });
    }
    parts.extend(files);
    parts.extend(resources);
    Ok(parts)
}

/// Continue picks up a paused reply (stopped, stalled, interrupted, at the tool-call
/// limit) and one that finished only because the output limit cut it short.
fn can_continue(reply: &StoredMessage) -> bool {
    match reply.status {
        MessageStatus::Paused => true,
        MessageStatus::Success => reply.status_reason.as_deref() == Some(protocol::StatusReason::Length.as_str()),
        _ => false,
    }
}

fn tool_part_count(message: &UiMessage) -> u32 {
    message.parts.iter().filter(|p| matches!(p, UiPart::DynamicTool { .. })).count() as u32
}

/// The conversation a model sees: each earlier turn's user message and one reply (the
/// first with something to show: text or tool calls), in order. With `upto`, stops at
/// that turn's user message.
fn prompt_messages<'a>(history: &'a [StoredMessage], upto: Option<&TurnId>) -> impl Iterator<Item = &'a UiMessage> {
    let mut out: Vec<&UiMessage> = Vec::new();
    let mut answered: Option<&TurnId> = None;
    for stored in history {
        let turn = stored.turn_id.as_ref();
        match stored.message.role {
            MessageRole::User => {
                out.push(&stored.message);
                if upto.is_some() && turn == upto {
                    break;
                }
            }
            MessageRole::Assistant => {
                let has_content = stored.message.parts.iter().any(|p| match p {
                    UiPart::Text { text, .. } => !text.trim().is_empty(),
                    UiPart::DynamicTool { .. } => true,
                    _ => false,
                });
                if has_content && (turn.is_none() || answered != turn) {
                    out.push(&stored.message);
                    answered = turn;
                }
            }
            MessageRole::System => out.push(&stored.message),
        }
    }
    out.into_iter()
}

/// A turn asks each model once, and not too many at a time.
pub(crate) fn distinct(models: Vec<ModelRef>) -> Result<Vec<ModelRef>, ApiError> {
    let mut out: Vec<ModelRef> = Vec::with_capacity(models.len());
    for model in models {
        if out.contains(&model) {
            return Err(ApiError::bad_request("models", format!("{model} is listed twice")));
        }
        out.push(model);
    }
    if out.len() > MAX_MODELS {
        return Err(ApiError::bad_request("models", format!("at most {MAX_MODELS} models can answer one message")));
    }
    Ok(out)
}

/// The waits of `pending` calls that have an answer. A wait whose times do not read is
/// left out of the trace.
fn answered_waits(waits: Vec<store::usage::ApprovalWait>, pending: &[turn::PendingCall]) -> Vec<agent::AnsweredWait> {
    waits
        .into_iter()
        .filter(|wait| pending.iter().any(|call| call.call_id == wait.call_id))
        .filter_map(|wait| {
            let requested_at = store::parse_timestamp(&wait.requested_at)?;
            let decided_at = store::parse_timestamp(wait.decided_at.as_deref()?)?;
            Some(agent::AnsweredWait {
                approval_id: wait.approval_id,
                call_id: wait.call_id,
                tool_name: wait.tool_name,
                decision: wait.state,
                requested_at: requested_at.into(),
                decided_at: decided_at.into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(call_id: &str, state: &str, decided_at: Option<&str>) -> store::usage::ApprovalWait {
        store::usage::ApprovalWait {
            approval_id: format!("ap-{call_id}"),
            call_id: call_id.into(),
            tool_name: "write".into(),
            state: state.into(),
            requested_at: "2026-11-27T08:00:00.000Z".into(),
            decided_at: decided_at.map(str::to_owned),
        }
    }

    #[test]
    fn only_the_answered_waits_of_open_calls_are_traced() {
        let open = |call_id: &str| turn::PendingCall {
            call_id: call_id.into(),
            tool_name: "write".into(),
            input: serde_json::json!({}),
            state: turn::PendingState::Approved,
        };
        let waits = vec![
            wait("c1", "approved", Some("2026-11-27T08:00:03.500Z")),
            wait("c2", "pending", None),
            wait("c3", "denied", Some("not a time")),
            wait("settled-before", "denied", Some("2026-11-27T08:00:01.000Z")),
        ];
        let answered = answered_waits(waits, &[open("c1"), open("c2"), open("c3")]);
        let [only] = &answered[..] else { panic!("one answered wait: {answered:?}") };
        assert_eq!((only.call_id.as_str(), only.decision.as_str()), ("c1", "approved"));
        assert_eq!(only.decided_at.duration_since(only.requested_at).unwrap(), std::time::Duration::from_millis(3_500));
    }
}
