//! The ACP driver: any coding agent that speaks the Agent Client Protocol (JSON-RPC over
//! its stdin/stdout), on the `agent-client-protocol` crate.
//!
//! **Threading.** The crate's connection and the futures it hands us are not `Send`: it
//! is built for a single-threaded executor. Each connection therefore gets a thread of
//! its own with a current-thread tokio runtime and a `LocalSet`; the agent's process, its
//! pipes, the JSON-RPC connection, our [`client::AcpClient`] and its terminals all live
//! there. The [`Connection`] the host holds is a `Send` handle: commands go to the thread
//! over a channel, events come back over another, and the thread ends (its runtime
//! dropped, every task and child with it) when the handle is closed or dropped, or when
//! the agent's output ends.
//!
//! - `mapper`: `session/update` → [`DriverEvent`]s (pure, tested).
//! - `client`: what the agent asks of us (permissions, files, terminals).
//! - `terminal`: commands the agent runs through us.

mod client;
mod mapper;
mod terminal;

use std::cell::Cell;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::{self as acp, Agent as _};
use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tools::capped_lines::CappedLines;
use tools::mcp::McpEndpoint;
use tools::mcp::processes::{self, ProcessRegistry};

use self::client::AcpClient;
use crate::driver::{
    Connection, ConnectionControl, Driver, DriverError, DriverEvent, PermissionAnswer, PermissionMode,
    PromptCapabilities, PromptFile, SessionSpec,
};

/// How many stderr lines messages quote (the last ones).
const STDERR_LINES: usize = 30;
const STDERR_LINE_BYTES: usize = 4 * 1024;
/// The largest JSON-RPC message read from the agent; a larger one ends the connection
/// (the turn fails, saying why) rather than being buffered without bound.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long the thread may take to end after it was told to.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// The session updates this version knows; others are logged and left out.
const KNOWN_UPDATES: &[&str] = &[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
];

/// An ACP agent: how to start it.
#[derive(Clone, Debug)]
pub struct AcpAgentConfig {
    /// Shown in messages ("Qwen Code").
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Added to the app's environment (the agent is the user's own program, as Claude
    /// Code is: its login and settings live there).
    pub env: Vec<(String, String)>,
    /// The user's enabled MCP servers, passed to the agent's sessions.
    pub mcp_servers: Vec<(String, McpEndpoint)>,
    /// How long `initialize` and `session/new` may take.
    pub start_timeout: Duration,
}

pub struct AcpDriver {
    config: AcpAgentConfig,
    processes: Option<Arc<ProcessRegistry>>,
}

impl AcpDriver {
    pub fn new(config: AcpAgentConfig) -> Self {
        Self { config, processes: None }
    }

    /// Records each agent's process group in `registry` (reaped at the next start after a
    /// crash).
    pub fn with_processes(mut self, registry: Arc<ProcessRegistry>) -> Self {
        self.processes = Some(registry);
        self
    }
}

enum Command {
    Prompt(String, Vec<PromptFile>),
    /// `session/set_mode`, answered when the agent has answered.
    SetMode(String, oneshot::Sender<Result<(), String>>),
    Answer(String, PermissionAnswer),
    Cancel,
    Close,
}

/// What the connection's thread leaves for messages.
#[derive(Default)]
struct Report {
    stderr: VecDeque<String>,
    exit: Option<String>,
    /// Why we stopped reading it (a message over the cap).
    refused: Option<String>,
}

impl Report {
    fn describe(&self) -> Option<String> {
        let mut out = Vec::new();
        if let Some(refused) = &self.refused {
            out.push(refused.clone());
        }
        if let Some(exit) = &self.exit {
            out.push(format!("It {exit}."));
        }
        if !self.stderr.is_empty() {
            let lines: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
            out.push(format!("Its error output ended with:\n  {}", lines.join("\n  ")));
        }
        (!out.is_empty()).then(|| out.join("\n"))
    }
}

#[async_trait]
impl Driver for AcpDriver {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// ACP has no tool boundary to steer at: a steering message is the next prompt.
    fn steers_mid_turn(&self) -> bool {
        false
    }

    async fn connect(&self, spec: &SessionSpec, resume: Option<&str>) -> Result<Box<dyn Connection>, DriverError> {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = mpsc::unbounded_channel();
        let (ready_tx, ready) = oneshot::channel();
        let report = Arc::new(Mutex::new(Report::default()));
        let closed = Arc::new(AtomicBool::new(false));
        let setup = Setup {
            config: self.config.clone(),
            spec: spec.clone(),
            resume: resume.map(str::to_owned),
            processes: self.processes.clone(),
            report: report.clone(),
            closed: closed.clone(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("acp {}", self.config.name))
            .spawn(move || run_thread(setup, command_rx, event_tx, ready_tx))
            .map_err(|e| DriverError::Failed(format!("could not start a thread for {}: {e}", self.config.name)))?;
        let mut connection =
            AcpConnection { commands, events, closed, report, thread: Some(thread), capabilities: None };
        match ready.await {
            Ok(Ok(capabilities)) => {
                connection.capabilities = Some(capabilities);
                Ok(Box::new(connection))
            }
            Ok(Err(error)) => {
                Box::new(connection).close().await;
                Err(error)
            }
            Err(_) => {
                let said = connection.report.lock().ok().and_then(|r| r.describe()).unwrap_or_default();
                Box::new(connection).close().await;
                Err(DriverError::Failed(format!("{} stopped while starting. {said}", self.config.name)))
            }
        }
    }
}

struct Setup {
    config: AcpAgentConfig,
    spec: SessionSpec,
    resume: Option<String>,
    processes: Option<Arc<ProcessRegistry>>,
    report: Arc<Mutex<Report>>,
    closed: Arc<AtomicBool>,
}

fn run_thread(
    setup: Setup,
    commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<DriverEvent>,
    ready: oneshot::Sender<Result<PromptCapabilities, DriverError>>,
) {
    let closed = setup.closed.clone();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(DriverError::Failed(format!("could not start a runtime for the agent: {e}"))));
            closed.store(true, Ordering::SeqCst);
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, serve(setup, commands, events, ready));
    // Dropping the set and the runtime drops every task still in them (the readers, a
    // prompt in flight, terminals): nothing of the connection outlives the thread.
    drop(local);
    drop(runtime);
    closed.store(true, Ordering::SeqCst);
}

/// The connection, on its own thread: starts the agent, shakes hands, then serves
/// commands until it is closed or the agent's output ends.
async fn serve(
    setup: Setup,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<DriverEvent>,
    ready: oneshot::Sender<Result<PromptCapabilities, DriverError>>,
) {
    let Setup { config, spec, resume, processes, report, closed } = setup;
    let name = config.name.clone();
    let mut command = tokio::process::Command::new(&config.command);
    command
        .args(&config.args)
        .current_dir(&spec.workspace)
        .envs(config.env.iter().map(|(k, v)| (k, v)))
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    processes::die_with_parent(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = ready.send(Err(spawn_error(&config, &e)));
            return;
        }
    };
    let pid = child.id();
    let group = Group { pid, registry: processes.clone() };
    if let (Some(registry), Some(pid)) = (&processes, pid) {
        registry.add(pid, &format!("{name}, agent session {}", spec.session_id));
    }
    let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = ready.send(Err(DriverError::Failed(format!("{name}'s pipes could not be opened"))));
        return;
    };
    {
        let report = report.clone();
        tokio::task::spawn_local(async move {
            let mut lines = CappedLines::new(stderr, STDERR_LINE_BYTES);
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut report) = report.lock() {
                    if report.stderr.len() == STDERR_LINES {
                        report.stderr.pop_front();
                    }
                    report.stderr.push_back(line.shown());
                }
            }
        });
    }
    let client = Rc::new(AcpClient::new(events.clone(), spec.workspace.clone()));
    // The crate reads what our reader passes on: lines up to a cap, each session update
    // counted as it goes by (see `forward`).
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let seen = Rc::new(Cell::new(0u64));
    let output_ended = Rc::new(Cell::new(false));
    tokio::task::spawn_local({
        let (seen, output_ended, report) = (seen.clone(), output_ended.clone(), report.clone());
        async move {
            forward(stdout, ours, seen, report).await;
            output_ended.set(true);
        }
    });
    let (connection, io) =
        acp::ClientSideConnection::new(client.clone(), stdin.compat_write(), theirs.compat(), |future| {
            tokio::task::spawn_local(future);
        });
    let connection = Rc::new(connection);
    let log_unknown = tokio::task::spawn_local(log_unknown_updates(connection.subscribe(), name.clone()));
    let mut io = tokio::task::spawn_local(io);

    let started = tokio::select! {
        started = tokio::time::timeout(config.start_timeout, handshake(&connection, &client, &config, &spec, resume.as_deref())) => {
            started.unwrap_or_else(|_| Err(DriverError::Failed(format!(
                "{name} did not answer within {} s of starting", config.start_timeout.as_secs()
            ))))
        }
        _ = &mut io => Err(DriverError::Failed(format!("{name} exited before answering"))),
    };
    let (session_id, modes, capabilities, can_load) = match started {
        Ok(started) => started,
        Err(error) => {
            finish(child, group, &report).await;
            let error = match error {
                DriverError::Failed(message) => {
                    let said =
                        report.lock().ok().and_then(|r| r.describe()).map(|d| format!("\n{d}")).unwrap_or_default();
                    DriverError::Failed(format!("{message}{said}"))
                }
                other => other,
            };
            let _ = ready.send(Err(error));
            return;
        }
    };
    let _ = events.send(DriverEvent::SessionStarted { resume_token: session_id.to_string() });
    if let Some(modes) = modes {
        let _ = events.send(DriverEvent::Modes {
            current: modes.current_mode_id.to_string(),
            available: serde_json::to_value(&modes.available_modes).unwrap_or(serde_json::Value::Null),
        });
    }
    if ready.send(Ok(capabilities)).is_err() {
        finish(child, group, &report).await;
        return;
    }

    loop {
        tokio::select! {
            command = commands.recv() => match command {
                None | Some(Command::Close) => break,
                Some(Command::Prompt(text, files)) => {
                    client.turn_started();
                    let connection = connection.clone();
                    let client = client.clone();
                    let session_id = session_id.clone();
                    let seen = seen.clone();
                    let output_ended = output_ended.clone();
                    tokio::task::spawn_local(async move {
                        let request = acp::PromptRequest::new(session_id, prompt_blocks(text, &files, capabilities));
                        let answer = connection.prompt(request).await;
                        if answer.is_err() && output_ended.get() {
                            // The agent is gone: the connection's end says so, with what
                            // it left on stderr and how it exited.
                            return;
                        }
                        // The crate hands the answer over before the updates that came
                        // ahead of it have all been handled: the turn ends after them.
                        client.handled_up_to(seen.get()).await;
                        client.emit(turn_finished(answer));
                    });
                }
                Some(Command::Answer(request_id, answer)) => client.answer(&request_id, answer),
                Some(Command::SetMode(mode, answered)) => {
                    // Mid-turn too: the agent answers it beside the prompt in flight.
                    let connection = connection.clone();
                    let client = client.clone();
                    let request = acp::SetSessionModeRequest::new(session_id.clone(), mode.clone());
                    tokio::task::spawn_local(async move {
                        let result = connection.set_session_mode(request).await;
                        let result = match result {
                            Ok(_) => {
                                client.emit(DriverEvent::ModeChanged { mode });
                                Ok(())
                            }
                            Err(error) => Err(error.to_string()),
                        };
                        let _ = answered.send(result);
                    });
                }
                Some(Command::Cancel) => {
                    client.cancel_all();
                    if let Err(error) = connection.cancel(acp::CancelNotification::new(session_id.clone())).await {
                        tracing::warn!(agent = %name, error = %error, "could not send session/cancel");
                    }
                    // A cancelled prompt can leave an agent out of step: claude-agent-acp
                    // 0.23.1 answers the next prompt at once with nothing, and the one after
                    // with both replies. One that can load its session is started again
                    // for the next turn instead (the turn still reads this prompt's end).
                    if can_load {
                        closed.store(true, Ordering::SeqCst);
                    }
                }
            },
            _ = &mut io => {
                tracing::info!(agent = %name, "the agent's output ended");
                break;
            }
        }
    }
    log_unknown.abort();
    closed.store(true, Ordering::SeqCst);
    finish(child, group, &report).await;
}

/// Passes the agent's output on to the crate a line at a time, counting in `seen` the
/// session updates the crate will hand our client (so a turn can wait for them to be
/// handled before it ends). A line over [`MAX_LINE_BYTES`] ends the connection, saying so;
/// a line that is not JSON-RPC is passed on, and the crate logs and skips it.
async fn forward(
    stdout: tokio::process::ChildStdout,
    mut to_crate: tokio::io::DuplexStream,
    seen: Rc<Cell<u64>>,
    report: Arc<Mutex<Report>>,
) {
    let mut reader = tokio::io::BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            if let Ok(mut report) = report.lock() {
                report.refused =
                    Some(format!("It wrote a message over {} MiB, which was not read.", MAX_LINE_BYTES >> 20));
            }
            break;
        }
        if is_session_update(&line) {
            seen.set(seen.get() + 1);
        }
        if to_crate.write_all(&line).await.is_err() {
            break;
        }
    }
}

/// Whether the line is a `session/update` notification the crate can read (the same
/// test it applies).
fn is_session_update(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Notification {
        id: Option<serde_json::Value>,
        method: Option<String>,
        params: Option<serde_json::Value>,
    }
    let Ok(message) = serde_json::from_slice::<Notification>(line) else { return false };
    message.id.is_none()
        && message.method.as_deref() == Some("session/update")
        && message.params.is_some_and(|p| serde_json::from_value::<acp::SessionNotification>(p).is_ok())
}

/// `initialize` (we serve files and terminals), then `session/load` of the token when the
/// agent can, else `session/new`, with the workspace and the user's MCP servers. Returns
/// the session, the modes the agent offers in it (if any), what it takes in a prompt, and
/// whether it can load sessions.
async fn handshake(
    connection: &acp::ClientSideConnection,
    client: &AcpClient,
    config: &AcpAgentConfig,
    spec: &SessionSpec,
    resume: Option<&str>,
) -> Result<(acp::SessionId, Option<acp::SessionModeState>, PromptCapabilities, bool), DriverError> {
    let name = &config.name;
    let capabilities = acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new().read_text_file(true).write_text_file(true))
        .terminal(true);
    let request = acp::InitializeRequest::new(acp::ProtocolVersion::V1)
        .client_capabilities(capabilities)
        .client_info(acp::Implementation::new("colloquy", env!("CARGO_PKG_VERSION")).title("Colloquy"));
    let initialized = connection
        .initialize(request)
        .await
        .map_err(|e| DriverError::Failed(format!("{name} refused to start (initialize): {e}")))?;
    let offered = &initialized.agent_capabilities.prompt_capabilities;
    let capabilities = PromptCapabilities { image: offered.image, embedded_context: offered.embedded_context };
    let workspace = absolute(&spec.workspace);
    let servers = mcp_servers(&config.mcp_servers, &initialized.agent_capabilities);
    if let Some(token) = resume
        && initialized.agent_capabilities.load_session
    {
        client.set_replaying(true);
        let loaded = connection
            .load_session(
                acp::LoadSessionRequest::new(token.to_owned(), workspace.clone()).mcp_servers(servers.clone()),
            )
            .await;
        client.set_replaying(false);
        return match loaded {
            Ok(loaded) => Ok((acp::SessionId::new(token.to_owned()), loaded.modes, capabilities, true)),
            Err(e) => Err(DriverError::ResumeFailed(format!(
                "{name} could not resume its session {token}: {e}. The history here is kept; reset the session to \
                 start a fresh one."
            ))),
        };
    }
    let created = connection
        .new_session(acp::NewSessionRequest::new(workspace).mcp_servers(servers))
        .await
        .map_err(|e| DriverError::Failed(format!("{name} did not start a session: {e}")))?;
    Ok((created.session_id, created.modes, capabilities, initialized.agent_capabilities.load_session))
}

fn absolute(path: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The user's MCP servers as ACP passes them: stdio ones always, HTTP ones when the agent
/// says it takes them.
fn mcp_servers(servers: &[(String, McpEndpoint)], capabilities: &acp::AgentCapabilities) -> Vec<acp::McpServer> {
    servers
        .iter()
        .filter_map(|(name, endpoint)| match endpoint {
            McpEndpoint::Stdio { command, args, env, .. } => Some(acp::McpServer::Stdio(
                acp::McpServerStdio::new(name.clone(), command.clone())
                    .args(args.clone())
                    .env(env.iter().map(|(k, v)| acp::EnvVariable::new(k.clone(), v.clone())).collect()),
            )),
            McpEndpoint::Http { url, headers } if capabilities.mcp_capabilities.http => Some(acp::McpServer::Http(
                acp::McpServerHttp::new(name.clone(), url.clone())
                    .headers(headers.iter().map(|(k, v)| acp::HttpHeader::new(k.clone(), v.clone())).collect()),
            )),
            McpEndpoint::Http { .. } => None,
        })
        .collect()
}

/// The prompt's content blocks: the text, then each file as the agent takes it (checked
/// before with [`PromptCapabilities::refusal`]): an image as an image block; a text file as
/// an embedded resource when the agent takes embedded context, else as a link whose URI
/// is a `data:` URI of its contents (nothing is written anywhere for it); another file
/// (a PDF) as an embedded blob.
pub(crate) fn prompt_blocks(
    text: String,
    files: &[PromptFile],
    capabilities: PromptCapabilities,
) -> Vec<acp::ContentBlock> {
    use base64::Engine as _;
    let mut blocks = vec![acp::ContentBlock::from(text)];
    for file in files {
        let uri = format!("attachment:///{}", file.filename);
        let block = if file.media_type.starts_with("image/") {
            serde_json::json!({ "type": "image", "mimeType": file.media_type, "data": file.data })
        } else if file.media_type.starts_with("text/") || file.media_type == "application/json" {
            if capabilities.embedded_context {
                let bytes = base64::engine::general_purpose::STANDARD.decode(&file.data).unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes);
                serde_json::json!({ "type": "resource", "resource": {
                    "uri": uri, "mimeType": file.media_type, "text": text,
                } })
            } else {
                serde_json::json!({ "type": "resource_link", "name": file.filename, "mimeType": file.media_type,
                    "uri": format!("data:{};base64,{}", file.media_type, file.data) })
            }
        } else {
            serde_json::json!({ "type": "resource", "resource": {
                "uri": uri, "mimeType": file.media_type, "blob": file.data,
            } })
        };
        match serde_json::from_value::<acp::ContentBlock>(block) {
            Ok(block) => blocks.push(block),
            Err(error) => {
                tracing::error!(file = %file.filename, error = %error, "an attachment could not be put in a prompt")
            }
        }
    }
    blocks
}

/// The prompt's end as the turn's: why it stopped, and the tokens the agent says the turn
/// used (an unstable field of ACP, which claude-agent-acp fills).
fn turn_finished(answer: acp::Result<acp::PromptResponse>) -> DriverEvent {
    let usage = answer.as_ref().ok().and_then(|response| response.usage.clone());
    let (error, interrupted) = match answer {
        Ok(response) => match response.stop_reason {
            acp::StopReason::Cancelled => (None, true),
            acp::StopReason::Refusal => (Some("the agent refused to go on".to_owned()), false),
            acp::StopReason::MaxTurnRequests => {
                (Some("the agent stopped: it reached its limit of model requests for one turn".to_owned()), false)
            }
            _ => (None, false),
        },
        Err(error) => (Some(error.to_string()), false),
    };
    DriverEvent::TurnFinished {
        resume_token: None,
        input_tokens: usage.as_ref().map(|u| u.input_tokens),
        output_tokens: usage.as_ref().map(|u| u.output_tokens),
        cost_usd: None,
        error,
        interrupted,
    }
}

/// The crate drops a notification it cannot read (an update kind newer than it) after
/// logging it to `log`; we say which kind it was.
async fn log_unknown_updates(mut messages: acp::StreamReceiver, name: String) {
    while let Ok(message) = messages.recv().await {
        if let acp::StreamMessageContent::Notification { method, params } = &message.message
            && message.direction == acp::StreamMessageDirection::Incoming
            && &**method == "session/update"
        {
            let kind = params.as_ref().and_then(|p| p["update"]["sessionUpdate"].as_str()).unwrap_or("");
            if !KNOWN_UPDATES.contains(&kind) {
                tracing::warn!(agent = %name, kind, "an ACP session update of a kind Colloquy does not know; left out");
            }
        }
    }
}

/// The agent's process group and where it is recorded.
struct Group {
    pid: Option<u32>,
    registry: Option<Arc<ProcessRegistry>>,
}

/// Ends the agent: its input closed, a moment to exit, then its whole group killed.
async fn finish(mut child: tokio::process::Child, group: Group, report: &Mutex<Report>) {
    drop(child.stdin.take());
    let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => None,
    };
    #[cfg(unix)]
    if let Some(pid) = group.pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) on the agent's own process group (it was spawned as its leader).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let status = match status {
        Some(status) => Some(status),
        None => {
            let _ = child.kill().await;
            None
        }
    };
    if let (Some(registry), Some(pid)) = (group.registry, group.pid) {
        registry.forget(pid);
    }
    if let (Some(status), Ok(mut report)) = (status, report.lock()) {
        report.exit = Some(match (status.code(), status.success()) {
            (_, true) => "exited".to_owned(),
            (Some(code), false) => format!("exited with status {code}"),
            (None, false) => "was killed by a signal".to_owned(),
        });
    }
}

fn spawn_error(config: &AcpAgentConfig, error: &std::io::Error) -> DriverError {
    let name = &config.name;
    let program = &config.command;
    match error.kind() {
        std::io::ErrorKind::NotFound => DriverError::NotInstalled(format!(
            "{name} could not be started: `{program}` was not found. Install it, or change its command in \
             settings."
        )),
        std::io::ErrorKind::PermissionDenied => {
            DriverError::NotInstalled(format!("{name}: `{program}` cannot be run (permission denied)"))
        }
        _ => DriverError::Failed(format!("{name} (`{program}`) could not be started: {error}")),
    }
}

struct AcpConnection {
    /// What the agent said it takes in a prompt (`initialize`).
    capabilities: Option<PromptCapabilities>,
    commands: mpsc::UnboundedSender<Command>,
    events: mpsc::UnboundedReceiver<DriverEvent>,
    closed: Arc<AtomicBool>,
    report: Arc<Mutex<Report>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AcpConnection {
    fn command(&self, command: Command) -> Result<(), DriverError> {
        self.commands.send(command).map_err(|_| DriverError::Failed("the agent's connection has ended".into()))
    }
}

/// `session/set_mode` while a turn holds the connection.
struct AcpControl {
    commands: mpsc::UnboundedSender<Command>,
    closed: Arc<AtomicBool>,
}

/// How long the agent may take to answer `session/set_mode`.
const SET_MODE_WAIT: Duration = Duration::from_secs(30);

#[async_trait]
impl ConnectionControl for AcpControl {
    async fn set_mode(&self, mode: &str) -> Result<(), DriverError> {
        let (answered, answer) = oneshot::channel();
        self.commands
            .send(Command::SetMode(mode.to_owned(), answered))
            .map_err(|_| DriverError::Failed("the agent's connection has ended".into()))?;
        match tokio::time::timeout(SET_MODE_WAIT, answer).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(error))) => Err(DriverError::Failed(format!("the agent refused the mode: {error}"))),
            Ok(Err(_)) => Err(DriverError::Failed("the agent's connection ended before it answered".into())),
            Err(_) => Err(DriverError::Failed(format!(
                "the agent did not answer the change of mode within {} s",
                SET_MODE_WAIT.as_secs()
            ))),
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Connection for AcpConnection {
    fn control(&self) -> Option<Arc<dyn ConnectionControl>> {
        Some(Arc::new(AcpControl { commands: self.commands.clone(), closed: self.closed.clone() }))
    }
    async fn send(&mut self, text: &str) -> Result<(), DriverError> {
        self.command(Command::Prompt(text.to_owned(), Vec::new()))
    }

    fn prompt_capabilities(&self) -> Option<PromptCapabilities> {
        self.capabilities
    }

    async fn send_with(&mut self, text: &str, files: &[PromptFile]) -> Result<(), DriverError> {
        self.command(Command::Prompt(text.to_owned(), files.to_vec()))
    }

    async fn next_event(&mut self) -> Option<DriverEvent> {
        self.events.recv().await
    }

    async fn answer_permission(&mut self, request_id: &str, answer: PermissionAnswer) -> Result<(), DriverError> {
        self.command(Command::Answer(request_id.to_owned(), answer))
    }

    /// ACP has no tool boundary to steer at: never asked.
    async fn answer_before_tool(&mut self, _request_id: &str, _context: Option<String>) -> Result<(), DriverError> {
        Ok(())
    }

    async fn interrupt(&mut self) -> Result<(), DriverError> {
        self.command(Command::Cancel)
    }

    /// The agent's modes are its own (`session/set_mode`); Colloquy's permission modes do
    /// not map onto them, and every permission prompt comes to our gate anyway.
    async fn set_permission_mode(&mut self, _mode: PermissionMode) -> Result<(), DriverError> {
        Ok(())
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    async fn diagnostics(&mut self) -> Option<String> {
        self.report.lock().ok().and_then(|r| r.describe())
    }

    async fn close(mut self: Box<Self>) {
        let _ = self.commands.send(Command::Close);
        if let Some(thread) = self.thread.take() {
            let joined = tokio::task::spawn_blocking(move || thread.join());
            if tokio::time::timeout(CLOSE_WAIT, joined).await.is_err() {
                tracing::warn!("an ACP connection's thread did not end in time");
            }
        }
    }
}

impl Drop for AcpConnection {
    /// Dropped without `close` (its turn was aborted): the thread is told to end, and
    /// ends the agent with it.
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Close);
    }
}
