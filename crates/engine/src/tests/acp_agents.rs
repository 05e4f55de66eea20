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
        rows.last().unwrap().message.text()
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
    let listed = a.f.call::<protocol::api::AgentSessionList>("agent_sessions_list", json!({})).await.sessions;
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

/// Reads the stream until the reply has written some text.
async fn until_text(rx: &mut Subscription) {
    while let Some(message) = rx.recv().await {
        if let StreamMessage::Chunk(event) = &message
            && matches!(event.chunk, protocol::UiChunk::TextDelta { .. })
        {
            return;
        }
    }
    panic!("the stream ended before any text");
}

fn steer_states(message: &StoredMessage) -> Vec<String> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::Data(d) if d.kind == "data-steer" => d.data["state"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn interrupt_cancels_the_agents_turn_marks_its_reply_and_sends_the_message_now() {
    let a = acp_session().await;
    let topic = a.topic();
    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_open(open_request(topic.id.clone(), "slow"), listener).await.unwrap();
    until_text(&mut rx).await;
    let (listener, mut next) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_interrupt(open_request(topic.id.clone(), "do this instead"), listener).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut next).await), TerminalStatus::Success);

    let rows = a.f.messages(&topic).await;
    let texts: Vec<String> = rows.iter().map(|r| r.message.text()).collect();
    assert_eq!(texts, ["slow", "Working slowly", "do this instead", "You said: do this instead"]);
    assert_eq!(rows[1].status, protocol::MessageStatus::Paused);
    assert_eq!(steer_states(&rows[1]), ["interrupted"], "the stopped reply says why");
    assert!(steer_states(&rows[3]).is_empty());
    // A plain Stop is only a stop.
    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_open(open_request(topic.id.clone(), "slow"), listener).await.unwrap();
    until_text(&mut rx).await;
    a.f.engine.stream_abort(&topic.id).await.unwrap();
    let rows = a.f.messages(&topic).await;
    assert_eq!(rows.last().unwrap().status, protocol::MessageStatus::Paused);
    assert!(steer_states(rows.last().unwrap()).is_empty());
}

#[tokio::test]
async fn a_steer_to_an_acp_agent_runs_as_its_next_prompt_after_the_turn_and_the_reply_says_so() {
    let a = acp_session().await;
    let topic = a.topic();
    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_open(open_request(topic.id.clone(), "slow"), listener).await.unwrap();
    until_text(&mut rx).await;
    let _: protocol::api::InboxItem =
        a.f.call("inbox_add", json!({ "topicId": topic.id, "text": "and then this", "mode": "steer" })).await;
    std::fs::write(a.workspace.path().join("release"), "").unwrap();
    let rows = after_status_changes(
        &a.f.engine,
        "the steering message's turn",
        async || a.f.messages(&topic).await,
        |rows| rows.len() == 4 && rows[3].status == protocol::MessageStatus::Success,
    )
    .await;
    assert_eq!(rows[1].status, protocol::MessageStatus::Success, "the turn ran to its end");
    assert_eq!(steer_states(&rows[1]), ["queued"]);
    assert_eq!(a.reply_text().await, "You said: and then this");
}

#[tokio::test]
async fn the_agents_mode_is_switched_through_the_operation_and_bad_requests_say_what_was_wrong() {
    let a = acp_session().await;
    let topic = a.topic();
    let stream = a.f.send(&topic, "hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let rows = a.f.messages(&topic).await;
    let metadata = serde_json::to_value(&rows[1].message.metadata).unwrap();
    assert_eq!(metadata["agentModes"]["availableModes"][1]["id"], "architect", "{metadata}");
    assert_eq!(metadata["agentMode"], "code");

    let change: protocol::api::AgentModeChange =
        a.f.call("agent_session_set_mode", json!({ "id": a.session.id, "modeId": "architect" })).await;
    assert_eq!(change.applied, protocol::api::AgentModeApplied::Now);
    a.f.send(&topic, "mode").await;
    assert_eq!(a.reply_text().await, "Mode: architect");

    let err = error(&a.f, "agent_session_set_mode", json!({ "id": a.session.id, "modeId": "yolo" })).await;
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("modeId")));
    assert!(err.message.contains("code, architect"), "{}", err.message);
    let err = error(&a.f, "agent_session_set_mode", json!({ "id": a.session.id, "modeId": " " })).await;
    assert_eq!(err.field.as_deref(), Some("modeId"));
    let err = error(&a.f, "agent_session_set_mode", json!({ "id": "nope", "modeId": "code" })).await;
    assert_eq!(err.kind, ErrorKind::NotFound);
    let claude: AgentSession = a.f.call("agent_session_create", json!({ "workspace": a.workspace.path() })).await;
    let err = error(&a.f, "agent_session_set_mode", json!({ "id": claude.id, "modeId": "code" })).await;
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("id")));
}

#[tokio::test]
async fn an_acp_approval_left_open_at_a_restart_says_its_request_is_gone_and_answering_resumes_the_agent() {
    let a = acp_session().await;
    let topic = a.topic();
    let (listener, _rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    a.f.engine.stream_open(open_request(topic.id.clone(), "write notes.txt kept"), listener).await.unwrap();
    let list = async || -> Vec<Approval> { a.f.call("approvals_list", json!({ "topicId": topic.id })).await };
    let pending = after_status_changes(&a.f.engine, "an approval", list, |p| !p.is_empty()).await;
    a.f.engine.shutdown().await;

    let mut config = EngineConfig::new(a.f._dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let kept: Vec<Approval> = f.call("approvals_list", json!({ "topicId": topic.id })).await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].id, pending[0].id, "the card is still there to answer");
    let preview = kept[0].preview.as_deref().unwrap_or_default();
    assert!(
        preview.starts_with(
            "Colloquy was restarted while Fake agent waited for this answer, so its request is no longer open."
        ),
        "{preview}"
    );
    assert!(!preview.contains("Claude Code"), "{preview}");
    assert!(preview.contains("\n\n--- ") && preview.contains("+kept"), "the agent's diff is kept below: {preview}");
    f.engine.shutdown().await;

    // A second restart says it once; answering starts the agent again on its session.
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let kept: Vec<Approval> = f.call("approvals_list", json!({ "topicId": topic.id })).await;
    let preview = kept[0].preview.as_deref().unwrap_or_default();
    assert_eq!(preview.matches("no longer open").count(), 1, "{preview}");
    f.engine
        .call("tool_approval_respond", json!({ "approvalId": kept[0].id, "decision": "deny", "reason": "not now" }))
        .await
        .unwrap();
    let rows = after_status_changes(
        &f.engine,
        "the resumed reply",
        async || f.messages(&topic).await,
        |rows| rows.len() == 2 && rows[1].status == protocol::MessageStatus::Success,
    )
    .await;
    let text = rows[1].message.text();
    assert!(text.contains("was restarted while you waited") && text.contains("not now"), "the agent was told: {text}");
    assert!(!a.workspace.path().join("notes.txt").exists());
    f.engine.shutdown().await;
}

fn with_files(
    topic_id: protocol::TopicId,
    text: &str,
    files: &[(&str, &str, &str)],
) -> protocol::api::StreamOpenRequest {
    let mut request = open_request(topic_id, text);
    request.attachments = Some(
        files
            .iter()
            .map(|(media_type, filename, data)| protocol::api::Attachment {
                media_type: (*media_type).into(),
                filename: (*filename).into(),
                data: (*data).into(),
            })
            .collect(),
    );
    request
}

#[tokio::test]
async fn attachments_go_to_an_acp_agent_as_it_takes_them_and_one_it_cannot_take_is_refused_naming_it() {
    let a = acp_session().await;
    let topic = a.topic();
    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &topic.id);
    let request = with_files(
        topic.id.clone(),
        "look",
        &[("image/png", "cat.png", "iVBORw=="), ("text/markdown", "notes.md", "IyBoaQ==")],
    );
    a.f.engine.stream_open(request, listener).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(a.reply_text().await, "Got image image/png 8; resource attachment:///notes.md # hi");
    let rows = a.f.messages(&topic).await;
    let files = rows[0].message.parts.iter().filter(|p| matches!(p, UiPart::File { .. })).count();
    assert_eq!(files, 2, "the message keeps its files");

    // An agent that takes neither images nor embedded files.
    let plain: AcpAgent =
        a.f.call(
            "acp_agent_create",
            json!({ "name": "Plain agent", "command": "node", "args": [fake_agent_script()],
                    "variables": [{ "name": "FAKE_ACP_PROMPT", "value": "none" }] }),
        )
        .await;
    let session: AgentSession =
        a.f.call("agent_session_create", json!({ "acpAgentId": plain.id, "workspace": a.workspace.path() })).await;
    let (listener, _rx) = a.f.engine.listener(ListenerId::unique(), &session.topic_id);
    let refused = a
        .f
        .engine
        .stream_open(with_files(session.topic_id.clone(), "look", &[("image/png", "cat.png", "iVBORw==")]), listener)
        .await
        .expect_err("an image to an agent that takes none");
    assert_eq!((refused.kind, refused.field.as_deref()), (ErrorKind::BadRequest, Some("attachments.0")));
    assert!(
        refused.message.ends_with("Plain agent does not take images, so cat.png cannot be sent to it"),
        "{}",
        refused.message
    );
    let stored: Vec<StoredMessage> = a.f.call("messages_list", json!({ "topicId": session.topic_id })).await;
    assert!(stored.is_empty(), "nothing is stored for a refused message");

    let (listener, mut rx) = a.f.engine.listener(ListenerId::unique(), &session.topic_id);
    let text_file = with_files(session.topic_id.clone(), "read", &[("text/plain", "a.txt", "aGVsbG8=")]);
    a.f.engine.stream_open(text_file, listener).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let stored: Vec<StoredMessage> = a.f.call("messages_list", json!({ "topicId": session.topic_id })).await;
    assert_eq!(stored[1].message.text(), "Got link a.txt data:text/plain;base64", "a text file goes as a link");

    // Claude Code sessions still take text only.
    let claude: AgentSession = a.f.call("agent_session_create", json!({ "workspace": a.workspace.path() })).await;
    let (listener, _rx) = a.f.engine.listener(ListenerId::unique(), &claude.topic_id);
    let refused =
        a.f.engine
            .stream_open(with_files(claude.topic_id.clone(), "look", &[("text/plain", "a.txt", "aGVsbG8=")]), listener)
            .await
            .expect_err("Claude Code takes text only");
    assert_eq!(refused.field.as_deref(), Some("attachments"));
}
