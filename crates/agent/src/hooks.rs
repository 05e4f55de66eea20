//! Hooks: code that watches or shapes a turn without being part of the loop.
//!
//! Contributions come from three sources and always run in this order: internal
//! observers (e.g. cumulative usage), per-request features, then the caller's hooks.
//! Composition rules, fixed:
//! - void hooks (`on_start`, `on_model_call`, `on_step_finish`, `on_tool_execution_start/end`,
//!   `on_finish`, `on_abort`) run one after another; a hook that fails is logged and the
//!   chain goes on;
//! - `prepare_step` is chained: each hook sees the plan the previous one returned (a
//!   failing hook leaves the plan as it was);
//! - `on_error`: every hook is asked; any `Retry` wins, the default is `Abort`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use protocol::{ApiError, UiChunk};
use providers::{ChatMessage, StopReason, TokenUsage, ToolCall, ToolSpec};
use serde_json::Value;
use turn::TurnOutcome;

/// What the next model call will be asked. `prepare_step` hooks may change it.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPlan {
    /// 0 for the first model call of this run.
    pub step: u32,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
}

/// What one model call produced.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    pub step: u32,
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<TokenUsage>,
    pub finish: StopReason,
}

/// One model call as it went, completed or not: what the usage ledger and the reply
/// inspector record. Every call the loop makes is reported once, retried attempts included.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCallReport {
    /// The model call's step in this run (0 for the first).
    pub step: u32,
    /// 0 for the first attempt at this step; a hook-asked retry counts up.
    pub attempt: u32,
    /// Messages sent, and their size in characters (text, reasoning, tool arguments and
    /// results; media counted by their encoded size).
    pub request_messages: u32,
    pub request_chars: u64,
    /// When the call was sent (wall clock).
    pub started_at: std::time::SystemTime,
    /// From sending to the first answer event (text, reasoning or a tool call).
    pub time_to_first_token: Option<Duration>,
    /// From sending to the end of the stream.
    pub duration: Duration,
    /// How often the provider retried before the first byte (rate limits, overload).
    pub provider_retries: u32,
    pub usage: Option<TokenUsage>,
    pub end: ModelCallEnd,
}

/// How a model call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelCallEnd {
    Finished(StopReason),
    /// Stop was pressed (or nobody read the chunks any more).
    Stopped,
    Stalled,
    Failed(String),
}

impl ModelCallEnd {
    /// A short word for the inspector: `stop`, `length`, `tool_calls`, `content_filter`,
    /// the provider's own reason, or `stopped`/`stalled`/`failed`.
    pub fn as_str(&self) -> &str {
        match self {
            ModelCallEnd::Finished(StopReason::Stop) => "stop",
            ModelCallEnd::Finished(StopReason::Length) => "length",
            ModelCallEnd::Finished(StopReason::ToolCalls) => "tool_calls",
            ModelCallEnd::Finished(StopReason::ContentFilter) => "content_filter",
            ModelCallEnd::Finished(StopReason::Other(other)) => other.as_str(),
            ModelCallEnd::Stopped => "stopped",
            ModelCallEnd::Stalled => "stalled",
            ModelCallEnd::Failed(_) => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolExecutionStart {
    pub call_id: String,
    pub tool_name: String,
    pub input: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolExecutionEnd {
    pub call_id: String,
    pub tool_name: String,
    pub duration: Duration,
    /// `None` when it succeeded, else the error shown to the model.
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorDecision {
    Retry,
    Abort,
}

/// Chunks a hook wants added to the reply (e.g. `message-metadata`).
#[derive(Debug, Default)]
pub struct Emit(pub(crate) Vec<UiChunk>);

impl Emit {
    pub fn chunk(&mut self, chunk: UiChunk) {
        self.0.push(chunk);
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct HookError(pub String);

/// One contributor's hooks; every method has a do-nothing default.
#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// Shown in logs when a hook fails.
    fn name(&self) -> &str;

    async fn on_start(&self) -> Result<(), HookError> {
        Ok(())
    }

    /// A new plan, or `None` to leave it as it is.
    async fn prepare_step(&self, _plan: &StepPlan) -> Result<Option<StepPlan>, HookError> {
        Ok(None)
    }

    async fn on_step_finish(&self, _step: &StepReport, _emit: &mut Emit) -> Result<(), HookError> {
        Ok(())
    }

    /// After every model call, whatever its end (before `on_step_finish` of a completed one).
    async fn on_model_call(&self, _call: &ModelCallReport) -> Result<(), HookError> {
        Ok(())
    }

    async fn on_tool_execution_start(&self, _event: &ToolExecutionStart) -> Result<(), HookError> {
        Ok(())
    }

    async fn on_tool_execution_end(&self, _event: &ToolExecutionEnd) -> Result<(), HookError> {
        Ok(())
    }

    async fn on_finish(&self, _outcome: &TurnOutcome) -> Result<(), HookError> {
        Ok(())
    }

    async fn on_abort(&self, _reason: &str) -> Result<(), HookError> {
        Ok(())
    }

    async fn on_error(&self, _error: &ApiError) -> ErrorDecision {
        ErrorDecision::Abort
    }
}

/// Where a contribution comes from; also its place in the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookSource {
    Observer,
    Feature,
    Caller,
}

/// Every contributor's hooks, folded into one with the rules above.
#[derive(Clone, Default)]
pub struct Hooks {
    contributors: Vec<(HookSource, Arc<dyn AgentHooks>)>,
}

impl Hooks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a contributor; it runs after every earlier one of its source and before any
    /// of a later source.
    pub fn add(&mut self, source: HookSource, hooks: Arc<dyn AgentHooks>) {
        let at = self.contributors.iter().position(|(s, _)| *s > source).unwrap_or(self.contributors.len());
        self.contributors.insert(at, (source, hooks));
    }

    pub fn is_empty(&self) -> bool {
        self.contributors.is_empty()
    }

    fn each(&self) -> impl Iterator<Item = &Arc<dyn AgentHooks>> {
        self.contributors.iter().map(|(_, h)| h)
    }

    pub async fn on_start(&self) {
        for hook in self.each() {
            logged(hook.name(), "on_start", hook.on_start().await);
        }
    }

    pub async fn prepare_step(&self, plan: StepPlan) -> StepPlan {
        let mut plan = plan;
        for hook in self.each() {
            match hook.prepare_step(&plan).await {
                Ok(Some(next)) => plan = next,
                Ok(None) => {}
                Err(err) => logged(hook.name(), "prepare_step", Err(err)),
            }
        }
        plan
    }

    pub async fn on_step_finish(&self, step: &StepReport) -> Vec<UiChunk> {
        let mut emit = Emit::default();
        for hook in self.each() {
            logged(hook.name(), "on_step_finish", hook.on_step_finish(step, &mut emit).await);
        }
        emit.0
    }

    pub async fn on_model_call(&self, call: &ModelCallReport) {
        for hook in self.each() {
            logged(hook.name(), "on_model_call", hook.on_model_call(call).await);
        }
    }

    pub async fn on_tool_execution_start(&self, event: &ToolExecutionStart) {
        for hook in self.each() {
            logged(hook.name(), "on_tool_execution_start", hook.on_tool_execution_start(event).await);
        }
    }

    pub async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) {
        for hook in self.each() {
            logged(hook.name(), "on_tool_execution_end", hook.on_tool_execution_end(event).await);
        }
    }

    pub async fn on_finish(&self, outcome: &TurnOutcome) {
        for hook in self.each() {
            logged(hook.name(), "on_finish", hook.on_finish(outcome).await);
        }
    }

    pub async fn on_abort(&self, reason: &str) {
        for hook in self.each() {
            logged(hook.name(), "on_abort", hook.on_abort(reason).await);
        }
    }

    /// Asks every hook; any `Retry` wins.
    pub async fn on_error(&self, error: &ApiError) -> ErrorDecision {
        let mut decision = ErrorDecision::Abort;
        for hook in self.each() {
            if hook.on_error(error).await == ErrorDecision::Retry {
                decision = ErrorDecision::Retry;
            }
        }
        decision
    }
}

fn logged(name: &str, hook: &str, result: Result<(), HookError>) {
    if let Err(err) = result {
        tracing::warn!(contributor = name, hook, error = %err, "a hook failed; the turn goes on");
    }
}

/// The internal observer that adds up token usage over the steps of a turn and reports
/// the running total as `message-metadata`.
pub struct UsageObserver {
    total: std::sync::Mutex<TokenUsage>,
}

impl UsageObserver {
    /// Starts from what the reply already used (a continued reply keeps counting).
    pub fn new(start: TokenUsage) -> Self {
        Self { total: std::sync::Mutex::new(start) }
    }
}

#[async_trait]
impl AgentHooks for UsageObserver {
    fn name(&self) -> &str {
        "usage"
    }

    async fn on_step_finish(&self, step: &StepReport, emit: &mut Emit) -> Result<(), HookError> {
        let Some(usage) = step.usage else { return Ok(()) };
        let total = {
            let mut total = self.total.lock().map_err(|_| HookError("usage total poisoned".into()))?;
            total.add(&usage);
            *total
        };
        let usage = protocol::message::Usage::from(total);
        emit.chunk(UiChunk::MessageMetadata { message_metadata: serde_json::json!({ "usage": usage }) });
        Ok(())
    }
}
