//! MCP tools in chats: a real `server-everything` and the `recorder.mjs` fixture (which
//! writes down every message it receives) configured through the engine's operations,
//! their tools offered to the model, approved, stopped and switched off like any other
//! tool; their secrets kept out of the database and the UI.

use std::path::{Path, PathBuf};

use protocol::mcp::{McpSecretName, McpServer, McpState, McpTransport};
use protocol::tool::{Approval, ToolInfo};

use testkit::outside::{free_port, received, received_until, until_listening};

use super::tools::*;
use super::*;

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers")
}

fn everything() -> Value {
    let bin = servers_dir().join("node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "run `cargo xtask setup` to install the test MCP servers");
    json!({ "kind": "stdio", "command": bin.to_str().unwrap(), "args": ["stdio"] })
}

fn recorder_script() -> String {
    servers_dir().join("fixtures/recorder.mjs").to_string_lossy().into_owned()
}

/// The recorder over stdio, writing what it receives to `log`, with more variables.
fn recorder(log: &Path, env: Value) -> Value {
    let mut vars = json!({ "FIXTURE_LOG": log.to_str().unwrap() });
    vars.as_object_mut().unwrap().extend(env.as_object().unwrap().clone());
    json!({ "kind": "stdio", "command": "node", "args": [recorder_script()], "env": vars })
}

fn calls_of(log: &Path, tool: &str) -> usize {
    received(log)
        .iter()
        .filter(|e| e["message"]["method"] == "tools/call" && e["message"]["params"]["name"] == tool)
        .count()
}

/// The names of the tools the model was offered in a Chat Completions request.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Everything the engine wrote to disk in its database files.
fn database_bytes(data_dir: &Path) -> Vec<u8> {
    ["colloquy.db", "colloquy.db-wal", "colloquy.db-shm"]
        .iter()
        .flat_map(|name| std::fs::read(data_dir.join(name)).unwrap_or_default())
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

impl ToolFixture {
    async fn add_server(&self, body: Value) -> McpServer {
        self.f.call("mcp_server_create", body).await
    }

    async fn tools(&self) -> Vec<ToolInfo> {
        self.f.call("tools_list", json!({})).await
    }

    /// Sends a message the model answers with `ok`; returns the tools it was offered.
    async fn offered_in_a_turn(&self) -> Vec<String> {
        self.server.push_script(Script::text(["ok"]));
        let stream = self.f.send(&self.topic, "which tools?").await;
        assert_eq!(terminal_status(&stream), TerminalStatus::Success);
        offered(self.chat_requests().last().unwrap())
    }
}

/// The server once the list says it is ready, read again at each change the hub announces.
async fn ready(t: &ToolFixture, id: &str) -> McpServer {
    let mut changes = t.f.engine.inner.mcp.hub().changes();
    let wait = async {
        loop {
            let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
            if let Some(server) = servers.into_iter().find(|s| s.id == id && s.status.state == McpState::Ready) {
                return server;
            }
            changes.changed().await.expect("the hub is alive");
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| panic!("the MCP server never became ready"))
}

#[tokio::test]
async fn an_mcp_tool_asks_then_runs_and_trusted_read_only_tools_do_not_ask() {
    let t = tool_fixture().await;
    let server: McpServer =
        t.f.call("mcp_server_create", json!({ "name": "Everything", "transport": everything() })).await;
    let broken: McpServer =
        t.f.call(
            "mcp_server_create",
            json!({ "name": "Broken", "transport": { "kind": "stdio", "command": "/nonexistent/server" } }),
        )
        .await;
    let server = ready(&t, &server.id).await;
    assert!(server.tools.contains(&"everything__echo".to_owned()), "{:?}", server.tools);
    let tools: Vec<ToolInfo> = t.f.call("tools_list", json!({})).await;
    let echo = tools.iter().find(|t| t.name == "everything__echo").unwrap();
    assert_eq!(echo.default_decision, protocol::tool::PolicyDecision::Ask, "MCP tools ask by default");

    t.server.push_script(call("everything__echo", json!({ "message": "via mcp" })));
    t.server.push_script(Script::text(["It echoed."]));
    let stream = t.f.send(&t.topic, "echo something").await;
    assert_eq!(
        terminal_status(&stream),
        TerminalStatus::AwaitingApproval,
        "the broken server does not hold up the chat"
    );
    let approval = t.pending().await.remove(0);
    let _: Approval = t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    t.settled().await;
    assert_eq!(tool_messages(&t.chat_requests()[1]), vec!["Echo: via mcp".to_owned()]);

    let _: McpServer = t
        .f
        .call("mcp_server_update", json!({ "id": server.id, "server": { "name": "Everything", "transport": everything(), "trustReadOnly": true } }))
        .await;
    ready(&t, &server.id).await;
    t.server.push_script(call("everything__get-sum", json!({ "a": 20, "b": 22 })));
    t.server.push_script(Script::text(["42."]));
    let stream = t.f.send(&t.topic, "add").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success, "trusted read-only tools run without asking");
    assert!(tool_messages(t.chat_requests().last().unwrap()).last().unwrap().contains("42"));

    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    let broken = servers.iter().find(|s| s.id == broken.id).unwrap();
    assert_eq!(broken.status.state, McpState::Error);
    assert!(broken.status.message.as_deref().unwrap().contains("was not found"));
    let err =
        t.f.engine
            .call("mcp_server_create", json!({ "name": "x", "transport": { "kind": "http", "url": "ftp://x" } }))
            .await
            .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("transport.url"));
    t.f.engine.call("mcp_server_delete", json!({ "id": server.id })).await.unwrap();
    let tools: Vec<ToolInfo> = t.f.call("tools_list", json!({})).await;
    assert!(!tools.iter().any(|t| t.name.starts_with("everything__")));
    t.f.engine.shutdown().await;
}

/// The recorder over streamable HTTP, and its URL, once it accepts connections.
async fn recorder_over_http(log: &Path) -> (tokio::process::Child, String) {
    let port = free_port().await.unwrap();
    let server = tokio::process::Command::new("node")
        .arg(recorder_script())
        .args(["--http", &port.to_string()])
        .env("FIXTURE_LOG", log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    until_listening(port).await;
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn variable_and_header_values_stay_out_of_the_database_and_the_ui_and_still_reach_the_server() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let (stdio_token, http_token) = ("tok-stdio-7f3a", "tok-http-91c2");
    let local = t
        .add_server(json!({
            "name": "Local",
            "transport": recorder(&dir.path().join("stdio.jsonl"), json!({ "API_TOKEN": stdio_token })),
            "trustReadOnly": true,
        }))
        .await;
    let (mut http_server, url) = recorder_over_http(&dir.path().join("http.jsonl")).await;
    let remote = t
        .add_server(json!({
            "name": "Remote",
            "transport": { "kind": "http", "url": url, "headers": { "Authorization": format!("Bearer {http_token}") } },
            "trustReadOnly": true,
        }))
        .await;
    ready(&t, &local.id).await;
    let remote = ready(&t, &remote.id).await;
    assert!(remote.tools.contains(&"remote__headers".to_owned()), "an HTTP server set up through the engine");
    // (Checked before the chat below: a tool's answer that repeats a value is stored with
    // the reply, like any other answer.)
    let disk = database_bytes(t.f.engine.inner.config.data_dir.as_path());
    assert!(!contains(&disk, stdio_token) && !contains(&disk, http_token), "no value is in the database files");

    // Settings sees names, each with a flag, never a value.
    let listed = t.f.engine.call("mcp_servers_list", json!({})).await.unwrap().to_string();
    assert!(!listed.contains(stdio_token) && !listed.contains(http_token), "{listed}");
    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    let McpTransport::Http { headers, .. } = &servers.iter().find(|s| s.id == remote.id).unwrap().transport else {
        panic!("an HTTP server")
    };
    assert_eq!(headers, &vec![McpSecretName { name: "Authorization".into(), set: true }]);

    // The servers get them.
    t.server.push_script(call("local__env", json!({ "name": "API_TOKEN" })));
    t.server.push_script(call("remote__headers", json!({})));
    t.server.push_script(Script::text(["Both arrived."]));
    let stream = t.f.send(&t.topic, "what do the servers see?").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let requests = t.chat_requests();
    assert_eq!(tool_messages(&requests[1]), vec![stdio_token.to_owned()]);
    assert!(tool_messages(&requests[2])[1].contains(&format!("Bearer {http_token}")), "{:?}", requests[2]);

    // An edit that names a variable without a value keeps the stored one, even across a
    // rename; a variable without any stored value needs one.
    let kept = recorder(&dir.path().join("stdio.jsonl"), json!({ "API_TOKEN": null }));
    let mut kept_transport = kept.clone();
    kept_transport["env"]["FIXTURE_LOG"] = Value::Null;
    let renamed: McpServer =
        t.f.call(
            "mcp_server_update",
            json!({ "id": local.id, "server": { "name": "Renamed", "transport": kept_transport } }),
        )
        .await;
    assert_eq!(renamed.namespace, "local", "renaming keeps the tool names");
    let mut unknown = kept_transport.clone();
    unknown["env"]["NEW_ONE"] = Value::Null;
    let err =
        t.f.engine
            .call("mcp_server_update", json!({ "id": local.id, "server": { "name": "Renamed", "transport": unknown } }))
            .await
            .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("transport.env"));
    assert!(err.message.contains("NEW_ONE"), "{err:?}");
    ready(&t, &local.id).await;
    t.server.push_script(call("local__env", json!({ "name": "API_TOKEN" })));
    t.server.push_script(Script::text(["Still there."]));
    t.f.send(&t.topic, "and now?").await;
    assert_eq!(tool_messages(t.chat_requests().last().unwrap()).last().unwrap(), stdio_token);

    // Removing the variable removes its value from the secret store.
    let key = format!("mcp/{}/env/API_TOKEN", local.id);
    assert_eq!(t.f.engine.inner.secrets.get(&key).unwrap().as_deref(), Some(stdio_token));
    let without =
        json!({ "kind": "stdio", "command": "node", "args": [recorder_script()], "env": { "FIXTURE_LOG": null } });
    let _: McpServer =
        t.f.call("mcp_server_update", json!({ "id": local.id, "server": { "name": "Renamed", "transport": without } }))
            .await;
    assert_eq!(t.f.engine.inner.secrets.get(&key).unwrap(), None);
    t.f.engine.call("mcp_server_delete", json!({ "id": remote.id })).await.unwrap();
    assert_eq!(t.f.engine.inner.secrets.get(&format!("mcp/{}/header/Authorization", remote.id)).unwrap(), None);

    t.f.engine.shutdown().await;
    http_server.kill().await.unwrap();
}

#[tokio::test]
async fn values_an_earlier_version_stored_in_the_database_move_to_the_secret_store_at_start() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let token = "legacy-tok-55e1";
    // A row as an earlier version wrote it: values in the transport JSON, no namespace.
    let legacy = json!({
        "kind": "stdio",
        "command": "node",
        "args": [recorder_script()],
        "env": { "FIXTURE_LOG": dir.path().join("log.jsonl"), "API_TOKEN": token },
    });
    t.f.engine
        .inner
        .store
        .write_raw(
            sqlx::query(
                "INSERT INTO mcp_servers (id, name, transport, enabled, trust_read_only, timeout_secs, created_at, updated_at) \
                 VALUES ('old', 'Old Server', ?, 1, 1, 60, '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')",
            )
            .bind(legacy.to_string()),
        )
        .await
        .unwrap();
    t.f.engine.shutdown().await;
    assert!(contains(&database_bytes(&t.config.data_dir), token), "the test starts from a plain value");

    let engine = Engine::open(t.config.clone()).await.unwrap();
    let f = Fixture { engine, _dir: tempfile::tempdir().unwrap() };
    let t = ToolFixture { f, ..t };
    let server = ready(&t, "old").await;
    assert_eq!(server.namespace, "old_server", "the prefix its tools had");
    let McpTransport::Stdio { env, .. } = &server.transport else { panic!("stdio") };
    assert!(env.iter().all(|v| v.set) && env.len() == 2, "{env:?}");
    assert!(!contains(&database_bytes(&t.config.data_dir), token), "the value left the database files");

    t.server.push_script(call("old_server__env", json!({ "name": "API_TOKEN" })));
    t.server.push_script(Script::text(["ok"]));
    t.f.send(&t.topic, "still set?").await;
    assert_eq!(tool_messages(t.chat_requests().last().unwrap()), vec![token.to_owned()]);
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn a_value_the_secret_store_lost_is_an_error_that_says_what_to_do() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let transport = recorder(&dir.path().join("log.jsonl"), json!({ "API_TOKEN": "tok-lost-0a9e" }));
    let server = t.add_server(json!({ "name": "Rec", "transport": transport })).await;
    ready(&t, &server.id).await;
    t.f.engine.inner.secrets.delete(&format!("mcp/{}/env/API_TOKEN", server.id)).unwrap();

    // Saving it with the value kept is refused, naming the variable.
    let mut keep = recorder(&dir.path().join("log.jsonl"), json!({ "API_TOKEN": null }));
    keep["env"]["FIXTURE_LOG"] = Value::Null;
    let err =
        t.f.engine
            .call("mcp_server_update", json!({ "id": server.id, "server": { "name": "Rec", "transport": keep } }))
            .await
            .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("transport.env"));
    assert!(err.message.contains("API_TOKEN") && err.message.contains("type it again"), "{err:?}");

    // After a restart the server is not started without it, and says why.
    t.f.engine.shutdown().await;
    let engine = Engine::open(t.config.clone()).await.unwrap();
    let t = ToolFixture { f: Fixture { engine, _dir: tempfile::tempdir().unwrap() }, ..t };
    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    assert_eq!(servers[0].status.state, McpState::Error);
    let said = servers[0].status.message.as_deref().unwrap();
    assert!(said.contains("API_TOKEN") && said.contains("type it again"), "{said}");
    let McpTransport::Stdio { env, .. } = &servers[0].transport else { panic!("stdio") };
    assert!(env.contains(&McpSecretName { name: "API_TOKEN".into(), set: false }), "{env:?}");

    // Switching it off still works (the settings switch sends the server as it is, every
    // value kept); switching it back on asks for the value again.
    let update = |enabled: bool| json!({ "id": server.id, "server": { "name": "Rec", "transport": keep.clone(), "enabled": enabled } });
    let off: McpServer = t.f.call("mcp_server_update", update(false)).await;
    assert!(!off.enabled);
    let err = t.f.engine.call("mcp_server_update", update(true)).await.unwrap_err();
    assert!(err.message.contains("API_TOKEN") && err.message.contains("type it again"), "{err:?}");
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn per_tool_settings_stay_with_their_tools_when_a_server_is_renamed_or_another_is_deleted() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let transport = || recorder(&dir.path().join("log.jsonl"), json!({}));
    let first = t.add_server(json!({ "name": "Recorder", "transport": transport() })).await;
    let second = t.add_server(json!({ "name": "Recorder", "transport": transport() })).await;
    assert_eq!((first.namespace.as_str(), second.namespace.as_str()), ("recorder", "recorder_2"));
    ready(&t, &first.id).await;
    ready(&t, &second.id).await;
    let _: Value = t.f.call("tool_set_enabled", json!({ "name": "recorder_2__echo", "enabled": false })).await;
    let _: Value = t.f.call("tool_set_enabled", json!({ "name": "recorder__env", "enabled": false })).await;
    for (tool, decision) in [("recorder_2__wait", "allow"), ("recorder__*", "deny")] {
        let _: Value =
            t.f.call("tool_rule_create", json!({ "tool": tool, "decision": decision, "scope": { "kind": "global" } }))
                .await;
    }

    // Renamed: the same tool names, the same switches.
    let _: McpServer = t
        .f
        .call("mcp_server_update", json!({ "id": second.id, "server": { "name": "Other", "transport": transport() } }))
        .await;
    ready(&t, &second.id).await;
    let enabled = |tools: &[ToolInfo], name: &str| tools.iter().find(|t| t.name == name).map(|t| t.enabled);
    let tools = t.tools().await;
    assert_eq!(enabled(&tools, "recorder_2__echo"), Some(false));
    assert_eq!(enabled(&tools, "recorder_2__env"), Some(true));

    // The first one deleted: the second keeps its names and settings, the first's go.
    t.f.engine.call("mcp_server_delete", json!({ "id": first.id })).await.unwrap();
    let tools = t.tools().await;
    assert_eq!(enabled(&tools, "recorder_2__echo"), Some(false), "still off");
    assert!(!tools.iter().any(|t| t.name.starts_with("recorder__")));
    let rules: Vec<protocol::tool::PolicyRule> = t.f.call("tool_rules_list", json!({})).await;
    assert_eq!(rules.iter().map(|r| r.tool.as_str()).collect::<Vec<_>>(), vec!["recorder_2__wait"]);

    // A new server may get the freed namespace, and starts with none of the old settings.
    let third = t.add_server(json!({ "name": "Recorder", "transport": transport() })).await;
    assert_eq!(third.namespace, "recorder");
    ready(&t, &third.id).await;
    let tools = t.tools().await;
    assert_eq!(enabled(&tools, "recorder__env"), Some(true));
    assert_eq!(enabled(&tools, "recorder_2__echo"), Some(false));
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn switching_a_server_or_one_of_its_tools_off_takes_it_out_of_requests() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let transport = recorder(&dir.path().join("log.jsonl"), json!({}));
    let server = t.add_server(json!({ "name": "Rec", "transport": transport })).await;
    ready(&t, &server.id).await;
    let offered = t.offered_in_a_turn().await;
    assert!(offered.contains(&"rec__echo".to_owned()) && offered.contains(&"rec__env".to_owned()), "{offered:?}");

    let _: Value = t.f.call("tool_set_enabled", json!({ "name": "rec__echo", "enabled": false })).await;
    let offered = t.offered_in_a_turn().await;
    assert!(!offered.contains(&"rec__echo".to_owned()) && offered.contains(&"rec__env".to_owned()), "{offered:?}");
    let echo = t.tools().await.into_iter().find(|t| t.name == "rec__echo").unwrap();
    assert!(!echo.enabled, "settings shows it off");

    let off: McpServer =
        t.f.call(
            "mcp_server_update",
            json!({ "id": server.id, "server": { "name": "Rec", "transport": transport, "enabled": false } }),
        )
        .await;
    assert_eq!(off.status.state, McpState::Disabled);
    assert!(!t.offered_in_a_turn().await.iter().any(|name| name.starts_with("rec__")));
    assert!(!t.tools().await.iter().any(|t| t.name.starts_with("rec__")));
    let err = t.f.engine.call("mcp_server_refresh", json!({ "id": server.id })).await.unwrap_err();
    assert!(err.message.contains("switched off"), "{err:?}");

    let _: McpServer =
        t.f.call(
            "mcp_server_update",
            json!({ "id": server.id, "server": { "name": "Rec", "transport": transport, "enabled": true } }),
        )
        .await;
    ready(&t, &server.id).await;
    let offered = t.offered_in_a_turn().await;
    assert!(offered.contains(&"rec__env".to_owned()) && !offered.contains(&"rec__echo".to_owned()), "{offered:?}");
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn after_a_restart_the_cached_tools_are_offered_before_the_server_answers() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang");
    let transport =
        recorder(&dir.path().join("log.jsonl"), json!({ "FIXTURE_HANG_IF_EXISTS": hang.to_str().unwrap() }));
    let server = t.add_server(json!({ "name": "Rec", "transport": transport })).await;
    ready(&t, &server.id).await;
    t.f.engine.shutdown().await;

    // From now on the server never answers, not even `initialize`.
    std::fs::write(&hang, "").unwrap();
    let engine = Engine::open(t.config.clone()).await.unwrap();
    let t = ToolFixture { f: Fixture { engine, _dir: tempfile::tempdir().unwrap() }, ..t };
    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    assert_eq!(servers[0].status.state, McpState::Connecting);
    assert!(servers[0].tools.contains(&"rec__echo".to_owned()), "{servers:?}");
    let offered = t.offered_in_a_turn().await;
    assert!(offered.contains(&"rec__echo".to_owned()), "the request was built from the cache: {offered:?}");
    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    assert_ne!(servers[0].status.state, McpState::Ready, "the server still has not answered");
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn stop_during_an_mcp_call_cancels_it_on_the_server_and_nothing_runs_twice() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let server = t.add_server(json!({ "name": "Rec", "transport": recorder(&log, json!({})) })).await;
    ready(&t, &server.id).await;
    t.server.push_script(call("rec__wait", json!({})));
    let stream = t.f.send(&t.topic, "wait for it").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::AwaitingApproval, "an MCP tool asks first");
    let approval = t.pending().await.remove(0);
    let _: Approval = t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    let request = received_until(&log, "the call", |e| e["message"]["params"]["name"] == "wait").await;

    t.f.engine.stream_abort(&t.topic.id).await.unwrap();
    let cancelled =
        received_until(&log, "notifications/cancelled", |e| e["message"]["method"] == "notifications/cancelled").await;
    assert_eq!(cancelled["message"]["params"]["requestId"], request["message"]["id"]);
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Paused);
    assert_eq!(rows[1].status_reason.as_deref(), Some("user_stop"));
    let calls = t.f.engine.inner.store.calls_of_message(rows[1].id.as_str()).await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].state, store::tools::LedgerState::Error, "{calls:?}");

    // Continuing the reply goes on after the stopped call; it is not run again.
    t.server.push_script(Script::text(["Carried on without it."]));
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    let request = protocol::api::ReplyRequest { topic_id: t.topic.id.clone(), message_id: rows[1].id.clone() };
    t.f.engine.stream_continue(request, listener).await.unwrap();
    drain(&mut rx).await;
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(calls_of(&log, "wait"), 1, "the server got the call once");
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn a_large_mcp_result_is_cut_for_the_model_and_whole_for_the_user() {
    let t = tool_fixture().await;
    let dir = tempfile::tempdir().unwrap();
    let server = t
        .add_server(json!({ "name": "Rec", "transport": recorder(&dir.path().join("log.jsonl"), json!({})), "trustReadOnly": true }))
        .await;
    ready(&t, &server.id).await;
    let size = agent::MODEL_TEXT_LIMIT * 3;
    t.server.push_script(call("rec__big", json!({ "size": size })));
    t.server.push_script(Script::text(["That was long."]));
    let stream = t.f.send(&t.topic, "something big").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);

    let for_model = tool_messages(&t.chat_requests()[1]).remove(0);
    assert!(for_model.len() < size && !for_model.contains("END"), "cut for the model");
    assert!(for_model.contains("more bytes not shown"), "and it is told so");

    let shown = stream
        .iter()
        .find_map(|m| match m {
            StreamMessage::Chunk(e) => match &e.chunk {
                protocol::UiChunk::ToolOutputAvailable { output, .. } => Some(output.clone()),
                _ => None,
            },
            _ => None,
        })
        .expect("the tool's output reached the UI");
    let text = shown["content"][0]["text"].as_str().unwrap();
    assert_eq!((text.len(), text.ends_with("END")), (size, true), "the UI gets all of it");
    assert_eq!(shown["truncatedForModel"], true);
    let rows = t.settled().await;
    let stored = rows[1].message.parts.iter().find_map(|p| match p {
        UiPart::DynamicTool { output: Some(output), .. } => Some(output.clone()),
        _ => None,
    });
    assert_eq!(stored.as_ref(), Some(&shown), "and so does the stored reply");
    t.f.engine.shutdown().await;
}

/// `server-everything` over streamable HTTP on a free port, and its URL, once listening.
async fn everything_over_http() -> (tokio::process::Child, String) {
    let port = free_port().await.unwrap();
    let bin = servers_dir().join("node_modules/.bin/mcp-server-everything");
    let server = tokio::process::Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    until_listening(port).await;
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn issue_20_an_mcp_failure_is_shown_in_words_without_rust_type_names() {
    let t = tool_fixture().await;
    let (mut server, url) = everything_over_http().await;
    let created = t
        .add_server(json!({ "name": "Everything", "transport": { "kind": "http", "url": url }, "trustReadOnly": true }))
        .await;
    ready(&t, &created.id).await;
    // The server goes away while connected: the next call is the first to notice.
    server.kill().await.unwrap();
    t.server.push_script(call("everything__get-sum", json!({ "a": 1, "b": 2 })));
    t.server.push_script(Script::text(["It failed."]));
    let stream = t.f.send(&t.topic, "add").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let said = tool_messages(t.chat_requests().last().unwrap()).join("\n");
    assert!(said.contains("could not be reached") || said.contains("not connected"), "{said}");

    // Everything the API shows of it: the reply with its tool card, and the server's status.
    let messages: Value = t.f.call("messages_list", json!({ "topicId": t.topic.id })).await;
    let servers: Value = t.f.call("mcp_servers_list", json!({})).await;
    for shown in [said, messages.to_string(), servers.to_string()] {
        assert!(!shown.contains("rmcp::") && !shown.contains("Transport ["), "{shown}");
    }
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_servers_instructions_reach_the_model_with_its_tools_and_only_then() {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": everything() })).await;
    let server = ready(&t, &server.id).await;
    let instructions = server.status.instructions.clone().expect("server-everything gives instructions");
    assert!(instructions.contains("Everything Server"), "{instructions}");

    t.offered_in_a_turn().await;
    let request = t.chat_requests().last().unwrap().clone();
    let system = request["messages"][0].clone();
    assert_eq!(system["role"], "system", "{request}");
    let text = system["content"].as_str().unwrap();
    assert!(text.contains("Instructions from the MCP server \"Everything\""), "{text}");
    assert!(text.contains("Everything Server – Server Instructions"), "{text}");

    // Its tools switched off: its instructions go too.
    let _: McpServer =
        t.f.call(
            "mcp_server_update",
            json!({ "id": server.id, "server": { "name": "Everything", "transport": everything(), "enabled": false } }),
        )
        .await;
    t.offered_in_a_turn().await;
    let request = t.chat_requests().last().unwrap().clone();
    assert!(!request.to_string().contains("Everything Server – Server Instructions"), "{request}");
    t.f.engine.shutdown().await;
}

/// Roots: the topics' and assistants' workspace folders are offered to every server, and a
/// change is announced (the filesystem server keeps to them instead of its own folder).
#[tokio::test]
async fn issue_20_workspace_folders_are_the_servers_roots_and_follow_changes() {
    let t = tool_fixture().await;
    let own = tempfile::tempdir().unwrap();
    let bin = servers_dir().join("node_modules/.bin/mcp-server-filesystem");
    let transport =
        json!({ "kind": "stdio", "command": bin.to_str().unwrap(), "args": [own.path().to_str().unwrap()] });
    let server = t.add_server(json!({ "name": "Files", "transport": transport })).await;
    ready(&t, &server.id).await;
    let tool =
        t.f.engine
            .inner
            .mcp
            .hub()
            .tools()
            .into_iter()
            .find(|entry| entry.tool.definition().name.ends_with("list_allowed_directories"))
            .expect("the filesystem server offers list_allowed_directories")
            .tool;
    let canonical = |path: &Path| path.canonicalize().unwrap().to_string_lossy().into_owned();
    let until = |want: String, not: String| {
        let tool = tool.clone();
        async move {
            let wait = async {
                loop {
                    let text =
                        tool.execute(json!({}), &::tools::ToolContext::detached(None)).await.unwrap().text_content();
                    if text.contains(&want) && !text.contains(&not) {
                        return text;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            };
            tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| panic!("the roots never became {want}"))
        }
    };
    until(canonical(t.workspace.path()), canonical(own.path())).await;

    // The topic moves to another folder: the server is told and keeps to that one.
    let moved = tempfile::tempdir().unwrap();
    let _: Topic =
        t.f.call("topic_update", json!({ "id": t.topic.id, "workspace": moved.path().to_str().unwrap() })).await;
    until(canonical(moved.path()), canonical(t.workspace.path())).await;
    // Settings → MCP lists what is offered.
    let offered: Vec<String> = t.f.call("mcp_roots_list", json!({})).await;
    let offers = |folder: &Path| offered.iter().any(|root| canonical(Path::new(root)) == canonical(folder));
    assert!(offers(moved.path()) && !offers(t.workspace.path()), "{offered:?}");
    t.f.engine.shutdown().await;
}

/// The `elicitation.mjs` fixture: its tool `ask` asks the user to fill in the form it is
/// given, and returns the answer as JSON.
fn asker() -> Value {
    let script = servers_dir().join("fixtures/elicitation.mjs");
    json!({ "kind": "stdio", "command": "node", "args": [script.to_str().unwrap()] })
}

fn elicitation_cards(parts: &[UiPart]) -> Vec<protocol::elicitation::ElicitationCard> {
    parts
        .iter()
        .filter_map(|part| match part {
            UiPart::Data(d) if d.kind == protocol::elicitation::ELICITATION_PART => {
                Some(serde_json::from_value(d.data.clone()).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// Reads the stream until it shows an elicitation card in `state`.
async fn card_in(
    rx: &mut Subscription,
    state: protocol::elicitation::ElicitationState,
) -> (protocol::elicitation::ElicitationCard, protocol::MessageId) {
    let wait = async {
        loop {
            match rx.recv().await.expect("the stream goes on until the card shows") {
                StreamMessage::Chunk(event) => {
                    if let protocol::UiChunk::Data(d) = &event.chunk
                        && d.kind == protocol::elicitation::ELICITATION_PART
                    {
                        let card: protocol::elicitation::ElicitationCard =
                            serde_json::from_value(d.data.clone()).unwrap();
                        if card.state == state {
                            return (card, event.execution.message_id.clone());
                        }
                    }
                }
                StreamMessage::Terminal(t) => panic!("the reply ended before the card showed: {t:?}"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.expect("the card shows")
}

/// A form with a required name of at least two characters, and an age.
fn name_and_age() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "title": "Name", "minLength": 2 },
            "age": { "type": "integer", "maximum": 150 }
        },
        "required": ["name"]
    })
}

async fn asker_fixture() -> ToolFixture {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Asker", "transport": asker(), "trustReadOnly": true })).await;
    ready(&t, &server.id).await;
    t
}

#[tokio::test]
async fn issue_20_a_servers_question_is_a_card_answered_checked_and_kept_across_a_reload() {
    use protocol::elicitation::ElicitationState;
    let t = asker_fixture().await;
    let respond = |body: Value| t.f.engine.call("mcp_elicitation_respond", body);

    t.server.push_script(call("asker__ask", json!({ "schema": name_and_age(), "message": "Who are you?" })));
    t.server.push_script(Script::text(["Thanks, Ada."]));
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_open(open_request(t.topic.id.clone(), "ask me"), listener).await.unwrap();
    let (card, message_id) = card_in(&mut rx, ElicitationState::Pending).await;
    assert_eq!((card.server_name.as_str(), card.message.as_str()), ("Asker", "Who are you?"));
    assert_eq!(card.form.as_ref().unwrap().fields.len(), 2);

    // A reload: a window attaching afresh finds the card in the reply so far.
    let (again, mut reloaded) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_attach(&t.topic.id, vec![], again).await.unwrap();
    let Some(StreamMessage::Snapshot(snapshot)) = reloaded.recv().await else { panic!("a snapshot first") };
    assert_eq!(snapshot.message_id, message_id);
    let shown = elicitation_cards(&snapshot.message.parts);
    assert_eq!((shown.len(), shown[0].state), (1, ElicitationState::Pending));

    // Content that does not fit is refused with why, and the question stays open.
    let id = card.elicitation_id.clone();
    let err =
        respond(json!({ "elicitationId": id, "action": "accept", "content": { "name": "A" } })).await.unwrap_err();
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("content")));
    assert!(err.message.contains("Name: must be at least 2 characters long"), "{err:?}");
    let err = respond(json!({ "elicitationId": id, "action": "accept", "content": { "age": 3 } })).await.unwrap_err();
    assert!(err.message.contains("Name is required"), "{err:?}");
    let err = respond(json!({ "elicitationId": id, "action": "decline", "content": {} })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("content"));

    respond(json!({ "elicitationId": id, "action": "accept", "content": { "name": "Ada", "age": 36 } })).await.unwrap();
    let rest = drain(&mut rx).await;
    assert_eq!(terminal_status(&rest), TerminalStatus::Success);
    let heard = tool_messages(&t.chat_requests()[1]).remove(0);
    assert!(heard.contains(r#""action":"accept""#) && heard.contains(r#""name":"Ada""#), "{heard}");
    let stored = t.f.messages(&t.topic).await;
    let cards = elicitation_cards(&stored.last().unwrap().message.parts);
    assert_eq!(cards.len(), 1, "one card, replaced as it changed");
    assert_eq!(cards[0].state, ElicitationState::Accepted);
    assert_eq!(cards[0].content.as_ref().unwrap()["name"], "Ada");
    let err = respond(json!({ "elicitationId": id, "action": "decline" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict, "a second answer is refused: {err:?}");

    // Decline and cancel reach the server as they are.
    for (action, state) in [("decline", ElicitationState::Declined), ("cancel", ElicitationState::Cancelled)] {
        t.server.push_script(call("asker__ask", json!({ "schema": name_and_age() })));
        t.server.push_script(Script::text(["Fine."]));
        let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
        t.f.engine.stream_open(open_request(t.topic.id.clone(), "ask again"), listener).await.unwrap();
        let (card, _) = card_in(&mut rx, ElicitationState::Pending).await;
        respond(json!({ "elicitationId": card.elicitation_id, "action": action })).await.unwrap();
        let (card, _) = card_in(&mut rx, state).await;
        assert!(card.content.is_none());
        assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
        let heard = tool_messages(t.chat_requests().last().unwrap()).pop().unwrap();
        assert!(heard.contains(&format!(r#""action":"{action}""#)), "{heard}");
    }
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_stop_during_a_servers_question_answers_it_cancel() {
    use protocol::elicitation::ElicitationState;
    let t = asker_fixture().await;
    t.server.push_script(call("asker__ask", json!({ "schema": name_and_age() })));
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_open(open_request(t.topic.id.clone(), "ask me"), listener).await.unwrap();
    let (card, message_id) = card_in(&mut rx, ElicitationState::Pending).await;

    t.f.engine.call("reply_stop", json!({ "topicId": t.topic.id, "messageId": message_id })).await.unwrap();
    let (stopped, _) = card_in(&mut rx, ElicitationState::Cancelled).await;
    assert_eq!(stopped.elicitation_id, card.elicitation_id);
    drain(&mut rx).await;
    let stored = t.f.messages(&t.topic).await;
    assert_eq!(elicitation_cards(&stored.last().unwrap().message.parts)[0].state, ElicitationState::Cancelled);
    let err =
        t.f.engine
            .call(
                "mcp_elicitation_respond",
                json!({ "elicitationId": card.elicitation_id, "action": "accept", "content": { "name": "Ada" } }),
            )
            .await
            .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert!(err.message.contains("no longer open"), "{err:?}");
    t.f.engine.shutdown().await;
}

/// Reads the stream until it shows a sampling card in `state`.
async fn sampling_in(
    rx: &mut Subscription,
    state: protocol::sampling::SamplingState,
) -> protocol::sampling::SamplingCard {
    let wait = async {
        loop {
            match rx.recv().await.expect("the stream goes on until the card shows") {
                StreamMessage::Chunk(event) => {
                    if let protocol::UiChunk::Data(d) = &event.chunk
                        && d.kind == protocol::sampling::SAMPLING_PART
                    {
                        let card: protocol::sampling::SamplingCard = serde_json::from_value(d.data.clone()).unwrap();
                        if card.state == state {
                            return card;
                        }
                    }
                }
                StreamMessage::Terminal(t) => panic!("the reply ended before the card showed: {t:?}"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(PATIENCE, wait).await.expect("the card shows")
}

#[tokio::test]
async fn issue_20_a_servers_sampling_request_is_allowed_on_its_card_answered_by_the_replys_model_and_counted() {
    use protocol::sampling::SamplingState;
    let t = asker_fixture().await;
    let respond = |body: Value| t.f.engine.call("mcp_sampling_respond", body);
    let sample = |reply: &'static str| {
        t.server.push_script(call("asker__sample", json!({ "prompt": "Say hi" })));
        t.server.push_script(Script::text([reply]));
        t.server.push_script(Script::text(["Done."]));
    };
    let open = async |text: &str| {
        let (listener, rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
        t.f.engine.stream_open(open_request(t.topic.id.clone(), text), listener).await.unwrap();
        rx
    };

    // Denied: the model is not asked, the server hears no.
    t.server.push_script(call("asker__sample", json!({ "prompt": "Say hi" })));
    t.server.push_script(Script::text(["Done."]));
    let mut rx = open("sample, then no").await;
    let card = sampling_in(&mut rx, SamplingState::Pending).await;
    assert_eq!((card.server_name.as_str(), card.model.as_str()), ("Asker", "scripted"));
    assert_eq!(card.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(card.messages[0].text, "Say hi");
    let err = respond(json!({ "samplingId": card.sampling_id, "decision": "deny", "always": true })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("always"));
    respond(json!({ "samplingId": card.sampling_id, "decision": "deny" })).await.unwrap();
    sampling_in(&mut rx, SamplingState::Denied).await;
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let heard = tool_messages(t.chat_requests().last().unwrap()).pop().unwrap();
    assert!(heard.contains(r#""error""#) && heard.contains("declined"), "{heard}");
    assert_eq!(t.chat_requests().len(), 2, "the model was not asked for the server");

    // Allowed for good: the reply's model answers, the server gets it, the ledger counts it.
    sample("Hello from the model.");
    let mut rx = open("sample, then yes").await;
    let card = sampling_in(&mut rx, SamplingState::Pending).await;
    respond(json!({ "samplingId": card.sampling_id, "decision": "allow", "always": true })).await.unwrap();
    let done = sampling_in(&mut rx, SamplingState::Done).await;
    assert_eq!(done.result.as_deref(), Some("Hello from the model."));
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    let requests = t.chat_requests();
    let asked = &requests[requests.len() - 2];
    assert!(asked["tools"].is_null() || asked["tools"].as_array().is_some_and(Vec::is_empty), "{asked}");
    assert_eq!(asked["messages"][0]["content"], "Be brief.");
    assert_eq!(asked["messages"][1]["content"], "Say hi");
    let heard = tool_messages(requests.last().unwrap()).pop().unwrap();
    assert!(heard.contains("Hello from the model.") && heard.contains("endTurn"), "{heard}");
    let stored = t.f.messages(&t.topic).await;
    let reply = stored.last().unwrap();
    let details: protocol::usage::ReplyDetails =
        t.f.call("usage_reply", json!({ "topicId": t.topic.id, "messageId": reply.message.id })).await;
    let model_calls =
        details.timeline.iter().filter(|e| matches!(e, protocol::usage::TimelineEntry::ModelCall { .. })).count();
    assert_eq!(model_calls, 3, "the sampling request is counted with the reply's own calls: {details:?}");
    let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
    assert!(servers[0].sampling_allowed, "saved with the server");

    // From now on it does not ask.
    sample("Again.");
    let mut rx = open("sample without asking").await;
    let card = sampling_in(&mut rx, SamplingState::Running).await;
    assert!(card.allowed_by_rule);
    assert_eq!(sampling_in(&mut rx, SamplingState::Done).await.result.as_deref(), Some("Again."));
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    t.f.engine.shutdown().await;
}

/// Sends `text` with MCP resources attached; the stream, or the refusal.
async fn send_with_resources(
    t: &ToolFixture,
    text: &str,
    resources: Value,
) -> Result<Vec<StreamMessage>, protocol::ApiError> {
    let mut request = open_request(t.topic.id.clone(), text);
    request.mcp_resources = Some(serde_json::from_value(resources).unwrap());
    let (listener, mut rx) = t.f.engine.listener(ListenerId::unique(), &t.topic.id);
    t.f.engine.stream_open(request, listener).await?;
    Ok(drain(&mut rx).await)
}

/// The text of the user messages of a Chat Completions request body.
fn user_texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            parts => {
                parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn resource_parts(message: &StoredMessage) -> Vec<protocol::mcp_content::ResourceAttachment> {
    message
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::Data(data) if data.kind == protocol::mcp_content::RESOURCE_PART => {
                serde_json::from_value(data.data.clone()).ok()
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn issue_20_a_resource_is_listed_attached_and_its_text_reaches_the_model_and_stays_on_the_message() {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": everything() })).await;
    ready(&t, &server.id).await;

    let catalog: protocol::mcp_content::McpResourceCatalog = t.f.call("mcp_resources_list", json!({})).await;
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    let doc = catalog
        .resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/") && r.name.ends_with(".md"))
        .unwrap_or_else(|| panic!("a static document is listed: {:?}", catalog.resources));
    assert_eq!(doc.server_name, "Everything");
    assert!(
        catalog.templates.iter().any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}"),
        "{:?}",
        catalog.templates
    );

    // A listed resource and one named by filling in a template, attached to one message.
    t.server.push_script(Script::text(["Read them."]));
    let stream = send_with_resources(
        &t,
        "summarise these",
        json!([
            { "serverId": server.id, "uri": doc.uri },
            { "serverId": server.id, "uri": "demo://resource/dynamic/text/7" }
        ]),
    )
    .await
    .unwrap();
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let said = user_texts(t.chat_requests().last().unwrap());
    assert!(said.contains(&format!("<resource uri=\"{}\" server=\"Everything\"", doc.uri)), "{said}");
    assert!(said.contains("Resource 7: This is a plaintext resource"), "{said}");

    // Kept on the message: a reload shows the same two resources.
    let messages = t.f.messages(&t.topic).await;
    let attached = resource_parts(&messages[0]);
    assert_eq!(
        attached.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        vec![doc.uri.as_str(), "demo://resource/dynamic/text/7"]
    );

    // A resource the server cannot read refuses the message, saying which and why; nothing
    // is stored.
    let err = send_with_resources(&t, "and this", json!([{ "serverId": server.id, "uri": "demo://nothing/here" }]))
        .await
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("mcpResources.0"));
    assert!(err.message.contains("Everything could not read demo://nothing/here"), "{}", err.message);
    assert!(!err.message.contains("rmcp::"), "{}", err.message);
    assert_eq!(t.f.messages(&t.topic).await.len(), 2);

    // Read directly (a link's "Open"): a blob comes back as base64.
    let blob: protocol::mcp_content::ResourceAttachment =
        t.f.call("mcp_resource_read", json!({ "serverId": server.id, "uri": "demo://resource/dynamic/blob/2" })).await;
    assert!(matches!(blob.contents[0], protocol::mcp_content::ResourceContent::Blob { .. }), "{blob:?}");
    let err = t.f.engine.call("mcp_resource_read", json!({ "serverId": "nope", "uri": "demo://x" })).await.unwrap_err();
    assert_eq!(err.kind, protocol::ErrorKind::NotFound);
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_servers_prompt_runs_with_arguments_and_its_arguments_complete() {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": everything() })).await;
    ready(&t, &server.id).await;

    let catalog: protocol::mcp_content::McpPromptCatalog = t.f.call("mcp_prompts_list", json!({})).await;
    let args = catalog.prompts.iter().find(|p| p.name == "args-prompt").expect("args-prompt is listed");
    assert_eq!(args.server_name, "Everything");
    assert!(args.arguments.iter().any(|a| a.name == "city" && a.required), "{:?}", args.arguments);

    let expansion: protocol::mcp_content::McpPromptExpansion =
        t.f.call(
            "mcp_prompt_get",
            json!({ "serverId": server.id, "name": "args-prompt", "arguments": { "city": "Paris" } }),
        )
        .await;
    assert_eq!(expansion.text, "What's weather in Paris?");

    let completion: protocol::mcp_content::McpCompletion =
        t.f.call(
            "mcp_prompt_complete",
            json!({ "serverId": server.id, "prompt": "completable-prompt", "argument": "department", "value": "E" }),
        )
        .await;
    assert_eq!(completion.values, vec!["Engineering"]);
    let completion: protocol::mcp_content::McpCompletion =
        t.f.call(
            "mcp_prompt_complete",
            json!({ "serverId": server.id, "prompt": "completable-prompt", "argument": "name", "value": "",
                    "context": { "department": "Sales" } }),
        )
        .await;
    assert_eq!(completion.values, vec!["David", "Eve", "Frank"]);

    // A prompt embedding a resource: its text and the resource, read.
    let resource_prompt = catalog.prompts.iter().find(|p| p.name == "resource-prompt").expect("resource-prompt");
    let mut arguments = serde_json::Map::new();
    for argument in &resource_prompt.arguments {
        let value = if argument.name.to_lowercase().contains("type") { "Text" } else { "3" };
        arguments.insert(argument.name.clone(), json!(value));
    }
    let expansion: protocol::mcp_content::McpPromptExpansion =
        t.f.call("mcp_prompt_get", json!({ "serverId": server.id, "name": "resource-prompt", "arguments": arguments }))
            .await;
    assert_eq!(expansion.resources.len(), 1, "{expansion:?}");
    assert_eq!(expansion.resources[0].uri, "demo://resource/dynamic/text/3");

    // A missing required argument: the server's refusal, in words.
    let err =
        t.f.engine
            .call("mcp_prompt_get", json!({ "serverId": server.id, "name": "args-prompt", "arguments": {} }))
            .await
            .unwrap_err();
    assert!(err.message.contains("args-prompt could not be run"), "{}", err.message);
    assert!(!err.message.contains("rmcp::"), "{}", err.message);
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_resource_link_in_a_tool_result_keeps_its_uri_and_opens_through_its_server() {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": everything(), "trustReadOnly": true })).await;
    ready(&t, &server.id).await;
    t.server.push_script(call("everything__get-resource-links", json!({ "count": 2 })));
    t.server.push_script(Script::text(["Two links."]));
    let stream = t.f.send(&t.topic, "links please").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    // The model sees each link's URI, not only its description.
    let said = tool_messages(t.chat_requests().last().unwrap()).join("\n");
    assert!(said.contains("<demo://resource/dynamic/text/2>"), "{said}");

    let messages = t.f.messages(&t.topic).await;
    let output = messages[1]
        .message
        .parts
        .iter()
        .find_map(|p| match p {
            UiPart::DynamicTool { output: Some(output), .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    let output: protocol::tool::ToolOutput = serde_json::from_value(output).unwrap();
    let links: Vec<(String, Option<String>)> = output
        .content
        .iter()
        .filter_map(|c| match c {
            protocol::tool::ToolContent::Resource { uri, link: true, name, .. } => Some((uri.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(links.len(), 2, "{output:?}");
    let (uri, name) = &links[1];
    assert_eq!(name.as_deref(), Some("Text Resource 2"));

    // "Open": read through the server.
    let read: protocol::mcp_content::ResourceAttachment =
        t.f.call("mcp_resource_read", json!({ "serverId": server.id, "uri": uri })).await;
    let protocol::mcp_content::ResourceContent::Text { text, .. } = &read.contents[0] else { panic!("{read:?}") };
    assert!(text.starts_with("Resource 2: This is a plaintext resource"), "{text}");
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_an_attached_resource_the_server_says_changed_is_read_again_for_the_next_turn() {
    let t = tool_fixture().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": everything() })).await;
    ready(&t, &server.id).await;
    let uri = "demo://resource/dynamic/text/4";
    t.server.push_script(Script::text(["Noted."]));
    let stream =
        send_with_resources(&t, "keep an eye on this", json!([{ "serverId": server.id, "uri": uri }])).await.unwrap();
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);

    // Nothing changed yet: the next turn carries no fresh copy.
    t.server.push_script(Script::text(["Same."]));
    t.f.send(&t.topic, "anything new?").await;
    assert!(resource_parts(&t.f.messages(&t.topic).await[2]).is_empty());

    // The server starts telling its subscribers that their resources changed.
    t.server.push_script(call("everything__toggle-subscriber-updates", json!({})));
    t.server.push_script(Script::text(["Updates on."]));
    t.f.send(&t.topic, "turn on updates").await;
    let approval = t.pending().await.remove(0);
    let _: Approval = t.respond(json!({ "approvalId": approval.id, "decision": "approve" })).await.unwrap();
    t.settled().await;
    let hub = t.f.engine.inner.mcp.hub().clone();
    tokio::time::timeout(PATIENCE, async {
        while !hub.resource_update_pending(&server.id, uri) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the server says the resource changed");

    t.server.push_script(Script::text(["Fresh."]));
    t.f.send(&t.topic, "and now?").await;
    let messages = t.f.messages(&t.topic).await;
    let fresh = resource_parts(&messages[messages.len() - 2]);
    assert_eq!(fresh.len(), 1, "the new message carries the fresh read");
    assert!(fresh[0].updated && fresh[0].uri == uri);
    let said = user_texts(t.chat_requests().last().unwrap());
    assert!(
        said.contains(&format!(
            "<resource uri=\"{uri}\" server=\"Everything\" mimeType=\"text/plain\" updated=\"true\">"
        )),
        "{said}"
    );
    t.f.engine.shutdown().await;
}

#[tokio::test]
async fn issue_20_resources_and_prompts_work_over_streamable_http_too() {
    let t = tool_fixture().await;
    let (_server, url) = everything_over_http().await;
    let server = t.add_server(json!({ "name": "Everything", "transport": { "kind": "http", "url": url } })).await;
    ready(&t, &server.id).await;
    let catalog: protocol::mcp_content::McpResourceCatalog = t.f.call("mcp_resources_list", json!({})).await;
    assert!(catalog.resources.iter().any(|r| r.uri.starts_with("demo://resource/static/document/")), "{catalog:?}");
    t.server.push_script(Script::text(["Got it."]));
    let stream = send_with_resources(
        &t,
        "over http",
        json!([{ "serverId": server.id, "uri": "demo://resource/dynamic/text/9" }]),
    )
    .await
    .unwrap();
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    assert!(user_texts(t.chat_requests().last().unwrap()).contains("Resource 9: This is a plaintext resource"));
    let expansion: protocol::mcp_content::McpPromptExpansion =
        t.f.call(
            "mcp_prompt_get",
            json!({ "serverId": server.id, "name": "args-prompt", "arguments": { "city": "Oslo" } }),
        )
        .await;
    assert_eq!(expansion.text, "What's weather in Oslo?");
    t.f.engine.shutdown().await;
}
