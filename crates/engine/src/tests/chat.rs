//! A chat turn end to end: streaming, persisted errors, abort, malformed requests, the demo
//! provider, the operation list and stalls.

use protocol::api::TopicDeletedIfEmpty;

use super::*;

#[tokio::test]
async fn a_chat_turn_streams_and_persists_with_history_in_the_prompt() {
    let f = fixture().await;
    let server = mock(Some("sk-good")).await;
    f.provider(&server, "sk-good").await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["Hello".into(), ", ".into(), "you".into()]), ..Script::default() });
    let stream = f.send(&topic, "Say hello").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);

    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[1].message.text(), "Hello, you");
    // The first message titles the topic.
    let topics = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    assert_eq!(topics[0].title, "Say hello");

    server.push_script(Script { chunks: Some(vec!["Again".into()]), ..Script::default() });
    f.send(&topic, "Once more").await;
    let requests = server.requests();
    let last = requests.iter().rev().find(|r| r.path.ends_with("/chat/completions")).unwrap();
    let prompt: Vec<String> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(prompt, vec!["Say hello", "Hello, you", "Once more"]);
    assert_eq!(last.header("authorization"), Some("Bearer sk-good"));
}

#[tokio::test]
async fn a_wrong_key_ends_in_a_persisted_authentication_error() {
    let f = fixture().await;
    let server = mock(Some("sk-good")).await;
    f.provider(&server, "sk-wrong").await;
    let topic = f.topic().await;
    let stream = f.send(&topic, "hi").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].status, MessageStatus::Error);
    let error = error_part(&rows[1]).expect("an error part");
    assert_eq!(error.message, "authentication failed — check the API key for Mock");
}

#[tokio::test]
async fn a_connection_reset_keeps_the_text_received_so_far() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let chunks = vec!["one ".to_owned(), "two ".into(), "three ".into(), "four".into()];
    server.push_script(
        serde_json::from_value(json!({ "chunks": chunks, "fault": { "kind": "reset", "after": 2 } })).unwrap(),
    );
    let stream = f.send(&topic, "hi").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].message.text(), "one two ");
    assert!(error_part(&rows[1]).is_some());
}

#[tokio::test]
async fn an_html_error_page_becomes_a_clear_error() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 502, "body": "<html><head><title>Bad Gateway</title></head></html>", "contentType": "text/html" } }))
            .unwrap(),
    );
    f.send(&topic, "hi").await;
    let rows = f.messages(&topic).await;
    let error = error_part(&rows[1]).expect("an error part");
    assert!(error.message.contains("502"), "{}", error.message);
}

#[tokio::test]
async fn abort_keeps_the_partial_reply_as_stopped() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let chunks: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": chunks, "tokenDelayMs": 20 })).unwrap());
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "go"), listener).await.unwrap();
    // Wait for some text, then stop.
    while let Some(message) = rx.recv().await {
        if matches!(&message, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::TextDelta { delta, .. } if delta == "w3 "))
        {
            break;
        }
    }
    f.engine.stream_abort(&topic.id).await.unwrap();
    let rows = f.messages(&topic).await;
    assert_eq!(rows[1].status, MessageStatus::Paused);
    assert_eq!(rows[1].status_reason.as_deref(), Some("user_stop"));
    assert!(rows[1].message.text().starts_with("w0 w1 w2 w3 "));
    assert!(rows[1].message.text().len() < chunks.concat().len());
}

#[tokio::test]
async fn malformed_requests_name_the_bad_field_and_change_nothing() {
    let f = fixture().await;
    let err = f.engine.call("provider_create", json!({ "name": "x", "defaultModel": "m" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert_eq!(err.field.as_deref(), Some("baseUrl"));
    let err = f
        .engine
        .call("provider_create", json!({ "name": "x", "baseUrl": "ftp://nope", "defaultModel": "m" }))
        .await
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("baseUrl"));
    let err = f.engine.call("topic_update", json!({ "id": 5 })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    let err = f.engine.call("topic_create", json!({ "titel": "typo" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("titel"));
    let providers: Vec<Provider> = f.call("providers_list", Value::Null).await;
    assert!(providers.is_empty());
    let topics = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    assert!(topics.is_empty());
}

#[tokio::test]
async fn unknown_topics_are_not_found() {
    let f = fixture().await;
    let missing = protocol::TopicId::new();
    let err = f.engine.call("messages_list", json!({ "topicId": missing })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &missing);
    let err = f.engine.stream_attach(&missing, vec![], listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &missing);
    let err = f.engine.stream_open(open_request(missing.clone(), "hi"), listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert_eq!(f.engine.stream_abort(&missing).await.unwrap_err().kind, ErrorKind::NotFound);
    for operation in ["topic_mark_seen", "inbox_list", "topic_delete"] {
        let err = f.engine.call(operation, json!({ "topicId": missing })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound, "{operation}");
    }
}

#[tokio::test]
async fn the_demo_provider_answers_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.demo_token_delay = Duration::from_millis(1);
    let engine = Engine::open(config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let demo: Provider = f.call("provider_demo", Value::Null).await;
    assert_eq!(demo.kind, protocol::api::ProviderKind::Demo);
    let topic = f.topic().await;
    assert_eq!(terminal_status(&f.send(&topic, "Show me some Rust").await), TerminalStatus::Success);
    let reply = f.messages(&topic).await[1].message.text();
    assert!(reply.contains("```"), "demo reply should contain a code block: {reply}");
    f.engine.shutdown().await;

    // A new process: the demo server comes back on a new port, history is intact.
    let engine = Engine::open(config).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    assert_eq!(f.messages(&topic).await.len(), 2);
    assert_eq!(terminal_status(&f.send(&topic, "Again").await), TerminalStatus::Success);
}

#[tokio::test]
async fn every_listed_operation_is_answered_and_no_other() {
    let f = fixture().await;
    for operation in OPERATIONS {
        if let Err(err) = f.engine.call(operation, json!({})).await {
            assert_ne!(err.field.as_deref(), Some("operation"), "`{operation}` is listed but unknown: {err:?}");
        }
    }
    let err = f.engine.call("no_such_thing", json!({})).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("operation"));
}

/// A reply that goes silent is stopped after the idle timeout and kept as `stalled`.
#[tokio::test]
async fn a_silent_provider_is_stopped_as_stalled_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.streams.idle_timeout = Duration::from_millis(400);
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    f.provider(&server, "").await;
    server.push_script(Script::text(["so far", " never"]).with_fault(Fault::Stall { after: 1 }));
    let topic = f.topic().await;
    let stream = f.send(&topic, "stall").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Paused);
    let rows = f.messages(&topic).await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("stalled")));
    assert_eq!(rows[1].message.text(), "so far");
}

#[tokio::test]
async fn an_untouched_topic_is_deleted_if_empty_and_one_with_a_message_or_a_queued_item_stays() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;

    let empty = f.topic().await;
    let answer: TopicDeletedIfEmpty = f.call("topic_delete_if_empty", json!({ "topicId": empty.id })).await;
    assert!(answer.deleted);
    let err = f.engine.call("topic_delete_if_empty", json!({ "topicId": empty.id })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);

    let spoken = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["hi".into()]), ..Script::default() });
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &spoken.id);
    f.engine.stream_open(open_request(spoken.id.clone(), "hello"), listener).await.unwrap();
    drain(&mut rx).await;
    let answer: TopicDeletedIfEmpty = f.call("topic_delete_if_empty", json!({ "topicId": spoken.id })).await;
    assert!(!answer.deleted);
    assert_eq!(f.messages(&spoken).await.len(), 2, "nothing in it was touched");

    let queued = f.topic().await;
    f.engine.inner.store.add_inbox_item(&queued.id, "later", protocol::api::InboxMode::Queue, None).await.unwrap();
    let answer: TopicDeletedIfEmpty = f.call("topic_delete_if_empty", json!({ "topicId": queued.id })).await;
    assert!(!answer.deleted);
    let topics = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    let ids: Vec<_> = topics.iter().map(|t| &t.id).collect();
    assert!(ids.contains(&&spoken.id) && ids.contains(&&queued.id) && !ids.contains(&&empty.id));
}

/// The next `list_changed` of the feed (statuses and path changes are skipped).
async fn next_list_change(feed: &mut streams::StatusFeed) -> protocol::ListChanged {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), feed.recv()).await.expect("told in time");
        if let Some(protocol::StatusMessage::ListChanged(changed)) = message {
            return changed;
        }
    }
}

#[tokio::test]
async fn the_topic_list_says_what_it_saw_and_windows_hear_of_each_change_to_it() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let mut feed = f.engine.status_subscribe();
    let Some(protocol::StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
    let read = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await;
    assert_eq!(read.version.epoch, snapshot.path_epoch, "one epoch names both counts");
    assert!(snapshot.list_versions.topics <= read.version.version, "nothing newer than the list: not read again");

    // Made elsewhere: told, with a version newer than the list read before.
    let topic = f.topic().await;
    let made = next_list_change(&mut feed).await;
    assert_eq!(made.list, protocol::ListName::Topics);
    assert!(made.version > read.version.version);
    let read = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await;
    assert!(read.version.version >= made.version && read.topics.iter().any(|t| t.id == topic.id));

    // The first message moves the topic up and its reply names it: both are told, and a
    // list read after the last change shows the title.
    server.push_script(Script { chunks: Some(vec!["Hi".into()]), ..Script::default() });
    f.send(&topic, "Name me").await;
    let last = f.engine.inner.streams.status().list_version().version;
    assert!(last >= made.version + 2, "the turn and the title");
    while next_list_change(&mut feed).await.version < last {}
    let read = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await;
    assert_eq!(read.version.version, last);
    assert_eq!(read.topics[0].title, "Name me");

    // A session's change is told as the sessions list's, and its list carries a version too.
    let sessions = f.call::<protocol::api::AgentSessionList>("agent_sessions_list", Value::Null).await;
    assert_eq!((sessions.version.epoch.as_str(), sessions.version.version), (read.version.epoch.as_str(), last));

    f.call::<Value>("topic_delete", json!({ "topicId": topic.id })).await;
    let gone = next_list_change(&mut feed).await;
    assert_eq!((gone.list, gone.version), (protocol::ListName::Topics, last + 1));
}
