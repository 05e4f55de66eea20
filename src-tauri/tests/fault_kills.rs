//! The fault suite's crash part: `colloquy serve` is killed with SIGKILL at seeded-random
//! points of a tool-calling, approval-waiting, two-model turn, and started again on the
//! same data folder each time. After every kill:
//!
//! - the database passes `PRAGMA integrity_check` (read before the restart touches it);
//! - no reply is left `pending` or `streaming`;
//! - no tool call ran twice: each edit the model asked for appends one `I` to a counter
//!   file, so the file holds no more `I`s than the ledger has calls that were let run;
//! - a reply waiting for approval still has its question open, and answering it resumes
//!   the reply to its end;
//! - each stored reply is the scripted text's beginning and agrees with what the client
//!   received over SSE before the kill (one is a prefix of the other: a checkpoint can
//!   commit a chunk a moment before the SSE writer flushes it).
//!
//! The kill times are drawn from a seed printed at the start; `COLLOQUY_FAULT_SEED=<n>`
//! repeats a run, `COLLOQUY_FAULT_KILLS=<n>` kills more (or fewer) times than 20.

#[path = "support/server.rs"]
mod server;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use server::{Events, Server};
use testkit::{MockConfig, MockServer, Script, ScriptToolCall};
use tokio::time::{Instant, sleep, timeout};

const KILLS: usize = 20;
const TOKEN_DELAY: Duration = Duration::from_millis(15);
/// Words per step: each step of a reply streams for about 0.3 s.
const WORDS: usize = 20;
const MODELS: [&str; 2] = ["m1", "m2"];
/// How long the user looks at the questions before approving: the span in which a kill
/// finds replies waiting.
const THINK: Duration = Duration::from_millis(400);
/// How long a killed run's client may keep reading bytes already on their way.
const DRAIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_of_a_tool_calling_two_model_turn_loses_nothing_stored() {
    run_kills(Known::default()).await;
}

/// Recovery gaps this suite found, each counted in the last line the test prints. All are
/// closed now and the test requires them closed; a `true` here tolerates one (for looking
/// at a regression's other effects).
#[derive(Clone, Copy, Default)]
struct Known {
    /// Defect 17: a recovered reply keeps a part in state `streaming`.
    parts_may_stream: bool,
    /// A reply whose every approval was answered, killed before it resumed, still says
    /// it waits for approval; only Retry gets it going again.
    answered_may_wait: bool,
    /// A kill between an approval's write and its reply's final write leaves the approval
    /// pending while the reply comes back `paused/interrupted`: answering it resumes nothing.
    orphans_may_stay: bool,
}

/// What a reply says in its first step (before its tool calls) and after them.
fn first_step_text() -> String {
    (0..WORDS).map(|i| format!("t{i:02} ")).collect()
}

fn second_step_text() -> String {
    (0..WORDS).map(|i| format!("f{i:02} ")).collect()
}

/// Step one: text, then a read (runs by default) and an edit (asks first) of `counter`.
fn tool_step(counter: &str) -> Script {
    let edit = json!({ "path": counter, "old_text": "count: ", "new_text": "count: I" });
    Script {
        chunks: Some((0..WORDS).map(|i| format!("t{i:02} ")).collect()),
        tool_calls: vec![
            ScriptToolCall {
                name: "read_file".into(),
                arguments: json!({ "path": "notes.txt" }).to_string(),
                id: None,
            },
            ScriptToolCall { name: "edit_file".into(), arguments: edit.to_string(), id: None },
        ],
        ..Script::default()
    }
}

fn final_step() -> Script {
    Script { chunks: Some((0..WORDS).map(|i| format!("f{i:02} ")).collect()), ..Script::default() }
}

struct Rig {
    root: tempfile::TempDir,
    mock: MockServer,
    client: reqwest::Client,
    provider_id: Value,
    workspace: PathBuf,
}

impl Rig {
    fn database(&self) -> PathBuf {
        self.root.path().join("data").join("colloquy.db")
    }

    fn counter(&self, round: usize) -> (String, PathBuf) {
        let name = format!("counter-{round}.txt");
        let path = self.workspace.join(&name);
        (name, path)
    }

    /// A topic working in the workspace, with its counter file and the mock's scripts
    /// for one turn of both models.
    async fn new_round(&self, server: &Server, round: usize) -> Value {
        let (name, path) = self.counter(round);
        std::fs::write(&path, "count: ").unwrap();
        self.mock.reset();
        for _ in MODELS {
            self.mock.push_script(tool_step(&name));
        }
        for _ in MODELS {
            self.mock.push_script(final_step());
        }
        let topic = server.call(&self.client, "topic_create", json!({})).await["id"].clone();
        server
            .call(&self.client, "topic_update", json!({ "id": topic, "workspace": self.workspace.to_str().unwrap() }))
            .await;
        topic
    }

    fn open_request(&self, topic: &Value) -> Value {
        let models: Vec<Value> = MODELS.iter().map(|m| json!({ "providerId": self.provider_id, "model": m })).collect();
        json!({ "topicId": topic, "text": "edit the counter", "models": models })
    }
}

/// What the client saw, per reply (message id): the text it can reconstruct, and how
/// each execution ended.
#[derive(Default, Debug)]
struct Seen {
    text: HashMap<String, String>,
    terminals: Vec<String>,
    /// When both replies had asked for approval.
    asked_at: Option<Instant>,
    /// The whole turn, approvals answered, streamed to its end before the kill.
    completed: bool,
}

/// Reads a stream to its end (or the connection's), folding what arrives into `seen`.
/// True when the topic was done.
async fn follow(mut events: Events, seen: &Mutex<Seen>) -> bool {
    while let Some((_, event)) = events.next_event().await {
        let mut seen = seen.lock().unwrap();
        match event["kind"].as_str() {
            Some("snapshot") => {
                let id = event["messageId"].as_str().unwrap().to_owned();
                seen.text.insert(id, message_text(&event["message"]));
            }
            Some("chunk") if event["chunk"]["type"] == "text-delta" => {
                let id = event["messageId"].as_str().unwrap().to_owned();
                seen.text.entry(id).or_default().push_str(event["chunk"]["delta"].as_str().unwrap());
            }
            Some("terminal") => {
                seen.terminals.push(event["status"].as_str().unwrap_or("?").to_owned());
                if event["isTopicDone"] == true {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The user's side of the turn: open it, wait for both replies to ask, approve every
/// question, follow the resumed replies to their end. Stops quietly when the server dies.
async fn drive(server: Arc<Server>, client: reqwest::Client, open: Value, seen: Arc<Mutex<Seen>>) {
    let topic = open["topicId"].clone();
    let Ok((_, events)) = server.try_stream_op(&client, "stream_open", open).await else { return };
    if !follow(events, &seen).await {
        return;
    }
    seen.lock().unwrap().asked_at = Some(Instant::now());
    sleep(THINK).await;
    if approve_all(&server, &client, &topic).await.is_err() {
        return;
    }
    let Ok((_, events)) = server.try_stream_op(&client, "stream_attach", json!({ "topicId": topic })).await else {
        return;
    };
    if follow(events, &seen).await {
        seen.lock().unwrap().completed = true;
    }
}

/// Approves the topic's pending questions; how many there were.
async fn approve_all(server: &Server, client: &reqwest::Client, topic: &Value) -> Result<usize, String> {
    let pending = server.try_call(client, "approvals_list", json!({ "topicId": topic })).await?;
    let pending = pending.as_array().cloned().unwrap_or_default();
    for approval in &pending {
        server
            .try_call(client, "tool_approval_respond", json!({ "approvalId": approval["id"], "decision": "approve" }))
            .await?;
    }
    Ok(pending.len())
}

/// A tool call as the ledger has it.
#[derive(Debug)]
struct LedgerRow {
    tool: String,
    state: String,
}

/// Reads the killed server's database before anything opens it again: its integrity,
/// and the topic's tool-call ledger.
async fn inspect_database(path: &Path, topic: &Value) -> (String, Vec<LedgerRow>) {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).read_only(true);
    let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect_with(options).await.unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT tool_name, state FROM tool_calls WHERE topic_id = ?")
        .bind(topic.as_str().unwrap())
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    (integrity, rows.into_iter().map(|(tool, state)| LedgerRow { tool, state }).collect())
}

fn ledger_of(rows: &[LedgerRow], tool: &str, states: &[&str]) -> usize {
    rows.iter().filter(|r| r.tool == tool && states.contains(&r.state.as_str())).count()
}

/// Times the counter file was edited.
fn edits(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().matches('I').count()
}

async fn run_kills(known: Known) {
    let kills = std::env::var("COLLOQUY_FAULT_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(KILLS);
    let seed = std::env::var("COLLOQUY_FAULT_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
    });
    eprintln!("fault_kills: seed {seed} (COLLOQUY_FAULT_SEED={seed} repeats this run), {kills} kills");
    let mut rng = fastrand::Rng::with_seed(seed);
    let started = Instant::now();

    let root = tempfile::tempdir().unwrap();
    let ui = root.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Colloquy</title>").unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("notes.txt"), "the notes").unwrap();
    let mock = MockServer::start(MockConfig {
        port: 0,
        token_delay: TOKEN_DELAY,
        api_key: None,
        models: MODELS.iter().map(|m| (*m).to_owned()).collect(),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut server = Arc::new(Server::start(root.path(), "start-0").await);
    let provider = server
        .call(
            &client,
            "provider_create",
            json!({ "name": "Mock", "baseUrl": mock.base_url(), "models": MODELS, "defaultModel": MODELS[0] }),
        )
        .await;
    let rig = Rig { root, mock, client, provider_id: provider["id"].clone(), workspace };
    let full_reply = format!("{}{}", first_step_text(), second_step_text());

    // A rehearsal without a kill: the scenario does what it should, and its length is
    // the span the kills are spread over.
    let topic = rig.new_round(&server, 0).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let rehearsal = Instant::now();
    drive(server.clone(), rig.client.clone(), rig.open_request(&topic), seen.clone()).await;
    let span = rehearsal.elapsed();
    let asked = {
        let seen = seen.lock().unwrap();
        assert!(seen.completed, "the rehearsal turn streamed to its end: {seen:?}");
        assert_eq!(seen.terminals.iter().filter(|s| *s == "awaiting_approval").count(), 2, "{seen:?}");
        assert_eq!(seen.terminals.iter().filter(|s| *s == "success").count(), 2, "{seen:?}");
        assert_eq!(seen.text.len(), MODELS.len(), "one reply per model: {seen:?}");
        for text in seen.text.values() {
            assert_eq!(text, &full_reply);
        }
        seen.asked_at.unwrap() - rehearsal
    };
    assert_eq!(edits(&rig.counter(0).1), 2, "each model's approved edit ran once");
    eprintln!("fault_kills: the turn takes {} ms without a kill", span.as_millis());

    // The kills are spread evenly over the turn and a little after it: each falls at a
    // random point of its own slice of that span, the slices taken in random order.
    let mut slices: Vec<usize> = (0..kills).collect();
    rng.shuffle(&mut slices);
    let slice = span.mul_f64(1.1) / u32::try_from(kills).unwrap();
    eprintln!("fault_kills: both replies ask for approval {} ms in", asked.as_millis());

    let mut tally = Tally::default();
    for round in 1..=kills {
        let topic = rig.new_round(&server, round).await;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let driver = tokio::spawn(drive(server.clone(), rig.client.clone(), rig.open_request(&topic), seen.clone()));
        let kill_after = slice.mul_f64(slices[round - 1] as f64 + rng.f64());
        sleep(kill_after).await;
        server.sigkill();
        timeout(DRAIN, driver).await.expect("the client stops once the server is gone").unwrap();
        let only = Arc::get_mut(&mut server).expect("the driver let go of the server");
        let exit = only.wait_for_exit().await;
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(exit.signal(), Some(9), "round {round}: the server died of SIGKILL: {exit:?}");
        }

        let (integrity, ledger) = inspect_database(&rig.database(), &topic).await;
        assert_eq!(integrity, "ok", "round {round}: the database survived the kill intact");
        let (_, counter) = rig.counter(round);
        let ran = edits(&counter);
        let let_run = ledger_of(&ledger, "edit_file", &["running", "done", "error"]);
        assert!(
            ran <= let_run,
            "round {round}: the counter was edited {ran} times for {let_run} calls let run: {ledger:?}"
        );

        server = Arc::new(Server::start(rig.root.path(), &format!("start-{round}")).await);
        rig.mock.reset();
        for _ in MODELS {
            rig.mock.push_script(final_step());
        }
        let rows = server.call(&rig.client, "messages_list", json!({ "topicId": topic })).await;
        let replies: Vec<Value> =
            rows.as_array().unwrap().iter().filter(|r| r["message"]["role"] == "assistant").cloned().collect();
        let pending = server.call(&rig.client, "approvals_list", json!({ "topicId": topic })).await;
        let pending = pending.as_array().unwrap().clone();
        let waiting: Vec<&str> = replies
            .iter()
            .filter(|r| r["status"] == "paused" && r["statusReason"] == "awaiting_approval")
            .map(|r| r["message"]["id"].as_str().unwrap())
            .collect();
        let (answerable, orphans): (Vec<Value>, Vec<Value>) =
            pending.iter().cloned().partition(|a| waiting.iter().any(|id| a["messageId"] == *id));
        if !orphans.is_empty() {
            tally.orphan_questions += orphans.len();
            assert!(
                known.orphans_may_stay,
                "round {round}: approvals are pending for replies that are not waiting for them (answering them \
                 resumes nothing): {orphans:#?}\nreplies: {replies:#?}"
            );
        }
        // The client has stopped: what it saw is final.
        let received = std::mem::take(&mut *seen.lock().unwrap());
        for reply in &replies {
            let id = reply["message"]["id"].as_str().unwrap();
            let status = reply["status"].as_str().unwrap();
            let reason = reply["statusReason"].as_str().unwrap_or("");
            assert!(
                !matches!(status, "pending" | "streaming"),
                "round {round}: a reply is left {status} after the restart: {reply:#}"
            );
            let parts = reply["message"]["parts"].as_array().unwrap();
            if parts.iter().any(|part| part["state"] == "streaming") {
                tally.parts_streaming += 1;
                assert!(known.parts_may_stream, "round {round}: a recovered part still streams: {reply:#}");
            }
            if status == "paused" && reason == "awaiting_approval" && !pending.iter().any(|a| a["messageId"] == id) {
                tally.waiting_unanswerable += 1;
                assert!(
                    known.answered_may_wait,
                    "round {round}: the reply waits for an approval nobody can give: {reply:#}\npending: {pending:#?}"
                );
            }
            let stored = message_text(&reply["message"]);
            assert!(
                full_reply.starts_with(&stored),
                "round {round}: the stored reply is the script's beginning, nothing invented or repeated: {stored:?}"
            );
            let got = received.text.get(id).map(String::as_str).unwrap_or("");
            assert!(
                got.starts_with(&stored) || stored.starts_with(got),
                "round {round}: stored and received text disagree:\nstored:   {stored:?}\nreceived: {got:?}"
            );
            tally.note(status, reason, stored.len(), got.len());
        }
        let completed = received.completed;

        // A question left open survives the crash: answering it resumes the reply.
        if !answerable.is_empty() {
            tally.resumed += 1;
            for approval in &answerable {
                server
                    .call(
                        &rig.client,
                        "tool_approval_respond",
                        json!({ "approvalId": approval["id"], "decision": "approve" }),
                    )
                    .await;
            }
            let resumed = Mutex::new(Seen::default());
            let (attached, events_after) =
                server.try_stream_op(&rig.client, "stream_attach", json!({ "topicId": topic })).await.unwrap();
            let ended = follow(events_after, &resumed).await;
            if !ended {
                let rows = server.call(&rig.client, "messages_list", json!({ "topicId": topic })).await;
                panic!(
                    "round {round}: the resumed replies ran to their end; attach {attached}, saw {:?}\npending before: \
                     {pending:#?}\nrows now: {rows:#}",
                    resumed.lock().unwrap()
                );
            }
            let rows = server.call(&rig.client, "messages_list", json!({ "topicId": topic })).await;
            for row in rows.as_array().unwrap().iter().filter(|r| r["message"]["role"] == "assistant") {
                let was_waiting = answerable.iter().any(|a| a["messageId"] == row["message"]["id"]);
                if was_waiting {
                    assert_eq!(row["status"], "success", "round {round}: the answered reply finished: {row:#}");
                    assert!(
                        message_text(&row["message"]).ends_with(&second_step_text()),
                        "round {round}: the resumed reply went on after its tool calls: {row:#}"
                    );
                }
            }
        }
        // Read beside the live server: a WAL reader does not disturb it.
        let (integrity, ledger) = inspect_database(&rig.database(), &topic).await;
        assert_eq!(integrity, "ok");
        let ran = edits(&counter);
        let (done, cut_off) =
            (ledger_of(&ledger, "edit_file", &["done"]), ledger_of(&ledger, "edit_file", &["running", "error"]));
        assert!(
            done <= ran && ran <= done + cut_off,
            "round {round}: every edit ran at most once: counter {ran}, done {done}, cut off {cut_off}: {ledger:?}"
        );
        tally.edits += ran;
        tally.completed += usize::from(completed);
        eprintln!(
            "fault_kills: round {round}: killed {} ms in{}; counter {ran}",
            kill_after.as_millis(),
            if completed { " (after the turn ended)" } else { "" }
        );
    }
    server.sigkill();
    eprintln!(
        "fault_kills: {kills} kills survived in {:.1} s (seed {seed}); replies after restart: {}; {} topics' waiting \
         replies resumed; {} edits ran once each; stored ran ahead of the client {} times, by at most {} bytes; \
         {} kills after the turn had ended; known gaps seen: {} replies with a part left streaming (defect 17), \
         {} replies waiting with no open question, {} approvals pending for replies not waiting",
        started.elapsed().as_secs_f64(),
        tally.statuses(),
        tally.resumed,
        tally.edits,
        tally.ahead,
        tally.most_ahead,
        tally.completed,
        tally.parts_streaming,
        tally.waiting_unanswerable,
        tally.orphan_questions,
    );
}

#[derive(Default)]
struct Tally {
    statuses: HashMap<String, usize>,
    resumed: usize,
    edits: usize,
    ahead: usize,
    most_ahead: usize,
    completed: usize,
    parts_streaming: usize,
    waiting_unanswerable: usize,
    orphan_questions: usize,
}

impl Tally {
    fn note(&mut self, status: &str, reason: &str, stored: usize, received: usize) {
        *self.statuses.entry(format!("{status}/{reason}")).or_default() += 1;
        if stored > received {
            self.ahead += 1;
            self.most_ahead = self.most_ahead.max(stored - received);
        }
    }

    fn statuses(&self) -> String {
        let mut statuses: Vec<_> = self.statuses.iter().map(|(s, n)| format!("{n} {s}")).collect();
        statuses.sort();
        statuses.join(", ")
    }
}

/// The text parts of a `UiMessage`, joined.
fn message_text(message: &Value) -> String {
    let parts = message["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
    parts.iter().filter(|part| part["type"] == "text").filter_map(|part| part["text"].as_str()).collect()
}
