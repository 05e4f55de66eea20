//! Agent-session failures: resume tokens on error turns, a program that is not Claude Code,
//! a CLI that dies, a workspace that is not a project folder.

use super::*;

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
    let sessions = f.call::<protocol::api::AgentSessionList>("agent_sessions_list", json!({})).await.sessions;
    assert!(sessions.is_empty(), "nothing was created");
}
