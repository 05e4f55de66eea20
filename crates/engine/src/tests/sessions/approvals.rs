//! Agent-session approvals: edited input, always-allow, what happens while one waits, and
//! approvals across a restart.

use super::*;

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
    let rows = wait_for(&a.f, &a.topic(), "the queued message's reply", |rows| {
        rows.len() == 4 && rows[3].status == MessageStatus::Success
    })
    .await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[2].message.text(), "what did you write?");
    assert_eq!(rows[3].message.text(), "queued.txt, with a q.");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "q");
    assert!(a.inbox().await.is_empty());
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
