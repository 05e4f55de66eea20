//! The loop: model → tool calls → results → model … until the model stops calling
//! tools, the user stops the turn, a call waits for approval, the tool-call limit is
//! reached, or a steer asks the turn to yield at a step boundary. Whether another round
//! follows a response is the features' answer (`tool-loop` while the model calls tools);
//! what each model call is sent passes through the features' prompt processing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use protocol::tool::ToolOutput;
use protocol::{ApiError, DataChunk, ErrorKind, FinishReason, UiChunk};
use providers::{
    ChatMessage, ChatRole, CompletionRequest, ContentPart, LanguageModel, ProviderError, ProviderErrorKind, StopReason,
    ToolResult, ToolSpec,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools::schema::InputSchema;
use tools::{ToolContext, ToolError, ToolSet};
use tracing::Instrument;

use crate::call_ids::CallIds;
use crate::features::{
    Feature, FeatureRegistry, PromptContext, ResponseContext, RoundAction, ToolCalling, UnknownFeature,
    default_features,
};
use crate::gate::{AllowAll, Allowed, CallRecord, GateCall, GateDecision, PendingCall, PendingState, ToolGate};
use crate::hooks::{ErrorDecision, Hooks, StepPlan, StepReport, ToolExecutionEnd, ToolExecutionStart};
use crate::prompt::{denial_text, model_content, refusal_text};
use crate::step::{StepEnd, StepInput, StepOutput, send_all, stream_step};
use crate::writer::PartWriter;
use crate::{ChunkSink, SinkClosed};

pub const REASON_USER_STOP: &str = "user_stop";
pub const REASON_STALLED: &str = "stalled";
/// The turn made as many tool calls as it may; the user can let it go on.
pub const REASON_TOOL_LIMIT: &str = "tool_limit";
/// A tool call waits for the user's decision.
pub const REASON_AWAITING_APPROVAL: &str = "awaiting_approval";
/// The turn yielded at a step boundary so a steering message can go next.
pub const REASON_STEERED: &str = "steered";
/// The model's output limit (`max_tokens`) cut the reply short: it is complete as far as
/// it went, and Continue can pick it up.
pub const REASON_LENGTH: &str = "length";

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
    /// The features this turn enables, by registered name (see [`crate::features`]);
    /// `None`: the defaults derived from `tool_calling` ([`crate::features::default_features`]).
    pub feature_names: Option<Vec<String>>,
    /// Features the caller made itself; they compose after the named ones.
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
            feature_names: None,
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

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Finished {
        reason: FinishReason,
    },
    /// Stopped before the end: `user_stop`, `stalled` or `tool_limit`.
    Paused {
        reason: String,
    },
    /// A tool call waits for the user; answering it continues the reply.
    AwaitingApproval,
    /// Yielded at a step boundary for a steering message.
    Steered,
    Failed {
        error: ApiError,
    },
}

fn paused(reason: &str) -> TurnOutcome {
    TurnOutcome::Paused { reason: reason.to_owned() }
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
        turn.plugins.hooks.on_start().await;
        let mut outcome = match turn.run(sink).await {
            Ok(reason) => TurnOutcome::Finished { reason },
            Err(stop) => stop.into(),
        };
        // Whatever happened, leave no part or step open.
        if send_all(sink, turn.writer.finish_step()).await.is_err() && matches!(outcome, TurnOutcome::Finished { .. }) {
            outcome = paused(REASON_USER_STOP);
        }
        if let TurnOutcome::Failed { error } = &outcome {
            let _ = send_all(sink, turn.writer.data(UiChunk::error_part(error))).await;
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        match &outcome {
            TurnOutcome::Paused { reason } if reason == REASON_USER_STOP || reason == REASON_STALLED => {
                turn.plugins.hooks.on_abort(reason).await
            }
            _ => {}
        }
        turn.plugins.hooks.on_finish(&outcome).await;
        let current = tracing::Span::current();
        current.record("steps", turn.step);
        current.record("chunks", turn.writer.chunks);
        outcome
    }
    .instrument(span)
    .await
}

/// Why the loop ended before the model was done. Every early exit is one of these,
/// returned with `?`, and becomes the turn's outcome in one place (`From<Stop>`).
#[derive(Debug)]
enum Stop {
    /// Stop was pressed, or nobody reads the chunks any more.
    ByUser,
    /// The model was silent longer than the idle timeout.
    Stalled,
    /// The step's calls would pass the tool-call cap.
    ToolLimit,
    /// A call waits for the user's decision.
    AwaitingApproval,
    /// A steering message waits at a step boundary.
    Steered,
    Failed(ApiError),
}

impl From<SinkClosed> for Stop {
    fn from(_: SinkClosed) -> Self {
        Stop::ByUser
    }
}

impl From<Stop> for TurnOutcome {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::ByUser => paused(REASON_USER_STOP),
            Stop::Stalled => paused(REASON_STALLED),
            Stop::ToolLimit => paused(REASON_TOOL_LIMIT),
            Stop::AwaitingApproval => TurnOutcome::AwaitingApproval,
            Stop::Steered => TurnOutcome::Steered,
            Stop::Failed(error) => TurnOutcome::Failed { error },
        }
    }
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

/// One turn in progress. What stays the same for every round is grouped by what uses it;
/// the rest is the turn's progress.
struct Turn {
    model: ModelCall,
    tools: ToolRunner,
    plugins: Plugins,
    budget: ToolBudget,
    context: Context,
    cancel: CancellationToken,
    /// Cancelled when a steering message arrives: the turn yields at its next step boundary.
    steer: CancellationToken,
    writer: PartWriter,
    /// Model calls made so far in this run.
    step: u32,
    call_ids: CallIds,
}

/// What every model call of the turn is made with.
struct ModelCall {
    model: Arc<dyn LanguageModel>,
    /// The request's settings; its messages are the context's.
    base: CompletionRequest,
    tool_calling: ToolCalling,
    idle_timeout: Duration,
}

/// What running the model's tool calls needs.
struct ToolRunner {
    set: ToolSet,
    /// Compiled input schemas, by tool name, made when a tool is first called.
    schemas: HashMap<String, Result<InputSchema, String>>,
    gate: Arc<dyn ToolGate>,
    workspace: Option<PathBuf>,
    http: reqwest::Client,
    /// Whether the model takes images (tool results with images).
    vision: bool,
}

/// The turn's features and every contributor's hooks (features' included).
struct Plugins {
    hooks: Hooks,
    features: Vec<Arc<dyn Feature>>,
    /// The configuration named a feature that does not exist: the turn fails before any
    /// model call.
    misconfigured: Option<UnknownFeature>,
}

/// How many tool calls the reply may still make.
struct ToolBudget {
    max: u32,
    used: u32,
}

/// What the model has seen and will see.
struct Context {
    /// The conversation in the native shape (features shape it when it is sent).
    messages: Vec<ChatMessage>,
    /// Results only a limited number of model calls see: how many more do, by call id.
    rounds_left: HashMap<String, u32>,
    /// Calls of the last step of a continued reply, to resolve before the next model call.
    pending: Vec<PendingCall>,
}

impl Plugins {
    /// The features the request's configuration enables (or the default ones), then the
    /// caller's own; the usage observer's hooks, then the features', then the caller's.
    fn new(request: &mut TurnRequest) -> Self {
        let mut hooks = std::mem::take(&mut request.hooks);
        hooks.add(crate::hooks::HookSource::Observer, Arc::new(crate::hooks::UsageObserver::new(request.usage)));
        let names = match request.feature_names.take() {
            Some(names) => names,
            None => default_features(request.tool_calling).into_iter().map(str::to_owned).collect(),
        };
        let (mut features, misconfigured) = match FeatureRegistry::builtin().build(&names) {
            Ok(features) => (features, None),
            Err(unknown) => {
                tracing::warn!(error = %unknown, "the turn's configuration names an unknown feature");
                (Vec::new(), Some(unknown))
            }
        };
        features.append(&mut request.features);
        for feature in &features {
            if let Some(feature_hooks) = feature.hooks() {
                hooks.add(crate::hooks::HookSource::Feature, feature_hooks);
            }
        }
        Self { hooks, features, misconfigured }
    }
}

impl Turn {
    fn new(mut request: TurnRequest, cancel: CancellationToken) -> Self {
        let plugins = Plugins::new(&mut request);
        let used = std::mem::take(&mut request.used_call_ids);
        let call_ids = CallIds::new(used.into_iter().chain(request.pending.iter().map(|p| p.call_id.clone())));
        let messages = std::mem::take(&mut request.completion.messages);
        Self {
            model: ModelCall {
                model: request.model,
                base: request.completion,
                tool_calling: request.tool_calling,
                idle_timeout: request.idle_timeout,
            },
            tools: ToolRunner {
                set: request.tools,
                schemas: HashMap::new(),
                gate: request.gate,
                workspace: request.workspace,
                http: request.http,
                vision: request.vision,
            },
            plugins,
            budget: ToolBudget { max: request.max_tool_calls.max(1), used: request.tool_calls_used },
            context: Context { messages, rounds_left: request.context_rounds_left, pending: request.pending },
            cancel,
            steer: request.steer,
            writer: PartWriter::new(request.part_offset),
            step: 0,
            call_ids,
        }
    }

    /// Model rounds until the features ask for no more (`Ok`, how the last response
    /// finished) or the turn stops early.
    async fn run(&mut self, sink: &mut impl ChunkSink) -> Result<FinishReason, Stop> {
        if let Some(unknown) = self.plugins.misconfigured.take() {
            return Err(Stop::Failed(ApiError::bad_request("features", unknown.to_string())));
        }
        // A continued reply first settles the calls its last step left open.
        if !self.context.pending.is_empty() {
            let calls: Vec<PhaseCall> =
                std::mem::take(&mut self.context.pending).into_iter().map(PhaseCall::Pending).collect();
            let results = self.tools_phase(calls, sink).await?;
            self.push_results(results);
            self.at_step_boundary()?;
        }
        let mut retries = 0;
        let mut invalid_rounds = 0;
        loop {
            if self.cancel.is_cancelled() {
                return Err(Stop::ByUser);
            }
            let plan = self.plan().await;
            sink.send(self.writer.start_step()).await?;
            let request = CompletionRequest { messages: plan.messages, tools: plan.tools, ..self.model.base.clone() };
            let input = StepInput {
                model: self.model.model.as_ref(),
                request,
                idle_timeout: self.model.idle_timeout,
                tool_calling: self.model.tool_calling,
                call_ids: &mut self.call_ids,
            };
            let output = stream_step(input, &self.cancel, sink, &mut self.writer).await;
            let finish = match &output.end {
                StepEnd::Completed(finish) => finish.clone(),
                StepEnd::Stopped => return Err(Stop::ByUser),
                StepEnd::Stalled => return Err(Stop::Stalled),
                StepEnd::Failed(error) => {
                    let error = crate::api_error(error.clone());
                    if !output.emitted
                        && retries < MAX_RETRIES
                        && self.plugins.hooks.on_error(&error).await == ErrorDecision::Retry
                    {
                        retries += 1;
                        tracing::info!(attempt = retries, error = %error, "a hook asked to retry the model call");
                        send_all(sink, self.writer.finish_step()).await?;
                        continue;
                    }
                    return Err(Stop::Failed(error));
                }
            };
            retries = 0;
            self.age_context();
            let calls = self.check_calls(&output);
            let chunks = self.announce_calls(&calls);
            send_all(sink, chunks).await?;
            let report = StepReport {
                step: self.step,
                text: output.text(),
                tool_calls: assistant_calls(&output.content, &calls),
                usage: output.usage,
                finish: finish.clone(),
            };
            let emitted = self.plugins.hooks.on_step_finish(&report).await;
            send_all(sink, emitted).await?;
            // A reply the provider's filter cut off did not end well, whatever text it has:
            // it fails (keeping that text) with a message that says to rephrase.
            if finish == StopReason::ContentFilter && calls.is_empty() {
                tracing::info!("the provider's content filter stopped the reply");
                return Err(Stop::Failed(content_filtered()));
            }
            let action = self.response_complete(&report);
            self.push_assistant(&output, &calls);
            self.step += 1;
            let called = !calls.is_empty();
            if called {
                self.run_calls(calls, &mut invalid_rounds, sink).await?;
            }
            let RoundAction::NextRound { messages } = action else {
                return Ok(crate::finish_reason(&finish));
            };
            self.context.messages.extend(messages);
            send_all(sink, self.writer.finish_step()).await?;
            if called {
                self.at_step_boundary()?;
            }
        }
    }

    /// Checks a step's calls against the limits, then decides, runs and reports them;
    /// their results join the conversation.
    async fn run_calls(
        &mut self,
        calls: Vec<PhaseCall>,
        invalid_rounds: &mut u32,
        sink: &mut impl ChunkSink,
    ) -> Result<(), Stop> {
        let all_invalid = calls.iter().all(|c| matches!(c, PhaseCall::Invalid { .. }));
        if all_invalid {
            *invalid_rounds += 1;
            if *invalid_rounds > 1 {
                return Err(Stop::Failed(ApiError::new(
                    ErrorKind::Provider,
                    "the model kept sending tool calls that do not fit the tools' schemas; try rephrasing, or another model",
                )));
            }
        } else {
            *invalid_rounds = 0;
        }
        let wanted = calls.iter().filter(|c| !matches!(c, PhaseCall::Invalid { .. })).count() as u32;
        if self.budget.used + wanted > self.budget.max {
            tracing::info!(used = self.budget.used, wanted, cap = self.budget.max, "tool-call limit reached");
            return Err(Stop::ToolLimit);
        }
        let results = self.tools_phase(calls, sink).await?;
        self.push_results(results);
        self.budget.used += wanted;
        Ok(())
    }

    /// The step boundary after tool results: stop or steer end the turn here.
    fn at_step_boundary(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::ByUser);
        }
        if self.steer.is_cancelled() {
            tracing::info!("yielding at a step boundary for a steering message");
            return Err(Stop::Steered);
        }
        Ok(())
    }

    /// The next model call: the conversation shaped by the features' prompt processing,
    /// then the `prepare_step` hooks.
    async fn plan(&self) -> StepPlan {
        let specs: Vec<ToolSpec> = self
            .tools
            .set
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
        let mut messages = self.context.messages.clone();
        let ctx = PromptContext {
            step: self.step,
            tools: &specs,
            tool_calling: self.model.tool_calling,
            rounds_left: &self.context.rounds_left,
        };
        for feature in &self.plugins.features {
            feature.process_prompts(&ctx, &mut messages);
        }
        let tools = if self.model.tool_calling == ToolCalling::Native { specs } else { Vec::new() };
        self.plugins.hooks.prepare_step(StepPlan { step: self.step, messages, tools }).await
    }

    /// Asks the features, in order, whether the turn goes on; the first that asks wins.
    fn response_complete(&self, report: &StepReport) -> RoundAction {
        let ctx = ResponseContext {
            step: report.step,
            text: &report.text,
            tool_calls: &report.tool_calls,
            finish: &report.finish,
        };
        for feature in &self.plugins.features {
            if let action @ RoundAction::NextRound { .. } = feature.response_complete(&ctx) {
                tracing::debug!(feature = feature.name(), "a feature asked for another round");
                return action;
            }
        }
        RoundAction::Done
    }

    /// One more model round has seen every message: count it down.
    fn age_context(&mut self) {
        for rounds in self.context.rounds_left.values_mut() {
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
            let Some(tool) = self.tools.set.get(&call.name) else {
                let names: Vec<String> = self.tools.set.iter().map(|t| t.definition().name.clone()).collect();
                out.push(invalid(format!("there is no tool named {}; the tools are: {}", call.name, names.join(", "))));
                continue;
            };
            let schema = self
                .tools
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
            self.context.messages.push(message);
        }
    }

    fn push_results(&mut self, results: Vec<(ToolResult, Option<u32>)>) {
        if results.is_empty() {
            return;
        }
        let mut message = Vec::with_capacity(results.len());
        for (result, rounds) in results {
            if let Some(rounds) = rounds {
                self.context.rounds_left.insert(result.call_id.clone(), rounds);
            }
            message.push(result);
        }
        self.context.messages.push(ChatMessage::tool_results(message));
    }

    /// Decides, runs and reports a step's calls, in the order the model made them. When
    /// any call needs the user, nothing of the step runs yet: the turn waits, and the
    /// whole step runs once every call is decided.
    async fn tools_phase(
        &mut self,
        calls: Vec<PhaseCall>,
        sink: &mut impl ChunkSink,
    ) -> Result<Vec<(ToolResult, Option<u32>)>, Stop> {
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
            send_all(sink, asks).await?;
            return Err(Stop::AwaitingApproval);
        }
        let mut results = Vec::with_capacity(settled.len());
        for call in settled {
            if self.cancel.is_cancelled() {
                return Err(Stop::ByUser);
            }
            let result = self.settle(call, sink).await?;
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
        let Some(tool) = self.tools.set.get(&tool_name).cloned() else {
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
        let state = match self.tools.gate.check(&gate_call).await {
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
        let (content, truncated) = model_content(&output, self.tools.vision);
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
            workspace: self.tools.workspace.clone(),
            http: self.tools.http.clone(),
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
        let Some(tool) = self.tools.set.get(tool_name).cloned() else {
            return Ok(error_output(format!("there is no tool named {tool_name}")));
        };
        let allowed = match self.tools.gate.begin(call_id).await {
            Ok(Some(allowed)) => allowed,
            Ok(None) => {
                return Ok(error_output("this call was already run once; it is not run again".into()));
            }
            Err(err) => return Ok(error_output(format!("the call could not be recorded, so it was not run: {err}"))),
        };
        let event =
            ToolExecutionStart { call_id: call_id.to_owned(), tool_name: tool_name.to_owned(), input: input.clone() };
        self.plugins.hooks.on_tool_execution_start(&event).await;
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
        if let Err(err) = self.tools.gate.finish(call_id, &record).await {
            tracing::error!(error = %err, "the outcome of a tool call could not be recorded");
        }
        let end = ToolExecutionEnd {
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            duration,
            error: output.is_error.then(|| output.text_content()),
        };
        self.plugins.hooks.on_tool_execution_end(&end).await;
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
