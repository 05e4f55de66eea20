//! The engine end to end over real HTTP: the testkit mock server as the provider, a real
//! SQLite file, the real stream manager.

use std::time::Duration;

use protocol::api::{ApiFormat, Provider, StoredMessage, Topic};
use protocol::{ErrorKind, MessageStatus, StreamMessage, TerminalStatus, UiPart};
use serde_json::{Value, json};
use testkit::{Fault, Finish, MockConfig, MockServer, Script};

use super::*;

mod approval_recovery;
mod call_ids;
mod data_folder;
mod disk_full;
mod limits;
mod mcp;
mod recovery;
mod secrets;
mod sessions;
mod settings;
mod tools;

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

#[tokio::test]
async fn a_chat_turn_streams_and_persists_with_history_in_the_prompt() {
    let f = fixture().await;
    let server = mock(Some("sk-good")).await;
    f.provider(&server, "sk-good").await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["Hello".into(), ", ".into(), "you".into()]), ..Script::default() });
    let stream = f.send(&topic, "Say hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);

    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[1].message.text(), "Hello, you");
    // The first message titles the topic.
    let topics: Vec<Topic> = f.call("topics_list", Value::Null).await;
    assert_eq!(topics[0].title, "Say hello");

    server.push_script(Script { chunks: Some(vec!["Again".into()]), ..Script::default() });
    f.send(&topic, "Once more").await;
    let requests = server.requests();
    let last = requests.iter().rev().find(|r| r.path.ends_with("/chat/completions")).unwrap();
    let prompt: Vec<String> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(prompt, vec!["Say hello", "Hello, you", "Once more"]);
    assert_eq!(last.header("authorization"), Some("Bearer sk-good"));
}

#[tokio::test]
async fn a_wrong_key_ends_in_a_persisted_authentication_error() {
    let f = fixture().await;
    let server = mock(Some("sk-good")).await;
    f.provider(&server, "sk-wrong").await;
    let topic = f.topic().await;
    let stream = f.send(&topic, "hi").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].status, MessageStatus::Error);
    let error = error_part(&rows[1]).expect("an error part");
    assert_eq!(error.message, "authentication failed — check the API key for Mock");
}

#[tokio::test]
async fn a_connection_reset_keeps_the_text_received_so_far() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let chunks = vec!["one ".to_owned(), "two ".into(), "three ".into(), "four".into()];
    server.push_script(
        serde_json::from_value(json!({ "chunks": chunks, "fault": { "kind": "reset", "after": 2 } })).unwrap(),
    );
    let stream = f.send(&topic, "hi").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].message.text(), "one two ");
    assert!(error_part(&rows[1]).is_some());
}

#[tokio::test]
async fn an_html_error_page_becomes_a_clear_error() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 502, "body": "<html><head><title>Bad Gateway</title></head></html>", "contentType": "text/html" } }))
            .unwrap(),
    );
    f.send(&topic, "hi").await;
    let rows = f.messages(&topic).await;
    let error = error_part(&rows[1]).expect("an error part");
    assert!(error.message.contains("502"), "{}", error.message);
}

#[tokio::test]
async fn abort_keeps_the_partial_reply_as_stopped() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let chunks: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": chunks, "tokenDelayMs": 20 })).unwrap());
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "go"), listener).await.unwrap();
    // Wait for some text, then stop.
    while let Some(message) = rx.recv().await {
        if matches!(&message, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::TextDelta { delta, .. } if delta == "w3 "))
        {
            break;
        }
    }
    f.engine.stream_abort(&topic.id).await.unwrap();
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].status, MessageStatus::Paused);
    assert_eq!(rows[1].status_reason.as_deref(), Some("user_stop"));
    assert!(rows[1].message.text().starts_with("w0 w1 w2 w3 "));
    assert!(rows[1].message.text().len() < chunks.concat().len());
}

#[tokio::test]
async fn malformed_requests_name_the_bad_field_and_change_nothing() {
    let f = fixture().await;
    let err = f.engine.call("provider_create", json!({ "name": "x", "defaultModel": "m" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert_eq!(err.field.as_deref(), Some("baseUrl"));
    let err = f
        .engine
        .call("provider_create", json!({ "name": "x", "baseUrl": "ftp://nope", "defaultModel": "m" }))
        .await
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("baseUrl"));
    let err = f.engine.call("topic_update", json!({ "id": 5 })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    let err = f.engine.call("topic_create", json!({ "titel": "typo" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("titel"));
    let providers: Vec<Provider> = f.call("providers_list", Value::Null).await;
    assert!(providers.is_empty());
    let topics: Vec<Topic> = f.call("topics_list", Value::Null).await;
    assert!(topics.is_empty());
}

#[tokio::test]
async fn unknown_topics_are_not_found() {
    let f = fixture().await;
    let missing = protocol::TopicId::new();
    let err = f.engine.call("messages_list", json!({ "topicId": missing })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &missing);
    let err = f.engine.stream_attach(&missing, vec![], listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &missing);
    let err = f.engine.stream_open(open_request(missing.clone(), "hi"), listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert_eq!(f.engine.stream_abort(&missing).await.unwrap_err().kind, ErrorKind::NotFound);
    for operation in ["topic_mark_seen", "inbox_list", "topic_delete"] {
        let err = f.engine.call(operation, json!({ "topicId": missing })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound, "{operation}");
    }
}

#[tokio::test]
async fn the_demo_provider_answers_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.demo_token_delay = Duration::from_millis(1);
    let engine = Engine::open(config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let demo: Provider = f.call("provider_demo", Value::Null).await;
    assert_eq!(demo.kind, protocol::api::ProviderKind::Demo);
    let topic = f.topic().await;
    assert_eq!(terminal_status(&f.send(&topic, "Show me some Rust").await), TerminalStatus::Success);
    let reply = f.messages(&topic).await[1].message.text();
    assert!(reply.contains("```"), "demo reply should contain a code block: {reply}");
    f.engine.shutdown().await;

    // A new process: the demo server comes back on a new port, history is intact.
    let engine = Engine::open(config).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    assert_eq!(f.messages(&topic).await.len(), 2);
    assert_eq!(terminal_status(&f.send(&topic, "Again").await), TerminalStatus::Success);
}

#[tokio::test]
async fn a_model_list_comes_from_the_endpoint() {
    let f = fixture().await;
    let server = mock(Some("sk")).await;
    let list: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "sk" })).await;
    assert_eq!(list.models, vec!["scripted"]);
    let err =
        f.engine.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "bad" })).await.unwrap_err();
    assert!(err.message.contains("authentication failed"), "{}", err.message);
}

#[tokio::test]
async fn audit_11_a_saved_key_goes_only_to_its_providers_address() {
    let f = fixture().await;
    let saved = mock(Some("sk-saved")).await;
    let provider = f.provider(&saved, "sk-saved").await;
    let elsewhere = mock(None).await;
    let request = json!({ "baseUrl": format!("{}/", elsewhere.base_url()), "providerId": provider.id });
    let err = f.engine.call("provider_models", request).await.unwrap_err();
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("baseUrl")), "{err:?}");
    let saved_origin = url::Url::parse(&saved.base_url()).unwrap().origin().ascii_serialization();
    assert!(
        err.message.contains(&format!("sent only to {saved_origin}"))
            && err.message.contains("enter the API key again"),
        "{}",
        err.message
    );
    assert!(elsewhere.requests().is_empty(), "nothing was sent there");

    // The key typed again goes there; the saved address still gets the saved key.
    let typed = json!({ "baseUrl": elsewhere.base_url(), "providerId": provider.id, "apiKey": "sk-other" });
    let list: protocol::api::ModelList = f.call("provider_models", typed).await;
    assert_eq!(list.models, vec!["scripted"]);
    let list: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": saved.base_url(), "providerId": provider.id })).await;
    assert_eq!(list.models, vec!["scripted"]);
}

/// "Load models" asks in the provider's own format: the form's, else the saved provider's.
#[tokio::test]
async fn the_model_list_is_asked_for_in_the_providers_own_format() {
    let f = fixture().await;
    let server = mock(Some("sk-models")).await;
    let providers = provider_per_format(&f, &server, "sk-models").await;
    for (format, provider) in &providers {
        let (path, auth) = match format {
            ApiFormat::Anthropic => ("/v1/models?", "x-api-key"),
            ApiFormat::Gemini => ("/v1beta/models?", "x-goog-api-key"),
            _ => ("/v1/models", "authorization"),
        };
        // From the form (key typed), then from the saved provider (stored key, stored format).
        let typed = json!({ "baseUrl": provider.base_url, "format": format, "apiKey": "sk-models" });
        let saved = json!({ "baseUrl": provider.base_url, "providerId": provider.id });
        for request in [typed, saved] {
            let list: protocol::api::ModelList = f.call("provider_models", request).await;
            assert_eq!(list.models, vec!["scripted"], "{}", format.as_str());
            let asked = server.requests().last().unwrap().clone();
            assert!(asked.path.starts_with(path), "{}: {}", format.as_str(), asked.path);
            assert!(asked.header(auth).is_some_and(|v| v.contains("sk-models")), "{}: {auth}", format.as_str());
        }
    }
}

#[tokio::test]
async fn several_models_answer_side_by_side_and_each_can_be_retried_or_continued() {
    let f = fixture().await;
    let server = mock(None).await;
    let first: Provider = f.provider(&server, "").await;
    let other: Provider = f
        .call("provider_create", json!({ "name": "Other", "baseUrl": server.base_url(), "defaultModel": "scripted" }))
        .await;
    let topic = f.topic().await;
    let a = protocol::ModelRef { provider_id: first.id.clone(), model: "scripted".into() };
    let b = protocol::ModelRef { provider_id: other.id.clone(), model: "scripted".into() };
    server.push_script(Script { chunks: Some(vec!["from one".into()]), ..Script::default() });
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 500, "body": "{}" } })).unwrap(),
    );
    let mut request = open_request(topic.id.clone(), "Compare");
    request.models = Some(vec![a.clone(), b.clone()]);
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(request, listener).await.unwrap();
    drain(&mut rx).await;
    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 3, "one user row, one reply per model");
    let failed = rows.iter().find(|r| r.status == MessageStatus::Error).expect("one reply failed").clone();
    assert!(rows.iter().any(|r| r.status == MessageStatus::Success && r.message.text() == "from one"));
    assert_eq!(rows[1].turn_id, rows[2].turn_id);

    // Retry the failed one in place; its prompt is the conversation up to the turn.
    server.push_script(Script { chunks: Some(vec!["second try".into()]), ..Script::default() });
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let retry = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: failed.id.clone() };
    f.engine.stream_retry(retry, listener).await.unwrap();
    drain(&mut rx).await;
    let row = f.messages(&topic).await.into_iter().find(|r| r.id == failed.id).unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Success, "second try"));
    let prompt = server.requests().last().unwrap().body["messages"].clone();
    assert_eq!(prompt.as_array().unwrap().len(), 1, "retry sees the user message only: {prompt}");

    // Asking a model twice in one message is a clear error.
    let mut twice = open_request(topic.id.clone(), "again");
    twice.models = Some(vec![a.clone(), a.clone()]);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    assert_eq!(f.engine.stream_open(twice, listener).await.unwrap_err().field.as_deref(), Some("models"));
}

#[tokio::test]
async fn a_stopped_reply_continues_from_its_text_and_the_topic_status_is_unseen_until_looked_at() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let mut feed = f.engine.status_subscribe();
    let chunks: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": chunks, "tokenDelayMs": 20 })).unwrap());
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "story"), listener).await.unwrap();
    while let Some(message) = rx.recv().await {
        if matches!(&message, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::TextDelta { delta, .. } if delta == "w2 "))
        {
            break;
        }
    }
    f.engine.stream_abort(&topic.id).await.unwrap();
    let stopped = f.messages(&topic).await.pop().unwrap();
    assert_eq!(stopped.status, MessageStatus::Paused);

    server.push_script(Script { chunks: Some(vec!["THE END".into()]), ..Script::default() });
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: stopped.id.clone() };
    f.engine.stream_continue(request.clone(), listener).await.unwrap();
    drain(&mut rx).await;
    let row = f.messages(&topic).await.pop().unwrap();
    assert_eq!(row.status, MessageStatus::Success);
    assert!(row.message.text().starts_with(&stopped.message.text()));
    assert!(row.message.text().ends_with("THE END"));
    // The model was shown the kept text as its own last message.
    let prompt = server.requests().last().unwrap().body["messages"].clone();
    assert_eq!(prompt.as_array().unwrap().last().unwrap()["role"], "assistant");
    // Only a paused reply can be continued.
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    assert_eq!(f.engine.stream_continue(request, listener).await.unwrap_err().kind, ErrorKind::BadRequest);

    let mut last = None;
    while let Ok(Some(message)) = tokio::time::timeout(Duration::from_millis(200), feed.recv()).await {
        if let protocol::StatusMessage::Changed(event) = message {
            last = Some(event);
        }
    }
    let last = last.expect("status changes were published");
    assert_eq!((last.status, last.unseen), (protocol::TopicStatus::Done, true));
    f.engine.call("topic_mark_seen", json!({ "topicId": topic.id })).await.unwrap();
    let Some(protocol::StatusMessage::Changed(seen)) = feed.recv().await else { panic!("seen is published") };
    assert!(!seen.unseen);
}

async fn wait_for(
    f: &Fixture,
    topic: &Topic,
    what: &str,
    done: impl Fn(&[StoredMessage]) -> bool,
) -> Vec<StoredMessage> {
    for _ in 0..400 {
        let rows = f.messages(topic).await;
        if done(&rows) {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn queued_messages_run_after_the_live_turn_steers_first_and_failures_hold_the_rest() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let slow: Vec<String> = (0..30).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": slow, "tokenDelayMs": 10 })).unwrap());
    server.push_script(Script { chunks: Some(vec!["steered".into()]), ..Script::default() });
    server.push_script(Script { chunks: Some(vec!["queued".into()]), ..Script::default() });
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "first"), listener).await.unwrap();
    let queued: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "then this", "mode": "queue" })).await;
    let _steer: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "actually, this first", "mode": "steer" })).await;
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert_eq!(inbox.iter().map(|i| i.text.as_str()).collect::<Vec<_>>(), ["actually, this first", "then this"]);

    // Both run, in order, each after the previous turn is done.
    let rows = wait_for(&f, &topic, "three turns", |rows| {
        rows.len() == 6 && rows.iter().all(|r| r.status == MessageStatus::Success)
    })
    .await;
    let users: Vec<String> =
        rows.iter().filter(|r| r.message.role == protocol::MessageRole::User).map(|r| r.message.text()).collect();
    assert_eq!(users, ["first", "actually, this first", "then this"]);
    assert_eq!(rows[3].message.text(), "steered");
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert!(inbox.is_empty(), "sent items leave the inbox: {inbox:?}");
    let _ = queued;

    // A failing turn holds what is queued behind it, with a note; releasing sends it.
    server.push_script(
        serde_json::from_value(
            json!({ "chunks": ["x ", "y ", "z "], "tokenDelayMs": 30, "fault": { "kind": "reset", "after": 2 } }),
        )
        .unwrap(),
    );
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "will fail"), listener).await.unwrap();
    let held: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "after the failure", "mode": "queue" })).await;
    let mut inbox: Vec<protocol::api::InboxItem> = Vec::new();
    for _ in 0..200 {
        inbox = f.call("inbox_list", json!({ "topicId": topic.id })).await;
        if inbox.first().is_some_and(|i| i.state == protocol::api::InboxState::Held) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(inbox[0].state, protocol::api::InboxState::Held);
    assert!(inbox[0].note.as_deref().unwrap_or("").contains("failed"));
    server.push_script(Script { chunks: Some(vec!["released".into()]), ..Script::default() });
    let _: protocol::api::InboxItem = f.call("inbox_release", json!({ "id": held.id })).await;
    let rows =
        wait_for(&f, &topic, "the released turn", |rows| rows.last().is_some_and(|r| r.message.text() == "released"))
            .await;
    assert_eq!(rows[rows.len() - 2].message.text(), "after the failure");
}

#[tokio::test]
async fn queued_messages_are_held_not_lost_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "test");
    let engine = Engine::open(config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let topic = f.topic().await;
    // No provider: nothing can run, but the item is stored.
    let _: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "later", "mode": "queue" })).await;
    f.engine.shutdown().await;
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].text, "later");
    assert_eq!(inbox[0].state, protocol::api::InboxState::Held);
    assert!(inbox[0].note.is_some());
}

#[tokio::test]
async fn a_queue_whose_done_the_dispatcher_missed_still_runs_after_the_feed_catches_up() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["sent".into()]), ..Script::default() });
    // An item queued behind a turn (added straight to the store, as if a turn were live).
    f.engine.inner.store.add_inbox_item(&topic.id, "stranded", protocol::api::InboxMode::Queue).await.unwrap();
    // The turn ends, then a burst of other topics' changes overflows the dispatcher's
    // feed before it runs (this test's runtime has one thread): the `done` is dropped and
    // the feed hands it a snapshot instead.
    let hub = f.engine.inner.streams.status();
    hub.publish(&topic.id, protocol::TopicStatus::Done);
    for i in 0..2_000 {
        hub.publish(&TopicId::from(format!("other-{i}").as_str()), protocol::TopicStatus::Streaming);
    }
    let rows = wait_for(&f, &topic, "the queued item to run", |rows| {
        rows.len() == 2 && rows[1].status == MessageStatus::Success
    })
    .await;
    assert_eq!(rows[0].message.text(), "stranded");
    assert_eq!(rows[1].message.text(), "sent");
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert!(inbox.is_empty(), "{inbox:?}");
}

#[tokio::test]
async fn anthropic_and_gemini_providers_chat_through_their_own_wire_formats() {
    let f = fixture().await;
    let server = mock(Some("k")).await;
    let presets: Vec<protocol::api::ProviderPresetInfo> = f.call("provider_presets", Value::Null).await;
    assert!(presets.iter().any(|p| p.format == protocol::api::ApiFormat::Gemini));
    let anthropic: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Claude", "format": "anthropic", "baseUrl": server.base_url(), "apiKey": "k", "defaultModel": "scripted" }),
        )
        .await;
    assert_eq!(anthropic.format, protocol::api::ApiFormat::Anthropic);
    let gemini: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Gemini", "format": "gemini", "baseUrl": server.gemini_base_url(), "apiKey": "k", "defaultModel": "scripted" }),
        )
        .await;
    for (provider, path) in [(&anthropic, "/v1/messages"), (&gemini, ":streamGenerateContent")] {
        let topic: Topic =
            f.call("topic_create", json!({ "model": { "providerId": provider.id, "model": "scripted" } })).await;
        server.push_script(Script { chunks: Some(vec![format!("hello from {}", provider.name)]), ..Script::default() });
        assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Success);
        assert_eq!(f.messages(&topic).await[1].message.text(), format!("hello from {}", provider.name));
        assert!(server.requests().last().unwrap().path.contains(path), "{:?}", server.requests().last().unwrap().path);
    }
    let models: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "k", "format": "anthropic" })).await;
    assert_eq!(models.models, vec!["scripted"]);
}

#[tokio::test]
async fn stored_turns_still_refuse_a_second_copy_of_a_model_and_mixed_turns_hold_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    config.streams.grace_period = Duration::ZERO;
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    let first = f.provider(&server, "").await;
    let other: Provider = f
        .call("provider_create", json!({ "name": "Other", "baseUrl": server.base_url(), "defaultModel": "scripted" }))
        .await;
    let topic = f.topic().await;
    let a = protocol::ModelRef { provider_id: first.id.clone(), model: "scripted".into() };
    let b = protocol::ModelRef { provider_id: other.id.clone(), model: "scripted".into() };
    // Slow enough that the turn is surely still running when the next message is queued.
    server.push_script(Script::text(["o", "k"]).with_token_delay(Duration::from_millis(300)));
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 500, "body": "{}" } })).unwrap(),
    );
    let mut request = open_request(topic.id.clone(), "both");
    request.models = Some(vec![a.clone(), b]);
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(request, listener).await.unwrap();
    // Queued behind a turn where one model fails: held, not sent.
    let _: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "next", "mode": "queue" })).await;
    drain(&mut rx).await;
    let mut held = false;
    for _ in 0..200 {
        let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
        if inbox.first().is_some_and(|i| i.state == protocol::api::InboxState::Held) {
            held = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(held, "a queued message waits for the user after a partly failed turn");

    // The live turn is long evicted (grace 0), yet asking model a again is refused.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let turn_id = f.messages(&topic).await[1].turn_id.clone().unwrap();
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let err = f
        .engine
        .stream_add_model(protocol::api::AddModelRequest { topic_id: topic.id.clone(), turn_id, model: a }, listener)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert_eq!(err.message, "scripted is already answering in this turn");

    // After a restart the status feed still knows how the topic's last turn ended.
    f.engine.shutdown().await;
    let engine = Engine::open(config).await.unwrap();
    let mut feed = engine.status_subscribe();
    let Some(protocol::StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
    let status = snapshot.statuses.iter().find(|s| s.topic_id == topic.id).expect("the topic has a status");
    // Nobody looked at the topic since the turn finished: it is still unseen (audit 17).
    assert_eq!((status.status, status.unseen), (protocol::TopicStatus::Done, true));
}

#[tokio::test]
async fn every_listed_operation_is_answered_and_no_other() {
    let f = fixture().await;
    for operation in OPERATIONS {
        if let Err(err) = f.engine.call(operation, json!({})).await {
            assert_ne!(err.field.as_deref(), Some("operation"), "`{operation}` is listed but unknown: {err:?}");
        }
    }
    let err = f.engine.call("no_such_thing", json!({})).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("operation"));
}

#[tokio::test]
async fn a_malformed_frame_or_an_error_frame_keeps_the_text_and_ends_with_an_error_part() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    for fault in [
        json!({ "kind": "malformedFrame", "after": 2 }),
        json!({ "kind": "errorFrame", "after": 2, "message": "model crashed" }),
    ] {
        let topic = f.topic().await;
        server.push_script(
            serde_json::from_value(json!({ "chunks": ["one ", "two ", "three"], "fault": fault })).unwrap(),
        );
        assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Error);
        let rows = f.messages(&topic).await;
        assert_eq!(rows[1].status, MessageStatus::Error);
        assert_eq!(rows[1].message.text(), "one two ", "text before the fault is kept ({fault})");
        assert!(
            error_part(&rows[1]).is_some_and(|e| !e.message.is_empty()),
            "an error part says what happened ({fault})"
        );
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

/// A topic that talks to `provider`'s scripted model.
async fn topic_with(f: &Fixture, provider: &Provider) -> Topic {
    f.call("topic_create", json!({ "model": { "providerId": provider.id, "model": "scripted" } })).await
}

/// How a stored reply must look after a scripted ending.
struct Expected<'a> {
    status: MessageStatus,
    /// The row's `status_reason` (for an error: the error's kind, also its `code`).
    reason: Option<&'a str>,
    /// For an error: words the stored message must contain, saying what to do.
    hint: Option<&'a str>,
    /// The text the reply keeps.
    text: &'a str,
}

/// Asserts `reply` is stored as `expected` says: status, reason, kept text, and for an
/// error a `data-error` part whose message says what happened and what to do.
fn assert_stored(case: &str, reply: &StoredMessage, expected: &Expected<'_>) {
    assert_eq!((reply.status, reply.status_reason.as_deref()), (expected.status, expected.reason), "{case}");
    assert_eq!(reply.message.text(), expected.text, "{case}: the text received before the end is kept");
    match expected.hint {
        Some(hint) => {
            let error = error_part(reply).unwrap_or_else(|| panic!("{case}: an error part"));
            assert_eq!(error.code.as_deref(), expected.reason, "{case}");
            // What happened, then a dash, then what to do about it.
            let (what, advice) = error
                .message
                .split_once(" — ")
                .unwrap_or_else(|| panic!("{case}: the message says what to do: {}", error.message));
            assert!(!what.trim().is_empty() && !advice.trim().is_empty(), "{case}: {}", error.message);
            assert!(advice.to_lowercase().contains(hint), "{case}: “{hint}” in the advice of: {}", error.message);
        }
        None => assert!(error_part(reply).is_none(), "{case}: no error part"),
    }
}

/// Every way a reply can go wrong (or be cut short), over real HTTP and in every wire
/// format, ends as a stored reply with the right status, reason (the error's kind), the
/// text received before it, and a message that says what to do.
#[tokio::test]
async fn every_fault_is_persisted_with_its_kind_in_every_format() {
    let f = fixture().await;
    let server = mock(None).await;
    let providers = provider_per_format(&f, &server, "").await;
    let status = |status: u16, body: &str| Script::status(status, body, "application/json");
    let error =
        |reason, hint, text| Expected { status: MessageStatus::Error, reason: Some(reason), hint: Some(hint), text };
    let cases: Vec<(&str, Script, Expected<'_>)> = vec![
        ("rate limit", Script::refusal(429, None), error("rate_limit", "wait a moment", "")),
        ("overloaded", Script::refusal(529, None), error("overloaded", "try again in a moment", "")),
        ("server", Script::refusal(500, None), error("server", "try again later", "")),
        ("request timeout", Script::refusal(408, None), error("timeout", "try again", "")),
        ("too early", Script::refusal(425, None), error("server", "try again in a moment", "")),
        (
            "html error page",
            Script::status(502, "<html><head><title>Bad Gateway</title></head><body>nginx</body></html>", "text/html"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "plain-text error",
            Script::status(500, "upstream connect error or disconnect/reset before headers", "text/plain"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "plain-text success",
            Script::status(200, "Welcome to nginx! The web server is installed and working.", "text/plain"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "context",
            status(
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#,
            ),
            error("context_too_long", "start a new topic", ""),
        ),
        (
            "filtered request",
            status(400, r#"{"error":{"message":"blocked","code":"content_filter"}}"#),
            error("content_filtered", "rephrase", ""),
        ),
        (
            "bad model",
            status(404, r#"{"error":{"message":"The model `nope` does not exist"}}"#),
            error("invalid_request", "check the base url and the model name", ""),
        ),
        (
            "reset mid-stream",
            Script::text(["kept", " lost?"]).with_fault(Fault::Reset { after: 1 }),
            error("network", "try again", "kept"),
        ),
        (
            "malformed frame",
            Script::text(["kept", " lost"]).with_fault(Fault::MalformedFrame { after: 1 }),
            error("bad_response", "check the base url", "kept"),
        ),
        (
            // Chat Completions `{"error"}` frame, Responses `error` event, Anthropic `error`
            // event, Gemini `{"error"}` frame.
            "error after 200",
            Script::text(["kept", " lost"]).with_fault(Fault::ErrorFrame { after: 1, message: "exploded".into() }),
            error("server", "try again", "kept"),
        ),
        (
            // Responses `response.failed`; the other formats have only their error frame.
            "failed after 200",
            Script::text(["kept", " lost"]).with_fault(Fault::Failed { after: 1, message: "gave up".into() }),
            error("server", "try again", "kept"),
        ),
        (
            "overloaded after 200",
            Script::text(["kept", " lost"])
                .with_fault(Fault::ErrorFrame { after: 1, message: "Overloaded".into() })
                .with_error_code("overloaded_error"),
            error("overloaded", "try again in a moment", "kept"),
        ),
        (
            // Chat Completions `content_filter`, Responses incomplete (`content_filter`),
            // Anthropic `refusal`, Gemini `SAFETY`: not a success, the text stays.
            "filtered reply",
            Script::text(["Here is how ", "you"]).with_finish(Finish::ContentFilter),
            error("content_filtered", "rephrase", "Here is how you"),
        ),
        (
            // Chat Completions `length`, Responses incomplete (`max_output_tokens`),
            // Anthropic `max_tokens`, Gemini `MAX_TOKENS`: done as far as it went, and marked.
            "cut at the length limit",
            Script::text(["The first ", "half"]).with_finish(Finish::Length),
            Expected { status: MessageStatus::Success, reason: Some("length"), hint: None, text: "The first half" },
        ),
    ];
    for (format, provider) in &providers {
        for (name, script, expected) in &cases {
            let case = format!("{} / {name}", format.as_str());
            server.push_script(script.clone());
            let topic = topic_with(&f, provider).await;
            let stream = f.send(&topic, name).await;
            let terminal =
                if expected.status == MessageStatus::Success { TerminalStatus::Success } else { TerminalStatus::Error };
            assert_eq!(terminal_status(&stream), terminal, "{case}");
            assert_stored(&case, &f.messages(&topic).await[1], expected);
        }
    }

    // Nothing listening: the request fails before any byte, in every format.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    for format in [ApiFormat::OpenaiChat, ApiFormat::OpenaiResponses, ApiFormat::Anthropic, ApiFormat::Gemini] {
        let provider: Provider = f
            .call(
                "provider_create",
                json!({ "name": "Gone", "format": format, "baseUrl": base_url, "defaultModel": "scripted" }),
            )
            .await;
        let topic = topic_with(&f, &provider).await;
        let stream = f.send(&topic, "anyone there?").await;
        let case = format!("{} / connection refused", format.as_str());
        assert_eq!(terminal_status(&stream), TerminalStatus::Error, "{case}");
        let reply = &f.messages(&topic).await[1];
        assert_stored(&case, reply, &error("network", "check the base url and that the server is running", ""));
        assert!(error_part(reply).unwrap().retryable, "{case}: a network failure may be retried");
    }
}

/// A refusal the provider lifts (429, then an answer) is retried before the first byte and
/// stored as a plain success: no error, no reason, and nothing of the "retrying" notice.
#[tokio::test]
async fn a_refusal_then_an_answer_is_stored_as_a_success_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        ..providers::RetryPolicy::default()
    };
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    for (format, provider) in provider_per_format(&f, &server, "").await {
        server.push_script(Script::refusal(429, None));
        server.push_script(Script::text(["after ", "a retry"]));
        let before = server.requests().len();
        let topic = topic_with(&f, &provider).await;
        let stream = f.send(&topic, "hi").await;
        let case = format.as_str();
        assert_eq!(terminal_status(&stream), TerminalStatus::Success, "{case}");
        let announced = stream.iter().any(|m| {
            matches!(m, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::Data(d) if d.kind == "data-retrying"))
        });
        assert!(announced, "{case}: the wait was announced while it lasted");
        let reply = &f.messages(&topic).await[1];
        assert_stored(
            case,
            reply,
            &Expected { status: MessageStatus::Success, reason: None, hint: None, text: "after a retry" },
        );
        assert!(
            reply.message.parts.iter().all(|p| !matches!(p, UiPart::Data(d) if d.kind == "data-retrying")),
            "{case}: the notice is not stored"
        );
        assert_eq!(server.requests().len() - before, 2, "{case}: one refusal, one answer");
    }
}

/// A reply the output limit cut is marked, and Continue picks it up where it ended; the
/// finished reply loses the mark.
#[tokio::test]
async fn a_reply_cut_at_the_length_limit_can_be_continued() {
    let f = fixture().await;
    let server = mock(None).await;
    let providers = provider_per_format(&f, &server, "").await;
    let (_, anthropic) = providers.iter().find(|(format, _)| *format == ApiFormat::Anthropic).unwrap();
    let topic = topic_with(&f, anthropic).await;
    server.push_script(Script::text(["Once upon ", "a time"]).with_finish(Finish::Length));
    f.send(&topic, "tell a story").await;
    let cut = f.messages(&topic).await.pop().unwrap();
    assert_eq!((cut.status, cut.status_reason.as_deref()), (MessageStatus::Success, Some("length")));

    server.push_script(Script::text([" there was a fox."]));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: cut.id.clone() };
    f.engine.stream_continue(request.clone(), listener).await.unwrap();
    drain(&mut rx).await;
    let done = f.messages(&topic).await.pop().unwrap();
    assert_eq!((done.status, done.status_reason.as_deref()), (MessageStatus::Success, None));
    assert_eq!(done.message.text(), "Once upon a time there was a fox.");
    // The model saw what it wrote so far as its own last message.
    let body = server.requests().last().unwrap().body.clone();
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "assistant");

    // A reply that ended normally cannot be continued.
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let err = f.engine.stream_continue(request, listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert!(err.message.contains("cut-off"), "{}", err.message);
}

/// A reply that goes silent is stopped after the idle timeout and kept as `stalled`.
#[tokio::test]
async fn a_silent_provider_is_stopped_as_stalled_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.streams.idle_timeout = Duration::from_millis(400);
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    f.provider(&server, "").await;
    server.push_script(Script::text(["so far", " never"]).with_fault(Fault::Stall { after: 1 }));
    let topic = f.topic().await;
    let stream = f.send(&topic, "stall").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Paused);
    let rows = f.messages(&topic).await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("stalled")));
    assert_eq!(rows[1].message.text(), "so far");
}
