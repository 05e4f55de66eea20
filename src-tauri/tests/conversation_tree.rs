//! The conversation tree over HTTP, on a real `colloquy serve` process and the testkit:
//! Retry keeps every version, an edit starts a branch and the old one stays switchable,
//! the model is sent the active path only, a fork copies the path and diverges, delete
//! takes what hangs below, bad requests change nothing, and a SIGKILL while a second
//! version streams keeps both versions.

#[path = "support/server.rs"]
mod server;

use std::time::Duration;

use serde_json::{Value, json};
use server::{Events, Server};
use testkit::{MockConfig, MockServer, Script};

async fn mock() -> MockServer {
    MockServer::start(MockConfig {
        port: 0,
        token_delay: Duration::from_millis(1),
        api_key: None,
        models: vec!["scripted".into()],
        ..MockConfig::default()
    })
    .await
    .unwrap()
}

/// Reads a reply stream until the topic's turn is done; the terminals it saw.
async fn finish(mut events: Events) -> Vec<Value> {
    let mut terminals = Vec::new();
    while let Some((_, event)) = events.next_event().await {
        if event["kind"] == "terminal" {
            let done = event["isTopicDone"] == true;
            terminals.push(event);
            if done {
                break;
            }
        }
    }
    terminals
}

fn text(message: &Value) -> String {
    message["message"]["parts"]
        .as_array()
        .map(|parts| parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

fn texts(path: &Value) -> Vec<String> {
    path.as_array().unwrap().iter().map(text).collect()
}

fn versions(message: &Value) -> Vec<String> {
    message["versions"]
        .as_array()
        .map(|v| v.iter().map(|id| id.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// The texts of the messages the model was sent in the last request.
fn prompt_texts(mock: &MockServer) -> Vec<String> {
    let request = mock.requests().into_iter().rev().find(|r| r.path.contains("chat/completions")).unwrap();
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .collect()
}

/// The HTTP status of a failed call, from `try_call`'s message.
fn status_of(result: Result<Value, String>) -> String {
    let err = result.expect_err("the call is refused");
    err.split_whitespace().nth(1).unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_edits_forks_and_deletes_over_http_and_a_kill_keeps_both_versions() {
    let root = tempfile::tempdir().unwrap();
    let ui = root.path().join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<!doctype html><title>Colloquy</title>").unwrap();
    let mock = mock().await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut first = Server::start(root.path(), "first").await;
    let s = &first;
    s.call(
        &client,
        "provider_create",
        json!({ "name": "Mock", "baseUrl": mock.base_url(), "defaultModel": "scripted" }),
    )
    .await;
    let topic = s.call(&client, "topic_create", json!({})).await["id"].clone();
    let list = |topic: Value| {
        let client = client.clone();
        async move { s.call(&client, "messages_list", json!({ "topicId": topic })).await }
    };

    // Retry three times: four versions of the reply, the newest shown, each switchable.
    mock.push_script(Script::text(["answer 1"]));
    finish(s.stream(&client, json!({ "topicId": topic, "text": "question" })).await).await;
    let reply_v1 = list(topic.clone()).await[1]["id"].clone();
    for n in 2..=4 {
        mock.push_script(Script::text([format!("answer {n}")]));
        let retry = json!({ "topicId": topic, "messageId": reply_v1 });
        let terminals = finish(s.stream_op(&client, "stream_retry", retry).await).await;
        assert_eq!(terminals.last().unwrap()["status"], "success");
    }
    let path = list(topic.clone()).await;
    assert_eq!(texts(&path), ["question", "answer 4"]);
    let all = versions(&path[1]);
    assert_eq!(all.len(), 4, "every regeneration is kept: {path:#}");
    assert_eq!(all[0], reply_v1);
    for (n, id) in all.iter().enumerate() {
        s.call(&client, "message_select", json!({ "topicId": topic, "messageId": id })).await;
        assert_eq!(texts(&list(topic.clone()).await)[1], format!("answer {}", n + 1));
    }
    // Version 2 stays on screen; the next turn's prompt carries it and nothing else.
    s.call(&client, "message_select", json!({ "topicId": topic, "messageId": all[1] })).await;
    mock.push_script(Script::text(["second answer"]));
    finish(s.stream(&client, json!({ "topicId": topic, "text": "follow-up" })).await).await;
    assert_eq!(prompt_texts(&mock), ["question", "answer 2", "follow-up"], "the active path only");

    // Edit the first message: a new branch with its own answer; the old one is intact.
    let path = list(topic.clone()).await;
    let question = path[0]["id"].clone();
    mock.push_script(Script::text(["edited answer"]));
    let edit = json!({ "topicId": topic, "messageId": question, "text": "question, edited" });
    finish(s.stream_op(&client, "stream_edit", edit).await).await;
    assert_eq!(prompt_texts(&mock), ["question, edited"], "an edit starts from what came before it");
    let path = list(topic.clone()).await;
    assert_eq!(texts(&path), ["question, edited", "edited answer"]);
    assert_eq!(versions(&path[0]), [question.as_str().unwrap().to_owned(), path[0]["id"].as_str().unwrap().to_owned()]);
    s.call(&client, "message_select", json!({ "topicId": topic, "messageId": question })).await;
    assert_eq!(texts(&list(topic.clone()).await), ["question", "answer 2", "follow-up", "second answer"]);

    // Bad requests are clear and change nothing.
    let before = list(topic.clone()).await;
    let reply_id = before[1]["id"].clone();
    let edit_reply = json!({ "topicId": topic, "messageId": reply_id, "text": "x" });
    assert_eq!(status_of(s.try_stream_op(&client, "stream_edit", edit_reply).await.map(|(r, _)| r)), "400");
    let other = s.call(&client, "topic_create", json!({})).await["id"].clone();
    let wrong_topic = json!({ "topicId": other, "messageId": question, "text": "x" });
    assert_eq!(status_of(s.try_stream_op(&client, "stream_edit", wrong_topic).await.map(|(r, _)| r)), "404");
    assert_eq!(
        status_of(s.try_call(&client, "message_select", json!({ "topicId": other, "messageId": question })).await),
        "404"
    );
    assert_eq!(
        status_of(s.try_call(&client, "message_delete", json!({ "topicId": topic, "messageId": "nope" })).await),
        "404"
    );
    let empty = json!({ "topicId": topic, "messageId": question, "text": "  " });
    assert_eq!(status_of(s.try_stream_op(&client, "stream_edit", empty).await.map(|(r, _)| r)), "400");
    assert_eq!(list(topic.clone()).await, before, "nothing changed");

    // Fork at the second reply: a new topic with a copy of the path, which then diverges.
    let fork = s.call(&client, "topic_fork", json!({ "topicId": topic, "messageId": before[3]["id"] })).await;
    assert_eq!(fork["forkedFrom"]["topicId"], topic);
    let copied = list(fork["id"].clone()).await;
    assert_eq!(texts(&copied), ["question", "answer 2", "follow-up", "second answer"]);
    assert!(copied.as_array().unwrap().iter().all(|m| m["id"] != before[0]["id"] && m["id"] != before[3]["id"]));
    mock.push_script(Script::text(["only in the fork"]));
    finish(s.stream(&client, json!({ "topicId": fork["id"], "text": "in the fork" })).await).await;
    assert_eq!(list(fork["id"].clone()).await.as_array().unwrap().len(), 6);
    assert_eq!(list(topic.clone()).await, before, "the origin is untouched");

    // Delete the shown version of the first reply: a neighbour is shown instead.
    s.call(&client, "message_delete", json!({ "topicId": topic, "messageId": all[1] })).await;
    let path = list(topic.clone()).await;
    assert_eq!(texts(&path)[1], "answer 3");
    assert_eq!(versions(&path[1]).len(), 3);

    // A second version streams slowly; refusals while it does, then a kill.
    let slow: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    mock.push_script(Script { chunks: Some(slow), token_delay_ms: Some(10), ..Script::default() });
    let answer3 = path[1]["id"].clone();
    let mut events = s.stream_op(&client, "stream_retry", json!({ "topicId": topic, "messageId": answer3 })).await;
    let mut streamed = 0;
    while let Some((_, event)) = events.next_event().await {
        if event["kind"] == "chunk" && event["chunk"]["type"] == "text-delta" {
            streamed += 1;
            if streamed == 80 {
                break;
            }
        }
    }
    let streaming = list(topic.clone()).await;
    let live_version = streaming[1]["id"].clone();
    assert_ne!(live_version, answer3, "the new version is the shown one while it streams");
    let edit = json!({ "topicId": topic, "messageId": question, "text": "again" });
    assert_eq!(status_of(s.try_stream_op(&client, "stream_edit", edit).await.map(|(r, _)| r)), "409");
    let delete = json!({ "topicId": topic, "messageId": live_version });
    assert_eq!(status_of(s.try_call(&client, "message_delete", delete).await), "409");
    // Switching versions never stops the stream.
    s.call(&client, "message_select", json!({ "topicId": topic, "messageId": answer3 })).await;
    let mut more = 0;
    while let Some((_, event)) = events.next_event().await {
        if event["kind"] == "chunk" && event["chunk"]["type"] == "text-delta" {
            more += 1;
            if more == 40 {
                break;
            }
        }
    }
    assert_eq!(more, 40, "the stream went on after the switch");
    s.call(&client, "message_select", json!({ "topicId": topic, "messageId": live_version })).await;
    first.kill();
    first.wait_for_exit().await;
    drop(events);
    drop(first);

    let second = Server::start(root.path(), "second").await;
    let path = second.call(&client, "messages_list", json!({ "topicId": topic })).await;
    assert_eq!(path[1]["id"], live_version);
    assert_eq!((path[1]["status"].as_str(), path[1]["statusReason"].as_str()), (Some("paused"), Some("interrupted")));
    assert!(text(&path[1]).starts_with("w0 w1 "), "the killed version kept its text: {}", text(&path[1]));
    assert_eq!(versions(&path[1]).len(), 4);
    second.call(&client, "message_select", json!({ "topicId": topic, "messageId": answer3 })).await;
    let path = second.call(&client, "messages_list", json!({ "topicId": topic })).await;
    assert_eq!((text(&path[1]).as_str(), path[1]["status"].as_str()), ("answer 3", Some("success")));
}
