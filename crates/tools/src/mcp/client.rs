//! One live connection to an MCP server (rmcp underneath): connecting over stdio or
//! streamable HTTP with a deadline on the handshake, listing tools, and calls with
//! progress, cancellation and a timeout.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::tool::{ContentAnnotations, ToolContent, ToolOutput};
// MCP logging and sampling are deprecated (SEP-2577) but still what servers use; the
// issue asks for them.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig, ClientRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, Root, RootsCapabilities, ServerResult, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::http::SessionAwareClient;
use super::logs::ServerLog;
use super::processes::ProcessRegistry;
use super::redirects::CrossOriginRedirect;
use super::{McpEndpoint, McpHttp, McpServerConfig};
use crate::asks::{AskSink, ElicitAnswer, Elicitation, Sampling, ServerAsk};
use crate::capped_lines::CappedLines;
use crate::tool::{Progress, ProgressSink, ToolError};

/// How many stderr lines a server's status shows, and how much of each (a longer line is
/// cut, and says so).
const STDERR_LINES: usize = 20;
const STDERR_LINE_BYTES: usize = 4 * 1024;

/// The largest JSON-RPC message a server may send (one stdout line, one HTTP body or SSE
/// event): a larger one fails the connection, with this said in the server's status.
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Why we gave up on a connection that is still open at the other end (the server can no
/// longer be reached, or sent something we refuse): the first reason given wins.
#[derive(Clone, Default)]
pub(crate) struct Failure(Arc<Mutex<Option<String>>>);

impl Failure {
    fn set(&self, reason: String) {
        if let Ok(mut slot) = self.0.lock()
            && slot.is_none()
        {
            *slot = Some(reason);
        }
    }

    pub(crate) fn reason(&self) -> Option<String> {
        self.0.lock().ok()?.clone()
    }
}

/// The last lines a stdio server wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == STDERR_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    pub(crate) fn text(&self) -> Option<String> {
        let lines = self.0.lock().ok()?;
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }
}

/// What a server offers beside tools (from its `initialize` capabilities).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offers {
    pub(crate) resources: bool,
    pub(crate) subscriptions: bool,
    pub(crate) prompts: bool,
    pub(crate) completions: bool,
}

/// Our side of the connection: routes progress to the calls that asked for it, notices
/// when the server's tool list changes, keeps what it logs, answers `roots/list`, and
/// takes `elicitation/create` to the user through the running call.
#[derive(Clone)]
pub(crate) struct Handler {
    server_id: String,
    server_name: String,
    /// The user let the server sample without asking (`McpHub::allow_sampling`).
    sampling_allowed: Arc<std::sync::atomic::AtomicBool>,
    progress: Arc<Mutex<ProgressRoutes>>,
    /// The calls running now that can ask the user, in the order they started.
    calls: Arc<Mutex<Vec<(u64, AskSink)>>>,
    next_call: Arc<std::sync::atomic::AtomicU64>,
    /// How many of the server's questions wait for the user: calls' timeouts stand still
    /// meanwhile.
    asking: Arc<tokio::sync::watch::Sender<usize>>,
    pub(crate) list_changed: Arc<tokio::sync::Notify>,
    log: ServerLog,
    /// The folders offered as roots (`McpHub::set_roots`).
    roots: tokio::sync::watch::Receiver<Vec<std::path::PathBuf>>,
    /// The resources the server said changed (`notifications/resources/updated`) since
    /// they were last read.
    updated: Arc<Mutex<std::collections::HashSet<String>>>,
}

/// Notifications kept for progress tokens no call is listed under yet.
const EARLY_PROGRESS: usize = 32;

/// Where each running call's progress goes, by progress token. rmcp picks a request's token
/// inside the send, so a server that reports progress as soon as it reads the request can
/// be heard before the call is listed under it: the newest such notification of each
/// unknown token is kept (a few tokens at most) and handed to the call when it is listed.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    sinks: HashMap<String, ProgressSink>,
    early: VecDeque<(String, Progress)>,
}

impl ProgressRoutes {
    /// The sink for `key`'s progress, or `None` if no call is listed under it yet (then
    /// `progress` is kept for it).
    fn route(&mut self, key: String, progress: Progress) -> Option<(ProgressSink, Progress)> {
        if let Some(sink) = self.sinks.get(&key) {
            return Some((sink.clone(), progress));
        }
        // Progress only goes forward: the newest notification stands for the earlier ones.
        self.early.retain(|(early, _)| *early != key);
        self.early.push_back((key, progress));
        if self.early.len() > EARLY_PROGRESS {
            self.early.pop_front();
        }
        None
    }

    /// Lists a call under `key`; returns the progress heard for it before.
    fn listen(&mut self, key: String, sink: ProgressSink) -> Option<Progress> {
        let early = self.early.iter().position(|(early, _)| *early == key).and_then(|at| self.early.remove(at));
        self.sinks.insert(key, sink);
        early.map(|(_, progress)| progress)
    }

    /// The call under `key` ended.
    fn forget(&mut self, key: &str) {
        self.sinks.remove(key);
        self.early.retain(|(early, _)| early != key);
    }
}

impl ClientHandler for Handler {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let progress = Progress { progress: params.progress, total: params.total, message: params.message };
        let routed =
            self.progress.lock().ok().and_then(|mut routes| routes.route(token_key(&params.progress_token), progress));
        // Called outside the lock: the sink forwards into the reply.
        if let Some((sink, progress)) = routed {
            sink(progress);
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(level = ?params.level, logger = ?params.logger, "an MCP server logged a message");
        self.log.push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut updated) = self.updated.lock() {
            // Bounded: a server cannot grow it past what was attached.
            if updated.len() < 10_000 {
                updated.insert(params.uri);
            }
        }
    }

    // Roots are deprecated by SEP-2577 but still what file servers ask for.
    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.borrow().iter().filter_map(|folder| root(folder)).collect();
        Ok(ListRootsResult::new(roots))
    }

    /// The question goes to the call running on this connection (the latest one, when
    /// several are: MCP does not say which call a request belongs to), and its answer back
    /// to the server. A form that cannot be shown is refused with why, and the card says so.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Err(ErrorData::invalid_params("Colloquy answers form elicitations only, not URL ones", None));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
        let form = protocol::elicitation::ElicitationForm::from_schema(&schema);
        let problem = form.as_ref().err().cloned();
        let Some(sink) = self.calls.lock().ok().and_then(|calls| calls.last().map(|(_, sink)| sink.clone())) else {
            return Err(ErrorData::invalid_request(
                "Colloquy can ask its user only during a tool call of a reply, and no such call of this server is running",
                None,
            ));
        };
        let (answer, answered) = tokio::sync::oneshot::channel();
        let message: String = message.chars().take(4000).collect();
        sink(ServerAsk::Elicit {
            elicitation: Elicitation { server_name: self.server_name.clone(), message, form },
            answer,
        });
        if let Some(problem) = problem {
            return Err(ErrorData::invalid_params(format!("Colloquy cannot show this form: {problem}"), None));
        }
        let _asking = Asking::start(&self.asking);
        let answer = tokio::select! {
            answer = answered => answer.unwrap_or(ElicitAnswer::Cancel),
            // The server withdrew the question: dropping `answered` tells the card.
            _ = context.ct.cancelled() => ElicitAnswer::Cancel,
        };
        Ok(match answer {
            ElicitAnswer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    #[allow(deprecated)]
    /// The request goes to the latest running call like a question (its reply's model
    /// answers, once the user allows it), text only.
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let messages = sampling_messages(&params).map_err(|why| ErrorData::invalid_params(why, None))?;
        let Some(sink) = self.calls.lock().ok().and_then(|calls| calls.last().map(|(_, sink)| sink.clone())) else {
            return Err(ErrorData::invalid_request(
                "Colloquy can sample its model only during a tool call of a reply, and no such call of this server is running",
                None,
            ));
        };
        let sampling = Sampling {
            server_id: self.server_id.clone(),
            server_name: self.server_name.clone(),
            system_prompt: params.system_prompt.clone().filter(|p| !p.trim().is_empty()),
            messages,
            max_tokens: params.max_tokens.clamp(1, 32_000),
            temperature: params.temperature,
            allowed: self.sampling_allowed.load(std::sync::atomic::Ordering::Relaxed),
        };
        let (answer, answered) = tokio::sync::oneshot::channel();
        sink(ServerAsk::Sample { sampling, answer });
        let _asking = Asking::start(&self.asking);
        let sampled = tokio::select! {
            sampled = answered => sampled.unwrap_or_else(|_| Err("the reply that would answer stopped".into())),
            _ = context.ct.cancelled() => Err("the request was cancelled".into()),
        };
        match sampled {
            Ok(sampled) => {
                let message: rmcp::model::SamplingMessage = serde_json::from_value(serde_json::json!({
                    "role": "assistant",
                    "content": { "type": "text", "text": sampled.text },
                }))
                .map_err(|e| ErrorData::internal_error(format!("the answer could not be sent: {e}"), None))?;
                let mut result = CreateMessageResult::new(message, sampled.model);
                result.stop_reason = Some(sampled.stop_reason);
                Ok(result)
            }
            // MCP's code for a request the user rejected.
            Err(why) => Err(ErrorData::new(rmcp::model::ErrorCode(-1), why, None)),
        }
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        info.capabilities.roots = Some(roots);
        // Forms are checked against their schema before an answer is sent.
        info.capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new().with_schema_validation(true)));
        // Text only, without tools; the user allows each request (or the server for good).
        #[allow(deprecated)]
        {
            info.capabilities.sampling = Some(Default::default());
        }
        info.client_info.name = "colloquy".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }
}

#[allow(deprecated)]
/// The messages of a sampling request as text; anything else (images, audio, tool use)
/// is refused with what it was.
fn sampling_messages(params: &CreateMessageRequestParams) -> Result<Vec<protocol::sampling::SamplingMessage>, String> {
    use protocol::sampling::{SamplingMessage, SamplingRole};
    if params.tools.as_ref().is_some_and(|tools| !tools.is_empty()) {
        return Err("Colloquy samples without tools; ask again without `tools`".into());
    }
    if params.messages.is_empty() {
        return Err("the request has no messages".into());
    }
    let raw = serde_json::to_value(&params.messages).unwrap_or(Value::Null);
    let mut messages = Vec::new();
    for (at, message) in raw.as_array().into_iter().flatten().enumerate() {
        let role = match message.get("role").and_then(Value::as_str) {
            Some("assistant") => SamplingRole::Assistant,
            _ => SamplingRole::User,
        };
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(block) => vec![block.clone()],
            None => Vec::new(),
        };
        let mut text = String::new();
        for block in &blocks {
            match (block.get("type").and_then(Value::as_str), block.get("text").and_then(Value::as_str)) {
                (Some("text"), Some(piece)) => text.push_str(piece),
                (kind, _) => {
                    return Err(format!(
                        "message {} holds {} content; Colloquy sends only text to the model",
                        at + 1,
                        kind.unwrap_or("unknown")
                    ));
                }
            }
        }
        messages.push(SamplingMessage { role, text });
    }
    Ok(messages)
}

/// One question waiting for the user, counted while it lives.
struct Asking<'a>(&'a tokio::sync::watch::Sender<usize>);

impl<'a> Asking<'a> {
    fn start(count: &'a tokio::sync::watch::Sender<usize>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count)
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A call that can ask the user, listed on its connection while it runs.
struct RunningCall<'a> {
    calls: &'a Mutex<Vec<(u64, AskSink)>>,
    id: Option<u64>,
}

impl<'a> RunningCall<'a> {
    fn start(handler: &'a Handler, asks: Option<AskSink>) -> Self {
        let id = asks.map(|sink| {
            let id = handler.next_call.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Ok(mut calls) = handler.calls.lock() {
                calls.push((id, sink));
            }
            id
        });
        Self { calls: &handler.calls, id }
    }
}

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut calls)) = (self.id, self.calls.lock()) {
            calls.retain(|(call, _)| *call != id);
        }
    }
}

/// Resolves `timeout` after the call started, not counting the time a question of the
/// server waits for the user: once none waits, the call has `timeout` again.
async fn call_deadline(timeout: Duration, asking: &tokio::sync::watch::Sender<usize>) {
    let mut asking = asking.subscribe();
    let mut deadline = tokio::time::Instant::now() + timeout;
    loop {
        if *asking.borrow_and_update() > 0 {
            if asking.wait_for(|n| *n == 0).await.is_err() {
                std::future::pending::<()>().await;
            }
            deadline = tokio::time::Instant::now() + timeout;
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return,
            changed = asking.changed() => if changed.is_err() {
                tokio::time::sleep_until(deadline).await;
                return;
            },
        }
    }
}

/// A folder as a root: its `file://` URI, named by its last component. A relative path
/// (which no workspace is) is left out.
#[allow(deprecated)]
fn root(folder: &std::path::Path) -> Option<Root> {
    let uri = reqwest::Url::from_file_path(folder).ok()?;
    let root = Root::new(uri.to_string());
    Some(match folder.file_name().and_then(|name| name.to_str()) {
        Some(name) => root.with_name(name),
        None => root,
    })
}

fn token_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// Why a connection could not be made, with what the server said on stderr.
#[derive(Debug)]
pub(crate) struct ConnectError {
    pub message: String,
    pub stderr: Option<String>,
}

pub(crate) struct Client {
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    peer: rmcp::service::Peer<RoleClient>,
    pub(crate) handler: Handler,
    /// The stdio server's process group.
    pub(crate) pid: Option<u32>,
    /// The stdio server's process, killed if this is dropped before `shutdown` stopped it.
    _process: Option<tokio::process::Child>,
    pub(crate) stderr: StderrTail,
    /// Over HTTP nothing tells us the server went away: the hub pings it.
    pub(crate) needs_pings: bool,
    /// Set when we gave up on the connection; `closed` fires with it.
    failure: Failure,
    closed: CancellationToken,
}

impl Client {
    /// Starts (stdio) or reaches (HTTP) the server and completes the MCP handshake
    /// within `timeout`.
    pub(crate) async fn connect(
        config: &McpServerConfig,
        processes: &ProcessRegistry,
        http: &McpHttp,
        timeout: Duration,
        log: ServerLog,
        roots: tokio::sync::watch::Receiver<Vec<std::path::PathBuf>>,
        sampling_allowed: Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<Self, ConnectError> {
        let handler = Handler {
            server_id: config.id.clone(),
            server_name: config.name.clone(),
            sampling_allowed,
            progress: Arc::default(),
            calls: Arc::default(),
            next_call: Arc::default(),
            asking: Arc::new(tokio::sync::watch::channel(0).0),
            list_changed: Arc::default(),
            log,
            roots,
            updated: Arc::default(),
        };
        let stderr = StderrTail::default();
        let failure = Failure::default();
        let error = |message: String, stderr: &StderrTail| ConnectError { message, stderr: stderr.text() };
        let (serving, mut process, noise) = match &config.endpoint {
            McpEndpoint::Stdio { command, args, env, cwd } => {
                let mut cmd = tokio::process::Command::new(command);
                // Only the safe set of the app's variables, and the server's own.
                cmd.args(args)
                    .env_clear()
                    .envs(super::environment::server_environment(std::env::vars_os(), env))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                if let Some(cwd) = cwd.as_deref().filter(|c| !c.trim().is_empty()) {
                    cmd.current_dir(cwd);
                }
                // Its own process group: stopping it stops whatever it started.
                #[cfg(unix)]
                cmd.process_group(0);
                let mut child = cmd.spawn().map_err(|e| error(spawn_error(command, &e), &stderr))?;
                if let Some(pid) = child.id() {
                    processes.add(pid, &config.name);
                }
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err(error(format!("{command} started without its stdin and stdout"), &stderr));
                };
                if let Some(child_stderr) = child.stderr.take() {
                    let tail = stderr.clone();
                    let server = config.name.clone();
                    tokio::spawn(async move {
                        let mut lines = CappedLines::new(child_stderr, STDERR_LINE_BYTES);
                        while let Ok(Some(line)) = lines.next_line().await {
                            if line.cut > 0 {
                                tracing::debug!(%server, cut = line.cut, "an MCP server's stderr line was cut");
                            }
                            tail.push(line.shown());
                        }
                    });
                }
                let noise = StdoutNoise::default();
                let transport = (WatchedStdout::new(stdout, noise.clone(), failure.clone()), stdin);
                (tokio::time::timeout(timeout, handler.clone().serve(transport)).await, Some(child), Some(noise))
            }
            McpEndpoint::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = reqwest::header::HeaderName::try_from(name.as_str())
                        .map_err(|e| error(format!("header {name} is not a valid header name: {e}"), &stderr))?;
                    let value = reqwest::header::HeaderValue::try_from(value.as_str())
                        .map_err(|e| error(format!("the value of header {name} is not valid: {e}"), &stderr))?;
                    custom.insert(name, value);
                }
                let transport_config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        url.as_str(),
                    )
                    .custom_headers(custom)
                    .max_sse_event_size(MAX_MESSAGE_BYTES)
                    .max_json_response_size(MAX_MESSAGE_BYTES)
                    .reinit_on_expired_session(true);
                let transport = StreamableHttpClientTransport::with_client(
                    SessionAwareClient(http.client().clone()),
                    transport_config,
                );
                (tokio::time::timeout(timeout, handler.clone().serve(transport)).await, None, None)
            }
        };
        let pid = process.as_ref().and_then(tokio::process::Child::id);
        let failed = match serving {
            Ok(Ok(service)) => Ok(service),
            Ok(Err(e)) => Err(handshake_error(&e, &config.endpoint)),
            Err(_elapsed) => Err(format!("the server did not answer `initialize` within {} s", timeout.as_secs())),
        };
        let service = match failed {
            Ok(service) => service,
            Err(mut message) => {
                // Give the stderr reader a moment to collect the server's last words, and
                // an exiting server the time to be gone.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let exited = process.as_mut().and_then(|child| child.try_wait().ok().flatten());
                if let Some(pid) = pid {
                    processes.stop(pid).await;
                }
                if let Some(lines) = noise.and_then(|noise| noise.lines()) {
                    message = format!(
                        "it wrote something that is not MCP to its output: `{lines}` (an MCP server over stdio \
                         writes only JSON-RPC messages there: check the command and its arguments); {message}"
                    );
                } else if let Some(status) = exited {
                    message = format!("the program exited ({status}) before it completed the MCP handshake; {message}");
                }
                return Err(error(message, &stderr));
            }
        };
        let peer = service.peer().clone();
        if let Some(info) = peer.peer_info() {
            let instructions = info.instructions.as_deref().map_or(0, str::len);
            tracing::info!(
                server = %config.name,
                version = %info.server_info.as_ref().map_or("?", |i| i.version.as_str()),
                instructions_bytes = instructions,
                "MCP server connected"
            );
        }
        let closed = CancellationToken::new();
        let watch = closed.clone();
        // `closed` fires when the connection ends, whoever ends it (the SDK has no event
        // for it; a server that exits is noticed within a quarter of a second).
        let peer_watch = peer.clone();
        tokio::spawn(async move {
            while !peer_watch.is_transport_closed() && !watch.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            watch.cancel();
        });
        Ok(Self {
            service: tokio::sync::Mutex::new(Some(service)),
            peer,
            handler,
            pid,
            _process: process,
            stderr,
            needs_pings: matches!(config.endpoint, McpEndpoint::Http { .. }),
            failure,
            closed,
        })
    }

    /// Why we gave up on the connection, if we did (rather than the server ending it).
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.reason()
    }

    /// Gives up on the connection: `closed` fires, and the hub reconnects.
    fn fail(&self, reason: String) {
        self.failure.set(reason);
        self.closed.cancel();
    }

    /// `error` from a request, in words; if it says the connection is lost (rather than
    /// the server answering with an error), the connection is given up.
    fn request_failed(&self, what: &str, error: &rmcp::ServiceError) -> String {
        match error {
            rmcp::ServiceError::TransportSend(_) | rmcp::ServiceError::TransportClosed => {
                let reason = format!("the server could not be reached: {}", chain(error));
                self.fail(reason.clone());
                reason
            }
            other => format!("{what} failed: {}", chain(other)),
        }
    }

    /// Asks the server whether it is still there. A server that cannot be reached fails
    /// the connection; one that answers, even with an error, is alive.
    pub(crate) async fn ping(&self, timeout: Duration) {
        let request = ClientRequest::PingRequest(rmcp::model::PingRequest::default());
        match tokio::time::timeout(timeout, self.peer.send_request(request)).await {
            Ok(Err(error)) => {
                let said = self.request_failed("`ping`", &error);
                tracing::debug!(%said, "MCP ping");
            }
            Ok(Ok(_)) => {}
            // Busy, perhaps: calls have their own timeouts.
            Err(_elapsed) => tracing::debug!("an MCP server did not answer a ping in time"),
        }
    }

    /// What the server's `initialize` said about using it.
    pub(crate) fn instructions(&self) -> Option<String> {
        self.peer.peer_info()?.instructions.clone().filter(|text| !text.trim().is_empty())
    }

    /// Whether the server offers logging (and so takes `logging/setLevel`).
    pub(crate) fn logs(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| info.capabilities.logging.is_some())
    }

    /// Asks the server to log at `level` and above.
    #[allow(deprecated)]
    pub(crate) async fn set_log_level(
        &self,
        level: rmcp::model::LoggingLevel,
        timeout: Duration,
    ) -> Result<(), String> {
        tokio::time::timeout(timeout, self.peer.set_level(SetLevelRequestParams::new(level)))
            .await
            .map_err(|_| format!("`logging/setLevel` got no answer within {} s", timeout.as_secs()))?
            .map_err(|e| self.request_failed("`logging/setLevel`", &e))
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`); it asks
    /// for them again if it cares.
    pub(crate) async fn roots_changed(&self) {
        if let Err(error) = self.peer.notify_roots_list_changed().await {
            tracing::debug!(%error, "could not tell an MCP server its roots changed");
        }
    }

    /// Resolves when the connection has ended.
    pub(crate) async fn closed(&self) {
        self.closed.cancelled().await;
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Every tool, as JSON (read by `catalog::read_tools`).
    pub(crate) async fn list_tools(&self, timeout: Duration) -> Result<Vec<Value>, String> {
        let tools = tokio::time::timeout(timeout, self.peer.list_all_tools())
            .await
            .map_err(|_| format!("`tools/list` got no answer within {} s", timeout.as_secs()))?
            .map_err(|e| self.request_failed("`tools/list`", &e))?;
        Ok(tools.iter().filter_map(|tool| serde_json::to_value(tool).ok()).collect())
    }

    /// What the server said it offers beside tools.
    pub(crate) fn offers(&self) -> Offers {
        let capabilities = self.peer.peer_info().map(|info| info.capabilities.clone());
        let capabilities = capabilities.as_ref();
        Offers {
            resources: capabilities.is_some_and(|c| c.resources.is_some()),
            subscriptions: capabilities.and_then(|c| c.resources.as_ref()).and_then(|r| r.subscribe).unwrap_or(false),
            prompts: capabilities.is_some_and(|c| c.prompts.is_some()),
            completions: capabilities.is_some_and(|c| c.completions.is_some()),
        }
    }

    /// One request other than a tool call, its answer as JSON (read by `offers`), its
    /// failure in words.
    async fn ask<T: serde::Serialize>(
        &self,
        what: &str,
        timeout: Duration,
        request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<Value, String> {
        let answer = tokio::time::timeout(timeout, request)
            .await
            .map_err(|_| format!("`{what}` got no answer within {} s", timeout.as_secs()))?;
        match answer {
            Ok(result) => {
                serde_json::to_value(result).map_err(|e| format!("`{what}` answered something unreadable: {e}"))
            }
            Err(rmcp::ServiceError::McpError(data)) => Err(format!(
                "the server refused `{what}` (error {}): {}",
                data.code.0,
                super::words::scrub(&data.message)
            )),
            Err(error) => Err(self.request_failed(&format!("`{what}`"), &error)),
        }
    }

    /// Every resource (`resources/list`, all pages), as JSON.
    pub(crate) async fn list_resources(&self, timeout: Duration) -> Result<Value, String> {
        self.ask("resources/list", timeout, self.peer.list_all_resources()).await
    }

    /// Every resource template (`resources/templates/list`, all pages), as JSON.
    pub(crate) async fn list_resource_templates(&self, timeout: Duration) -> Result<Value, String> {
        self.ask("resources/templates/list", timeout, self.peer.list_all_resource_templates()).await
    }

    /// Whether the server said the resource changed since it was last read; forgets it.
    pub(crate) fn take_update(&self, uri: &str) -> bool {
        self.handler.updated.lock().is_ok_and(|mut updated| updated.remove(uri))
    }

    /// Whether the server said the resource changed since it was last read.
    pub(crate) fn has_update(&self, uri: &str) -> bool {
        self.handler.updated.lock().is_ok_and(|updated| updated.contains(uri))
    }

    /// `resources/read`, as JSON.
    pub(crate) async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Value, String> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        self.ask("resources/read", timeout, self.peer.read_resource(params)).await
    }

    /// Asks to be told when the resource changes (`resources/subscribe`).
    #[allow(deprecated)]
    pub(crate) async fn subscribe(&self, uri: &str, timeout: Duration) -> Result<(), String> {
        let params = rmcp::model::SubscribeRequestParams::new(uri.to_owned());
        self.ask("resources/subscribe", timeout, self.peer.subscribe(params)).await.map(|_| ())
    }

    /// Every prompt (`prompts/list`, all pages), as JSON.
    pub(crate) async fn list_prompts(&self, timeout: Duration) -> Result<Value, String> {
        self.ask("prompts/list", timeout, self.peer.list_all_prompts()).await
    }

    /// `prompts/get`, as JSON.
    pub(crate) async fn get_prompt(
        &self,
        name: &str,
        arguments: &std::collections::BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<Value, String> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name.to_owned());
        if !arguments.is_empty() {
            let arguments = arguments.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            params = params.with_arguments(arguments);
        }
        self.ask("prompts/get", timeout, self.peer.get_prompt(params)).await
    }

    /// `completion/complete` for a prompt's argument, as JSON (the `completion` object).
    pub(crate) async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
        context: &std::collections::BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<Value, String> {
        let context = (!context.is_empty())
            .then(|| rmcp::model::CompletionContext::with_arguments(context.clone().into_iter().collect()));
        let request =
            self.peer.complete_prompt_argument(prompt.to_owned(), argument.to_owned(), value.to_owned(), context);
        self.ask("completion/complete", timeout, request).await
    }

    /// Calls a tool. Progress goes to `progress`, the server's questions to `asks`;
    /// `cancel` or the timeout (which stands still while a question waits for the user)
    /// sends `notifications/cancelled` to the server.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Value,
        progress: ProgressSink,
        asks: Option<AskSink>,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<ToolOutput, ToolError> {
        let Value::Object(arguments) = arguments else {
            return Err(ToolError::InvalidInput("the arguments must be a JSON object".into()));
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // Listed before the request leaves: the server may ask as soon as it reads it, and
        // its connection's task runs beside this one (on another thread for a reply's calls).
        let running = RunningCall::start(&self.handler, asks);
        let handle =
            self.peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await.map_err(|e| {
                ToolError::Failed(format!(
                    "the MCP server could not be reached: {}; check the server in Settings → MCP",
                    chain(&e)
                ))
            })?;
        let key = token_key(&handle.progress_token);
        let early =
            self.handler.progress.lock().ok().and_then(|mut routes| routes.listen(key.clone(), progress.clone()));
        if let Some(early) = early {
            progress(early);
        }
        let rmcp::service::RequestHandle { rx, id, .. } = handle;
        let outcome = tokio::select! {
            answer = rx => match answer {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(rmcp::ServiceError::McpError(data))) => Err(ToolError::Failed(format!(
                    "the MCP server refused the call (error {}): {}",
                    data.code.0,
                    super::words::scrub(&data.message)
                ))),
                Ok(Err(e)) => Err(ToolError::Failed(format!(
                    "the MCP call failed: {}; it is tried again once the server is back (see Settings → MCP)",
                    self.request_failed("the call", &e)
                ))),
                Err(_) => Err(ToolError::Failed("the MCP server closed the connection during the call".into())),
            },
            _ = cancel.cancelled() => Err(ToolError::Cancelled),
            _ = call_deadline(timeout, &self.handler.asking) => Err(ToolError::TimedOut(timeout)),
            _ = self.closed.cancelled() => Err(ToolError::Failed("the MCP server stopped during the call".into())),
        };
        drop(running);
        if let Ok(mut routes) = self.handler.progress.lock() {
            routes.forget(&key);
        }
        if let Err(ToolError::Cancelled | ToolError::TimedOut(_)) = &outcome {
            let reason = if matches!(outcome, Err(ToolError::Cancelled)) { "stopped by the user" } else { "timed out" };
            let _ = self.peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason.into()))).await;
        }
        match outcome? {
            ServerResult::CallToolResult(result) => {
                Ok(tool_output(serde_json::to_value(result).unwrap_or(Value::Null)))
            }
            other => Err(ToolError::Failed(format!(
                "the MCP server answered the call with something else: {}",
                serde_json::to_string(&other).unwrap_or_default().chars().take(200).collect::<String>()
            ))),
        }
    }

    /// Ends the connection (and a stdio server's whole process group).
    pub(crate) async fn shutdown(&self, processes: &ProcessRegistry) {
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.close()).await;
        }
        if let Some(pid) = self.pid {
            processes.stop(pid).await;
        }
        self.closed.cancel();
    }
}

/// What went wrong in the handshake, in words: the SDK's errors name its own types.
fn handshake_error(error: &rmcp::service::ClientInitializeError, endpoint: &McpEndpoint) -> String {
    let cause: &(dyn std::error::Error + 'static) = match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => error.error.as_ref(),
        other => other,
    };
    let detail = chain(cause);
    let McpEndpoint::Http { url, .. } = endpoint else {
        return format!("the MCP handshake failed: {detail}");
    };
    // reqwest's own words ("error following redirect for url …") add nothing to ours.
    if let Some(refused) = find_cause::<CrossOriginRedirect>(cause) {
        return format!("the MCP handshake with {url} stopped: {refused}");
    }
    match http_status(&detail) {
        Some(401) => format!(
            "the server at {url} answered 401 Unauthorized: it wants credentials; add them as a header \
             (e.g. `Authorization: Bearer <token>`)"
        ),
        Some(403) => format!("the server at {url} answered 403 Forbidden: the credentials in the headers are refused"),
        Some(404) => format!(
            "the server at {url} answered 404 Not Found: check the URL (a streamable HTTP MCP endpoint often ends in /mcp)"
        ),
        Some(status) => format!("the server at {url} answered HTTP {status}: {detail}"),
        None if detail.contains("error sending request") => format!("could not reach {url}: {detail}"),
        None => format!("the MCP handshake with {url} failed: {detail}"),
    }
}

/// `error` and its causes, outermost first.
fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |error| {
        // rmcp's `Client` variant shows the HTTP client's error but gives no `source`.
        match error.downcast_ref::<rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>>() {
            Some(rmcp::transport::streamable_http_client::StreamableHttpError::Client(inner)) => Some(inner as _),
            _ => error.source(),
        }
    })
}

/// The first error of type `E` among `error` and its causes.
fn find_cause<'a, E: std::error::Error + 'static>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a E> {
    causes(error).find_map(|error| error.downcast_ref::<E>())
}

/// An error and its causes in words (no Rust type names), each once, joined with `: `.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    super::words::chain(causes(error))
}

/// The HTTP status an error message reports (`HTTP 404 …`).
fn http_status(message: &str) -> Option<u16> {
    message.match_indices("HTTP ").find_map(|(at, _)| {
        let code = message.get(at + 5..at + 8)?;
        code.parse().ok().filter(|c| (100..600).contains(c))
    })
}

/// Lines a stdio server wrote to stdout that cannot be MCP (not JSON), kept for the error
/// message: usually a server started without the argument that makes it speak MCP, or
/// one that prints a banner.
#[derive(Clone, Default)]
struct StdoutNoise(Arc<Mutex<Vec<String>>>);

/// How many such lines are kept, and how much of each.
const NOISE_LINES: usize = 3;
const NOISE_LINE_BYTES: usize = 200;

impl StdoutNoise {
    fn lines(&self) -> Option<String> {
        let lines = self.0.lock().ok()?;
        (!lines.is_empty()).then(|| lines.join(" ⏎ "))
    }
}

/// A stdio server's stdout on its way to the SDK, watched for lines that are not JSON and
/// for a message longer than [`MAX_MESSAGE_BYTES`], which ends the connection (saying
/// why) rather than being buffered without bound.
struct WatchedStdout<R> {
    inner: R,
    noise: StdoutNoise,
    failure: Failure,
    line: LineKind,
    /// Bytes of the current line so far, and how many it may have.
    line_bytes: usize,
    limit: usize,
}

enum LineKind {
    /// Nothing but whitespace so far.
    Start,
    Json,
    /// Not JSON: its first bytes.
    Noise(Vec<u8>),
}

impl<R> WatchedStdout<R> {
    fn new(inner: R, noise: StdoutNoise, failure: Failure) -> Self {
        Self { inner, noise, failure, line: LineKind::Start, line_bytes: 0, limit: MAX_MESSAGE_BYTES }
    }

    /// Watches the next bytes; an error once a line is longer than the limit.
    fn watch(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        for &byte in bytes {
            if byte == b'\n' {
                self.line_bytes = 0;
            } else {
                self.line_bytes += 1;
                if self.line_bytes > self.limit {
                    let reason = format!(
                        "the server sent a message larger than {} MiB, the most Colloquy accepts",
                        self.limit / (1024 * 1024)
                    );
                    self.failure.set(reason.clone());
                    return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, reason));
                }
            }
            match (&mut self.line, byte) {
                (LineKind::Noise(kept), b'\n') => {
                    let text = String::from_utf8_lossy(kept).trim().to_owned();
                    if let Ok(mut lines) = self.noise.0.lock()
                        && lines.len() < NOISE_LINES
                    {
                        lines.push(text);
                    }
                    self.line = LineKind::Start;
                }
                (_, b'\n') => self.line = LineKind::Start,
                (LineKind::Start, b'{' | b'[') => self.line = LineKind::Json,
                (LineKind::Start, byte) if byte.is_ascii_whitespace() => {}
                (LineKind::Start, byte) => self.line = LineKind::Noise(vec![byte]),
                (LineKind::Noise(kept), byte) if kept.len() < NOISE_LINE_BYTES => kept.push(byte),
                _ => {}
            }
        }
        Ok(())
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WatchedStdout<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled {
            let fresh = buf.filled()[before..].to_vec();
            if let Err(too_long) = self.watch(&fresh) {
                buf.set_filled(before);
                return std::task::Poll::Ready(Err(too_long));
            }
        }
        polled
    }
}

fn spawn_error(command: &str, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("{command} was not found: install it, or give its full path in the server's settings")
        }
        std::io::ErrorKind::PermissionDenied => format!("{command} cannot be run (permission denied)"),
        _ => format!("{command} could not be started: {error}"),
    }
}

/// A `CallToolResult` (as JSON) in our output shape. Content kinds we do not show
/// (audio, unknown ones) become a line of text saying what they were.
pub(crate) fn tool_output(result: Value) -> ToolOutput {
    let mut content = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
        match kind {
            "text" => content.push(ToolContent::Text { text: text("text").unwrap_or_default() }),
            "image" => match (text("data"), text("mimeType")) {
                (Some(data), Some(mime_type)) => content.push(ToolContent::Image { mime_type, data }),
                _ => content.push(ToolContent::Text { text: "[an image without data]".into() }),
            },
            "resource" => {
                let resource = block.get("resource");
                let field = |key: &str| resource.and_then(|r| r.get(key)).and_then(Value::as_str).map(str::to_owned);
                content.push(ToolContent::Resource {
                    uri: field("uri").unwrap_or_default(),
                    mime_type: field("mimeType"),
                    text: field("text")
                        .or_else(|| field("blob").map(|b| format!("[{} bytes of binary data]", b.len() * 3 / 4))),
                    link: false,
                    name: None,
                    annotations: ContentAnnotations::read(block.get("annotations")),
                });
            }
            "resource_link" => content.push(ToolContent::Resource {
                uri: text("uri").unwrap_or_default(),
                mime_type: text("mimeType"),
                text: text("description").or_else(|| text("name")),
                link: true,
                name: text("title").or_else(|| text("name")),
                annotations: ContentAnnotations::read(block.get("annotations")),
            }),
            other => content.push(ToolContent::Text { text: format!("[{other} content is not shown]") }),
        }
    }
    ToolOutput {
        content,
        structured_content: result.get("structuredContent").filter(|v| !v.is_null()).cloned(),
        is_error: result.get("isError").and_then(Value::as_bool).unwrap_or(false),
        ..ToolOutput::default()
    }
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn progress_heard_before_its_call_is_listed_reaches_the_call() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink: ProgressSink = {
            let seen = seen.clone();
            Arc::new(move |progress: Progress| seen.lock().unwrap().push(progress.progress))
        };
        let at = |progress: f64| Progress { progress, total: Some(10.0), message: None };
        let mut routes = ProgressRoutes::default();
        // The server reports twice before the call is listed: the newer one stands.
        assert!(routes.route("7".into(), at(1.0)).is_none());
        assert!(routes.route("7".into(), at(2.0)).is_none());
        assert_eq!(routes.listen("7".into(), sink.clone()).map(|p| p.progress), Some(2.0));
        let (to, progress) = routes.route("7".into(), at(3.0)).expect("listed now");
        to(progress);
        assert_eq!(*seen.lock().unwrap(), vec![3.0]);
        // Once the call ended its token is unknown again, and nothing of it is kept.
        routes.forget("7");
        assert!(routes.route("7".into(), at(4.0)).is_none());
        routes.forget("7");
        assert!(routes.early.is_empty());

        // Tokens no call is ever listed under (another request's) are kept a few at most.
        for token in 0..100 {
            assert!(routes.route(format!("other-{token}"), at(1.0)).is_none());
        }
        assert_eq!(routes.early.len(), EARLY_PROGRESS);
        assert_eq!(routes.listen("other-99".into(), sink.clone()).map(|p| p.progress), Some(1.0));
        assert_eq!(routes.listen("other-0".into(), sink).map(|p| p.progress), None);
    }

    #[test]
    fn lines_that_are_not_json_are_kept_and_json_lines_are_not() {
        let noise = StdoutNoise::default();
        let mut watched = WatchedStdout::new(tokio::io::empty(), noise.clone(), Failure::default());
        watched.watch(b"{\"jsonrpc\":\"2.0\"}\n  \nWelcome").unwrap();
        watched.watch(b" to the server!\n[1]\n<html>\n").unwrap();
        assert_eq!(noise.lines().as_deref(), Some("Welcome to the server! \u{23ce} <html>"));
        assert_eq!(http_status("unexpected server response: HTTP 404 Not Found: go away"), Some(404));
        assert_eq!(http_status("HTTP/1.1 is fine"), None);
    }

    #[tokio::test]
    async fn audit_14_a_message_over_the_cap_ends_the_connection_and_says_why() {
        use tokio::io::AsyncReadExt;
        let failure = Failure::default();
        let endless = format!("{{\"jsonrpc\":\"2.0\",\"id\":1}}\n{{\"result\":\"{}", "x".repeat(4096));
        let mut watched = WatchedStdout::new(endless.as_bytes(), StdoutNoise::default(), failure.clone());
        watched.limit = 1024;
        let mut read = Vec::new();
        let error = watched.read_to_end(&mut read).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(read.len() <= 8 * 1024, "the long line is not handed on whole ({} bytes)", read.len());
        let said = failure.reason().unwrap();
        assert!(said.contains("larger than") && said.contains("MiB"), "{said}");

        // A line of exactly the limit, and many lines adding up to more, are fine.
        let mut fine = WatchedStdout::new(tokio::io::empty(), StdoutNoise::default(), Failure::default());
        fine.limit = 8;
        fine.watch(b"12345678\n12345678\n").unwrap();
        assert!(fine.watch(b"123456789").is_err());
    }

    #[test]
    fn results_keep_text_images_resources_and_structured_content() {
        let output = tool_output(json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "A"}},
                {"type": "resource_link", "uri": "test://b", "name": "b",
                 "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "audio", "data": "x", "mimeType": "audio/wav"}
            ],
            "structuredContent": {"temperature": 21},
            "isError": true
        }));
        assert_eq!(output.content.len(), 5);
        assert!(output.is_error);
        assert_eq!(output.structured_content, Some(json!({"temperature": 21})));
        assert_eq!(output.text_content(), "hi\nA\nb <test://b>\n[audio content is not shown]");
        let ToolContent::Resource { link, annotations, .. } = &output.content[3] else { panic!("a resource link") };
        assert!(*link);
        assert_eq!(annotations.as_ref().unwrap().audience, vec!["user"]);
        assert_eq!(annotations.as_ref().unwrap().priority, Some(0.5));
        assert!(matches!(&output.content[2], ToolContent::Resource { link: false, annotations: None, .. }));
    }
}
