//! Crash recovery on a real process: `colloquy serve` is killed with SIGKILL while a reply
//! streams, then started again on the same data folder. The reply must come back
//! `paused`/`interrupted` holding the text streamed up to the last checkpoint before the
//! kill (nothing invented, at most ~500 ms lost); Continue must resume it from that text,
//! and the topic must take a new message.

#[path = "support/server.rs"]
mod server;

use std::time::Duration;

use serde_json::{Value, json};
use server::Server;
use testkit::{MockConfig, MockServer, Script};
use tokio::time::{Instant, sleep_until};

/// The stream manager's promise: output is committed within this long of reaching it,
/// the commit included (`StreamConfig::max_unsaved`).
const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(500);
/// Slack for the test itself on a loaded machine: the signal is sent, and the kill time
/// taken, by a test process competing for the same cores.
const WRITE_TOLERANCE: Duration = Duration::from_millis(100);
/// How long the reply streams before the kill: several checkpoints' worth, plus a random
/// part of one interval (see `kill_phase`).
const STREAM_BEFORE_KILL: Duration = Duration::from_secs(2);
/// Delay between the mock's chunks; with `REPLY_CHUNKS` the reply would take ~12 s.
const TOKEN_DELAY: Duration = Duration::from_millis(10);
const REPLY_CHUNKS: usize = 1200;

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
        let deadline = kill_deadline.unwrap_or_else(|| Instant::now() + server::EVENT_TIMEOUT);
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
    // Output is committed within 500 ms of being produced, so up to 500 ms of it (plus the
    // test's own slack, see WRITE_TOLERANCE) may be lost; anything the client had before
    // that must be on disk.
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

    // Continue picks the interrupted reply up after the text it kept: the model is shown
    // that text as its own last message, and the same row grows and ends as a success.
    let requests_before = mock.requests().len();
    mock.push_script(Script::text(["<continued>"]));
    let reply_id = reply["message"]["id"].clone();
    let events =
        second.stream_op(&client, "stream_continue", json!({ "topicId": topic_id, "messageId": reply_id })).await;
    let (text, terminal) = read_reply(events).await;
    assert_eq!(terminal["status"], "success", "{terminal}");
    assert_eq!(text, "<continued>", "only the continuation streams");
    let requests = mock.requests();
    assert_eq!(requests.len(), requests_before + 1, "one request continues the reply");
    let prompt = requests.last().unwrap().body["messages"].as_array().unwrap().clone();
    let last = prompt.last().unwrap();
    assert_eq!(last["role"], "assistant", "the kept text is the model's own last message: {last}");
    assert!(
        last["content"].to_string().contains(stored.trim_end()),
        "the model sees the text kept before the crash: {last}"
    );
    let rows = second.call(&client, "messages_list", json!({ "topicId": topic_id })).await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "Continue grows the same reply: {rows:#?}");
    assert_eq!(rows[1]["message"]["id"], reply_id);
    assert_eq!(rows[1]["status"], "success", "{:#}", rows[1]);
    assert_eq!(message_text(&rows[1]["message"]), format!("{stored}<continued>"));

    // The topic is usable after the restart: a new message streams to success.
    mock.push_script(Script::text(["Back ", "again."]));
    let events = second.stream(&client, json!({ "topicId": topic_id, "text": "still there?" })).await;
    let (text, terminal) = read_reply(events).await;
    assert_eq!(terminal["status"], "success", "{terminal}");
    assert_eq!(terminal["isTopicDone"], true);
    assert_eq!(text, "Back again.");
    let rows = second.call(&client, "messages_list", json!({ "topicId": topic_id })).await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert_eq!(message_text(&rows[1]["message"]), format!("{stored}<continued>"));
    assert_eq!(rows[3]["status"], "success");
    assert_eq!(message_text(&rows[3]["message"]), "Back again.");
}

/// Reads a reply stream to its end: the text deltas joined, and the terminal event.
async fn read_reply(mut events: server::Events) -> (String, Value) {
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
    (text, terminal)
}

/// A random offset within one checkpoint interval. Checkpoints follow the stream's steady
/// pace, so a fixed kill time would always land at the same point between two of them
/// (right after one, losing almost nothing); this spreads runs over the whole interval,
/// including just before a checkpoint, where the most is lost. The offset is
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
