//! The runtime's connection: warm reuse and the idle close, resume tokens, a runtime that
//! fails.

use super::*;

// ---- the warm connection and the idle timer ---------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_turn_within_the_idle_window_reuses_the_connection_which_closes_after_the_idle_time() {
    let mut h = harness();
    let turn = h.start("one");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.resume, None, "a new session starts fresh");
    assert_eq!(peer.call().await, Call::Send("one".into()));
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    emit_all(&peer, text("First."));
    peer.emit(finished(Some("tok-1")));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "First.");

    // Just inside the window: the same connection takes the next turn.
    tokio::time::sleep(IDLE - Duration::from_secs(1)).await;
    let turn = h.start("two");
    assert_eq!(peer.call().await, Call::Send("two".into()), "the warm connection took the second turn");
    emit_all(&peer, text("Second."));
    peer.emit(finished(Some("tok-1")));
    assert_eq!(turn.outcome().await.0, success());
    h.runtime.no_new_connection();
    assert_eq!(h.driver.connects(), 1);

    // The idle time counts from the last turn; then the connection closes.
    let quiet = Instant::now();
    assert_eq!(peer.call().await, Call::Close);
    let waited = quiet.elapsed();
    assert!(waited >= IDLE && waited < IDLE + Duration::from_secs(1), "closed after {waited:?}");

    // The next turn connects again, resuming the runtime's session.
    let turn = h.start("three");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-1"));
    assert_eq!(again.call().await, Call::Send("three".into()));
    again.emit(finished(Some("tok-1")));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 2);
}

#[tokio::test(start_paused = true)]
async fn after_a_restart_the_first_turn_resumes_the_stored_token() {
    let mut h = harness();
    let turn = h.start_as(spec(PermissionMode::Default), "hello again", Some("stored-token"));
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.resume.as_deref(), Some("stored-token"));
    assert_eq!(peer.call().await, Call::Send("hello again".into()));
    peer.emit(finished(Some("stored-token")));
    assert_eq!(turn.outcome().await.0, success());
}

// ---- resume tokens ---------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn resume_tokens_are_stored_before_the_turn_goes_on_also_when_it_fails() {
    let tokens = Tokens::new(0);
    let mut h = harness_with(tokens.clone());
    let mut turn = h.start("hello");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    emit_all(&peer, text("Par"));
    peer.emit(DriverEvent::TurnFinished {
        resume_token: Some("tok-2".into()),
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        error: Some("API Error: 400 bad request".into()),
        interrupted: false,
    });
    // Nothing after the token goes out until it is stored.
    let has_token = |c: &UiChunk| !resume_tokens(std::slice::from_ref(c)).is_empty();
    let held = tokio::time::timeout(Duration::from_secs(60), turn.chunk_until("a token", has_token)).await;
    assert!(held.is_err(), "the token went out before it was stored: {held:?}");
    assert!(tokens.saved().is_empty());
    tokens.permits.add_permits(1);
    let chunk = turn.chunk_until("the token", has_token).await;
    assert_eq!(resume_tokens(&[chunk]), [json!("tok-1")]);
    assert_eq!(tokens.saved(), ["tok-1"]);
    tokens.permits.add_permits(1);
    let (outcome, chunks) = turn.outcome().await;
    assert!(error_of(&outcome).message.contains("API Error: 400"));
    assert_eq!(tokens.saved(), ["tok-1", "tok-2"], "the failed turn's token is stored too");
    assert_eq!(resume_tokens(&chunks), [json!("tok-2")], "and it is on the reply");

    // The runtime goes away: the next connection resumes from the newest token.
    peer.exit("");
    tokens.permits.add_permits(10);
    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-2"));
    again.call().await;
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

// ---- a runtime that fails --------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_runtime_that_exits_mid_turn_fails_it_with_what_it_said_and_the_next_turn_starts_it_again() {
    let mut h = harness();
    let mut turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Half"));
    turn.chunk_until("the text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    peer.exit("It exited with exit code 7.\nIts error output ended with:\n  out of memory");
    let (outcome, _) = turn.outcome().await;
    let error = error_of(&outcome);
    assert_eq!(error.code.as_deref(), Some("agent"));
    assert!(error.message.starts_with("Fake agent stopped unexpectedly during the turn"), "{}", error.message);
    assert!(error.message.contains("exit code 7") && error.message.contains("out of memory"), "{}", error.message);
    assert_eq!(peer.call().await, Call::Close);

    let turn = h.start("again");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.call().await, Call::Send("again".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_runtime_that_exits_while_a_prompt_waits_fails_the_turn_with_what_it_said() {
    let mut h = harness();
    let mut turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(write_request("t1"));
    let approval = turn.approval_request().await;
    peer.exit("segfault");
    let (outcome, _) = turn.outcome().await;
    let message = &error_of(&outcome).message;
    assert!(message.contains("while waiting for an approval") && message.contains("segfault"), "{message}");
    assert!(!h.host.decide(&approval, Decision { approved: true, input: json!({}), reason: None, always: false }));
}

#[tokio::test(start_paused = true)]
async fn a_runtime_that_does_not_start_fails_the_turn_and_the_next_turn_tries_again() {
    let mut h = harness();
    h.driver.quirks.lock().unwrap().connect_errors.push_back(DriverError::NotInstalled("install it".into()));
    let (outcome, _) = h.start("hello").outcome().await;
    let error = error_of(&outcome);
    assert_eq!((error.code.as_deref(), error.message.as_str()), (Some("agent_not_installed"), "install it"));

    let turn = h.start("hello again");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("hello again".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
    assert_eq!(h.driver.connects(), 2);
}
