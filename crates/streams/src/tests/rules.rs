//! The stream manager's delivery and status rules: multicast, pruning, nothing after the
//! terminal, status sequences, a model joining a live turn, Stop that cannot be overtaken.

use protocol::FinishReason;
use serde_json::json;
use tokio::sync::oneshot;

use super::*;

/// What a listener receives after its last terminal: detaching ends the subscription,
/// and everything the actor ever sent it comes out first.
async fn rest_after_detach(h: &Harness, listener: &str, rx: &mut Subscription) -> Vec<StreamMessage> {
    h.manager.detach(&h.topic, &ListenerId(listener.into())).await;
    let mut rest = Vec::new();
    while let Some(message) = rx.recv().await {
        rest.push(message);
    }
    rest
}

#[tokio::test]
async fn every_listener_gets_the_same_chunks_in_the_same_order() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut first, _) = h.open("w1").await;
    let mut others = Vec::new();
    for name in ["w2", "w3"] {
        let (l, rx) = h.manager.listener(ListenerId(name.into()), &h.topic);
        h.manager.attach(&h.topic, vec![], l).await;
        others.push(rx);
    }
    for t in ["a", "b", "c", "d"] {
        feed.send(token(t)).unwrap();
    }
    drop(feed);
    let reference = read_until(&mut first, is_topic_done).await;
    // The opener saw seq 1 (start) before the others attached: compare from where they joined.
    let chunks = |messages: &[StreamMessage]| -> Vec<(u64, UiChunk)> {
        messages
            .iter()
            .filter_map(|m| if let StreamMessage::Chunk(e) = m { Some((e.seq, e.chunk.clone())) } else { None })
            .collect()
    };
    for mut rx in others {
        let got = read_until(&mut rx, is_topic_done).await;
        let StreamMessage::Snapshot(snapshot) = &got[0] else { panic!("a late listener starts with a snapshot") };
        let tail: Vec<_> = chunks(&reference).into_iter().filter(|(seq, _)| *seq > snapshot.seq).collect();
        assert_eq!(chunks(&got), tail);
        assert_eq!(reconstruct(&got), "abcd");
        assert!(matches!(got.last(), Some(StreamMessage::Terminal(t)) if t.status == TerminalStatus::Success));
    }
}

#[tokio::test]
async fn a_listener_whose_owner_is_gone_is_removed_at_the_next_chunk() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut a, _) = h.open("a").await;
    let (b, b_rx) = h.manager.listener(ListenerId("b".into()), &h.topic);
    let b_probe = b.downgrade().unwrap();
    h.manager.attach(&h.topic, vec![], b).await;
    assert!(b_probe.upgrade().is_some(), "attached: the actor holds it");
    drop(b_rx);
    feed.send(token("x")).unwrap();
    let mut seen = read_until(&mut a, is_delta("x")).await;
    assert!(b_probe.upgrade().is_none(), "the actor let go of the dead listener");
    drop(feed);
    seen.extend(read_until(&mut a, is_topic_done).await);
    assert_eq!(reconstruct(&seen), "x");
}

#[tokio::test]
async fn nothing_reaches_a_listener_after_its_terminal_whether_the_reply_ends_well_fails_or_is_stopped() {
    let h = harness(StreamConfig::default()).await;

    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("ok")).unwrap();
    drop(feed);
    read_until(&mut rx, is_topic_done).await;
    assert_eq!(rest_after_detach(&h, "w1", &mut rx).await, []);

    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("half")).unwrap();
    feed.send(provider_error()).unwrap();
    let messages = read_until(&mut rx, is_topic_done).await;
    assert!(matches!(messages.last(), Some(StreamMessage::Terminal(t)) if t.status == TerminalStatus::Error));
    assert_eq!(rest_after_detach(&h, "w1", &mut rx).await, []);

    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("stopped")).unwrap();
    read_until(&mut rx, is_delta("stopped")).await;
    h.manager.abort(&h.topic).await;
    read_until(&mut rx, is_topic_done).await;
    // The model is gone with the turn: a late token has nowhere to go.
    assert!(feed.send(token("late")).is_err());
    assert_eq!(rest_after_detach(&h, "w1", &mut rx).await, []);
}

#[tokio::test]
async fn a_reply_that_fails_goes_pending_streaming_error() {
    let h = harness(StreamConfig::default()).await;
    let mut feed = h.manager.status().subscribe();
    let (model, mut rx, _) = h.open("w1").await;
    model.send(provider_error()).unwrap();
    read_until(&mut rx, is_topic_done).await;
    assert_eq!(
        statuses(&mut feed, TopicStatus::Error).await,
        [TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::Error]
    );
    assert!(h.manager.status().status_of(&h.topic).unwrap().unseen);
}

#[tokio::test]
async fn a_multi_model_turn_where_one_model_fails_goes_pending_streaming_done_once() {
    let h = harness(StreamConfig::default()).await;
    let mut feed = h.manager.status().subscribe();
    let (good, a) = gated("a", MessageId::new(), ReplySlot::New);
    let (bad, b) = gated("b", MessageId::new(), ReplySlot::New);
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("x")),
        executions: vec![a, b],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    bad.send(provider_error()).unwrap();
    // The failed model's terminal comes while the other still streams.
    let messages = read_until(&mut rx, |m| matches!(m, StreamMessage::Terminal(_))).await;
    let StreamMessage::Terminal(first) = messages.last().unwrap() else { panic!() };
    assert_eq!((first.status, first.is_topic_done), (TerminalStatus::Error, false));
    good.send(token("fine")).unwrap();
    drop(good);
    let messages = read_until(&mut rx, is_topic_done).await;
    let StreamMessage::Terminal(last) = messages.last().unwrap() else { panic!() };
    assert_eq!(last.status, TerminalStatus::Success);
    assert_eq!(
        statuses(&mut feed, TopicStatus::Done).await,
        [TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::Done]
    );
}

/// A custom runner (an agent session's driver) that asks for approval mid-reply and waits.
struct AsksForApproval {
    answered: oneshot::Receiver<()>,
}

#[async_trait::async_trait]
impl TurnRunner<ChunkSender> for AsksForApproval {
    async fn run(self: Box<Self>, _context: RunContext, sink: &mut ChunkSender) -> TurnOutcome {
        let call = "call-1".to_owned();
        let chunks = [
            UiChunk::StartStep,
            UiChunk::ToolInputAvailable {
                tool_call_id: call.clone(),
                tool_name: "Write".into(),
                input: json!({ "path": "a.txt" }),
                dynamic: Some(true),
            },
            UiChunk::ToolApprovalRequest { approval_id: "ap-1".into(), tool_call_id: call.clone() },
        ];
        for chunk in chunks {
            if sink.send(chunk).await.is_err() {
                return TurnOutcome::Paused { reason: StatusReason::UserStop };
            }
        }
        let _ = self.answered.await;
        let output = UiChunk::ToolOutputAvailable {
            tool_call_id: call,
            output: json!("written"),
            dynamic: Some(true),
            preliminary: None,
        };
        let _ = sink.send(output).await;
        let _ = sink.send(UiChunk::FinishStep).await;
        TurnOutcome::Finished { reason: FinishReason::Stop }
    }
}

#[tokio::test]
async fn a_live_reply_that_waits_for_approval_goes_awaiting_approval_then_streaming_again() {
    let h = harness(StreamConfig::default()).await;
    let mut feed = h.manager.status().subscribe();
    let (answer, answered) = oneshot::channel();
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("write it")),
        executions: vec![PreparedExecution {
            message_id: MessageId::new(),
            model_ref: ModelRef { provider_id: protocol::ProviderId("agent".into()), model: "claude".into() },
            provider_name: "Claude Code".into(),
            runner: Box::new(AsksForApproval { answered }),
            slot: ReplySlot::New,
            idle_timeout: None,
        }],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    assert_eq!(
        statuses(&mut feed, TopicStatus::AwaitingApproval).await,
        [TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::AwaitingApproval]
    );
    answer.send(()).unwrap();
    read_until(&mut rx, is_topic_done).await;
    assert_eq!(statuses(&mut feed, TopicStatus::Done).await, [TopicStatus::Streaming, TopicStatus::Done]);
}

#[tokio::test]
async fn a_model_added_to_a_live_turn_streams_beside_it_and_the_turn_ends_with_the_last() {
    let h = harness(StreamConfig::default()).await;
    let mut status = h.manager.status().subscribe();
    let (first, a) = gated("a", MessageId::new(), ReplySlot::New);
    let turn_id = TurnId::new();
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: turn_id.clone(),
        user: Some(user("x")),
        executions: vec![a],
    };
    let (l, mut opener) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    first.send(token("one ")).unwrap();
    read_until(&mut opener, is_delta("one ")).await;

    let (second, c) = gated("c", MessageId::new(), ReplySlot::New);
    let joined_id = c.message_id.clone();
    let (l, mut joiner) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    let reply = h
        .manager
        .open(PreparedTurn { topic_id: h.topic.clone(), turn_id: turn_id.clone(), user: None, executions: vec![c] }, l)
        .await
        .unwrap();
    assert_eq!(reply.turn_id, Some(turn_id));

    // Both stream at once; the added reply ends first, and the turn goes on.
    second.send(token("extra")).unwrap();
    drop(second);
    let messages = read_until(&mut joiner, |m| matches!(m, StreamMessage::Terminal(_))).await;
    let StreamMessage::Terminal(terminal) = messages.last().unwrap() else { panic!() };
    assert_eq!((&terminal.message_id, terminal.is_topic_done), (&joined_id, false));
    assert!(
        matches!(&messages[0], StreamMessage::Snapshot(s) if s.message.text() == "one "),
        "the joiner first sees the live reply"
    );
    assert!(h.manager.is_streaming(&h.topic).await);
    first.send(token("two")).unwrap();
    drop(first);
    let rest = read_until(&mut opener, is_topic_done).await;
    assert!(reconstruct(&rest).ends_with("two"));
    assert_eq!(h.store.list_messages(&h.topic).await.unwrap().len(), 3);
    // One turn, one `pending`: the added model joined without restarting the status.
    assert_eq!(
        statuses(&mut status, TopicStatus::Done).await,
        [TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::Done]
    );
}

#[tokio::test]
async fn a_send_right_after_stop_waits_its_turn_instead_of_overtaking_it() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, stopped_id) = h.open("w1").await;
    feed.send(token("partial")).unwrap();
    read_until(&mut rx, is_delta("partial")).await;

    // Stop, and a new message sent before Stop has resolved (both reach the mailbox in
    // this order: the test runtime runs spawned tasks first-in, first-out).
    let manager = h.manager.clone();
    let topic = h.topic.clone();
    let stop = tokio::spawn(async move { manager.abort(&topic).await });
    let (_next_feed, next) = gated("m", MessageId::new(), ReplySlot::New);
    let next_turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("next")),
        executions: vec![next],
    };
    let (l, _next_rx) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    let manager = h.manager.clone();
    let send = tokio::spawn(async move { manager.open(next_turn, l).await });
    let refused = send.await.unwrap();
    assert!(matches!(refused, Err(StreamError::Busy)), "the send does not overtake the stop");
    stop.await.unwrap();
    let row = h.store.get_message(&stopped_id).await.unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Paused, "partial"));
    // Stop has resolved: now the next turn goes.
    let (next_feed, next) = gated("m", MessageId::new(), ReplySlot::New);
    let next_turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("next")),
        executions: vec![next],
    };
    let (l, mut next_rx) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    h.manager.open(next_turn, l).await.unwrap();
    next_feed.send(token("fresh")).unwrap();
    drop(next_feed);
    assert_eq!(reconstruct(&read_until(&mut next_rx, is_topic_done).await), "fresh");
    drop(feed);
}
