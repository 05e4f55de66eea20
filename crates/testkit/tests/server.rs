//! The mock seen from a plain TCP client: what goes over the wire, byte for byte.
//! (The providers crate tests the same server through a real HTTP client.)

use std::net::SocketAddr;
use std::time::Duration;

use colloquy_testkit::{Fault, MockConfig, MockServer, Script, default_reply};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(10);

async fn server() -> MockServer {
    server_with(MockConfig {
        token_delay: Duration::from_millis(1),
        control_token: Some(CONTROL.into()),
        ..MockConfig::default()
    })
    .await
}

/// The control token of [`server`]'s `/_testkit/*` routes.
const CONTROL: &str = "control-t0ken";
const AUTH: (&str, &str) = ("Authorization", "Bearer control-t0ken");

async fn server_with(config: MockConfig) -> MockServer {
    MockServer::start(config).await.expect("bind 127.0.0.1:0")
}

/// A response as a raw client sees it.
#[derive(Debug)]
struct Raw {
    status: u16,
    head: String,
    body: String,
    /// The chunked body ended with its `0\r\n\r\n` terminator (or matched Content-Length).
    complete: bool,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }

    /// The `data:` payloads of an event stream.
    fn frames(&self) -> Vec<String> {
        self.body.split("\n\n").filter_map(|frame| frame.strip_prefix("data: ")).map(str::to_owned).collect()
    }

    /// `(event, data)` of each frame of an event stream.
    fn events(&self) -> Vec<(Option<String>, String)> {
        self.body
            .split("\n\n")
            .filter(|frame| !frame.is_empty())
            .map(|frame| {
                let mut event = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(name) = line.strip_prefix("event: ") {
                        event = Some(name.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    }
                }
                (event, data)
            })
            .collect()
    }

    /// The concatenated `delta.content` of an event stream.
    fn text(&self) -> String {
        self.frames()
            .iter()
            .filter_map(|frame| serde_json::from_str::<Value>(frame).ok())
            .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
            .collect()
    }
}

fn request_bytes(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
            request.push_str("Content-Type: application/json\r\n");
        }
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request.into_bytes()
}

/// Sends one request and reads until the server closes (cleanly or not).
async fn send(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Raw {
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    socket.write_all(&request_bytes(method, path, headers, body)).await.expect("write request");
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match timeout(PATIENCE, socket.read(&mut buf)).await.expect("server answered in time") {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Raw {
    let text = String::from_utf8_lossy(bytes);
    let (head, rest) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    let mut raw = Raw { status, head: head.to_owned(), body: String::new(), complete: false };
    if raw.header("transfer-encoding") == Some("chunked") {
        let (body, complete) = dechunk(rest.as_bytes());
        raw.body = body;
        raw.complete = complete;
    } else {
        raw.body = rest.to_owned();
        raw.complete = raw.header("content-length").and_then(|n| n.parse().ok()) == Some(rest.len());
    }
    raw
}

fn dechunk(mut rest: &[u8]) -> (String, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (String::from_utf8_lossy(&body).into(), false);
        };
        let Ok(size) = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap_or("x"), 16) else {
            return (String::from_utf8_lossy(&body).into(), false);
        };
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (String::from_utf8_lossy(&body).into(), rest.starts_with(b"\r\n"));
        }
        if rest.len() < size + 2 {
            body.extend_from_slice(&rest[..rest.len().min(size)]);
            return (String::from_utf8_lossy(&body).into(), false);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

fn chat_body(prompt: &str, stream: bool) -> String {
    json!({
        "model": "scripted",
        "messages": [{"role": "user", "content": prompt}],
        "stream": stream,
        "stream_options": {"include_usage": true}
    })
    .to_string()
}

async fn chat(server: &MockServer, prompt: &str) -> Raw {
    send(server.addr(), "POST", "/v1/chat/completions", &[], &chat_body(prompt, true)).await
}

/// Polls until `condition` holds; the server's own bookkeeping runs on other tasks.
async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn streams_openai_chunks_then_usage_then_done() {
    let server = server().await;
    server.push_script(Script::text(["Hel", "lo"]).with_usage(3, 2));
    let raw = chat(&server, "hi").await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.header("content-type"), Some("text/event-stream"));
    assert!(raw.complete);
    let frames = raw.frames();
    assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = frames[..frames.len() - 1].iter().map(|f| serde_json::from_str(f).unwrap()).collect();
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk" && c["id"] == chunks[0]["id"]));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(raw.text(), "Hello");
    assert_eq!(chunks[chunks.len() - 2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[chunks.len() - 1]["choices"], json!([]));
    assert_eq!(
        chunks[chunks.len() - 1]["usage"],
        json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})
    );
}

#[tokio::test]
async fn scripts_are_served_in_order_then_the_default_reply() {
    let server = server().await;
    server.push_script(Script::text(["first"]));
    let queued =
        send(server.addr(), "POST", "/_testkit/script", &[AUTH], r#"[{"chunks":["second"]},{"chunks":["third"]}]"#)
            .await;
    assert_eq!(queued.json(), json!({"queued": 2}));

    for expected in ["first", "second", "third"] {
        assert_eq!(chat(&server, "hi").await.text(), expected);
    }
    let prompt = "How do I parse JSON in Rust?";
    assert_eq!(chat(&server, prompt).await.text(), default_reply(prompt).concat());
}

#[tokio::test]
async fn a_reset_drops_the_connection_without_the_chunked_terminator() {
    let server = server().await;
    server.push_script(Script::text(["a", "b", "c"]).with_fault(Fault::Reset { after: 2 }));
    let raw = chat(&server, "hi").await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.text(), "ab");
    assert!(!raw.complete, "the body must end abruptly: {raw:?}");
    assert!(!raw.body.contains("[DONE]"));
}

#[tokio::test]
async fn malformed_and_error_frames_appear_where_scripted() {
    let server = server().await;
    server.push_script(Script::text(["a", "b"]).with_fault(Fault::MalformedFrame { after: 1 }));
    server.push_script(
        Script::text(["a", "b"]).with_fault(Fault::ErrorFrame { after: 1, message: "upstream fell over".into() }),
    );

    let frames = chat(&server, "hi").await.frames();
    let malformed = frames.iter().position(|f| f == "{not json").expect("a malformed frame");
    assert!(frames[malformed - 1].contains(r#""content":"a""#) && frames[malformed + 1].contains(r#""content":"b""#));

    let raw = chat(&server, "hi").await;
    assert_eq!(raw.text(), "a");
    let frames = raw.frames();
    let error: Value = serde_json::from_str(&frames[frames.len() - 2]).unwrap();
    assert_eq!(error["error"]["message"], "upstream fell over");
    assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
}

#[tokio::test]
async fn status_faults_answer_with_the_scripted_status_body_and_type() {
    let server = server().await;
    server.push_script(Script::status(500, "<html><title>Oops</title></html>", "text/html"));
    server.push_script(Script::default().with_fault(Fault::Status { status: 429, body: None, content_type: None }));

    let raw = chat(&server, "hi").await;
    assert_eq!((raw.status, raw.header("content-type")), (500, Some("text/html")));
    assert_eq!(raw.body, "<html><title>Oops</title></html>");

    let raw = chat(&server, "hi").await;
    assert_eq!(raw.status, 429);
    assert_eq!(raw.json()["error"]["message"], "Too Many Requests");
}

#[tokio::test]
async fn the_api_key_is_enforced_with_an_openai_error() {
    let server = server_with(MockConfig { api_key: Some("sk-test".into()), ..MockConfig::default() }).await;
    let expected = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
    for auth in [None, Some("Bearer wrong"), Some("sk-test")] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let raw = send(server.addr(), "GET", "/v1/models", &headers, "").await;
        assert_eq!((raw.status, raw.json()), (401, expected.clone()), "{auth:?}");
    }
    let raw = send(server.addr(), "GET", "/v1/models", &[("Authorization", "Bearer sk-test")], "").await;
    assert_eq!(raw.status, 200);
    assert_eq!(raw.json()["data"][0]["id"], "scripted");
    assert_eq!(server.requests()[3].header("Authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn a_stalled_stream_is_released_when_the_client_disconnects() {
    let server = server().await;
    server.push_script(Script::text(["a", "b"]).with_fault(Fault::Stall { after: 1 }));
    let mut socket = TcpStream::connect(server.addr()).await.unwrap();
    socket.write_all(&request_bytes("POST", "/v1/chat/completions", &[], &chat_body("hi", true))).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains(r#""content":"a""#) {
        let n = timeout(PATIENCE, socket.read(&mut buf)).await.expect("the first chunk in time").unwrap();
        assert!(n > 0, "the stall must keep the connection open");
        seen.extend_from_slice(&buf[..n]);
    }
    assert_eq!(server.open_streams(), 1);
    drop(socket);
    eventually("the server notices the disconnect", || server.open_streams() == 0).await;
}

#[tokio::test]
async fn shutdown_ends_open_streams() {
    let server = server().await;
    server.push_script(Script::default().with_fault(Fault::Stall { after: 0 }));
    let addr = server.addr();
    let client =
        tokio::spawn(async move { send(addr, "POST", "/v1/chat/completions", &[], &chat_body("hi", true)).await });
    eventually("the stream opens", || server.open_streams() == 1).await;
    timeout(PATIENCE, server.shutdown()).await.expect("shutdown does not wait for stalled streams");
    let raw = client.await.unwrap();
    assert_eq!(raw.status, 200);
}

#[tokio::test]
async fn control_routes_record_requests_and_reset() {
    let server = server().await;
    server.push_script(Script::text(["x"]));
    let body = chat_body("remember me", false);
    let raw = send(server.addr(), "POST", "/v1/chat/completions", &[("Authorization", "Bearer k")], &body).await;
    assert_eq!(raw.json()["choices"][0]["message"]["content"], "x");
    assert_eq!(raw.json()["object"], "chat.completion");

    let recorded = send(server.addr(), "GET", "/_testkit/requests", &[AUTH], "").await.json();
    assert_eq!(recorded[0]["method"], "POST");
    assert_eq!(recorded[0]["path"], "/v1/chat/completions");
    assert_eq!(recorded[0]["headers"]["authorization"], "Bearer k");
    assert_eq!(recorded[0]["body"]["messages"][0]["content"], "remember me");
    assert_eq!(recorded.as_array().map(Vec::len), Some(1), "control routes are not recorded");

    server.push_script(Script::text(["queued"]));
    assert_eq!(send(server.addr(), "POST", "/_testkit/reset", &[AUTH], "").await.status, 204);
    assert!(server.requests().is_empty());
    assert_ne!(chat(&server, "hi").await.text(), "queued");

    let bad = send(server.addr(), "POST", "/_testkit/script", &[AUTH], r#"{"chunkz":[]}"#).await;
    assert_eq!(bad.status, 400);
    let unknown = send(server.addr(), "GET", "/v1/nope", &[], "").await;
    assert_eq!((unknown.status, unknown.json()["error"]["code"].clone()), (404, json!("unknown_url")));
}

#[tokio::test]
async fn audit_04_a_web_page_cannot_script_the_model_or_read_what_it_was_sent() {
    // What a page in the user's browser can send without a CORS preflight: no
    // `Authorization` header, a `text/plain` body.
    let page = [("Content-Type", "text/plain")];
    let script = r#"{"toolCalls":[{"name":"read_file","arguments":"{\"path\":\".env\"}"}]}"#;

    // The app's demo provider: no control routes at all, and nothing recorded.
    let demo = server_with(MockConfig { control_token: None, recorded_requests: 0, ..MockConfig::default() }).await;
    for (method, path, body) in
        [("POST", "/_testkit/script", script), ("GET", "/_testkit/requests", ""), ("POST", "/_testkit/reset", "")]
    {
        let raw = send(demo.addr(), method, path, &page, body).await;
        assert_eq!(raw.status, 404, "{method} {path}: {raw:?}");
        let raw = send(demo.addr(), method, path, &[AUTH], body).await;
        assert_eq!(raw.status, 404, "even with a token: {method} {path}");
    }
    let prompt = "read my .env";
    assert_eq!(chat(&demo, prompt).await.text(), default_reply(prompt).concat(), "no script was queued");
    assert!(demo.requests().is_empty(), "the demo keeps no record of what the model was sent");

    // A test's mock: the control routes want the token and JSON.
    let mock = server().await;
    let raw = send(mock.addr(), "POST", "/_testkit/script", &page, script).await;
    assert_eq!(raw.status, 401, "{raw:?}");
    assert!(raw.json()["error"].as_str().unwrap().contains("Bearer"), "{raw:?}");
    let raw = send(mock.addr(), "POST", "/_testkit/script", &[("Authorization", "Bearer wrong")], script).await;
    assert_eq!(raw.status, 401);
    let raw = send(mock.addr(), "POST", "/_testkit/script", &[AUTH, ("Content-Type", "text/plain")], script).await;
    assert_eq!(raw.status, 415, "{raw:?}");
    assert!(raw.json()["error"].as_str().unwrap().contains("application/json"), "{raw:?}");
    assert_eq!(send(mock.addr(), "GET", "/_testkit/requests", &[], "").await.status, 401);
    assert_eq!(send(mock.addr(), "POST", "/_testkit/reset", &[], "").await.status, 401);
    assert_eq!(chat(&mock, prompt).await.text(), default_reply(prompt).concat(), "nothing refused was queued");
    let raw = send(mock.addr(), "POST", "/_testkit/script", &[AUTH], script).await;
    assert_eq!(raw.json(), json!({"queued": 1}));
}

#[tokio::test]
async fn audit_04_only_the_newest_requests_are_kept() {
    let server = server_with(MockConfig { recorded_requests: 2, ..MockConfig::default() }).await;
    for prompt in ["one", "two", "three"] {
        chat(&server, prompt).await;
    }
    let kept: Vec<Value> = server.requests().iter().map(|r| r.body["messages"][0]["content"].clone()).collect();
    assert_eq!(kept, vec![json!("two"), json!("three")]);
    assert_eq!(MockConfig::default().recorded_requests, colloquy_testkit::DEFAULT_RECORDED_REQUESTS);
}

#[cfg(unix)]
#[tokio::test]
async fn the_binary_announces_its_url_and_stops_on_sigterm() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_colloquy-testkit"))
        .args(["--port", "0", "--token-delay-ms", "1", "--api-key", "sk-bin", "--control-token", CONTROL])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the binary");
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    timeout(PATIENCE, tokio::io::BufReader::new(stdout).read_line(&mut line))
        .await
        .expect("announced in time")
        .unwrap();
    let url = line.trim_end().strip_prefix("testkit listening on http://").expect(&line);
    let addr: SocketAddr = url.strip_suffix("/v1").expect(&line).parse().unwrap();

    let raw = send(addr, "GET", "/v1/models", &[("Authorization", "Bearer sk-bin")], "").await;
    assert_eq!(raw.status, 200);
    assert_eq!(send(addr, "GET", "/_testkit/requests", &[], "").await.status, 401);
    assert_eq!(send(addr, "GET", "/_testkit/requests", &[AUTH], "").await.status, 200);

    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let status = timeout(PATIENCE, child.wait()).await.expect("exits after SIGTERM").unwrap();
    assert!(status.success(), "{status}");
}

fn messages_body(prompt: &str) -> String {
    json!({"model": "claude", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": prompt}]})
        .to_string()
}

#[tokio::test]
async fn anthropic_messages_stream_typed_events_and_need_a_version_and_key() {
    let server = server_with(MockConfig {
        token_delay: Duration::from_millis(1),
        api_key: Some("sk-ant".into()),
        ..MockConfig::default()
    })
    .await;
    let key = ("x-api-key", "sk-ant");
    let version = ("anthropic-version", "2023-06-01");

    let raw = send(server.addr(), "POST", "/v1/messages", &[key], &messages_body("hi")).await;
    assert_eq!(raw.status, 400);
    assert_eq!(raw.json()["error"]["message"], "anthropic-version: header is required");

    let raw =
        send(server.addr(), "POST", "/v1/messages", &[("x-api-key", "nope"), version], &messages_body("hi")).await;
    assert_eq!(raw.status, 401);
    assert_eq!(
        raw.json(),
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    );

    server.push_script(Script::text(["Hel", "lo"]).with_usage(3, 2));
    let raw = send(server.addr(), "POST", "/v1/messages", &[key, version], &messages_body("hi")).await;
    assert_eq!((raw.status, raw.header("content-type")), (200, Some("text/event-stream")));
    let events = raw.events();
    for (event, data) in &events {
        let data: Value = serde_json::from_str(data).unwrap();
        assert_eq!(Some(data["type"].as_str().unwrap()), event.as_deref(), "the event line names the data's type");
    }
    let names: Vec<&str> = events.iter().filter_map(|(event, _)| event.as_deref()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let delta: Value = serde_json::from_str(&events[5].1).unwrap();
    assert_eq!(delta["usage"]["output_tokens"], 2);
}

#[tokio::test]
async fn responses_stream_typed_events_ending_with_completed() {
    let server = server().await;
    server.push_script(Script::text(["a", "b"]).with_reasoning(["hmm"]).with_tool_call("f", r#"{"x":1}"#));
    let body = json!({"model": "gpt", "stream": true, "input": "hi"}).to_string();
    let raw = send(server.addr(), "POST", "/v1/responses", &[], &body).await;
    assert_eq!(raw.status, 200);
    let events = raw.events();
    let last: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(last["type"], "response.completed");
    assert_eq!(last["response"]["status"], "completed");
    let text: String = events
        .iter()
        .filter(|(event, _)| event.as_deref() == Some("response.output_text.delta"))
        .map(|(_, data)| serde_json::from_str::<Value>(data).unwrap()["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "ab");
}

#[tokio::test]
async fn gemini_streams_on_its_real_path_and_checks_its_key() {
    let server = server_with(MockConfig {
        token_delay: Duration::from_millis(1),
        api_key: Some("AIza-test".into()),
        ..MockConfig::default()
    })
    .await;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).to_string();
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

    let raw = send(server.addr(), "POST", path, &[("x-goog-api-key", "wrong")], &body).await;
    assert_eq!((raw.status, raw.json()["error"]["status"].clone()), (400, json!("INVALID_ARGUMENT")));
    let raw = send(server.addr(), "POST", path, &[], &body).await;
    assert_eq!((raw.status, raw.json()["error"]["status"].clone()), (403, json!("PERMISSION_DENIED")));

    server.push_script(Script::text(["Hel", "lo"]));
    let raw = send(server.addr(), "POST", path, &[("x-goog-api-key", "AIza-test")], &body).await;
    assert_eq!(raw.status, 200);
    let frames: Vec<Value> = raw.frames().iter().map(|f| serde_json::from_str(f).unwrap()).collect();
    let text: String =
        frames.iter().filter_map(|f| f["candidates"][0]["content"]["parts"][0]["text"].as_str()).collect();
    assert_eq!(text, "Hello");
    assert_eq!(frames.last().unwrap()["candidates"][0]["finishReason"], "STOP");
    assert_eq!(frames[0]["modelVersion"], "gemini-2.5-flash");

    server.push_script(Script::text(["whole"]));
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-test";
    let raw = send(server.addr(), "POST", path, &[], &body).await;
    assert!(raw.json().is_array(), "without alt=sse the answer is one JSON array: {}", raw.body);

    let raw = send(server.addr(), "GET", "/v1beta/models", &[("x-goog-api-key", "AIza-test")], "").await;
    assert_eq!(raw.json()["models"][0]["name"], "models/scripted");
}

#[tokio::test]
async fn refusals_carry_retry_after_and_the_formats_error_shape() {
    let server = server().await;
    server.push_script(Script::refusal(529, Some("2")));
    let headers = [("anthropic-version", "2023-06-01")];
    let raw = send(server.addr(), "POST", "/v1/messages", &headers, &messages_body("hi")).await;
    assert_eq!((raw.status, raw.header("retry-after")), (529, Some("2")));
    assert_eq!(raw.json(), json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));

    server.push_script(Script::refusal(429, None));
    let raw = send(server.addr(), "POST", "/v1beta/models/m:streamGenerateContent?alt=sse", &[], "{}").await;
    assert_eq!((raw.status, raw.header("retry-after")), (429, None));
    assert_eq!(raw.json()["error"]["status"], "RESOURCE_EXHAUSTED");
}

#[tokio::test]
async fn the_model_list_answers_in_the_shape_the_client_asks_for() {
    let server = server().await;
    let openai = send(server.addr(), "GET", "/v1/models", &[], "").await.json();
    assert_eq!(openai["object"], "list");
    let anthropic = send(server.addr(), "GET", "/v1/models", &[("anthropic-version", "2023-06-01")], "").await.json();
    assert_eq!((anthropic["data"][0]["type"].clone(), anthropic["has_more"].clone()), (json!("model"), json!(false)));
    let gemini = send(server.addr(), "GET", "/v1/models?key=k", &[], "").await.json();
    assert_eq!(gemini["models"][0]["name"], "models/scripted");
}
