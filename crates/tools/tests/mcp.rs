//! MCP servers for real: `@modelcontextprotocol/server-everything` over stdio and over
//! streamable HTTP, `@modelcontextprotocol/server-filesystem`, and small fixture servers
//! that misbehave (`tests/mcp-servers/`, installed by `cargo xtask setup`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use colloquy_tools::mcp::{CatalogSink, HubOptions, McpHub, McpServerConfig, McpToolSpec};
use colloquy_tools::{Progress, Tool, ToolContext, ToolError};
use protocol::mcp::{McpState, McpStatus, McpTransport};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers")
}

fn bin(name: &str) -> String {
    let path = servers_dir().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing: run `cargo xtask setup` (npm ci in tests/mcp-servers)", path.display());
    path.to_string_lossy().into_owned()
}

fn fixture(name: &str) -> McpTransport {
    McpTransport::Stdio {
        command: "node".into(),
        args: vec![servers_dir().join("fixtures").join(name).to_string_lossy().into_owned()],
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn stdio(command: String, args: &[&str]) -> McpTransport {
    McpTransport::Stdio {
        command,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: BTreeMap::new(),
        cwd: None,
    }
}

#[derive(Default)]
struct MemorySink(Mutex<HashMap<String, Vec<McpToolSpec>>>);

#[async_trait]
impl CatalogSink for MemorySink {
    async fn save(&self, server_id: &str, tools: &[McpToolSpec]) {
        self.0.lock().unwrap().insert(server_id.to_owned(), tools.to_vec());
    }
}

struct Fixture {
    hub: McpHub,
    sink: Arc<MemorySink>,
    dir: tempfile::TempDir,
}

fn hub(connect_timeout: Duration) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(MemorySink::default());
    let hub = McpHub::new(HubOptions {
        processes_file: dir.path().join("mcp-processes.json"),
        connect_timeout,
        http: reqwest::Client::new(),
        sink: sink.clone(),
    });
    Fixture { hub, sink, dir }
}

fn config(id: &str, name: &str, transport: McpTransport) -> McpServerConfig {
    McpServerConfig {
        id: id.into(),
        name: name.into(),
        transport,
        timeout: Duration::from_secs(20),
        trust_read_only: false,
    }
}

impl Fixture {
    fn add(&self, id: &str, name: &str, transport: McpTransport) {
        self.hub.upsert(config(id, name, transport), true, Vec::new());
    }

    /// Waits until the server's status satisfies `done`.
    async fn status_until(&self, id: &str, done: impl Fn(&McpStatus) -> bool) -> McpStatus {
        for _ in 0..300 {
            if let Some(status) = self.hub.status(id).filter(|s| done(s)) {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("server {id} never reached the expected status; last: {:?}", self.hub.status(id));
    }

    async fn ready(&self, id: &str) -> McpStatus {
        self.status_until(id, |s| s.state == McpState::Ready).await
    }

    fn tool(&self, name: &str) -> Arc<dyn Tool> {
        let tools = self.hub.tools();
        tools.iter().find(|t| t.tool.definition().name == name).map(|t| t.tool.clone()).unwrap_or_else(|| {
            let names: Vec<String> = tools.iter().map(|t| t.tool.definition().name.clone()).collect();
            panic!("no tool {name}; the hub offers {names:?}")
        })
    }
}

fn ctx() -> ToolContext {
    ToolContext::detached(None)
}

fn progress_log() -> (ToolContext, Arc<Mutex<Vec<Progress>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let mut ctx = ctx();
    ctx.progress = Arc::new(move |p| sink.lock().unwrap().push(p));
    (ctx, log)
}

#[tokio::test]
async fn everything_over_stdio_lists_calls_reports_progress_and_cancels() {
    let f = hub(Duration::from_secs(30));
    f.add("e", "Everything", stdio(bin("mcp-server-everything"), &["stdio"]));
    let status = f.ready("e").await;
    assert!(status.tool_count > 5, "{status:?}");
    assert!(f.sink.0.lock().unwrap()["e"].iter().any(|t| t.name == "echo"), "the catalog was saved");

    let echo = f.tool("everything__echo");
    assert!(echo.definition().annotations.read_only);
    let out = echo.execute(json!({"message": "hello"}), &ctx()).await.unwrap();
    assert_eq!(out.text_content(), "Echo: hello");
    let sum = f.tool("everything__get-sum").execute(json!({"a": 2, "b": 3}), &ctx()).await.unwrap();
    assert!(sum.text_content().contains('5'), "{sum:?}");
    let image = f.tool("everything__get-tiny-image").execute(json!({}), &ctx()).await.unwrap();
    assert!(image.content.iter().any(|c| matches!(c, protocol::tool::ToolContent::Image { .. })), "{image:?}");

    let long = f.tool("everything__trigger-long-running-operation");
    let (with_progress, log) = progress_log();
    long.execute(json!({"duration": 1, "steps": 4}), &with_progress).await.unwrap();
    let seen = log.lock().unwrap().clone();
    assert!(seen.len() >= 3, "progress was reported: {seen:?}");
    assert_eq!(seen.last().unwrap().total, Some(4.0));

    // Stop mid-call: the call ends at once, and the server stays usable.
    let (cancelling, log) = progress_log();
    let stop = cancelling.cancel.clone();
    let call = tokio::spawn({
        let long = long.clone();
        async move { long.execute(json!({"duration": 30, "steps": 30}), &cancelling).await }
    });
    while log.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let started = std::time::Instant::now();
    stop.cancel();
    assert_eq!(call.await.unwrap().unwrap_err(), ToolError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        echo.execute(json!({"message": "still here"}), &ctx()).await.unwrap().text_content(),
        "Echo: still here"
    );
    f.hub.shutdown().await;
}

async fn free_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn everything_over_streamable_http_lists_calls_and_reports_progress() {
    let port = free_port().await;
    let mut server = tokio::process::Command::new(bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let f = hub(Duration::from_secs(30));
    f.add("h", "Everything HTTP", McpTransport::Http { url, headers: BTreeMap::new() });
    f.ready("h").await;
    let echo = f.tool("everything_http__echo");
    assert_eq!(echo.execute(json!({"message": "over http"}), &ctx()).await.unwrap().text_content(), "Echo: over http");
    let (with_progress, log) = progress_log();
    f.tool("everything_http__trigger-long-running-operation")
        .execute(json!({"duration": 1, "steps": 3}), &with_progress)
        .await
        .unwrap();
    assert!(!log.lock().unwrap().is_empty(), "progress arrives over HTTP too");
    f.hub.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn the_filesystem_server_writes_inside_its_folder() {
    let folder = tempfile::tempdir().unwrap();
    let f = hub(Duration::from_secs(30));
    f.add("fs", "Files", stdio(bin("mcp-server-filesystem"), &[folder.path().to_str().unwrap()]));
    f.ready("fs").await;
    let write = f.tool("files__write_file");
    assert!(!write.definition().annotations.read_only);
    let path = folder.path().join("hello.txt");
    write.execute(json!({"path": path.to_str().unwrap(), "content": "from mcp"}), &ctx()).await.unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), "from mcp");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn broken_servers_show_their_error_and_the_others_keep_working() {
    let f = hub(Duration::from_secs(3));
    f.add("good", "Good", fixture("bad-schema.mjs"));
    f.add("exits", "Exits", fixture("exits-at-once.mjs"));
    f.add("garbage", "Garbage", fixture("garbage.mjs"));
    f.add("silent", "Silent", fixture("silent.mjs"));
    f.add("missing", "Missing", stdio("/nonexistent/mcp-server".into(), &[]));
    let good = f.ready("good").await;
    assert_eq!(good.tool_count, 1, "the tool with an invalid schema is left out");
    assert!(good.problems.iter().any(|p| p.starts_with("broken:")), "and said so: {:?}", good.problems);

    let exits = f.status_until("exits", |s| s.state == McpState::Error).await;
    assert!(exits.stderr_tail.as_deref().unwrap_or_default().contains("config file"), "{exits:?}");
    let garbage = f.status_until("garbage", |s| s.state == McpState::Error).await;
    assert!(garbage.message.is_some(), "{garbage:?}");
    let silent = f.status_until("silent", |s| s.state == McpState::Error).await;
    assert!(silent.message.as_deref().unwrap().contains("did not answer `initialize`"), "{silent:?}");
    let missing = f.status_until("missing", |s| s.state == McpState::Error).await;
    assert!(missing.message.as_deref().unwrap().contains("was not found"), "{missing:?}");

    let shout = f.tool("good__shout");
    assert_eq!(shout.execute(json!({"text": "ok"}), &ctx()).await.unwrap().text_content(), "OK");
    f.hub.shutdown().await;
}

/// An HTTP server that answers every request with `status`.
async fn refusing_server(status: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                let body = "go away";
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    format!("http://127.0.0.1:{port}/mcp")
}

#[tokio::test]
async fn http_servers_that_refuse_show_why() {
    let f = hub(Duration::from_secs(5));
    f.add(
        "401",
        "Locked",
        McpTransport::Http { url: refusing_server("401 Unauthorized").await, headers: BTreeMap::new() },
    );
    f.add("404", "Gone", McpTransport::Http { url: refusing_server("404 Not Found").await, headers: BTreeMap::new() });
    let locked = f.status_until("401", |s| s.state == McpState::Error).await;
    assert!(
        locked.message.as_deref().unwrap().contains("401")
            || locked.message.as_deref().unwrap().to_lowercase().contains("auth"),
        "{locked:?}"
    );
    let gone = f.status_until("404", |s| s.state == McpState::Error).await;
    assert!(gone.message.is_some(), "{gone:?}");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn the_catalog_is_served_from_the_cache_while_a_server_cannot_answer() {
    let f = hub(Duration::from_secs(30));
    let cached = McpToolSpec {
        name: "remembered".into(),
        title: None,
        description: "from the last run".into(),
        input_schema: json!({"type": "object"}),
        annotations: Default::default(),
    };
    f.hub.upsert(config("s", "Slow", fixture("silent.mjs")), true, vec![cached]);
    let started = std::time::Instant::now();
    let tools = f.hub.tools();
    assert!(started.elapsed() < Duration::from_millis(100), "listing never waits on a server");
    assert_eq!(tools.len(), 1);
    assert_eq!(f.hub.status("s").unwrap().state, McpState::Connecting);
    // Calling it waits a while for the connection, then says why it failed.
    let mut quick = ctx();
    let cancel = CancellationToken::new();
    quick.cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    assert_eq!(tools[0].tool.execute(json!({}), &quick).await.unwrap_err(), ToolError::Cancelled);
    f.hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_dies_is_restarted_and_its_old_process_group_is_gone() {
    let f = hub(Duration::from_secs(30));
    f.add("e", "Everything", stdio(bin("mcp-server-everything"), &["stdio"]));
    f.ready("e").await;
    let pid = recorded_pids(&f)[0];
    // Kill the server behind the hub's back.
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    f.status_until("e", |s| s.state == McpState::Error).await;
    f.ready("e").await;
    let new_pid = recorded_pids(&f)[0];
    assert_ne!(pid, new_pid);
    let echo = f.tool("everything__echo");
    assert_eq!(echo.execute(json!({"message": "back"}), &ctx()).await.unwrap().text_content(), "Echo: back");
    f.hub.shutdown().await;
    assert!(recorded_pids(&f).is_empty(), "shutdown stops and forgets every process");
    assert!(!std::path::Path::new(&format!("/proc/{new_pid}")).exists() || is_zombie(new_pid));
}

fn recorded_pids(f: &Fixture) -> Vec<u32> {
    let text = std::fs::read_to_string(f.dir.path().join("mcp-processes.json")).unwrap_or_default();
    let map: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap_or_default();
    map.keys().filter_map(|k| k.parse().ok()).collect()
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map(|s| s.contains(") Z ")).unwrap_or(true)
}
