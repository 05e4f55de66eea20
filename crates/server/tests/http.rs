//! The HTTP gateway on a real socket: auth, error shapes, and a streamed reply over SSE.

use std::time::Duration;

use colloquy_server::{AllowedHosts, AppState, router};
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
    start_with(|_| {}).await
}

async fn start_with(configure: impl FnOnce(&mut EngineConfig)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "server");
    configure(&mut config);
    let engine = Engine::open(config).await.unwrap();
    let state =
        AppState { engine, token: "secret".into(), hosts: AllowedHosts::Loopback, shutdown: CancellationToken::new() };
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Colloquy</title>").unwrap();
    std::fs::create_dir_all(ui.join("assets")).unwrap();
    std::fs::write(ui.join("assets/index-abc123.js"), BUNDLE.repeat(200)).unwrap();
    std::fs::write(ui.join("assets/tiny-1.js"), BUNDLE).unwrap();
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

const BUNDLE: &str = "export function render(message) { return message.parts.map((p) => p.text).join(''); }\n";

#[tokio::test]
async fn the_ui_is_compressed_as_the_browser_asks_and_hashed_assets_are_cached_for_good() {
    let r = start().await;
    let url = format!("{}/assets/index-abc123.js", r.base);
    let full = BUNDLE.repeat(200);
    let mut first_answers = std::collections::HashMap::new();
    // Twice each: the first request compresses the file, the second is answered from the
    // kept copy, byte for byte the same.
    for round in 0..2 {
        for (accept, encoding) in [
            ("br", Some("br")),
            ("gzip", Some("gzip")),
            ("gzip, deflate, br", Some("br")),
            ("br;q=0, gzip", Some("gzip")),
            ("identity", None),
        ] {
            let response = r.client.get(&url).header("accept-encoding", accept).send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200, "{accept}");
            let headers = response.headers().clone();
            assert_eq!(headers.get("content-encoding").map(|v| v.to_str().unwrap()), encoding, "{accept}");
            assert!(headers["vary"].to_str().unwrap().to_ascii_lowercase().contains("accept-encoding"), "{accept}");
            assert_eq!(headers["cache-control"], "public, max-age=31536000, immutable");
            assert!(headers["content-type"].to_str().unwrap().contains("javascript"), "{accept}");
            let body = response.bytes().await.unwrap();
            assert_eq!(headers["content-length"].to_str().unwrap(), body.len().to_string(), "{accept}");
            // The client here decodes nothing: decode by hand.
            let decoded = match encoding {
                Some("br") => {
                    let mut out = Vec::new();
                    brotli::BrotliDecompress(&mut &body[..], &mut out).unwrap();
                    out
                }
                Some(_) => {
                    let mut out = Vec::new();
                    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut out).unwrap();
                    out
                }
                None => body.to_vec(),
            };
            assert_eq!(decoded, full.as_bytes(), "{accept}");
            if encoding.is_some() {
                assert!(body.len() < full.len() / 10, "{accept}: {} bytes", body.len());
            }
            let first = first_answers.entry(accept).or_insert_with(|| body.clone());
            assert_eq!(*first, body, "{accept}, round {round}");
        }
    }
    // A file too small to keep goes on to the per-response layer, and still arrives whole.
    for _ in 0..2 {
        let small =
            r.client.get(format!("{}/assets/tiny-1.js", r.base)).header("accept-encoding", "br").send().await.unwrap();
        assert_eq!(small.status().as_u16(), 200);
        let compressed = small.headers().get("content-encoding").is_some();
        let body = small.bytes().await.unwrap();
        let mut decoded = Vec::new();
        if compressed {
            brotli::BrotliDecompress(&mut &body[..], &mut decoded).unwrap();
        } else {
            decoded = body.to_vec();
        }
        assert_eq!(decoded, BUNDLE.as_bytes());
    }
    // A range of an asset is the range of the file itself.
    let range = r.client.get(&url).header("accept-encoding", "br").header("range", "bytes=0-5").send().await.unwrap();
    assert_eq!(range.status().as_u16(), 206);
    assert_eq!(range.text().await.unwrap(), &full[..6]);
    // The page itself is compressed too, but never kept: a new build must be picked up.
    let page = r.client.get(format!("{}/", r.base)).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.headers().get("cache-control").is_none());
    // A missing asset is not the page (a stale tab must not run HTML as a script).
    let missing = r.client.get(format!("{}/assets/gone-000.js", r.base)).send().await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    // The API is left alone.
    let api = r
        .client
        .post(format!("{}/api/topics_list", r.base))
        .bearer_auth("secret")
        .header("accept-encoding", "gzip, br")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(api.headers().get("content-encoding").is_none());
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
async fn every_operation_of_the_table_is_routed() {
    let r = start().await;
    let table = protocol::OPERATIONS
        .iter()
        .chain(protocol::operations::STREAMING_OPERATIONS)
        .chain(protocol::operations::LISTENER_OPERATIONS);
    for operation in table {
        // Not an object: refused by the operation's own parsing (field-less ones ignore it).
        let (_, body) = r.post(operation, json!([])).await;
        assert_ne!(body["field"], "operation", "`{operation}` is not routed: {body}");
    }
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

/// Base64 of `bytes` zero bytes (`bytes` a multiple of 3), as an attachment's `data`.
fn zeros_base64(bytes: usize) -> String {
    "AAAA".repeat(bytes / 3)
}

#[tokio::test]
async fn audit_08_attachments_up_to_the_documented_limit_reach_the_engine_and_a_larger_body_is_json() {
    let r = start().await;
    let (_, topic) = r.post("topic_create", json!({})).await;
    // 19 MB is allowed: the request passes the body limit and attachment checks, and
    // fails only for the missing provider.
    let file = |mb: usize| json!({ "mediaType": "image/png", "filename": "big.png", "data": zeros_base64(mb * 1024 * 1024 / 3 * 3) });
    let (status, body) =
        r.post("stream_open", json!({ "topicId": topic["id"], "text": "", "attachments": [file(19)] })).await;
    assert_eq!((status, body["field"].as_str()), (400, Some("model")), "{body}");
    // Over 20 MB, the engine's own limit answers, naming the file.
    let (status, body) =
        r.post("stream_open", json!({ "topicId": topic["id"], "text": "", "attachments": [file(21)] })).await;
    assert_eq!((status, body["field"].as_str()), (400, Some("attachments.0.data")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("big.png is larger than 20 MB"), "{body}");
    // Two 19 MB files are 38 MB in all: still within the documented 40 MB.
    let (status, body) =
        r.post("stream_open", json!({ "topicId": topic["id"], "text": "", "attachments": [file(19), file(19)] })).await;
    assert_eq!((status, body["field"].as_str()), (400, Some("model")), "{body}");
    // A body past any allowed message is refused before parsing, as ApiError JSON.
    let response = r
        .client
        .post(format!("{}/api/stream_open", r.base))
        .bearer_auth("secret")
        .header("content-type", "application/json")
        .body(vec![b' '; colloquy_server::MAX_REQUEST_BYTES + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 413);
    let body: Value = response.json().await.unwrap();
    assert_eq!((body["kind"].as_str(), body["field"].as_str()), (Some("bad_request"), Some("body")), "{body}");
}

#[tokio::test]
async fn audit_24_every_api_answer_is_json_and_unknown_paths_are_not_found() {
    let r = start().await;
    // A deeper path under /api is not the UI page: without the token 401, with it 404.
    let response = r.client.get(format!("{}/api/x/y", r.base)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.json::<Value>().await.unwrap()["kind"], "unauthorized");
    for path in ["/api/x/y", "/api", "/api/"] {
        let response = r.client.get(format!("{}{path}", r.base)).bearer_auth("secret").send().await.unwrap();
        assert_eq!(response.status().as_u16(), 404, "{path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["kind"], "not_found", "{path}");
    }
    // The wrong method on an operation says which one to use.
    let response = r.client.get(format!("{}/api/topics_list", r.base)).bearer_auth("secret").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = response.json().await.unwrap();
    assert_eq!((body["kind"].as_str(), body["field"].as_str()), (Some("bad_request"), Some("method")), "{body}");
}

#[tokio::test]
async fn audit_12_the_server_answers_only_loopback_names_refuses_framing_and_takes_any_bearer_case() {
    let r = start().await;
    // A page on another name that resolves to 127.0.0.1 (DNS rebinding) gets nothing.
    let response = r.client.get(format!("{}/", r.base)).header("host", "rebind.attacker.example").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(response.json::<Value>().await.unwrap()["field"], "host");
    let response = r
        .client
        .post(format!("{}/api/topics_list", r.base))
        .header("host", "localhost:1234")
        .bearer_auth("secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);

    // The UI may not be framed, and loads nothing from other origins.
    let page = r.client.get(format!("{}/", r.base)).send().await.unwrap();
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("img-src 'self' data: blob:;"), "{csp}");

    // The auth scheme is case-insensitive.
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let response = r
            .client
            .post(format!("{}/api/topics_list", r.base))
            .header("authorization", format!("{scheme} secret"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{scheme}");
    }
    let response = r
        .client
        .post(format!("{}/api/topics_list", r.base))
        .header("authorization", "Basic secret")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
}

#[test]
fn audit_12_a_short_token_is_refused_when_the_flags_are_parsed() {
    use clap::Parser;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        serve: colloquy_server::ServeArgs,
    }
    let error = Cli::try_parse_from(["colloquy", "--token", "short"]).err().expect("a 5-character token is refused");
    assert!(error.to_string().contains("use at least 16"), "{error}");
    let ok = Cli::try_parse_from(["colloquy", "--token", "0123456789abcdef"]).unwrap();
    assert_eq!(ok.serve.token.as_deref(), Some("0123456789abcdef"));
}

#[test]
fn audit_03_the_desktop_csp_has_the_servers_directives_plus_tauris_ipc() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tauri.conf.json");
    let config: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let desktop = config["app"]["security"]["csp"].as_str().expect("tauri.conf.json sets a CSP");
    let directives = |csp: &str| -> Vec<(String, String)> {
        csp.split(';')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                let (name, value) = d.split_once(' ').unwrap_or((d, ""));
                (name.to_owned(), value.trim().to_owned())
            })
            .collect()
    };
    let server = directives(colloquy_server::CONTENT_SECURITY_POLICY);
    let desktop = directives(desktop);
    let expected: Vec<(String, String)> = server
        .into_iter()
        .map(|(name, value)| {
            let value = if name == "connect-src" { format!("{value} ipc: http://ipc.localhost") } else { value };
            (name, value)
        })
        .collect();
    assert_eq!(desktop, expected);
}

/// Reads a status feed until `topic` is done.
async fn wait_until_done(r: &Running, topic: &str) {
    let mut feed =
        r.client.post(format!("{}/api/status_subscribe", r.base)).bearer_auth("secret").send().await.unwrap();
    let mut seen = String::new();
    while let Some(bytes) = feed.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&bytes));
        // One topic: a snapshot or a change naming it as done.
        let done = seen.split("\n\n").any(|frame| frame.contains(topic) && frame.contains("\"status\":\"done\""));
        if done {
            return;
        }
    }
    panic!("the status feed ended before {topic} was done");
}

#[tokio::test]
async fn audit_21_a_reader_that_falls_behind_still_gets_the_whole_reply_once() {
    // A listener buffer of 4 messages: a reader that does not read while the reply
    // streams is dropped by the topic many times over.
    let r = start_with(|config| config.streams.listener_capacity = 4).await;
    r.post("provider_create", json!({ "name": "Mock", "baseUrl": r.mock.base_url(), "defaultModel": "scripted" }))
        .await;
    let (_, topic) = r.post("topic_create", json!({})).await;
    let topic_id = topic["id"].as_str().unwrap().to_owned();
    // 16 MB in 1,000 deltas: more than the sockets between us buffer.
    let chunks: Vec<String> = (0..1000).map(|i| format!("<{i}>{}", "x".repeat(16 * 1024))).collect();
    let expected: String = chunks.concat();
    r.mock.push_script(serde_json::from_value(json!({ "chunks": chunks, "tokenDelayMs": 0 })).unwrap());
    let response = r
        .client
        .post(format!("{}/api/stream_open", r.base))
        .bearer_auth("secret")
        .json(&json!({ "topicId": topic_id, "text": "long" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    // Read nothing until the whole reply is written.
    wait_until_done(&r, &topic_id).await;
    let text = response.text().await.unwrap();

    // Fold it as a client does: a snapshot rebases the message, a chunk continues it.
    let mut message = String::new();
    let mut last_seq = 0;
    let mut snapshots = 0;
    let mut terminals = Vec::new();
    for frame in text.split("\n\n").filter(|frame| frame.contains("data:") && !frame.contains("event: reply")) {
        let data: String = frame.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
        let event: Value = serde_json::from_str(&data).unwrap();
        match event["kind"].as_str() {
            Some("chunk") => {
                let seq = event["seq"].as_u64().unwrap();
                assert_eq!(seq, last_seq + 1, "no chunk lost or sent twice");
                last_seq = seq;
                if event["chunk"]["type"] == "text-delta" {
                    message.push_str(event["chunk"]["delta"].as_str().unwrap());
                }
            }
            Some("snapshot") => {
                snapshots += 1;
                let seq = event["seq"].as_u64().unwrap();
                assert!(seq > last_seq, "a snapshot only moves forward");
                last_seq = seq;
                message = event["message"]["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["type"] == "text")
                    .map(|p| p["text"].as_str().unwrap())
                    .collect();
            }
            Some("terminal") => terminals.push(event),
            other => panic!("unexpected {other:?} in {}", &data[..data.len().min(200)]),
        }
    }
    assert_eq!(terminals.len(), 1, "one terminal");
    assert_eq!(terminals[0]["isTopicDone"], true);
    assert_eq!(terminals[0]["status"], "success");
    assert!(
        message == expected,
        "the whole reply arrived ({} of {} bytes, {snapshots} snapshots)",
        message.len(),
        expected.len()
    );
}

#[tokio::test]
async fn search_finds_a_word_a_reply_had_written_at_its_last_checkpoint_and_refuses_bad_syntax() {
    let r = start().await;
    let (status, _) = r
        .post("provider_create", json!({ "name": "Mock", "baseUrl": r.mock.base_url(), "defaultModel": "scripted" }))
        .await;
    assert_eq!(status, 200);
    let (_, topic) = r.post("topic_create", json!({})).await;
    // The word comes first, then the reply goes on for seconds: it is found while streaming.
    let mut chunks = vec!["The xylophone ".to_owned()];
    chunks.extend((0..60).map(|_| "keeps playing ".to_owned()));
    r.mock.push_script(Script { chunks: Some(chunks), token_delay_ms: Some(150), ..Script::default() });
    // The stream belongs to the backend: this window may stop listening at once.
    let response = r
        .client
        .post(format!("{}/api/stream_open", r.base))
        .bearer_auth("secret")
        .json(&json!({ "topicId": topic["id"], "text": "tell me about an instrument" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    drop(response);

    let mut found = Value::Null;
    for _ in 0..100 {
        let (status, results) = r.post("messages_search", json!({ "query": "xyloph" })).await;
        assert_eq!(status, 200, "{results}");
        if results["hits"].as_array().is_some_and(|hits| !hits.is_empty()) {
            found = results;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hit = &found["hits"][0];
    assert_eq!(hit["role"], "assistant", "{found}");
    assert_eq!(hit["topicId"], topic["id"]);
    assert_eq!(hit["onActivePath"], true);
    let marked: Vec<&str> = hit["snippet"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|piece| piece["hit"] == true)
        .filter_map(|piece| piece["text"].as_str())
        .collect();
    assert_eq!(marked, vec!["xyloph"], "{hit}");
    let (_, messages) = r.post("messages_list", json!({ "topicId": topic["id"] })).await;
    let reply = messages.as_array().unwrap().iter().find(|m| m["id"] == hit["messageId"]).unwrap();
    assert_eq!(reply["status"], "streaming", "found from a checkpoint, before the reply ended");

    for bad in ["\"unterminated", "xylophone AND", "(xylophone"] {
        let (status, body) = r.post("messages_search", json!({ "query": bad })).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!((body["kind"].as_str(), body["field"].as_str()), (Some("bad_request"), Some("query")), "{body}");
    }
    let (status, body) = r.post("messages_search", json!({ "query": "xylophone", "from": "last week" })).await;
    assert_eq!((status, body["field"].as_str()), (400, Some("from")), "{body}");
    let (status, body) = r.post("messages_search", json!({ "query": "C++ don't a:b" })).await;
    assert_eq!(status, 200, "plain words with FTS5 punctuation are only words: {body}");
}
