//! Crash recovery on a real process: `colloquy serve` is killed with SIGKILL while a reply
//! streams, then started again on the same data folder. The reply must come back
//! `paused`/`interrupted` holding the text streamed up to the last checkpoint before the
//! kill (nothing invented, at most ~500 ms lost), and the topic must take a new message.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use testkit::{MockConfig, MockServer, Script};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};

const TOKEN: &str = "t";
/// The stream manager checkpoints a live reply at most this often.
const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(500);
/// Allowance on top of the interval for the checkpoint tick to run and its transaction to
/// commit on a busy machine: the promise is "at most 500 ms of output, plus the write".
const WRITE_TOLERANCE: Duration = Duration::from_millis(150);
/// How long the reply streams before the kill: several checkpoints' worth, plus a random
/// part of one interval (see `kill_phase`).
const STREAM_BEFORE_KILL: Duration = Duration::from_secs(2);
/// Delay between the mock's chunks; with `REPLY_CHUNKS` the reply would take ~12 s.
const TOKEN_DELAY: Duration = Duration::from_millis(10);
const REPLY_CHUNKS: usize = 1200;

/// Start-up includes opening (and migrating) the database on a possibly loaded machine.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest silence tolerated on an event stream (the mock sends a chunk every 10 ms).
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_killed_mid_stream_comes_back_paused_with_its_checkpointed_text() {
    let root = tempfile::tempdir().unwrap();
    let ui = root.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Colloquy</title>").unwrap();
    let mock = MockServer::start(MockConfig {
        port: 0,
        token_delay: TOKEN_DELAY,
        api_key: None,
        models: vec!["scripted".into()],
    })
    .await
    .unwrap();
    // Numbered words, so any repeated, reordered or invented text shows up as a mismatch.
    let words: Vec<String> = (1..=REPLY_CHUNKS).map(|i| format!("w{i:04} ")).collect();
    let full_reply = words.concat();
    mock.push_script(Script { chunks: Some(words), ..Script::default() });
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let phase = kill_phase();

    let mut first = Server::start(root.path(), "first").await;
    first
        .call(
            &client,
            "provider_create",
            json!({ "name": "Mock", "baseUrl": mock.base_url(), "defaultModel": "scripted" }),
        )
        .await;
    let topic_id = first.call(&client, "topic_create", json!({})).await["id"].clone();
    let mut events = first.stream(&client, json!({ "topicId": topic_id, "text": "go" })).await;

    // Read the reply, noting when each piece of text arrived; kill the server once it has
    // streamed for a while, then keep reading until the connection drops: bytes already in
    // the socket when the process died were sent too, and a checkpoint may hold them.
    // `killed_at` is taken after the signal is sent, which only makes the bound stricter.
    let mut received: Vec<(Instant, String)> = Vec::new();
    let mut next_seq = 1;
    let mut kill_deadline: Option<Instant> = None;
    let mut killed_at: Option<Instant> = None;
    loop {
        let deadline = kill_deadline.unwrap_or_else(|| Instant::now() + EVENT_TIMEOUT);
        tokio::select! {
            biased;
            () = sleep_until(deadline), if kill_deadline.is_some() && killed_at.is_none() => {
                first.kill();
                killed_at = Some(Instant::now());
            }
            event = events.next_event() => {
                let Some((at, event)) = event else { break };
                match event["kind"].as_str() {
                    Some("snapshot") => {
                        next_seq = event["seq"].as_u64().unwrap() + 1;
                        received.push((at, message_text(&event["message"])));
                    }
                    Some("chunk") => {
                        assert_eq!(event["seq"], next_seq, "chunks arrive contiguously: {event}");
                        next_seq += 1;
                        if event["chunk"]["type"] == "text-delta" {
                            received.push((at, event["chunk"]["delta"].as_str().unwrap().to_owned()));
                            kill_deadline.get_or_insert(at + STREAM_BEFORE_KILL + phase);
                        }
                    }
                    _ => panic!("the reply stream ended before the kill: {event}"),
                }
            }
        }
    }
    let killed_at = killed_at.expect("the server was killed while the reply streamed");
    let exit = first.wait_for_exit().await;
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(exit.signal(), Some(9), "the server died of SIGKILL, not a clean shutdown: {exit:?}");
    }
    drop(first);

    let second = Server::start(root.path(), "second").await;
    let rows = second.call(&client, "messages_list", json!({ "topicId": topic_id })).await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "the user message and the interrupted reply: {rows:#?}");
    assert_eq!(rows[0]["message"]["role"], "user");
    let reply = &rows[1];
    assert_eq!(reply["message"]["role"], "assistant");
    assert_eq!(reply["status"], "paused", "{reply:#}");
    assert_eq!(reply["statusReason"], "interrupted", "{reply:#}");
    assert_eq!(reply["message"]["metadata"]["status"], "paused", "the UI reads the status from metadata");
    let stored = message_text(&reply["message"]);

    let received_text: String = received.iter().map(|(_, text)| text.as_str()).collect();
    assert!(full_reply.starts_with(&received_text), "the client received the script in order");
    // A checkpoint may reach disk a moment before the SSE writer flushes the same chunk,
    // so the stored text is checked against the script, not against what arrived.
    assert!(
        full_reply.starts_with(&stored),
        "the stored reply is the script's beginning, nothing invented or repeated:\nstored:   {stored:?}"
    );
    // Checkpoints are taken at most every 500 ms, so up to 500 ms of output (plus the time
    // to write the last checkpoint, see WRITE_TOLERANCE) may be lost; anything the client
    // had before that must be on disk.
    let must_keep_before = killed_at - (CHECKPOINT_INTERVAL + WRITE_TOLERANCE);
    let must_keep: String =
        received.iter().filter(|(at, _)| *at < must_keep_before).map(|(_, text)| text.as_str()).collect();
    assert!(!must_keep.is_empty(), "the reply streamed long enough before the kill to require a checkpoint");
    assert!(
        stored.starts_with(&must_keep),
        "the stored reply keeps everything received up to {:?} before the kill: stored {} bytes, required {} bytes \
         (kill phase {phase:?}, lost the last {:?})",
        CHECKPOINT_INTERVAL + WRITE_TOLERANCE,
        stored.len(),
        must_keep.len(),
        lost_span(&received, stored.len(), killed_at),
    );
    eprintln!(
        "crash_recovery: kill phase {} ms; stored {} of {} received bytes; lost output spans the last {} ms before the kill",
        phase.as_millis(),
        stored.len(),
        received_text.len(),
        lost_span(&received, stored.len(), killed_at).as_millis()
    );

    // The topic is usable after the restart: a new message streams to success.
    mock.push_script(Script::text(["Back ", "again."]));
    let mut events = second.stream(&client, json!({ "topicId": topic_id, "text": "still there?" })).await;
    let mut text = String::new();
    let mut terminal = Value::Null;
    while let Some((_, event)) = events.next_event().await {
        match event["kind"].as_str() {
            Some("chunk") if event["chunk"]["type"] == "text-delta" => {
                text.push_str(event["chunk"]["delta"].as_str().unwrap());
            }
            Some("terminal") => terminal = event,
            _ => {}
        }
    }
    assert_eq!(terminal["status"], "success", "{terminal}");
    assert_eq!(terminal["isTopicDone"], true);
    assert_eq!(text, "Back again.");
    let rows = second.call(&client, "messages_list", json!({ "topicId": topic_id })).await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert_eq!(rows[1]["status"], "paused", "the interrupted reply stays as it was");
    assert_eq!(message_text(&rows[1]["message"]), stored);
    assert_eq!(rows[3]["status"], "success");
    assert_eq!(message_text(&rows[3]["message"]), "Back again.");
}

/// A random offset within one checkpoint interval. The actor's checkpoint clock starts
/// with the stream, so a fixed kill time would always land at the same point between two
/// checkpoints (right after one, losing almost nothing); this spreads runs over the whole
/// interval, including just before a checkpoint, where the most is lost. The offset is
/// printed so a failure can be related to it.
fn kill_phase() -> Duration {
    use std::hash::BuildHasher;
    let random = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    let millis = u64::try_from(CHECKPOINT_INTERVAL.as_millis()).unwrap();
    Duration::from_millis(random % millis)
}

/// How long before the kill the first piece of text the store did not keep arrived (zero
/// when nothing the client had before the kill was lost).
fn lost_span(received: &[(Instant, String)], stored_len: usize, killed_at: Instant) -> Duration {
    let mut end = 0;
    for (at, text) in received {
        end += text.len();
        if end > stored_len {
            return killed_at.saturating_duration_since(*at);
        }
    }
    Duration::ZERO
}

/// The text parts of a `UiMessage`, joined.
fn message_text(message: &Value) -> String {
    let parts = message["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
    parts.iter().filter(|part| part["type"] == "text").filter_map(|part| part["text"].as_str()).collect()
}

async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {limit:?}: {what}"),
    }
}

/// A `colloquy serve` child process; killed when dropped, so none outlives the test.
struct Server {
    child: Child,
    base: String,
    /// Where its stderr (the logs) goes; printed if the test fails.
    log: PathBuf,
    /// Keeps reading stdout so the child never blocks on a full pipe.
    stdout: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts `colloquy serve` on `root/data` and waits for its "serving on" line.
    async fn start(root: &Path, name: &str) -> Server {
        let log = root.join(format!("{name}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_colloquy"))
            .args(["serve", "--port", "0", "--token", TOKEN])
            .arg("--data-dir")
            .arg(root.join("data"))
            .arg("--ui-dir")
            .arg(root.join("ui"))
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut server = Server { child, base: String::new(), log, stdout: None };
        let mut lines = BufReader::new(server.child.stdout.take().unwrap()).lines();
        server.base = within(STARTUP_TIMEOUT, "colloquy serve to start", async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("Colloquy is serving on ") {
                    let (base, token) = url.split_once("/#token=").unwrap();
                    assert_eq!(token, TOKEN);
                    return base.to_owned();
                }
            }
            panic!("colloquy serve exited before serving");
        })
        .await;
        server.stdout = Some(tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} }));
        server
    }

    /// A plain operation; panics unless it succeeds.
    async fn call(&self, client: &reqwest::Client, operation: &str, body: Value) -> Value {
        let request = client.post(format!("{}/api/{operation}", self.base)).bearer_auth(TOKEN).json(&body);
        let response = within(REQUEST_TIMEOUT, operation, request.send()).await.unwrap();
        let status = response.status();
        let body: Value = within(REQUEST_TIMEOUT, operation, response.json()).await.unwrap();
        assert!(status.is_success(), "{operation}: {status} {body}");
        body
    }

    /// `stream_open`, checked up to its `reply` event.
    async fn stream(&self, client: &reqwest::Client, body: Value) -> Events {
        let request = client.post(format!("{}/api/stream_open", self.base)).bearer_auth(TOKEN).json(&body);
        let response = within(REQUEST_TIMEOUT, "stream_open", request.send()).await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let mut events = Events {
            body: response.bytes_stream().map(|read| read.map(Vec::from)).boxed(),
            buffer: Vec::new(),
            last_read: Instant::now(),
        };
        let (_, reply) = events.next_event().await.expect("a reply event");
        assert_eq!(reply["live"], true, "{reply}");
        events
    }

    /// Sends SIGKILL (on Unix) without waiting.
    fn kill(&mut self) {
        self.child.start_kill().unwrap();
    }

    async fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        within(REQUEST_TIMEOUT, "the killed server to exit", self.child.wait()).await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if let Some(stdout) = self.stdout.take() {
            stdout.abort();
        }
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- {} ---\n{log}", self.log.display());
        }
    }
}

/// The `data:` events of a server-sent event stream, each with the time its last byte
/// arrived.
struct Events {
    body: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: Vec<u8>,
    last_read: Instant,
}

impl Events {
    /// The next event, or `None` once the stream has ended or the connection broke.
    /// Cancel-safe: nothing is consumed until a whole event is returned.
    async fn next_event(&mut self) -> Option<(Instant, Value)> {
        loop {
            while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let frame = String::from_utf8(frame).unwrap();
                let data: String = frame.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
                if !data.is_empty() {
                    return Some((self.last_read, serde_json::from_str(&data).unwrap()));
                }
            }
            match within(EVENT_TIMEOUT, "the next server-sent event", self.body.next()).await {
                Some(Ok(bytes)) => {
                    self.last_read = Instant::now();
                    self.buffer.extend_from_slice(&bytes);
                }
                Some(Err(_)) | None => return None,
            }
        }
    }
}
