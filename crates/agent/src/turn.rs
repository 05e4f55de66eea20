//! The loop: model → tool calls → results → model … until the model stops calling
//! tools, the user stops the turn, a call waits for approval, the tool-call limit is
//! reached, or a steer asks the turn to yield at a step boundary. Whether another round
//! follows a response is the features' answer (`tool-loop` while the model calls tools);
//! what each model call is sent passes through the features' prompt processing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use protocol::{ApiError, FinishReason, StatusReason, UiChunk};
use providers::{
    ChatMessage, ChatRole, CompletionRequest, ContentPart, LanguageModel, ProviderError, ProviderErrorKind, StopReason,
    ToolResult, ToolSpec,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools::ToolSet;
use tools::schema::InputSchema;
use tracing::Instrument;
use turn::{AllowAll, ChunkSink, PartWriter, PendingCall, SinkClosed, ToolGate, TurnOutcome};

use crate::call_ids::CallIds;
use crate::features::{
    Feature, FeatureRegistry, PromptContext, ResponseContext, RoundAction, ToolCalling, UnknownFeature,
    default_features,
};
use crate::hooks::{ErrorDecision, Hooks, ModelCallEnd, ModelCallReport, StepPlan, StepReport};
use crate::step::{StepEnd, StepInput, StepOutput, send_all, stream_step};
use crate::waits::AnsweredWait;

mod calls;
mod questions;

use calls::{PhaseCall, phase_id};

/// The default cap on tool calls per turn.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 20;
/// How often a model call that failed may be repeated when a hook asks for it.
const MAX_RETRIES: u32 = 2;
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
    /// Where the questions servers ask during calls wait for the user's answer; `None`:
    /// they are refused.
    pub questions: Option<Arc<tools::asks::OpenQuestions>>,
    /// At most this many tool calls, counting `tool_calls_used`.
    pub max_tool_calls: u32,
    /// Calls this reply made before (a reply continued after an approval).
    pub tool_calls_used: u32,
    /// Calls of the last step of a continued reply, to resolve before the next model call.
    pub pending: Vec<PendingCall>,
    /// The questions of those calls that were answered while the reply was stopped: each
    /// becomes an `approval_wait` span (see [`crate::waits`]).
    pub answered_waits: Vec<AnsweredWait>,
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
            questions: None,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            tool_calls_used: 0,
            pending: Vec::new(),
            answered_waits: Vec::new(),
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

/// Builds a [`TurnRequest`] in one expression: [`TurnRequest::new`]'s defaults, then
/// whatever the caller sets.
pub struct TurnRequestBuilder(TurnRequest);

impl TurnRequest {
    /// A builder starting from [`TurnRequest::new`].
    pub fn builder(
        model: Arc<dyn LanguageModel>,
        completion: CompletionRequest,
        idle_timeout: Duration,
    ) -> TurnRequestBuilder {
        TurnRequestBuilder(Self::new(model, completion, idle_timeout))
    }
}

impl TurnRequestBuilder {
    pub fn tools(mut self, tools: ToolSet) -> Self {
        self.0.tools = tools;
        self
    }

    pub fn tool_calling(mut self, tool_calling: ToolCalling) -> Self {
        self.0.tool_calling = tool_calling;
        self
    }

    pub fn gate(mut self, gate: Arc<dyn ToolGate>) -> Self {
        self.0.gate = gate;
        self
    }

    pub fn workspace(mut self, workspace: Option<PathBuf>) -> Self {
        self.0.workspace = workspace;
        self
    }

    pub fn http(mut self, http: reqwest::Client) -> Self {
        self.0.http = http;
        self
    }

    pub fn vision(mut self, vision: bool) -> Self {
        self.0.vision = vision;
        self
    }

    pub fn questions(mut self, questions: Arc<tools::asks::OpenQuestions>) -> Self {
        self.0.questions = Some(questions);
        self
    }

    pub fn max_tool_calls(mut self, max_tool_calls: u32) -> Self {
        self.0.max_tool_calls = max_tool_calls;
        self
    }

    pub fn tool_calls_used(mut self, tool_calls_used: u32) -> Self {
        self.0.tool_calls_used = tool_calls_used;
        self
    }

    pub fn pending(mut self, pending: Vec<PendingCall>) -> Self {
        self.0.pending = pending;
        self
    }

    pub fn answered_waits(mut self, answered_waits: Vec<AnsweredWait>) -> Self {
        self.0.answered_waits = answered_waits;
        self
    }

    pub fn usage(mut self, usage: providers::TokenUsage) -> Self {
        self.0.usage = usage;
        self
    }

    pub fn used_call_ids(mut self, used_call_ids: Vec<String>) -> Self {
        self.0.used_call_ids = used_call_ids;
        self
    }

    pub fn context_rounds_left(mut self, context_rounds_left: HashMap<String, u32>) -> Self {
        self.0.context_rounds_left = context_rounds_left;
        self
    }

    /// The features this turn enables, by registered name; `None` (the default): the
    /// defaults derived from `tool_calling` (see [`TurnRequest::feature_names`]).
    pub fn feature_names(mut self, feature_names: Option<Vec<String>>) -> Self {
        self.0.feature_names = feature_names;
        self
    }

    /// Adds the caller's hooks (they run after the loop's own and the features').
    pub fn hook(mut self, hooks: Arc<dyn crate::AgentHooks>) -> Self {
        self.0.hooks.add(crate::HookSource::Caller, hooks);
        self
    }

    pub fn build(self) -> TurnRequest {
        self.0
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
        turn.plugins.hooks.on_start().await;
        let mut outcome = match turn.run(sink).await {
            Ok(reason) => TurnOutcome::Finished { reason },
            Err(stop) => stop.into(),
        };
        // Whatever happened, leave no part or step open.
        if send_all(sink, turn.writer.finish_step()).await.is_err() && matches!(outcome, TurnOutcome::Finished { .. }) {
            outcome = paused(StatusReason::UserStop);
        }
        if let TurnOutcome::Failed { error } = &outcome {
            let _ = send_all(sink, turn.writer.data(UiChunk::error_part(error))).await;
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        match &outcome {
            TurnOutcome::Paused { reason } if *reason == StatusReason::UserStop || *reason == StatusReason::Stalled => {
                turn.plugins.hooks.on_abort(reason.as_str()).await
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
            Stop::ByUser => paused(StatusReason::UserStop),
            Stop::Stalled => paused(StatusReason::Stalled),
            Stop::ToolLimit => paused(StatusReason::ToolLimit),
            Stop::AwaitingApproval => TurnOutcome::AwaitingApproval,
            Stop::Steered => TurnOutcome::Steered,
            Stop::Failed(error) => TurnOutcome::Failed { error },
        }
    }
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
    questions: Option<Arc<tools::asks::OpenQuestions>>,
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
    /// Their questions answered while the reply was stopped.
    answered_waits: Vec<AnsweredWait>,
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
                questions: request.questions,
            },
            plugins,
            budget: ToolBudget { max: request.max_tool_calls.max(1), used: request.tool_calls_used },
            context: Context {
                messages,
                rounds_left: request.context_rounds_left,
                pending: request.pending,
                answered_waits: request.answered_waits,
            },
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
            let span = tracing::info_span!("step", step = "resumed");
            span.in_scope(|| crate::waits::record(&std::mem::take(&mut self.context.answered_waits)));
            let results = self.tools_phase(calls, sink).instrument(span).await?;
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
            let request_messages = u32::try_from(request.messages.len()).unwrap_or(u32::MAX);
            let request_chars = crate::step::request_chars(&request.messages);
            // The span tree OTLP users see: turn → execution → agent → step → model_call / tool_call.
            let step_span = tracing::info_span!("step", step = self.step, attempt = retries);
            let call_span = tracing::info_span!(
                parent: &step_span,
                "model_call",
                model = %self.model.base.model,
                request_messages,
                request_chars,
                ttft_ms = tracing::field::Empty,
                duration_ms = tracing::field::Empty,
                input_tokens = tracing::field::Empty,
                output_tokens = tracing::field::Empty,
                finish = tracing::field::Empty,
            );
            let input = StepInput {
                model: self.model.model.as_ref(),
                request,
                idle_timeout: self.model.idle_timeout,
                tool_calling: self.model.tool_calling,
                call_ids: &mut self.call_ids,
            };
            let output = stream_step(input, &self.cancel, sink, &mut self.writer).instrument(call_span.clone()).await;
            let report = ModelCallReport {
                step: self.step,
                attempt: retries,
                request_messages,
                request_chars,
                started_at: output.timing.started_at,
                time_to_first_token: output.timing.time_to_first_token,
                duration: output.timing.duration,
                provider_retries: output.timing.provider_retries,
                usage: output.usage,
                end: match &output.end {
                    StepEnd::Completed(reason) => ModelCallEnd::Finished(reason.clone()),
                    StepEnd::Stopped => ModelCallEnd::Stopped,
                    StepEnd::Stalled => ModelCallEnd::Stalled,
                    StepEnd::Failed(error) => ModelCallEnd::Failed(error.message.clone()),
                },
            };
            record_call(&call_span, &report);
            drop(call_span);
            self.plugins.hooks.on_model_call(&report).await;
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
                self.run_calls(calls, &mut invalid_rounds, sink).instrument(step_span).await?;
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
}

/// A model call's facts on its span, for OTLP users.
fn record_call(span: &tracing::Span, report: &ModelCallReport) {
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if let Some(ttft) = report.time_to_first_token {
        span.record("ttft_ms", millis(ttft));
    }
    span.record("duration_ms", millis(report.duration));
    if let Some(usage) = report.usage {
        span.record("input_tokens", usage.input_tokens);
        span.record("output_tokens", usage.output_tokens);
    }
    span.record("finish", report.end.as_str());
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
