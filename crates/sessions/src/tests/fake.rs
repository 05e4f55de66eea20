//! An in-process runtime the test plays by hand: each connection hands the test a
//! [`Peer`] that emits the runtime's events and sees what the host sent, in order.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::mpsc;

use crate::driver::{Connection, Driver, DriverError, DriverEvent, PermissionAnswer, PermissionMode, SessionSpec};

/// What the host did to a connection.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Call {
    Send(String),
    Answer { request_id: String, answer: PermissionAnswer },
    BeforeTool { request_id: String, context: Option<String> },
    Interrupt,
    SetMode(PermissionMode),
    Close,
}

/// How the fake runtime misbehaves, shared by the driver and every connection.
#[derive(Default)]
pub(crate) struct Quirks {
    /// Connection attempts fail with these, in order.
    pub(crate) connect_errors: VecDeque<DriverError>,
    pub(crate) interrupt_fails: bool,
    pub(crate) mode_change_fails: bool,
}

pub(crate) struct FakeDriver {
    peers: mpsc::UnboundedSender<Peer>,
    connects: AtomicUsize,
    pub(crate) quirks: Arc<Mutex<Quirks>>,
}

/// The test's side of the fake runtime: the connections as they are made.
pub(crate) struct Runtime {
    peers: mpsc::UnboundedReceiver<Peer>,
}

impl FakeDriver {
    pub(crate) fn new() -> (Arc<Self>, Runtime) {
        let (tx, peers) = mpsc::unbounded_channel();
        let driver = Arc::new(Self { peers: tx, connects: AtomicUsize::new(0), quirks: Arc::default() });
        (driver, Runtime { peers })
    }

    /// How many connections were attempted (processes started, for the CLI).
    pub(crate) fn connects(&self) -> usize {
        self.connects.load(Ordering::SeqCst)
    }

    fn quirks(&self) -> std::sync::MutexGuard<'_, Quirks> {
        self.quirks.lock().unwrap()
    }
}

impl Runtime {
    /// The next connection the host makes.
    pub(crate) async fn connected(&mut self) -> Peer {
        self.peers.recv().await.expect("the driver is gone")
    }

    /// Asserts that the host made no new connection so far.
    pub(crate) fn no_new_connection(&mut self) {
        assert!(self.peers.try_recv().is_err(), "the host connected again");
    }
}

#[async_trait]
impl Driver for FakeDriver {
    fn name(&self) -> &str {
        "Fake agent"
    }

    async fn connect(&self, spec: &SessionSpec, resume: Option<&str>) -> Result<Box<dyn Connection>, DriverError> {
        self.connects.fetch_add(1, Ordering::SeqCst);
        if let Some(error) = self.quirks().connect_errors.pop_front() {
            return Err(error);
        }
        let (events_tx, events) = mpsc::unbounded_channel();
        let (calls, calls_rx) = mpsc::unbounded_channel();
        let last_words = Arc::new(Mutex::new(None));
        let peer = Peer {
            events: Some(events_tx),
            calls: calls_rx,
            resume: resume.map(str::to_owned),
            spec: spec.clone(),
            last_words: last_words.clone(),
        };
        self.peers.send(peer).expect("the test is gone");
        Ok(Box::new(FakeConnection { events, calls, quirks: self.quirks.clone(), last_words }))
    }
}

/// One connection as the runtime sees it.
pub(crate) struct Peer {
    events: Option<mpsc::UnboundedSender<DriverEvent>>,
    calls: mpsc::UnboundedReceiver<Call>,
    /// The token the connection was asked to resume.
    pub(crate) resume: Option<String>,
    pub(crate) spec: SessionSpec,
    last_words: Arc<Mutex<Option<String>>>,
}

impl Peer {
    pub(crate) fn emit(&self, event: DriverEvent) {
        self.events.as_ref().expect("the runtime has exited").send(event).expect("the host dropped the connection");
    }

    /// The next thing the host did to this connection.
    pub(crate) async fn call(&mut self) -> Call {
        self.calls.recv().await.expect("the connection is gone")
    }

    /// Asserts that the host did nothing more to this connection so far.
    pub(crate) fn no_call(&mut self) {
        if let Ok(call) = self.calls.try_recv() {
            panic!("unexpected {call:?}");
        }
    }

    /// The runtime exits (its output ends), leaving `words` for messages.
    pub(crate) fn exit(&mut self, words: &str) {
        *self.last_words.lock().unwrap() = Some(words.to_owned());
        self.events = None;
    }
}

struct FakeConnection {
    events: mpsc::UnboundedReceiver<DriverEvent>,
    calls: mpsc::UnboundedSender<Call>,
    quirks: Arc<Mutex<Quirks>>,
    last_words: Arc<Mutex<Option<String>>>,
}

impl FakeConnection {
    fn record(&self, call: Call) {
        // The test may have finished with this connection.
        let _ = self.calls.send(call);
    }
}

#[async_trait]
impl Connection for FakeConnection {
    async fn send(&mut self, text: &str) -> Result<(), DriverError> {
        self.record(Call::Send(text.to_owned()));
        Ok(())
    }

    async fn next_event(&mut self) -> Option<DriverEvent> {
        self.events.recv().await
    }

    async fn answer_permission(&mut self, request_id: &str, answer: PermissionAnswer) -> Result<(), DriverError> {
        self.record(Call::Answer { request_id: request_id.to_owned(), answer });
        Ok(())
    }

    async fn answer_before_tool(&mut self, request_id: &str, context: Option<String>) -> Result<(), DriverError> {
        self.record(Call::BeforeTool { request_id: request_id.to_owned(), context });
        Ok(())
    }

    async fn interrupt(&mut self) -> Result<(), DriverError> {
        self.record(Call::Interrupt);
        if self.quirks.lock().unwrap().interrupt_fails {
            return Err(DriverError::Failed("it did not answer".into()));
        }
        Ok(())
    }

    async fn set_permission_mode(&mut self, mode: PermissionMode) -> Result<(), DriverError> {
        self.record(Call::SetMode(mode));
        if self.quirks.lock().unwrap().mode_change_fails {
            return Err(DriverError::Failed("it refused".into()));
        }
        Ok(())
    }

    fn is_closed(&self) -> bool {
        self.events.is_closed() && self.events.is_empty()
    }

    async fn diagnostics(&mut self) -> Option<String> {
        self.last_words.lock().unwrap().clone()
    }

    async fn close(self: Box<Self>) {
        self.record(Call::Close);
    }
}
