//! Sessions with real ACP agents from npm (installed by `cargo xtask setup` into
//! tests/agent-cli), configured the way a user configures them and run offline against
//! the testkit, through the engine:
//!
//! - **Qwen Code** (`qwen --acp`) on the testkit's OpenAI Chat endpoint, set by
//!   `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `OPENAI_MODEL`, with a settings file in a
//!   throwaway `HOME` ([`QWEN_SETTINGS`]): OpenAI auth, no telemetry or usage statistics,
//!   no update check, and none of the model calls it makes after a turn on its own
//!   (follow-up suggestions, memory extraction), which would take the next turn's script.
//!   Its approval mode is `default` (ask before edits and commands): its own default is
//!   `auto`, which writes without asking the client (the write then comes to us as
//!   `fs/write_text_file`, which has an approval card of its own).
//! - **claude-agent-acp** on the testkit's Anthropic endpoint (`ANTHROPIC_BASE_URL`),
//!   with Claude Code's offline environment from the Claude Code tests. It runs the
//!   Claude Code CLI these tests already install (`CLAUDE_CODE_EXECUTABLE`): the one
//!   bundled in its Agent SDK (2.1.83) fetches a plugin blocklist from
//!   raw.githubusercontent.com at every start, with no switch but bare mode (which drops
//!   the Write tool). `IS_SANDBOX` is set empty: the adapter passes
//!   `--allow-dangerously-skip-permissions` when it is non-empty, which Claude Code refuses
//!   as root unless it is exactly `1` (the session then fails to start).
//!
//! The model's side is scripted per wire format: Qwen's write tool is `write_file`
//! (`file_path`, `content`), Claude Code's is `Write` (the same arguments).

use protocol::acp::AcpAgent;
use protocol::api::AgentSession;
use protocol::message::ToolState;
use protocol::tool::{Approval, ApprovalState};

use super::super::sessions::{claude, offline_claude_env};
use super::*;

/// What Qwen Code reads from `~/.qwen/settings.json` in the throwaway home.
const QWEN_SETTINGS: &str = r#"{
  "security": { "auth": { "selectedType": "openai" } },
  "general": { "enableAutoUpdate": false },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "tools": { "approvalMode": "default" },
  "ui": { "enableFollowupSuggestions": false },
  "memory": { "enableManagedAutoMemory": false, "enableManagedAutoDream": false }
}
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Qwen,
    ClaudeAcp,
}

fn installed(path: &str) -> String {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent-cli/node_modules").join(path);
    assert!(path.exists(), "{} is missing: run `cargo xtask setup`", path.display());
    path.display().to_string()
}

impl Kind {
    /// The agent as the user would add it: command, arguments, variables.
    fn agent(self, server: &MockServer, home: &std::path::Path) -> Value {
        let plain = |name: &str, value: &str| json!({ "name": name, "value": value });
        let mut variables = vec![plain("HOME", &home.display().to_string())];
        match self {
            Kind::Qwen => {
                std::fs::create_dir_all(home.join(".qwen")).unwrap();
                std::fs::write(home.join(".qwen/settings.json"), QWEN_SETTINGS).unwrap();
                variables.push(plain("OPENAI_BASE_URL", &server.base_url()));
                variables.push(json!({ "name": "OPENAI_API_KEY", "secret": true, "value": "sk-agent" }));
                variables.push(plain("OPENAI_MODEL", "scripted"));
                json!({ "name": "Qwen Code", "command": installed(".bin/qwen"), "args": ["--acp"], "variables": variables })
            }
            Kind::ClaudeAcp => {
                variables = offline_claude_env(home).iter().map(|(name, value)| plain(name, value)).collect();
                variables.push(plain("ANTHROPIC_BASE_URL", &format!("http://{}", server.addr())));
                variables.push(json!({ "name": "ANTHROPIC_API_KEY", "secret": true, "value": "sk-agent" }));
                variables.push(plain("CLAUDE_CODE_EXECUTABLE", &claude().display().to_string()));
                variables.push(plain("IS_SANDBOX", ""));
                json!({ "name": "Claude Agent", "command": "node",
                        "args": [installed("@zed-industries/claude-agent-acp/dist/index.js")], "variables": variables })
            }
        }
    }

    /// The path of the model's own requests on the mock.
    fn model_path(self) -> &'static str {
        match self {
            Kind::Qwen => "/v1/chat/completions",
            Kind::ClaudeAcp => "/v1/messages",
        }
    }

    /// The model asking to write `content` to `path` with the agent's own write tool.
    fn write(self, path: &std::path::Path, content: &str) -> Script {
        let tool = match self {
            Kind::Qwen => "write_file",
            Kind::ClaudeAcp => "Write",
        };
        Script::text(["I will write the file."])
            .with_tool_call(tool, json!({ "file_path": path, "content": content }).to_string())
    }
}

struct Real {
    kind: Kind,
    f: Fixture,
    server: MockServer,
    session: AgentSession,
    workspace: tempfile::TempDir,
    config: EngineConfig,
    home: tempfile::TempDir,
}

async fn real(kind: Kind) -> Real {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: dir };
    let server = mock(Some("sk-agent")).await;
    let home = tempfile::tempdir().unwrap();
    let agent: AcpAgent = f.call("acp_agent_create", kind.agent(&server, home.path())).await;
    let workspace = tempfile::tempdir().unwrap();
    let session: AgentSession =
        f.call("agent_session_create", json!({ "acpAgentId": agent.id, "workspace": workspace.path() })).await;
    Real { kind, f, server, session, workspace, config, home }
}

impl Real {
    fn topic(&self) -> Topic {
        serde_json::from_value(json!({
            "id": self.session.topic_id, "title": "", "createdAt": "", "updatedAt": ""
        }))
        .unwrap()
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

    /// The requests the agent made to its model.
    fn model_calls(&self) -> Vec<Value> {
        let path = self.kind.model_path();
        self.server.requests().into_iter().filter(|r| r.path.starts_with(path)).map(|r| r.body).collect()
    }

    async fn pending(&self) -> Approval {
        let list = async || -> Vec<Approval> {
            self.f.call("approvals_list", json!({ "topicId": self.session.topic_id })).await
        };
        let mut pending =
            after_status_changes(&self.f.engine, "an approval to be asked for", list, |p| !p.is_empty()).await;
        assert_eq!(pending.len(), 1, "{pending:?}");
        pending.remove(0)
    }

    async fn approvals(&self) -> Vec<Approval> {
        self.f.call("approvals_list", json!({ "topicId": self.session.topic_id, "all": true })).await
    }

    async fn answer(&self, approval: &Approval, answer: Value) {
        let mut request = json!({ "approvalId": approval.id });
        request.as_object_mut().unwrap().extend(answer.as_object().unwrap().clone());
        let _: Approval = self.f.call("tool_approval_respond", request).await;
    }
}

fn tool_states(message: &StoredMessage) -> Vec<ToolState> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { state, .. } => Some(*state),
            _ => None,
        })
        .collect()
}

async fn a_text_reply_is_stored(kind: Kind) {
    let a = real(kind).await;
    a.server.push_script(Script::text(["Hello from ", "the real agent."]));
    let stream = a.send("Say hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let rows = a.messages().await;
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[1].status, rows[1].message.text().as_str()),
        (MessageStatus::Success, "Hello from the real agent.")
    );
    let usage = rows[1].message.metadata.as_ref().and_then(|m| m.get("usage")).cloned();
    match kind {
        // In the prompt's answer (an unstable ACP field).
        Kind::ClaudeAcp => assert!(usage.as_ref().is_some_and(|u| u["inputTokens"].as_u64() > Some(0)), "{usage:?}"),
        // Only in the `_meta` of an empty message chunk, which is not ACP's.
        Kind::Qwen => assert_eq!(usage, None),
    }
    let sessions = a.f.call::<protocol::api::AgentSessionList>("agent_sessions_list", json!({})).await.sessions;
    assert!(sessions[0].resumable, "the agent's session id is kept to resume it");
    assert_eq!(a.model_calls().len(), 1, "one model call: nothing else took a script");
    a.f.engine.shutdown().await;
}

async fn an_approved_write_happens_once(kind: Kind) {
    let a = real(kind).await;
    let file = a.workspace.path().join("notes.txt");
    a.server.push_script(kind.write(&file, "from the agent\n"));
    a.server.push_script(Script::text(["Done: notes.txt is written."]));
    let mut rx = a.start("write notes").await;
    let approval = a.pending().await;
    assert_eq!((approval.tool_name.as_str(), approval.state), ("edit", ApprovalState::Pending));
    assert!(approval.preview.as_deref().unwrap_or_default().contains("+from the agent"), "{:?}", approval.preview);
    assert!(!file.exists(), "nothing is written before the answer");
    a.answer(&approval, json!({ "decision": "approve" })).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the agent\n");
    assert_eq!(a.approvals().await.len(), 1, "the write the approved call made was not asked again");
    let rows = a.messages().await;
    assert!(rows[1].message.text().ends_with("Done: notes.txt is written."), "{:?}", rows[1].message.text());
    assert_eq!(tool_states(&rows[1]), [ToolState::OutputAvailable]);
    assert_eq!(a.model_calls().len(), 2);
    a.f.engine.shutdown().await;
}

async fn a_denied_write_is_not_written(kind: Kind) -> Real {
    let a = real(kind).await;
    let file = a.workspace.path().join("no.txt");
    a.server.push_script(kind.write(&file, "x"));
    a.server.push_script(Script::text(["Understood, not writing."]));
    let mut rx = a.start("write no.txt").await;
    let approval = a.pending().await;
    a.answer(&approval, json!({ "decision": "deny", "reason": "not this file" })).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert!(!file.exists());
    let rows = a.messages().await;
    assert_eq!(tool_states(&rows[1]), [ToolState::OutputDenied], "{:#?}", rows[1].message.parts);
    a
}

async fn stop_ends_the_turn_and_nothing_is_stored_after(kind: Kind) {
    let a = real(kind).await;
    a.server
        .push_script(Script::text((0..40).map(|i| format!("word{i} "))).with_token_delay(Duration::from_millis(150)));
    let mut rx = a.start("talk a lot").await;
    rows_until(&a.f, &a.topic(), "the reply to stream", |rows| {
        rows.len() == 2 && rows[1].message.text().starts_with("word0")
    })
    .await;
    a.f.engine.stream_abort(&a.session.topic_id).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Paused);
    let stopped = a.messages().await;
    assert_eq!((stopped[1].status, stopped[1].status_reason.as_deref()), (MessageStatus::Paused, Some("user_stop")));
    let said = stopped[1].message.text();
    assert!(said.starts_with("word0") && !said.contains("word39"), "{said}");
    // The session goes on, and the stopped reply stays as it was.
    a.server.push_script(Script::text(["Back."]));
    assert_eq!(terminal_status(&a.send("again").await), TerminalStatus::Success);
    let rows = a.messages().await;
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[1].message, stopped[1].message, "nothing was added to the stopped reply");
    assert_eq!(rows[3].message.text(), "Back.");
    a.f.engine.shutdown().await;
}

async fn stop_while_asking_answers_the_request_cancelled(kind: Kind) {
    let a = real(kind).await;
    let file = a.workspace.path().join("stopped.txt");
    a.server.push_script(kind.write(&file, "never"));
    let mut rx = a.start("write stopped.txt").await;
    let approval = a.pending().await;
    a.f.engine.stream_abort(&a.session.topic_id).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Paused);
    let list: Vec<Approval> = a.f.call("approvals_list", json!({ "topicId": a.session.topic_id })).await;
    assert!(list.is_empty(), "the card is no longer waiting: {list:?}");
    assert!(a.approvals().await.iter().all(|x| x.id != approval.id || x.state != ApprovalState::Pending));
    // The agent was told `cancelled` and is free for the next turn, without writing.
    a.server.push_script(Script::text(["Back."]));
    assert_eq!(terminal_status(&a.send("again").await), TerminalStatus::Success);
    assert_eq!(a.messages().await.last().unwrap().message.text(), "Back.");
    assert!(!file.exists());
    a.f.engine.shutdown().await;
}

async fn after_a_restart_the_agent_loads_its_session_and_the_replay_is_not_stored_again(kind: Kind) {
    let a = real(kind).await;
    let file = a.workspace.path().join("kept.txt");
    a.server.push_script(kind.write(&file, "kept\n"));
    a.server.push_script(Script::text(["Remembered PAPAYA."]));
    let mut rx = a.start("remember the word PAPAYA and write kept.txt").await;
    let approval = a.pending().await;
    a.answer(&approval, json!({ "decision": "approve" })).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let before = a.messages().await;
    a.f.engine.shutdown().await;

    let engine = Engine::open(a.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    a.server.push_script(Script::text(["You said PAPAYA."]));
    let topic = a.topic();
    assert_eq!(terminal_status(&f.send(&topic, "what word?").await), TerminalStatus::Success);
    let calls = a.model_calls();
    let last = calls.last().unwrap().to_string();
    assert!(last.contains("PAPAYA") && last.contains("kept.txt"), "the agent's own session came back: {last}");
    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert_eq!(
        rows[..2].iter().map(|r| &r.message).collect::<Vec<_>>(),
        before.iter().map(|r| &r.message).collect::<Vec<_>>()
    );
    assert_eq!(rows[3].message.text(), "You said PAPAYA.");
    assert!(
        tool_states(&rows[3]).is_empty(),
        "the replayed tool call is not shown again: {:#?}",
        rows[3].message.parts
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept\n", "the replay did not write again");
    f.engine.shutdown().await;
}

#[tokio::test]
async fn qwen_a_text_reply_is_stored() {
    a_text_reply_is_stored(Kind::Qwen).await;
}

#[tokio::test]
async fn claude_acp_a_text_reply_is_stored() {
    a_text_reply_is_stored(Kind::ClaudeAcp).await;
}

#[tokio::test]
async fn qwen_an_approved_write_happens_once() {
    an_approved_write_happens_once(Kind::Qwen).await;
}

#[tokio::test]
async fn claude_acp_an_approved_write_happens_once() {
    an_approved_write_happens_once(Kind::ClaudeAcp).await;
}

/// Qwen Code takes the reject option as the end of the turn: the call fails ("canceled by
/// the user") and the model is not asked again. ACP has no field for our reason.
#[tokio::test]
async fn qwen_a_denied_write_ends_its_turn() {
    let a = a_denied_write_is_not_written(Kind::Qwen).await;
    assert_eq!(a.model_calls().len(), 1, "Qwen Code did not go back to the model");
    a.f.engine.shutdown().await;
}

/// claude-agent-acp tells the model "User refused permission to run tool" (not our
/// reason: ACP has no field for it) and the model goes on.
#[tokio::test]
async fn claude_acp_a_denied_write_is_reported_to_the_model() {
    let a = a_denied_write_is_not_written(Kind::ClaudeAcp).await;
    let calls = a.model_calls();
    assert_eq!(calls.len(), 2);
    let told = calls[1].to_string();
    assert!(told.contains("User refused permission") && told.contains("is_error"), "{told}");
    assert!(a.messages().await[1].message.text().ends_with("Understood, not writing."));
    a.f.engine.shutdown().await;
}

/// In its own default approval mode (`auto`) Qwen Code writes without asking: the write
/// comes to us as `fs/write_text_file`, which gets a card of its own.
#[tokio::test]
async fn qwen_in_its_auto_mode_a_write_asks_through_our_write_card() {
    let a = real(Kind::Qwen).await;
    let settings = QWEN_SETTINGS.replace(r#""approvalMode": "default""#, r#""approvalMode": "auto""#);
    std::fs::write(a.home.path().join(".qwen/settings.json"), settings).unwrap();
    let file = a.workspace.path().join("auto.txt");
    a.server.push_script(Kind::Qwen.write(&file, "automatic\n"));
    a.server.push_script(Script::text(["Written."]));
    let mut rx = a.start("write auto.txt").await;
    let approval = a.pending().await;
    assert_eq!(approval.tool_name, "write_text_file");
    assert!(!file.exists(), "nothing is written before the answer");
    a.answer(&approval, json!({ "decision": "approve" })).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "automatic\n");
    assert_eq!(a.approvals().await.len(), 1);
    a.f.engine.shutdown().await;
}

#[tokio::test]
async fn qwen_stop_ends_the_turn_and_nothing_is_stored_after() {
    stop_ends_the_turn_and_nothing_is_stored_after(Kind::Qwen).await;
}

#[tokio::test]
async fn claude_acp_stop_ends_the_turn_and_nothing_is_stored_after() {
    stop_ends_the_turn_and_nothing_is_stored_after(Kind::ClaudeAcp).await;
}

#[tokio::test]
async fn qwen_stop_while_asking_answers_the_request_cancelled() {
    stop_while_asking_answers_the_request_cancelled(Kind::Qwen).await;
}

#[tokio::test]
async fn claude_acp_stop_while_asking_answers_the_request_cancelled() {
    stop_while_asking_answers_the_request_cancelled(Kind::ClaudeAcp).await;
}

#[tokio::test]
async fn qwen_after_a_restart_loads_its_session_without_storing_the_replay() {
    after_a_restart_the_agent_loads_its_session_and_the_replay_is_not_stored_again(Kind::Qwen).await;
}

#[tokio::test]
async fn claude_acp_after_a_restart_loads_its_session_without_storing_the_replay() {
    after_a_restart_the_agent_loads_its_session_and_the_replay_is_not_stored_again(Kind::ClaudeAcp).await;
}
