//! Several models side by side, retry and continue, and the topic's unseen status.

use super::*;

#[tokio::test]
async fn several_models_answer_side_by_side_and_each_can_be_retried_or_continued() {
    let f = fixture().await;
    let server = mock(None).await;
    let (a, b) = two_models(&f, &server).await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["from one".into()]), ..Script::default() });
    server.push_script(
        serde_json::from_value(json!({ "fault": { "kind": "status", "status": 500, "body": "{}" } })).unwrap(),
    );
    let mut request = open_request(topic.id.clone(), "Compare");
    request.models = Some(vec![a.clone(), b.clone()]);
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(request, listener).await.unwrap();
    drain(&mut rx).await;
    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 3, "one user row, one reply per model");
    let failed_at = rows.iter().position(|r| r.status == MessageStatus::Error).expect("one reply failed");
    let failed = rows[failed_at].clone();
    assert!(rows.iter().any(|r| r.status == MessageStatus::Success && r.message.text() == "from one"));
    assert_eq!(rows[1].turn_id, rows[2].turn_id);

    // Retry the failed one: a new version in its column, shown instead of the failed one
    // (which is kept); its prompt is the conversation up to the turn.
    server.push_script(Script { chunks: Some(vec!["second try".into()]), ..Script::default() });
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let retry = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: failed.id.clone() };
    f.engine.stream_retry(retry, listener).await.unwrap();
    drain(&mut rx).await;
    let rows = f.messages(&topic).await;
    assert_eq!(rows.len(), 3, "still one reply per model on screen");
    let row = rows.iter().find(|r| r.model == failed.model).unwrap();
    assert_eq!((row.status, row.message.text().as_str()), (MessageStatus::Success, "second try"));
    assert_eq!(row.versions, [failed.id.clone(), row.id.clone()], "the failed version is kept");
    assert_eq!(rows[failed_at].id, row.id, "in the failed one's column");
    let prompt = server.requests().last().unwrap().body["messages"].clone();
    assert_eq!(prompt.as_array().unwrap().len(), 1, "retry sees the user message only: {prompt}");

    // Asking a model twice in one message is a clear error.
    let mut twice = open_request(topic.id.clone(), "again");
    twice.models = Some(vec![a.clone(), a.clone()]);
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    assert_eq!(f.engine.stream_open(twice, listener).await.unwrap_err().field.as_deref(), Some("models"));
}

#[tokio::test]
async fn a_stopped_reply_continues_from_its_text_and_the_topic_status_is_unseen_until_looked_at() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let mut feed = f.engine.status_subscribe();
    let chunks: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    server.push_script(serde_json::from_value(json!({ "chunks": chunks, "tokenDelayMs": 20 })).unwrap());
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "story"), listener).await.unwrap();
    while let Some(message) = rx.recv().await {
        if matches!(&message, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::TextDelta { delta, .. } if delta == "w2 "))
        {
            break;
        }
    }
    f.engine.stream_abort(&topic.id).await.unwrap();
    let stopped = f.messages(&topic).await.pop().unwrap();
    assert_eq!(stopped.status, MessageStatus::Paused);

    server.push_script(Script { chunks: Some(vec!["THE END".into()]), ..Script::default() });
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: stopped.id.clone() };
    f.engine.stream_continue(request.clone(), listener).await.unwrap();
    drain(&mut rx).await;
    let row = f.messages(&topic).await.pop().unwrap();
    assert_eq!(row.status, MessageStatus::Success);
    assert!(row.message.text().starts_with(&stopped.message.text()));
    assert!(row.message.text().ends_with("THE END"));
    // The model was shown the kept text as its own last message.
    let prompt = server.requests().last().unwrap().body["messages"].clone();
    assert_eq!(prompt.as_array().unwrap().last().unwrap()["role"], "assistant");
    // Only a paused reply can be continued.
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    assert_eq!(f.engine.stream_continue(request, listener).await.unwrap_err().kind, ErrorKind::BadRequest);

    let mut last = None;
    while let Ok(Some(message)) = tokio::time::timeout(Duration::from_millis(200), feed.recv()).await {
        if let protocol::StatusMessage::Changed(event) = message {
            last = Some(event);
        }
    }
    let last = last.expect("status changes were published");
    assert_eq!((last.status, last.unseen), (protocol::TopicStatus::Done, true));
    f.engine.call("topic_mark_seen", json!({ "topicId": topic.id })).await.unwrap();
    let Some(protocol::StatusMessage::Changed(seen)) = feed.recv().await else { panic!("seen is published") };
    assert!(!seen.unseen);
}

/// A reply the output limit cut is marked, and Continue picks it up where it ended; the
/// finished reply loses the mark.
#[tokio::test]
async fn a_reply_cut_at_the_length_limit_can_be_continued() {
    let f = fixture().await;
    let server = mock(None).await;
    let providers = provider_per_format(&f, &server, "").await;
    let (_, anthropic) = providers.iter().find(|(format, _)| *format == ApiFormat::Anthropic).unwrap();
    let topic = topic_with(&f, anthropic).await;
    server.push_script(Script::text(["Once upon ", "a time"]).with_finish(Finish::Length));
    f.send(&topic, "tell a story").await;
    let cut = f.messages(&topic).await.pop().unwrap();
    assert_eq!((cut.status, cut.status_reason.as_deref()), (MessageStatus::Success, Some("length")));

    server.push_script(Script::text([" there was a fox."]));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let request = protocol::api::ReplyRequest { topic_id: topic.id.clone(), message_id: cut.id.clone() };
    f.engine.stream_continue(request.clone(), listener).await.unwrap();
    drain(&mut rx).await;
    let done = f.messages(&topic).await.pop().unwrap();
    assert_eq!((done.status, done.status_reason.as_deref()), (MessageStatus::Success, None));
    assert_eq!(done.message.text(), "Once upon a time there was a fox.");
    // The model saw what it wrote so far as its own last message.
    let body = server.requests().last().unwrap().body.clone();
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "assistant");

    // A reply that ended normally cannot be continued.
    let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    let err = f.engine.stream_continue(request, listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert!(err.message.contains("cut-off"), "{}", err.message);
}

#[tokio::test]
async fn one_model_of_a_side_by_side_turn_is_stopped_and_the_other_goes_on() {
    let f = fixture().await;
    let server = mock(None).await;
    let (a, b) = two_models(&f, &server).await;
    let topic = f.topic().await;
    let slow = || Script {
        chunks: Some(vec!["one ".into(), "two ".into(), "three".into()]),
        token_delay_ms: Some(150),
        ..Script::default()
    };
    server.push_script(slow());
    server.push_script(slow());
    let mut request = open_request(topic.id.clone(), "Compare");
    request.models = Some(vec![a.clone(), b.clone()]);
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(request, listener).await.unwrap();
    let stopped = f.messages(&topic).await.into_iter().find(|r| r.model.as_ref() == Some(&b)).unwrap();

    let stop = json!({ "topicId": topic.id, "messageId": stopped.id });
    f.engine.call("reply_stop", stop.clone()).await.unwrap();
    let row = f.messages(&topic).await.into_iter().find(|r| r.id == stopped.id).unwrap();
    assert_eq!((row.status, row.status_reason.as_deref()), (MessageStatus::Paused, Some("user_stop")));
    drain(&mut rx).await;
    let kept = f.messages(&topic).await.into_iter().find(|r| r.model.as_ref() == Some(&a)).unwrap();
    assert_eq!((kept.status, kept.message.text().as_str()), (MessageStatus::Success, "one two three"));

    // Stopping a reply that is no longer live changes nothing; a user message or an
    // unknown id is not a reply.
    f.engine.call("reply_stop", stop).await.unwrap();
    let user = f.messages(&topic).await[0].id.clone();
    for id in [user.to_string(), "nope".to_owned()] {
        let err = f.engine.call("reply_stop", json!({ "topicId": topic.id, "messageId": id })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound, "{id}");
    }
}
