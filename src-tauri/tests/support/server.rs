//! A `colloquy serve` child process for tests that kill and restart the server: start it
//! on a data folder, call operations, read its server-sent events.
//!
//! Included by test files with `#[path = "support/server.rs"] mod server;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout};

pub const TOKEN: &str = "test-token-0123456789";
/// Start-up includes opening (and migrating) the database on a possibly loaded machine.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest silence tolerated on an event stream.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {limit:?}: {what}"),
    }
}

/// A `colloquy serve` child process; killed when dropped, so none outlives the test.
pub struct Server {
    child: Child,
    pub base: String,
    /// Where its stderr (the logs) goes; printed if the test fails.
    pub log: PathBuf,
    /// Keeps reading stdout so the child never blocks on a full pipe.
    stdout: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts `colloquy serve` on `root/data` and waits for its "serving on" line.
    pub async fn start(root: &Path, name: &str) -> Server {
        Self::start_with_env(root, name, &[]).await
    }

    /// [`Server::start`] with extra environment (`COLLOQUY_CLAUDE_PATH`, say).
    pub async fn start_with_env(root: &Path, name: &str, env: &[(&str, &Path)]) -> Server {
        let log = root.join(format!("{name}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_colloquy"))
            .envs(env.iter().copied())
            .args(["serve", "--port", "0", "--token", TOKEN])
            .arg("--data-dir")
            .arg(root.join("data"))
            .arg("--ui-dir")
            .arg(root.join("ui"))
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut server = Server { child, base: String::new(), log, stdout: None };
        let mut lines = BufReader::new(server.child.stdout.take().unwrap()).lines();
        server.base = within(STARTUP_TIMEOUT, "colloquy serve to start", async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("Colloquy is serving on ") {
                    let (base, token) = url.split_once("/#token=").unwrap();
                    assert_eq!(token, TOKEN);
                    return base.to_owned();
                }
            }
            panic!("colloquy serve exited before serving");
        })
        .await;
        server.stdout = Some(tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} }));
        server
    }

    /// A plain operation; panics unless it succeeds.
    pub async fn call(&self, client: &reqwest::Client, operation: &str, body: Value) -> Value {
        let request = client.post(format!("{}/api/{operation}", self.base)).bearer_auth(TOKEN).json(&body);
        let response = within(REQUEST_TIMEOUT, operation, request.send()).await.unwrap();
        let status = response.status();
        let body: Value = within(REQUEST_TIMEOUT, operation, response.json()).await.unwrap();
        assert!(status.is_success(), "{operation}: {status} {body}");
        body
    }

    /// A plain operation that may fail (the server may be gone): its body, or why not.
    pub async fn try_call(&self, client: &reqwest::Client, operation: &str, body: Value) -> Result<Value, String> {
        let request = client.post(format!("{}/api/{operation}", self.base)).bearer_auth(TOKEN).json(&body);
        let response = timeout(REQUEST_TIMEOUT, request.send())
            .await
            .map_err(|_| format!("{operation} timed out"))?
            .map_err(|e| format!("{operation}: {e}"))?;
        let status = response.status();
        let body: Value = timeout(REQUEST_TIMEOUT, response.json())
            .await
            .map_err(|_| format!("{operation} timed out"))?
            .map_err(|e| format!("{operation}: {e}"))?;
        if !status.is_success() {
            return Err(format!("{operation}: {status} {body}"));
        }
        Ok(body)
    }

    /// A streaming operation that may fail: its events after the `reply` event, or why not.
    pub async fn try_stream_op(
        &self,
        client: &reqwest::Client,
        operation: &str,
        body: Value,
    ) -> Result<(Value, Events), String> {
        let request = client.post(format!("{}/api/{operation}", self.base)).bearer_auth(TOKEN).json(&body);
        let response = timeout(REQUEST_TIMEOUT, request.send())
            .await
            .map_err(|_| format!("{operation} timed out"))?
            .map_err(|e| format!("{operation}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{operation}: {}", response.status()));
        }
        let mut events = Events {
            body: response.bytes_stream().map(|read| read.map(Vec::from)).boxed(),
            buffer: Vec::new(),
            last_read: Instant::now(),
        };
        let (_, reply) = events.next_event().await.ok_or_else(|| format!("{operation}: no reply event"))?;
        Ok((reply, events))
    }

    /// `stream_open`, checked up to its `reply` event.
    pub async fn stream(&self, client: &reqwest::Client, body: Value) -> Events {
        self.stream_op(client, "stream_open", body).await
    }

    /// A streaming operation (`stream_open`, `stream_continue`, …): its reply event has
    /// been read and was live.
    pub async fn stream_op(&self, client: &reqwest::Client, operation: &str, body: Value) -> Events {
        let request = client.post(format!("{}/api/{operation}", self.base)).bearer_auth(TOKEN).json(&body);
        let response = within(REQUEST_TIMEOUT, operation, request.send()).await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let mut events = Events {
            body: response.bytes_stream().map(|read| read.map(Vec::from)).boxed(),
            buffer: Vec::new(),
            last_read: Instant::now(),
        };
        let (_, reply) = events.next_event().await.expect("a reply event");
        assert_eq!(reply["live"], true, "{reply}");
        events
    }

    /// Sends SIGKILL (on Unix) without waiting.
    pub fn kill(&mut self) {
        self.child.start_kill().unwrap();
    }

    /// Sends SIGKILL without waiting, through a shared reference (a client task may hold
    /// the server too).
    pub fn sigkill(&self) {
        let pid = self.child.id().expect("the server is still running") as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }

    /// Sends SIGTERM without waiting: the server stops the way a user's Ctrl-C stops it.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("the server is still running") as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }

    pub async fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        within(REQUEST_TIMEOUT, "the server to exit", self.child.wait()).await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if let Some(stdout) = self.stdout.take() {
            stdout.abort();
        }
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            eprintln!("--- {} ---\n{log}", self.log.display());
        }
    }
}

/// The `data:` events of a server-sent event stream, each with the time its last byte
/// arrived.
pub struct Events {
    body: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: Vec<u8>,
    last_read: Instant,
}

impl Events {
    /// The next event, or `None` once the stream has ended or the connection broke.
    /// Cancel-safe: nothing is consumed until a whole event is returned.
    pub async fn next_event(&mut self) -> Option<(Instant, Value)> {
        loop {
            while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let frame = String::from_utf8(frame).unwrap();
                let data: String = frame.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
                if !data.is_empty() {
                    return Some((self.last_read, serde_json::from_str(&data).unwrap()));
                }
            }
            match within(EVENT_TIMEOUT, "the next server-sent event", self.body.next()).await {
                Some(Ok(bytes)) => {
                    self.last_read = Instant::now();
                    self.buffer.extend_from_slice(&bytes);
                }
                Some(Err(_)) | None => return None,
            }
        }
    }
}
