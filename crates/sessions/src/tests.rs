//! The host and its turns against a runtime the test plays by hand (`fake`), on tokio's
//! paused clock: warm reuse and the idle close, permission prompts, stop, permission
//! modes, steering, resume tokens and a runtime that fails.

mod fake;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::UiChunk;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use turn::{
    Allowed, CallRecord, ChunkSink, GateCall, GateDecision, GateError, RunContext, SinkClosed, ToolGate, TurnOutcome,
};

use self::fake::{Call, FakeDriver, Peer, Runtime};
use crate::driver::{DriverError, DriverEvent, PermissionAnswer, PermissionMode, SessionSpec};
use crate::{Decision, SessionHost, TokenStore};

const IDLE: Duration = Duration::from_secs(300);

/// Asks the user for every call, as approval `approval-<call id>`.
#[derive(Default)]
struct AskingGate {
    asked: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl ToolGate for AskingGate {
    async fn check(&self, call: &GateCall) -> Result<GateDecision, GateError> {
        self.asked.lock().unwrap().push(call.call_id.clone());
        Ok(GateDecision::Ask { approval_id: format!("approval-{}", call.call_id) })
    }

    async fn begin(&self, _call_id: &str) -> Result<Option<Allowed>, GateError> {
        Ok(Some(Allowed::ByUser))
    }

    async fn finish(&self, _call_id: &str, _record: &CallRecord) -> Result<(), GateError> {
        Ok(())
    }
}

/// Resume tokens as stored; a save waits for a permit (the test may hold them back).
struct Tokens {
    saved: Mutex<Vec<String>>,
    permits: Semaphore,
}

impl Tokens {
    fn new(permits: usize) -> Arc<Self> {
        Arc::new(Self { saved: Mutex::default(), permits: Semaphore::new(permits) })
    }

    fn saved(&self) -> Vec<String> {
        self.saved.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl TokenStore for Tokens {
    async fn save(&self, token: &str) -> Result<(), String> {
        self.permits.acquire().await.map_err(|e| e.to_string())?.forget();
        self.saved.lock().unwrap().push(token.to_owned());
        Ok(())
    }
}

/// The chunks of one reply, as the stream manager would get them.
struct Chunks(mpsc::UnboundedSender<UiChunk>);

impl ChunkSink for Chunks {
    async fn send(&mut self, chunk: UiChunk) -> Result<(), SinkClosed> {
        self.0.send(chunk).map_err(|_| SinkClosed)
    }
}

struct Harness {
    host: SessionHost,
    driver: Arc<FakeDriver>,
    runtime: Runtime,
    gate: Arc<AskingGate>,
    tokens: Arc<Tokens>,
}

/// A turn running on its own task.
struct Running {
    chunks: mpsc::UnboundedReceiver<UiChunk>,
    cancel: CancellationToken,
    outcome: JoinHandle<TurnOutcome>,
}

fn harness() -> Harness {
    harness_with(Tokens::new(usize::MAX >> 4))
}

fn harness_with(tokens: Arc<Tokens>) -> Harness {
    let (driver, runtime) = FakeDriver::new();
    let host = SessionHost::new(driver.clone(), IDLE);
    Harness { host, driver, runtime, gate: Arc::default(), tokens }
}

fn spec(mode: PermissionMode) -> SessionSpec {
    SessionSpec {
        session_id: "s1".into(),
        workspace: "/work/project".into(),
        model: "model-1".into(),
        permission_mode: mode,
        env: Vec::new(),
    }
}

impl Harness {
    fn start(&self, prompt: &str) -> Running {
        self.start_as(spec(PermissionMode::Default), prompt, None)
    }

    /// A turn as the engine starts it: `stored_token` is the session row's token.
    fn start_as(&self, spec: SessionSpec, prompt: &str, stored_token: Option<&str>) -> Running {
        let turn = self.host.session_turn(
            spec,
            prompt.to_owned(),
            stored_token.map(str::to_owned),
            self.gate.clone(),
            self.tokens.clone(),
        );
        let cancel = CancellationToken::new();
        let context = RunContext {
            cancel: cancel.clone(),
            steer: CancellationToken::new(),
            part_offset: 0,
            idle_timeout: Duration::from_secs(120),
        };
        let (tx, chunks) = mpsc::unbounded_channel();
        let outcome = tokio::spawn(async move { turn.run_with(context, &mut Chunks(tx)).await });
        Running { chunks, cancel, outcome }
    }
}

impl Running {
    async fn outcome(self) -> (TurnOutcome, Vec<UiChunk>) {
        let Running { mut chunks, outcome, .. } = self;
        let outcome = outcome.await.expect("the turn panicked");
        let mut rest = Vec::new();
        while let Ok(chunk) = chunks.try_recv() {
            rest.push(chunk);
        }
        (outcome, rest)
    }

    /// Reads chunks until one matches.
    async fn chunk_until(&mut self, what: &str, wanted: impl Fn(&UiChunk) -> bool) -> UiChunk {
        loop {
            let chunk = self.chunks.recv().await.unwrap_or_else(|| panic!("the turn ended before {what}"));
            if wanted(&chunk) {
                return chunk;
            }
        }
    }

    async fn approval_request(&mut self) -> String {
        match self.chunk_until("an approval request", |c| matches!(c, UiChunk::ToolApprovalRequest { .. })).await {
            UiChunk::ToolApprovalRequest { approval_id, .. } => approval_id,
            _ => unreachable!(),
        }
    }
}

fn finished(token: Option<&str>) -> DriverEvent {
    DriverEvent::TurnFinished {
        resume_token: token.map(str::to_owned),
        input_tokens: Some(10),
        output_tokens: Some(5),
        cost_usd: None,
        error: None,
        interrupted: false,
    }
}

fn interrupted() -> DriverEvent {
    DriverEvent::TurnFinished {
        resume_token: None,
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        error: None,
        interrupted: true,
    }
}

fn text(text: &str) -> Vec<DriverEvent> {
    vec![
        DriverEvent::ModelCallStarted,
        DriverEvent::TextDelta { block: 0, text: text.to_owned() },
        DriverEvent::BlockStopped { block: 0 },
    ]
}

fn write_request(call: &str) -> DriverEvent {
    DriverEvent::PermissionRequest {
        request_id: format!("p-{call}"),
        tool_use_id: Some(call.to_owned()),
        tool_name: "Write".into(),
        input: json!({ "file_path": "/work/project/a.txt", "content": "first" }),
    }
}

fn emit_all(peer: &Peer, events: Vec<DriverEvent>) {
    for event in events {
        peer.emit(event);
    }
}

fn success() -> TurnOutcome {
    TurnOutcome::Finished { reason: protocol::FinishReason::Stop }
}

fn stopped() -> TurnOutcome {
    TurnOutcome::Paused { reason: protocol::StatusReason::UserStop }
}

fn error_of(outcome: &TurnOutcome) -> &protocol::ApiError {
    match outcome {
        TurnOutcome::Failed { error } => error,
        other => panic!("the turn did not fail: {other:?}"),
    }
}

fn text_of(chunks: &[UiChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// The `data-steer` markers' states, in order.
fn steer_markers(chunks: &[UiChunk]) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::Data(d) if d.kind == "data-steer" => d.data["state"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

fn resume_tokens(chunks: &[UiChunk]) -> Vec<Value> {
    chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::MessageMetadata { message_metadata } => message_metadata.get("resumeToken").cloned(),
            _ => None,
        })
        .collect()
}

// ---- the warm connection and the idle timer ---------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_turn_within_the_idle_window_reuses_the_connection_which_closes_after_the_idle_time() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.resume, None, "a new session starts fresh");
    assert_eq!(peer.call().await, Call::Send("one".into()));
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    emit_all(&peer, text("First."));
    peer.emit(finished(Some("tok-1")));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "First.");

    // Just inside the window: the same connection takes the next turn.
    tokio::time::sleep(IDLE - Duration::from_secs(1)).await;
    let turn = h.start("two");
    assert_eq!(peer.call().await, Call::Send("two".into()), "the warm connection took the second turn");
    emit_all(&peer, text("Second."));
    peer.emit(finished(Some("tok-1")));
    assert_eq!(turn.outcome().await.0, success());
    h.runtime.no_new_connection();
    assert_eq!(h.driver.connects(), 1);

    // The idle time counts from the last turn; then the connection closes.
    let quiet = Instant::now();
    assert_eq!(peer.call().await, Call::Close);
    let waited = quiet.elapsed();
    assert!(waited >= IDLE && waited < IDLE + Duration::from_secs(1), "closed after {waited:?}");

    // The next turn connects again, resuming the runtime's session.
    let turn = h.start("three");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-1"));
    assert_eq!(again.call().await, Call::Send("three".into()));
    again.emit(finished(Some("tok-1")));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 2);
}

#[tokio::test(start_paused = true)]
async fn after_a_restart_the_first_turn_resumes_the_stored_token() {
    let mut h = harness();
    let turn = h.start_as(spec(PermissionMode::Default), "hello again", Some("stored-token"));
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.resume.as_deref(), Some("stored-token"));
    assert_eq!(peer.call().await, Call::Send("hello again".into()));
    peer.emit(finished(Some("stored-token")));
    assert_eq!(turn.outcome().await.0, success());
}

// ---- permission prompts -----------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_permission_prompt_waits_for_the_user_and_carries_edited_input_and_always_back() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("write it".into()));
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    assert_eq!(approval, "approval-t1");
    peer.no_call();

    let edited = json!({ "file_path": "/work/project/a.txt", "content": "edited" });
    let decision = Decision { approved: true, input: edited.clone(), reason: None, always: true };
    assert!(h.host.decide(&approval, decision.clone()));
    assert_eq!(
        peer.call().await,
        Call::Answer {
            request_id: "p-t1".into(),
            answer: PermissionAnswer::Allow { input: edited, always: Some("Write".into()) }
        }
    );
    assert!(!h.host.decide(&approval, decision), "a second answer finds nobody waiting");
    peer.emit(DriverEvent::ToolResult { id: "t1".into(), output: protocol::tool::ToolOutput::text("written") });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::ToolOutputAvailable { tool_call_id, .. } if tool_call_id == "t1"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_denial_tells_the_runtime_the_users_reason() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    h.host.decide(
        &approval,
        Decision { approved: false, input: json!({}), reason: Some("not there".into()), always: false },
    );
    assert_eq!(
        peer.call().await,
        Call::Answer {
            request_id: "p-t1".into(),
            answer: PermissionAnswer::Deny {
                message: "The user denied this tool call. Their reason: not there".into()
            }
        }
    );
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_prompt_the_runtime_cancels_is_not_answered_and_the_turn_goes_on() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    peer.emit(DriverEvent::PermissionCancelled { request_id: "p-t1".into() });
    emit_all(&peer, text("Never mind."));
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Never mind.");
    peer.no_call();
    let late = Decision { approved: true, input: json!({}), reason: None, always: false };
    assert!(!h.host.decide(&approval, late), "the card's answer has nobody to go to");
}

#[tokio::test(start_paused = true)]
async fn stop_while_a_prompt_waits_interrupts_the_runtime_and_keeps_the_connection() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    // The CLI withdraws its prompt, then ends the turn as interrupted.
    peer.emit(DriverEvent::PermissionCancelled { request_id: "p-t1".into() });
    peer.emit(interrupted());
    assert_eq!(turn.outcome().await.0, stopped());
    peer.no_call();
    assert!(!h.host.decide(&approval, Decision { approved: true, input: json!({}), reason: None, always: false }));

    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Send("something else".into()), "the session goes on, warm");
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 1);
}

#[tokio::test(start_paused = true)]
async fn stop_while_a_prompt_waits_closes_a_runtime_that_cannot_be_interrupted() {
    let mut h = harness();
    h.driver.quirks.lock().unwrap().interrupt_fails = true;
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    turn.approval_request().await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    assert_eq!(peer.call().await, Call::Close);
    assert_eq!(turn.outcome().await.0, stopped());

    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.call().await, Call::Send("again".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn stop_mid_turn_interrupts_and_the_partial_reply_stays() {
    let mut h = harness();
    let mut turn = h.start("talk");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Half a"));
    turn.chunk_until("the text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    peer.emit(interrupted());
    assert_eq!(turn.outcome().await.0, stopped());
}

// ---- permission modes ------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_permission_mode_change_reaches_the_live_connection_once_its_turn_is_over() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    let host = h.host.clone();
    let change = tokio::spawn(async move { host.set_permission_mode("s1", PermissionMode::AcceptEdits).await });
    tokio::task::yield_now().await;
    peer.no_call();
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(peer.call().await, Call::SetMode(PermissionMode::AcceptEdits), "after the turn, not during it");
    change.await.unwrap();

    // The engine's next turn asks for the new mode: the live connection already has it.
    let turn = h.start_as(spec(PermissionMode::AcceptEdits), "two", None);
    assert_eq!(peer.call().await, Call::Send("two".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_refused_permission_mode_change_means_a_new_connection_with_that_mode() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(finished(Some("tok-1")));
    turn.outcome().await;
    h.driver.quirks.lock().unwrap().mode_change_fails = true;
    h.host.set_permission_mode("s1", PermissionMode::Plan).await;
    assert_eq!(peer.call().await, Call::SetMode(PermissionMode::Plan));

    // Never left running under the old mode: the next turn starts a connection in plan mode.
    let turn = h.start_as(spec(PermissionMode::Plan), "two", None);
    assert_eq!(peer.call().await, Call::Close);
    let mut again = h.runtime.connected().await;
    assert_eq!((again.spec.permission_mode, again.resume.as_deref()), (PermissionMode::Plan, Some("tok-1")));
    assert_eq!(again.call().await, Call::Send("two".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

// ---- steering --------------------------------------------------------------------------

fn before_tool(id: &str) -> DriverEvent {
    DriverEvent::BeforeTool { request_id: id.to_owned(), tool_use_id: Some(format!("tool-{id}")) }
}

fn steered_with(call: Call, text: &str) -> bool {
    matches!(call, Call::BeforeTool { context: Some(context), .. } if context.contains(text))
}

#[tokio::test(start_paused = true)]
async fn a_steer_goes_in_at_the_next_tool_boundary_and_its_reply_goes_on_with_the_runtimes_turn() {
    let mut h = harness();
    let turn = h.start("do the task");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("do the task".into()));
    emit_all(&peer, text("Working."));
    h.host.steer("s1", "also mention bananas".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "also mention bananas"));
    peer.emit(DriverEvent::ToolResult { id: "tool-h1".into(), output: protocol::tool::ToolOutput::text("ok") });
    // The model's next call acts on the message: the reply ends just before it.
    emit_all(&peer, text("Bananas, as asked."));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, TurnOutcome::Steered);
    assert_eq!(text_of(&chunks), "Working.");
    assert_eq!(steer_markers(&chunks), ["delivered"]);

    // The inbox starts the steering message as the next turn: it is not sent again, and
    // the runtime's events go on into it.
    let turn = h.start("also mention bananas");
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Bananas, as asked.");
    peer.no_call();

    // Consumed: a later turn's boundary gets nothing.
    let turn = h.start("next");
    assert_eq!(peer.call().await, Call::Send("next".into()));
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_the_turn_never_reached_is_marked_and_runs_exactly_once_as_its_own_turn() {
    let mut h = harness();
    let turn = h.start("quick question");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Answer."));
    h.host.steer("s1", "and another thing".into());
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(steer_markers(&chunks), ["undelivered"]);

    // Its own turn (the inbox starts it): sent once, never steered into that turn.
    let turn = h.start("and another thing");
    assert_eq!(peer.call().await, Call::Send("and another thing".into()));
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(steer_markers(&chunks).is_empty());

    // Nor into any later one.
    let turn = h.start("later");
    assert_eq!(peer.call().await, Call::Send("later".into()));
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_left_over_from_a_failed_turn_never_goes_into_a_later_one() {
    let mut h = harness();
    let turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "held message".into());
    peer.emit(DriverEvent::TurnFinished {
        resume_token: None,
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        error: Some("API Error: 500".into()),
        interrupted: false,
    });
    let (outcome, chunks) = turn.outcome().await;
    error_of(&outcome);
    assert!(steer_markers(&chunks).is_empty(), "the inbox holds it with its own note");

    // The user sends something else while the inbox holds the message.
    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Send("something else".into()));
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_delivered_but_never_acted_on_runs_as_its_own_turn() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "stop after this".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "stop after this"));
    // The turn ends without another model call: the agent never read it.
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(steer_markers(&chunks), ["delivered", "undelivered"]);

    let turn = h.start("stop after this");
    assert_eq!(peer.call().await, Call::Send("stop after this".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn two_steers_go_in_one_reply_each_in_the_order_they_were_sent() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "first".into());
    h.host.steer("s1", "second".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "first"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("first");
    peer.emit(before_tool("h2"));
    assert!(steered_with(peer.call().await, "second"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("second");
    emit_all(&peer, text("Both done."));
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Both done.");
    peer.no_call();
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_steer_is_not_delivered() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "never mind".into());
    h.host.forget_steer("s1", "never mind");
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(steer_markers(&chunks).is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_edited_steer_goes_in_as_edited_and_one_made_a_queued_message_not_at_all() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "mention pears".into());
    h.host.steer("s1", "later, maybe".into());
    h.host.replace_steer("s1", "mention pears", Some("mention apples".into()));
    h.host.replace_steer("s1", "later, maybe", None);
    peer.emit(before_tool("h1"));
    let call = peer.call().await;
    assert!(steered_with(call.clone(), "mention apples") && !steered_with(call, "pears"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("mention apples");
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn another_message_before_the_steered_reply_goes_on_ends_the_runtimes_turn_first() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    h.host.steer("s1", "steer".into());
    peer.emit(before_tool("h1"));
    peer.call().await;
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    // The steering message was cancelled from the inbox; something else is sent.
    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Close, "the half-continued runtime turn is ended");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-1"));
    assert_eq!(again.call().await, Call::Send("something else".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn stop_between_a_steered_reply_and_its_continuation_ends_the_runtimes_turn() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "steer".into());
    peer.emit(before_tool("h1"));
    peer.call().await;
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);
    // The continuation waits longer than the idle time: the runtime's turn is not cut.
    tokio::time::sleep(IDLE * 2).await;
    peer.no_call();
    h.host.stop("s1").await;
    assert_eq!(peer.call().await, Call::Close);
}

// ---- resume tokens ---------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn resume_tokens_are_stored_before_the_turn_goes_on_also_when_it_fails() {
    let tokens = Tokens::new(0);
    let mut h = harness_with(tokens.clone());
    let mut turn = h.start("hello");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    emit_all(&peer, text("Par"));
    peer.emit(DriverEvent::TurnFinished {
        resume_token: Some("tok-2".into()),
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        error: Some("API Error: 400 bad request".into()),
        interrupted: false,
    });
    // Nothing after the token goes out until it is stored.
    let has_token = |c: &UiChunk| !resume_tokens(std::slice::from_ref(c)).is_empty();
    let held = tokio::time::timeout(Duration::from_secs(60), turn.chunk_until("a token", has_token)).await;
    assert!(held.is_err(), "the token went out before it was stored: {held:?}");
    assert!(tokens.saved().is_empty());
    tokens.permits.add_permits(1);
    let chunk = turn.chunk_until("the token", has_token).await;
    assert_eq!(resume_tokens(&[chunk]), [json!("tok-1")]);
    assert_eq!(tokens.saved(), ["tok-1"]);
    tokens.permits.add_permits(1);
    let (outcome, chunks) = turn.outcome().await;
    assert!(error_of(&outcome).message.contains("API Error: 400"));
    assert_eq!(tokens.saved(), ["tok-1", "tok-2"], "the failed turn's token is stored too");
    assert_eq!(resume_tokens(&chunks), [json!("tok-2")], "and it is on the reply");

    // The runtime goes away: the next connection resumes from the newest token.
    peer.exit("");
    tokens.permits.add_permits(10);
    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-2"));
    again.call().await;
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

// ---- a runtime that fails --------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_runtime_that_exits_mid_turn_fails_it_with_what_it_said_and_the_next_turn_starts_it_again() {
    let mut h = harness();
    let mut turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Half"));
    turn.chunk_until("the text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    peer.exit("It exited with exit code 7.\nIts error output ended with:\n  out of memory");
    let (outcome, _) = turn.outcome().await;
    let error = error_of(&outcome);
    assert_eq!(error.code.as_deref(), Some("agent"));
    assert!(error.message.starts_with("Fake agent stopped unexpectedly during the turn"), "{}", error.message);
    assert!(error.message.contains("exit code 7") && error.message.contains("out of memory"), "{}", error.message);
    assert_eq!(peer.call().await, Call::Close);

    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.call().await, Call::Send("again".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_runtime_that_exits_while_a_prompt_waits_fails_the_turn_with_what_it_said() {
    let mut h = harness();
    let mut turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    peer.exit("segfault");
    let (outcome, _) = turn.outcome().await;
    let message = &error_of(&outcome).message;
    assert!(message.contains("while waiting for an approval") && message.contains("segfault"), "{message}");
    assert!(!h.host.decide(&approval, Decision { approved: true, input: json!({}), reason: None, always: false }));
}

#[tokio::test(start_paused = true)]
async fn a_runtime_that_does_not_start_fails_the_turn_and_the_next_turn_tries_again() {
    let mut h = harness();
    h.driver.quirks.lock().unwrap().connect_errors.push_back(DriverError::NotInstalled("install it".into()));
    let (outcome, _) = h.start("hello").outcome().await;
    let error = error_of(&outcome);
    assert_eq!((error.code.as_deref(), error.message.as_str()), (Some("agent_not_installed"), "install it"));

    let turn = h.start("hello again");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("hello again".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 2);
}
