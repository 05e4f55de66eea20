//! A tool call is known by its id (its result, its approval, its one run in the ledger), so
//! ids that come back must never make a new call pass for an old one: servers that send no
//! ids, prompt-written calls across an approval or a retry, retries of a waiting reply.

use protocol::tool::{Approval, ApprovalState};

use super::tools::{ToolFixture, call, tool_fixture, tool_messages};
use super::*;

/// The reply, as a server that sends its calls without ids would write it.
fn without_ids(mut script: Script) -> Script {
    for call in &mut script.tool_calls {
        call.id = Some(String::new());
    }
    script
}

/// The ids and states of a stored reply's tool parts.
fn tool_parts(message: &StoredMessage) -> Vec<(String, String)> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { tool_call_id, state, .. } => Some((
                tool_call_id.clone(),
                serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn distinct_ids(parts: &[(String, String)]) -> bool {
    let ids: std::collections::HashSet<&String> = parts.iter().map(|(id, _)| id).collect();
    ids.len() == parts.len()
}

/// A provider whose model has no native tool calling: calls are written in the text.
pub(super) async fn plain_model(t: &ToolFixture) -> protocol::ModelRef {
    let provider: Provider =
        t.f.call(
            "provider_create",
            json!({ "name": "Plain", "baseUrl": t.server.base_url(), "defaultModel": "plain",
                    "capabilities": { "plain": { "tools": false, "reasoning": false, "vision": false } } }),
        )
        .await;
    let _: Topic =
        t.f.call("topic_update", json!({ "id": t.topic.id, "model": { "providerId": provider.id, "model": "plain" } }))
            .await;
    protocol::ModelRef { provider_id: provider.id, model: "plain".into() }
}

pub(super) fn prompt_call(tool: &str, arguments: Value) -> Script {
    Script::text([format!("<tool_call>{}</tool_call>", json!({ "name": tool, "arguments": arguments }))])
}

/// The text of the last user message of a Chat Completions request (prompt-based results).
pub(super) fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

async fn retry(t: &ToolFixture, message_id: &protocol::MessageId) {
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    let request = protocol::api::ReplyRequest { topic_id: t.topic.id.clone(), message_id: message_id.clone() };
    t.f.engine.stream_retry(request, listener).await.unwrap();
    drain(&mut rx).await;
}

#[tokio::test]
async fn a_server_that_sends_no_call_ids_gets_every_call_of_two_steps_run() {
    let t = tool_fixture().await;
    std::fs::write(t.workspace.path().join("x.txt"), "contents of x-7c1").unwrap();
    t.server.push_script(without_ids(call("list_dir", json!({}))));
    t.server.push_script(without_ids(call("read_file", json!({ "path": "x.txt" }))));
    t.server.push_script(Script::text(["Read it."]));
    let stream = t.f.send(&t.topic, "look around").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);

    let chats = t.chat_requests();
    assert_eq!(chats.len(), 3);
    let results = tool_messages(&chats[2]);
    assert_eq!(results.len(), 2);
    assert!(results[0].contains("x.txt") && !results[0].contains("already run"), "{results:?}");
    assert!(results[1].contains("contents of x-7c1") && !results[1].contains("already run"), "{results:?}");
    // What the model is sent back pairs each result with its own call.
    let messages = chats[2]["messages"].as_array().unwrap();
    let call_ids: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let result_ids: Vec<&str> =
        messages.iter().filter(|m| m["role"] == "tool").map(|m| m["tool_call_id"].as_str().unwrap()).collect();
    assert_eq!(call_ids, result_ids);
    assert_ne!(call_ids[0], call_ids[1]);

    let rows = t.f.messages(&t.topic).await;
    let parts = tool_parts(&rows[1]);
    assert!(distinct_ids(&parts), "{parts:?}");
    assert!(parts.iter().all(|(_, state)| state == "output-available"), "{parts:?}");
}

/// The reply, as a server that numbers its calls afresh in every answer would write it.
fn numbered_from_zero(mut script: Script) -> Script {
    for (i, call) in script.tool_calls.iter_mut().enumerate() {
        call.id = Some(format!("call_{i}"));
    }
    script
}

#[tokio::test]
async fn a_server_that_reuses_call_ids_in_every_reply_gets_a_fresh_id_in_the_later_one() {
    let t = tool_fixture().await;
    std::fs::write(t.workspace.path().join("a.txt"), "first file").unwrap();
    std::fs::write(t.workspace.path().join("b.txt"), "second file").unwrap();
    for (file, text) in [("a.txt", "look at a"), ("b.txt", "now b")] {
        t.server.push_script(numbered_from_zero(call("read_file", json!({ "path": file }))));
        t.server.push_script(Script::text(["Read it."]));
        assert_eq!(terminal_status(&t.f.send(&t.topic, text).await), TerminalStatus::Success);
    }
    let rows = t.f.messages(&t.topic).await;
    let (first, second) = (tool_parts(&rows[1]), tool_parts(&rows[3]));
    assert_eq!(first[0].0, "call_0");
    assert_ne!(second[0].0, "call_0", "the conversation already has a call_0: {second:?}");
    // Each result still answers its own call in what the model is sent.
    let messages = t.chat_requests().last().unwrap()["messages"].as_array().unwrap().clone();
    let results: Vec<(&str, &str)> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap(), m["content"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].0 == "call_0" && results[0].1.contains("first file"), "{results:?}");
    assert!(results[1].0 == second[0].0 && results[1].1.contains("second file"), "{results:?}");
}

#[tokio::test]
async fn prompt_written_calls_after_an_approval_run_like_the_first() {
    let t = tool_fixture().await;
    plain_model(&t).await;
    t.server.push_script(prompt_call("write_file", json!({ "path": "w.md", "content": "w" })));
    let stream = t.f.send(&t.topic, "write then tell the time").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::AwaitingApproval);
    let approval = t.pending().await.remove(0);

    // The resumed reply's first step is step 0 of a new run: its call must not pass for
    // the approved one.
    t.server.push_script(prompt_call("list_dir", json!({})));
    t.server.push_script(Script::text(["All done."]));
    t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(std::fs::read_to_string(t.workspace.path().join("w.md")).unwrap(), "w");
    let parts = tool_parts(&rows[1]);
    assert_eq!(parts.len(), 2);
    assert!(distinct_ids(&parts), "{parts:?}");
    assert!(parts.iter().all(|(_, state)| state == "output-available"), "{parts:?}");
    let chats = t.chat_requests();
    let listing = last_user_text(&chats[2]);
    assert!(listing.contains("w.md") && !listing.contains("already run"), "{listing}");
}

#[tokio::test]
async fn a_retried_reply_runs_its_prompt_written_calls_again() {
    let t = tool_fixture().await;
    plain_model(&t).await;
    std::fs::write(t.workspace.path().join("p.txt"), "first").unwrap();
    t.server.push_script(prompt_call("read_file", json!({ "path": "p.txt" })));
    t.server.push_script(Script::text(["It says first."]));
    t.f.send(&t.topic, "read p.txt").await;
    let rows = t.settled().await;

    std::fs::write(t.workspace.path().join("p.txt"), "second").unwrap();
    t.server.push_script(prompt_call("read_file", json!({ "path": "p.txt" })));
    t.server.push_script(Script::text(["It says second."]));
    retry(&t, &rows[1].id).await;
    let rows = t.settled().await;
    assert_eq!(rows[1].message.text(), "It says second.");
    let chats = t.chat_requests();
    let result = last_user_text(&chats[3]);
    assert!(result.contains("second") && !result.contains("already run"), "a new generation's call runs: {result}");
    let parts = tool_parts(&rows[1]);
    assert_eq!(parts.len(), 1, "the retried reply holds only its own call");
    assert_eq!(parts[0].1, "output-available");
}

#[tokio::test]
async fn retrying_a_waiting_reply_denies_the_old_call_and_the_new_one_runs_once() {
    let t = tool_fixture().await;
    t.server.push_script(without_ids(call("write_file", json!({ "path": "r.md", "content": "old" }))));
    t.f.send(&t.topic, "write r.md").await;
    let old = t.pending().await.remove(0);
    let rows = t.f.messages(&t.topic).await;

    // The new generation's call comes with the same made-up id as the old one would have.
    t.server.push_script(without_ids(call("write_file", json!({ "path": "r.md", "content": "new" }))));
    retry(&t, &rows[1].id).await;
    let new = t.pending().await;
    assert_eq!(new.len(), 1, "the retried reply asks again");
    assert_ne!(new[0].id, old.id);
    assert_ne!(new[0].tool_call_id, old.tool_call_id);

    // The old question was answered "no" by the retry; answering it now changes nothing.
    let late = t.respond(json!({ "approvalId": old.id, "decision": "approve" })).await.unwrap();
    assert_eq!(late.state, ApprovalState::Denied);
    assert!(std::fs::read_to_string(t.workspace.path().join("r.md")).is_err(), "the old call never runs");

    t.server.push_script(Script::text(["Wrote the new one."]));
    t.respond(json!({ "approvalId": new[0].id, "decision": "approve" })).await.unwrap();
    let rows = t.settled().await;
    assert_eq!(rows[1].message.text(), "Wrote the new one.");
    assert_eq!(std::fs::read_to_string(t.workspace.path().join("r.md")).unwrap(), "new");
    let all: Vec<Approval> = t.f.call("approvals_list", json!({ "topicId": t.topic.id, "all": true })).await;
    let states: Vec<ApprovalState> = all.iter().map(|a| a.state).collect();
    assert_eq!(states, vec![ApprovalState::Denied, ApprovalState::Approved]);
    let parts = tool_parts(&rows[1]);
    assert_eq!(parts, vec![(new[0].tool_call_id.clone(), "output-available".to_owned())]);
}
