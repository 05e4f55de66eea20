//! A Claude Code process that is mid-turn when `colloquy serve` is killed with SIGKILL
//! dies with it (its parent-death signal), and what it started in its process group is
//! stopped at the next start (the child-process registry it shares with MCP servers).

#[path = "support/server.rs"]
mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use server::Server;

fn fake_claude() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/agent-cli/fakes/works-on.sh")
}

/// The process groups the app recorded for its children, with what each is.
fn recorded(data: &Path) -> BTreeMap<i32, String> {
    let text = std::fs::read_to_string(data.join("mcp-processes.json")).unwrap_or_default();
    let map: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap_or_default();
    map.into_iter().filter_map(|(k, v)| Some((k.parse().ok()?, v["server"].as_str()?.to_owned()))).collect()
}

/// The live (not zombie) processes whose process group is `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
            (fields[0] != "Z" && fields[2].parse::<i32>().ok() == Some(pgid)).then_some(pid)
        })
        .collect()
}

/// Polls `done` for up to 30 s (real processes on a loaded machine).
async fn eventually(what: &str, done: impl Fn() -> bool) {
    for _ in 0..300 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_16_a_killed_app_takes_its_mid_turn_claude_code_with_it() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("ui")).unwrap();
    std::fs::write(root.path().join("ui/index.html"), "<!doctype html>").unwrap();
    let data = root.path().join("data");
    let workspace = tempfile::tempdir().unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let claude = fake_claude();
    let env = [("COLLOQUY_CLAUDE_PATH", claude.as_path())];

    let mut first = Server::start_with_env(root.path(), "first", &env).await;
    let session = first.call(&client, "agent_session_create", json!({ "workspace": workspace.path() })).await;
    let mut events = first.stream(&client, json!({ "topicId": session["topicId"], "text": "work" })).await;
    loop {
        let (_, event) = events.next_event().await.expect("the turn to start");
        if event.to_string().contains("Working on it") {
            break;
        }
    }
    let groups = recorded(&data);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let (&pgid, label) = groups.iter().next().unwrap();
    assert!(label.contains("Claude Code"), "{label}");
    let members = group_members(pgid);
    assert!(members.contains(&pgid) && members.len() == 2, "the CLI and its tool run: {members:?}");

    first.kill();
    first.wait_for_exit().await;
    // The CLI dies with the app at once; the tool it started is in its group.
    eventually("Claude Code died with the app", || !group_members(pgid).contains(&pgid)).await;
    assert_eq!(group_members(pgid).len(), 1, "what the CLI started is left for the next start");

    let second = Server::start_with_env(root.path(), "second", &env).await;
    assert!(group_members(pgid).is_empty(), "the next start stopped the whole group before anything else");
    assert!(recorded(&data).is_empty(), "nothing of the last run is recorded any more");
    let log = std::fs::read_to_string(root.path().join("second.log")).unwrap_or_default();
    assert!(log.contains("left running by the last run"), "{log}");
    drop(second);
}
