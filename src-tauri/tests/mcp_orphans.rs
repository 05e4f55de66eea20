//! A stdio MCP server outlives a `colloquy serve` killed with SIGKILL (it keeps running,
//! with a child of its own); the next start stops that whole process group before it
//! starts the server again, and a clean stop ends the servers it started.

#[path = "support/server.rs"]
mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use server::Server;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp-servers/fixtures/bad-schema.mjs")
}

/// The process groups the app recorded for its stdio servers.
fn recorded(data: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(data.join("mcp-processes.json")).unwrap_or_default();
    let map: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap_or_default();
    map.keys().filter_map(|k| k.parse().ok()).collect()
}

/// Whether a process of the group still runs (zombies waiting to be reaped do not count).
fn group_alive(pgid: i32) -> bool {
    std::fs::read_dir("/proc").unwrap().filter_map(Result::ok).any(|entry| {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { return false };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
        fields[0] != "Z" && fields[2].parse::<i32>().ok() == Some(pgid)
    })
}

async fn wait_ready(server: &Server, client: &reqwest::Client) -> Value {
    for _ in 0..300 {
        let servers = server.call(client, "mcp_servers_list", json!({})).await;
        if servers[0]["status"]["state"] == "ready" {
            return servers[0].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the MCP server never became ready");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_app_leaves_no_stray_mcp_server_after_the_next_start() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("ui")).unwrap();
    std::fs::write(root.path().join("ui/index.html"), "<!doctype html>").unwrap();
    let data = root.path().join("data");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    let mut first = Server::start(root.path(), "first").await;
    let transport =
        json!({ "kind": "stdio", "command": "node", "args": [fixture()], "env": { "FIXTURE_STUBBORN": "1" } });
    first.call(&client, "mcp_server_create", json!({ "name": "Stubborn", "transport": transport })).await;
    let ready = wait_ready(&first, &client).await;
    assert_eq!(ready["status"]["toolCount"], 1);
    let orphan = recorded(&data);
    assert_eq!(orphan.len(), 1);
    let orphan = orphan[0];

    first.kill();
    first.wait_for_exit().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(group_alive(orphan), "the server (and its child) outlived the killed app");

    let mut second = Server::start(root.path(), "second").await;
    assert!(!group_alive(orphan), "the next start stopped the whole group before anything else");
    wait_ready(&second, &client).await;
    let now = recorded(&data);
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], orphan, "a fresh server was started");
    let log = std::fs::read_to_string(root.path().join("second.log")).unwrap_or_default();
    assert!(log.contains("left running by the last run"), "{log}");

    // A clean stop takes its servers with it, stubborn or not.
    second.terminate();
    assert!(second.wait_for_exit().await.success());
    assert!(!group_alive(now[0]), "a clean stop ended the server it started");
}
