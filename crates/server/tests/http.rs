//! The HTTP gateway on a real socket: auth, error shapes, and a streamed reply over SSE.

use std::time::Duration;

use colloquy_server::{AppState, router};
use engine::{Engine, EngineConfig};
use serde_json::{Value, json};
use testkit::{MockConfig, MockServer, Script};
use tokio_util::sync::CancellationToken;

struct Running {
    base: String,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
    mock: MockServer,
}

async fn start() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(EngineConfig::new(dir.path().to_path_buf(), "server")).await.unwrap();
    let state = AppState { engine, token: "secret".into(), shutdown: CancellationToken::new() };
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Colloquy</title>").unwrap();
    let app = router(state, &ui);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mock = MockServer::start(MockConfig {
        port: 0,
        token_delay: Duration::from_millis(1),
        api_key: None,
        models: vec!["scripted".into()],
        ..MockConfig::default()
    })
    .await
    .unwrap();
    Running { base: format!("http://{addr}"), client: reqwest::Client::new(), _dir: dir, mock }
}

impl Running {
    async fn post(&self, operation: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}/api/{operation}", self.base))
            .bearer_auth("secret")
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn sse(&self, operation: &str, body: Value) -> Vec<(Option<String>, Value)> {
        let response = self
            .client
            .post(format!("{}/api/{operation}", self.base))
            .bearer_auth("secret")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let text = response.text().await.unwrap();
        text.split("\n\n")
            .filter(|frame| frame.contains("data:"))
            .map(|frame| {
                let event = frame.lines().find_map(|l| l.strip_prefix("event: ")).map(str::to_owned);
                let data: String = frame.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
                (event, serde_json::from_str(&data).unwrap())
            })
            .collect()
    }
}

#[tokio::test]
async fn api_routes_require_the_bearer_token_but_the_ui_does_not() {
    let r = start().await;
    let response = r.client.post(format!("{}/api/topics_list", r.base)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["kind"], "unauthorized");
    let response = r.client.post(format!("{}/api/topics_list", r.base)).bearer_auth("wrong").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let page = r.client.get(format!("{}/some/deep/link", r.base)).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains("Colloquy"));
}

#[tokio::test]
async fn bad_bodies_and_unknown_ids_are_clear_errors() {
    let r = start().await;
    let response = r
        .client
        .post(format!("{}/api/topic_create", r.base))
        .bearer_auth("secret")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["field"], "body");

    let (status, body) = r.post("stream_open", json!({ "topicId": "t", "txt": "typo" })).await;
    assert_eq!(status, 400);
    assert_eq!(body["kind"], "bad_request");
    assert_eq!(body["field"], "txt");

    let (status, body) = r.post("stream_attach", json!({ "topicId": "missing" })).await;
    assert_eq!(status, 404);
    assert_eq!(body["kind"], "not_found");

    let (status, body) = r.post("no_such_operation", json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(body["field"], "operation");

    let (status, body) =
        r.post("provider_create", json!({ "name": "x", "baseUrl": "not a url", "defaultModel": "m" })).await;
    assert_eq!(status, 400);
    assert_eq!(body["field"], "baseUrl");
    let (_, providers) = r.post("providers_list", Value::Null).await;
    assert_eq!(providers, json!([]));
}

#[tokio::test]
async fn a_reply_streams_over_sse_and_a_late_attach_gets_the_stored_turn() {
    let r = start().await;
    let (status, _) = r
        .post("provider_create", json!({ "name": "Mock", "baseUrl": r.mock.base_url(), "defaultModel": "scripted" }))
        .await;
    assert_eq!(status, 200);
    let (_, topic) = r.post("topic_create", json!({})).await;
    r.mock.push_script(Script { chunks: Some(vec!["Hi ".into(), "there".into()]), ..Script::default() });
    let events = r.sse("stream_open", json!({ "topicId": topic["id"], "text": "hello" })).await;
    assert_eq!(events[0].0.as_deref(), Some("reply"));
    assert_eq!(events[0].1["live"], true);
    let mut seq = 0;
    let mut text = String::new();
    for (_, event) in &events[1..] {
        if event["kind"] == "chunk" {
            seq += 1;
            assert_eq!(event["seq"], seq, "contiguous seq");
            if event["chunk"]["type"] == "text-delta" {
                text.push_str(event["chunk"]["delta"].as_str().unwrap());
            }
        }
    }
    assert_eq!(text, "Hi there");
    let last = &events.last().unwrap().1;
    assert_eq!(last["kind"], "terminal");
    assert_eq!(last["isTopicDone"], true);

    // Within the grace period, attaching replays the finished reply as a snapshot.
    let events = r.sse("stream_attach", json!({ "topicId": topic["id"] })).await;
    assert_eq!(events[1].1["kind"], "snapshot");
    assert_eq!(events[1].1["message"]["parts"][1]["text"], "Hi there");
    assert_eq!(events.last().unwrap().1["kind"], "terminal");
}

#[tokio::test]
async fn the_status_feed_starts_with_a_snapshot_and_attach_honours_last_event_id() {
    let r = start().await;
    r.post("provider_create", json!({ "name": "Mock", "baseUrl": r.mock.base_url(), "defaultModel": "scripted" }))
        .await;
    let (_, topic) = r.post("topic_create", json!({})).await;
    r.mock.push_script(Script { chunks: Some(vec!["a".into(), "b".into(), "c".into()]), ..Script::default() });
    let events = r.sse("stream_open", json!({ "topicId": topic["id"], "text": "hello" })).await;
    let chunk =
        events.iter().map(|(_, e)| e).find(|e| e["kind"] == "chunk" && e["chunk"]["type"] == "text-delta").unwrap();
    let (execution, seq) = (chunk["executionId"].as_str().unwrap().to_owned(), chunk["seq"].as_u64().unwrap());

    // A client that saw up to the first delta resumes right after it, without a snapshot.
    let response = r
        .client
        .post(format!("{}/api/stream_attach", r.base))
        .bearer_auth("secret")
        .header("last-event-id", format!("{execution}:{seq}"))
        .json(&json!({ "topicId": topic["id"] }))
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    assert!(!text.contains("\"kind\":\"snapshot\""), "continuous replay expected: {text}");
    assert!(text.contains(&format!("id: {execution}:{}", seq + 1)), "{text}");

    // The status feed never ends on its own: read its first event and hang up.
    let mut response =
        r.client.post(format!("{}/api/status_subscribe", r.base)).bearer_auth("secret").send().await.unwrap();
    let first = String::from_utf8(response.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    assert!(first.contains("\"kind\":\"snapshot\""), "{first}");
    assert!(first.contains(topic["id"].as_str().unwrap()), "the finished topic is in the snapshot: {first}");
}

#[tokio::test]
async fn interrupt_stops_the_live_reply_and_sends_the_new_message() {
    let r = start().await;
    r.post("provider_create", json!({ "name": "Mock", "baseUrl": r.mock.base_url(), "defaultModel": "scripted" }))
        .await;
    let (_, topic) = r.post("topic_create", json!({})).await;
    let slow: Vec<String> = (0..500).map(|i| format!("w{i} ")).collect();
    r.mock.push_script(serde_json::from_value(json!({ "chunks": slow, "tokenDelayMs": 20 })).unwrap());
    r.mock.push_script(Script { chunks: Some(vec!["new answer".into()]), ..Script::default() });
    // Start the slow reply and let it run in the background.
    let first = r
        .client
        .post(format!("{}/api/stream_open", r.base))
        .bearer_auth("secret")
        .json(&json!({ "topicId": topic["id"], "text": "long" }))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 200);
    let (status, _) = r.post("stream_open", json!({ "topicId": topic["id"], "text": "overtake?" })).await;
    assert_eq!(status, 409, "a second open while streaming is a conflict");
    let events = r.sse("stream_interrupt", json!({ "topicId": topic["id"], "text": "stop and do this" })).await;
    assert_eq!(events.last().unwrap().1["status"], "success");
    let (_, messages) = r.post("messages_list", json!({ "topicId": topic["id"] })).await;
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["status"], "paused");
    assert_eq!(messages[2]["message"]["parts"][0]["text"], "stop and do this");
    assert_eq!(messages[3]["status"], "success");
    drop(first);
}
