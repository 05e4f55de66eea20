//! ACP agents in settings (their secret variables in the secret store) and sessions that
//! run one, through the engine, against the scripted fake agent
//! (`tests/agent-cli/fakes/acp-agent.mjs`, run by Node).

use protocol::acp::AcpAgent;
use protocol::api::AgentSession;
use protocol::tool::Approval;

use super::*;

mod real_agents;

fn fake_agent_script() -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/agent-cli/fakes/acp-agent.mjs")
        .display()
        .to_string()
}

async fn error(f: &Fixture, name: &str, request: Value) -> protocol::ApiError {
    f.engine.call(name, request).await.expect_err("it was accepted")
}

#[tokio::test]
async fn agents_keep_secret_variables_in_the_secret_store_and_plain_ones_in_settings() {
    let f = fixture().await;
    let presets: Vec<Value> = f.call("acp_agent_presets", json!({})).await;
    assert!(presets.iter().any(|p| p["command"] == "qwen" && p["args"] == json!(["--acp"])), "{presets:?}");

    let agent: AcpAgent = f
        .call(
            "acp_agent_create",
            json!({ "name": "Qwen Code", "command": "qwen", "args": ["--acp"], "variables": [
                { "name": "OPENAI_BASE_URL", "value": "http://127.0.0.1:9/v1" },
                { "name": "OPENAI_API_KEY", "secret": true, "value": "sk-very-secret" },
            ] }),
        )
        .await;
    let shown = serde_json::to_value(&agent.variables).unwrap();
    assert_eq!(
        shown,
        json!([
            { "name": "OPENAI_BASE_URL", "secret": false, "value": "http://127.0.0.1:9/v1", "set": true },
            { "name": "OPENAI_API_KEY", "secret": true, "set": true },
        ])
    );
    let row = f.engine.inner.store.get_acp_agent(&agent.id).await.unwrap();
    assert!(!format!("{row:?}").contains("sk-very-secret"), "the secret is not in the database");
    let launch = f.engine.inner.acp_agents.launch(&agent.id).await.unwrap();
    assert!(launch.env.contains(&("OPENAI_API_KEY".to_owned(), "sk-very-secret".to_owned())));

    // A secret sent back as null keeps its value; one left out is forgotten.
    let kept: AcpAgent = f
        .call(
            "acp_agent_update",
            json!({ "id": agent.id, "agent": { "name": "Qwen", "command": "qwen", "args": ["--acp"], "variables": [
                { "name": "OPENAI_API_KEY", "secret": true, "value": null },
            ] } }),
        )
        .await;
    assert_eq!((kept.name.as_str(), kept.variables.len(), kept.variables[0].set), ("Qwen", 1, true));
    let launch = f.engine.inner.acp_agents.launch(&agent.id).await.unwrap();
    assert_eq!(launch.env, [("OPENAI_API_KEY".to_owned(), "sk-very-secret".to_owned())]);

    let bad = [
        (json!({ "name": "X", "command": " " }), "command"),
        (json!({ "name": "", "command": "x" }), "name"),
        (json!({ "name": "X", "command": "x", "variables": [{ "name": "A" }, { "name": "A" }] }), "variables"),
        (json!({ "name": "X", "command": "x", "variables": [{ "name": "A=B" }] }), "variables"),
        (json!({ "name": "X", "command": "x", "variables": [{ "name": "KEY", "secret": true }] }), "variables"),
        (json!({ "name": "X", "command": "x", "workspace": "relative/path" }), "workspace"),
    ];
    for (request, field) in bad {
        let err = error(&f, "acp_agent_create", request.clone()).await;
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some(field)), "{request}: {err:?}");
    }
    let listed: Vec<AcpAgent> = f.call("acp_agents_list", json!({})).await;
    assert_eq!(listed.len(), 1, "nothing was saved by a refused request");

    f.call::<()>("acp_agent_delete", json!({ "id": agent.id })).await;
    let listed: Vec<AcpAgent> = f.call("acp_agents_list", json!({})).await;
    assert!(listed.is_empty());
}

struct AcpSession {
    f: Fixture,
    agent: AcpAgent,
    session: AgentSession,
    workspace: tempfile::TempDir,
}

async fn acp_session() -> AcpSession {
    let f = fixture().await;
    let workspace = tempfile::tempdir().unwrap();
    let agent: AcpAgent = f
        .call(
            "acp_agent_create",
            json!({ "name": "Fake agent", "command": "node", "args": [fake_agent_script()],
                    "workspace": workspace.path() }),
        )
        .await;
    // No workspace given: the agent's own.
    let session: AgentSession = f.call("agent_session_create", json!({ "acpAgentId": agent.id })).await;
    AcpSession { f, agent, session, workspace }
}

impl AcpSession {
    fn topic(&self) -> Topic {
        serde_json::from_value(json!({
            "id": self.session.topic_id, "title": "", "createdAt": "", "updatedAt": ""
        }))
        .unwrap()
    }

    async fn reply_text(&self) -> String {
        let rows = self.f.messages(&self.topic()).await;
        rows.last()
            .unwrap()
            .message
            .parts
            .iter()
            .filter_map(|p| match p {
                UiPart::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[tokio::test]
async fn a_session_runs_the_agent_it_picked_and_the_list_says_which() {
    let a = acp_session().await;
    assert_eq!((a.session.agent.as_str(), a.session.agent_name.as_str()), ("acp", "Fake agent"));
    assert_eq!(a.session.acp_agent_id.as_deref(), Some(a.agent.id.as_str()));
    assert_eq!(
        std::fs::canonicalize(&a.session.workspace).unwrap(),
        std::fs::canonicalize(a.workspace.path()).unwrap()
    );
    let stream = a.f.send(&a.topic(), "hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert_eq!(a.reply_text().await, "Hello from the fake agent.");
    let listed: Vec<AgentSession> = a.f.call("agent_sessions_list", json!({})).await;
    assert_eq!(listed[0].agent_name, "Fake agent");
    assert!(listed[0].resumable, "the agent's session id is kept to resume it");

    let err = error(&a.f, "acp_agent_delete", json!({ "id": a.agent.id })).await;
    assert_eq!(err.kind, ErrorKind::Conflict, "{err:?}");
    let err = error(&a.f, "agent_session_create", json!({ "agent": "acp", "workspace": a.workspace.path() })).await;
    assert_eq!(err.field.as_deref(), Some("acpAgentId"));
    let err =
        error(&a.f, "agent_session_create", json!({ "acpAgentId": "nope", "workspace": a.workspace.path() })).await;
    assert_eq!(err.field.as_deref(), Some("acpAgentId"));
}

#[tokio::test]
async fn the_agents_permission_request_is_an_approval_card_and_the_file_is_written_once() {
    let a = acp_session().await;
    let topic = a.topic();
    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_open(open_request(topic.id.clone(), "write notes.txt from the agent"), listener).await.unwrap();
    let list = async || -> Vec<Approval> { a.f.call("approvals_list", json!({ "topicId": topic.id })).await };
    let pending = after_status_changes(&a.f.engine, "an approval", list, |p| !p.is_empty()).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool_name, "edit");
    assert!(pending[0].preview.as_deref().unwrap_or_default().contains("+from the agent"), "{:?}", pending[0].preview);
    a.f.engine
        .call("tool_approval_respond", json!({ "approvalId": pending[0].id, "decision": "approve" }))
        .await
        .unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(std::fs::read_to_string(a.workspace.path().join("notes.txt")).unwrap(), "from the agent\n");
    let all: Vec<Approval> = a.f.call("approvals_list", json!({ "topicId": topic.id, "all": true })).await;
    assert_eq!(all.len(), 1, "the write the approved call made was not asked again");
    let audit: Vec<protocol::tool::AuditEntry> = a.f.call("tool_audit_list", json!({ "topicId": topic.id })).await;
    assert!(!audit.is_empty(), "the answer is in the audit log");
    assert!(a.reply_text().await.contains("Wrote notes.txt."));
}
