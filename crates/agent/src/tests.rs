//! The loop against in-process fakes: a scripted model, scripted tools, a recording gate.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use protocol::message::ToolState;
use protocol::tool::{ToolAnnotations, ToolOutput};
use protocol::{ErrorKind, FinishReason, MessageAccumulator, StatusReason, UiChunk, UiMessage, UiPart};
use providers::{
    ChatMessage, ChatRole, CompletionEvent, CompletionRequest, ContentPart, LanguageModel, ProviderError,
    ProviderErrorKind, StopReason, TokenUsage,
};
use serde_json::{Value, json};
use testkit::ScriptedModel;
use testkit::scripted_model::{End, Reply, Step};
use tokio_util::sync::CancellationToken;
use tools::{Tool, ToolContext, ToolDefinition, ToolError, ToolSet};

use crate::features::{Feature, PromptContext, ResponseContext, RoundAction, ToolCalling};
use crate::hooks::{
    AgentHooks, ErrorDecision, HookError, HookSource, StepPlan, StepReport, ToolExecutionEnd, ToolExecutionStart,
};
use crate::*;
use ::turn::{
    Allowed, CallRecord, GateCall, GateDecision, GateError, PendingCall, PendingState, ToolGate, TurnOutcome,
};

mod context;
mod hooks_and_features;
mod prompt_tool_calling;
mod replies;
mod tool_calls;

type Event = Result<CompletionEvent, ProviderError>;

/// The testkit's scripted model: each call answers with the next list of events, and the
/// requests it was sent are recorded.
fn scripted(replies: Vec<Vec<Event>>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(replies))
}

fn text(s: &str) -> Event {
    Ok(CompletionEvent::TextDelta(s.into()))
}

fn finish(reason: StopReason) -> Event {
    Ok(CompletionEvent::Finish { reason })
}

/// A reply that calls `name` with `arguments` (JSON text), streamed in two pieces.
fn calls(calls: &[(&str, &str, &str)]) -> Vec<Event> {
    let mut events = Vec::new();
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let index = index as u32;
        events.push(Ok(CompletionEvent::ToolCallStart { index, id: (*id).into(), name: (*name).into() }));
        let (a, b) = arguments.split_at(arguments.len() / 2);
        events.push(Ok(CompletionEvent::ToolCallDelta { index, arguments: a.into() }));
        events.push(Ok(CompletionEvent::ToolCallDelta { index, arguments: b.into() }));
    }
    events.push(finish(StopReason::ToolCalls));
    events
}

fn answer(s: &str) -> Vec<Event> {
    vec![text(s), finish(StopReason::Stop)]
}

/// A tool that records its calls and answers with a fixed text (or does something odd).
struct FakeTool {
    definition: ToolDefinition,
    behaviour: Behaviour,
    runs: Mutex<Vec<Value>>,
    rounds: Option<u32>,
}

#[derive(Clone)]
enum Behaviour {
    Answer(&'static str),
    Panic,
    Hang,
    Fail(&'static str),
    Progress,
    Sleep(Duration),
}

impl FakeTool {
    fn new(name: &str, behaviour: Behaviour) -> Arc<Self> {
        Self::with(name, behaviour, false, None)
    }

    fn with(name: &str, behaviour: Behaviour, read_only: bool, rounds: Option<u32>) -> Arc<Self> {
        Arc::new(Self {
            definition: ToolDefinition {
                name: name.into(),
                title: None,
                description: format!("the {name} tool"),
                input_schema: json!({
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                    "additionalProperties": false
                }),
                annotations: ToolAnnotations { read_only, ..ToolAnnotations::default() },
            },
            behaviour,
            runs: Mutex::new(Vec::new()),
            rounds,
        })
    }

    fn runs(&self) -> Vec<Value> {
        self.runs.lock().unwrap().clone()
    }
}

#[async_trait]
impl Tool for FakeTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.lock().unwrap().push(input);
        match self.behaviour.clone() {
            Behaviour::Answer(text) => Ok(ToolOutput::text(text)),
            Behaviour::Panic => panic!("the fake tool exploded"),
            Behaviour::Hang => {
                ctx.cancel.cancelled().await;
                Err(ToolError::Cancelled)
            }
            Behaviour::Fail(why) => Err(ToolError::Failed(why.into())),
            Behaviour::Sleep(how_long) => {
                tokio::time::sleep(how_long).await;
                Ok(ToolOutput::text("slept"))
            }
            Behaviour::Progress => {
                (ctx.progress)(tools::Progress { progress: 1.0, total: Some(2.0), message: Some("half way".into()) });
                tokio::time::sleep(Duration::from_millis(10)).await;
                Ok(ToolOutput::text("done"))
            }
        }
    }

    async fn preview(&self, input: &Value, _ctx: &ToolContext) -> Option<String> {
        Some(format!("would touch {}", input["path"]))
    }

    fn context_rounds(&self) -> Option<u32> {
        self.rounds
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(5)
    }
}

/// A gate with a fixed answer that records everything it is asked.
struct FakeGate {
    decision: GateDecision,
    checked: Mutex<Vec<GateCall>>,
    begun: Mutex<Vec<String>>,
    finished: Mutex<Vec<(String, bool)>>,
    /// `begin` answers false for these (they ran already).
    already_ran: Vec<String>,
}

impl FakeGate {
    fn new(decision: GateDecision) -> Arc<Self> {
        Arc::new(Self {
            decision,
            checked: Mutex::new(Vec::new()),
            begun: Mutex::new(Vec::new()),
            finished: Mutex::new(Vec::new()),
            already_ran: Vec::new(),
        })
    }
}

#[async_trait]
impl ToolGate for FakeGate {
    async fn check(&self, call: &GateCall) -> Result<GateDecision, GateError> {
        self.checked.lock().unwrap().push(call.clone());
        Ok(self.decision.clone())
    }

    async fn begin(&self, call_id: &str) -> Result<Option<Allowed>, GateError> {
        self.begun.lock().unwrap().push(call_id.to_owned());
        Ok((!self.already_ran.iter().any(|id| id == call_id)).then_some(Allowed::ByUser))
    }

    async fn finish(&self, call_id: &str, record: &CallRecord) -> Result<(), GateError> {
        self.finished.lock().unwrap().push((call_id.to_owned(), matches!(record, CallRecord::Done(_))));
        Ok(())
    }
}

fn request(model: Arc<dyn LanguageModel>) -> TurnRequest {
    let completion = CompletionRequest {
        model: "m".into(),
        messages: vec![ChatMessage::user("hi")],
        ..CompletionRequest::default()
    };
    TurnRequest::new(model, completion, Duration::from_secs(30))
}

fn with_tools(model: Arc<dyn LanguageModel>, tools: &[Arc<FakeTool>], gate: Arc<dyn ToolGate>) -> TurnRequest {
    let mut request = request(model);
    let mut set = ToolSet::new();
    for tool in tools {
        set.add(tool.clone());
    }
    request.tools = set;
    request.gate = gate;
    request
}

async fn run_request(request: TurnRequest, cancel: CancellationToken) -> (Vec<UiChunk>, TurnOutcome) {
    let (mut tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let outcome = run_turn(request, cancel, &mut tx).await;
    drop(tx);
    let mut chunks = Vec::new();
    while let Some(chunk) = rx.recv().await {
        chunks.push(chunk);
    }
    (chunks, outcome)
}

async fn run(model: Arc<dyn LanguageModel>, cancel: CancellationToken) -> (Vec<UiChunk>, TurnOutcome) {
    run_request(request(model), cancel).await
}

fn fold(chunks: &[UiChunk]) -> UiMessage {
    let mut acc = MessageAccumulator::new("m");
    for chunk in chunks {
        acc.apply(chunk).unwrap();
    }
    acc.into_message()
}

fn tool_states(message: &UiMessage) -> Vec<(String, ToolState)> {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { tool_call_id, state, .. } => Some((tool_call_id.clone(), *state)),
            _ => None,
        })
        .collect()
}

fn tool_results(request: &CompletionRequest) -> Vec<providers::ToolResult> {
    request
        .messages
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .flat_map(|m| m.content.iter())
        .filter_map(|p| if let ContentPart::ToolResult(r) = p { Some(r.clone()) } else { None })
        .collect()
}

fn request_for(model: Arc<ScriptedModel>) -> TurnRequest {
    request(model)
}
