//! The loop: model → tool calls → results → model … until the model stops calling
//! tools, the user stops the turn, a call waits for approval, the tool-call limit is
//! reached, or a steer asks the turn to yield at a step boundary.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use protocol::tool::ToolOutput;
use protocol::{ApiError, DataChunk, ErrorKind, StatusReason, UiChunk};
use providers::{
    ChatMessage, ChatRole, CompletionRequest, ContentPart, LanguageModel, ProviderError, ProviderErrorKind, StopReason,
    ToolResult, ToolSpec,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools::schema::InputSchema;
use tools::{ToolContext, ToolError, ToolSet};
use tracing::Instrument;
use turn::{
    AllowAll, Allowed, CallRecord, ChunkSink, GateCall, GateDecision, PartWriter, PendingCall, PendingState,
    SinkClosed, ToolGate, TurnOutcome,
};
// The loop's names for the reasons it pauses with.
use protocol::StatusReason::{Stalled as REASON_STALLED, ToolLimit as REASON_TOOL_LIMIT, UserStop as REASON_USER_STOP};

use crate::call_ids::CallIds;
use crate::features::{Feature, PromptContext, PromptToolCalling, ResponseContext, RoundAction, ToolCalling};
use crate::hooks::{ErrorDecision, Hooks, StepPlan, StepReport, ToolExecutionEnd, ToolExecutionStart};
use crate::prompt::{denial_text, model_content, prompt_form, refusal_text};
use crate::step::{StepEnd, StepInput, StepOutput, send_all, stream_step};

/// The default cap on tool calls per turn.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 20;
/// How often a model call that failed may be repeated when a hook asks for it.
const MAX_RETRIES: u32 = 2;
/// How long a stopped or timed-out tool may take to wind down after its own cancellation
/// token fires (an MCP tool tells its server the call is cancelled) before it is dropped.
const TOOL_STOP_GRACE: Duration = Duration::from_secs(3);

/// One turn's input.
pub struct TurnRequest {
    pub model: Arc<dyn LanguageModel>,
    /// The conversation and model settings; `tools` is filled from [`TurnRequest::tools`].
    pub completion: CompletionRequest,
    pub tools: ToolSet,
    pub tool_calling: ToolCalling,
    pub gate: Arc<dyn ToolGate>,
    /// The folder file tools work in.
    pub workspace: Option<PathBuf>,
    pub http: reqwest::Client,
    /// Whether the model takes images (tool results with images).
    pub vision: bool,
    /// At most this many tool calls, counting `tool_calls_used`.
    pub max_tool_calls: u32,
    /// Calls this reply made before (a reply continued after an approval).
    pub tool_calls_used: u32,
    /// Calls of the last step of a continued reply, to resolve before the next model call.
    pub pending: Vec<PendingCall>,
    /// A reply that stays silent this long is cut off as `stalled`.
    pub idle_timeout: Duration,
    /// How many parts the message already has: new parts are numbered after them.
    pub part_offset: usize,
    pub hooks: Hooks,
    pub features: Vec<Arc<dyn Feature>>,
    /// Cancelled when a steering message arrives: the turn yields at its next step boundary.
    pub steer: CancellationToken,
    /// Tokens the reply used before (a continued reply keeps counting).
    pub usage: providers::TokenUsage,
    /// Stored results that only a limited number of model calls see, and how many more
    /// do (see [`crate::context_rounds_left`]); results of this run are counted as they come.
    pub context_rounds_left: HashMap<String, u32>,
    /// Tool-call ids this reply used before (a continued or retried reply: its stored
    /// calls and ledger rows). A new call never takes one of them.
    pub used_call_ids: Vec<String>,
}

impl TurnRequest {
    /// A plain chat turn: no tools, no approvals.
    pub fn new(model: Arc<dyn LanguageModel>, completion: CompletionRequest, idle_timeout: Duration) -> Self {
        Self {
            model,
            completion,
            tools: ToolSet::new(),
            tool_calling: ToolCalling::Native,
            gate: Arc::new(AllowAll),
            workspace: None,
            http: shared_http_client(),
            vision: true,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            tool_calls_used: 0,
            pending: Vec::new(),
            idle_timeout,
            part_offset: 0,
            hooks: Hooks::new(),
            features: Vec::new(),
            steer: CancellationToken::new(),
            usage: providers::TokenUsage::default(),
            used_call_ids: Vec::new(),
            context_rounds_left: HashMap::new(),
        }
    }
}

/// One HTTP client for the tools of turns whose caller brings none. Building a client
/// sets up a TLS context and a connection pool: too much to do per turn.
fn shared_http_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

fn paused(reason: StatusReason) -> TurnOutcome {
    TurnOutcome::Paused { reason }
}

/// The error a reply ends with when the provider's content filter stopped it (a finish
/// reason, not an HTTP error: OpenAI `content_filter`, Anthropic `refusal`, Gemini
/// `SAFETY`/`RECITATION`/…). Its code is `content_filtered`, like a request the filter refused.
fn content_filtered() -> ApiError {
    crate::api_error(ProviderError::new(
        ProviderErrorKind::ContentFiltered,
        "the provider's content filter stopped the reply — rephrase your message, or try another model",
    ))
}

/// Runs one turn to its end, writing chunks (after the caller's `start`) into `sink`.
pub async fn run_turn(request: TurnRequest, cancel: CancellationToken, sink: &mut impl ChunkSink) -> TurnOutcome {
    let span = tracing::info_span!("agent", model = %request.completion.model, steps = tracing::field::Empty, chunks = tracing::field::Empty);
    async move {
        let mut turn = Turn::new(request, cancel);
        turn.hooks.on_start().await;
        let mut outcome = turn.run(sink).await;
        // Whatever happened, leave no part or step open.
        if send_all(sink, turn.writer.finish_step()).await.is_err() && matches!(outcome, TurnOutcome::Finished { .. }) {
            outcome = paused(REASON_USER_STOP);
        }
        if let TurnOutcome::Failed { error } = &outcome {
            let _ = send_all(sink, turn.writer.data(UiChunk::error_part(error))).await;
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        match &outcome {
            TurnOutcome::Paused { reason } if *reason == REASON_USER_STOP || *reason == REASON_STALLED => {
                turn.hooks.on_abort(reason.as_str()).await
            }
            _ => {}
        }
        turn.hooks.on_finish(&outcome).await;
        let current = tracing::Span::current();
        current.record("steps", turn.step);
        current.record("chunks", turn.writer.chunks);
        outcome
    }
    .instrument(span)
    .await
}

/// A call on its way through the tools phase.
enum PhaseCall {
    /// Needs the gate's decision.
    Fresh {
        id: String,
        name: String,
        input: Value,
    },
    Pending(PendingCall),
    /// Unusable as sent: the model gets this error.
    Invalid {
        id: String,
        name: String,
        /// What the model sent: its arguments, or their raw text when they are not JSON.
        input: Value,
        error: String,
    },
}

struct Turn {
    model: Arc<dyn LanguageModel>,
    base: CompletionRequest,
    tools: ToolSet,
    schemas: HashMap<String, Result<InputSchema, String>>,
    tool_calling: ToolCalling,
    gate: Arc<dyn ToolGate>,
    workspace: Option<PathBuf>,
    http: reqwest::Client,
    vision: bool,
    max_tool_calls: u32,
    used: u32,
    pending: Vec<PendingCall>,
    idle_timeout: Duration,
    hooks: Hooks,
    features: Vec<Arc<dyn Feature>>,
    steer: CancellationToken,
    cancel: CancellationToken,
    writer: PartWriter,
    /// The conversation in the native shape (the prompt form is made when it is sent).
    conversation: Vec<ChatMessage>,
    /// Results only a limited number of model calls see: how many more do, by call id.
    rounds_left: HashMap<String, u32>,
    step: u32,
    call_ids: CallIds,
}

impl Turn {
    fn new(mut request: TurnRequest, cancel: CancellationToken) -> Self {
        let mut hooks = request.hooks;
        hooks.add(crate::hooks::HookSource::Observer, Arc::new(crate::hooks::UsageObserver::new(request.usage)));
        let mut features = std::mem::take(&mut request.features);
        if request.tool_calling == ToolCalling::Prompt && !request.tools.is_empty() {
            features.insert(0, Arc::new(PromptToolCalling));
        }
        for feature in &features {
            if let Some(feature_hooks) = feature.hooks() {
                hooks.add(crate::hooks::HookSource::Feature, feature_hooks);
            }
        }
        let used = std::mem::take(&mut request.used_call_ids);
        let call_ids = CallIds::new(used.into_iter().chain(request.pending.iter().map(|p| p.call_id.clone())));
        let conversation = std::mem::take(&mut request.completion.messages);
        let rounds_left = std::mem::take(&mut request.context_rounds_left);
        Self {
            model: request.model,
            base: request.completion,
            tools: request.tools,
            schemas: HashMap::new(),
            tool_calling: request.tool_calling,
            gate: request.gate,
            workspace: request.workspace,
            http: request.http,
            vision: request.vision,
            max_tool_calls: request.max_tool_calls.max(1),
            used: request.tool_calls_used,
            pending: request.pending,
            idle_timeout: request.idle_timeout,
            hooks,
            features,
            steer: request.steer,
            cancel,
            writer: PartWriter::new(request.part_offset),
            conversation,
            rounds_left,
            step: 0,
            call_ids,
        }
    }

    async fn run(&mut self, sink: &mut impl ChunkSink) -> TurnOutcome {
        // A continued reply first settles the calls its last step left open.
        if !self.pending.is_empty() {
            let calls: Vec<PhaseCall> = std::mem::take(&mut self.pending).into_iter().map(PhaseCall::Pending).collect();
            match self.tools_phase(calls, sink).await {
                Ok(results) => self.push_results(results),
                Err(outcome) => return outcome,
            }
            if let Some(outcome) = self.after_tools() {
                return outcome;
            }
        }
        let mut retries = 0;
        let mut invalid_rounds = 0;
        loop {
            if self.cancel.is_cancelled() {
                return paused(REASON_USER_STOP);
            }
            let plan = self.plan().await;
            if sink.send(self.writer.start_step()).await.is_err() {
                return paused(REASON_USER_STOP);
            }
            let request = CompletionRequest { messages: plan.messages, tools: plan.tools, ..self.base.clone() };
            let input = StepInput {
                model: self.model.as_ref(),
                request,
                idle_timeout: self.idle_timeout,
                tool_calling: self.tool_calling,
                call_ids: &mut self.call_ids,
            };
            let output = stream_step(input, &self.cancel, sink, &mut self.writer).await;
            let finish = match &output.end {
                StepEnd::Completed(finish) => finish.clone(),
                StepEnd::Stopped => return paused(REASON_USER_STOP),
                StepEnd::Stalled => return paused(REASON_STALLED),
                StepEnd::Failed(error) => {
                    let error = crate::api_error(error.clone());
                    if !output.emitted
                        && retries < MAX_RETRIES
                        && self.hooks.on_error(&error).await == ErrorDecision::Retry
                    {
                        retries += 1;
                        tracing::info!(attempt = retries, error = %error, "a hook asked to retry the model call");
                        if send_all(sink, self.writer.finish_step()).await.is_err() {
                            return paused(REASON_USER_STOP);
                        }
                        continue;
                    }
                    return TurnOutcome::Failed { error };
                }
            };
            retries = 0;
            self.age_context();
            let calls = self.check_calls(&output);
            let chunks = self.announce_calls(&calls);
            if send_all(sink, chunks).await.is_err() {
                return paused(REASON_USER_STOP);
            }
            let report = StepReport {
                step: self.step,
                text: output.text(),
                tool_calls: assistant_calls(&output.content, &calls),
                usage: output.usage,
                finish: finish.clone(),
            };
            let emitted = self.hooks.on_step_finish(&report).await;
            if send_all(sink, emitted).await.is_err() {
                return paused(REASON_USER_STOP);
            }
            // A reply the provider's filter cut off did not end well, whatever text it has:
            // it fails (keeping that text) with a message that says to rephrase.
            if finish == StopReason::ContentFilter && calls.is_empty() {
                tracing::info!("the provider's content filter stopped the reply");
                return TurnOutcome::Failed { error: content_filtered() };
            }
            let action = self.response_complete(&report);
            self.push_assistant(&output, &calls);
            self.step += 1;

            if calls.is_empty() {
                if let RoundAction::NextRound { messages } = action {
                    self.conversation.extend(messages);
                    if send_all(sink, self.writer.finish_step()).await.is_err() {
                        return paused(REASON_USER_STOP);
                    }
                    continue;
                }
                return TurnOutcome::Finished { reason: crate::finish_reason(&finish) };
            }

            let all_invalid = calls.iter().all(|c| matches!(c, PhaseCall::Invalid { .. }));
            if all_invalid {
                invalid_rounds += 1;
                if invalid_rounds > 1 {
                    return TurnOutcome::Failed {
                        error: ApiError::new(
                            ErrorKind::Provider,
                            "the model kept sending tool calls that do not fit the tools' schemas; try rephrasing, or another model",
                        ),
                    };
                }
            } else {
                invalid_rounds = 0;
            }
            let wanted = calls.iter().filter(|c| !matches!(c, PhaseCall::Invalid { .. })).count() as u32;
            if self.used + wanted > self.max_tool_calls {
                tracing::info!(used = self.used, wanted, cap = self.max_tool_calls, "tool-call limit reached");
                return paused(REASON_TOOL_LIMIT);
            }
            match self.tools_phase(calls, sink).await {
                Ok(results) => self.push_results(results),
                Err(outcome) => return outcome,
            }
            self.used += wanted;
            if send_all(sink, self.writer.finish_step()).await.is_err() {
                return paused(REASON_USER_STOP);
            }
            if let Some(outcome) = self.after_tools() {
                return outcome;
            }
        }
    }

    /// The step boundary after tool results: stop or steer end the turn here.
    fn after_tools(&self) -> Option<TurnOutcome> {
        if self.cancel.is_cancelled() {
            return Some(paused(REASON_USER_STOP));
        }
        if self.steer.is_cancelled() {
            tracing::info!("yielding at a step boundary for a steering message");
            return Some(TurnOutcome::Steered);
        }
        None
    }

    /// The next model call: the conversation (results past their rounds shortened), the
    /// features' prompt processing, then the `prepare_step` hooks.
    async fn plan(&self) -> StepPlan {
        let specs: Vec<ToolSpec> = self
            .tools
            .iter()
            .map(|tool| {
                let definition = tool.definition();
                ToolSpec {
                    name: definition.name.clone(),
                    description: definition.description.clone(),
                    input_schema: definition.input_schema.clone(),
                }
            })
            .collect();
        let mut messages: Vec<ChatMessage> =
            self.conversation.iter().map(|message| context_message(message, &self.rounds_left)).collect();
        if self.tool_calling == ToolCalling::Prompt {
            messages = prompt_form(messages);
        }
        let ctx = PromptContext { step: self.step, tools: &specs, tool_calling: self.tool_calling };
        for feature in &self.features {
            feature.process_prompts(&ctx, &mut messages);
        }
        let tools = if self.tool_calling == ToolCalling::Native { specs } else { Vec::new() };
        self.hooks.prepare_step(StepPlan { step: self.step, messages, tools }).await
    }

    fn response_complete(&self, report: &StepReport) -> RoundAction {
        let ctx = ResponseContext {
            step: report.step,
            text: &report.text,
            tool_calls: &report.tool_calls,
            finish: &report.finish,
        };
        for feature in &self.features {
            if let action @ RoundAction::NextRound { .. } = feature.response_complete(&ctx) {
                tracing::debug!(feature = feature.name(), "a feature asked for another round");
                return action;
            }
        }
        RoundAction::Done
    }

    /// One more model round has seen every message: count it down.
    fn age_context(&mut self) {
        for rounds in self.rounds_left.values_mut() {
            *rounds = rounds.saturating_sub(1);
        }
    }

    /// Checks the step's calls: known tool, usable arguments, schema.
    fn check_calls(&mut self, output: &StepOutput) -> Vec<PhaseCall> {
        let mut out = Vec::with_capacity(output.calls.len());
        for call in &output.calls {
            // What the model sent is kept (shown and stored): the arguments as parsed, or
            // their raw text when they are not JSON.
            let sent = match &call.arguments {
                Ok(arguments) => arguments.clone(),
                Err(_) => serde_json::from_str(&call.raw).unwrap_or_else(|_| Value::String(call.raw.clone())),
            };
            let invalid = |error: String| PhaseCall::Invalid {
                id: call.id.clone(),
                name: call.name.clone(),
                input: sent.clone(),
                error,
            };
            let arguments = match &call.arguments {
                Ok(arguments) => arguments.clone(),
                Err(error) => {
                    out.push(invalid(format!("{error}. Send the call again with a JSON object as arguments.")));
                    continue;
                }
            };
            let Some(tool) = self.tools.get(&call.name) else {
                let names: Vec<String> = self.tools.iter().map(|t| t.definition().name.clone()).collect();
                out.push(invalid(format!("there is no tool named {}; the tools are: {}", call.name, names.join(", "))));
                continue;
            };
            let schema = self
                .schemas
                .entry(call.name.clone())
                .or_insert_with(|| InputSchema::compile(&tool.definition().input_schema));
            let checked = match schema {
                Ok(schema) => schema.check(&arguments),
                // A tool whose own schema is broken is called anyway; the tool checks.
                Err(_) => Ok(()),
            };
            match checked {
                Ok(()) => out.push(PhaseCall::Fresh { id: call.id.clone(), name: call.name.clone(), input: arguments }),
                Err(problems) => out.push(invalid(format!(
                    "invalid arguments for {}: {problems}. Fix them and call the tool again.",
                    call.name
                ))),
            }
        }
        out
    }

    /// `tool-input-available` for usable calls, `tool-input-error` for the others.
    fn announce_calls(&mut self, calls: &[PhaseCall]) -> Vec<UiChunk> {
        calls
            .iter()
            .filter_map(|call| match call {
                PhaseCall::Fresh { id, name, input } => Some(UiChunk::ToolInputAvailable {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    input: input.clone(),
                    dynamic: Some(true),
                }),
                PhaseCall::Invalid { id, name, input, error } => Some(UiChunk::ToolInputError {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    input: input.clone(),
                    error_text: error.clone(),
                    dynamic: Some(true),
                }),
                PhaseCall::Pending(_) => None,
            })
            .map(|chunk| self.writer.plain(chunk))
            .collect()
    }

    /// The step's assistant message joins the conversation, with checked arguments.
    fn push_assistant(&mut self, output: &StepOutput, calls: &[PhaseCall]) {
        let mut content = output.content.clone();
        for part in &mut content {
            if let ContentPart::ToolCall(call) = part {
                call.arguments = match calls.iter().find(|c| phase_id(c) == call.id) {
                    Some(PhaseCall::Fresh { input, .. }) => input.clone(),
                    _ => output
                        .calls
                        .iter()
                        .find(|c| c.id == call.id)
                        .and_then(|c| c.arguments.clone().ok())
                        .unwrap_or(Value::Object(Default::default())),
                };
            }
        }
        let message = ChatMessage::new(ChatRole::Assistant, content);
        if !message.is_blank() {
            self.conversation.push(message);
        }
    }

    fn push_results(&mut self, results: Vec<(ToolResult, Option<u32>)>) {
        if results.is_empty() {
            return;
        }
        let mut message = Vec::with_capacity(results.len());
        for (result, rounds) in results {
            if let Some(rounds) = rounds {
                self.rounds_left.insert(result.call_id.clone(), rounds);
            }
            message.push(result);
        }
        self.conversation.push(ChatMessage::tool_results(message));
    }

    /// Decides, runs and reports a step's calls, in the order the model made them. When
    /// any call needs the user, nothing of the step runs yet: the turn waits, and the
    /// whole step runs once every call is decided.
    async fn tools_phase(
        &mut self,
        calls: Vec<PhaseCall>,
        sink: &mut impl ChunkSink,
    ) -> Result<Vec<(ToolResult, Option<u32>)>, TurnOutcome> {
        let mut settled: Vec<PendingCall> = Vec::with_capacity(calls.len());
        let mut asks: Vec<UiChunk> = Vec::new();
        let mut waiting = false;
        for call in calls {
            let pending = match call {
                PhaseCall::Pending(pending) if pending.state == PendingState::Unchecked => {
                    let PendingCall { call_id, tool_name, input, .. } = pending;
                    self.decide(call_id, tool_name, input, &mut asks).await
                }
                PhaseCall::Pending(pending) => pending,
                PhaseCall::Fresh { id, name, input } => self.decide(id, name, input, &mut asks).await,
                PhaseCall::Invalid { id, name, input, error } => PendingCall {
                    call_id: id,
                    tool_name: name,
                    input,
                    state: PendingState::Done(ToolOutput { is_error: true, ..ToolOutput::text(error) }),
                },
            };
            waiting |= matches!(pending.state, PendingState::Waiting { .. });
            settled.push(pending);
        }
        if waiting {
            let asks: Vec<UiChunk> = asks.into_iter().map(|c| self.writer.plain(c)).collect();
            if send_all(sink, asks).await.is_err() {
                return Err(paused(REASON_USER_STOP));
            }
            return Err(TurnOutcome::AwaitingApproval);
        }
        let mut results = Vec::with_capacity(settled.len());
        for call in settled {
            if self.cancel.is_cancelled() {
                return Err(paused(REASON_USER_STOP));
            }
            let result = self.settle(call, sink).await.map_err(|_| paused(REASON_USER_STOP))?;
            results.push(result);
        }
        Ok(results)
    }

    /// Asks the gate about a new call.
    async fn decide(
        &mut self,
        call_id: String,
        tool_name: String,
        input: Value,
        asks: &mut Vec<UiChunk>,
    ) -> PendingCall {
        let Some(tool) = self.tools.get(&tool_name).cloned() else {
            let error = format!("there is no tool named {tool_name}");
            return PendingCall { call_id, tool_name, input, state: PendingState::Done(error_output(error)) };
        };
        let annotations = tool.definition().annotations;
        let ctx = self.context(&call_id);
        let preview = if annotations.read_only { None } else { tool.preview(&input, &ctx).await };
        let caution = if annotations.read_only { tool.caution(&input, &ctx).await } else { None };
        let gate_call = GateCall {
            call_id: call_id.clone(),
            tool_name: tool_name.clone(),
            rule_input: tool.rule_input(&input, &ctx),
            input: input.clone(),
            annotations,
            preview,
            caution,
        };
        let state = match self.gate.check(&gate_call).await {
            Ok(GateDecision::Allow) => PendingState::Approved,
            Ok(GateDecision::Deny { reason }) => PendingState::Refused { reason },
            Ok(GateDecision::Ask { approval_id }) => {
                asks.push(UiChunk::ToolApprovalRequest {
                    approval_id: approval_id.clone(),
                    tool_call_id: call_id.clone(),
                });
                PendingState::Waiting { approval_id }
            }
            Err(err) => {
                tracing::error!(error = %err, tool = %tool_name, "the call could not be recorded; it is not run");
                PendingState::Done(error_output(format!("the call could not be recorded, so it was not run: {err}")))
            }
        };
        PendingCall { call_id, tool_name, input, state }
    }

    /// Runs or reports one decided call; the result for the model and how long it stays.
    async fn settle(
        &mut self,
        call: PendingCall,
        sink: &mut impl ChunkSink,
    ) -> Result<(ToolResult, Option<u32>), SinkClosed> {
        let PendingCall { call_id, tool_name, input, state } = call;
        let output = match state {
            PendingState::Approved => self.execute(&call_id, &tool_name, input, sink).await?,
            PendingState::Denied { reason } => {
                sink.send(self.writer.plain(UiChunk::ToolOutputDenied { tool_call_id: call_id.clone() })).await?;
                let text = denial_text(reason.as_deref());
                return Ok((ToolResult::text(call_id, tool_name, text, true), None));
            }
            PendingState::Refused { reason } => {
                sink.send(self.writer.plain(UiChunk::ToolOutputDenied { tool_call_id: call_id.clone() })).await?;
                let text = refusal_text(&reason);
                return Ok((ToolResult::text(call_id, tool_name, text, true), None));
            }
            // Ran before (its output, context rounds included, is from the ledger).
            PendingState::Done(output) => output,
            PendingState::Interrupted => error_output(
                "Colloquy stopped while this call was running; it is not run again (it may or may not have finished)"
                    .into(),
            ),
            // Never reached: waiting calls end the phase before anything settles.
            PendingState::Waiting { .. } | PendingState::Unchecked => error_output("the call was never decided".into()),
        };
        let rounds = output.context_rounds;
        let (content, truncated) = model_content(&output, self.vision);
        let chunk = if output.is_error && output.content.len() <= 1 && output.structured_content.is_none() {
            UiChunk::ToolOutputError {
                tool_call_id: call_id.clone(),
                error_text: output.text_content(),
                dynamic: Some(true),
            }
        } else {
            let shown = ToolOutput { truncated_for_model: truncated, ..output.clone() };
            UiChunk::ToolOutputAvailable {
                tool_call_id: call_id.clone(),
                output: serde_json::to_value(&shown).unwrap_or(Value::Null),
                dynamic: Some(true),
                preliminary: None,
            }
        };
        sink.send(self.writer.plain(chunk)).await?;
        Ok((ToolResult { call_id, name: tool_name, content, is_error: output.is_error }, rounds))
    }

    fn context(&self, call_id: &str) -> ToolContext {
        ToolContext {
            workspace: self.workspace.clone(),
            http: self.http.clone(),
            cancel: self.cancel.child_token(),
            progress: Arc::new(|_| {}),
            call_id: call_id.to_owned(),
            allowed_by_user: false,
        }
    }

    /// Runs an approved call at most once: the gate's `begin` is the only way in. Its
    /// progress reaches the UI as transient `data-tool-progress` chunks.
    async fn execute(
        &mut self,
        call_id: &str,
        tool_name: &str,
        input: Value,
        sink: &mut impl ChunkSink,
    ) -> Result<ToolOutput, SinkClosed> {
        let Some(tool) = self.tools.get(tool_name).cloned() else {
            return Ok(error_output(format!("there is no tool named {tool_name}")));
        };
        let allowed = match self.gate.begin(call_id).await {
            Ok(Some(allowed)) => allowed,
            Ok(None) => {
                return Ok(error_output("this call was already run once; it is not run again".into()));
            }
            Err(err) => return Ok(error_output(format!("the call could not be recorded, so it was not run: {err}"))),
        };
        let event =
            ToolExecutionStart { call_id: call_id.to_owned(), tool_name: tool_name.to_owned(), input: input.clone() };
        self.hooks.on_tool_execution_start(&event).await;
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = self.context(call_id);
        ctx.allowed_by_user = allowed == Allowed::ByUser;
        ctx.progress = Arc::new(move |progress| {
            let _ = progress_tx.send(progress);
        });
        // Tokio's clock, so a paused test clock measures it too.
        let started = tokio::time::Instant::now();
        let span = tracing::info_span!("tool_call", tool = %tool_name, call_id = %call_id);
        let result = async {
            let call = std::panic::AssertUnwindSafe(tool.execute(input, &ctx)).catch_unwind();
            tokio::pin!(call);
            let deadline = tokio::time::sleep(tool.timeout());
            tokio::pin!(deadline);
            // Ending the call: its token is cancelled first and the tool gets a moment to
            // act on it, rather than being dropped mid-await (which would leave an MCP
            // server running the call).
            let stop_tool = |call| {
                ctx.cancel.cancel();
                tokio::time::timeout(TOOL_STOP_GRACE, call)
            };
            loop {
                tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => {
                        let _ = stop_tool(&mut call).await;
                        break Err(ToolError::Cancelled);
                    }
                    Some(progress) = progress_rx.recv() => {
                        let chunk = UiChunk::Data(DataChunk {
                            kind: "data-tool-progress".into(),
                            id: Some(call_id.to_owned()),
                            data: serde_json::json!({
                                "toolCallId": call_id,
                                "progress": progress.progress,
                                "total": progress.total,
                                "message": progress.message,
                            }),
                            transient: Some(true),
                        });
                        if sink.send(chunk).await.is_err() {
                            let _ = stop_tool(&mut call).await;
                            break Err(ToolError::Cancelled);
                        }
                    }
                    _ = &mut deadline => {
                        let _ = stop_tool(&mut call).await;
                        break Err(ToolError::TimedOut(tool.timeout()));
                    }
                    result = &mut call => break match result {
                        Ok(result) => result,
                        Err(panic) => Err(ToolError::Failed(format!("the tool crashed: {}", panic_message(&panic)))),
                    },
                }
            }
        }
        .instrument(span)
        .await;
        let duration = started.elapsed();
        let (output, record) = match result {
            Ok(mut output) => {
                // How long it stays in the context travels with it (stored, and in the ledger).
                output.context_rounds = output.context_rounds.or(tool.context_rounds());
                let record = CallRecord::Done(output.clone());
                (output, record)
            }
            Err(error) => {
                let message = error.to_string();
                (error_output(message.clone()), CallRecord::Error(message))
            }
        };
        if let Err(err) = self.gate.finish(call_id, &record).await {
            tracing::error!(error = %err, "the outcome of a tool call could not be recorded");
        }
        let end = ToolExecutionEnd {
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            duration,
            error: output.is_error.then(|| output.text_content()),
        };
        self.hooks.on_tool_execution_end(&end).await;
        Ok(output)
    }
}

fn phase_id(call: &PhaseCall) -> &str {
    match call {
        PhaseCall::Fresh { id, .. } | PhaseCall::Invalid { id, .. } => id,
        PhaseCall::Pending(p) => &p.call_id,
    }
}

/// The calls of a step as the model made them, with checked arguments.
fn assistant_calls(content: &[ContentPart], calls: &[PhaseCall]) -> Vec<providers::ToolCall> {
    content
        .iter()
        .filter_map(|part| match part {
            ContentPart::ToolCall(call) => Some(providers::ToolCall {
                arguments: match calls.iter().find(|c| phase_id(c) == call.id) {
                    Some(PhaseCall::Fresh { input, .. }) => input.clone(),
                    _ => Value::Null,
                },
                ..call.clone()
            }),
            _ => None,
        })
        .collect()
}

fn error_output(message: String) -> ToolOutput {
    ToolOutput { is_error: true, ..ToolOutput::text(message) }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// A conversation message as the next model call sees it: results whose rounds are used
/// up are replaced by a note.
fn context_message(message: &ChatMessage, rounds_left: &HashMap<String, u32>) -> ChatMessage {
    let expired = |result: &ToolResult| rounds_left.get(&result.call_id) == Some(&0);
    if !message.content.iter().any(|part| matches!(part, ContentPart::ToolResult(r) if expired(r))) {
        return message.clone();
    }
    let content = message
        .content
        .iter()
        .map(|part| match part {
            ContentPart::ToolResult(result) if expired(result) => ContentPart::ToolResult(ToolResult {
                content: vec![ContentPart::text(format!(
                    "[this result of {} was removed from the context to save space; the user still sees it]",
                    result.name
                ))],
                ..result.clone()
            }),
            other => other.clone(),
        })
        .collect();
    ChatMessage::new(message.role, content)
}
