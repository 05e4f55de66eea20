//! The Claude Code driver: one long-lived `claude` process per connection, in
//! stream-json mode with its control protocol (permission prompts over stdio, a
//! PreToolUse hook for steering, interrupt, permission modes).
//!
//! - `protocol`: stdout lines → events, and what we write (pure, tested on recordings).

mod protocol;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::{mpsc, oneshot};
use tools::mcp::processes::{self, ProcessRegistry};

use self::protocol::{Line, LineReader};
use crate::driver::{Connection, Driver, DriverError, DriverEvent, PermissionAnswer, PermissionMode, SessionSpec};

/// How many stderr lines messages quote (the last ones).
const STDERR_LINES: usize = 30;
/// How many stray stdout lines messages quote (the first ones: a wrong program or a
/// wrapper explains itself first).
const PRINTED_LINES: usize = 8;
/// How long a process whose output ended may take to exit before we stop waiting for
/// its exit status.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// How long a control request (interrupt, mode change) may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(15);

/// Where the CLI is and what it runs with.
#[derive(Clone, Debug)]
pub struct ClaudeCodeConfig {
    /// The `claude` program: a path, or a name looked up on `PATH`.
    pub program: PathBuf,
    /// Environment added to every session's (tests point it at a mock server).
    pub env: Vec<(String, String)>,
    /// How long the CLI may take to answer `initialize`.
    pub start_timeout: Duration,
}

impl Default for ClaudeCodeConfig {
    fn default() -> Self {
        Self { program: PathBuf::from("claude"), env: Vec::new(), start_timeout: Duration::from_secs(30) }
    }
}

pub struct ClaudeCode {
    config: ClaudeCodeConfig,
    processes: Option<Arc<ProcessRegistry>>,
}

impl ClaudeCode {
    pub fn new(config: ClaudeCodeConfig) -> Self {
        Self { config, processes: None }
    }

    /// Records each CLI's process group in `registry`, so a run that dies without closing
    /// its sessions (killed, crashed) has them reaped at the next start.
    pub fn with_processes(mut self, registry: Arc<ProcessRegistry>) -> Self {
        self.processes = Some(registry);
        self
    }
}

#[async_trait]
impl Driver for ClaudeCode {
    fn name(&self) -> &str {
        "Claude Code"
    }

    async fn connect(&self, spec: &SessionSpec, resume: Option<&str>) -> Result<Box<dyn Connection>, DriverError> {
        let mut command = tokio::process::Command::new(&self.config.program);
        command
            .args(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"])
            .args(["--permission-prompt-tool", "stdio", "--include-partial-messages"])
            .args(["--permission-mode", spec.permission_mode.as_str()]);
        if !spec.model.trim().is_empty() {
            command.args(["--model", spec.model.trim()]);
        }
        if let Some(token) = resume {
            // The `=` form: `--resume` takes an optional value.
            command.arg(format!("--resume={token}"));
        }
        command
            .current_dir(&spec.workspace)
            .envs(self.config.env.iter().map(|(k, v)| (k, v)))
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        // A turn runs on with nobody to read it if the app dies: the CLI dies with it.
        processes::die_with_parent(&mut command);
        let child = command.spawn().map_err(|e| spawn_error(&self.config.program, &e))?;
        let recorded = match (&self.processes, child.id()) {
            (Some(registry), Some(pid)) => {
                registry.add(pid, &format!("Claude Code, agent session {}", spec.session_id));
                Some((registry.clone(), pid))
            }
            _ => None,
        };
        let mut connection = Box::new(ClaudeConnection::start(child, recorded)?);
        match connection.handshake(self.config.start_timeout).await {
            Ok(()) => Ok(connection),
            Err(message) => {
                let report = connection.report().await;
                connection.kill().await;
                if let Some(token) = resume
                    && (message.contains("No conversation found") || report.stderr.contains("No conversation found"))
                {
                    return Err(DriverError::ResumeFailed(format!(
                        "Claude Code could not resume its session {token}: it has no such conversation for this folder \
                         (it keeps sessions per folder and per user). The history here is kept; start a fresh Claude \
                         Code session for this conversation to go on."
                    )));
                }
                // Whether we noticed first that its output ended or that its input did.
                let reason = if report.exit.is_some() && connection.input_closed.load(Ordering::SeqCst) {
                    "it exited before answering".to_owned()
                } else {
                    message
                };
                Err(DriverError::Failed(start_failure(&self.config.program, &reason, &report)))
            }
        }
    }
}

/// Why Claude Code did not start, with what it left behind and what to check.
fn start_failure(program: &std::path::Path, reason: &str, report: &Report) -> String {
    let program = program.display();
    let headline = if report.printed.is_empty() {
        format!("Claude Code ({program}) did not start: {reason}.")
    } else {
        // The CLI writes nothing but JSON in stream-json mode: this is another program,
        // or a wrapper that writes to stdout.
        format!(
            "Claude Code ({program}) did not start: it printed text where Claude Code writes only stream-json \
             ({reason})."
        )
    };
    format!(
        "{headline}\n{report}\nCheck that {program} is the Claude Code CLI (`{program} --version` prints a version \
         followed by \"(Claude Code)\"): set COLLOQUY_CLAUDE_PATH to the right program, or install it with \
         `npm install -g @anthropic-ai/claude-code`. Then send the message again."
    )
}

/// What a Claude Code process left for the user to read.
#[derive(Default)]
struct Report {
    /// How it exited, once it has.
    exit: Option<String>,
    /// The first lines it printed on stdout that were not JSON.
    printed: Vec<String>,
    /// The last lines of its error output.
    stderr: String,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lines = Vec::new();
        if let Some(exit) = &self.exit {
            lines.push(format!("It exited with {exit}."));
        }
        if !self.printed.is_empty() {
            lines.push(format!("It printed:\n{}", indent(self.printed.iter().map(String::as_str))));
        }
        if !self.stderr.is_empty() {
            lines.push(format!("Its error output ended with:\n{}", indent(self.stderr.lines())));
        }
        if lines.is_empty() {
            lines.push("It printed nothing.".to_owned());
        }
        f.write_str(&lines.join("\n"))
    }
}

fn indent<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    lines.map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

/// `exit code 3`, `signal 9`: how a process ended, in words.
fn exit_words(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    status.to_string()
}

fn spawn_error(program: &std::path::Path, error: &std::io::Error) -> DriverError {
    match error.kind() {
        std::io::ErrorKind::NotFound => DriverError::NotInstalled(format!(
            "Claude Code ({}) is not installed: install it with `npm install -g @anthropic-ai/claude-code`, \
             or set COLLOQUY_CLAUDE_PATH to where it is",
            program.display()
        )),
        std::io::ErrorKind::PermissionDenied => {
            DriverError::NotInstalled(format!("{} cannot be run (permission denied)", program.display()))
        }
        _ => DriverError::Failed(format!("Claude Code ({}) could not be started: {error}", program.display())),
    }
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>>;

struct ClaudeConnection {
    child: Option<Child>,
    /// Where its process group is recorded, and its leader's pid.
    recorded: Option<(Arc<ProcessRegistry>, u32)>,
    /// How the process exited, once seen.
    exit: Option<String>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    events: mpsc::UnboundedReceiver<DriverEvent>,
    pending: Pending,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Stray stdout lines (not JSON), the first few.
    printed: Arc<Mutex<Vec<String>>>,
    closed: Arc<AtomicBool>,
    /// Writing to its stdin failed: it closed its input (it has exited, as a rule).
    input_closed: AtomicBool,
    /// Fires when stdout ends (the process exited or closed it).
    ended: Arc<tokio::sync::Notify>,
    next_id: AtomicU64,
    /// The tasks reading stdout and stderr: they end with the pipes, and are stopped
    /// with the connection (a `JoinSet` aborts its tasks when dropped).
    readers: tokio::task::JoinSet<()>,
}

impl ClaudeConnection {
    /// Takes the child's pipes and starts reading them. Without them, the child is
    /// stopped.
    fn start(mut child: Child, recorded: Option<(Arc<ProcessRegistry>, u32)>) -> Result<Self, DriverError> {
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            stop_group(&mut child, recorded);
            return Err(DriverError::Failed("Claude Code's pipes could not be opened".into()));
        };
        let stdin = Arc::new(tokio::sync::Mutex::new(Some(stdin)));
        let (tx, events) = mpsc::unbounded_channel();
        let pending: Pending = Arc::default();
        let tail: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let printed: Arc<Mutex<Vec<String>>> = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(tokio::sync::Notify::new());
        let mut readers = tokio::task::JoinSet::new();
        {
            let tail = tail.clone();
            readers.spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Ok(mut tail) = tail.lock() {
                        if tail.len() == STDERR_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line);
                    }
                }
            });
        }
        {
            let (pending, stdin, closed, ended) = (pending.clone(), stdin.clone(), closed.clone(), ended.clone());
            let printed = printed.clone();
            readers.spawn(async move {
                let mut reader = LineReader::default();
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    for item in reader.read(&line) {
                        match item {
                            Line::Event(event) => {
                                let _ = tx.send(event);
                            }
                            Line::ControlResponse { request_id, result } => {
                                let waiter = pending.lock().ok().and_then(|mut p| p.remove(&request_id));
                                if let Some(waiter) = waiter {
                                    let _ = waiter.send(result);
                                }
                            }
                            // Every request must be answered, or the CLI waits forever.
                            Line::UnsupportedRequest { request_id, subtype } => {
                                let answer = protocol::control_error(
                                    &request_id,
                                    &format!("Colloquy does not handle {subtype}"),
                                );
                                let _ = write_line(&stdin, &answer).await;
                            }
                            Line::NotJson(text) => {
                                tracing::debug!(line = %text, "Claude Code wrote a line that is not stream-json");
                                if let Ok(mut printed) = printed.lock()
                                    && printed.len() < PRINTED_LINES
                                {
                                    printed.push(text);
                                }
                            }
                        }
                    }
                }
                closed.store(true, Ordering::SeqCst);
                if let Ok(mut pending) = pending.lock() {
                    pending.clear();
                }
                ended.notify_waiters();
            });
        }
        Ok(Self {
            child: Some(child),
            recorded,
            exit: None,
            stdin,
            events,
            pending,
            stderr: tail,
            printed,
            closed,
            input_closed: AtomicBool::new(false),
            ended,
            next_id: AtomicU64::new(1),
            readers,
        })
    }

    /// What the process left for the user to read. Once its output has ended, waits
    /// briefly for it to exit (for the exit status) and for its last error output.
    async fn report(&mut self) -> Report {
        if self.exit.is_none()
            && let Some(child) = self.child.as_mut()
        {
            let gone = self.closed.load(Ordering::SeqCst) || self.input_closed.load(Ordering::SeqCst);
            let status = if gone {
                tokio::time::timeout(EXIT_WAIT, child.wait()).await.ok().and_then(Result::ok)
            } else {
                child.try_wait().ok().flatten()
            };
            self.exit = status.map(exit_words);
        }
        if self.exit.is_some() {
            // The stderr reader ends right after the process does.
            let _ = tokio::time::timeout(EXIT_WAIT, async {
                while let Some(result) = self.readers.join_next().await {
                    if result.is_err() {
                        break;
                    }
                }
            })
            .await;
        }
        let stderr = self.stderr.lock().map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n")).unwrap_or_default();
        let printed = self.printed.lock().map(|p| p.clone()).unwrap_or_default();
        Report { exit: self.exit.clone(), printed, stderr }
    }

    /// `initialize` (registers the steering hook): the sign the CLI is ready.
    async fn handshake(&mut self, timeout: Duration) -> Result<(), String> {
        match self.control(protocol::initialize(), timeout).await {
            Ok(_) => Ok(()),
            Err(error) => {
                // It may have explained itself in a result before exiting.
                while let Ok(event) = self.events.try_recv() {
                    if let DriverEvent::TurnFinished { error: Some(said), .. } = event {
                        return Err(said);
                    }
                }
                Err(error)
            }
        }
    }

    /// Sends a control request and waits for its answer.
    async fn control(&self, request: Value, timeout: Duration) -> Result<Value, String> {
        let id = format!("colloquy-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        let ended = self.ended.notified();
        if self.closed.load(Ordering::SeqCst) {
            return Err("it has exited".into());
        }
        write_line(&self.stdin, &protocol::control_request(&id, request)).await.map_err(|e| {
            self.input_closed.store(true, Ordering::SeqCst);
            format!("it stopped taking input ({e})")
        })?;
        tokio::select! {
            answer = rx => answer.unwrap_or_else(|_| Err("it exited before answering".into())),
            _ = ended => Err("it exited before answering".into()),
            _ = tokio::time::sleep(timeout) => Err(format!("it did not answer within {} s", timeout.as_secs())),
        }
    }

    async fn write(&mut self, line: &Value) -> Result<(), DriverError> {
        match write_line(&self.stdin, line).await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.input_closed.store(true, Ordering::SeqCst);
                let report = self.report().await;
                Err(DriverError::Failed(format!("Claude Code stopped taking input ({e}).\n{report}")))
            }
        }
    }

    /// Stops the process and everything it started.
    async fn kill(&mut self) {
        self.stdin.lock().await.take();
        if let Some(mut child) = self.child.take() {
            stop_group(&mut child, self.recorded.take());
            let _ = child.kill().await;
        }
    }
}

impl Drop for ClaudeConnection {
    /// A connection dropped without `close` (its task was aborted) still takes its whole
    /// process group with it, not just the leader.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_group(&mut child, self.recorded.take());
        }
    }
}

/// SIGKILL to the child's process group, which is then no longer recorded.
fn stop_group(child: &mut Child, recorded: Option<(Arc<ProcessRegistry>, u32)>) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) on the child's own process group (it was spawned as its leader
        // and has not been reaped, so the id is still its own).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    if let Some((registry, pid)) = recorded {
        registry.forget(pid);
    }
}

async fn write_line(stdin: &tokio::sync::Mutex<Option<ChildStdin>>, value: &Value) -> std::io::Result<()> {
    let mut guard = stdin.lock().await;
    let Some(stdin) = guard.as_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin is closed"));
    };
    let mut line = value.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await
}

#[async_trait]
impl Connection for ClaudeConnection {
    async fn send(&mut self, text: &str) -> Result<(), DriverError> {
        self.write(&protocol::user_message(text)).await
    }

    async fn next_event(&mut self) -> Option<DriverEvent> {
        self.events.recv().await
    }

    async fn answer_permission(&mut self, request_id: &str, answer: PermissionAnswer) -> Result<(), DriverError> {
        self.write(&protocol::permission_answer(request_id, &answer)).await
    }

    async fn answer_before_tool(&mut self, request_id: &str, context: Option<String>) -> Result<(), DriverError> {
        self.write(&protocol::before_tool_answer(request_id, context.as_deref())).await
    }

    async fn interrupt(&mut self) -> Result<(), DriverError> {
        self.control(serde_json::json!({ "subtype": "interrupt" }), CONTROL_TIMEOUT)
            .await
            .map(|_| ())
            .map_err(|e| DriverError::Failed(format!("Claude Code could not be interrupted: {e}")))
    }

    async fn set_permission_mode(&mut self, mode: PermissionMode) -> Result<(), DriverError> {
        self.control(serde_json::json!({ "subtype": "set_permission_mode", "mode": mode.as_str() }), CONTROL_TIMEOUT)
            .await
            .map(|_| ())
            .map_err(|e| DriverError::Failed(format!("Claude Code did not change its permission mode: {e}")))
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    async fn diagnostics(&mut self) -> Option<String> {
        let report = self.report().await;
        let empty = report.exit.is_none() && report.printed.is_empty() && report.stderr.is_empty();
        (!empty).then(|| report.to_string())
    }

    async fn close(mut self: Box<Self>) {
        // End of input lets it finish cleanly; it is killed if it does not.
        self.stdin.lock().await.take();
        if let Some(child) = self.child.as_mut() {
            let _ = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
        }
        self.kill().await;
    }
}
