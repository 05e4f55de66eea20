//! Agent sessions with the real Claude Code CLI (installed by `cargo xtask setup` into
//! tests/agent-cli) talking to the testkit's Anthropic Messages mock, through the engine.

use std::os::unix::fs::PermissionsExt;

use protocol::api::AgentSession;
use protocol::tool::{Approval, ApprovalState};

use super::*;

mod approvals;
mod errors;
mod turns;

pub(super) fn claude() -> std::path::PathBuf {
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
    config.claude =
        ::sessions::ClaudeCodeConfig { program, env: offline_claude_env(home), start_timeout: Duration::from_secs(60) };
    config
}

/// What keeps Claude Code offline and in a throwaway `home`: no update check, no
/// nonessential traffic (telemetry, release notes), and no retries (each script answers
/// one request). The ACP tests run it this way under claude-agent-acp too.
pub(super) fn offline_claude_env(home: &std::path::Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.to_string_lossy().into_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ("DISABLE_AUTOUPDATER".into(), "1".into()),
    ]
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
            forked_from: None,
            system_prompt: None,
            params: Default::default(),
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
        let list = async || -> Vec<Approval> {
            self.f.call("approvals_list", json!({ "topicId": self.session.topic_id })).await
        };
        after_status_changes(&self.f.engine, "an approval to be asked for", list, |pending| !pending.is_empty()).await
    }
}

fn text_of_request(body: &Value) -> String {
    body.to_string()
}

impl Agent {
    /// The rows once they are `done`, for a state inside a turn (see [`rows_until`]).
    async fn rows_until(&self, what: &str, done: impl Fn(&[StoredMessage]) -> bool) -> Vec<StoredMessage> {
        rows_until(&self.f, &self.topic(), what, done).await
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

/// Waits until every process `counting_claude` started has exited. It polls `/proc`:
/// these are another program's processes, whose exit sends this test no event.
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
