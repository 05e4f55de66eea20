//! Agent sessions with the real Claude Code CLI (installed by `cargo xtask setup` into
//! tests/agent-cli) talking to the testkit's Anthropic Messages mock, through the engine.

use std::os::unix::fs::PermissionsExt;

use protocol::api::AgentSession;
use protocol::tool::{Approval, ApprovalState};

use super::*;

fn claude() -> std::path::PathBuf {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent-cli/node_modules/.bin/claude");
    assert!(path.exists(), "{} is missing: run `cargo xtask setup`", path.display());
    path
}

struct Agent {
    f: Fixture,
    server: MockServer,
    session: AgentSession,
    workspace: tempfile::TempDir,
    config: EngineConfig,
    _home: tempfile::TempDir,
}

fn agent_config(dir: &std::path::Path, home: &std::path::Path, program: std::path::PathBuf) -> EngineConfig {
    let mut config = EngineConfig::new(dir.to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    config.claude = ::sessions::ClaudeCodeConfig {
        program,
        env: vec![
            ("HOME".into(), home.to_string_lossy().into_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ],
        start_timeout: Duration::from_secs(60),
    };
    config
}

async fn agent_with(program: std::path::PathBuf, idle: Duration) -> Agent {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut config = agent_config(dir.path(), home.path(), program);
    config.agent_idle_timeout = idle;
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: dir };
    let server = mock(Some("sk-agent")).await;
    let provider: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Mock Anthropic", "format": "anthropic", "baseUrl": format!("{}", server.base_url()), "apiKey": "sk-agent", "defaultModel": "claude-sonnet-4-5" }),
        )
        .await;
    let workspace = tempfile::tempdir().unwrap();
    let session: AgentSession = f
        .call(
            "agent_session_create",
            json!({ "workspace": workspace.path(), "providerId": provider.id, "model": "claude-sonnet-4-5" }),
        )
        .await;
    Agent { f, server, session, workspace, config, _home: home }
}

async fn agent() -> Agent {
    agent_with(claude(), Duration::from_secs(300)).await
}

impl Agent {
    fn topic(&self) -> Topic {
        Topic {
            id: self.session.topic_id.clone(),
            title: String::new(),
            model: None,
            workspace: None,
            assistant_id: None,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    async fn send(&self, text: &str) -> Vec<StreamMessage> {
        self.f.send(&self.topic(), text).await
    }

    /// Opens a turn without waiting for it.
    async fn start(&self, text: &str) -> Subscription {
        let (listener, rx) = self.f.engine.listener(ListenerId::unique(), &self.session.topic_id);
        self.f.engine.stream_open(open_request(self.session.topic_id.clone(), text), listener).await.unwrap();
        rx
    }

    async fn messages(&self) -> Vec<StoredMessage> {
        self.f.messages(&self.topic()).await
    }

    /// The main-loop requests the mock received (Claude Code's own model calls).
    fn model_calls(&self) -> Vec<Value> {
        self.server.requests().into_iter().filter(|r| r.path.starts_with("/v1/messages")).map(|r| r.body).collect()
    }

    async fn pending(&self) -> Vec<Approval> {
        for _ in 0..900 {
            let pending: Vec<Approval> =
                self.f.call("approvals_list", json!({ "topicId": self.session.topic_id })).await;
            if !pending.is_empty() {
                return pending;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no approval was asked for");
    }
}

fn text_of_request(body: &Value) -> String {
    body.to_string()
}

impl Agent {
    /// Waits (generously: real processes on a loaded machine) until the rows are `done`.
    async fn rows_until(&self, what: &str, done: impl Fn(&[StoredMessage]) -> bool) -> Vec<StoredMessage> {
        for _ in 0..1200 {
            let rows = self.messages().await;
            if done(&rows) {
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out waiting for {what}: {:#?}", self.messages().await);
    }

    async fn approvals(&self) -> Vec<Approval> {
        self.f.call("approvals_list", json!({ "topicId": self.session.topic_id, "all": true })).await
    }

    async fn answer(&self, approval: &Approval, answer: Value) -> Approval {
        let mut request = json!({ "approvalId": approval.id });
        request.as_object_mut().unwrap().extend(answer.as_object().unwrap().clone());
        self.f.call("tool_approval_respond", request).await
    }

    async fn inbox(&self) -> Vec<protocol::api::InboxItem> {
        self.f.call("inbox_list", json!({ "topicId": self.session.topic_id })).await
    }
}

/// A `claude` that notes each start in `starts`, then runs the real CLI: how many
/// processes a session used.
fn counting_claude(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let starts = dir.join("starts");
    let program = dir.join("claude");
    let script = format!("#!/bin/sh\necho $$ >> '{}'\nexec '{}' \"$@\"\n", starts.display(), claude().display());
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    (program, starts)
}

fn starts(file: &std::path::Path) -> usize {
    std::fs::read_to_string(file).map(|s| s.lines().count()).unwrap_or(0)
}

/// Waits until every process `counting_claude` started has exited.
async fn all_exited(file: &std::path::Path) {
    let pids: Vec<String> = std::fs::read_to_string(file).unwrap().lines().map(str::to_owned).collect();
    let running = |pid: &String| {
        // A process that exited but was not reaped yet is a zombie (`Z`).
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with(['Z', 'X'])))
    };
    for _ in 0..1200 {
        if !pids.iter().any(running) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("Claude Code is still running: {pids:?}");
}

/// One of the small fake `claude` programs in tests/agent-cli/fakes.
fn fake_claude(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent-cli/fakes").join(name)
}

/// Puts `target` where the session's `claude` is (the user fixing their installation).
fn install(program: &std::path::Path, target: &std::path::Path) {
    let _ = std::fs::remove_file(program);
    std::os::unix::fs::symlink(target, program).unwrap();
}

fn data_states(message: &StoredMessage, kind: &str) -> Vec<Value> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::Data(d) if d.kind == kind => Some(d.data["state"].clone()),
            _ => None,
        })
        .collect()
}

fn write(path: &std::path::Path, content: &str) -> Script {
    Script::text(["I will write the file."])
        .with_tool_call("Write", json!({ "file_path": path, "content": content }).to_string())
}

#[tokio::test]
async fn a_text_turn_streams_and_keeps_the_resume_token() {
    let a = agent().await;
    a.server.push_script(Script::text(["Hello from ", "the mock agent."]));
    let stream = a.send("Say hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let rows = a.messages().await;
    assert_eq!(rows[1].message.text(), "Hello from the mock agent.");
    let token = rows[1].message.metadata.as_ref().unwrap()["resumeToken"].as_str().unwrap().to_owned();
    assert!(!token.is_empty());
    let sessions: Vec<AgentSession> = a.f.call("agent_sessions_list", json!({})).await;
    assert!(sessions[0].resumable);
    assert_eq!(sessions[0].title, "Say hello");
    let topics: Vec<Topic> = a.f.call("topics_list", json!({})).await;
    assert!(topics.is_empty(), "sessions are not listed as chat topics");
    let calls = a.model_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        a.server.requests().iter().find(|r| r.path.starts_with("/v1/messages")).unwrap().header("x-api-key"),
        Some("sk-agent")
    );
}

#[tokio::test]
async fn a_write_asks_through_an_approval_card_and_then_happens() {
    let a = agent().await;
    let file = a.workspace.path().join("notes.txt");
    a.server.push_script(write(&file, "from the agent\n"));
    a.server.push_script(Script::text(["Done: notes.txt is written."]));
    let mut rx = a.start("write notes").await;
    let approval = a.pending().await.remove(0);
    assert_eq!((approval.tool_name.as_str(), approval.state), ("Write", ApprovalState::Pending));
    assert!(!file.exists(), "nothing is written before the answer");
    let _: Approval =
        a.f.call("tool_approval_respond", json!({ "approvalId": approval.id, "decision": "approve" })).await;
    let stream = drain(&mut rx).await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the agent\n");
    let rows = a.messages().await;
    assert!(rows[1].message.text().ends_with("Done: notes.txt is written."));
    let states: Vec<Value> = rows[1]
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { state, .. } => serde_json::to_value(state).ok(),
            _ => None,
        })
        .collect();
    assert_eq!(states, vec![json!("output-available")]);
}

#[tokio::test]
async fn a_denial_reaches_the_agent_with_its_reason() {
    let a = agent().await;
    let file = a.workspace.path().join("no.txt");
    a.server.push_script(write(&file, "x"));
    a.server.push_script(Script::text(["Understood, not writing."]));
    let mut rx = a.start("write no.txt").await;
    let approval = a.pending().await.remove(0);
    let _: Approval =
        a.f.call(
            "tool_approval_respond",
            json!({ "approvalId": approval.id, "decision": "deny", "reason": "not this file" }),
        )
        .await;
    drain(&mut rx).await;
    assert!(!file.exists());
    let calls = a.model_calls();
    let second = text_of_request(&calls[1]);
    assert!(second.contains("not this file") && second.contains("is_error"), "the agent saw the denial: {second}");
    let rows = a.messages().await;
    assert!(
        rows[1]
            .message
            .parts
            .iter()
            .any(|p| matches!(p, UiPart::DynamicTool { state: protocol::message::ToolState::OutputDenied, .. }))
    );
}

#[tokio::test]
async fn a_steer_goes_in_at_the_next_tool_boundary_and_the_transcript_reads_in_order() {
    let a = agent().await;
    let _: AgentSession =
        a.f.call("agent_session_update", json!({ "id": a.session.id, "permissionMode": "acceptEdits" })).await;
    let file = a.workspace.path().join("steer.txt");
    a.server.push_script(
        Script::text(["Working", " on", " it", "."])
            .with_tool_call("Write", json!({ "file_path": file, "content": "s" }).to_string())
            .with_token_delay(Duration::from_millis(300)),
    );
    a.server.push_script(Script::text(["Switched to bananas as asked."]));
    let _rx = a.start("do the task").await;
    let _: protocol::api::InboxItem = a
        .f
        .call("inbox_add", json!({ "topicId": a.session.topic_id, "text": "also mention bananas", "mode": "steer" }))
        .await;
    let rows = wait_for(&a.f, &a.topic(), "the steered turn goes on", |rows| {
        rows.len() == 4 && rows[3].status == MessageStatus::Success
    })
    .await;
    assert_eq!(
        (rows[1].status, rows[1].status_reason.as_deref()),
        (MessageStatus::Success, Some(protocol::StatusReason::Steered.as_str()))
    );
    assert!(rows[1].message.text().starts_with("Working on it."));
    assert_eq!(data_states(&rows[1], "data-steer"), [json!("delivered")], "the reply says where the message went in");
    assert_eq!(rows[2].message.text(), "also mention bananas");
    assert_eq!(rows[3].message.text(), "Switched to bananas as asked.");
    assert!(file.exists(), "the step's tool ran before the split");
    let calls = a.model_calls();
    assert_eq!(calls.len(), 2, "one agent turn: the message went in, not a second turn");
    assert!(text_of_request(&calls[1]).contains("also mention bananas"));
    let inbox: Vec<protocol::api::InboxItem> = a.f.call("inbox_list", json!({ "topicId": a.session.topic_id })).await;
    assert!(inbox.is_empty());
}

#[tokio::test]
async fn stop_ends_the_turn_and_the_session_goes_on() {
    let a = agent().await;
    a.server
        .push_script(Script::text((0..40).map(|i| format!("word{i} "))).with_token_delay(Duration::from_millis(150)));
    let mut rx = a.start("talk a lot").await;
    a.rows_until("the reply to stream", |rows| rows.len() == 2 && rows[1].message.text().starts_with("word0")).await;
    a.f.engine.stream_abort(&a.session.topic_id).await.unwrap();
    let stream = drain(&mut rx).await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Paused);
    let rows = a.messages().await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("user_stop")));
    assert!(rows[1].message.text().starts_with("word0"), "the partial text stays");
    a.server.push_script(Script::text(["Back."]));
    assert_eq!(terminal_status(&a.send("again").await), TerminalStatus::Success);
}

#[tokio::test]
async fn after_a_restart_the_session_resumes_with_its_token() {
    let a = agent().await;
    a.server.push_script(Script::text(["First answer."]));
    a.send("remember the word PAPAYA").await;
    a.f.engine.shutdown().await;
    let engine = Engine::open(a.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    a.server.push_script(Script::text(["You said PAPAYA."]));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &a.session.topic_id);
    f.engine.stream_open(open_request(a.session.topic_id.clone(), "what word?"), listener).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let calls = a.model_calls();
    assert!(text_of_request(calls.last().unwrap()).contains("PAPAYA"), "the agent's own session came back");
    f.engine.shutdown().await;
}

#[tokio::test]
async fn two_turns_within_the_idle_window_share_one_claude_process() {
    let place = tempfile::tempdir().unwrap();
    let (program, started) = counting_claude(place.path());
    let a = agent_with(program, Duration::from_secs(300)).await;
    a.server.push_script(Script::text(["One."]));
    assert_eq!(terminal_status(&a.send("the code word is FIG").await), TerminalStatus::Success);
    a.server.push_script(Script::text(["Two."]));
    assert_eq!(terminal_status(&a.send("and now?").await), TerminalStatus::Success);
    assert_eq!(starts(&started), 1, "the warm process took the second turn");
    let heads = a.server.requests().into_iter().filter(|r| r.method == "HEAD").count();
    assert_eq!(heads, 1, "Claude Code checked the API once, as it does at start");
    assert!(text_of_request(a.model_calls().last().unwrap()).contains("FIG"));
}

#[tokio::test]
async fn after_the_idle_timeout_the_next_turn_reconnects() {
    let place = tempfile::tempdir().unwrap();
    let (program, started) = counting_claude(place.path());
    let a = agent_with(program, Duration::from_millis(500)).await;
    a.server.push_script(Script::text(["One."]));
    a.send("the code word is KIWI").await;
    // The idle close is timed on a paused clock in crates/sessions; here the real process
    // has to be gone before the next turn.
    all_exited(&started).await;
    a.server.push_script(Script::text(["Two."]));
    assert_eq!(terminal_status(&a.send("and now?").await), TerminalStatus::Success);
    let calls = a.model_calls();
    assert!(text_of_request(calls.last().unwrap()).contains("KIWI"), "the reconnected agent resumed its session");
    assert_eq!(starts(&started), 2, "a second process started");
}

#[tokio::test]
async fn a_missing_cli_says_what_to_install_and_the_session_works_once_it_is_there() {
    let place = tempfile::tempdir().unwrap();
    let program = place.path().join("claude");
    let a = agent_with(program.clone(), Duration::from_secs(300)).await;
    let stream = a.send("hello?").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = a.messages().await;
    let error = error_part(&rows[1]).unwrap();
    assert_eq!(error.code.as_deref(), Some("agent_not_installed"));
    assert!(error.message.contains("npm install -g @anthropic-ai/claude-code"), "{}", error.message);
    std::os::unix::fs::symlink(claude(), &program).unwrap();
    a.server.push_script(Script::text(["Now I am here."]));
    assert_eq!(terminal_status(&a.send("hello again").await), TerminalStatus::Success);
}

#[tokio::test]
async fn a_failed_resume_is_shown_and_never_silently_replaced() {
    let a = agent().await;
    a.server.push_script(Script::text(["ok"]));
    a.send("first").await;
    a.f.engine.shutdown().await;
    // The agent's own record of the session is gone (another machine, a cleaned folder).
    let store = store::Store::open(&a.config.data_dir.join("colloquy.db")).await.unwrap();
    store.set_resume_token(&a.session.id, Some("0b5e7c1e-0000-4000-8000-000000000000")).await.unwrap();
    store.close().await;
    let engine = Engine::open(a.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let topic = a.topic();
    let stream = f.send(&topic, "second").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = f.messages(&topic).await;
    let error = error_part(rows.last().unwrap()).unwrap();
    assert_eq!(error.code.as_deref(), Some("resume_failed"));
    assert!(error.message.contains("could not resume"), "{}", error.message);
    let calls_before = a.model_calls().len();
    let reset: AgentSession = f.call("agent_session_reset", json!({ "id": a.session.id })).await;
    assert!(!reset.resumable);
    a.server.push_script(Script::text(["Fresh start."]));
    assert_eq!(terminal_status(&f.send(&topic, "third").await), TerminalStatus::Success);
    assert_eq!(a.model_calls().len(), calls_before + 1);
    f.engine.shutdown().await;
}

#[tokio::test]
async fn compaction_shows_as_a_marker() {
    let a = agent().await;
    for (question, answer) in [("talk", "A long answer."), ("more", "Another answer."), ("and more", "A third.")] {
        a.server.push_script(Script::text([answer]));
        a.send(question).await;
    }
    a.server.push_script(Script::text(["<analysis>x</analysis>\n<summary>We talked.</summary>"]));
    let stream = a.send("/compact").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let rows = a.messages().await;
    let marker = rows.last().unwrap().message.parts.iter().find_map(|p| match p {
        UiPart::Data(d) if d.kind == "data-compaction" => Some(d.data.clone()),
        _ => None,
    });
    assert_eq!(
        marker.as_ref().map(|m| m["state"].clone()),
        Some(json!("done")),
        "{:?}",
        rows.last().unwrap().message.parts
    );
}

#[tokio::test]
async fn bad_session_settings_are_refused_by_field() {
    let f = fixture().await;
    let err = f.engine.call("agent_session_create", json!({ "workspace": "/" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("workspace"));
    let dir = tempfile::tempdir().unwrap();
    let err = f
        .engine
        .call("agent_session_create", json!({ "workspace": dir.path(), "permissionMode": "yolo" }))
        .await
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("permissionMode"));
    let err =
        f.engine.call("agent_session_create", json!({ "workspace": dir.path(), "agent": "other" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("agent"));
    let server = mock(None).await;
    let openai = f.provider(&server, "").await;
    let err = f
        .engine
        .call("agent_session_create", json!({ "workspace": dir.path(), "providerId": openai.id }))
        .await
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("providerId"));
}

// ---- approvals: edited input, always-allow, and what happens while one waits ----------

#[tokio::test]
async fn an_approval_with_edited_input_runs_the_edited_call() {
    let a = agent().await;
    let file = a.workspace.path().join("edited.txt");
    a.server.push_script(write(&file, "the agent's text\n"));
    a.server.push_script(Script::text(["Written."]));
    let mut rx = a.start("write edited.txt").await;
    let approval = a.pending().await.remove(0);
    let edited = json!({ "file_path": file, "content": "the user's text\n" });
    let answered = a.answer(&approval, json!({ "decision": "approve", "updatedInput": edited })).await;
    assert_eq!(answered.input, edited);
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the user's text\n", "Claude Code ran the edited call");
    let calls = a.model_calls();
    assert!(text_of_request(&calls[1]).contains("edited.txt"), "the agent got the tool result");
}

#[tokio::test]
async fn always_allow_reaches_claude_code_and_the_next_write_runs_without_a_card() {
    let a = agent().await;
    let first = a.workspace.path().join("first.txt");
    let second = a.workspace.path().join("second.txt");
    a.server.push_script(write(&first, "1"));
    a.server.push_script(write(&second, "2"));
    a.server.push_script(Script::text(["Both written."]));
    let mut rx = a.start("write two files").await;
    let approval = a.pending().await.remove(0);
    a.answer(&approval, json!({ "decision": "approve", "scope": "topic" })).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "1");
    assert_eq!(std::fs::read_to_string(&second).unwrap(), "2", "the second write ran without asking");
    assert_eq!(a.approvals().await.len(), 1, "one card for both writes");
    // Had Claude Code asked again, the stored rule would have allowed it and the audit log
    // would say so: it did not ask, because it got the permission update.
    let audit: Vec<protocol::tool::AuditEntry> =
        a.f.call("tool_audit_list", json!({ "topicId": a.session.topic_id })).await;
    assert!(!audit.is_empty() && audit.iter().all(|e| e.tool_call_id == approval.tool_call_id), "{audit:?}");
    let rules: Vec<protocol::tool::PolicyRule> = a.f.call("tool_rules_list", json!({})).await;
    let topic_scope = protocol::tool::RuleScope::Topic { topic_id: a.session.topic_id.clone() };
    assert!(rules.iter().any(|r| r.tool == "Write" && r.scope == topic_scope), "{rules:?}");
}

#[tokio::test]
async fn stop_while_an_approval_waits_denies_it_and_the_session_goes_on() {
    let a = agent().await;
    let file = a.workspace.path().join("never.txt");
    a.server.push_script(write(&file, "x"));
    let mut rx = a.start("write never.txt").await;
    let approval = a.pending().await.remove(0);
    a.f.engine.stream_abort(&a.session.topic_id).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Paused);
    let rows = a.messages().await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("user_stop")));
    let answered = a.approvals().await.into_iter().find(|p| p.id == approval.id).unwrap();
    assert_eq!(answered.state, ApprovalState::Denied);
    let late =
        a.f.engine.call("tool_approval_respond", json!({ "approvalId": approval.id, "decision": "approve" })).await;
    let late: Approval = serde_json::from_value(late.unwrap()).unwrap();
    assert_eq!(late.state, ApprovalState::Denied, "a late answer returns the first one");
    assert!(!file.exists());
    a.server.push_script(Script::text(["Still here."]));
    assert_eq!(terminal_status(&a.send("are you there?").await), TerminalStatus::Success);
    assert!(!file.exists(), "the stopped call never ran");
}

#[tokio::test]
async fn interrupt_while_an_approval_waits_stops_the_reply_and_sends_the_new_message() {
    let a = agent().await;
    let file = a.workspace.path().join("never.txt");
    a.server.push_script(write(&file, "x"));
    let mut first = a.start("write never.txt").await;
    a.pending().await;
    a.server.push_script(Script::text(["Doing the other thing."]));
    let (listener, mut second) = a.f.engine.listener(ListenerId::unique(), &a.session.topic_id);
    a.f.engine
        .stream_interrupt(open_request(a.session.topic_id.clone(), "do the other thing"), listener)
        .await
        .unwrap();
    assert_eq!(terminal_status(&drain(&mut first).await), TerminalStatus::Paused);
    assert_eq!(terminal_status(&drain(&mut second).await), TerminalStatus::Success);
    let rows = a.messages().await;
    let texts: Vec<(String, MessageStatus)> = rows.iter().map(|r| (r.message.text(), r.status)).collect();
    assert_eq!(texts[1].1, MessageStatus::Paused);
    assert_eq!(texts[2], ("do the other thing".to_owned(), MessageStatus::Success));
    assert_eq!(texts[3], ("Doing the other thing.".to_owned(), MessageStatus::Success));
    let approvals = a.approvals().await;
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0].state, ApprovalState::Denied);
    assert!(!file.exists());
}

#[tokio::test]
async fn a_message_queued_while_an_approval_waits_runs_after_the_reply() {
    let a = agent().await;
    let file = a.workspace.path().join("queued.txt");
    a.server.push_script(write(&file, "q"));
    a.server.push_script(Script::text(["Written."]));
    let mut rx = a.start("write queued.txt").await;
    let approval = a.pending().await.remove(0);
    let _: protocol::api::InboxItem =
        a.f.call("inbox_add", json!({ "topicId": a.session.topic_id, "text": "what did you write?", "mode": "queue" }))
            .await;
    assert_eq!(a.inbox().await.len(), 1, "it waits for the reply");
    a.server.push_script(Script::text(["queued.txt, with a q."]));
    a.answer(&approval, json!({ "decision": "approve" })).await;
    drain(&mut rx).await;
    let rows = a
        .rows_until("the queued message's reply", |rows| rows.len() == 4 && rows[3].status == MessageStatus::Success)
        .await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[2].message.text(), "what did you write?");
    assert_eq!(rows[3].message.text(), "queued.txt, with a q.");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "q");
    assert!(a.inbox().await.is_empty());
}

// ---- steering: a message the turn never reached ---------------------------------------

#[tokio::test]
async fn a_steer_the_turn_never_reached_is_marked_and_runs_once_as_the_next_turn() {
    let a = agent().await;
    a.server.push_script(
        Script::text(["A", " slow", " answer", " without", " tools."]).with_token_delay(Duration::from_millis(300)),
    );
    a.server.push_script(Script::text(["Kiwis, then."]));
    let _rx = a.start("answer slowly").await;
    a.rows_until("the reply to stream", |rows| rows.len() == 2 && !rows[1].message.text().is_empty()).await;
    let _: protocol::api::InboxItem =
        a.f.call("inbox_add", json!({ "topicId": a.session.topic_id, "text": "also mention kiwis", "mode": "steer" }))
            .await;
    let rows =
        a.rows_until("the steer's own turn", |rows| rows.len() == 4 && rows[3].status == MessageStatus::Success).await;
    assert_eq!(rows[1].message.text(), "A slow answer without tools.");
    assert_eq!(rows[1].status_reason, None, "the first reply ended on its own");
    assert_eq!(data_states(&rows[1], "data-steer"), [json!("undelivered")]);
    assert_eq!(rows[2].message.text(), "also mention kiwis");
    assert_eq!(rows[3].message.text(), "Kiwis, then.");
    let calls = a.model_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(text_of_request(&calls[1]).matches("also mention kiwis").count(), 1, "sent once, as its own message");
    assert!(a.inbox().await.is_empty());
}

// ---- resume tokens on error turns ------------------------------------------------------

#[tokio::test]
async fn an_error_turn_keeps_its_resume_token_and_the_next_run_resumes_from_it() {
    let a = agent().await;
    a.server.push_script(Script::status(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"the mock refuses this one"}}"#,
        "application/json",
    ));
    let stream = a.send("remember the word MANGO").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = a.messages().await;
    assert_eq!(rows[1].status, MessageStatus::Error);
    let token = rows[1].message.metadata.as_ref().and_then(|m| m["resumeToken"].as_str()).map(str::to_owned);
    let token = token.expect("the error reply carries the resume token");
    a.f.engine.shutdown().await;
    // Stored on the session when the turn ended, not some time later.
    let store = store::Store::open(&a.config.data_dir.join("colloquy.db")).await.unwrap();
    assert_eq!(store.get_session(&a.session.id).await.unwrap().resume_token.as_deref(), Some(token.as_str()));
    store.close().await;

    let engine = Engine::open(a.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    a.server.push_script(Script::text(["You said MANGO."]));
    assert_eq!(terminal_status(&f.send(&a.topic(), "which word?").await), TerminalStatus::Success);
    assert!(text_of_request(a.model_calls().last().unwrap()).contains("MANGO"), "the failed turn's session came back");
    f.engine.shutdown().await;
}

// ---- driver errors: a program that is not Claude Code, a CLI that dies -----------------

#[tokio::test]
async fn a_program_that_is_not_claude_code_is_named_and_the_session_works_once_it_is_fixed() {
    let place = tempfile::tempdir().unwrap();
    let program = place.path().join("claude");
    std::fs::copy(fake_claude("not-claude.sh"), &program).unwrap();
    let a = agent_with(program.clone(), Duration::from_secs(300)).await;
    assert_eq!(terminal_status(&a.send("hello?").await), TerminalStatus::Error);
    let rows = a.messages().await;
    let error = error_part(&rows[1]).unwrap();
    assert_eq!(error.code.as_deref(), Some("agent"));
    for part in ["printed text where Claude Code writes only stream-json", "NotClaude 1.0", "COLLOQUY_CLAUDE_PATH"] {
        assert!(error.message.contains(part), "{part:?} is missing from: {}", error.message);
    }

    install(&program, &claude());
    a.server.push_script(Script::text(["The real one."]));
    assert_eq!(terminal_status(&a.send("hello again").await), TerminalStatus::Success);
    assert_eq!(a.messages().await[3].message.text(), "The real one.");
}

#[tokio::test]
async fn claude_code_exiting_mid_turn_is_reported_and_the_next_turn_starts_it_again() {
    let place = tempfile::tempdir().unwrap();
    let program = place.path().join("claude");
    std::fs::copy(fake_claude("exits-mid-turn.sh"), &program).unwrap();
    let a = agent_with(program.clone(), Duration::from_secs(300)).await;
    assert_eq!(terminal_status(&a.send("work").await), TerminalStatus::Error);
    let rows = a.messages().await;
    assert_eq!(rows[1].status, MessageStatus::Error);
    assert!(rows[1].message.text().starts_with("Half an ans"), "the text so far stays");
    let error = error_part(&rows[1]).unwrap();
    for part in ["stopped unexpectedly during the turn", "exit code 7", "fatal: the agent ran out of memory"] {
        assert!(error.message.contains(part), "{part:?} is missing from: {}", error.message);
    }

    install(&program, &claude());
    a.server.push_script(Script::text(["Back on my feet."]));
    assert_eq!(terminal_status(&a.send("again").await), TerminalStatus::Success);
}

// ---- the workspace folder --------------------------------------------------------------

#[tokio::test]
async fn a_workspace_that_is_not_a_project_folder_is_refused_with_the_reason() {
    let f = fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let home = std::env::var("HOME").expect("the tests run with HOME set");
    let missing = dir.path().join("missing");
    let cases = [
        (missing.to_string_lossy().into_owned(), "does not exist"),
        (file.to_string_lossy().into_owned(), "is a file, not a folder"),
        ("/".to_owned(), "the whole file system cannot be a workspace"),
        (home, "your whole home folder cannot be a workspace"),
        ("relative/folder".to_owned(), "is not an absolute path"),
    ];
    for (workspace, reason) in cases {
        let err = f.engine.call("agent_session_create", json!({ "workspace": workspace })).await.unwrap_err();
        assert_eq!(err.field.as_deref(), Some("workspace"), "{workspace}");
        assert!(err.message.contains(reason), "{workspace}: {}", err.message);
    }
    let sessions: Vec<AgentSession> = f.call("agent_sessions_list", json!({})).await;
    assert!(sessions.is_empty(), "nothing was created");
}

// ---- the model a session runs ----------------------------------------------------------

#[tokio::test]
async fn audit_20_a_session_without_a_model_runs_its_providers_default_model() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = agent_config(dir.path(), home.path(), claude());
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    let server = mock(Some("sk-agent")).await;
    let provider: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Mock Anthropic", "format": "anthropic", "baseUrl": server.base_url().to_string(), "apiKey": "sk-agent", "defaultModel": "claude-haiku-4-5" }),
        )
        .await;
    let workspace = tempfile::tempdir().unwrap();
    let session: AgentSession =
        f.call("agent_session_create", json!({ "workspace": workspace.path(), "providerId": provider.id })).await;
    assert_eq!(session.model, "", "no model was chosen");
    server.push_script(Script::text(["Hello."]));
    let topic = Topic {
        id: session.topic_id.clone(),
        title: String::new(),
        model: None,
        workspace: None,
        assistant_id: None,
        created_at: String::new(),
        updated_at: String::new(),
    };
    assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Success);
    let calls: Vec<Value> =
        server.requests().into_iter().filter(|r| r.path.starts_with("/v1/messages")).map(|r| r.body).collect();
    assert_eq!(calls[0]["model"], "claude-haiku-4-5", "Claude Code asked for the provider's default model");
    let rows = f.messages(&topic).await;
    let model = rows[1].model.as_ref().expect("the reply names its model");
    assert_eq!((model.provider_id.clone(), model.model.as_str()), (provider.id, "claude-haiku-4-5"));
    f.engine.shutdown().await;
}

// ---- approvals across a restart --------------------------------------------------------

/// The app closes while the agent waits for an approval, and starts again.
async fn restart_while_waiting(a: &Agent, file: &std::path::Path) -> (Fixture, Approval) {
    a.server.push_script(write(file, "after the restart\n"));
    let _rx = a.start("write the file").await;
    let approval = a.pending().await.remove(0);
    a.f.engine.shutdown().await;
    let f = Fixture { engine: Engine::open(a.config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let topic = a.topic();
    let pending: Vec<Approval> = f.call("approvals_list", json!({ "topicId": topic.id })).await;
    assert_eq!(
        pending.iter().map(|p| (p.id.as_str(), p.state)).collect::<Vec<_>>(),
        [(approval.id.as_str(), ApprovalState::Pending)],
        "the card is still there to answer"
    );
    let note = pending[0].preview.as_deref().unwrap_or_default();
    assert!(note.contains("was restarted while Claude Code waited"), "the card says what answering does: {note}");
    let rows = f.messages(&topic).await;
    assert_eq!(
        (rows[1].status, rows[1].status_reason.as_deref()),
        (MessageStatus::Paused, Some(protocol::StatusReason::AwaitingApproval.as_str())),
        "the reply waits for it"
    );
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let busy = f.engine.stream_open(open_request(topic.id.clone(), "hello?"), listener).await;
    assert_eq!(busy.err().map(|e| e.kind), Some(ErrorKind::Conflict), "a new message waits for the answer");
    assert!(!file.exists());
    (f, approval)
}

#[tokio::test]
async fn audit_19_an_agent_approval_survives_a_restart_and_approving_it_resumes_the_agent_and_runs_the_call() {
    let a = agent().await;
    let file = a.workspace.path().join("after-restart.txt");
    let (f, approval) = restart_while_waiting(&a, &file).await;
    let topic = a.topic();
    // The resumed agent makes the call again (Claude Code asks again), then finishes.
    a.server.push_script(write(&file, "after the restart\n"));
    a.server.push_script(Script::text(["Written after all."]));
    let answered: Approval =
        f.call("tool_approval_respond", json!({ "approvalId": approval.id, "decision": "approve" })).await;
    assert_eq!(answered.state, ApprovalState::Approved);
    let rows =
        wait_for(&f, &topic, "the resumed reply", |rows| rows.len() == 2 && rows[1].status == MessageStatus::Success)
            .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "after the restart\n", "the approved call ran");
    assert!(rows[1].message.text().ends_with("Written after all."), "{}", rows[1].message.text());
    let all: Vec<Approval> = f.call("approvals_list", json!({ "topicId": topic.id, "all": true })).await;
    assert_eq!(all.len(), 1, "the call made again ran on the answer given, without a second card: {all:?}");
    let calls = a.model_calls();
    let resumed = text_of_request(&calls[calls.len() - 2]);
    assert!(resumed.contains("was restarted") && resumed.contains("has since allowed it"), "{resumed}");
    f.engine.shutdown().await;
}

#[tokio::test]
async fn audit_19_denying_an_agent_approval_after_a_restart_tells_the_resumed_agent_why() {
    let a = agent().await;
    let file = a.workspace.path().join("never.txt");
    let (f, approval) = restart_while_waiting(&a, &file).await;
    let topic = a.topic();
    a.server.push_script(Script::text(["Understood, not writing it."]));
    let answered: Approval = f
        .call(
            "tool_approval_respond",
            json!({ "approvalId": approval.id, "decision": "deny", "reason": "not that file" }),
        )
        .await;
    assert_eq!(answered.state, ApprovalState::Denied);
    let rows =
        wait_for(&f, &topic, "the resumed reply", |rows| rows.len() == 2 && rows[1].status == MessageStatus::Success)
            .await;
    assert!(rows[1].message.text().ends_with("Understood, not writing it."));
    assert!(!file.exists());
    let resumed = text_of_request(a.model_calls().last().unwrap());
    assert!(resumed.contains("has since denied it") && resumed.contains("not that file"), "{resumed}");
    a.server.push_script(Script::text(["Here."]));
    assert_eq!(terminal_status(&f.send(&topic, "still there?").await), TerminalStatus::Success);
    f.engine.shutdown().await;
}

#[tokio::test]
async fn audit_19_a_card_whose_agent_died_while_asking_blocks_nothing_and_is_closed_at_the_next_start() {
    let place = tempfile::tempdir().unwrap();
    let program = place.path().join("claude");
    std::fs::copy(fake_claude("exits-while-asking.sh"), &program).unwrap();
    let a = agent_with(program.clone(), Duration::from_secs(300)).await;
    assert_eq!(terminal_status(&a.send("write").await), TerminalStatus::Error);
    let error = error_part(&a.messages().await[1]).unwrap();
    assert!(error.message.contains("while waiting for an approval"), "{}", error.message);
    assert_eq!(a.approvals().await.len(), 1, "the card was shown");

    // Nothing waits for that card: the session takes the next message.
    install(&program, &claude());
    a.server.push_script(Script::text(["Back."]));
    assert_eq!(terminal_status(&a.send("again").await), TerminalStatus::Success);

    a.f.engine.shutdown().await;
    let f = Fixture { engine: Engine::open(a.config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let all: Vec<Approval> = f.call("approvals_list", json!({ "topicId": a.session.topic_id, "all": true })).await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, ApprovalState::Denied, "a card nothing waits for is closed at start");
    f.engine.shutdown().await;
}
