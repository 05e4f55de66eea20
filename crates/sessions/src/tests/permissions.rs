//! Permission prompts (answers, denials, stop while one waits) and permission modes.

use super::*;

// ---- permission prompts -----------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_permission_prompt_waits_for_the_user_and_carries_edited_input_and_always_back() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("write it".into()));
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    assert_eq!(approval, "approval-t1");
    peer.no_call();

    let edited = json!({ "file_path": "/work/project/a.txt", "content": "edited" });
    let decision = Decision { approved: true, input: edited.clone(), reason: None, always: true };
    assert!(h.host.decide(&approval, decision.clone()));
    assert_eq!(
        peer.call().await,
        Call::Answer {
            request_id: "p-t1".into(),
            answer: PermissionAnswer::Allow { input: edited, always: Some("Write".into()) }
        }
    );
    assert!(!h.host.decide(&approval, decision), "a second answer finds nobody waiting");
    peer.emit(DriverEvent::ToolResult { id: "t1".into(), output: protocol::tool::ToolOutput::text("written") });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::ToolOutputAvailable { tool_call_id, .. } if tool_call_id == "t1"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_denial_tells_the_runtime_the_users_reason() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    h.host.decide(
        &approval,
        Decision { approved: false, input: json!({}), reason: Some("not there".into()), always: false },
    );
    assert_eq!(
        peer.call().await,
        Call::Answer {
            request_id: "p-t1".into(),
            answer: PermissionAnswer::Deny {
                message: "The user denied this tool call. Their reason: not there".into()
            }
        }
    );
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_prompt_the_runtime_cancels_is_not_answered_and_the_turn_goes_on() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    peer.emit(DriverEvent::PermissionCancelled { request_id: "p-t1".into() });
    emit_all(&peer, text("Never mind."));
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Never mind.");
    peer.no_call();
    let late = Decision { approved: true, input: json!({}), reason: None, always: false };
    assert!(!h.host.decide(&approval, late), "the card's answer has nobody to go to");
}

#[tokio::test(start_paused = true)]
async fn stop_while_a_prompt_waits_interrupts_the_runtime_and_keeps_the_connection() {
    let mut h = harness();
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    // The CLI withdraws its prompt, then ends the turn as interrupted.
    peer.emit(DriverEvent::PermissionCancelled { request_id: "p-t1".into() });
    peer.emit(interrupted());
    assert_eq!(turn.outcome().await.0, stopped());
    peer.no_call();
    assert!(!h.host.decide(&approval, Decision { approved: true, input: json!({}), reason: None, always: false }));

    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Send("something else".into()), "the session goes on, warm");
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 1);
}

#[tokio::test(start_paused = true)]
async fn stop_while_a_prompt_waits_closes_a_runtime_that_cannot_be_interrupted() {
    let mut h = harness();
    h.driver.quirks.lock().unwrap().interrupt_fails = true;
    let mut turn = h.start("write it");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    turn.approval_request().await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    assert_eq!(peer.call().await, Call::Close);
    assert_eq!(turn.outcome().await.0, stopped());

    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.call().await, Call::Send("again".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn stop_mid_turn_interrupts_and_the_partial_reply_stays() {
    let mut h = harness();
    let mut turn = h.start("talk");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Half a"));
    turn.chunk_until("the text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    turn.cancel.cancel();
    assert_eq!(peer.call().await, Call::Interrupt);
    peer.emit(interrupted());
    assert_eq!(turn.outcome().await.0, stopped());
}

// ---- permission modes ------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_permission_mode_change_reaches_the_live_connection_once_its_turn_is_over() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    let host = h.host.clone();
    let change = tokio::spawn(async move { host.set_permission_mode("s1", PermissionMode::AcceptEdits).await });
    tokio::task::yield_now().await;
    peer.no_call();
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(peer.call().await, Call::SetMode(PermissionMode::AcceptEdits), "after the turn, not during it");
    change.await.unwrap();

    // The engine's next turn asks for the new mode: the live connection already has it.
    let turn = h.start_as(spec(PermissionMode::AcceptEdits), "two", None);
    assert_eq!(peer.call().await, Call::Send("two".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_refused_permission_mode_change_means_a_new_connection_with_that_mode() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(finished(Some("tok-1")));
    turn.outcome().await;
    h.driver.quirks.lock().unwrap().mode_change_fails = true;
    h.host.set_permission_mode("s1", PermissionMode::Plan).await;
    assert_eq!(peer.call().await, Call::SetMode(PermissionMode::Plan));

    // Never left running under the old mode: the next turn starts a connection in plan mode.
    let turn = h.start_as(spec(PermissionMode::Plan), "two", None);
    assert_eq!(peer.call().await, Call::Close);
    let mut again = h.runtime.connected().await;
    assert_eq!((again.spec.permission_mode, again.resume.as_deref()), (PermissionMode::Plan, Some("tok-1")));
    assert_eq!(again.call().await, Call::Send("two".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}
