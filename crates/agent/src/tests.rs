//! The loop against in-process fakes: a scripted model, scripted tools, a recording gate.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::{StreamExt, stream};
use protocol::message::ToolState;
use protocol::tool::{ToolAnnotations, ToolOutput};
use protocol::{ErrorKind, FinishReason, MessageAccumulator, StatusReason, UiChunk, UiMessage, UiPart};
use providers::{
    ChatMessage, ChatRole, CompletionEvent, CompletionRequest, CompletionStream, ContentPart, LanguageModel,
    ProviderError, ProviderErrorKind, StopReason, TokenUsage,
};
use serde_json::{Value, json};
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

type Event = Result<CompletionEvent, ProviderError>;

/// A model that answers each call with the next scripted list of events and records the
/// requests it was sent.
struct FakeModel {
    replies: Mutex<VecDeque<Vec<Event>>>,
    requests: Mutex<Vec<CompletionRequest>>,
    gap: Option<Duration>,
    hang_at_end: bool,
    format: &'static str,
}

impl FakeModel {
    fn new(replies: Vec<Vec<Event>>) -> Arc<Self> {
        Arc::new(Self::plain(replies))
    }

    fn plain(replies: Vec<Vec<Event>>) -> Self {
        Self {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
            gap: None,
            hang_at_end: false,
            format: "",
        }
    }

    fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl LanguageModel for FakeModel {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        self.requests.lock().unwrap().push(request);
        let events = self.replies.lock().unwrap().pop_front().unwrap_or_else(|| vec![text("(no more script)")]);
        let gap = self.gap;
        let s = stream::iter(events).then(move |event| async move {
            if let Some(gap) = gap {
                tokio::time::sleep(gap).await;
            }
            event
        });
        if self.hang_at_end { Box::pin(s.chain(stream::pending())) } else { Box::pin(s) }
    }

    fn format_name(&self) -> &'static str {
        self.format
    }
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

// ---- plain replies ------------------------------------------------------------------

#[tokio::test]
async fn text_reply_streams_as_one_text_part() {
    let model = FakeModel::new(vec![vec![
        text("Hel"),
        text("lo"),
        Ok(CompletionEvent::Usage(TokenUsage { input_tokens: 3, output_tokens: 2 })),
        finish(StopReason::Stop),
    ]]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(chunks[0], UiChunk::StartStep);
    assert_eq!(chunks[1], UiChunk::TextStart { id: "t1".into() });
    assert_eq!(chunks.last(), Some(&UiChunk::FinishStep));
    let message = fold(&chunks);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.typed_metadata().usage.map(|u| u.output_tokens), Some(2));
}

#[tokio::test]
async fn open_part_ids_name_their_position_in_the_message() {
    let model = FakeModel::new(vec![vec![Ok(CompletionEvent::ReasoningDelta("hmm".into())), text("answer")]]);
    let (chunks, _) = run(model, CancellationToken::new()).await;
    let message = fold(&chunks);
    // parts: [step-start, reasoning, text]; ids r1 and t2.
    assert!(matches!(message.parts[1], UiPart::Reasoning { .. }));
    assert!(chunks.contains(&UiChunk::ReasoningStart { id: "r1".into(), provider_metadata: None }));
    assert!(chunks.contains(&UiChunk::TextStart { id: "t2".into() }));
}

#[tokio::test]
async fn a_provider_error_keeps_the_text_and_ends_with_an_error_part() {
    let error = ProviderError {
        kind: ProviderErrorKind::Network,
        message: "connection lost".into(),
        status: None,
        retryable: false,
    };
    let model = FakeModel::new(vec![vec![text("partial"), Err(error)]]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    let TurnOutcome::Failed { error } = outcome else { panic!("expected failure, got {outcome:?}") };
    assert_eq!(error.kind, ErrorKind::Provider);
    assert_eq!(error.code.as_deref(), Some("network"));
    assert!(error.retryable);
    let message = fold(&chunks);
    assert_eq!(message.text(), "partial");
    assert!(
        matches!(&message.parts[2], UiPart::Data(d) if d.kind == "data-error" && d.data["message"] == "connection lost")
    );
    assert!(chunks.contains(&UiChunk::Error { error_text: "connection lost".into() }));
}

#[tokio::test]
async fn a_reply_the_content_filter_stopped_fails_with_its_text_kept_and_one_cut_by_length_finishes() {
    let model = FakeModel::new(vec![vec![text("Here is how "), finish(StopReason::ContentFilter)]]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    let TurnOutcome::Failed { error } = outcome else { panic!("expected failure, got {outcome:?}") };
    assert_eq!((error.code.as_deref(), error.retryable), (Some("content_filtered"), false));
    assert!(error.message.contains("rephrase"), "{}", error.message);
    let message = fold(&chunks);
    assert_eq!(message.text(), "Here is how ");
    assert!(message.parts.iter().any(|p| matches!(p, UiPart::Data(d) if d.kind == "data-error")));

    let model = FakeModel::new(vec![vec![text("The first half"), finish(StopReason::Length)]]);
    let (_, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Length });
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_the_turn_and_closes_open_parts() {
    let model = Arc::new(FakeModel {
        gap: Some(Duration::from_secs(1)),
        ..FakeModel::plain(vec![vec![text("a"), text("b"), text("c")]])
    });
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stopper.cancel();
    });
    let (chunks, outcome) = run(model, cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    let message = fold(&chunks);
    assert_eq!(message.text(), "a");
    assert!(matches!(message.parts[1], UiPart::Text { state: Some(protocol::PartState::Done), .. }));
}

#[tokio::test(start_paused = true)]
async fn a_silent_provider_is_cut_off_as_stalled() {
    let model = Arc::new(FakeModel { hang_at_end: true, ..FakeModel::plain(vec![vec![text("a")]]) });
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
    assert_eq!(fold(&chunks).text(), "a");
}

#[test]
fn prompt_skips_errors_and_empty_replies() {
    let user = UiMessage::user_text("u", "question");
    let failed = UiMessage { id: "a".into(), role: protocol::MessageRole::Assistant, parts: vec![], metadata: None };
    let prompt = build_prompt([&user, &failed], &PromptOptions::default());
    assert_eq!(prompt, vec![ChatMessage::user("question")]);
}

/// Announces a retry at once, then answers after `wait`.
struct RetryingModel {
    wait: Duration,
}

impl LanguageModel for RetryingModel {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        let wait = self.wait;
        let retry = stream::once(async {
            Ok(CompletionEvent::Retrying { attempt: 2, delay_ms: 50_000, reason: "rate limited (HTTP 429)".into() })
        });
        let answer = stream::once(async move {
            tokio::time::sleep(wait).await;
            text("late but fine")
        });
        Box::pin(retry.chain(answer))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_wait_is_announced_and_does_not_count_as_silence() {
    // Longer than the idle timeout (30 s), shorter than idle timeout + the announced 50 s.
    let (chunks, outcome) =
        run(Arc::new(RetryingModel { wait: Duration::from_secs(45) }), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::Data(d) if d.kind == "data-retrying" && d.transient == Some(true)))
    );
    assert_eq!(fold(&chunks).text(), "late but fine");
}

#[tokio::test(start_paused = true)]
async fn silence_beyond_the_announced_wait_is_still_a_stall() {
    let (_, outcome) = run(Arc::new(RetryingModel { wait: Duration::from_secs(100) }), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
}

// ---- the tool loop ------------------------------------------------------------------

#[tokio::test]
async fn a_tool_call_runs_and_the_model_answers_from_its_result() {
    let model = FakeModel::new(vec![calls(&[("c1", "read", r#"{"path":"a.txt"}"#)]), answer("It says hello.")]);
    let tool = FakeTool::new("read", Behaviour::Answer("hello"));
    let gate = FakeGate::new(GateDecision::Allow);
    let (chunks, outcome) =
        run_request(with_tools(model.clone(), std::slice::from_ref(&tool), gate.clone()), CancellationToken::new())
            .await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(tool.runs(), vec![json!({"path": "a.txt"})]);
    assert_eq!(*gate.begun.lock().unwrap(), vec!["c1".to_owned()]);
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), true)]);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tools.len(), 1, "native tools are offered");
    let second = &requests[1];
    assert!(
        matches!(&second.messages[1].content[0], ContentPart::ToolCall(c) if c.arguments == json!({"path": "a.txt"}))
    );
    assert_eq!(tool_results(second)[0].text_content(), "hello");

    let message = fold(&chunks);
    assert_eq!(tool_states(&message), vec![("c1".into(), ToolState::OutputAvailable)]);
    assert_eq!(message.text(), "It says hello.");
    let steps = message.parts.iter().filter(|p| matches!(p, UiPart::StepStart)).count();
    assert_eq!(steps, 2);
}

#[tokio::test]
async fn a_call_that_needs_approval_waits_and_runs_nothing_of_its_step() {
    let model = FakeModel::new(vec![calls(&[("c1", "read", r#"{"path":"a"}"#), ("c2", "write", r#"{"path":"b"}"#)])]);
    let read = FakeTool::with("read", Behaviour::Answer("A"), true, None);
    let write = FakeTool::new("write", Behaviour::Answer("ok"));
    let gate = FakeGate::new(GateDecision::Ask { approval_id: "ap-1".into() });
    let (chunks, outcome) =
        run_request(with_tools(model, &[read.clone(), write.clone()], gate.clone()), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::AwaitingApproval);
    assert!(read.runs().is_empty() && write.runs().is_empty());
    let checked = gate.checked.lock().unwrap().clone();
    assert_eq!(checked.len(), 2);
    assert_eq!(checked[0].preview, None, "read-only tools need no preview");
    assert_eq!(checked[1].preview.as_deref(), Some("would touch \"b\""));
    let message = fold(&chunks);
    assert_eq!(
        tool_states(&message),
        vec![("c1".into(), ToolState::ApprovalRequested), ("c2".into(), ToolState::ApprovalRequested)]
    );
    assert!(chunks.contains(&UiChunk::ToolApprovalRequest { approval_id: "ap-1".into(), tool_call_id: "c2".into() }));
}

fn pending(call_id: &str, tool: &str, input: Value, state: PendingState) -> PendingCall {
    PendingCall { call_id: call_id.into(), tool_name: tool.into(), input, state }
}

#[tokio::test]
async fn a_continued_reply_runs_approved_calls_reports_denials_and_goes_on() {
    let model = FakeModel::new(vec![answer("Wrote it; skipped the other.")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = FakeGate::new(GateDecision::Allow);
    let mut request = with_tools(model.clone(), std::slice::from_ref(&write), gate.clone());
    request.pending = vec![
        pending("c1", "write", json!({"path": "edited.txt"}), PendingState::Approved),
        pending("c2", "write", json!({"path": "x"}), PendingState::Denied { reason: Some("not x".into()) }),
    ];
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(write.runs(), vec![json!({"path": "edited.txt"})], "the edited input runs, the denied call does not");
    assert!(chunks.contains(&UiChunk::ToolOutputDenied { tool_call_id: "c2".into() }));
    let results = tool_results(&model.requests()[0]);
    assert_eq!(results[0].text_content(), "written");
    assert!(results[1].is_error && results[1].text_content().contains("Their reason: not x"));
}

#[tokio::test]
async fn a_call_the_ledger_says_ran_already_is_not_run_twice() {
    let model = FakeModel::new(vec![answer("ok")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = Arc::new(FakeGate {
        already_ran: vec!["c1".into()],
        ..Arc::into_inner(FakeGate::new(GateDecision::Allow)).unwrap()
    });
    let mut request = with_tools(model.clone(), std::slice::from_ref(&write), gate);
    request.pending = vec![
        pending("c1", "write", json!({"path": "a"}), PendingState::Approved),
        pending("c2", "write", json!({"path": "b"}), PendingState::Interrupted),
        pending("c3", "write", json!({"path": "c"}), PendingState::Done(ToolOutput::text("stored"))),
    ];
    let (chunks, _) = run_request(request, CancellationToken::new()).await;
    assert!(write.runs().is_empty());
    let results = tool_results(&model.requests()[0]);
    assert!(results[0].text_content().contains("already run once"));
    assert!(results[1].text_content().contains("not run again"));
    assert_eq!(results[2].text_content(), "stored");
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::ToolOutputAvailable { tool_call_id, .. } if tool_call_id == "c3"))
    );
}

#[tokio::test]
async fn ids_that_come_back_are_renamed_so_every_call_runs() {
    // A server that numbers its calls from 0 in every answer, in a reply that already
    // used `call_0` before it was continued.
    let model = FakeModel::new(vec![
        calls(&[("call_0", "read", r#"{"path":"a"}"#), ("call_0", "read", r#"{"path":"b"}"#)]),
        calls(&[("call_0", "read", r#"{"path":"c"}"#)]),
        answer("done"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let gate = FakeGate::new(GateDecision::Allow);
    let mut request = with_tools(model.clone(), std::slice::from_ref(&read), gate.clone());
    request.used_call_ids = vec!["call_0".into()];
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs().len(), 3, "no call passes for another");
    let ids: Vec<String> = tool_states(&fold(&chunks)).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, vec!["call_0_2", "call_0_3", "call_0_4"]);
    assert_eq!(*gate.begun.lock().unwrap(), ids);
    // The model gets its calls back under the ids their results carry.
    let last = &model.requests()[2];
    let sent: Vec<String> = last
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|p| if let ContentPart::ToolCall(c) = p { Some(c.id.clone()) } else { None })
        .collect();
    let answered: Vec<String> = tool_results(last).into_iter().map(|r| r.call_id).collect();
    assert_eq!((sent.clone(), answered), (ids.clone(), ids));
}

#[tokio::test]
async fn invalid_arguments_get_one_repair_round() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "read", r#"{"path": 5}"#)]),
        calls(&[("c2", "read", r#"{"path": "a"}"#)]),
        answer("fixed"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let (chunks, outcome) = run_request(
        with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs(), vec![json!({"path": "a"})]);
    let repair = tool_results(&model.requests()[1]);
    assert!(repair[0].is_error && repair[0].text_content().contains("/path"), "{}", repair[0].text_content());
    let states = tool_states(&fold(&chunks));
    assert_eq!(states, vec![("c1".into(), ToolState::OutputError), ("c2".into(), ToolState::OutputAvailable)]);

    let stubborn = FakeModel::new(vec![calls(&[("c1", "read", "{nope")]), calls(&[("c2", "nothing", "{}")])]);
    let (_, outcome) =
        run_request(with_tools(stubborn, &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { error } if error.message.contains("kept sending")));
}

#[tokio::test]
async fn audit_23_a_tool_input_error_keeps_what_the_model_sent() {
    let model = FakeModel::new(vec![
        calls(&[
            ("c1", "read", "{\"path\": \"a.txt\""),
            ("c2", "read", r#"{"path": 5}"#),
            ("c3", "nope", r#"{"x": 1}"#),
        ]),
        answer("sorry"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let (chunks, _) =
        run_request(with_tools(model, &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new()).await;
    let errors: Vec<(String, Value)> = chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::ToolInputError { tool_call_id, input, .. } => Some((tool_call_id.clone(), input.clone())),
            _ => None,
        })
        .collect();
    let sent = vec![
        ("c1".to_owned(), json!("{\"path\": \"a.txt\"")),
        ("c2".to_owned(), json!({"path": 5})),
        ("c3".to_owned(), json!({"x": 1})),
    ];
    assert_eq!(errors, sent, "the raw text when it is not JSON, else the arguments as sent");
    let stored: Vec<(String, Value)> = fold(&chunks)
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { tool_call_id, input, .. } => Some((tool_call_id.clone(), input.clone()?)),
            _ => None,
        })
        .collect();
    assert_eq!(stored, sent, "and the stored tool part keeps it");
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_panics_or_times_out_becomes_an_error_and_the_loop_goes_on() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "boom", r#"{"path":"a"}"#), ("c2", "slow", r#"{"path":"b"}"#)]),
        answer("sorry"),
    ]);
    let boom = FakeTool::new("boom", Behaviour::Panic);
    let slow = FakeTool::new("slow", Behaviour::Hang);
    let gate = FakeGate::new(GateDecision::Allow);
    let (chunks, outcome) =
        run_request(with_tools(model.clone(), &[boom, slow], gate.clone()), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    let errors: Vec<String> = chunks
        .iter()
        .filter_map(
            |c| if let UiChunk::ToolOutputError { error_text, .. } = c { Some(error_text.clone()) } else { None },
        )
        .collect();
    assert_eq!(errors, vec!["the tool crashed: the fake tool exploded".to_owned(), "timed out after 5 s".to_owned()]);
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), false), ("c2".to_owned(), false)]);
    assert!(tool_results(&model.requests()[1]).iter().all(|r| r.is_error));
}

#[tokio::test]
async fn failures_and_progress_reach_the_tool_card() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "fails", r#"{"path":"a"}"#), ("c2", "busy", r#"{"path":"b"}"#)]),
        answer("ok"),
    ]);
    let fails = FakeTool::new("fails", Behaviour::Fail("disk full"));
    let busy = FakeTool::new("busy", Behaviour::Progress);
    let (chunks, _) =
        run_request(with_tools(model, &[fails, busy], FakeGate::new(GateDecision::Allow)), CancellationToken::new())
            .await;
    assert!(chunks.contains(&UiChunk::ToolOutputError {
        tool_call_id: "c1".into(),
        error_text: "disk full".into(),
        dynamic: Some(true)
    }));
    assert!(chunks.iter().any(|c| matches!(c, UiChunk::Data(d) if d.kind == "data-tool-progress" && d.data["message"] == "half way" && d.transient == Some(true))));
}

#[tokio::test]
async fn a_policy_denial_is_reported_to_the_model() {
    let model = FakeModel::new(vec![calls(&[("c1", "write", r#"{"path":"a"}"#)]), answer("ok")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = FakeGate::new(GateDecision::Deny { reason: "rule r1 forbids it".into() });
    let (chunks, _) =
        run_request(with_tools(model.clone(), std::slice::from_ref(&write), gate), CancellationToken::new()).await;
    assert!(write.runs().is_empty());
    assert!(chunks.contains(&UiChunk::ToolOutputDenied { tool_call_id: "c1".into() }));
    assert_eq!(tool_results(&model.requests()[1])[0].text_content(), "This tool call was not run: rule r1 forbids it.");
}

#[tokio::test]
async fn the_tool_call_limit_pauses_the_turn_as_its_own_state() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "read", r#"{"path":"a"}"#)]),
        calls(&[("c2", "read", r#"{"path":"b"}"#), ("c3", "read", r#"{"path":"c"}"#)]),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model, std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.max_tool_calls = 2;
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::ToolLimit });
    assert_eq!(read.runs().len(), 1, "the step that would pass the limit runs nothing");
    let states = tool_states(&fold(&chunks));
    assert_eq!(states[1..], [("c2".into(), ToolState::InputAvailable), ("c3".into(), ToolState::InputAvailable)]);
}

#[tokio::test]
async fn a_steer_yields_at_the_next_step_boundary() {
    let model = FakeModel::new(vec![calls(&[("c1", "read", r#"{"path":"a"}"#)]), answer("never asked")]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let request = with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.steer.cancel();
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Steered);
    assert_eq!(read.runs().len(), 1, "the step's tools finish before the turn yields");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(tool_states(&fold(&chunks)), vec![("c1".into(), ToolState::OutputAvailable)]);

    // Without a step boundary the turn simply finishes.
    let plain = FakeModel::new(vec![answer("done")]);
    let request = request_for(plain);
    request.steer.cancel();
    assert_eq!(
        run_request(request, CancellationToken::new()).await.1,
        TurnOutcome::Finished { reason: FinishReason::Stop }
    );
}

fn request_for(model: Arc<FakeModel>) -> TurnRequest {
    request(model)
}

#[tokio::test(start_paused = true)]
async fn stop_during_a_tool_call_pauses_the_turn() {
    let model = FakeModel::new(vec![calls(&[("c1", "slow", r#"{"path":"a"}"#)])]);
    let slow = FakeTool::new("slow", Behaviour::Hang);
    let gate = FakeGate::new(GateDecision::Allow);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.cancel();
    });
    let (chunks, outcome) = run_request(with_tools(model, &[slow], gate.clone()), cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), false)]);
    assert!(chunks.iter().any(
        |c| matches!(c, UiChunk::ToolOutputError { error_text, .. } if error_text == "stopped before it finished")
    ));
}

#[tokio::test]
async fn results_leave_the_context_after_their_rounds() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "fetch", r#"{"path":"a"}"#)]),
        calls(&[("c2", "other", r#"{"path":"b"}"#)]),
        answer("done"),
    ]);
    let fetch = FakeTool::with("fetch", Behaviour::Answer("a big page"), true, Some(1));
    let other = FakeTool::new("other", Behaviour::Answer("small"));
    let (_, _) = run_request(
        with_tools(model.clone(), &[fetch, other], FakeGate::new(GateDecision::Allow)),
        CancellationToken::new(),
    )
    .await;
    let requests = model.requests();
    assert_eq!(tool_results(&requests[1])[0].text_content(), "a big page");
    let later = tool_results(&requests[2]);
    assert!(later[0].text_content().contains("removed from the context"), "{}", later[0].text_content());
    assert_eq!(later[1].text_content(), "small");
}

#[tokio::test]
async fn stored_results_keep_counting_their_rounds_and_prompt_mode_leaves_them_out_too() {
    for calling in [ToolCalling::Native, ToolCalling::Prompt] {
        // A page fetched in an earlier turn with one round left, and this turn's own fetch.
        let model = FakeModel::new(vec![calls(&[("c1", "fetch", r#"{"path":"b"}"#)]), answer("done")]);
        let fetch = FakeTool::with("fetch", Behaviour::Answer("new page"), true, Some(5));
        let mut request = with_tools(model.clone(), &[fetch], FakeGate::new(GateDecision::Allow));
        request.tool_calling = calling;
        request.completion.messages = vec![
            ChatMessage::user("fetch a"),
            ChatMessage::new(
                ChatRole::Assistant,
                vec![ContentPart::ToolCall(providers::ToolCall {
                    id: "old".into(),
                    name: "fetch".into(),
                    arguments: json!({"path": "a"}),
                })],
            ),
            ChatMessage::tool_results(vec![providers::ToolResult::text("old", "fetch", "old page", false)]),
            ChatMessage::user("now fetch b"),
        ];
        request.context_rounds_left = std::collections::HashMap::from([("old".to_owned(), 1)]);
        let (_, outcome) = run_request(request, CancellationToken::new()).await;
        assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
        let requests = model.requests();
        let all_text = |request: &CompletionRequest| -> String {
            request
                .messages
                .iter()
                .flat_map(|m| m.content.iter())
                .map(|p| match p {
                    ContentPart::Text { text } => text.clone(),
                    ContentPart::ToolResult(r) => r.text_content(),
                    _ => String::new(),
                })
                .collect()
        };
        assert!(all_text(&requests[0]).contains("old page"), "{calling:?}: its last round");
        let later = all_text(&requests[1]);
        assert!(!later.contains("old page") && later.contains("removed from the context"), "{calling:?}: {later}");
        assert!(later.contains("new page"), "{calling:?}: this turn's page has rounds left");
    }
}

#[tokio::test]
async fn usage_adds_up_over_the_steps() {
    let usage = |i, o| Ok(CompletionEvent::Usage(TokenUsage { input_tokens: i, output_tokens: o }));
    let mut first = calls(&[("c1", "read", r#"{"path":"a"}"#)]);
    first.insert(first.len() - 1, usage(10, 2));
    let model = FakeModel::new(vec![first, vec![text("ok"), usage(15, 3), finish(StopReason::Stop)]]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model, &[read], FakeGate::new(GateDecision::Allow));
    request.usage = TokenUsage { input_tokens: 100, output_tokens: 1 };
    let (chunks, _) = run_request(request, CancellationToken::new()).await;
    let usage = fold(&chunks).typed_metadata().usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (125, 6));
}

#[tokio::test]
async fn signatures_are_kept_and_sent_back_to_the_same_format() {
    let model = Arc::new(FakeModel {
        format: "anthropic",
        ..FakeModel::plain(vec![
            vec![
                Ok(CompletionEvent::ReasoningDelta("plan".into())),
                Ok(CompletionEvent::ReasoningSignature { signature: "sig-1".into() }),
                Ok(CompletionEvent::RedactedReasoning { data: "secret".into() }),
                Ok(CompletionEvent::ToolCallStart { index: 0, id: "c1".into(), name: "read".into() }),
                Ok(CompletionEvent::ToolCallDelta { index: 0, arguments: r#"{"path":"a"}"#.into() }),
                finish(StopReason::ToolCalls),
            ],
            answer("ok"),
        ])
    });
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let (chunks, _) =
        run_request(with_tools(model.clone(), &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new())
            .await;
    let second = &model.requests()[1];
    let reasoning: Vec<&providers::Reasoning> = second.messages[1]
        .content
        .iter()
        .filter_map(|p| if let ContentPart::Reasoning(r) = p { Some(r) } else { None })
        .collect();
    assert_eq!(reasoning[0].signature.as_deref(), Some("sig-1"));
    assert_eq!(reasoning[0].text, "plan");
    assert_eq!(reasoning[1].redacted.as_deref(), Some("secret"));
    // And the stored message keeps them for later turns.
    let message = fold(&chunks);
    let rebuilt = build_prompt(
        [&UiMessage::user_text("u", "hi"), &message],
        &PromptOptions { format: "anthropic", ..PromptOptions::default() },
    );
    assert!(matches!(&rebuilt[1].content[0], ContentPart::Reasoning(r) if r.signature.as_deref() == Some("sig-1")));
    assert!(matches!(&rebuilt[1].content[1], ContentPart::Reasoning(r) if r.redacted.as_deref() == Some("secret")));
}

// ---- prompt-based tool calling ---------------------------------------------------------

#[tokio::test]
async fn models_without_native_tools_call_them_through_the_prompt() {
    let model = FakeModel::new(vec![
        vec![
            text("Checking. <tool_"),
            text("call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>"),
            finish(StopReason::Stop),
        ],
        answer("It holds A."),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let mut request = with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.tool_calling = ToolCalling::Prompt;
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs(), vec![json!({"path": "a"})]);
    let requests = model.requests();
    assert!(requests[0].tools.is_empty(), "no native tools");
    assert!(requests[0].messages[0].role == ChatRole::System && requests[0].messages[0].text().contains("<tool_call>"));
    let last = requests[1].messages.last().unwrap();
    assert_eq!(last.role, ChatRole::User);
    assert!(last.text().contains("<tool_result name=\"read\"") && last.text().contains("\nA\n"), "{}", last.text());
    let message = fold(&chunks);
    assert_eq!(message.text(), "Checking. It holds A.");
    let states = tool_states(&message);
    assert_eq!(states.len(), 1);
    assert!(states[0].0.starts_with("ptc_") && states[0].1 == ToolState::OutputAvailable, "{states:?}");
}

#[tokio::test]
async fn prompt_written_calls_of_a_later_run_get_ids_of_their_own() {
    let script = || {
        vec![
            vec![
                text("<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>"),
                finish(StopReason::Stop),
            ],
            answer("ok"),
        ]
    };
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let mut seen = Vec::new();
    for _ in 0..2 {
        let mut request =
            with_tools(FakeModel::new(script()), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
        request.tool_calling = ToolCalling::Prompt;
        request.used_call_ids = seen.clone();
        let (chunks, _) = run_request(request, CancellationToken::new()).await;
        seen.extend(tool_states(&fold(&chunks)).into_iter().map(|(id, _)| id));
    }
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0], seen[1], "a resumed or retried reply never reuses an id");
    assert_eq!(read.runs().len(), 2);
}

// ---- hooks and features ---------------------------------------------------------------

/// Records what each hook saw, under a name, into a shared log.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    fail: bool,
    retry: bool,
}

impl Recorder {
    fn new(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(Self { name, log: log.clone(), fail: false, retry: false })
    }

    fn note(&self, what: String) {
        self.log.lock().unwrap().push(format!("{}:{what}", self.name));
    }

    fn result(&self) -> Result<(), HookError> {
        if self.fail { Err(HookError(format!("{} is broken", self.name))) } else { Ok(()) }
    }

    fn broken(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(Self { fail: true, ..Arc::into_inner(Recorder::new(name, log)).unwrap() })
    }
}

/// Every event logged on this thread while the guard lives, as `LEVEL field=value …`.
fn capture_logs() -> (Arc<Mutex<Vec<String>>>, tracing::subscriber::DefaultGuard) {
    use tracing_subscriber::layer::SubscriberExt;

    struct Capture(Arc<Mutex<Vec<String>>>);
    struct Fields(String);
    impl tracing::field::Visit for Fields {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.0.push_str(&format!("{}={value:?} ", field.name()));
        }
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            self.0.push_str(&format!("{}={value} ", field.name()));
        }
    }
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
            let mut fields = Fields(format!("{} ", event.metadata().level()));
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0.trim_end().to_owned());
        }
    }
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Capture(lines.clone()));
    (lines, tracing::subscriber::set_default(subscriber))
}

/// The warnings about failed hooks: `contributor/hook`.
fn failed_hooks(lines: &Mutex<Vec<String>>) -> Vec<String> {
    lines
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.starts_with("WARN") && line.contains("a hook failed; the turn goes on"))
        .map(|line| {
            let field = |name: &str| {
                line.split(' ').find_map(|part| part.strip_prefix(&format!("{name}="))).unwrap_or("?").to_owned()
            };
            format!("{}/{}", field("contributor"), field("hook"))
        })
        .collect()
}

#[async_trait]
impl AgentHooks for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    async fn on_start(&self) -> Result<(), HookError> {
        self.note("start".into());
        self.result()
    }

    async fn prepare_step(&self, plan: &StepPlan) -> Result<Option<StepPlan>, HookError> {
        if self.fail {
            return Err(HookError("broken".into()));
        }
        let mut plan = plan.clone();
        let seen = plan.messages.last().map(|m| m.text()).unwrap_or_default();
        self.note(format!("prepare({seen})"));
        plan.messages.push(ChatMessage::user(self.name));
        Ok(Some(plan))
    }

    async fn on_step_finish(&self, step: &StepReport, _emit: &mut crate::hooks::Emit) -> Result<(), HookError> {
        self.note(format!("step{}", step.step));
        self.result()
    }

    async fn on_tool_execution_start(&self, event: &ToolExecutionStart) -> Result<(), HookError> {
        self.note(format!("tool-start({})", event.tool_name));
        self.result()
    }

    async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) -> Result<(), HookError> {
        self.note(format!("tool-end({},{})", event.tool_name, event.error.is_none()));
        self.result()
    }

    async fn on_finish(&self, outcome: &TurnOutcome) -> Result<(), HookError> {
        self.note(format!("finish({})", matches!(outcome, TurnOutcome::Finished { .. })));
        self.result()
    }

    async fn on_abort(&self, reason: &str) -> Result<(), HookError> {
        self.note(format!("abort({reason})"));
        self.result()
    }

    async fn on_error(&self, _error: &protocol::ApiError) -> ErrorDecision {
        self.note("error".into());
        if self.retry { ErrorDecision::Retry } else { ErrorDecision::Abort }
    }
}

#[tokio::test]
async fn hooks_run_observers_then_features_then_callers_and_a_failing_one_does_not_stop_the_chain() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = FakeModel::new(vec![calls(&[("c1", "read", r#"{"path":"a"}"#)]), answer("done")]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model.clone(), &[read], FakeGate::new(GateDecision::Allow));
    request.hooks.add(HookSource::Caller, Recorder::new("caller", &log));
    request.hooks.add(HookSource::Observer, Recorder::broken("broken", &log));
    request.hooks.add(HookSource::Feature, Recorder::new("feature", &log));
    let (lines, _guard) = capture_logs();
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "broken:start",
            "feature:start",
            "caller:start",
            // prepare_step is chained: the caller sees the feature's addition; the broken
            // observer's failure leaves the plan as it was.
            "feature:prepare(hi)",
            "caller:prepare(feature)",
            "broken:step0",
            "feature:step0",
            "caller:step0",
            "broken:tool-start(read)",
            "feature:tool-start(read)",
            "caller:tool-start(read)",
            "broken:tool-end(read,true)",
            "feature:tool-end(read,true)",
            "caller:tool-end(read,true)",
            // A tool message has no text; the chain starts over from the conversation.
            "feature:prepare()",
            "caller:prepare(feature)",
            "broken:step1",
            "feature:step1",
            "caller:step1",
            "broken:finish(true)",
            "feature:finish(true)",
            "caller:finish(true)",
        ]
    );
    let sent = &model.requests()[0];
    let tail: Vec<String> = sent.messages.iter().rev().take(2).map(ChatMessage::text).collect();
    assert_eq!(tail, vec!["caller", "feature"], "the model gets the chained plan");
    // Every failure is logged, naming the contributor and the hook.
    assert_eq!(
        failed_hooks(&lines),
        vec![
            "broken/on_start",
            "broken/prepare_step",
            "broken/on_step_finish",
            "broken/on_tool_execution_start",
            "broken/on_tool_execution_end",
            "broken/prepare_step",
            "broken/on_step_finish",
            "broken/on_finish",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_user_stop_reaches_on_abort_in_order_and_a_failing_one_does_not_stop_the_chain() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(FakeModel {
        gap: Some(Duration::from_secs(1)),
        ..FakeModel::plain(vec![vec![text("a"), text("b"), text("c")]])
    });
    let mut request = request(model);
    request.hooks.add(HookSource::Caller, Recorder::new("caller", &log));
    request.hooks.add(HookSource::Feature, Recorder::new("feature", &log));
    request.hooks.add(HookSource::Observer, Recorder::broken("broken", &log));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stopper.cancel();
    });
    let (lines, _guard) = capture_logs();
    let (_, outcome) = run_request(request, cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    let log = log.lock().unwrap().clone();
    assert!(
        log.ends_with(&[
            "broken:abort(user_stop)".to_owned(),
            "feature:abort(user_stop)".to_owned(),
            "caller:abort(user_stop)".to_owned(),
            "broken:finish(false)".to_owned(),
            "feature:finish(false)".to_owned(),
            "caller:finish(false)".to_owned(),
        ]),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("step")), "the step never finished: {log:?}");
    let failed = failed_hooks(&lines);
    assert!(failed.ends_with(&["broken/on_abort".to_owned(), "broken/on_finish".to_owned()]), "{failed:?}");
}

/// Remembers how long each tool call took, as `on_tool_execution_end` reports it.
struct Stopwatch(Mutex<Vec<(String, Duration)>>);

#[async_trait]
impl AgentHooks for Stopwatch {
    fn name(&self) -> &str {
        "stopwatch"
    }

    async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) -> Result<(), HookError> {
        self.0.lock().unwrap().push((event.call_id.clone(), event.duration));
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn on_tool_execution_end_says_how_long_the_call_took() {
    let model = FakeModel::new(vec![
        calls(&[("c1", "slow", r#"{"path":"a"}"#), ("c2", "quick", r#"{"path":"b"}"#)]),
        answer("ok"),
    ]);
    let slow = FakeTool::new("slow", Behaviour::Sleep(Duration::from_secs(3)));
    let quick = FakeTool::new("quick", Behaviour::Answer("x"));
    let mut request = with_tools(model, &[slow, quick], FakeGate::new(GateDecision::Allow));
    let stopwatch = Arc::new(Stopwatch(Mutex::new(Vec::new())));
    request.hooks.add(HookSource::Caller, stopwatch.clone());
    run_request(request, CancellationToken::new()).await;
    let timings = stopwatch.0.lock().unwrap().clone();
    assert_eq!(timings, vec![("c1".to_owned(), Duration::from_secs(3)), ("c2".to_owned(), Duration::ZERO)]);
}

#[tokio::test]
async fn prepare_step_is_chained_past_a_failing_hook() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = FakeModel::new(vec![answer("ok")]);
    let mut request = request(model.clone());
    request.hooks.add(HookSource::Caller, Recorder::new("first", &log));
    request.hooks.add(HookSource::Caller, Recorder::broken("middle", &log));
    request.hooks.add(HookSource::Caller, Recorder::new("last", &log));
    run_request(request, CancellationToken::new()).await;
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&"last:prepare(first)".to_owned()), "the last sees the first's plan: {log:?}");
    let sent: Vec<String> = model.requests()[0].messages.iter().map(ChatMessage::text).collect();
    assert_eq!(sent, vec!["hi", "first", "last"]);
}

#[tokio::test]
async fn on_error_asks_every_hook_and_any_retry_wins_wherever_it_comes() {
    let overloaded = || {
        Err(ProviderError {
            kind: ProviderErrorKind::Overloaded,
            message: "busy".into(),
            status: Some(529),
            retryable: true,
        })
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = FakeModel::new(vec![vec![overloaded()], answer("fine")]);
    let mut request = request(model.clone());
    request.hooks.add(
        HookSource::Observer,
        Arc::new(Recorder { retry: true, ..Arc::into_inner(Recorder::new("yes", &log)).unwrap() }),
    );
    request.hooks.add(HookSource::Feature, Recorder::new("no", &log));
    request.hooks.add(HookSource::Caller, Recorder::new("also-no", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(model.requests().len(), 2);
    let asked: Vec<String> = log.lock().unwrap().iter().filter(|l| l.ends_with(":error")).cloned().collect();
    assert_eq!(asked, vec!["yes:error", "no:error", "also-no:error"], "a retry does not cut the others short");

    // With no hooks at all the default is abort.
    let model = FakeModel::new(vec![vec![overloaded()], answer("never")]);
    let (_, outcome) = run_request(request_for(model.clone()), CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }));
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn on_error_retries_when_any_hook_says_so_and_aborts_by_default() {
    let overloaded = || {
        Err(ProviderError {
            kind: ProviderErrorKind::Overloaded,
            message: "busy".into(),
            status: Some(529),
            retryable: true,
        })
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = FakeModel::new(vec![vec![overloaded()], answer("second time lucky")]);
    let mut request = request(model.clone());
    request.hooks.add(HookSource::Caller, Recorder::new("no", &log));
    request.hooks.add(
        HookSource::Caller,
        Arc::new(Recorder { retry: true, ..Arc::into_inner(Recorder::new("yes", &log)).unwrap() }),
    );
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(fold(&chunks).text(), "second time lucky");
    assert!(log.lock().unwrap().contains(&"no:error".to_owned()), "every hook is asked");

    let model = FakeModel::new(vec![vec![overloaded()], answer("never")]);
    let mut request = request_for(model.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    request.hooks.add(HookSource::Caller, Recorder::new("no", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }));
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn on_abort_hears_a_stall() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(FakeModel { hang_at_end: true, ..FakeModel::plain(vec![vec![text("a")]]) });
    let mut request = request(model);
    request.hooks.add(HookSource::Caller, Recorder::new("c", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
    assert!(log.lock().unwrap().ends_with(&["c:abort(stalled)".to_owned(), "c:finish(false)".to_owned()]));
}

/// A stateless feature: adds a system note, and asks for one more round when the answer
/// was cut off by the token limit.
struct FinishCutOffAnswers;

impl Feature for FinishCutOffAnswers {
    fn name(&self) -> &str {
        "finish-cut-off"
    }

    fn process_prompts(&self, ctx: &PromptContext<'_>, messages: &mut Vec<ChatMessage>) {
        messages.insert(0, ChatMessage::system(format!("note for step {}", ctx.step)));
    }

    fn response_complete(&self, ctx: &ResponseContext<'_>) -> RoundAction {
        if *ctx.finish == StopReason::Length {
            RoundAction::NextRound { messages: vec![ChatMessage::user("Go on from where you stopped.")] }
        } else {
            RoundAction::Done
        }
    }
}

#[tokio::test]
async fn features_assemble_the_prompt_and_may_ask_for_another_round() {
    let model = FakeModel::new(vec![vec![text("Part one"), finish(StopReason::Length)], answer(", part two.")]);
    let mut request = request(model.clone());
    request.features.push(Arc::new(FinishCutOffAnswers));
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(fold(&chunks).text(), "Part one, part two.");
    let requests = model.requests();
    assert_eq!(requests[0].messages[0].text(), "note for step 0");
    assert_eq!(requests[1].messages[0].text(), "note for step 1");
    assert_eq!(requests[1].messages.last().unwrap().text(), "Go on from where you stopped.");
}
