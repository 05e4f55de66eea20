//! Agent sessions with the real Claude Code CLI (installed by `cargo xtask setup` into
//! tests/agent-cli) talking to the testkit's Anthropic Messages mock, through the engine.

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
        for _ in 0..300 {
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
    tokio::time::sleep(Duration::from_millis(200)).await;
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
        (MessageStatus::Success, Some(agent::REASON_STEERED))
    );
    assert!(rows[1].message.text().starts_with("Working on it."));
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
    tokio::time::sleep(Duration::from_millis(1200)).await;
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
async fn after_the_idle_timeout_the_next_turn_reconnects() {
    let a = agent_with(claude(), Duration::from_millis(500)).await;
    a.server.push_script(Script::text(["One."]));
    a.send("the code word is KIWI").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    a.server.push_script(Script::text(["Two."]));
    assert_eq!(terminal_status(&a.send("and now?").await), TerminalStatus::Success);
    let calls = a.model_calls();
    assert!(text_of_request(calls.last().unwrap()).contains("KIWI"), "the reconnected agent resumed its session");
    let heads: Vec<String> = a.server.requests().into_iter().filter(|r| r.method == "HEAD").map(|r| r.path).collect();
    assert_eq!(heads.len(), 2, "a second process started: {heads:?}");
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
