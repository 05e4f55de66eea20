//! The host and its turns against a runtime the test plays by hand (`fake`), on tokio's
//! paused clock: warm reuse and the idle close, permission prompts, stop, permission
//! modes, steering, resume tokens and a runtime that fails.

mod fake;

mod acp;
mod connection;
mod permissions;
mod steering;

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
        runtime: String::new(),
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
        preview: None,
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
