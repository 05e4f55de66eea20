//! Queued messages: run after the live turn, held on failure and across a restart.

use super::*;

/// The topic's inbox once its first item is held. The dispatcher marks each hold on
/// `Inbox::changes()`, so this reads again only after a change; nothing polls the clock.
async fn first_held(f: &Fixture, topic: &Topic) -> Vec<protocol::api::InboxItem> {
    // Subscribed before the first read, so no hold falls between the two.
    let mut changes = f.engine.inner.inbox.changes();
    let wait = async {
        loop {
            let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
            if inbox.first().is_some_and(|i| i.state == protocol::api::InboxState::Held) {
                return inbox;
            }
            if changes.changed().await.is_err() {
                panic!("the inbox closed while waiting for a held item");
            }
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| panic!("timed out waiting for a held item"))
}

#[tokio::test]
async fn queued_messages_run_after_the_live_turn_steers_first_and_failures_hold_the_rest() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let slow: Vec<String> = (0..30).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": slow, "tokenDelayMs": 10 })).unwrap());
    server.push_script(Script { chunks: Some(vec!["steered".into()]), ..Script::default() });
    server.push_script(Script { chunks: Some(vec!["queued".into()]), ..Script::default() });
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "first"), listener).await.unwrap();
    let queued: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "then this", "mode": "queue" })).await;
    let _steer: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "actually, this first", "mode": "steer" })).await;
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert_eq!(inbox.iter().map(|i| i.text.as_str()).collect::<Vec<_>>(), ["actually, this first", "then this"]);

    // Both run, in order, each after the previous turn is done.
    let rows = wait_for(&f, &topic, "three turns", |rows| {
        rows.len() == 6 && rows.iter().all(|r| r.status == MessageStatus::Success)
    })
    .await;
    let users: Vec<String> =
        rows.iter().filter(|r| r.message.role == protocol::MessageRole::User).map(|r| r.message.text()).collect();
    assert_eq!(users, ["first", "actually, this first", "then this"]);
    assert_eq!(rows[3].message.text(), "steered");
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert!(inbox.is_empty(), "sent items leave the inbox: {inbox:?}");
    let _ = queued;

    // A failing turn holds what is queued behind it, with a note; releasing sends it.
    server.push_script(
        serde_json::from_value(
            json!({ "chunks": ["x ", "y ", "z "], "tokenDelayMs": 30, "fault": { "kind": "reset", "after": 2 } }),
        )
        .unwrap(),
    );
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "will fail"), listener).await.unwrap();
    let held: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "after the failure", "mode": "queue" })).await;
    let inbox = first_held(&f, &topic).await;
    assert_eq!(inbox[0].state, protocol::api::InboxState::Held);
    assert!(inbox[0].note.as_deref().unwrap_or("").contains("failed"));
    server.push_script(Script { chunks: Some(vec!["released".into()]), ..Script::default() });
    let _: protocol::api::InboxItem = f.call("inbox_release", json!({ "id": held.id })).await;
    let rows =
        wait_for(&f, &topic, "the released turn", |rows| rows.last().is_some_and(|r| r.message.text() == "released"))
            .await;
    assert_eq!(rows[rows.len() - 2].message.text(), "after the failure");
}

#[tokio::test]
async fn queued_messages_are_held_not_lost_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "test");
    let engine = Engine::open(config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let topic = f.topic().await;
    // No provider: nothing can run, but the item is stored.
    let _: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "later", "mode": "queue" })).await;
    f.engine.shutdown().await;
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].text, "later");
    assert_eq!(inbox[0].state, protocol::api::InboxState::Held);
    assert!(inbox[0].note.is_some());
}

#[tokio::test]
async fn a_queue_whose_done_the_dispatcher_missed_still_runs_after_the_feed_catches_up() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["sent".into()]), ..Script::default() });
    // An item queued behind a turn (added straight to the store, as if a turn were live).
    f.engine.inner.store.add_inbox_item(&topic.id, "stranded", protocol::api::InboxMode::Queue, None).await.unwrap();
    // The turn ends, then a burst of other topics' changes overflows the dispatcher's
    // feed before it runs (this test's runtime has one thread): the `done` is dropped and
    // the feed hands it a snapshot instead.
    let hub = f.engine.inner.streams.status();
    hub.publish(&topic.id, protocol::TopicStatus::Done);
    for i in 0..2_000 {
        hub.publish(&TopicId::from(format!("other-{i}").as_str()), protocol::TopicStatus::Streaming);
    }
    let rows = wait_for(&f, &topic, "the queued item to run", |rows| {
        rows.len() == 2 && rows[1].status == MessageStatus::Success
    })
    .await;
    assert_eq!(rows[0].message.text(), "stranded");
    assert_eq!(rows[1].message.text(), "sent");
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert!(inbox.is_empty(), "{inbox:?}");
}

#[tokio::test]
async fn stored_turns_still_refuse_a_second_copy_of_a_model_and_mixed_turns_hold_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    config.streams.grace_period = Duration::ZERO;
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    let first = f.provider(&server, "").await;
    let other: Provider = f
        .call("provider_create", json!({ "name": "Other", "baseUrl": server.base_url(), "defaultModel": "scripted" }))
        .await;
    let topic = f.topic().await;
    let a = protocol::ModelRef { provider_id: first.id.clone(), model: "scripted".into() };
    let b = protocol::ModelRef { provider_id: other.id.clone(), model: "scripted".into() };
    // Slow enough that the turn is surely still running when the next message is queued.
    server.push_script(Script::text(["o", "k"]).with_token_delay(Duration::from_millis(300)));
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 500, "body": "{}" } })).unwrap(),
    );
    let mut request = open_request(topic.id.clone(), "both");
    request.models = Some(vec![a.clone(), b]);
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(request, listener).await.unwrap();
    // Queued behind a turn where one model fails: held, not sent.
    let _: protocol::api::InboxItem =
        f.call("inbox_add", json!({ "topicId": topic.id, "text": "next", "mode": "queue" })).await;
    drain(&mut rx).await;
    let inbox = first_held(&f, &topic).await;
    let held = inbox.first().is_some_and(|i| i.state == protocol::api::InboxState::Held);
    assert!(held, "a queued message waits for the user after a partly failed turn");

    // The live turn is long evicted (grace 0), yet asking model a again is refused.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let turn_id = f.messages(&topic).await[1].turn_id.clone().unwrap();
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let err = f
        .engine
        .stream_add_model(protocol::api::AddModelRequest { topic_id: topic.id.clone(), turn_id, model: a }, listener)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert_eq!(err.message, "scripted is already answering in this turn");

    // After a restart the status feed still knows how the topic's last turn ended.
    f.engine.shutdown().await;
    let engine = Engine::open(config).await.unwrap();
    let mut feed = engine.status_subscribe();
    let Some(protocol::StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
    let status = snapshot.statuses.iter().find(|s| s.topic_id == topic.id).expect("the topic has a status");
    // Nobody looked at the topic since the turn finished: it is still unseen (audit 17).
    assert_eq!((status.status, status.unseen), (protocol::TopicStatus::Done, true));
}

#[tokio::test]
async fn a_queued_message_keeps_the_models_picked_for_it_and_a_bad_pick_is_refused_at_once() {
    let f = fixture().await;
    let server = mock(None).await;
    let (a, b) = two_models(&f, &server).await;
    let topic = f.topic().await;
    let slow: Vec<String> = (0..20).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": slow, "tokenDelayMs": 10 })).unwrap());
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "first"), listener).await.unwrap();

    // Refused in words, and nothing queued: an unknown provider, a model twice.
    let unknown = protocol::ModelRef { provider_id: protocol::ProviderId("nope".into()), model: "m".into() };
    for models in [vec![a.clone(), unknown], vec![a.clone(), a.clone()]] {
        let err = f
            .engine
            .call("inbox_add", json!({ "topicId": topic.id, "text": "x", "mode": "queue", "models": models }))
            .await
            .unwrap_err();
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("models")), "{}", err.message);
    }
    let inbox: Vec<protocol::api::InboxItem> = f.call("inbox_list", json!({ "topicId": topic.id })).await;
    assert!(inbox.is_empty(), "{inbox:?}");

    let queued: protocol::api::InboxItem = f
        .call("inbox_add", json!({ "topicId": topic.id, "text": "both of you", "mode": "queue", "models": [a, b] }))
        .await;
    assert_eq!(queued.models.as_ref().map(Vec::len), Some(2));

    // It runs after the live turn as one user message answered side by side.
    let rows = wait_for(&f, &topic, "the queued two-model turn", |rows| {
        rows.len() == 5 && rows.iter().all(|r| r.status == MessageStatus::Success)
    })
    .await;
    assert_eq!(rows[2].message.text(), "both of you");
    let models: Vec<_> = rows[3..].iter().map(|r| r.model.clone().expect("a reply names its model")).collect();
    assert_eq!(models, [a, b]);
    assert_eq!(rows[3].turn_id, rows[4].turn_id);
}
