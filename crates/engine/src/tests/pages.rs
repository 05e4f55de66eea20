//! `messages_page`: the active path a page of whole turns at a time, newest first, and
//! clear errors for a bad size or cursor.

use protocol::api::MessagesPage;

use super::*;

#[tokio::test]
async fn pages_join_into_the_conversation_and_bad_requests_say_what_is_wrong() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    for i in 0..3 {
        server.push_script(Script { chunks: Some(vec![format!("answer {i}")]), ..Script::default() });
        f.send(&topic, &format!("question {i}")).await;
    }
    let all = f.messages(&topic).await;

    let last: MessagesPage = f.call("messages_page", json!({ "topicId": topic.id, "turns": 2 })).await;
    let texts: Vec<String> = last.messages.iter().map(|m| m.message.text()).collect();
    assert_eq!(texts, ["question 1", "answer 1", "question 2", "answer 2"]);
    assert_eq!(last.older.as_ref(), Some(&all[2].id));
    let first: MessagesPage =
        f.call("messages_page", json!({ "topicId": topic.id, "before": last.older, "turns": 2 })).await;
    assert_eq!(first.messages, all[..2]);
    assert_eq!(first.older, None);
    // Without a size: the default page, here the whole (short) conversation.
    let whole: MessagesPage = f.call("messages_page", json!({ "topicId": topic.id })).await;
    assert_eq!(whole.messages, all);

    for turns in [0, 501] {
        let err = f.engine.call("messages_page", json!({ "topicId": topic.id, "turns": turns })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadRequest, "{turns}");
        assert!(err.message.contains("1 to 500 turns"), "{}", err.message);
    }
    // A reply is not a cursor, nor is a message that does not exist.
    for cursor in [all[1].id.to_string(), protocol::MessageId::new().to_string()] {
        let err = f.engine.call("messages_page", json!({ "topicId": topic.id, "before": cursor })).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
    }
    let err = f.engine.call("messages_page", json!({ "topicId": protocol::TopicId::new() })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let err = f.engine.call("messages_page", json!({ "topicId": topic.id, "cursor": "x" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
}
