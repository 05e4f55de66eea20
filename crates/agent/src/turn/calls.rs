//! A step's tool calls, from what the model sent to the results it gets: checked
//! (known tool, usable arguments, schema), held to the tool-call cap, decided by the gate,
//! run at most once, and reported to the UI.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use protocol::elicitation::ElicitationState;
use protocol::tool::ToolOutput;
use protocol::{ApiError, DataChunk, ErrorKind, UiChunk};
use providers::ToolResult;
use serde_json::Value;
use tools::schema::InputSchema;
use tools::{ToolContext, ToolError};
use tracing::Instrument;
use turn::{Allowed, CallRecord, ChunkSink, GateCall, GateDecision, PartWriter, PendingCall, PendingState, SinkClosed};

use super::questions::{CallQuestions, CardChunk, SamplingModel};
use super::{Stop, Turn};
use crate::hooks::{ToolExecutionEnd, ToolExecutionStart};
use crate::prompt::{denial_text, model_content, refusal_text};
use crate::step::{StepOutput, send_all};

/// How long a stopped or timed-out tool may take to wind down after its own cancellation
/// token fires (an MCP tool tells its server the call is cancelled) before it is dropped.
const TOOL_STOP_GRACE: Duration = Duration::from_secs(3);

/// A call on its way through the tools phase.
pub(super) enum PhaseCall {
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

impl Turn {
    /// Checks a step's calls against the limits, then decides, runs and reports them;
    /// their results join the conversation.
    pub(super) async fn run_calls(
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

    /// Checks the step's calls: known tool, usable arguments, schema.
    pub(super) fn check_calls(&mut self, output: &StepOutput) -> Vec<PhaseCall> {
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
    pub(super) fn announce_calls(&mut self, calls: &[PhaseCall]) -> Vec<UiChunk> {
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

    /// Decides, runs and reports a step's calls, in the order the model made them. When
    /// any call needs the user, nothing of the step runs yet: the turn waits, and the
    /// whole step runs once every call is decided.
    pub(super) async fn tools_phase(
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
            asks: None,
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
        let (ask_tx, mut ask_rx) = tokio::sync::mpsc::unbounded_channel();
        ctx.asks = Some(Arc::new(move |ask| {
            let _ = ask_tx.send(ask);
        }));
        let model = SamplingModel { model: self.model.model.clone(), name: self.model.base.model.clone() };
        let mut questions = CallQuestions::new(self.tools.questions.clone(), call_id, model);
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
                        // Stop answers the server's open questions `cancel`.
                        for card in questions.end(ElicitationState::Cancelled) {
                            let _ = sink.send(self.writer.plain(card.chunk)).await;
                        }
                        let _ = stop_tool(&mut call).await;
                        break Err(ToolError::Cancelled);
                    }
                    Some(ask) = ask_rx.recv() => {
                        let card = questions.arrive(ask);
                        if send_card(&mut self.writer, sink, card).await.is_err() {
                            let _ = stop_tool(&mut call).await;
                            break Err(ToolError::Cancelled);
                        }
                    }
                    settled = questions.settled() => {
                        // The call has its whole time again once the user answered.
                        deadline.as_mut().reset(tokio::time::Instant::now() + tool.timeout());
                        if let Some(mut report) = settled.report {
                            // A sampling request's model call counts like the reply's own.
                            report.step = self.step;
                            self.plugins.hooks.on_model_call(&report).await;
                        }
                        if send_card(&mut self.writer, sink, settled.card).await.is_err() {
                            let _ = stop_tool(&mut call).await;
                            break Err(ToolError::Cancelled);
                        }
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
                    _ = &mut deadline, if !questions.waiting() => {
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
        // Questions the call leaves open (it finished, failed or timed out first) go.
        for card in questions.end(ElicitationState::Withdrawn) {
            let _ = sink.send(self.writer.plain(card.chunk)).await;
        }
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

pub(super) fn phase_id(call: &PhaseCall) -> &str {
    match call {
        PhaseCall::Fresh { id, .. } | PhaseCall::Invalid { id, .. } => id,
        PhaseCall::Pending(p) => &p.call_id,
    }
}

/// Sends a question's card: a new part, or the update of one.
async fn send_card(writer: &mut PartWriter, sink: &mut impl ChunkSink, card: CardChunk) -> Result<(), SinkClosed> {
    if card.new {
        for chunk in writer.data(card.chunk) {
            sink.send(chunk).await?;
        }
        Ok(())
    } else {
        sink.send(writer.plain(card.chunk)).await
    }
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
