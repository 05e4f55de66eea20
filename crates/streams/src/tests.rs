//! Stream manager behaviour against a real SQLite file and an in-process model whose
//! every token the test releases by hand (no sleeps, no races).

use super::*;
use protocol::{MessageStatus, StreamMessage, TerminalStatus, UiChunk};
use providers::{ChatMessage, ChatRole, CompletionEvent, CompletionStream, ProviderError, StopReason};
use tokio::sync::mpsc::{Receiver, UnboundedSender, unbounded_channel};

/// A model that streams exactly what the test sends it.
struct GatedModel {
    rx: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Result<CompletionEvent, ProviderError>>>>,
}

impl LanguageModel for GatedModel {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        let rx = self.rx.lock().unwrap().take().expect("one stream per model");
        Box::pin(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) }))
    }
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
    async fn open(
        &self,
        listener: &str,
    ) -> (UnboundedSender<Result<CompletionEvent, ProviderError>>, Receiver<StreamMessage>, MessageId) {
        let (feed, rx) = unbounded_channel();
        let model = Arc::new(GatedModel { rx: Mutex::new(Some(rx)) });
        let message_id = MessageId::new();
        let turn = PreparedTurn {
            topic_id: self.topic.clone(),
            turn_id: TurnId::new(),
            user_message_id: MessageId::new(),
            user_text: "hi".into(),
            executions: vec![PreparedExecution {
                message_id: message_id.clone(),
                model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: "m".into() },
                provider_name: "Fake".into(),
                model,
                completion: CompletionRequest {
                    model: "m".into(),
                    messages: vec![ChatMessage { role: ChatRole::User, content: "hi".into() }],
                    temperature: None,
                    max_tokens: None,
                },
            }],
        };
        let (l, rx) = self.manager.listener(ListenerId(listener.into()));
        let reply = self.manager.open(turn, l).await.unwrap();
        assert!(reply.live);
        (feed, rx, message_id)
    }
}

fn token(text: &str) -> Result<CompletionEvent, ProviderError> {
    Ok(CompletionEvent::TextDelta(text.into()))
}

/// Reads messages until (and including) the first one matching `stop`.
async fn read_until(rx: &mut Receiver<StreamMessage>, stop: impl Fn(&StreamMessage) -> bool) -> Vec<StreamMessage> {
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
            StreamMessage::Terminal(_) => {}
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
    feed.send(Ok(CompletionEvent::Finish { reason: StopReason::Stop })).unwrap();
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

    let (late, mut late_rx) = h.manager.listener(ListenerId("w2".into()));
    let reply = h.manager.attach(&h.topic, late).await;
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
    let (again, mut again_rx) = h.manager.listener(ListenerId("w1".into()));
    loop {
        if !h.manager.is_streaming(&h.topic).await {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(h.manager.attach(&h.topic, again).await.live);
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
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn a_second_open_while_streaming_is_refused() {
    let h = harness(StreamConfig::default()).await;
    let (_feed, _rx, _) = h.open("w1").await;
    let (feed2, rx2) = unbounded_channel();
    drop(feed2);
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user_message_id: MessageId::new(),
        user_text: "again".into(),
        executions: vec![PreparedExecution {
            message_id: MessageId::new(),
            model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: "m".into() },
            provider_name: "Fake".into(),
            model: Arc::new(GatedModel { rx: Mutex::new(Some(rx2)) }),
            completion: CompletionRequest { model: "m".into(), messages: vec![], temperature: None, max_tokens: None },
        }],
    };
    let (l, _) = h.manager.listener(ListenerId("w2".into()));
    assert!(matches!(h.manager.open(turn, l).await, Err(StreamError::Busy)));
    // The refused turn wrote nothing.
    assert_eq!(h.store.list_messages(&h.topic).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_dead_listener_is_pruned_and_the_others_keep_receiving() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut a, _) = h.open("a").await;
    let (b, b_rx) = h.manager.listener(ListenerId("b".into()));
    h.manager.attach(&h.topic, b).await;
    drop(b_rx);
    feed.send(token("x")).unwrap();
    drop(feed);
    let messages = read_until(&mut a, is_topic_done).await;
    assert_eq!(reconstruct(&messages), "x");
}

#[tokio::test]
async fn attach_to_a_topic_without_a_stream_is_not_live() {
    let h = harness(StreamConfig::default()).await;
    let (l, _rx) = h.manager.listener(ListenerId::unique());
    assert!(!h.manager.attach(&TopicId::new(), l).await.live);
}

#[tokio::test]
async fn finished_turns_stay_attachable_for_the_grace_period_then_are_evicted() {
    let config = StreamConfig { grace_period: Duration::from_secs(30), ..StreamConfig::default() };
    let h = harness(config).await;
    let (feed, mut rx, _) = h.open("w1").await;
    feed.send(token("done")).unwrap();
    drop(feed);
    read_until(&mut rx, is_topic_done).await;

    // Only now freeze time: SQLite work runs on its own thread, and a paused clock would
    // race ahead while waiting for it. From here on nothing touches the database.
    tokio::time::pause();
    tokio::time::sleep(Duration::from_secs(29)).await;
    let (l, _rx1) = h.manager.listener(ListenerId("w2".into()));
    assert!(h.manager.attach(&h.topic, l).await.live);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (l, _rx2) = h.manager.listener(ListenerId("w3".into()));
    assert!(!h.manager.attach(&h.topic, l).await.live);
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
