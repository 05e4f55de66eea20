//! Tool calls end to end: the mock model calls tools over real HTTP, the engine decides
//! with the policy, asks the user, records every step in the ledger, and the reply goes
//! on once the user answers — exactly once, across double clicks and restarts.

use protocol::tool::{Approval, ApprovalState, AuditEntry, PolicyRule, ToolInfo};

use super::*;

pub(super) struct ToolFixture {
    pub(super) f: Fixture,
    pub(super) server: MockServer,
    pub(super) topic: Topic,
    pub(super) workspace: tempfile::TempDir,
    pub(super) config: EngineConfig,
}

pub(super) async fn tool_fixture() -> ToolFixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy::none();
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    f.provider(&server, "").await;
    let workspace = tempfile::tempdir().unwrap();
    let topic = f.topic().await;
    let topic: Topic =
        f.call("topic_update", json!({ "id": topic.id, "workspace": workspace.path().to_str().unwrap() })).await;
    ToolFixture { f, server, topic, workspace, config }
}

/// A reply that only calls `tool` with `arguments`.
pub(super) fn call(tool: &str, arguments: Value) -> Script {
    Script::text(Vec::<String>::new()).with_tool_call(tool, arguments.to_string())
}

fn write(path: &str, content: &str) -> Script {
    call("write_file", json!({ "path": path, "content": content }))
}

impl ToolFixture {
    pub(super) async fn pending(&self) -> Vec<Approval> {
        self.f.call("approvals_list", json!({ "topicId": self.topic.id })).await
    }

    pub(super) async fn respond(&self, body: Value) -> Result<Approval, protocol::ApiError> {
        self.f.engine.call("tool_approval_respond", body).await.map(|v| serde_json::from_value(v).unwrap())
    }

    /// Waits until the topic's last reply settles (not live, not waiting).
    pub(super) async fn settled(&self) -> Vec<StoredMessage> {
        wait_for(&self.f, &self.topic, "the reply settles", |rows| {
            rows.last().is_some_and(|m| {
                !m.status.is_live()
                    && m.status_reason.as_deref() != Some(protocol::StatusReason::AwaitingApproval.as_str())
            })
        })
        .await
    }

    pub(super) fn chat_requests(&self) -> Vec<Value> {
        self.server.requests().into_iter().filter(|r| r.path.ends_with("/chat/completions")).map(|r| r.body).collect()
    }

    fn file(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.workspace.path().join(path)).ok()
    }
}

/// The tool messages of a Chat Completions request body.
pub(super) fn tool_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn tool_part_state(message: &StoredMessage) -> Vec<String> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { state, .. } => {
                serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_write_waits_for_approval_runs_once_despite_a_double_click_and_the_reply_goes_on() {
    let t = tool_fixture().await;
    t.server.push_script(write("notes.md", "hello\n"));
    t.server.push_script(Script::text(["Wrote notes.md."]));
    let stream = t.f.send(&t.topic, "write a note").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::AwaitingApproval);
    assert!(t.file("notes.md").is_none(), "nothing is written before the answer");

    let pending = t.pending().await;
    assert_eq!(pending.len(), 1);
    let approval = &pending[0];
    assert_eq!((approval.tool_name.as_str(), approval.state), ("write_file", ApprovalState::Pending));
    assert!(approval.preview.as_deref().unwrap().contains("+hello"), "the card shows a diff: {:?}", approval.preview);
    let rows = t.f.messages(&t.topic).await;
    assert_eq!(rows[1].status_reason.as_deref(), Some(protocol::StatusReason::AwaitingApproval.as_str()));
    assert_eq!(tool_part_state(&rows[1]), vec!["approval-requested"]);
    let status = t.f.engine.status_subscribe();
    drop(status);

    // Sending while a call waits is refused with a reason.
    let (listener, _rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    let err = t.f.engine.stream_open(open_request(t.topic.id.clone(), "and now?"), listener).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert!(err.message.contains("waiting for your approval"), "{err:?}");

    // A double click: two answers at once.
    let body = json!({ "approvalId": approval.id, "decision": "approve" });
    let (first, second) = tokio::join!(t.respond(body.clone()), t.respond(body));
    assert_eq!((first.unwrap().state, second.unwrap().state), (ApprovalState::Approved, ApprovalState::Approved));
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[1].message.text(), "Wrote notes.md.");
    assert_eq!(tool_part_state(&rows[1]), vec!["output-available"]);
    assert_eq!(t.file("notes.md").as_deref(), Some("hello\n"));

    let chats = t.chat_requests();
    assert_eq!(chats.len(), 2, "one model call for the question, one after the answer");
    assert_eq!(tool_messages(&chats[1]), vec!["created notes.md (6 bytes)".to_owned()]);
    assert!(chats[0]["tools"].as_array().unwrap().iter().any(|t| t["function"]["name"] == "write_file"));

    let audit: Vec<AuditEntry> = t.f.call("tool_audit_list", json!({})).await;
    let actors: Vec<(&str, &str)> = audit.iter().map(|e| (e.actor.as_str(), e.decision.as_str())).collect();
    assert_eq!(actors, vec![("user", "allow"), ("default", "ask")]);
    // Answering again later changes nothing.
    let again = t.respond(json!({ "approvalId": approval.id, "decision": "deny" })).await.unwrap();
    assert_eq!(again.state, ApprovalState::Approved);
    assert!(t.pending().await.is_empty());
}

#[tokio::test]
async fn a_denial_reaches_the_model_with_its_reason_and_an_edit_runs_the_edited_call() {
    let t = tool_fixture().await;
    t.server.push_script(write("a.txt", "one"));
    t.server.push_script(Script::text(["Understood."]));
    t.f.send(&t.topic, "write a").await;
    let approval = t.pending().await.remove(0);
    t.respond(json!({ "approvalId": approval.id, "decision": "deny", "reason": "not that file" })).await.unwrap();
    let rows = t.settled().await;
    assert_eq!(tool_part_state(&rows[1]), vec!["output-denied"]);
    assert!(t.file("a.txt").is_none());
    let denial = tool_messages(&t.chat_requests()[1]);
    assert_eq!(denial, vec!["The user denied this tool call. Their reason: not that file".to_owned()]);

    t.server.push_script(write("b.txt", "model's text"));
    t.server.push_script(Script::text(["Done."]));
    t.f.send(&t.topic, "write b").await;
    let approval = t.pending().await.remove(0);
    let edited = json!({ "path": "c.txt", "content": "my text" });
    let answer =
        t.respond(json!({ "approvalId": approval.id, "decision": "approve", "updatedInput": edited })).await.unwrap();
    assert_eq!(answer.input, edited);
    t.settled().await;
    assert_eq!((t.file("b.txt"), t.file("c.txt").as_deref()), (None, Some("my text")));
    let rows = t.f.messages(&t.topic).await;
    let UiPart::DynamicTool { input, .. } =
        rows[3].message.parts.iter().find(|p| matches!(p, UiPart::DynamicTool { .. })).unwrap()
    else {
        unreachable!()
    };
    assert_eq!(input.as_ref(), Some(&edited), "the stored call shows what ran");
}

#[tokio::test]
async fn a_pending_approval_survives_a_restart_and_answering_it_continues_the_turn() {
    let t = tool_fixture().await;
    t.server.push_script(write("later.md", "after restart"));
    t.f.send(&t.topic, "write later").await;
    let before = t.pending().await;
    t.f.engine.shutdown().await;

    let engine = Engine::open(t.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let mut feed = f.engine.status_subscribe();
    let Some(protocol::StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
    let status = snapshot.statuses.iter().find(|s| s.topic_id == t.topic.id).unwrap();
    assert_eq!(status.status, protocol::TopicStatus::AwaitingApproval);
    let after: Vec<Approval> = f.call("approvals_list", json!({})).await;
    assert_eq!(after, before, "the card is still there, across topics too");

    t.server.push_script(Script::text(["Written after the restart."]));
    let _: Approval =
        f.call("tool_approval_respond", json!({ "approvalId": after[0].id, "decision": "approve" })).await;
    let rows =
        wait_for(&f, &t.topic, "the resumed reply finishes", |rows| rows[1].status == MessageStatus::Success).await;
    assert_eq!(rows[1].message.text(), "Written after the restart.");
    assert_eq!(t.file("later.md").as_deref(), Some("after restart"));
}

#[tokio::test]
async fn always_for_this_topic_saves_a_rule_and_the_next_call_runs_without_asking() {
    let t = tool_fixture().await;
    t.server.push_script(write("1.txt", "1"));
    t.server.push_script(Script::text(["one"]));
    t.f.send(&t.topic, "first").await;
    let approval = t.pending().await.remove(0);
    t.respond(json!({ "approvalId": approval.id, "decision": "approve", "scope": "topic" })).await.unwrap();
    t.settled().await;
    let rules: Vec<PolicyRule> = t.f.call("tool_rules_list", json!({})).await;
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].scope, protocol::tool::RuleScope::Topic { topic_id: t.topic.id.clone() });

    t.server.push_script(write("2.txt", "2"));
    t.server.push_script(Script::text(["two"]));
    let stream = t.f.send(&t.topic, "second").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success, "no question this time");
    assert_eq!(t.file("2.txt").as_deref(), Some("2"));
    let audit: Vec<AuditEntry> = t.f.call("tool_audit_list", json!({ "limit": 1 })).await;
    assert_eq!(audit[0].actor, format!("rule:{}", rules[0].id));
}

#[tokio::test]
async fn read_only_tools_run_without_asking_and_rules_can_deny_them() {
    let t = tool_fixture().await;
    std::fs::write(t.workspace.path().join("x.txt"), "x").unwrap();
    t.server.push_script(call("list_dir", json!({})));
    t.server.push_script(Script::text(["There is x.txt."]));
    let stream = t.f.send(&t.topic, "what is here").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert!(tool_messages(&t.chat_requests()[1])[0].contains("x.txt"));

    let rule: PolicyRule = t
        .f
        .call(
            "tool_rule_create",
            json!({ "tool": "read_*", "conditions": [{ "pointer": "/path", "op": "glob", "value": "*.txt" }], "decision": "deny", "scope": { "kind": "global" } }),
        )
        .await;
    t.server.push_script(call("read_file", json!({ "path": "x.txt" })));
    t.server.push_script(Script::text(["I may not read it."]));
    t.f.send(&t.topic, "read it").await;
    let denial = tool_messages(t.chat_requests().last().unwrap());
    assert!(
        denial[1].starts_with("This tool call was not run") && denial[1].contains(&format!("rule:{}", rule.id)),
        "{denial:?}"
    );

    let bad = t
        .f
        .engine
        .call("tool_rule_create", json!({ "tool": "x", "conditions": [{ "pointer": "/a", "op": "regex", "value": "(" }], "decision": "deny", "scope": { "kind": "global" } }))
        .await
        .unwrap_err();
    assert_eq!(bad.field.as_deref(), Some("conditions.0.value"));
}

#[tokio::test]
async fn stop_while_waiting_denies_the_call_and_frees_the_topic() {
    let t = tool_fixture().await;
    t.server.push_script(write("s.txt", "s"));
    t.f.send(&t.topic, "write s").await;
    t.f.engine.stream_abort(&t.topic.id).await.unwrap();
    assert!(t.pending().await.is_empty());
    let all: Vec<Approval> = t.f.call("approvals_list", json!({ "topicId": t.topic.id, "all": true })).await;
    assert_eq!(all[0].state, ApprovalState::Denied);
    let rows = t.f.messages(&t.topic).await;
    assert_eq!((rows[1].status, rows[1].status_reason.as_deref()), (MessageStatus::Paused, Some("user_stop")));
    t.server.push_script(Script::text(["fresh"]));
    let stream = t.f.send(&t.topic, "something else").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert!(t.file("s.txt").is_none());
}

#[tokio::test]
async fn bad_answers_are_clear_errors() {
    let t = tool_fixture().await;
    let err = t.respond(json!({ "approvalId": "nope", "decision": "approve" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    let err = t.respond(json!({ "approvalId": "x", "decision": "maybe" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("decision"));
    let err = t.respond(json!({ "approvalId": "x", "decision": "approve", "updatedInput": [1] })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("updatedInput"));
}

#[tokio::test]
async fn the_tool_call_limit_pauses_and_continue_goes_on_with_a_fresh_allowance() {
    let t = tool_fixture().await;
    let assistant: protocol::api::Assistant =
        t.f.call("assistant_create", json!({ "name": "Careful", "systemPrompt": "Be careful.", "maxToolCalls": 1 }))
            .await;
    let _: Topic = t.f.call("topic_update", json!({ "id": t.topic.id, "assistantId": assistant.id })).await;
    t.server.push_script(call("current_time", json!({})));
    t.server.push_script(call("current_time", json!({})));
    t.server.push_script(Script::text(["It is late."]));
    t.f.send(&t.topic, "what time").await;
    let rows = t.settled().await;
    assert_eq!(
        (rows[1].status, rows[1].status_reason.as_deref()),
        (MessageStatus::Paused, Some(protocol::StatusReason::ToolLimit.as_str()))
    );
    assert_eq!(
        t.chat_requests()[0]["messages"][0]["content"],
        "Be careful.\n\nYou can work with the files in the user's workspace folder ".to_owned()
            + &std::fs::canonicalize(t.workspace.path()).unwrap().display().to_string()
            + " through your file tools; paths are relative to it."
    );

    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    let request = protocol::api::ReplyRequest { topic_id: t.topic.id.clone(), message_id: rows[1].id.clone() };
    t.f.engine.stream_continue(request, listener).await.unwrap();
    drain(&mut rx).await;
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert!(rows[1].message.text().ends_with("It is late."));
    assert_eq!(tool_part_state(&rows[1]), vec!["output-available", "output-available"]);
}

#[tokio::test]
async fn models_without_native_tools_call_them_through_the_prompt() {
    let t = tool_fixture().await;
    let provider: Provider =
        t.f.call(
            "provider_create",
            json!({ "name": "Plain", "baseUrl": t.server.base_url(), "defaultModel": "plain",
                    "capabilities": { "plain": { "tools": false, "reasoning": false, "vision": false } } }),
        )
        .await;
    assert!(!provider.capabilities["plain"].tools && provider.capabilities["plain"].custom);
    std::fs::write(t.workspace.path().join("p.txt"), "prompted").unwrap();
    t.server.push_script(Script::text([
        "Let me read it. <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"p.txt\"}}</tool_call>",
    ]));
    t.server.push_script(Script::text(["It says prompted."]));
    let mut request = open_request(t.topic.id.clone(), "read p.txt");
    request.model = Some(protocol::ModelRef { provider_id: provider.id, model: "plain".into() });
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_open(request, listener).await.unwrap();
    drain(&mut rx).await;
    let chats = t.chat_requests();
    assert!(chats[0].get("tools").is_none(), "no native tools");
    assert!(chats[0]["messages"][1]["content"].as_str().unwrap().contains("<tool_call>"));
    let last = chats[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert!(last["content"].as_str().unwrap().contains("prompted"), "{last}");
    let rows = t.settled().await;
    assert_eq!(rows[1].message.text(), "Let me read it. It says prompted.");
}

#[tokio::test]
async fn a_steer_during_a_tool_using_turn_yields_and_goes_next() {
    steer_during_a_tool_using_turn(false).await;
}

#[tokio::test]
async fn a_queued_message_made_a_steer_during_a_tool_using_turn_yields_and_goes_next() {
    steer_during_a_tool_using_turn(true).await;
}

/// `edited`: the message is queued first, then changed into a steering one.
async fn steer_during_a_tool_using_turn(edited: bool) {
    let t = tool_fixture().await;
    t.server.push_script(call("current_time", json!({})).with_token_delay(Duration::from_millis(400)));
    t.server.push_script(Script::text(["Switching to your new question."]));
    let (listener, _rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_open(open_request(t.topic.id.clone(), "first"), listener).await.unwrap();
    let mode = if edited { "queue" } else { "steer" };
    let item: protocol::api::InboxItem =
        t.f.call("inbox_add", json!({ "topicId": t.topic.id, "text": "actually, this", "mode": mode })).await;
    if edited {
        let _: protocol::api::InboxItem = t.f.call("inbox_update", json!({ "id": item.id, "mode": "steer" })).await;
    }
    let rows =
        wait_for(&t.f, &t.topic, "the steer runs", |rows| rows.len() == 4 && rows[3].status == MessageStatus::Success)
            .await;
    assert_eq!(
        (rows[1].status, rows[1].status_reason.as_deref()),
        (MessageStatus::Success, Some(protocol::StatusReason::Steered.as_str()))
    );
    assert_eq!(tool_part_state(&rows[1]), vec!["output-available"], "the step's tool ran before the turn yielded");
    assert_eq!(rows[2].message.text(), "actually, this");
    assert_eq!(rows[3].message.text(), "Switching to your new question.");
    let chats = t.chat_requests();
    assert_eq!(chats.len(), 2, "the yielded turn made no second model call");
    assert_eq!(tool_messages(&chats[1]).len(), 1, "the continuation sees the tool result");
}

#[tokio::test]
async fn tools_are_listed_switched_off_and_kept_out_of_requests() {
    let t = tool_fixture().await;
    let tools: Vec<ToolInfo> = t.f.call("tools_list", json!({})).await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["read_file", "list_dir", "search_files", "write_file", "edit_file", "fetch_url", "current_time"]
    );
    let write = tools.iter().find(|t| t.name == "write_file").unwrap();
    assert_eq!(write.default_decision, protocol::tool::PolicyDecision::Ask);
    t.f.engine.call("tool_set_enabled", json!({ "name": "write_file", "enabled": false })).await.unwrap();
    let err = t.f.engine.call("tool_set_enabled", json!({ "name": "nope", "enabled": false })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("name"));
    t.server.push_script(Script::text(["hi"]));
    t.f.send(&t.topic, "hello").await;
    let offered: Vec<String> = t.chat_requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!offered.contains(&"write_file".to_owned()) && offered.contains(&"read_file".to_owned()));

    // Without a workspace the file tools are not offered at all.
    let _: Topic = t.f.call("topic_update", json!({ "id": t.topic.id, "workspace": "" })).await;
    t.server.push_script(Script::text(["hi"]));
    t.f.send(&t.topic, "hello again").await;
    let offered = t.chat_requests()[1]["tools"].as_array().unwrap().len();
    assert_eq!(offered, 2, "fetch_url and current_time");
    let err = t.f.engine.call("topic_update", json!({ "id": t.topic.id, "workspace": "/" })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("workspace"));
}

#[tokio::test]
async fn a_rule_on_a_path_holds_however_the_path_is_written_and_a_topic_allow_cannot_open_it() {
    let t = tool_fixture().await;
    std::fs::create_dir(t.workspace.path().join("a")).unwrap();
    std::fs::write(t.workspace.path().join(".env"), "KEY=secret").unwrap();
    std::fs::write(t.workspace.path().join("notes.txt"), "notes").unwrap();
    let deny: PolicyRule =
        t.f.call(
            "tool_rule_create",
            json!({ "tool": "read_file", "conditions": [{ "pointer": "/path", "op": "prefix", "value": ".env" }],
                    "decision": "deny", "scope": { "kind": "global" } }),
        )
        .await;
    // What "Always for this topic" saves: a tool-wide allow in this topic.
    let _: PolicyRule =
        t.f.call(
            "tool_rule_create",
            json!({ "tool": "read_file", "decision": "allow", "scope": { "kind": "topic", "topicId": t.topic.id } }),
        )
        .await;
    let absolute = std::fs::canonicalize(t.workspace.path()).unwrap().join(".env");
    for path in ["./.env", "a/../.env", absolute.to_str().unwrap(), "notes.txt"] {
        t.server.push_script(call("read_file", json!({ "path": path })));
        t.server.push_script(Script::text(["ok"]));
        t.f.send(&t.topic, &format!("read {path}")).await;
        let result = tool_messages(t.chat_requests().last().unwrap()).pop().unwrap();
        if path == "notes.txt" {
            assert!(result.contains("notes"), "the topic's allow still works: {result}");
        } else {
            assert!(
                result.starts_with("This tool call was not run") && result.contains(&format!("rule:{}", deny.id)),
                "{path}: {result}"
            );
            assert!(!result.contains("secret"));
        }
    }
}

#[tokio::test]
async fn fetching_an_address_on_this_computer_asks_first() {
    let t = tool_fixture().await;
    let url = format!("{}/models", t.server.base_url());
    t.server.push_script(call("fetch_url", json!({ "url": url })));
    let stream = t.f.send(&t.topic, "fetch the local page").await;
    assert_eq!(
        terminal_status(&stream),
        TerminalStatus::AwaitingApproval,
        "a read-only tool asks for a private address"
    );
    let approval = t.pending().await.remove(0);
    assert_eq!(approval.tool_name, "fetch_url");
    assert!(
        approval.preview.as_deref().is_some_and(|p| p.contains("127.0.0.1") && p.contains("local network")),
        "the card says why it asks: {:?}",
        approval.preview
    );
    let audit: Vec<AuditEntry> = t.f.call("tool_audit_list", json!({ "limit": 1 })).await;
    assert_eq!((audit[0].actor.as_str(), audit[0].decision.as_str()), ("default", "ask"));
    assert!(audit[0].reason.as_deref().is_some_and(|r| r.contains("127.0.0.1")), "{:?}", audit[0].reason);

    t.server.push_script(Script::text(["Fetched."]));
    t.respond(json!({ "approvalId": approval.id, "decision": "approve", "scope": "global" })).await.unwrap();
    t.settled().await;
    let result = tool_messages(t.chat_requests().last().unwrap()).pop().unwrap();
    assert!(result.starts_with("HTTP 200"), "the approved fetch reaches it: {result}");

    // "Always" made it the user's rule: the next one runs without a card.
    t.server.push_script(call("fetch_url", json!({ "url": url })));
    t.server.push_script(Script::text(["Again."]));
    let stream = t.f.send(&t.topic, "fetch it again").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let result = tool_messages(t.chat_requests().last().unwrap()).pop().unwrap();
    assert!(result.starts_with("HTTP 200"), "{result}");
}

#[tokio::test]
async fn audit_05_always_for_a_fetch_covers_its_host_and_no_other_local_address() {
    let t = tool_fixture().await;
    let port = url::Url::parse(&t.server.base_url()).unwrap().port().unwrap();
    let approved = format!("http://127.0.0.1:{port}/v1/models");
    t.server.push_script(call("fetch_url", json!({ "url": approved })));
    let stream = t.f.send(&t.topic, "fetch the local page").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::AwaitingApproval);
    let approval = t.pending().await.remove(0);
    t.server.push_script(Script::text(["Fetched."]));
    t.respond(json!({ "approvalId": approval.id, "decision": "approve", "scope": "global" })).await.unwrap();
    t.settled().await;
    let rules: Vec<PolicyRule> = t.f.call("tool_rules_list", json!({})).await;
    assert_eq!(
        serde_json::to_value(&rules[0].conditions).unwrap(),
        json!([{ "pointer": "/host", "op": "equals", "value": "127.0.0.1" }]),
        "the rule names the approved host"
    );

    // Another address on this computer (the same server, by another name) still asks.
    t.server.push_script(call("fetch_url", json!({ "url": format!("http://localhost:{port}/v1/models") })));
    let stream = t.f.send(&t.topic, "fetch it by name").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::AwaitingApproval, "the rule covers 127.0.0.1 only");
}

#[tokio::test]
async fn edited_arguments_that_do_not_fit_the_schema_are_refused_and_the_card_stays() {
    let t = tool_fixture().await;
    t.server.push_script(write("e.txt", "model"));
    t.f.send(&t.topic, "write e").await;
    let approval = t.pending().await.remove(0);
    for (edited, problem) in [
        (json!({ "path": 5, "content": "x" }), "/path"),
        (json!({ "path": "e.txt" }), "content"),
        (json!({ "path": "e.txt", "content": "x", "mode": "append" }), "mode"),
    ] {
        let err = t
            .respond(json!({ "approvalId": approval.id, "decision": "approve", "updatedInput": edited }))
            .await
            .unwrap_err();
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("updatedInput")));
        assert!(
            err.message.contains("the edited arguments do not fit write_file: ") && err.message.contains(problem),
            "{err:?}"
        );
        assert_eq!(t.pending().await, vec![approval.clone()], "the approval stays open, unchanged");
    }
    assert!(t.chat_requests().len() == 1 && t.file("e.txt").is_none(), "nothing ran, the reply did not go on");

    // Fixed, it runs.
    t.server.push_script(Script::text(["Done."]));
    let fixed = json!({ "path": "e.txt", "content": "mine" });
    t.respond(json!({ "approvalId": approval.id, "decision": "approve", "updatedInput": fixed })).await.unwrap();
    t.settled().await;
    assert_eq!(t.file("e.txt").as_deref(), Some("mine"));
    // A bad edit sent after the answer gets the first answer back, as any second answer does.
    let again = t
        .respond(json!({ "approvalId": approval.id, "decision": "approve", "updatedInput": { "path": 1 } }))
        .await
        .unwrap();
    assert_eq!((again.state, again.input), (ApprovalState::Approved, fixed));
}

#[tokio::test]
async fn a_fetched_page_leaves_the_context_after_its_rounds_across_a_resume_and_later_turns() {
    let t = tool_fixture().await;
    let url = format!("{}/models", t.server.base_url());
    t.server.push_script(call("fetch_url", json!({ "url": url })));
    t.f.send(&t.topic, "fetch the page").await;
    let approval = t.pending().await.remove(0);
    t.server.push_script(Script::text(["Fetched."]));
    t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    t.settled().await;
    let rows = t.f.messages(&t.topic).await;
    let UiPart::DynamicTool { output: Some(output), .. } =
        rows[1].message.parts.iter().find(|p| matches!(p, UiPart::DynamicTool { .. })).unwrap()
    else {
        panic!("the fetch has an output")
    };
    assert_eq!(output["contextRounds"], 3, "the page's rounds are stored with it");

    for (question, answer) in [("q2", "A2"), ("q3", "A3"), ("q4", "A4")] {
        t.server.push_script(Script::text([answer]));
        t.f.send(&t.topic, question).await;
    }
    // The model calls after the fetch: the resumed reply's, then one per later turn.
    let pages: Vec<String> =
        t.chat_requests()[1..].iter().map(|body| tool_messages(body).pop().unwrap_or_default()).collect();
    assert_eq!(pages.len(), 4);
    for page in &pages[..3] {
        assert!(page.starts_with("HTTP 200"), "seen for its 3 rounds: {page}");
    }
    assert!(pages[3].contains("removed from the context"), "and not after: {}", pages[3]);
}

#[tokio::test]
async fn two_waiting_calls_one_answer_keeps_waiting_and_the_second_continues_once() {
    let t = tool_fixture().await;
    let both = Script::text(Vec::<String>::new())
        .with_tool_call("write_file", json!({ "path": "a.md", "content": "A" }).to_string())
        .with_tool_call("write_file", json!({ "path": "b.md", "content": "B" }).to_string());
    t.server.push_script(both.clone());
    t.f.send(&t.topic, "write a and b").await;
    let pending = t.pending().await;
    assert_eq!(pending.len(), 2);

    t.respond(json!({ "approvalId": pending[0].id, "decision": "approve" })).await.unwrap();
    let rows = t.f.messages(&t.topic).await;
    assert_eq!(
        rows[1].status_reason.as_deref(),
        Some(protocol::StatusReason::AwaitingApproval.as_str()),
        "still waiting"
    );
    assert_eq!(t.chat_requests().len(), 1, "no continuation while a call waits");
    assert!(t.file("a.md").is_none(), "nothing of the step runs before every call is decided");
    assert_eq!(t.pending().await, vec![pending[1].clone()]);

    t.server.push_script(Script::text(["Wrote a, not b."]));
    t.respond(json!({ "approvalId": pending[1].id, "decision": "deny" })).await.unwrap();
    let rows = t.settled().await;
    assert_eq!(rows[1].message.text(), "Wrote a, not b.");
    assert_eq!((t.file("a.md").as_deref(), t.file("b.md")), (Some("A"), None));
    assert_eq!(t.chat_requests().len(), 2, "exactly one continuation");

    // Both answered at the same moment ("Allow all"): still exactly one continuation.
    for round in 0..3 {
        let before = t.chat_requests().len();
        t.server.push_script(both.clone());
        t.server.push_script(Script::text(["Both written."]));
        t.f.send(&t.topic, &format!("again {round}")).await;
        let pending = t.pending().await;
        let answer = |id: &str| t.respond(json!({ "approvalId": id, "decision": "approve" }));
        let (a, b) = tokio::join!(answer(&pending[0].id), answer(&pending[1].id));
        assert_eq!((a.unwrap().state, b.unwrap().state), (ApprovalState::Approved, ApprovalState::Approved));
        let rows = t.settled().await;
        assert_eq!(rows.last().unwrap().message.text(), "Both written.");
        assert_eq!(t.chat_requests().len(), before + 2, "one question, one continuation");
    }
}

#[tokio::test]
async fn arguments_that_do_not_fit_get_one_repair_round_over_http_then_the_error_stands() {
    let t = tool_fixture().await;
    std::fs::write(t.workspace.path().join("r.txt"), "repaired").unwrap();
    t.server.push_script(call("read_file", json!({ "path": 5 })));
    t.server.push_script(call("read_file", json!({ "path": "r.txt" })));
    t.server.push_script(Script::text(["It says repaired."]));
    let stream = t.f.send(&t.topic, "read r.txt").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let chats = t.chat_requests();
    let error = tool_messages(&chats[1]).pop().unwrap();
    assert!(
        error.starts_with("invalid arguments for read_file: /path: 5 is not of type \"string\"")
            && error.contains("Fix them and call the tool again"),
        "the model is told what does not fit: {error}"
    );
    assert_eq!(tool_messages(&chats[2]).pop().unwrap().trim_end(), "     1\trepaired");
    let rows = t.f.messages(&t.topic).await;
    assert_eq!(tool_part_state(&rows[1]), vec!["output-error", "output-available"]);

    // Wrong twice in a row: the reply ends with the error, no third model call.
    t.server.push_script(call("read_file", json!({ "path": 5 })));
    t.server.push_script(call("read_file", json!({ "file": "r.txt" })));
    t.server.push_script(Script::text(["never asked"]));
    let stream = t.f.send(&t.topic, "read it again").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    assert_eq!(t.chat_requests().len(), 5, "one repair round, then no more");
    let rows = t.f.messages(&t.topic).await;
    assert_eq!(rows[3].status, MessageStatus::Error);
    let error = error_part(&rows[3]).unwrap();
    assert!(error.message.contains("kept sending tool calls that do not fit"), "{error:?}");
    assert_eq!(tool_part_state(&rows[3]), vec!["output-error", "output-error"]);
}

#[tokio::test]
async fn prompt_written_calls_with_bad_arguments_are_repaired_the_same_way() {
    let t = tool_fixture().await;
    super::call_ids::plain_model(&t).await;
    std::fs::write(t.workspace.path().join("p.txt"), "prompted").unwrap();
    t.server.push_script(super::call_ids::prompt_call("read_file", json!({ "path": ["p.txt"] })));
    t.server.push_script(Script::text(["<tool_call>{not json</tool_call>"]));
    let stream = t.f.send(&t.topic, "read p.txt").await;
    // Two bad rounds in a row end the reply, as with native calls.
    assert_eq!(terminal_status(&stream), TerminalStatus::Error);
    let chats = t.chat_requests();
    assert_eq!(chats.len(), 2);
    let first = super::call_ids::last_user_text(&chats[1]);
    assert!(
        first.contains("error=\"true\"") && first.contains("invalid arguments for read_file: /path:"),
        "the schema problem comes back as a tool result: {first}"
    );
    let rows = t.f.messages(&t.topic).await;
    assert!(error_part(&rows[1]).unwrap().message.contains("kept sending tool calls that do not fit"));

    // One bad round, then a good call: it runs.
    t.server.push_script(super::call_ids::prompt_call("read_file", json!({ "path": 7 })));
    t.server.push_script(super::call_ids::prompt_call("read_file", json!({ "path": "p.txt" })));
    t.server.push_script(Script::text(["It says prompted."]));
    let stream = t.f.send(&t.topic, "read p.txt again").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let chats = t.chat_requests();
    let repaired = super::call_ids::last_user_text(chats.last().unwrap());
    assert!(repaired.contains("prompted") && !repaired.contains("error=\"true\""), "{repaired}");
    let rows = t.f.messages(&t.topic).await;
    assert_eq!(rows[3].message.text(), "It says prompted.");
    assert_eq!(tool_part_state(&rows[3]), vec!["output-error", "output-available"]);
}
