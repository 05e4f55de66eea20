//! What a restart keeps: replies a crash cut off come back closed and continuable, and
//! a turn that finished while the user looked elsewhere is still marked unseen.

use protocol::{MessageRole, PartState, TopicStatusEvent};
use store::{AssistantSlot, Checkpoint, NewTurn};

use super::*;

async fn statuses(engine: &Engine) -> Vec<TopicStatusEvent> {
    let mut feed = engine.status_subscribe();
    match feed.recv().await {
        Some(protocol::StatusMessage::Snapshot(snapshot)) => snapshot.statuses,
        other => panic!("a snapshot first, got {other:?}"),
    }
}

fn unseen(statuses: &[TopicStatusEvent], topic: &Topic) -> bool {
    statuses.iter().find(|s| s.topic_id == topic.id).map(|s| s.unseen).unwrap()
}

#[tokio::test]
async fn audit_17_unseen_marks_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "test");
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let server = mock(None).await;
    f.provider(&server, "").await;
    let mut topics = Vec::new();
    for text in ["one", "two", "three"] {
        let topic = f.topic().await;
        assert_eq!(terminal_status(&f.send(&topic, text).await), TerminalStatus::Success);
        topics.push(topic);
    }
    let _: Value = f.call("topic_mark_seen", json!({ "topicId": topics[1].id })).await;
    let live = live_statuses(&f.engine);
    let before: Vec<bool> = topics.iter().map(|t| unseen(&live, t)).collect();
    assert_eq!(before, [true, false, true]);
    f.engine.shutdown().await;

    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let after = statuses(&f.engine).await;
    assert_eq!(topics.iter().map(|t| unseen(&after, t)).collect::<Vec<_>>(), [true, false, true]);
    let _: Value = f.call("topic_mark_seen", json!({ "topicId": topics[0].id })).await;
    f.engine.shutdown().await;

    let engine = Engine::open(config).await.unwrap();
    let after = statuses(&engine).await;
    assert_eq!(topics.iter().map(|t| unseen(&after, t)).collect::<Vec<_>>(), [false, false, true]);
    engine.shutdown().await;
}

/// The hub's current picture, without a feed.
fn live_statuses(engine: &Engine) -> Vec<TopicStatusEvent> {
    engine.inner.streams.status().latest()
}

#[tokio::test]
async fn audit_17_a_reply_cut_off_by_a_crash_has_no_open_part_and_continue_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "test");
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let server = mock(None).await;
    let provider = f.provider(&server, "").await;
    let topic = f.topic().await;

    // What a process killed mid-reply leaves: a `streaming` row whose text part is open.
    let store = &f.engine.inner.store;
    let reply = protocol::MessageId::new();
    store
        .insert_turn(&NewTurn {
            topic_id: topic.id.clone(),
            turn_id: protocol::TurnId::new(),
            user_message_id: protocol::MessageId::new(),
            user_parts: protocol::UiMessage::user_text("", "tell me").parts,
            edit_of: None,
            assistants: vec![AssistantSlot {
                message_id: reply.clone(),
                model: protocol::ModelRef { provider_id: provider.id.clone(), model: "scripted".into() },
                metadata: json!({ "model": "scripted" }),
            }],
        })
        .await
        .unwrap();
    let parts = vec![UiPart::Text { text: "Once upon".into(), state: Some(PartState::Streaming) }];
    let message = protocol::UiMessage { id: reply.to_string(), role: MessageRole::Assistant, parts, metadata: None };
    let checkpoint =
        Checkpoint { message_id: reply.clone(), status: MessageStatus::Streaming, status_reason: None, message };
    store.write_checkpoints(&[checkpoint]).await.unwrap();
    f.engine.shutdown().await;

    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let open_parts = |row: &StoredMessage| {
        row.message
            .parts
            .iter()
            .filter(|p| {
                matches!(
                    p,
                    UiPart::Text { state: Some(PartState::Streaming), .. }
                        | UiPart::Reasoning { state: Some(PartState::Streaming), .. }
                )
            })
            .count()
    };
    let cut = f.messages(&topic).await.pop().unwrap();
    assert_eq!((cut.status, cut.status_reason.as_deref()), (MessageStatus::Paused, Some("interrupted")));
    assert_eq!(open_parts(&cut), 0, "no part is left streaming: {:?}", cut.message.parts);

    server.push_script(Script::text([" a time."]));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: reply.clone() };
    f.engine.stream_continue(request, listener).await.unwrap();
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let done = f.messages(&topic).await.pop().unwrap();
    assert_eq!(done.status, MessageStatus::Success);
    assert_eq!(open_parts(&done), 0, "{:?}", done.message.parts);
    assert!(done.message.text().starts_with("Once upon"), "{}", done.message.text());
}
