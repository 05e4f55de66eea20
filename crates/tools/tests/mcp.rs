//! MCP servers for real: `@modelcontextprotocol/server-everything` over stdio and over
//! streamable HTTP, `@modelcontextprotocol/server-filesystem`, small fixture servers that
//! misbehave, and `recorder.mjs`, which writes down every message it receives so a test
//! can check what really reached the server (`tests/mcp-servers/`, installed by
//! `cargo xtask setup`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use colloquy_tools::mcp::{CatalogSink, HubOptions, McpEndpoint, McpHub, McpServerConfig, McpToolSpec};
use colloquy_tools::{Progress, Tool, ToolContext, ToolError};
use protocol::mcp::{McpLogLevel, McpState, McpStatus};
use serde_json::{Value, json};
use testkit::outside::{free_port, received, received_until, until_listening};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long a test waits for the hub to announce something: a safety net for a hung
/// test, not a threshold.
const PATIENCE: Duration = Duration::from_secs(180);

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers")
}

fn bin(name: &str) -> String {
    let path = servers_dir().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing: run `cargo xtask setup` (npm ci in tests/mcp-servers)", path.display());
    path.to_string_lossy().into_owned()
}

fn fixture(name: &str) -> McpEndpoint {
    McpEndpoint::Stdio {
        command: "node".into(),
        args: vec![servers_dir().join("fixtures").join(name).to_string_lossy().into_owned()],
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn stdio(command: String, args: &[&str]) -> McpEndpoint {
    McpEndpoint::Stdio {
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
    hub_pinging(connect_timeout, Duration::from_secs(1))
}

/// A hub that pings its HTTP servers every `ping_interval`.
fn hub_pinging(connect_timeout: Duration, ping_interval: Duration) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(MemorySink::default());
    let hub = McpHub::new(HubOptions {
        processes_file: dir.path().join("mcp-processes.json"),
        connect_timeout,
        ping_interval,
        http: colloquy_tools::mcp::McpHttp::new().unwrap(),
        sink: sink.clone(),
    });
    Fixture { hub, sink, dir }
}

fn config(id: &str, name: &str, endpoint: McpEndpoint) -> McpServerConfig {
    McpServerConfig {
        id: id.into(),
        name: name.into(),
        namespace: colloquy_tools::mcp::catalog::slug(name),
        endpoint,
        timeout: Duration::from_secs(20),
        trust_read_only: false,
        sampling_allowed: false,
        blocked: None,
    }
}

impl Fixture {
    fn add(&self, id: &str, name: &str, transport: McpEndpoint) {
        self.hub.upsert(config(id, name, transport), true, Vec::new());
    }

    /// Waits until the server's status satisfies `done`, reading it again at each change
    /// the hub announces.
    async fn status_until(&self, id: &str, done: impl Fn(&McpStatus) -> bool) -> McpStatus {
        let mut changes = self.hub.changes();
        let wait = async {
            loop {
                if let Some(status) = self.hub.status(id).filter(|s| done(s)) {
                    return status;
                }
                changes.changed().await.expect("the hub is alive");
            }
        };
        tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| {
            panic!("server {id} never reached the expected status; last: {:?}", self.hub.status(id))
        })
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

/// A context whose progress reports are logged; the `Notify` hears each one.
fn progress_log() -> (ToolContext, Arc<Mutex<Vec<Progress>>>, Arc<Notify>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let progressed = Arc::new(Notify::new());
    let (sink, signal) = (log.clone(), progressed.clone());
    let mut ctx = ctx();
    ctx.progress = Arc::new(move |p| {
        sink.lock().unwrap().push(p);
        signal.notify_one();
    });
    (ctx, log, progressed)
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
    let (with_progress, log, _) = progress_log();
    long.execute(json!({"duration": 1, "steps": 4}), &with_progress).await.unwrap();
    let seen = log.lock().unwrap().clone();
    assert!(seen.len() >= 3, "progress was reported: {seen:?}");
    assert_eq!(seen.last().unwrap().total, Some(4.0));

    // Stop mid-call: the call ends at once, and the server stays usable.
    let (cancelling, _, progressed) = progress_log();
    let stop = cancelling.cancel.clone();
    let call = tokio::spawn({
        let long = long.clone();
        async move { long.execute(json!({"duration": 30, "steps": 30}), &cancelling).await }
    });
    tokio::time::timeout(PATIENCE, progressed.notified()).await.expect("the call reports progress");
    stop.cancel();
    assert_eq!(stopped_in_time(call).await, ToolError::Cancelled);
    assert_eq!(
        echo.execute(json!({"message": "still here"}), &ctx()).await.unwrap().text_content(),
        "Echo: still here"
    );
    f.hub.shutdown().await;
}

#[tokio::test]
async fn audit_10_a_stdio_server_sees_only_the_safe_variables_and_its_own() {
    // The test process has plenty of variables a server has no business seeing (cargo's,
    // the test runner's, whatever the shell exported).
    let private: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| !colloquy_tools::mcp::environment::INHERITED_VARIABLES.contains(&name.as_str()))
        .collect();
    assert!(!private.is_empty(), "the test process has variables of its own");
    let f = hub(Duration::from_secs(30));
    let mut endpoint = stdio(bin("mcp-server-everything"), &["stdio"]);
    if let McpEndpoint::Stdio { env, .. } = &mut endpoint {
        env.insert("SERVER_TOKEN".into(), "configured".into());
    }
    f.add("e", "Everything", endpoint);
    f.ready("e").await;
    let get_env = f.tool("everything__get-env");
    assert!(get_env.definition().annotations.read_only, "it may run without asking");
    let seen: BTreeMap<String, String> =
        serde_json::from_str(&get_env.execute(json!({}), &ctx()).await.unwrap().text_content()).unwrap();
    assert_eq!(seen.get("SERVER_TOKEN").map(String::as_str), Some("configured"), "its own variables reach it");
    assert_eq!(seen.get("PATH"), std::env::var("PATH").ok().as_ref(), "and PATH, to find its programs");
    let leaked: Vec<&String> = private.iter().filter(|name| seen.contains_key(*name)).collect();
    assert!(leaked.is_empty(), "the app's own variables never reach a server: {leaked:?}");
    let unexpected: Vec<&String> = seen
        .keys()
        .filter(|name| {
            *name != "SERVER_TOKEN" && !colloquy_tools::mcp::environment::INHERITED_VARIABLES.contains(&name.as_str())
        })
        .collect();
    assert!(unexpected.is_empty(), "nothing but the safe set and its own: {unexpected:?}");
    f.hub.shutdown().await;
}

/// A stopped call's result. The call it stops would run for half a minute; a minute is
/// only a bound for a stuck test, not a measure of speed.
async fn stopped_in_time(call: tokio::task::JoinHandle<Result<protocol::tool::ToolOutput, ToolError>>) -> ToolError {
    tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("a stopped call ends before the server would have finished it")
        .unwrap()
        .unwrap_err()
}

/// A server process on `port`, killed when dropped; resolves once it accepts connections.
async fn http_server(mut command: tokio::process::Command, port: u16) -> tokio::process::Child {
    let server = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    until_listening(port).await;
    server
}

#[tokio::test]
async fn everything_over_streamable_http_lists_calls_reports_progress_and_cancels() {
    let port = free_port().await.unwrap();
    let mut command = tokio::process::Command::new(bin("mcp-server-everything"));
    command.arg("streamableHttp").env("PORT", port.to_string());
    let mut server = http_server(command, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let f = hub(Duration::from_secs(30));
    f.add("h", "Everything HTTP", McpEndpoint::Http { url, headers: BTreeMap::new() });
    f.ready("h").await;
    let echo = f.tool("everything_http__echo");
    assert_eq!(echo.execute(json!({"message": "over http"}), &ctx()).await.unwrap().text_content(), "Echo: over http");
    let sum = f.tool("everything_http__get-sum").execute(json!({"a": 19, "b": 23}), &ctx()).await.unwrap();
    assert!(sum.text_content().contains("42"), "{sum:?}");

    let long = f.tool("everything_http__trigger-long-running-operation");
    let (with_progress, log, _) = progress_log();
    long.execute(json!({"duration": 1, "steps": 3}), &with_progress).await.unwrap();
    assert!(!log.lock().unwrap().is_empty(), "progress arrives over HTTP too");

    // Stop mid-call over HTTP: the call ends, and the server stays usable.
    let (cancelling, _, progressed) = progress_log();
    let stop = cancelling.cancel.clone();
    let call = tokio::spawn({
        let long = long.clone();
        async move { long.execute(json!({"duration": 30, "steps": 30}), &cancelling).await }
    });
    tokio::time::timeout(PATIENCE, progressed.notified()).await.expect("the call reports progress");
    stop.cancel();
    assert_eq!(stopped_in_time(call).await, ToolError::Cancelled);
    assert_eq!(
        echo.execute(json!({"message": "still here"}), &ctx()).await.unwrap().text_content(),
        "Echo: still here"
    );
    f.hub.shutdown().await;
    server.kill().await.unwrap();
}

/// `server-everything` over streamable HTTP on `port`, and its URL.
async fn everything_over_http(port: u16) -> (tokio::process::Child, String) {
    let mut command = tokio::process::Command::new(bin("mcp-server-everything"));
    command.arg("streamableHttp").env("PORT", port.to_string());
    (http_server(command, port).await, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn audit_09_an_http_server_that_restarted_gets_a_new_session_and_the_next_call_succeeds() {
    let port = free_port().await.unwrap();
    let (mut server, url) = everything_over_http(port).await;
    // No pings: the call itself must find out that the server forgot the session.
    let f = hub_pinging(Duration::from_secs(30), Duration::from_secs(3600));
    f.add("h", "Everything HTTP", McpEndpoint::Http { url, headers: BTreeMap::new() });
    f.ready("h").await;
    let echo = f.tool("everything_http__echo");
    assert_eq!(echo.execute(json!({"message": "before"}), &ctx()).await.unwrap().text_content(), "Echo: before");

    server.kill().await.unwrap();
    let (mut server, _) = everything_over_http(port).await;
    // The restarted server answers our old session with HTTP 400 "No valid session ID
    // provided"; the call used to wait for its timeout (20 s here) and fail.
    let out = echo.execute(json!({"message": "after"}), &ctx()).await.unwrap();
    assert_eq!(out.text_content(), "Echo: after");
    assert_eq!(f.hub.status("h").unwrap().state, McpState::Ready);
    let sum = f.tool("everything_http__get-sum").execute(json!({"a": 1, "b": 2}), &ctx()).await.unwrap();
    assert!(sum.text_content().contains('3'), "{sum:?}");
    f.hub.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn audit_09_an_http_server_that_went_away_is_not_shown_ready_and_is_found_again() {
    let port = free_port().await.unwrap();
    let (mut server, url) = everything_over_http(port).await;
    let f = hub(Duration::from_secs(30));
    f.add("h", "Everything HTTP", McpEndpoint::Http { url: url.clone(), headers: BTreeMap::new() });
    f.ready("h").await;
    server.kill().await.unwrap();

    let status = f.status_until("h", |s| s.state == McpState::Error).await;
    let said = status.message.unwrap();
    assert!(said.contains("reach") && said.contains("trying again in"), "{said}");

    let (mut server, _) = everything_over_http(port).await;
    assert!(f.hub.refresh("h"), "a refresh tries again at once");
    f.ready("h").await;
    let echo = f.tool("everything_http__echo");
    assert_eq!(echo.execute(json!({"message": "back"}), &ctx()).await.unwrap().text_content(), "Echo: back");
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

/// Roots: the folders the hub offers replace the filesystem server's own (it asks for them
/// after the handshake, and again when told they changed).
#[tokio::test]
async fn the_filesystem_server_keeps_to_the_roots_offered_and_follows_their_changes() {
    let own = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let f = hub(Duration::from_secs(30));
    f.hub.set_roots(vec![workspace.path().to_path_buf()]);
    f.add("fs", "Files", stdio(bin("mcp-server-filesystem"), &[own.path().to_str().unwrap()]));
    f.ready("fs").await;
    let allowed = f.tool("files__list_allowed_directories");
    let listed = || async { allowed.execute(json!({}), &ctx()).await.unwrap().text_content() };
    let canonical = |dir: &tempfile::TempDir| dir.path().canonicalize().unwrap().to_string_lossy().into_owned();
    let until = |want: String, not: String| {
        let listed = &listed;
        async move {
            let deadline = tokio::time::Instant::now() + PATIENCE;
            loop {
                let text = listed().await;
                if text.contains(&want) && !text.contains(&not) {
                    return text;
                }
                assert!(tokio::time::Instant::now() < deadline, "still {text:?}, waiting for {want}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    until(canonical(&workspace), canonical(&own)).await;
    // Another workspace: the server is told, asks again, and keeps to the new one.
    f.hub.set_roots(vec![other.path().to_path_buf()]);
    until(canonical(&other), canonical(&workspace)).await;
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
    let said = garbage.message.as_deref().unwrap();
    assert!(said.contains("not MCP") && said.contains("Welcome to the fixture server!"), "{garbage:?}");
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
        McpEndpoint::Http { url: refusing_server("401 Unauthorized").await, headers: BTreeMap::new() },
    );
    f.add("404", "Gone", McpEndpoint::Http { url: refusing_server("404 Not Found").await, headers: BTreeMap::new() });
    let locked = f.status_until("401", |s| s.state == McpState::Error).await;
    let said = locked.message.as_deref().unwrap();
    assert!(said.contains("401") && said.contains("header"), "{locked:?}");
    let gone = f.status_until("404", |s| s.state == McpState::Error).await;
    let said = gone.message.as_deref().unwrap();
    assert!(said.contains("404") && said.contains("check the URL"), "{gone:?}");
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

// ---- the recorder: what really reached the server --------------------------------------

/// The recorder fixture over stdio, writing what it receives to `log`.
fn recorder(log: &Path, extra: &[(&str, &str)]) -> McpEndpoint {
    let mut env = BTreeMap::from([("FIXTURE_LOG".to_owned(), log.to_string_lossy().into_owned())]);
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    McpEndpoint::Stdio {
        command: "node".into(),
        args: vec![servers_dir().join("fixtures/recorder.mjs").to_string_lossy().into_owned()],
        env,
        cwd: None,
    }
}

/// The recorder over streamable HTTP on a free port, and its URL.
async fn recorder_over_http(log: &Path) -> (tokio::process::Child, String) {
    let port = free_port().await.unwrap();
    let mut command = tokio::process::Command::new("node");
    command
        .arg(servers_dir().join("fixtures/recorder.mjs"))
        .args(["--http", &port.to_string()])
        .env("FIXTURE_LOG", log);
    (http_server(command, port).await, format!("http://127.0.0.1:{port}/mcp"))
}

fn is_call_of(entry: &Value, tool: &str) -> bool {
    entry["message"]["method"] == "tools/call" && entry["message"]["params"]["name"] == tool
}

/// Calls `wait` (which never answers), stops it once the server has it, and returns the
/// `notifications/cancelled` the server then received.
async fn stop_a_waiting_call(f: &Fixture, tool: &str, log: &Path) -> Value {
    let wait = f.tool(tool);
    let cancelling = ctx();
    let stop = cancelling.cancel.clone();
    let call = tokio::spawn(async move { wait.execute(json!({}), &cancelling).await });
    let request = received_until(log, "the call", |e| is_call_of(e, "wait")).await;
    stop.cancel();
    assert_eq!(stopped_in_time(call).await, ToolError::Cancelled);
    let cancelled =
        received_until(log, "notifications/cancelled", |e| e["message"]["method"] == "notifications/cancelled").await;
    assert_eq!(cancelled["message"]["params"]["requestId"], request["message"]["id"], "it names the stopped call");
    cancelled
}

#[tokio::test]
async fn a_stopped_call_tells_the_server_over_stdio_and_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let (stdio_log, http_log) = (dir.path().join("stdio.jsonl"), dir.path().join("http.jsonl"));
    let (mut server, url) = recorder_over_http(&http_log).await;
    let f = hub(Duration::from_secs(30));
    f.add("s", "Local", recorder(&stdio_log, &[]));
    f.add("h", "Remote", McpEndpoint::Http { url, headers: BTreeMap::new() });
    f.ready("s").await;
    f.ready("h").await;

    let cancelled = stop_a_waiting_call(&f, "local__wait", &stdio_log).await;
    assert_eq!(cancelled["message"]["params"]["reason"], "stopped by the user");
    let cancelled = stop_a_waiting_call(&f, "remote__wait", &http_log).await;
    assert_eq!(cancelled["message"]["params"]["reason"], "stopped by the user");

    for tool in ["local__echo", "remote__echo"] {
        let out = f.tool(tool).execute(json!({"text": "still here"}), &ctx()).await.unwrap();
        assert_eq!(out.text_content(), "still here", "{tool} is still usable");
    }
    f.hub.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn configured_headers_reach_an_http_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let (mut server, url) = recorder_over_http(&log).await;
    let f = hub(Duration::from_secs(30));
    let headers = BTreeMap::from([
        ("Authorization".to_owned(), "Bearer tok-9f2c".to_owned()),
        ("X-Team".to_owned(), "blue".to_owned()),
    ]);
    f.add("h", "Remote", McpEndpoint::Http { url, headers });
    f.ready("h").await;
    let initialize = received_until(&log, "initialize", |e| e["message"]["method"] == "initialize").await;
    assert_eq!(initialize["headers"]["authorization"], "Bearer tok-9f2c", "from the handshake on");
    let seen = f.tool("remote__headers").execute(json!({}), &ctx()).await.unwrap().text_content();
    let seen: Value = serde_json::from_str(&seen).unwrap();
    assert_eq!((seen["authorization"].as_str(), seen["x-team"].as_str()), (Some("Bearer tok-9f2c"), Some("blue")));
    f.hub.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_call_that_gets_no_answer_times_out_says_so_and_the_server_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdio.jsonl");
    let f = hub(Duration::from_secs(30));
    let mut quick = config("s", "Slow", recorder(&log, &[]));
    quick.timeout = Duration::from_secs(1);
    f.hub.upsert(quick, true, Vec::new());
    f.ready("s").await;

    let error = f.tool("slow__wait").execute(json!({}), &ctx()).await.unwrap_err();
    assert_eq!(error, ToolError::TimedOut(Duration::from_secs(1)));
    assert_eq!(error.to_string(), "timed out after 1 s");
    let cancelled =
        received_until(&log, "notifications/cancelled", |e| e["message"]["method"] == "notifications/cancelled").await;
    assert_eq!(cancelled["message"]["params"]["reason"], "timed out", "the server is told to stop");
    let out = f.tool("slow__echo").execute(json!({"text": "after"}), &ctx()).await.unwrap();
    assert_eq!(out.text_content(), "after");
    assert_eq!(f.hub.status("s").unwrap().state, McpState::Ready);
    f.hub.shutdown().await;
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_tools_listed_before_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = hub(Duration::from_secs(30));
    f.add("s", "Rec", recorder(&dir.path().join("log.jsonl"), &[]));
    let listed = f.ready("s").await.tool_count;
    assert_eq!(listed, 6);
    f.tool("rec__break_listing").execute(json!({}), &ctx()).await.unwrap();
    assert!(f.hub.refresh("s"));
    let status = f.status_until("s", |s| s.message.is_some()).await;
    assert_eq!(status.state, McpState::Ready, "still connected: {status:?}");
    let said = status.message.unwrap();
    assert!(said.contains("the tool index is being rebuilt") && said.contains("last known tools are kept"), "{said}");
    assert_eq!(status.tool_count, listed);
    assert_eq!(f.hub.tools().len(), 6, "the old tools are still offered");
    assert_eq!(f.sink.0.lock().unwrap()["s"].len(), 6, "and the cached list was not replaced");
    let out = f.tool("rec__echo").execute(json!({"text": "works"}), &ctx()).await.unwrap();
    assert_eq!(out.text_content(), "works");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn a_new_server_whose_tool_list_fails_is_an_error_not_ready_with_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let f = hub(Duration::from_secs(30));
    f.add("s", "Rec", recorder(&dir.path().join("log.jsonl"), &[("FIXTURE_LIST_FAILS", "1")]));
    let status = f.status_until("s", |s| s.state == McpState::Error).await;
    let said = status.message.unwrap();
    assert!(said.contains("it connected, but `tools/list` failed") && said.contains("trying again in"), "{said}");
    assert!(f.hub.tools().is_empty());
    f.hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_dies_right_after_connecting_is_retried_ever_more_slowly() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let f = hub(Duration::from_secs(30));
    f.add("s", "Flaky", recorder(&log, &[("FIXTURE_DIE_AFTER_LIST", "1")]));
    // Each start answers the handshake and lists its tools, then exits. The status says
    // when it is tried next: the delay must keep growing (not start over at each
    // successful handshake).
    let mut delays: Vec<String> = Vec::new();
    let mut changes = f.hub.changes();
    let three_delays = async {
        loop {
            let status = f.hub.status("s").unwrap();
            if let Some(delay) = status.message.as_deref().and_then(|m| m.split("trying again in ").nth(1))
                && delays.last().map(String::as_str) != Some(delay)
            {
                delays.push(delay.to_owned());
            }
            if delays.len() == 3 {
                break;
            }
            changes.changed().await.expect("the hub is alive");
        }
    };
    let _ = tokio::time::timeout(PATIENCE, three_delays).await;
    assert_eq!(delays, vec!["1 s", "2 s", "4 s"]);
    let starts = received(&log).iter().filter(|e| e["message"]["method"] == "initialize").count();
    assert!(starts >= 3, "it was started again each time ({starts})");
    assert!(f.hub.tools().len() == 6, "the tools it listed are still offered while it is away");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn issue_20_what_a_server_logs_is_kept_per_server_and_its_level_can_be_set() {
    let f = hub(Duration::from_secs(30));
    f.add("e", "Everything", stdio(bin("mcp-server-everything"), &["stdio"]));
    f.ready("e").await;
    let log = f.hub.log("e").unwrap();
    assert!(log.supported, "server-everything offers logging");
    assert_eq!(log.level, None);

    f.tool("everything__toggle-simulated-logging").execute(json!({}), &ctx()).await.unwrap();
    // It logs one message at once, then one every 5 s (after what it logged on its own,
    // such as the roots it was given).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let entries = loop {
        let entries = f.hub.log("e").unwrap().entries;
        if entries.iter().any(|e| e.text.contains("message")) || tokio::time::Instant::now() > deadline {
            break entries;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(entries.iter().any(|e| e.text.contains("message")), "{entries:?}");

    f.hub.set_log_level("e", McpLogLevel::Emergency).await.unwrap();
    assert_eq!(f.hub.log("e").unwrap().level, Some(McpLogLevel::Emergency));
    let said = f.hub.set_log_level("nope", McpLogLevel::Info).await.unwrap_err();
    assert!(said.contains("removed"), "{said}");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_call_to_an_http_server_that_went_away_fails_in_words() {
    let port = free_port().await.unwrap();
    let (mut server, url) = everything_over_http(port).await;
    let f = hub_pinging(Duration::from_secs(30), Duration::from_secs(3600));
    f.add("h", "Everything HTTP", McpEndpoint::Http { url, headers: BTreeMap::new() });
    f.ready("h").await;
    server.kill().await.unwrap();
    let error = f.tool("everything_http__echo").execute(json!({"message": "x"}), &ctx()).await.unwrap_err();
    let said = error.to_string();
    assert!(!said.contains("rmcp::") && !said.contains("Transport ["), "{said}");
    assert!(said.contains("could not be reached"), "{said}");
    let status = f.status_until("h", |s| s.state == McpState::Error).await;
    let message = status.message.unwrap();
    assert!(!message.contains("rmcp::") && !message.contains("Transport ["), "{message}");
    f.hub.shutdown().await;
}

/// A context whose server questions are answered by `answer` (`None`: the answer is
/// dropped, as when the reply stops); every question asked is kept.
fn answering(
    answer: impl Fn(&colloquy_tools::asks::Elicitation) -> Option<colloquy_tools::asks::ElicitAnswer>
    + Send
    + Sync
    + 'static,
) -> (ToolContext, Arc<Mutex<Vec<colloquy_tools::asks::Elicitation>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let mut ctx = ctx();
    ctx.asks = Some(Arc::new(move |ask| {
        let colloquy_tools::asks::ServerAsk::Elicit { elicitation, answer: reply } = ask else { return };
        if let Some(given) = answer(&elicitation) {
            let _ = reply.send(given);
        }
        log.lock().unwrap().push(elicitation);
    }));
    (ctx, asked)
}

fn content(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[tokio::test]
async fn issue_20_everything_asks_through_its_elicitation_tool_and_hears_each_answer() {
    use colloquy_tools::asks::ElicitAnswer;
    use protocol::elicitation::FieldInput;
    let f = hub(Duration::from_secs(30));
    f.add("e", "Everything", stdio(bin("mcp-server-everything"), &["stdio"]));
    // Everything offers the tool only to a client that declares elicitation.
    f.status_until("e", |s| s.state == McpState::Ready && s.tool_count > 0).await;
    let mut changes = f.hub.changes();
    let tool = loop {
        if let Some(entry) =
            f.hub.tools().into_iter().find(|t| t.tool.definition().name == "everything__trigger-elicitation-request")
        {
            break entry.tool;
        }
        tokio::time::timeout(PATIENCE, changes.changed()).await.expect("the elicitation tool is offered").unwrap();
    };

    let (accepting, asked) =
        answering(|_| Some(ElicitAnswer::Accept(content(json!({"name": "Ada", "check": true, "integer": 7})))));
    let out = tool.execute(json!({}), &accepting).await.unwrap();
    let text = out.text_content();
    assert!(text.contains("User provided the requested information") && text.contains("Name: Ada"), "{text}");
    assert!(text.contains("Favorite Integer: 7"), "{text}");
    let question = asked.lock().unwrap()[0].clone();
    assert_eq!(question.server_name, "Everything");
    assert!(question.message.contains("Please provide inputs"), "{}", question.message);
    let form = question.form.expect("everything's form is one Colloquy shows");
    let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no field {name}"));
    assert!(field("name").required);
    assert!(matches!(
        field("integer").input,
        FieldInput::Number { integer: true, minimum: Some(1.0), maximum: Some(100.0), .. }
    ));
    assert!(
        matches!(&field("legacyTitledEnum").input, FieldInput::Choice { options, .. } if options[0].label == "Cats")
    );
    assert!(
        matches!(&field("titledMultipleSelectEnum").input, FieldInput::MultiChoice { options, .. } if options[1].label == "Salmon")
    );

    let (declining, _) = answering(|_| Some(ElicitAnswer::Decline));
    assert!(tool.execute(json!({}), &declining).await.unwrap().text_content().contains("User declined"));
    let (cancelling, _) = answering(|_| Some(ElicitAnswer::Cancel));
    assert!(tool.execute(json!({}), &cancelling).await.unwrap().text_content().contains("User cancelled"));
    // An answer that never comes (the reply stopped): the server hears `cancel`.
    let (dropping, _) = answering(|_| None);
    assert!(tool.execute(json!({}), &dropping).await.unwrap().text_content().contains("User cancelled"));
    f.hub.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_form_colloquy_cannot_show_is_refused_to_the_server_with_why() {
    use colloquy_tools::asks::ElicitAnswer;
    let f = hub(Duration::from_secs(30));
    f.add("q", "Asker", fixture("elicitation.mjs"));
    f.ready("q").await;
    let ask = f.tool("asker__ask");
    let (ctx, asked) = answering(|_| Some(ElicitAnswer::Decline));

    // A schema that names a required field it does not have: the card says why, and so
    // does the error the server gets.
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]});
    let said = ask.execute(json!({"schema": schema}), &ctx).await.unwrap().text_content();
    assert!(
        said.contains("\"error\"") && said.contains("Colloquy cannot show this form") && said.contains("`b`"),
        "{said}"
    );
    let why = asked.lock().unwrap()[0].form.clone().unwrap_err();
    assert!(why.contains("`b`"), "{why}");

    // Not a flat form at all (a nested object, no schema): an error to the server, no panic.
    for schema in [json!({"type": "object", "properties": {"a": {"type": "object"}}}), json!(null), json!("text")] {
        let said = ask.execute(json!({"schema": schema}), &ctx).await.unwrap().text_content();
        assert!(said.contains("\"error\""), "{said}");
    }

    // A call that cannot ask the user (no reply to show the card in): the server is told.
    let said = ask
        .execute(json!({"schema": {"type": "object", "properties": {}}}), &self::ctx())
        .await
        .unwrap()
        .text_content();
    assert!(said.contains("no such call"), "{said}");

    // A good form still goes through, and the server hears the answer.
    let (ctx, _) = answering(|_| Some(ElicitAnswer::Accept(content(json!({"a": "x"})))));
    let said = ask
        .execute(json!({"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}), &ctx)
        .await
        .unwrap()
        .text_content();
    assert!(said.contains("\"action\":\"accept\"") && said.contains("\"a\":\"x\""), "{said}");
    f.hub.shutdown().await;
}

#[tokio::test]
async fn issue_20_a_call_does_not_time_out_while_its_question_waits_for_the_user() {
    use colloquy_tools::asks::ElicitAnswer;
    let f = hub(Duration::from_secs(30));
    let mut server = config("q", "Asker", fixture("elicitation.mjs"));
    server.timeout = Duration::from_millis(500);
    f.hub.upsert(server, true, Vec::new());
    f.ready("q").await;
    let mut ctx = ctx();
    // The user takes longer than the call's whole timeout to answer.
    ctx.asks = Some(Arc::new(|ask| {
        let colloquy_tools::asks::ServerAsk::Elicit { answer, .. } = ask else { return };
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let _ = answer.send(ElicitAnswer::Decline);
        });
    }));
    let said = f.tool("asker__ask").execute(json!({"schema": {"type": "object", "properties": {}}}), &ctx).await;
    assert!(said.unwrap().text_content().contains("decline"));
    f.hub.shutdown().await;
}
