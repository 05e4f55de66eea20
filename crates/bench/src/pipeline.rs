//! The pipeline under test, built as the engine builds it: a [`StreamManager`] over a real
//! SQLite file in a temporary folder, turns with an [`OpenAiChat`] (or a fake) model, and
//! listeners that drain their subscriptions and check `seq` continuity.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use protocol::{MessageId, ModelRef, ProviderId, StreamMessage, TopicId, TurnId, UiChunk, UiMessage};
use providers::{ChatMessage, CompletionRequest, LanguageModel, OpenAiChat, OpenAiChatConfig};
use store::Store;
use streams::{
    Listener, ListenerId, PreparedExecution, PreparedTurn, ReplySlot, StreamConfig, StreamError, StreamManager,
    Subscription, UserInput,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::machine::monotonic_ns;

/// `--without-search-index`: every pipeline's database drops the search index's triggers,
/// so a run shows what the index costs the stream path.
pub static WITHOUT_SEARCH_INDEX: AtomicBool = AtomicBool::new(false);
use crate::tap::parse_marker;

pub struct Pipeline {
    pub manager: StreamManager,
    pub store: Store,
    /// Turn admissions that failed with `database is locked` and were retried.
    pub busy_retries: Arc<AtomicU64>,
    http: providers::ProviderHttp,
    _dir: tempfile::TempDir,
}

impl Pipeline {
    /// A fresh database in a temporary folder and a stream manager with the app's defaults.
    pub async fn start() -> Result<Self> {
        Self::with_config(StreamConfig::default()).await
    }

    pub async fn with_config(config: StreamConfig) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let store = Store::open(&dir.path().join("colloquy.db")).await?;
        if WITHOUT_SEARCH_INDEX.load(Ordering::Relaxed) {
            colloquy_bench::drop_search_index(&store).await?;
        }
        let manager = StreamManager::new(store.clone(), config);
        let http = providers::ProviderHttp::new()?;
        Ok(Self { manager, store, http, busy_retries: Arc::default(), _dir: dir })
    }

    pub async fn topic(&self) -> Result<TopicId> {
        Ok(self.store.create_topic("bench", None).await?.id)
    }

    /// The app's adapter for an OpenAI-compatible endpoint, sharing one HTTP client.
    pub fn openai(&self, base_url: &str) -> Arc<dyn LanguageModel> {
        Arc::new(OpenAiChat::new(OpenAiChatConfig {
            provider_name: "testkit".to_owned(),
            base_url: base_url.to_owned(),
            api_key: None,
            http: self.http.clone(),
        }))
    }

    /// A handle that opens turns from any task.
    pub fn opener(&self) -> Opener {
        Opener { manager: self.manager.clone(), busy_retries: self.busy_retries.clone() }
    }

    pub async fn open_turn(
        &self,
        topic_id: &TopicId,
        model: Arc<dyn LanguageModel>,
        listeners: usize,
        probe: Probe,
        delivery: Delivery,
    ) -> Result<Vec<JoinHandle<ListenerReport>>> {
        self.opener().open_turn(topic_id, model, listeners, probe, delivery).await
    }
}

#[derive(Clone)]
pub struct Opener {
    manager: StreamManager,
    busy_retries: Arc<AtomicU64>,
}

impl Opener {
    /// Starts a one-model turn in `topic_id` with `listeners` subscribers fed as
    /// `delivery` says: the first one opens the turn, the others attach right after (and
    /// start from a snapshot). The reports come in that order.
    pub async fn open_turn(
        &self,
        topic_id: &TopicId,
        model: Arc<dyn LanguageModel>,
        listeners: usize,
        probe: Probe,
        delivery: Delivery,
    ) -> Result<Vec<JoinHandle<ListenerReport>>> {
        let mut drains = Vec::with_capacity(listeners);
        for attempt in 1.. {
            let (first, first_drain) = self.listener(topic_id, probe, delivery);
            match self.manager.open(turn(topic_id, model.clone()), first).await {
                Ok(_) => {
                    drains.push(first_drain);
                    break;
                }
                // Admission can fail at once with SQLITE_BUSY when turns open concurrently
                // (see docs/benchmarks.md); a client would retry, and so do we, counting it.
                Err(StreamError::Store(err)) if attempt < 100 && err.to_string().contains("database is locked") => {
                    first_drain.abort();
                    self.busy_retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Err(err) => return Err(err.into()),
            }
        }
        for _ in 1..listeners {
            let (listener, drain) = self.listener(topic_id, probe, delivery);
            drains.push(drain);
            self.manager.attach(topic_id, Vec::new(), listener).await;
        }
        Ok(drains)
    }

    /// A listener and the task that reports what it saw.
    fn listener(&self, topic_id: &TopicId, probe: Probe, delivery: Delivery) -> (Listener, JoinHandle<ListenerReport>) {
        match delivery {
            Delivery::Buffered => {
                let (listener, subscription) = self.manager.listener(ListenerId::unique(), topic_id);
                // Drained where `colloquy serve` polls its event streams: on the stream
                // thread (see `server::OnRuntime`).
                let task = drain(subscription, probe);
                let handle = match self.manager.runtime() {
                    Some(runtime) => runtime.spawn(task),
                    None => tokio::spawn(task),
                };
                (listener, handle)
            }
            Delivery::Window => {
                let (done, report) = oneshot::channel();
                let tally = Mutex::new(Some((Tally::new(probe), done)));
                let listener = Listener::direct(ListenerId::unique(), move |message| {
                    let Ok(mut tally) = tally.lock() else { return false };
                    let Some((counting, _)) = tally.as_mut() else { return false };
                    if counting.record(message) {
                        return true;
                    }
                    if let Some((counting, done)) = tally.take() {
                        let _ = done.send(counting.finish());
                    }
                    false
                });
                let report = tokio::spawn(async move {
                    report.await.unwrap_or_else(|_| ListenerReport { ended_early: true, ..ListenerReport::default() })
                });
                (listener, report)
            }
        }
    }
}

/// How listeners are fed, as the app feeds its two kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Each message handed over where it is numbered, with no task in between: what a
    /// desktop window's IPC channel gets (`Listener::direct`).
    Window,
    /// A buffer drained by a task of its own on the stream thread: what `colloquy
    /// serve`'s SSE responses get.
    Buffered,
}

fn turn(topic_id: &TopicId, model: Arc<dyn LanguageModel>) -> PreparedTurn {
    PreparedTurn {
        topic_id: topic_id.clone(),
        turn_id: TurnId::new(),
        user: Some(UserInput {
            message_id: MessageId::new(),
            parts: UiMessage::user_text("", "bench").parts,
            edit_of: None,
        }),
        executions: vec![PreparedExecution {
            message_id: MessageId::new(),
            model_ref: ModelRef { provider_id: ProviderId::from("bench"), model: "scripted".to_owned() },
            provider_name: "testkit".to_owned(),
            runner: Box::new(agent::TurnRequest::new(
                model,
                CompletionRequest {
                    model: "scripted".to_owned(),
                    messages: vec![ChatMessage::user("bench")],
                    ..CompletionRequest::default()
                },
                std::time::Duration::from_secs(120),
            )),
            slot: ReplySlot::New,
            idle_timeout: None,
        }],
    }
}

/// What a listener should record besides counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Probe {
    /// Stamp the arrival of marked text deltas (see `tap`); room for this many per stream.
    pub stamp_markers: usize,
}

/// What one listener saw.
#[derive(Debug, Default)]
pub struct ListenerReport {
    pub chunks: u64,
    pub text_deltas: u64,
    pub text_bytes: u64,
    /// Chunks whose `seq` was not the previous one + 1 (a gap or a repeat).
    pub seq_gaps: u64,
    /// Saw the topic's last terminal.
    pub finished: bool,
    /// Ended otherwise (dropped for lagging, or closed).
    pub ended_early: bool,
    /// The stream's marker base (`id / 1_000_000`), when markers were seen.
    pub marker_stream: Option<u64>,
    /// Arrival time (`CLOCK_MONOTONIC` ns) of the marked delta with index `i`; `u64::MAX` if none.
    pub arrivals: Vec<u64>,
}

/// Reads a subscription to its end, checking that `seq` is contiguous.
pub async fn drain(mut subscription: Subscription, probe: Probe) -> ListenerReport {
    let mut tally = Tally::new(probe);
    while let Some(message) = subscription.recv().await {
        if !tally.record(message) {
            break;
        }
    }
    tally.finish()
}

/// What a listener has seen so far.
struct Tally {
    report: ListenerReport,
    probe: Probe,
    last_seq: u64,
}

impl Tally {
    fn new(probe: Probe) -> Self {
        // Filled (not just reserved) up front so recording touches no new memory mid-run.
        let report = ListenerReport { arrivals: vec![u64::MAX; probe.stamp_markers], ..ListenerReport::default() };
        Self { report, probe, last_seq: 0 }
    }

    /// Counts one message; `false` once the listener has seen the end.
    fn record(&mut self, message: StreamMessage) -> bool {
        let report = &mut self.report;
        match message {
            StreamMessage::Snapshot(snapshot) => self.last_seq = snapshot.seq,
            StreamMessage::Chunk(event) => {
                let arrived = if self.probe.stamp_markers > 0 { monotonic_ns() } else { 0 };
                if event.seq != self.last_seq + 1 {
                    report.seq_gaps += 1;
                }
                self.last_seq = event.seq;
                report.chunks += 1;
                if let UiChunk::TextDelta { delta, .. } = &event.chunk {
                    report.text_deltas += 1;
                    report.text_bytes += delta.len() as u64;
                    if let Some(id) = parse_marker(delta).filter(|_| self.probe.stamp_markers > 0) {
                        report.marker_stream = Some(id / 1_000_000);
                        if let Some(slot) = report.arrivals.get_mut((id % 1_000_000) as usize) {
                            *slot = arrived;
                        }
                    }
                }
            }
            StreamMessage::Terminal(terminal) => {
                if terminal.is_topic_done {
                    report.finished = true;
                    return false;
                }
            }
            _ => {
                report.ended_early = true;
                return false;
            }
        }
        true
    }

    fn finish(mut self) -> ListenerReport {
        if !self.report.finished {
            self.report.ended_early = true;
        }
        self.report
    }
}

/// Sums up listener reports.
#[derive(Debug, Default)]
pub struct Deliveries {
    pub listeners: usize,
    pub chunks: u64,
    pub seq_gaps: u64,
    pub unfinished: usize,
}

impl Deliveries {
    pub fn add(&mut self, report: &ListenerReport) {
        self.listeners += 1;
        self.chunks += report.chunks;
        self.seq_gaps += report.seq_gaps;
        self.unfinished += usize::from(!report.finished);
    }
}

/// Latency samples: each stamped arrival minus the tap's stamp of the same marker.
pub fn latencies(reports: &[ListenerReport], sent: &std::collections::HashMap<u64, u64>) -> Vec<u64> {
    let mut samples = Vec::new();
    for report in reports {
        let Some(stream) = report.marker_stream else { continue };
        for (index, &arrived) in report.arrivals.iter().enumerate() {
            if arrived == u64::MAX {
                continue;
            }
            if let Some(&sent) = sent.get(&(stream * 1_000_000 + index as u64)) {
                samples.push(arrived.saturating_sub(sent));
            }
        }
    }
    samples
}
