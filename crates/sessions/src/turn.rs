//! One agent-session turn as a reply: the runtime's events become UI chunks; its
//! permission prompts become approval cards (through the same gate as chat tools); a
//! steering message goes in at a tool boundary, after which the reply ends and the
//! runtime's turn goes on in the next reply (the transcript reads in order).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use protocol::tool::{ToolAnnotations, ToolOutput};
use protocol::{ApiError, DataChunk, ErrorKind, FinishReason, UiChunk};
use serde_json::{Value, json};
use streams::ChunkSender;
use turn::{CallRecord, ChunkSink, GateCall, GateDecision, PartWriter, RunContext, ToolGate, TurnOutcome, TurnRunner};

use crate::driver::{Driver, DriverError, DriverEvent, PermissionAnswer, PromptFile, SessionSpec};
use crate::slot::{Slot, State};

/// Where a session's resume tokens are kept. The turn awaits each save before it reads
/// on, so a token the runtime announced is stored before the turn can end (or the app
/// can be closed) on top of it.
#[async_trait::async_trait]
pub trait TokenStore: Send + Sync {
    /// Stores the newest token; an error is reported and the turn goes on (the reply's
    /// metadata still carries the token).
    async fn save(&self, token: &str) -> Result<(), String>;

    /// What the agent said the turn used, when it ended (for the usage ledger); an error is
    /// reported and the turn goes on. Nothing is kept by default.
    async fn turn_usage(&self, _usage: &AgentUsage) -> Result<(), String> {
        Ok(())
    }
}

/// One agent turn's usage as the agent reported it (its own total over its model calls).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// In US dollars (Claude Code's `total_cost_usd`).
    pub cost_usd: Option<f64>,
    /// From the start of the reply to the agent's result.
    pub duration: std::time::Duration,
    /// When the reply started.
    pub started_at: std::time::SystemTime,
    /// Why the turn failed, when it did.
    pub error: Option<String>,
    /// Ended by an interrupt (Stop).
    pub interrupted: bool,
}

/// What a turn needs from the host that started it.
pub(crate) trait TurnHost: Send + Sync {
    /// The turn let go of the session (its state is unlocked): the idle timer starts.
    fn turn_ended(&self, slot: &Arc<Slot>);
}

pub(crate) struct SessionTurn {
    pub(crate) host: Arc<dyn TurnHost>,
    /// The runtime's driver, to connect (or reconnect, resuming) the session.
    pub(crate) driver: Arc<dyn Driver>,
    pub(crate) slot: Arc<Slot>,
    pub(crate) spec: SessionSpec,
    pub(crate) prompt: String,
    /// Files sent with the prompt (checked against the runtime's capabilities before).
    pub(crate) files: Vec<PromptFile>,
    pub(crate) resume_token: Option<String>,
    pub(crate) gate: Arc<dyn ToolGate>,
    pub(crate) tokens: Arc<dyn TokenStore>,
}

#[async_trait::async_trait]
impl TurnRunner<ChunkSender> for SessionTurn {
    async fn run(self: Box<Self>, context: RunContext, sink: &mut ChunkSender) -> TurnOutcome {
        self.run_with(context, sink).await
    }
}

impl SessionTurn {
    /// The turn, writing into any sink (the stream manager's, or a test's).
    pub(crate) async fn run_with<S: ChunkSink>(self, context: RunContext, sink: &mut S) -> TurnOutcome {
        let slot = self.slot.clone();
        let mut state = slot.state.lock().await;
        slot.touch();
        let mut writer = PartWriter::new(context.part_offset);
        let outcome = Turn {
            run: &self,
            context: &context,
            sink,
            writer: &mut writer,
            state: &mut state,
            started: Started::now(),
        }
        .drive()
        .await;
        let outcome = match outcome {
            Ok(outcome) | Err(outcome) => outcome,
        };
        // Unless the reply was split by a steering message (whose turn goes on next),
        // steering messages that did not make it in are the inbox's from now on.
        if !matches!(outcome, TurnOutcome::Steered)
            && slot.end_turn()
            && matches!(outcome, TurnOutcome::Finished { .. })
        {
            // The inbox starts it next: say so where the turn ended. A runtime that takes
            // no message mid-turn had it queued from the start.
            let state = if self.driver.steers_mid_turn() { "undelivered" } else { "queued" };
            for chunk in writer.data(data("data-steer", None, json!({ "state": state }))) {
                let _ = sink.send(chunk).await;
            }
        }
        // Stopped by Interrupt: the user's message goes next, now (not through the inbox).
        if slot.take_interrupting()
            && matches!(outcome, TurnOutcome::Paused { reason: protocol::StatusReason::UserStop })
        {
            for chunk in writer.data(data("data-steer", None, json!({ "state": "interrupted" }))) {
                let _ = sink.send(chunk).await;
            }
        }
        if let TurnOutcome::Failed { error } = &outcome {
            for chunk in writer.data(UiChunk::error_part(error)) {
                let _ = sink.send(chunk).await;
            }
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        for chunk in writer.finish_step() {
            let _ = sink.send(chunk).await;
        }
        drop(state);
        self.host.turn_ended(&slot);
        outcome
    }
}

/// A live connection for the session in `state`: the warm one, or a new one (resuming the
/// kept token, else `resume`). True when it is new. Used by a turn, and by the host to learn
/// what the runtime takes in a prompt before a turn is admitted.
pub(crate) async fn connect(
    state: &mut State,
    slot: &Slot,
    driver: &dyn Driver,
    spec: &SessionSpec,
    resume: Option<&str>,
) -> Result<bool, DriverError> {
    let usable = state.connection.as_ref().is_some_and(|c| !c.is_closed()) && state.connected_as.as_ref() == Some(spec);
    if usable {
        return Ok(false);
    }
    if let Some(connection) = state.connection.take() {
        connection.close().await;
    }
    state.connected_as = None;
    let token = state.resume_token.clone().or_else(|| resume.map(str::to_owned));
    let connection = driver.connect(spec, token.as_deref()).await?;
    let control = connection.control();
    state.connection = Some(connection);
    state.connected_as = Some(spec.clone());
    let wanted = match slot.modes.lock() {
        Ok(mut modes) => {
            modes.control = control.clone();
            modes.wanted.take()
        }
        Err(_) => None,
    };
    // A mode chosen while no connection was live: switched to before the prompt.
    if let (Some(mode), Some(control)) = (wanted, control)
        && let Err(error) = control.set_mode(&mode).await
    {
        tracing::warn!(mode, error = %error, "the agent did not switch to the mode chosen while it was away");
    }
    Ok(true)
}

fn failed(code: &str, message: impl Into<String>) -> TurnOutcome {
    TurnOutcome::Failed {
        error: ApiError {
            kind: ErrorKind::Provider,
            message: message.into(),
            retryable: true,
            field: None,
            code: Some(code.to_owned()),
        },
    }
}

fn stopped() -> TurnOutcome {
    TurnOutcome::Paused { reason: protocol::StatusReason::UserStop }
}

/// The model is told this when the user denies a permission prompt.
fn denial(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("The user denied this tool call. Their reason: {reason}"),
        None => "The user denied this tool call.".to_owned(),
    }
}

struct Turn<'a, S> {
    run: &'a SessionTurn,
    context: &'a RunContext,
    sink: &'a mut S,
    writer: &'a mut PartWriter,
    state: &'a mut State,
    started: Started,
}

/// When the reply started: the wall clock for the ledger, tokio's clock for its duration.
struct Started {
    at: std::time::SystemTime,
    instant: tokio::time::Instant,
}

impl Started {
    fn now() -> Self {
        Self { at: std::time::SystemTime::now(), instant: tokio::time::Instant::now() }
    }
}

/// What the turn knows of each tool call it has shown.
#[derive(Default)]
struct Calls {
    /// Block index → tool call id, while its input streams.
    by_block: HashMap<u32, String>,
    shown: HashSet<String>,
    denied: HashSet<String>,
    running: HashSet<String>,
}

type Step<T> = Result<T, TurnOutcome>;

impl<S: ChunkSink> Turn<'_, S> {
    async fn send(&mut self, chunks: Vec<UiChunk>) -> Step<()> {
        for chunk in chunks {
            if self.sink.send(chunk).await.is_err() {
                return Err(stopped());
            }
        }
        Ok(())
    }

    async fn drive(&mut self) -> Step<TurnOutcome> {
        let delivered = self.run.slot.begin_turn(&self.run.prompt);
        let mut continuing = self.state.continuing && delivered;
        if self.state.continuing && !continuing {
            // The runtime's turn went on with a steering message whose reply never
            // started (something else was sent first): end it, so this prompt starts a
            // turn of its own.
            self.close().await;
        }
        self.state.continuing = false;
        if self.connect().await? {
            // A new connection has no turn to go on with.
            continuing = false;
        }
        if !continuing {
            let sent = match self.state.connection.as_mut() {
                Some(connection) => connection.send_with(&self.run.prompt, &self.run.files).await,
                None => Err(DriverError::Failed("no connection".into())),
            };
            if let Err(error) = sent {
                self.state.connection = None;
                return Err(failed("agent", error.to_string()));
            }
        }
        let start = self.writer.start_step();
        self.send(vec![start]).await?;
        let mut calls = Calls::default();
        let mut interrupting = false;
        let mut steered = false;
        let mut steps = 0;
        let mut compactions = 0;
        let mut planned = false;
        loop {
            let event = {
                let Some(connection) = self.state.connection.as_mut() else {
                    return Err(failed("agent", "the session lost its connection"));
                };
                tokio::select! {
                    biased;
                    _ = self.context.cancel.cancelled(), if !interrupting => {
                        interrupting = true;
                        if let Err(error) = connection.interrupt().await {
                            tracing::warn!(error = %error, "could not interrupt the agent; closing it");
                            self.close().await;
                            return Ok(stopped());
                        }
                        continue;
                    }
                    event = connection.next_event() => event,
                }
            };
            let Some(event) = event else {
                let said = self.diagnostics().await;
                self.close().await;
                if interrupting {
                    return Ok(stopped());
                }
                let name = self.run.driver.name().to_owned();
                return Ok(failed(
                    "agent",
                    format!("{name} stopped unexpectedly during the turn; send a message to start it again.{said}"),
                ));
            };
            match event {
                DriverEvent::SessionStarted { resume_token } => self.token(resume_token).await?,
                DriverEvent::ModelCallStarted => {
                    if steered {
                        // The steering message is in; what the agent does next is the
                        // next reply's (after the user's message in the transcript).
                        self.state.continuing = true;
                        return Ok(TurnOutcome::Steered);
                    }
                    steps += 1;
                    if steps > 1 {
                        let mut chunks = self.writer.finish_step();
                        chunks.push(self.writer.start_step());
                        self.send(chunks).await?;
                    }
                }
                DriverEvent::TextDelta { text, .. } => {
                    let chunks = self.writer.text(text);
                    self.send(chunks).await?;
                }
                DriverEvent::ThinkingDelta { text, .. } => {
                    let chunks = self.writer.reasoning(text);
                    self.send(chunks).await?;
                }
                DriverEvent::BlockStopped { .. } => {
                    let chunks = self.writer.close_open_parts();
                    self.send(chunks).await?;
                }
                DriverEvent::AssistantText { text } => {
                    let mut chunks = self.writer.text(text);
                    chunks.extend(self.writer.close_open_parts());
                    self.send(chunks).await?;
                }
                DriverEvent::ToolUseStarted { block, id, name } => {
                    calls.by_block.insert(block, id.clone());
                    calls.shown.insert(id.clone());
                    let chunks = self.writer.tool_start(id, name);
                    self.send(chunks).await?;
                }
                DriverEvent::ToolInputDelta { block, json } => {
                    if let Some(id) = calls.by_block.get(&block) {
                        let chunk = UiChunk::ToolInputDelta { tool_call_id: id.clone(), input_text_delta: json };
                        let chunk = self.writer.plain(chunk);
                        self.send(vec![chunk]).await?;
                    }
                }
                DriverEvent::ToolUse { id, name, input } => self.show_call(&mut calls, &id, &name, input).await?,
                DriverEvent::ToolResult { id, output } => self.result(&mut calls, id, output).await?,
                DriverEvent::ToolProgress { id, output } => {
                    if calls.shown.contains(&id) {
                        let chunk = self.writer.plain(UiChunk::ToolOutputAvailable {
                            tool_call_id: id,
                            output: serde_json::to_value(&output).unwrap_or(Value::Null),
                            dynamic: Some(true),
                            preliminary: Some(true),
                        });
                        self.send(vec![chunk]).await?;
                    }
                }
                DriverEvent::PermissionRequest { request_id, tool_use_id, tool_name, input, preview } => {
                    let call_id = tool_use_id.unwrap_or_else(|| request_id.clone());
                    self.show_call(&mut calls, &call_id, &tool_name, input.clone()).await?;
                    let asked = Asked { request_id: &request_id, call_id: &call_id, tool_name: &tool_name, preview };
                    if let Some(outcome) = self.permission(&mut calls, asked, input, &mut interrupting).await? {
                        return Ok(outcome);
                    }
                }
                // Only while we wait for an answer; handled there.
                DriverEvent::PermissionCancelled { .. } => {}
                DriverEvent::BeforeTool { request_id, .. } => {
                    // One steering message per reply: the reply ends where the agent
                    // starts acting on it.
                    let steer = if steered { None } else { self.run.slot.deliver_steer(&self.run.prompt) };
                    let context = steer.map(|text| {
                        format!("The user sent a new message while you were working:\n{text}\n\nAddress it before anything else.")
                    });
                    if context.is_some() {
                        steered = true;
                        let marker = self.writer.data(data("data-steer", None, json!({ "state": "delivered" })));
                        self.send(marker).await?;
                    }
                    if let Some(connection) = self.state.connection.as_mut()
                        && let Err(error) = connection.answer_before_tool(&request_id, context).await
                    {
                        return Ok(failed("agent", error.to_string()));
                    }
                }
                DriverEvent::Retrying { attempt, max, delay_ms, error } => {
                    // Transient, as for chat: the UI shows "retrying in N s" while it lasts.
                    let chunk = UiChunk::Data(DataChunk {
                        kind: "data-retrying".into(),
                        id: Some("retrying".into()),
                        data: json!({ "attempt": attempt + 1, "delayMs": delay_ms, "reason": format!("{error} (retry {attempt} of {max})") }),
                        transient: Some(true),
                    });
                    self.send(vec![chunk]).await?;
                }
                DriverEvent::Plan { entries } => {
                    // One plan part per reply, updated in place.
                    let marker = data("data-plan", Some("plan".into()), json!({ "entries": entries }));
                    let chunks = if planned { vec![self.writer.plain(marker)] } else { self.writer.data(marker) };
                    planned = true;
                    self.send(chunks).await?;
                }
                DriverEvent::Commands { commands } => {
                    let chunk = UiChunk::MessageMetadata { message_metadata: json!({ "agentCommands": commands }) };
                    self.send(vec![chunk]).await?;
                }
                DriverEvent::ModeChanged { mode } => {
                    let chunk = UiChunk::MessageMetadata { message_metadata: json!({ "agentMode": mode }) };
                    self.send(vec![chunk]).await?;
                }
                DriverEvent::Modes { current, available } => {
                    let offered = available
                        .as_array()
                        .map(|modes| modes.iter().filter_map(|m| m["id"].as_str().map(str::to_owned)).collect())
                        .unwrap_or_default();
                    if let Ok(mut modes) = self.run.slot.modes.lock() {
                        modes.offered = Some(offered);
                    }
                    let metadata = json!({ "agentModes": { "currentModeId": current, "availableModes": available }, "agentMode": current });
                    self.send(vec![UiChunk::MessageMetadata { message_metadata: metadata }]).await?;
                }
                DriverEvent::CompactionStarted => {
                    compactions += 1;
                    let marker = data(
                        "data-compaction",
                        Some(format!("compaction-{compactions}")),
                        json!({ "state": "started" }),
                    );
                    let chunks = self.writer.data(marker);
                    self.send(chunks).await?;
                }
                DriverEvent::CompactionFinished { trigger, pre_tokens, post_tokens } => {
                    // An automatic compaction may announce only its end.
                    let announced = compactions > 0;
                    if !announced {
                        compactions += 1;
                    }
                    let id = format!("compaction-{compactions}");
                    let marker = data(
                        "data-compaction",
                        Some(id),
                        json!({ "state": "done", "trigger": trigger, "preTokens": pre_tokens, "postTokens": post_tokens }),
                    );
                    let chunks = if announced { vec![self.writer.plain(marker)] } else { self.writer.data(marker) };
                    self.send(chunks).await?;
                }
                DriverEvent::CompactionFailed { message } => {
                    let marker = data(
                        "data-compaction",
                        Some(format!("compaction-{compactions}")),
                        json!({ "state": "error", "message": message }),
                    );
                    let chunk = self.writer.plain(marker);
                    self.send(vec![chunk]).await?;
                }
                DriverEvent::TurnFinished {
                    resume_token,
                    input_tokens,
                    output_tokens,
                    cost_usd,
                    error,
                    interrupted,
                } => {
                    if let Some(token) = resume_token {
                        self.token(token).await?;
                    }
                    let reported = AgentUsage {
                        input_tokens,
                        output_tokens,
                        cost_usd,
                        duration: self.started.instant.elapsed(),
                        started_at: self.started.at,
                        error: error.clone(),
                        interrupted,
                    };
                    if let Err(error) = self.run.tokens.turn_usage(&reported).await {
                        tracing::error!(error = %error, "could not record the agent turn's usage");
                    }
                    let mut usage = serde_json::Map::new();
                    if let (Some(input), Some(output)) = (input_tokens, output_tokens) {
                        usage.insert("usage".into(), json!({ "inputTokens": input, "outputTokens": output }));
                    }
                    if let Some(cost) = cost_usd {
                        usage.insert("costUsd".into(), json!(cost));
                    }
                    if !usage.is_empty() {
                        self.send(vec![UiChunk::MessageMetadata { message_metadata: Value::Object(usage) }]).await?;
                    }
                    // A message delivered but never acted on (the turn ended first) runs
                    // as its own turn, as one that never went in does (`run_with`).
                    if interrupted || interrupting {
                        return Ok(stopped());
                    }
                    if let Some(error) = error {
                        return Ok(failed("agent", error));
                    }
                    return Ok(TurnOutcome::Finished { reason: FinishReason::Stop });
                }
            }
        }
    }

    /// A live connection for this session: the warm one, or a new one (resuming). True
    /// when it is new.
    async fn connect(&mut self) -> Step<bool> {
        let run = self.run;
        match connect(self.state, &run.slot, run.driver.as_ref(), &run.spec, run.resume_token.as_deref()).await {
            Ok(new) => Ok(new),
            Err(DriverError::NotInstalled(message)) => Err(failed("agent_not_installed", message)),
            Err(DriverError::ResumeFailed(message)) => Err(failed("resume_failed", message)),
            Err(DriverError::Failed(message)) => Err(failed("agent", message)),
        }
    }

    async fn close(&mut self) {
        if let Some(connection) = self.state.connection.take() {
            connection.close().await;
        }
        self.state.connected_as = None;
    }

    /// What the ended runtime left to read, as lines to add to a message.
    async fn diagnostics(&mut self) -> String {
        let said = match self.state.connection.as_mut() {
            Some(connection) => connection.diagnostics().await,
            None => None,
        };
        said.map(|d| format!("\n{d}")).unwrap_or_default()
    }

    /// A new resume token is stored before the turn reads on: the next connection (after
    /// an idle close, a failure or a restart) resumes from it.
    async fn token(&mut self, token: String) -> Step<()> {
        if self.state.resume_token.as_deref() != Some(token.as_str()) {
            self.state.resume_token = Some(token.clone());
            if let Err(error) = self.run.tokens.save(&token).await {
                tracing::error!(error = %error, "could not store the agent session's resume token");
            }
        }
        self.send(vec![UiChunk::MessageMetadata { message_metadata: json!({ "resumeToken": token }) }]).await
    }

    /// Shows a tool call's part (once) with its input.
    async fn show_call(&mut self, calls: &mut Calls, id: &str, name: &str, input: Value) -> Step<()> {
        let mut chunks = Vec::new();
        if calls.shown.insert(id.to_owned()) {
            chunks.extend(self.writer.tool_start(id.to_owned(), name.to_owned()));
        }
        chunks.push(self.writer.plain(UiChunk::ToolInputAvailable {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            input,
            dynamic: Some(true),
        }));
        self.send(chunks).await
    }

    async fn result(&mut self, calls: &mut Calls, id: String, output: ToolOutput) -> Step<()> {
        if !calls.shown.contains(&id) {
            return Ok(());
        }
        if calls.running.remove(&id) {
            let record = if output.is_error {
                CallRecord::Error(output.text_content())
            } else {
                CallRecord::Done(output.clone())
            };
            if let Err(err) = self.run.gate.finish(&id, &record).await {
                tracing::warn!(error = %err, "could not record the agent's tool result");
            }
        }
        let chunk = if calls.denied.contains(&id) {
            UiChunk::ToolOutputDenied { tool_call_id: id }
        } else if output.is_error {
            UiChunk::ToolOutputError { tool_call_id: id, error_text: output.text_content(), dynamic: Some(true) }
        } else {
            UiChunk::ToolOutputAvailable {
                tool_call_id: id,
                output: serde_json::to_value(&output).unwrap_or(Value::Null),
                dynamic: Some(true),
                preliminary: None,
            }
        };
        let chunk = self.writer.plain(chunk);
        self.send(vec![chunk]).await
    }

    /// The runtime asks whether a tool may run: the policy decides, or the user through
    /// an approval card. Returns an outcome when the turn must end.
    async fn permission(
        &mut self,
        calls: &mut Calls,
        asked: Asked<'_>,
        input: Value,
        interrupting: &mut bool,
    ) -> Step<Option<TurnOutcome>> {
        let Asked { request_id, call_id, tool_name, preview } = asked;
        // Whatever the runtime asks about may change something.
        let annotations = ToolAnnotations { destructive: true, ..ToolAnnotations::default() };
        let gate_call = GateCall {
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            input: input.clone(),
            rule_input: input.clone(),
            annotations,
            preview,
            caution: None,
        };
        let answer = match self.run.gate.check(&gate_call).await {
            Ok(GateDecision::Allow) => Some(PermissionAnswer::Allow { input, always: None }),
            Ok(GateDecision::Deny { reason }) => {
                Some(PermissionAnswer::Deny { message: format!("Not allowed: {reason}.") })
            }
            Ok(GateDecision::Ask { approval_id }) => {
                let chunk = self.writer.plain(UiChunk::ToolApprovalRequest {
                    approval_id: approval_id.clone(),
                    tool_call_id: call_id.to_owned(),
                });
                self.send(vec![chunk]).await?;
                self.wait_for_decision(&approval_id, tool_name, interrupting).await?
            }
            Err(err) => Some(PermissionAnswer::Deny {
                message: format!("The call could not be recorded, so it was not allowed: {err}"),
            }),
        };
        let Some(answer) = answer else { return Ok(None) };
        match &answer {
            PermissionAnswer::Allow { .. } => {
                if matches!(self.run.gate.begin(call_id).await, Ok(Some(_))) {
                    calls.running.insert(call_id.to_owned());
                }
            }
            PermissionAnswer::Deny { .. } => {
                calls.denied.insert(call_id.to_owned());
            }
        }
        let Some(connection) = self.state.connection.as_mut() else {
            return Ok(Some(failed("agent", "the session lost its connection")));
        };
        if let Err(error) = connection.answer_permission(request_id, answer).await {
            return Ok(Some(failed("agent", error.to_string())));
        }
        Ok(None)
    }

    /// Waits for the user's decision (or a stop). `None` when the prompt is moot (the
    /// runtime cancelled it after an interrupt).
    async fn wait_for_decision(
        &mut self,
        approval_id: &str,
        tool_name: &str,
        interrupting: &mut bool,
    ) -> Step<Option<PermissionAnswer>> {
        let mut decision = self.run.slot.wait_for_decision(approval_id);
        loop {
            let Some(connection) = self.state.connection.as_mut() else {
                return Err(failed("agent", "the session lost its connection"));
            };
            tokio::select! {
                biased;
                answer = &mut decision => {
                    let Ok(answer) = answer else {
                        return Ok(Some(PermissionAnswer::Deny { message: denial(Some("the approval was withdrawn")) }));
                    };
                    return Ok(Some(if answer.approved {
                        PermissionAnswer::Allow { input: answer.input, always: answer.always.then(|| tool_name.to_owned()) }
                    } else {
                        PermissionAnswer::Deny { message: denial(answer.reason.as_deref()) }
                    }));
                }
                _ = self.context.cancel.cancelled(), if !*interrupting => {
                    *interrupting = true;
                    if connection.interrupt().await.is_err() {
                        self.run.slot.stop_waiting(approval_id);
                        self.close().await;
                        return Err(stopped());
                    }
                }
                event = connection.next_event() => match event {
                    Some(DriverEvent::PermissionCancelled { .. }) => {
                        self.run.slot.stop_waiting(approval_id);
                        return Ok(None);
                    }
                    // The runtime waits for our answer; nothing else should come.
                    Some(other) => tracing::debug!(event = ?other, "agent event while waiting for an approval; ignored"),
                    None => {
                        self.run.slot.stop_waiting(approval_id);
                        if *interrupting {
                            self.close().await;
                            return Err(stopped());
                        }
                        let said = self.diagnostics().await;
                        self.close().await;
                        let name = self.run.driver.name().to_owned();
                        return Err(failed("agent", format!("{name} stopped unexpectedly while waiting for an approval; send a message to start it again.{said}")));
                    }
                },
            }
        }
    }
}

/// A permission prompt of the runtime: its id, the call it is about, and what the card
/// shows besides the input.
struct Asked<'a> {
    request_id: &'a str,
    call_id: &'a str,
    tool_name: &'a str,
    preview: Option<String>,
}

fn data(kind: &str, id: Option<String>, data: Value) -> UiChunk {
    UiChunk::Data(DataChunk { kind: kind.to_owned(), id, data, transient: None })
}
