//! Steering: a message sent while the turn runs goes in at the next tool boundary, once.

use super::*;

// ---- steering --------------------------------------------------------------------------

fn before_tool(id: &str) -> DriverEvent {
    DriverEvent::BeforeTool { request_id: id.to_owned(), tool_use_id: Some(format!("tool-{id}")) }
}

fn steered_with(call: Call, text: &str) -> bool {
    matches!(call, Call::BeforeTool { context: Some(context), .. } if context.contains(text))
}

#[tokio::test(start_paused = true)]
async fn a_steer_goes_in_at_the_next_tool_boundary_and_its_reply_goes_on_with_the_runtimes_turn() {
    let mut h = harness();
    let turn = h.start("do the task");
    let mut peer = h.runtime.connected().await;
    assert_eq!(peer.call().await, Call::Send("do the task".into()));
    emit_all(&peer, text("Working."));
    h.host.steer("s1", "also mention bananas".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "also mention bananas"));
    peer.emit(DriverEvent::ToolResult { id: "tool-h1".into(), output: protocol::tool::ToolOutput::text("ok") });
    // The model's next call acts on the message: the reply ends just before it.
    emit_all(&peer, text("Bananas, as asked."));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, TurnOutcome::Steered);
    assert_eq!(text_of(&chunks), "Working.");
    assert_eq!(steer_markers(&chunks), ["delivered"]);

    // The inbox starts the steering message as the next turn: it is not sent again, and
    // the runtime's events go on into it.
    let turn = h.start("also mention bananas");
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Bananas, as asked.");
    peer.no_call();

    // Consumed: a later turn's boundary gets nothing.
    let turn = h.start("next");
    assert_eq!(peer.call().await, Call::Send("next".into()));
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_the_turn_never_reached_is_marked_and_runs_exactly_once_as_its_own_turn() {
    let mut h = harness();
    let turn = h.start("quick question");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    emit_all(&peer, text("Answer."));
    h.host.steer("s1", "and another thing".into());
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(steer_markers(&chunks), ["undelivered"]);

    // Its own turn (the inbox starts it): sent once, never steered into that turn.
    let turn = h.start("and another thing");
    assert_eq!(peer.call().await, Call::Send("and another thing".into()));
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(steer_markers(&chunks).is_empty());

    // Nor into any later one.
    let turn = h.start("later");
    assert_eq!(peer.call().await, Call::Send("later".into()));
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_left_over_from_a_failed_turn_never_goes_into_a_later_one() {
    let mut h = harness();
    let turn = h.start("work");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "held message".into());
    peer.emit(DriverEvent::TurnFinished {
        resume_token: None,
        input_tokens: None,
        output_tokens: None,
        cost_usd: None,
        error: Some("API Error: 500".into()),
        interrupted: false,
    });
    let (outcome, chunks) = turn.outcome().await;
    error_of(&outcome);
    assert!(steer_markers(&chunks).is_empty(), "the inbox holds it with its own note");

    // The user sends something else while the inbox holds the message.
    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Send("something else".into()));
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn a_steer_delivered_but_never_acted_on_runs_as_its_own_turn() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "stop after this".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "stop after this"));
    // The turn ends without another model call: the agent never read it.
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(steer_markers(&chunks), ["delivered", "undelivered"]);

    let turn = h.start("stop after this");
    assert_eq!(peer.call().await, Call::Send("stop after this".into()));
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn two_steers_go_in_one_reply_each_in_the_order_they_were_sent() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "first".into());
    h.host.steer("s1", "second".into());
    peer.emit(before_tool("h1"));
    assert!(steered_with(peer.call().await, "first"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("first");
    peer.emit(before_tool("h2"));
    assert!(steered_with(peer.call().await, "second"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("second");
    emit_all(&peer, text("Both done."));
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Both done.");
    peer.no_call();
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_steer_is_not_delivered() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "never mind".into());
    h.host.forget_steer("s1", "never mind");
    peer.emit(before_tool("h1"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h1".into(), context: None });
    peer.emit(finished(None));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(steer_markers(&chunks).is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_edited_steer_goes_in_as_edited_and_one_made_a_queued_message_not_at_all() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "mention pears".into());
    h.host.steer("s1", "later, maybe".into());
    h.host.replace_steer("s1", "mention pears", Some("mention apples".into()));
    h.host.replace_steer("s1", "later, maybe", None);
    peer.emit(before_tool("h1"));
    let call = peer.call().await;
    assert!(steered_with(call.clone(), "mention apples") && !steered_with(call, "pears"));
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    let turn = h.start("mention apples");
    peer.emit(before_tool("h2"));
    assert_eq!(peer.call().await, Call::BeforeTool { request_id: "h2".into(), context: None });
    peer.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn another_message_before_the_steered_reply_goes_on_ends_the_runtimes_turn_first() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    peer.emit(DriverEvent::SessionStarted { resume_token: "tok-1".into() });
    h.host.steer("s1", "steer".into());
    peer.emit(before_tool("h1"));
    peer.call().await;
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);

    // The steering message was cancelled from the inbox; something else is sent.
    let turn = h.start("something else");
    assert_eq!(peer.call().await, Call::Close, "the half-continued runtime turn is ended");
    let mut again = h.runtime.connected().await;
    assert_eq!(again.resume.as_deref(), Some("tok-1"));
    assert_eq!(again.call().await, Call::Send("something else".into()));
    again.emit(finished(None));
    assert_eq!(turn.outcome().await.0, success());
}

#[tokio::test(start_paused = true)]
async fn stop_between_a_steered_reply_and_its_continuation_ends_the_runtimes_turn() {
    let mut h = harness();
    let turn = h.start("task");
    let mut peer = h.runtime.connected().await;
    peer.call().await;
    h.host.steer("s1", "steer".into());
    peer.emit(before_tool("h1"));
    peer.call().await;
    peer.emit(DriverEvent::ModelCallStarted);
    assert_eq!(turn.outcome().await.0, TurnOutcome::Steered);
    // The continuation waits longer than the idle time: the runtime's turn is not cut.
    tokio::time::sleep(IDLE * 2).await;
    peer.no_call();
    h.host.stop("s1").await;
    assert_eq!(peer.call().await, Call::Close);
}
