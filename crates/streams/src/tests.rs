//! Stream manager behaviour against a real SQLite file and a scripted reply whose every
//! chunk the test releases by hand (no sleeps, no races).

use super::*;
use protocol::{
    ApiError, ErrorKind, FinishReason, MessageStatus, StatusReason, StreamMessage, TerminalStatus, TopicStatus, UiChunk,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use turn::{PartWriter, RunContext, SinkClosed, TurnOutcome, TurnRunner};

mod paused_clock;
mod rules;
mod thread;

fn user(text: &str) -> UserInput {
    UserInput { message_id: MessageId::new(), parts: UiMessage::user_text("", text).parts, edit_of: None }
}

/// What a test releases into a scripted reply, as a model's stream would bring it.
enum Script {
    Text(String),
    /// How the model says it finished; the reply ends when the feed is dropped.
    Finish(FinishReason),
    /// The provider failed.
    Fail(ApiError),
}

/// The test's end of a scripted reply.
type Feed = UnboundedSender<Script>;

/// A reply written through the turn contract the way the agent loop writes one model
/// call: `start-step`, text parts, then every open part and the step closed. It ends like
/// the loop: when its feed is dropped (finished), on Stop or when nobody reads any more
/// (`user_stop`), after an idle timeout of silence (`stalled`), or on a provider error
/// (failed, with the error's part).
struct Scripted {
    rx: UnboundedReceiver<Script>,
}

fn scripted() -> (Feed, Runner) {
    let (feed, rx) = unbounded_channel();
    (feed, Box::new(Scripted { rx }))
}

fn user_stop() -> TurnOutcome {
    TurnOutcome::Paused { reason: StatusReason::UserStop }
}

async fn send_all(sink: &mut ChunkSender, chunks: Vec<UiChunk>) -> Result<(), SinkClosed> {
    for chunk in chunks {
        sink.send(chunk).await?;
    }
    Ok(())
}

impl Scripted {
    async fn play(&mut self, context: &RunContext, sink: &mut ChunkSender, writer: &mut PartWriter) -> TurnOutcome {
        if sink.send(writer.start_step()).await.is_err() {
            return user_stop();
        }
        let mut finish = FinishReason::Stop;
        loop {
            let next = tokio::select! {
                biased;
                _ = context.cancel.cancelled() => return user_stop(),
                next = tokio::time::timeout(context.idle_timeout, self.rx.recv()) => next,
            };
            match next {
                Err(_elapsed) => return TurnOutcome::Paused { reason: StatusReason::Stalled },
                Ok(None) => return TurnOutcome::Finished { reason: finish },
                Ok(Some(Script::Text(delta))) => {
                    if send_all(sink, writer.text(delta)).await.is_err() {
                        return user_stop();
                    }
                }
                Ok(Some(Script::Finish(reason))) => finish = reason,
                Ok(Some(Script::Fail(error))) => return TurnOutcome::Failed { error },
            }
        }
    }
}

#[async_trait::async_trait]
impl TurnRunner<ChunkSender> for Scripted {
    async fn run(mut self: Box<Self>, context: RunContext, sink: &mut ChunkSender) -> TurnOutcome {
        let mut writer = PartWriter::new(context.part_offset);
        let mut outcome = self.play(&context, sink, &mut writer).await;
        if send_all(sink, writer.finish_step()).await.is_err() && matches!(outcome, TurnOutcome::Finished { .. }) {
            outcome = user_stop();
        }
        if let TurnOutcome::Failed { error } = &outcome {
            let _ = send_all(sink, writer.data(UiChunk::error_part(error))).await;
            let _ = sink.send(UiChunk::Error { error_text: error.message.clone() }).await;
        }
        outcome
    }
}

/// A provider's server error, as the loop reports it.
fn provider_error() -> Script {
    Script::Fail(ApiError {
        kind: ErrorKind::Provider,
        message: "boom".into(),
        retryable: true,
        field: None,
        code: Some("server".into()),
    })
}

struct Harness {
    manager: StreamManager,
    store: Store,
    topic: TopicId,
    _dir: tempfile::TempDir,
}

async fn harness(config: StreamConfig) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("c.db")).await.unwrap();
    let topic = store.create_topic("t", None).await.unwrap().id;
    Harness { manager: StreamManager::new(store.clone(), config), store, topic, _dir: dir }
}

impl Harness {
    /// Opens a turn on a gated model; returns the token feed, the opener's receiver and the reply id.
    async fn open(&self, listener: &str) -> (Feed, Subscription, MessageId) {
        let (feed, runner) = scripted();
        let message_id = MessageId::new();
        let turn = PreparedTurn {
            topic_id: self.topic.clone(),
            turn_id: TurnId::new(),
            user: Some(user("hi")),
            executions: vec![PreparedExecution {
                message_id: message_id.clone(),
                model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: "m".into() },
                provider_name: "Fake".into(),
                runner,
                slot: ReplySlot::New,
                idle_timeout: None,
            }],
        };
        let (l, rx) = self.manager.listener(ListenerId(listener.into()), &self.topic);
        let reply = self.manager.open(turn, l).await.unwrap();
        assert!(reply.live);
        (feed, rx, message_id)
    }
}

fn token(text: &str) -> Script {
    Script::Text(text.into())
}

/// Reads messages until (and including) the first one matching `stop`.
async fn read_until(rx: &mut Subscription, stop: impl Fn(&StreamMessage) -> bool) -> Vec<StreamMessage> {
    let mut out = Vec::new();
    while let Some(message) = rx.recv().await {
        let done = stop(&message);
        out.push(message);
        if done {
            break;
        }
    }
    out
}

fn is_delta(text: &str) -> impl Fn(&StreamMessage) -> bool + '_ {
    move |m| matches!(m, StreamMessage::Chunk(e) if matches!(&e.chunk, UiChunk::TextDelta { delta, .. } if delta == text))
}

fn is_topic_done(m: &StreamMessage) -> bool {
    matches!(m, StreamMessage::Terminal(t) if t.is_topic_done)
}

/// The text a subscriber can reconstruct: snapshot text plus every later delta.
fn reconstruct(messages: &[StreamMessage]) -> String {
    let mut text = String::new();
    for message in messages {
        match message {
            StreamMessage::Snapshot(s) => text = s.message.text(),
            StreamMessage::Chunk(e) => {
                if let UiChunk::TextDelta { delta, .. } = &e.chunk {
                    text.push_str(delta);
                }
            }
            StreamMessage::Terminal(_) | StreamMessage::Lagged(_) => {}
        }
    }
    text
}

fn seqs(messages: &[StreamMessage]) -> Vec<u64> {
    messages.iter().filter_map(|m| if let StreamMessage::Chunk(e) = m { Some(e.seq) } else { None }).collect()
}

#[tokio::test]
async fn a_reply_streams_with_contiguous_seq_and_is_persisted() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    assert_eq!(h.manager.live_turns(), 1);
    for t in ["Hel", "lo ", "world"] {
        feed.send(token(t)).unwrap();
    }
    feed.send(Script::Finish(FinishReason::Stop)).unwrap();
    drop(feed);
    let messages = read_until(&mut rx, is_topic_done).await;
    let seq = seqs(&messages);
    assert_eq!(seq, (1..=seq.len() as u64).collect::<Vec<_>>());
    assert_eq!(reconstruct(&messages), "Hello world");
    let StreamMessage::Terminal(terminal) = messages.last().unwrap() else { panic!() };
    assert_eq!(terminal.status, TerminalStatus::Success);

    // Terminal is sent only after the final write: the row is already final.
    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!(row.status, MessageStatus::Success);
    assert_eq!(row.message.text(), "Hello world");
    assert!(!h.manager.is_streaming(&h.topic).await);
    assert_eq!(h.manager.live_turns(), 0);
}

#[tokio::test]
async fn attach_mid_stream_gets_snapshot_then_the_live_tail_without_gaps_or_repeats() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut opener, _) = h.open("w1").await;
    feed.send(token("one ")).unwrap();
    feed.send(token("two ")).unwrap();
    read_until(&mut opener, is_delta("two ")).await;

    let (late, mut late_rx) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    let reply = h.manager.attach(&h.topic, vec![], late).await;
    assert!(reply.live);
    feed.send(token("three")).unwrap();
    drop(feed);

    let messages = read_until(&mut late_rx, is_topic_done).await;
    let StreamMessage::Snapshot(snapshot) = &messages[0] else {
        panic!("first message must be the snapshot: {:?}", messages[0])
    };
    assert_eq!(snapshot.message.text(), "one two ");
    let tail = seqs(&messages);
    assert_eq!(tail.first(), Some(&(snapshot.seq + 1)), "tail starts right after the snapshot");
    assert!(tail.windows(2).all(|w| w[1] == w[0] + 1), "tail is contiguous: {tail:?}");
    assert_eq!(reconstruct(&messages), "one two three");

    // The opener saw everything too (multicast).
    let rest = read_until(&mut opener, is_topic_done).await;
    assert!(reconstruct(&rest).ends_with("three"));
}

#[tokio::test]
async fn detaching_the_last_listener_does_not_stop_the_stream() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    feed.send(token("kept ")).unwrap();
    read_until(&mut rx, is_delta("kept ")).await;
    h.manager.detach(&h.topic, &ListenerId("w1".into())).await;
    drop(rx);
    feed.send(token("going")).unwrap();
    drop(feed);

    // Reattach after the end: the finished turn is still attachable (grace period).
    let (again, mut again_rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    loop {
        if !h.manager.is_streaming(&h.topic).await {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(h.manager.attach(&h.topic, vec![], again).await.live);
    let messages = read_until(&mut again_rx, is_topic_done).await;
    assert_eq!(reconstruct(&messages), "kept going");
    assert_eq!(h.store.get_message(&message_id).await.unwrap().status, MessageStatus::Success);
}

#[tokio::test]
async fn abort_resolves_after_the_partial_reply_is_persisted_as_paused() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    feed.send(token("partial")).unwrap();
    read_until(&mut rx, is_delta("partial")).await;
    h.manager.abort(&h.topic).await;

    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!(row.status, MessageStatus::Paused);
    assert_eq!(row.status_reason.as_deref(), Some("user_stop"));
    assert_eq!(row.message.text(), "partial");

    let messages = read_until(&mut rx, is_topic_done).await;
    assert!(messages.iter().any(|m| matches!(m, StreamMessage::Chunk(e) if matches!(e.chunk, UiChunk::Abort { .. }))));
    let StreamMessage::Terminal(terminal) = messages.last().unwrap() else { panic!() };
    assert_eq!(terminal.status, TerminalStatus::Paused);
    // Nothing is delivered after the terminal, even if the model keeps talking.
    let _ = feed.send(token("late"));
    assert!(rx.try_recv().is_none());
}

#[tokio::test]
async fn a_second_open_while_streaming_is_refused() {
    let h = harness(StreamConfig::default()).await;
    let (_feed, _rx, _) = h.open("w1").await;
    let (feed2, runner) = scripted();
    drop(feed2);
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("again")),
        executions: vec![PreparedExecution {
            message_id: MessageId::new(),
            model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: "m".into() },
            provider_name: "Fake".into(),
            runner,
            slot: ReplySlot::New,
            idle_timeout: None,
        }],
    };
    let (l, _) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    assert!(matches!(h.manager.open(turn, l).await, Err(StreamError::Busy)));
    // The refused turn wrote nothing.
    assert_eq!(h.store.list_messages(&h.topic).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_dead_listener_is_pruned_and_the_others_keep_receiving() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut a, _) = h.open("a").await;
    let (b, b_rx) = h.manager.listener(ListenerId("b".into()), &h.topic);
    h.manager.attach(&h.topic, vec![], b).await;
    drop(b_rx);
    feed.send(token("x")).unwrap();
    drop(feed);
    let messages = read_until(&mut a, is_topic_done).await;
    assert_eq!(reconstruct(&messages), "x");
}

#[tokio::test]
async fn attach_to_a_topic_without_a_stream_is_not_live() {
    let h = harness(StreamConfig::default()).await;
    let (l, _rx) = h.manager.listener(ListenerId::unique(), &h.topic);
    assert!(!h.manager.attach(&TopicId::new(), vec![], l).await.live);
}

#[tokio::test]
async fn shutdown_persists_live_replies_as_interrupted() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    feed.send(token("half")).unwrap();
    read_until(&mut rx, is_delta("half")).await;
    h.manager.shutdown().await;
    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!(row.status, MessageStatus::Paused);
    assert_eq!(row.status_reason.as_deref(), Some("interrupted"));
    assert_eq!(row.message.text(), "half");
    drop(feed);
}

// ---- reattach with cursors, lag, status feed, multi-model, retry, continue ----

fn gated(model: &str, message_id: MessageId, slot: ReplySlot) -> (Feed, PreparedExecution) {
    let (feed, runner) = scripted();
    let execution = PreparedExecution {
        message_id,
        model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: model.into() },
        provider_name: "Fake".into(),
        runner,
        slot,
        idle_timeout: None,
    };
    (feed, execution)
}

fn cursor_of(messages: &[StreamMessage]) -> Vec<protocol::ExecutionCursor> {
    let mut cursors: Vec<protocol::ExecutionCursor> = Vec::new();
    for message in messages {
        let (id, seq) = match message {
            StreamMessage::Chunk(e) => (e.execution.execution_id.clone(), e.seq),
            StreamMessage::Snapshot(s) => (s.execution_id.clone(), s.seq),
            _ => continue,
        };
        cursors.retain(|c| c.execution_id != id);
        cursors.push(protocol::ExecutionCursor { execution_id: id, seq });
    }
    cursors
}

#[tokio::test]
async fn attach_with_a_cursor_inside_the_ring_replays_continuously() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("a")).unwrap();
    let seen = read_until(&mut rx, is_delta("a")).await;
    feed.send(token("b")).unwrap();
    feed.send(token("c")).unwrap();
    read_until(&mut rx, is_delta("c")).await;

    // A second window that had seen up to "a" comes back.
    let (l, mut late) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    assert!(h.manager.attach(&h.topic, cursor_of(&seen), l).await.live);
    drop(feed);
    let messages = read_until(&mut late, is_topic_done).await;
    assert!(!messages.iter().any(|m| matches!(m, StreamMessage::Snapshot(_))), "continuous replay needs no snapshot");
    let first = seqs(&messages)[0];
    assert_eq!(first, cursor_of(&seen)[0].seq + 1);
    assert_eq!(reconstruct(&[seen, messages].concat()), "abc");
}

#[tokio::test]
async fn attach_with_a_cursor_older_than_the_ring_rebases_on_a_snapshot() {
    let h = harness(StreamConfig { replay_capacity: 4, ..StreamConfig::default() }).await;
    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("a")).unwrap();
    let seen = read_until(&mut rx, is_delta("a")).await;
    for t in ["b", "c", "d", "e", "f", "g"] {
        feed.send(token(t)).unwrap();
    }
    read_until(&mut rx, is_delta("g")).await;

    let (l, mut late) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    h.manager.attach(&h.topic, cursor_of(&seen), l).await;
    drop(feed);
    let messages = read_until(&mut late, is_topic_done).await;
    let StreamMessage::Snapshot(snapshot) = &messages[0] else {
        panic!("ring overflow → snapshot: {:?}", messages[0])
    };
    assert_eq!(snapshot.message.text(), "abcdefg");
    assert_eq!(reconstruct(&messages), "abcdefg");
}

#[tokio::test]
async fn a_lagging_listener_is_dropped_told_so_and_catches_up_without_gaps() {
    let h = harness(StreamConfig { listener_capacity: 4, ..StreamConfig::default() }).await;
    let (feed, mut opener, _) = h.open("w1").await;
    let (slow, mut slow_rx) = h.manager.listener(ListenerId("slow".into()), &h.topic);
    h.manager.attach(&h.topic, vec![], slow).await;
    // The opener keeps up; the slow one reads nothing while ten chunks go by.
    for i in 0..10 {
        let t = format!("{i} ");
        feed.send(token(&t)).unwrap();
        read_until(&mut opener, is_delta(&t)).await;
    }
    let mut got = Vec::new();
    while let Some(message) = slow_rx.recv().await {
        got.push(message);
    }
    assert!(matches!(got.last(), Some(StreamMessage::Lagged(_))), "a dropped listener ends with a lagged notice");
    let (again, mut again_rx) = h.manager.listener(ListenerId("slow".into()), &h.topic);
    h.manager.attach(&h.topic, cursor_of(&got), again).await;
    drop(feed);
    let rest = read_until(&mut again_rx, is_topic_done).await;
    assert_eq!(reconstruct(&[got, rest].concat()), "0 1 2 3 4 5 6 7 8 9 ");
}

async fn statuses(feed: &mut StatusFeed, until: TopicStatus) -> Vec<TopicStatus> {
    let mut out = Vec::new();
    while let Some(message) = feed.recv().await {
        if let protocol::StatusMessage::Changed(event) = message {
            out.push(event.status);
            if event.status == until {
                break;
            }
        }
    }
    out
}

#[tokio::test]
async fn status_feed_follows_a_turn_and_marks_completion_unseen() {
    let h = harness(StreamConfig::default()).await;
    let mut feed = h.manager.status().subscribe();
    let (tx, mut rx, _) = h.open("w1").await;
    tx.send(token("x")).unwrap();
    drop(tx);
    read_until(&mut rx, is_topic_done).await;
    assert_eq!(
        statuses(&mut feed, TopicStatus::Done).await,
        [TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::Done]
    );
    assert!(h.manager.status().status_of(&h.topic).unwrap().unseen);
    h.manager.status().mark_seen(&h.topic);
    assert!(!h.manager.status().status_of(&h.topic).unwrap().unseen);

    // Stop → aborted. (The first change seen is the `done` that became seen.)
    let (tx, mut rx, _) = h.open("w1").await;
    tx.send(token("y")).unwrap();
    read_until(&mut rx, is_delta("y")).await;
    h.manager.abort(&h.topic).await;
    assert_eq!(
        statuses(&mut feed, TopicStatus::Aborted).await,
        [TopicStatus::Done, TopicStatus::Pending, TopicStatus::Streaming, TopicStatus::Aborted]
    );
    assert!(h.manager.status().status_of(&h.topic).unwrap().unseen);
}

#[tokio::test]
async fn stopping_one_reply_of_a_multi_model_turn_pauses_it_and_the_other_goes_on() {
    let h = harness(StreamConfig::default()).await;
    let (kept, a) = gated("a", MessageId::new(), ReplySlot::New);
    let (stopped, b) = gated("b", MessageId::new(), ReplySlot::New);
    let (kept_id, stopped_id) = (a.message_id.clone(), b.message_id.clone());
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("both")),
        executions: vec![a, b],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    kept.send(token("one ")).unwrap();
    stopped.send(token("half")).unwrap();
    read_until(&mut rx, is_delta("half")).await;

    h.manager.abort_reply(&h.topic, &stopped_id).await;
    let row = h.store.get_message(&stopped_id).await.unwrap();
    assert_eq!(
        (row.status, row.status_reason.as_deref(), row.message.text().as_str()),
        (MessageStatus::Paused, Some("user_stop"), "half")
    );
    assert!(h.manager.is_streaming(&h.topic).await, "the other model goes on");
    // Stopping a reply that is not live (or no longer) is a no-op.
    h.manager.abort_reply(&h.topic, &stopped_id).await;
    h.manager.abort_reply(&h.topic, &MessageId::new()).await;

    kept.send(token("two")).unwrap();
    drop(kept);
    let messages = read_until(&mut rx, is_topic_done).await;
    let terminals: Vec<(MessageId, TerminalStatus)> = messages
        .iter()
        .filter_map(|m| if let StreamMessage::Terminal(t) = m { Some((t.message_id.clone(), t.status)) } else { None })
        .collect();
    assert_eq!(terminals, [(stopped_id, TerminalStatus::Paused), (kept_id.clone(), TerminalStatus::Success)]);
    assert_eq!(h.store.get_message(&kept_id).await.unwrap().message.text(), "one two");
}

#[tokio::test]
async fn a_multi_model_turn_streams_every_model_and_is_done_when_one_fails() {
    let h = harness(StreamConfig::default()).await;
    let mut feed = h.manager.status().subscribe();
    let (good, a) = gated("a", MessageId::new(), ReplySlot::New);
    let (bad, b) = gated("b", MessageId::new(), ReplySlot::New);
    let failed_id = b.message_id.clone();
    let turn_id = TurnId::new();
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: turn_id.clone(),
        user: Some(user("both")),
        executions: vec![a, b],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    good.send(token("fine")).unwrap();
    bad.send(provider_error()).unwrap();
    drop(good);
    let messages = read_until(&mut rx, is_topic_done).await;
    let terminals: Vec<TerminalStatus> = messages
        .iter()
        .filter_map(|m| if let StreamMessage::Terminal(t) = m { Some(t.status) } else { None })
        .collect();
    assert_eq!(terminals.len(), 2);
    assert!(terminals.contains(&TerminalStatus::Success) && terminals.contains(&TerminalStatus::Error));
    assert_eq!(statuses(&mut feed, TopicStatus::Done).await.last(), Some(&TopicStatus::Done));
    // Per-execution seq is contiguous for each model.
    for execution in messages
        .iter()
        .filter_map(|m| if let StreamMessage::Chunk(e) = m { Some(e.execution.execution_id.clone()) } else { None })
    {
        let mine: Vec<u64> = messages
            .iter()
            .filter_map(|m| match m {
                StreamMessage::Chunk(e) if e.execution.execution_id == execution => Some(e.seq),
                _ => None,
            })
            .collect();
        assert_eq!(mine, (1..=mine.len() as u64).collect::<Vec<_>>());
    }

    // Retry the failed model: a new version of its reply; the good reply and the failed
    // version are untouched.
    let (retry_feed, retry) = gated("b", MessageId::new(), ReplySlot::Version);
    let version_id = retry.message_id.clone();
    let turn =
        PreparedTurn { topic_id: h.topic.clone(), turn_id: turn_id.clone(), user: None, executions: vec![retry] };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    retry_feed.send(token("recovered")).unwrap();
    drop(retry_feed);
    read_until(&mut rx, is_topic_done).await;
    let row = h.store.get_message(&version_id).await.unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Success, "recovered"));
    assert_eq!(h.store.get_message(&failed_id).await.unwrap().status, MessageStatus::Error, "the old version stays");
    assert_eq!(h.store.list_messages(&h.topic).await.unwrap().len(), 4, "a version is a new row");
    let shown: Vec<MessageId> = h.store.active_path(&h.topic).await.unwrap().into_iter().map(|m| m.id).collect();
    assert!(shown.contains(&version_id) && !shown.contains(&failed_id), "the new version is the active one");

    // Adding a model that already answers is refused; a new one joins the turn.
    let (_f, same) = gated("a", MessageId::new(), ReplySlot::New);
    let (l, _rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    let refused = h
        .manager
        .open(
            PreparedTurn { topic_id: h.topic.clone(), turn_id: turn_id.clone(), user: None, executions: vec![same] },
            l,
        )
        .await;
    assert!(matches!(refused, Err(StreamError::ModelInTurn(_))));
    let (extra_feed, extra) = gated("c", MessageId::new(), ReplySlot::New);
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager
        .open(PreparedTurn { topic_id: h.topic.clone(), turn_id, user: None, executions: vec![extra] }, l)
        .await
        .unwrap();
    extra_feed.send(token("third")).unwrap();
    drop(extra_feed);
    let messages = read_until(&mut rx, is_topic_done).await;
    // The joiner first sees the turn as it stands: one snapshot per existing reply.
    assert_eq!(messages.iter().filter(|m| matches!(m, StreamMessage::Snapshot(_))).count(), 4);
    assert_eq!(h.store.list_messages(&h.topic).await.unwrap().len(), 5);
}

#[tokio::test]
async fn a_paused_reply_continues_after_its_kept_text() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    feed.send(token("Once upon ")).unwrap();
    read_until(&mut rx, is_delta("Once upon ")).await;
    h.manager.abort(&h.topic).await;
    let stored = h.store.get_message(&message_id).await.unwrap();
    let turn_id = stored.turn_id.clone().unwrap();

    let slot = ReplySlot::Continue { message: stored.message.clone(), seen: stored.revision };
    let (more, execution) = gated("m", message_id.clone(), slot);
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager
        .open(PreparedTurn { topic_id: h.topic.clone(), turn_id, user: None, executions: vec![execution] }, l)
        .await
        .unwrap();
    more.send(token("a time")).unwrap();
    drop(more);
    let messages = read_until(&mut rx, is_topic_done).await;
    assert!(
        matches!(&messages[0], StreamMessage::Snapshot(s) if s.message.text() == "Once upon "),
        "{:?}",
        messages[0]
    );
    assert_eq!(reconstruct(&messages), "Once upon a time");
    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Success, "Once upon a time"));
}

#[tokio::test]
async fn a_new_version_of_a_reply_that_is_still_streaming_is_refused() {
    let h = harness(StreamConfig::default()).await;
    let (_feed, _rx, message_id) = h.open("w1").await;
    let row = h.store.get_message(&message_id).await.unwrap();
    let (_f, retry) = gated("m", MessageId::new(), ReplySlot::Version);
    let turn_id = row.turn_id.unwrap();
    let (l, _) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    let result = h
        .manager
        .open(PreparedTurn { topic_id: h.topic.clone(), turn_id, user: None, executions: vec![retry] }, l)
        .await;
    assert!(matches!(result, Err(StreamError::ReplyRunning)));
}

#[tokio::test]
async fn a_continue_prepared_from_an_older_read_of_the_reply_is_refused_and_changes_nothing() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    feed.send(token("first")).unwrap();
    read_until(&mut rx, is_delta("first")).await;
    h.manager.abort(&h.topic).await;
    drop(feed);
    // Two windows read the stopped reply and both press Continue.
    let read = h.store.get_message(&message_id).await.unwrap();
    let turn_id = read.turn_id.clone().unwrap();
    let retry = |feed_text: Option<&str>| {
        let slot = ReplySlot::Continue { message: read.message.clone(), seen: read.revision };
        let (feed, execution) = gated("m", message_id.clone(), slot);
        if let Some(text) = feed_text {
            feed.send(token(text)).unwrap();
        }
        (
            feed,
            PreparedTurn {
                topic_id: h.topic.clone(),
                turn_id: turn_id.clone(),
                user: None,
                executions: vec![execution],
            },
        )
    };
    let (feed, turn) = retry(Some("second"));
    drop(feed);
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    read_until(&mut rx, is_topic_done).await;

    let (_feed, stale) = retry(None);
    let (l, _rx) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    assert!(matches!(h.manager.open(stale, l).await, Err(StreamError::ReplyChanged)));
    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Success, "firstsecond"));
}
