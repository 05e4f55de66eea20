//! Start-up recovery of the states a SIGKILL can leave between two transactions of a
//! tool-calling turn (found by `src-tauri/tests/fault_kills.rs`), reproduced directly in
//! the database so that each runs every time rather than once in a hundred kills.

use protocol::api::ReplyRequest;
use protocol::tool::{Approval, ApprovalState};
use store::tools::ApprovalAnswer;

use super::tools::{call, tool_fixture, tool_messages};
use super::*;

fn write(path: &str, content: &str) -> Script {
    call("write_file", json!({ "path": path, "content": content }))
}

/// The database as the killed run left it, opened without an engine to change it.
async fn open_store(config: &EngineConfig) -> store::Store {
    store::Store::open(&config.data_dir.join("colloquy.db")).await.unwrap()
}

async fn restart(config: &EngineConfig) -> Fixture {
    Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() }
}

async fn topic_status(f: &Fixture, topic: &Topic) -> Option<protocol::TopicStatus> {
    let mut feed = f.engine.status_subscribe();
    let Some(protocol::StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
    snapshot.statuses.iter().find(|s| s.topic_id == topic.id).map(|s| s.status)
}

async fn continue_reply(f: &Fixture, topic: &Topic, reply: &StoredMessage) -> Vec<StreamMessage> {
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = ReplyRequest { topic_id: topic.id.clone(), message_id: reply.id.clone() };
    f.engine.stream_continue(request, listener).await.unwrap();
    drain(&mut rx).await
}

/// A kill after the answer's transaction but before the reply resumed: every question is
/// answered, yet the reply still says it waits. It comes back interrupted (Continue is
/// offered), and continuing honours the recorded answer: the call runs once, unasked.
#[tokio::test]
async fn fault_kills_a_reply_answered_but_never_resumed_comes_back_continuable_and_runs_its_call_once() {
    let t = tool_fixture().await;
    t.server.push_script(write("kept.md", "approved"));
    t.f.send(&t.topic, "write it").await;
    let approval = t.pending().await.remove(0);
    t.f.engine.shutdown().await;

    let store = open_store(&t.config).await;
    let answer = ApprovalAnswer {
        approval_id: &approval.id,
        decided_by: protocol::message::Decider::User,
        decision: protocol::api::ApprovalDecision::Approve,
        scope: protocol::api::ApprovalScope::Once,
        reason: None,
        updated_input: None,
        rule_id: "",
        rule_conditions: Vec::new(),
    };
    assert!(store.respond_approval(&answer).await.unwrap().1);
    store.close().await;

    let f = restart(&t.config).await;
    let rows = f.messages(&t.topic).await;
    assert_eq!(
        (rows[1].status, rows[1].status_reason.as_deref()),
        (MessageStatus::Paused, Some("interrupted")),
        "the reply no longer waits for a question nobody can answer"
    );
    assert_ne!(topic_status(&f, &t.topic).await, Some(protocol::TopicStatus::AwaitingApproval));
    assert!(!t.workspace.path().join("kept.md").exists(), "nothing runs by itself at start-up");

    t.server.push_script(Script::text(["Written after the restart."]));
    let stream = continue_reply(&f, &t.topic, &rows[1]).await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let pending: Vec<Approval> = f.call("approvals_list", json!({})).await;
    assert!(pending.is_empty(), "the recorded answer is not asked again: {pending:?}");
    assert_eq!(std::fs::read_to_string(t.workspace.path().join("kept.md")).unwrap(), "approved");
    let rows = f.messages(&t.topic).await;
    assert_eq!(rows[1].message.text(), "Written after the restart.");
    let chats = t.chat_requests();
    assert_eq!(chats.len(), 2, "one model call before the crash, one after Continue");
    assert_eq!(tool_messages(&chats[1]), vec!["created kept.md (8 bytes)".to_owned()]);
}

/// A kill after the question's transaction but before the reply's final write: the
/// approval is pending while the reply, recovered as interrupted, does not hold the call.
/// The question is settled (denied, saying why), the topic is free, and Continue goes on.
#[tokio::test]
async fn fault_kills_a_question_whose_reply_never_waited_is_settled_and_the_reply_continues() {
    let t = tool_fixture().await;
    t.server.push_script(write("never.md", "x"));
    t.f.send(&t.topic, "write it").await;
    let approval = t.pending().await.remove(0);
    let reply = t.f.messages(&t.topic).await.remove(1);
    t.f.engine.shutdown().await;

    // The reply as its last checkpoint had it: still streaming, the call not yet in it.
    let store = open_store(&t.config).await;
    let parts: Vec<Value> = reply
        .message
        .parts
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .filter(|p| p["type"] != "dynamic-tool")
        .collect();
    store
        .write_raw(
            sqlx::query("UPDATE messages SET status = 'streaming', status_reason = NULL, parts = ? WHERE id = ?")
                .bind(Value::Array(parts).to_string())
                .bind(reply.id.as_str()),
        )
        .await
        .unwrap();
    store.close().await;

    let f = restart(&t.config).await;
    let pending: Vec<Approval> = f.call("approvals_list", json!({ "topicId": t.topic.id })).await;
    assert!(pending.is_empty(), "no card stays that answering could not act on: {pending:?}");
    let all: Vec<Approval> = f.call("approvals_list", json!({ "topicId": t.topic.id, "all": true })).await;
    let settled = all.iter().find(|a| a.id == approval.id).unwrap();
    assert_eq!(settled.state, ApprovalState::Denied);
    assert!(settled.reason.as_deref().unwrap().contains("Colloquy stopped"), "{settled:?}");
    assert_decided_by_the_app(&f, &t.topic, &reply).await;
    let rows = f.messages(&t.topic).await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("interrupted")));
    assert_ne!(topic_status(&f, &t.topic).await, Some(protocol::TopicStatus::AwaitingApproval));

    t.server.push_script(Script::text(["Picked up again."]));
    let stream = continue_reply(&f, &t.topic, &rows[1]).await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert!(!t.workspace.path().join("never.md").exists(), "the unanswered call never ran");
    assert_eq!(f.messages(&t.topic).await[1].message.text(), "Picked up again.");
}

/// The audit log and the tool-call ledger say the app denied the call, not the user.
async fn assert_decided_by_the_app(f: &Fixture, topic: &Topic, reply: &StoredMessage) {
    let audit: Vec<protocol::tool::AuditEntry> = f.call("tool_audit_list", json!({ "topicId": topic.id })).await;
    let denial = audit.iter().find(|e| e.decision == protocol::tool::PolicyDecision::Deny).unwrap();
    assert_eq!(denial.actor, "app", "{audit:?}");
    let ledger = f.engine.inner.store.calls_of_message(reply.id.as_str()).await.unwrap();
    assert_eq!(ledger[0].decided_by.as_deref(), Some("app"), "{ledger:?}");
}

/// The same kill, but the reply's last checkpoint already held the call: recovery's denial
/// is the app's, and on Continue the model is told the call was not run and why, not that
/// the user said no.
#[tokio::test]
async fn audit_followup_b_a_denial_made_by_start_up_recovery_is_the_apps_not_the_users() {
    let t = tool_fixture().await;
    t.server.push_script(write("never.md", "x"));
    t.f.send(&t.topic, "write it").await;
    let approval = t.pending().await.remove(0);
    let reply = t.f.messages(&t.topic).await.remove(1);
    t.f.engine.shutdown().await;

    let store = open_store(&t.config).await;
    store
        .write_raw(
            sqlx::query("UPDATE messages SET status = 'streaming', status_reason = NULL WHERE id = ?")
                .bind(reply.id.as_str()),
        )
        .await
        .unwrap();
    store.close().await;

    let f = restart(&t.config).await;
    let all: Vec<Approval> = f.call("approvals_list", json!({ "topicId": t.topic.id, "all": true })).await;
    assert_eq!(all.iter().find(|a| a.id == approval.id).unwrap().state, ApprovalState::Denied);
    assert_decided_by_the_app(&f, &t.topic, &reply).await;

    t.server.push_script(Script::text(["Picked up again."]));
    let rows = f.messages(&t.topic).await;
    let stream = continue_reply(&f, &t.topic, &rows[1]).await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert!(!t.workspace.path().join("never.md").exists(), "the unanswered call never ran");
    let told = tool_messages(&t.chat_requests()[1]);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(!told[0].contains("The user denied"), "{told:?}");
    assert!(told[0].starts_with("This tool call was not run: Colloquy stopped before this question"), "{told:?}");
}

/// The same state without a crash: the last answer lands but the reply cannot go on (its
/// provider was removed meanwhile). It stops waiting for answers it already has.
#[tokio::test]
async fn a_reply_that_cannot_resume_after_its_last_answer_stops_waiting() {
    let t = tool_fixture().await;
    t.server.push_script(write("gone.md", "x"));
    t.f.send(&t.topic, "write it").await;
    let approval = t.pending().await.remove(0);
    let providers: Vec<protocol::api::Provider> = t.f.call("providers_list", json!({})).await;
    let _: Value = t.f.call("provider_delete", json!({ "providerId": providers[0].id })).await;

    let answered = t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    assert_eq!(answered.state, ApprovalState::Approved);
    let rows = t.f.messages(&t.topic).await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("interrupted")));
    assert!(!t.workspace.path().join("gone.md").exists());
}
