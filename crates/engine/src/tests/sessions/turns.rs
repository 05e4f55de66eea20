//! Agent-session turns through the engine: text, writes, steering, stop, restarts, the idle
//! connection, resume, compaction, settings and the session's model.

use super::*;

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
    let sessions = a.f.call::<protocol::api::AgentSessionList>("agent_sessions_list", json!({})).await.sessions;
    assert!(sessions[0].resumable);
    assert_eq!(sessions[0].title, "Say hello");
    let topics = a.f.call::<protocol::api::TopicList>("topics_list", json!({})).await.topics;
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
    let rows = wait_for(&a.f, &a.topic(), "the steer's own turn", |rows| {
        rows.len() == 4 && rows[3].status == MessageStatus::Success
    })
    .await;
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
        forked_from: None,
        system_prompt: None,
        params: Default::default(),
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
