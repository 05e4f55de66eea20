//! MCP tools in chats: a real `server-everything` configured through the engine's
//! operations, its tools offered to the model, approved like any other tool.

use protocol::mcp::{McpServer, McpState};
use protocol::tool::{Approval, ToolInfo};

use super::tools::*;
use super::*;

fn everything() -> Value {
    let bin = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp-servers/node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "run `cargo xtask setup` to install the test MCP servers");
    json!({ "kind": "stdio", "command": bin.to_str().unwrap(), "args": ["stdio"] })
}

async fn ready(t: &ToolFixture, id: &str) -> McpServer {
    for _ in 0..300 {
        let servers: Vec<McpServer> = t.f.call("mcp_servers_list", json!({})).await;
        if let Some(server) = servers.into_iter().find(|s| s.id == id && s.status.state == McpState::Ready) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the MCP server never became ready");
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
