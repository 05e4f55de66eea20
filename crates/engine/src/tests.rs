//! The engine end to end over real HTTP: the testkit mock server as the provider, a real
//! SQLite file, the real stream manager.

use std::time::Duration;

use protocol::api::{ApiFormat, Provider, StoredMessage, Topic};
use protocol::{ErrorKind, MessageStatus, StreamMessage, TerminalStatus, UiPart};
use serde_json::{Value, json};
use testkit::{Fault, Finish, MockConfig, MockServer, Script};

use super::*;

mod acp_agents;
mod approval_recovery;
mod archive;
mod assistant_features;
mod call_ids;
mod chat;
mod data_folder;
mod disk_full;
mod limits;
mod mcp;
mod model_params;
mod models;
mod pages;
mod queue;
mod recovery;
mod replies;
mod secrets;
mod sessions;
mod settings;
mod tools;
mod usage;
mod wire_formats;

struct Fixture {
    engine: Engine,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.demo_token_delay = Duration::from_millis(1);
    // Fault tests script one refusal per request; retries are covered in crates/providers.
    config.retry = providers::RetryPolicy::none();
    Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir }
}

async fn mock(api_key: Option<&str>) -> MockServer {
    MockServer::start(MockConfig {
        port: 0,
        token_delay: Duration::from_millis(1),
        api_key: api_key.map(str::to_owned),
        models: vec!["scripted".into()],
        ..MockConfig::default()
    })
    .await
    .unwrap()
}

impl Fixture {
    async fn call<T: serde::de::DeserializeOwned>(&self, name: &str, request: Value) -> T {
        serde_json::from_value(self.engine.call(name, request).await.unwrap()).unwrap()
    }

    async fn provider(&self, server: &MockServer, key: &str) -> Provider {
        self.call(
            "provider_create",
            json!({ "name": "Mock", "baseUrl": server.base_url(), "apiKey": key, "defaultModel": "scripted" }),
        )
        .await
    }

    async fn topic(&self) -> Topic {
        self.call("topic_create", json!({})).await
    }

    /// Sends a message and reads the stream to its end.
    async fn send(&self, topic: &Topic, text: &str) -> Vec<StreamMessage> {
        let (listener, mut rx) = self.engine.listener(ListenerId::unique(), &topic.id);
        let reply = self.engine.stream_open(open_request(topic.id.clone(), text), listener).await.unwrap();
        assert!(reply.live);
        drain(&mut rx).await
    }

    async fn messages(&self, topic: &Topic) -> Vec<StoredMessage> {
        self.call("messages_list", json!({ "topicId": topic.id })).await
    }
}

fn open_request(topic_id: protocol::TopicId, text: &str) -> protocol::api::StreamOpenRequest {
    protocol::api::StreamOpenRequest {
        topic_id,
        text: text.into(),
        message_id: None,
        model: None,
        models: None,
        attachments: None,
        mcp_resources: None,
    }
}

async fn drain(rx: &mut Subscription) -> Vec<StreamMessage> {
    let mut out = Vec::new();
    while let Some(message) = rx.recv().await {
        let done = matches!(&message, StreamMessage::Terminal(t) if t.is_topic_done);
        out.push(message);
        if done {
            break;
        }
    }
    out
}

fn terminal_status(messages: &[StreamMessage]) -> TerminalStatus {
    match messages.last() {
        Some(StreamMessage::Terminal(t)) => t.status,
        other => panic!("stream did not end with a terminal: {other:?}"),
    }
}

fn error_part(message: &StoredMessage) -> Option<protocol::ApiError> {
    message.message.parts.iter().find_map(|p| match p {
        UiPart::Data(d) if d.kind == "data-error" => serde_json::from_value(d.data.clone()).ok(),
        _ => None,
    })
}

/// How long a test waits for something the engine publishes: a safety net for a hung
/// test, not a threshold (real processes on a loaded machine can be slow).
const PATIENCE: Duration = Duration::from_secs(180);

/// Reads with `read` now and again after every topic-status change until `done` holds.
/// The engine publishes a turn's end only once it is on disk, and "awaiting approval" only
/// once the card is stored, so a read after the change sees it; nothing polls the clock.
async fn after_status_changes<T>(
    engine: &Engine,
    what: &str,
    read: impl AsyncFn() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    // Subscribed before the first read, so no change falls between the two.
    let mut feed = engine.status_subscribe();
    let wait = async {
        loop {
            let value = read().await;
            if done(&value) {
                return value;
            }
            if feed.recv().await.is_none() {
                panic!("the status feed closed while waiting for {what}");
            }
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// The topic's stored messages once `done` holds of them (a turn's end, typically).
async fn wait_for(
    f: &Fixture,
    topic: &Topic,
    what: &str,
    done: impl Fn(&[StoredMessage]) -> bool,
) -> Vec<StoredMessage> {
    after_status_changes(&f.engine, what, async || f.messages(topic).await, |rows| done(rows)).await
}

/// The topic's rows once `done` holds of them, for a state inside a turn (text saved while
/// it streams), which no status change announces: the stream manager marks each batch of
/// reply states it writes, and the rows are read again after each mark. A turn's end is
/// awaited with [`wait_for`].
async fn rows_until(
    f: &Fixture,
    topic: &Topic,
    what: &str,
    done: impl Fn(&[StoredMessage]) -> bool,
) -> Vec<StoredMessage> {
    // Subscribed before the first read, so no save falls between the two.
    let mut written = f.engine.inner.streams.replies_written();
    let wait = async {
        loop {
            let rows = f.messages(topic).await;
            if done(&rows) {
                return rows;
            }
            if written.changed().await.is_err() {
                panic!("the stream manager closed while waiting for {what}");
            }
        }
    };
    match tokio::time::timeout(PATIENCE, wait).await {
        Ok(rows) => rows,
        Err(_) => panic!("timed out waiting for {what}: {:#?}", f.messages(topic).await),
    }
}

/// One provider per wire format, all on `server`, named after their format.
async fn provider_per_format(f: &Fixture, server: &MockServer, key: &str) -> Vec<(ApiFormat, Provider)> {
    let mut out = Vec::new();
    for format in [ApiFormat::OpenaiChat, ApiFormat::OpenaiResponses, ApiFormat::Anthropic, ApiFormat::Gemini] {
        let base_url = if format == ApiFormat::Gemini { server.gemini_base_url() } else { server.base_url() };
        let provider: Provider = f
            .call(
                "provider_create",
                json!({ "name": "Mock", "format": format, "baseUrl": base_url, "apiKey": key, "defaultModel": "scripted" }),
            )
            .await;
        out.push((format, provider));
    }
    out
}

/// Two providers on the same mock server: two models that can answer one message side by side.
async fn two_models(f: &Fixture, server: &MockServer) -> (protocol::ModelRef, protocol::ModelRef) {
    let first: Provider = f.provider(server, "").await;
    let other: Provider = f
        .call("provider_create", json!({ "name": "Other", "baseUrl": server.base_url(), "defaultModel": "scripted" }))
        .await;
    let model = |provider: Provider| protocol::ModelRef { provider_id: provider.id, model: "scripted".into() };
    (model(first), model(other))
}

/// A topic that talks to `provider`'s scripted model.
async fn topic_with(f: &Fixture, provider: &Provider) -> Topic {
    f.call("topic_create", json!({ "model": { "providerId": provider.id, "model": "scripted" } })).await
}
