//! [`McpHub`]: every configured MCP server, each kept connected by its own supervisor
//! task, and the cached catalog of their tools.
//!
//! - One connection (one process, for stdio) per server, shared by every topic.
//! - A server that fails to start, exits, or drops the connection is retried with
//!   exponential backoff (see `backoff`); its status says why and when it is tried again.
//!   An HTTP server is pinged every [`HubOptions::ping_interval`], and a call, listing or
//!   ping that cannot reach it ends the connection the same way, so a server that went
//!   away never shows `ready`. A refresh during the wait tries again at once.
//! - The catalog is what the server last listed successfully. Requests are built from it
//!   without ever waiting on a server; a failed refresh keeps the old list (the server
//!   stays ready and its status says the listing failed). A server whose first listing
//!   fails while no tools are known counts as failed and is retried.

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use protocol::mcp::{McpLogLevel, McpServerLog, McpState, McpStatus};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::McpServerConfig;
use super::backoff::Backoff;
use super::catalog::{self, McpToolSpec};
use super::client::Client;
use super::logs::{ServerLog, rmcp_level};
use super::processes::ProcessRegistry;
use super::tool::McpTool;
use crate::tool::Tool;

/// Where the hub saves a server's catalog after each successful listing.
#[async_trait]
pub trait CatalogSink: Send + Sync {
    async fn save(&self, server_id: &str, tools: &[McpToolSpec]);
}

pub struct HubOptions {
    /// Where child process groups (stdio servers, agent CLIs) are recorded, for reaping
    /// after a crash.
    pub processes_file: std::path::PathBuf,
    /// How long the MCP handshake (and a `tools/list`, and a ping) may take.
    pub connect_timeout: Duration,
    /// How often a connection over HTTP is pinged to see the server is still there
    /// (nothing else tells: a stdio server's exit closes its pipes).
    pub ping_interval: Duration,
    /// The client for servers over HTTP: it refuses a redirect to another origin, so a
    /// server's headers reach no one else.
    pub http: super::McpHttp,
    pub sink: Arc<dyn CatalogSink>,
}

/// An MCP tool as offered, with where it comes from.
#[derive(Clone)]
pub struct McpToolEntry {
    pub tool: Arc<dyn Tool>,
    pub server_id: String,
    pub server_name: String,
    /// The server's read-only tools may run without asking.
    pub trust_read_only: bool,
}

/// What a server's `initialize` said about using it.
#[derive(Clone, Debug)]
pub struct McpInstructions {
    pub server_name: String,
    /// Its tools are named `<namespace>__<tool>`.
    pub namespace: String,
    pub text: String,
}

/// Every configured server. Cheap to clone.
#[derive(Clone)]
pub struct McpHub {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    options: HubOptions,
    /// Shared with the agent CLIs' driver: one record of child processes per data folder.
    pub(crate) processes: Arc<ProcessRegistry>,
    servers: Mutex<BTreeMap<String, Server>>,
    /// Order of addition: tools are listed server by server in this order.
    order: Mutex<Vec<String>>,
    tracker: TaskTracker,
    /// Counts the changes of any server's status or tools, for whoever waits on one.
    changes: watch::Sender<u64>,
    /// The folders every connection offers as its roots (`set_roots`).
    roots: watch::Sender<Vec<std::path::PathBuf>>,
}

struct Server {
    config: McpServerConfig,
    enabled: bool,
    status: McpStatus,
    tools: Vec<McpToolSpec>,
    /// The live connection, for calls.
    client: watch::Sender<Option<Arc<Client>>>,
    stop: CancellationToken,
    refresh: Arc<tokio::sync::Notify>,
    /// What it logged, kept across reconnects and edits.
    log: ServerLog,
    /// The level asked for, sent again after each reconnect.
    log_level: Arc<Mutex<Option<McpLogLevel>>>,
    /// It may sample without asking; shared with its connection's handler.
    sampling_allowed: Arc<std::sync::atomic::AtomicBool>,
}

impl McpHub {
    /// A hub with no servers yet. Process groups a crashed run left behind are killed
    /// first.
    pub fn new(options: HubOptions) -> Self {
        let processes = Arc::new(ProcessRegistry::new(&options.processes_file));
        let reaped = processes.reap_orphans();
        if reaped > 0 {
            tracing::warn!(reaped, "stopped child processes left running by the last run");
        }
        Self {
            inner: Arc::new(Inner {
                options,
                processes,
                servers: Mutex::new(BTreeMap::new()),
                order: Mutex::new(Vec::new()),
                tracker: TaskTracker::new(),
                changes: watch::channel(0).0,
                roots: watch::channel(Vec::new()).0,
            }),
        }
    }

    /// The folders offered to every server as its roots (MCP `roots/list`): servers that
    /// work on files (the filesystem server) keep to them. Servers connected now are told
    /// of a change (`roots/list_changed`); later ones are asked after their handshake.
    pub fn set_roots(&self, mut folders: Vec<std::path::PathBuf>) {
        folders.sort();
        folders.dedup();
        self.inner.roots.send_if_modified(|roots| {
            let changed = *roots != folders;
            if changed {
                *roots = folders;
            }
            changed
        });
    }

    /// The folders offered as roots now.
    pub fn roots(&self) -> Vec<std::path::PathBuf> {
        self.inner.roots.borrow().clone()
    }

    /// The record of child process groups (reaped when the hub was made), for other
    /// children of the app to be recorded in too (agent CLIs).
    pub fn processes(&self) -> Arc<ProcessRegistry> {
        self.inner.processes.clone()
    }

    /// Adds or replaces a server (its connection restarts), starting from `cached` tools
    /// when it has none yet.
    pub fn upsert(&self, config: McpServerConfig, enabled: bool, cached: Vec<McpToolSpec>) {
        let id = config.id.clone();
        let previous = {
            let Ok(mut servers) = self.inner.servers.lock() else { return };
            let previous = servers.remove(&id);
            let tools = match &previous {
                Some(old) if cached.is_empty() => old.tools.clone(),
                _ => cached,
            };
            // A server that cannot start (a value is missing) says so at once, not only
            // once its supervisor has run: a list read right after shows the reason.
            let (state, message) = match (&config.blocked, enabled) {
                (_, false) => (McpState::Disabled, None),
                (Some(why), true) => (McpState::Error, Some(why.clone())),
                (None, true) => (McpState::Connecting, None),
            };
            let status = McpStatus {
                state,
                message,
                stderr_tail: None,
                tool_count: tools.len() as u32,
                problems: Vec::new(),
                instructions: previous.as_ref().and_then(|old| old.status.instructions.clone()),
            };
            let (log, log_level) = match &previous {
                Some(old) => (old.log.clone(), old.log_level.clone()),
                None => (ServerLog::default(), Arc::default()),
            };
            let sampling_allowed = Arc::new(std::sync::atomic::AtomicBool::new(config.sampling_allowed));
            let server = Server {
                sampling_allowed: sampling_allowed.clone(),
                config: config.clone(),
                enabled,
                status,
                tools,
                client: watch::channel(None).0,
                stop: CancellationToken::new(),
                refresh: Arc::new(tokio::sync::Notify::new()),
                log: log.clone(),
                log_level: log_level.clone(),
            };
            let (stop, refresh) = (server.stop.clone(), server.refresh.clone());
            servers.insert(id.clone(), server);
            if let Ok(mut order) = self.inner.order.lock()
                && !order.contains(&id)
            {
                order.push(id.clone());
            }
            if enabled {
                let logging = Logging { log, level: log_level, sampling_allowed };
                self.inner.tracker.spawn(supervise(self.inner.clone(), config, stop, refresh, logging));
            }
            previous
        };
        self.inner.changed();
        if let Some(previous) = previous {
            previous.stop.cancel();
            self.spawn_disconnect(previous.client.borrow().clone());
        }
    }

    /// Removes a server and stops its connection.
    pub fn remove(&self, id: &str) {
        let removed = self.inner.servers.lock().ok().and_then(|mut s| s.remove(id));
        if let Ok(mut order) = self.inner.order.lock() {
            order.retain(|o| o != id);
        }
        if let Some(server) = removed {
            server.stop.cancel();
            self.spawn_disconnect(server.client.borrow().clone());
        }
        self.inner.changed();
    }

    fn spawn_disconnect(&self, client: Option<Arc<Client>>) {
        if let Some(client) = client {
            let inner = self.inner.clone();
            self.inner.tracker.spawn(async move { client.shutdown(&inner.processes).await });
        }
    }

    /// Lists the server's tools again, in the background. False when there is no such
    /// enabled server.
    pub fn refresh(&self, id: &str) -> bool {
        let servers = self.inner.servers.lock();
        match servers.ok().as_ref().and_then(|s| s.get(id)) {
            Some(server) if server.enabled => {
                server.refresh.notify_one();
                true
            }
            _ => false,
        }
    }

    /// Marks a change whenever a server's status or tools change (added, removed,
    /// connecting, ready, failed), so a waiter reads them again instead of polling.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// The tail of what the server logged. `None` when there is no such server.
    pub fn log(&self, id: &str) -> Option<McpServerLog> {
        let (entries, level, client) = {
            let servers = self.inner.servers.lock().ok()?;
            let server = servers.get(id)?;
            let level = server.log_level.lock().ok().and_then(|l| *l);
            (server.log.entries(), level, server.client.borrow().clone())
        };
        let supported = client.is_some_and(|c| !c.is_closed() && c.logs());
        Some(McpServerLog { supported, level, entries })
    }

    /// Asks the server to log at `level` and above (`logging/setLevel`), now and after
    /// each reconnect. An error in words when it is not connected or does not log.
    pub async fn set_log_level(&self, id: &str, level: McpLogLevel) -> Result<(), String> {
        let (client, name, slot) = {
            let servers = self.inner.servers.lock().map_err(|_| "the MCP hub is broken".to_owned())?;
            let server = servers.get(id).ok_or_else(|| "this MCP server was removed".to_owned())?;
            (server.client.borrow().clone(), server.config.name.clone(), server.log_level.clone())
        };
        let client = client
            .filter(|c| !c.is_closed())
            .ok_or_else(|| format!("{name} is not connected; its log level can be set once it is (see its status)"))?;
        if !client.logs() {
            return Err(format!("{name} does not offer logging, so it has no level to set"));
        }
        client.set_log_level(rmcp_level(level), self.inner.options.connect_timeout).await?;
        if let Ok(mut slot) = slot.lock() {
            *slot = Some(level);
        }
        Ok(())
    }

    /// Lets the server sample without asking from now on, on its live connection too.
    pub fn allow_sampling(&self, id: &str) {
        if let Ok(servers) = self.inner.servers.lock()
            && let Some(server) = servers.get(id)
        {
            server.sampling_allowed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The `instructions` of every enabled server that gave any, with the namespace of its
    /// tools, in the order servers were added.
    pub fn instructions(&self) -> Vec<McpInstructions> {
        let order: Vec<String> = self.inner.order.lock().map(|o| o.clone()).unwrap_or_default();
        let Ok(servers) = self.inner.servers.lock() else { return Vec::new() };
        order
            .iter()
            .filter_map(|id| servers.get(id).filter(|s| s.enabled))
            .filter_map(|server| {
                let text = server.status.instructions.as_deref()?.trim();
                (!text.is_empty()).then(|| McpInstructions {
                    server_name: server.config.name.clone(),
                    namespace: server.config.namespace.clone(),
                    text: text.to_owned(),
                })
            })
            .collect()
    }

    pub fn status(&self, id: &str) -> Option<McpStatus> {
        self.inner.servers.lock().ok()?.get(id).map(|s| s.status.clone())
    }

    /// The tools of every enabled server, from the cache: never waits on a server. Each
    /// is named `<namespace>__<tool>` after its server's namespace.
    pub fn tools(&self) -> Vec<McpToolEntry> {
        let order: Vec<String> = self.inner.order.lock().map(|o| o.clone()).unwrap_or_default();
        let Ok(servers) = self.inner.servers.lock() else { return Vec::new() };
        // Namespaces are unique and never contain `__`, so names of different servers
        // cannot clash; `taken` is kept across servers all the same, as a guard.
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for id in &order {
            let Some(server) = servers.get(id).filter(|s| s.enabled) else { continue };
            for spec in &server.tools {
                let name = catalog::namespaced(&server.config.namespace, &spec.name, &mut taken);
                let tool = McpTool::new(
                    self.inner.clone(),
                    id.clone(),
                    server.config.name.clone(),
                    name,
                    spec.clone(),
                    server.config.timeout,
                );
                out.push(McpToolEntry {
                    tool: Arc::new(tool),
                    server_id: id.clone(),
                    server_name: server.config.name.clone(),
                    trust_read_only: server.config.trust_read_only,
                });
            }
        }
        out
    }

    /// Stops every server and waits for their processes to go.
    pub async fn shutdown(&self) {
        let servers: Vec<Server> =
            self.inner.servers.lock().map(|mut s| std::mem::take(&mut *s).into_values().collect()).unwrap_or_default();
        for server in &servers {
            server.stop.cancel();
            let client = server.client.borrow().clone();
            if let Some(client) = client {
                client.shutdown(&self.inner.processes).await;
            }
        }
        self.inner.tracker.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.inner.tracker.wait()).await;
        self.inner.processes.stop_all_now();
    }
}

impl Inner {
    /// How many tools the catalog has for the server.
    fn known_tools(&self, id: &str) -> usize {
        self.servers.lock().ok().and_then(|s| s.get(id).map(|s| s.tools.len())).unwrap_or(0)
    }

    fn update(&self, id: &str, change: impl FnOnce(&mut Server)) {
        if let Ok(mut servers) = self.servers.lock()
            && let Some(server) = servers.get_mut(id)
        {
            change(server);
        }
        self.changed();
    }

    fn changed(&self) {
        self.changes.send_modify(|count| *count = count.wrapping_add(1));
    }

    /// Every enabled server in the order they were added (id, name), with its live
    /// connection when it has one.
    pub(crate) fn connections(&self) -> Vec<(String, String, Option<Arc<Client>>)> {
        let order: Vec<String> = self.order.lock().map(|o| o.clone()).unwrap_or_default();
        let Ok(servers) = self.servers.lock() else { return Vec::new() };
        order
            .iter()
            .filter_map(|id| servers.get(id).filter(|s| s.enabled).map(|s| (id, s)))
            .map(|(id, s)| {
                let client = s.client.borrow().clone().filter(|c| !c.is_closed());
                (id.clone(), s.config.name.clone(), client)
            })
            .collect()
    }

    /// Whether the server said the resource changed since it was last read on its live
    /// connection; forgets it.
    pub(crate) fn take_resource_update(&self, id: &str, uri: &str) -> bool {
        let client = self.servers.lock().ok().and_then(|s| s.get(id).and_then(|s| s.client.borrow().clone()));
        client.is_some_and(|client| client.take_update(uri))
    }

    /// Whether the server said the resource changed since it was last read (without
    /// forgetting it).
    pub(crate) fn resource_update_pending(&self, id: &str, uri: &str) -> bool {
        let client = self.servers.lock().ok().and_then(|s| s.get(id).and_then(|s| s.client.borrow().clone()));
        client.is_some_and(|client| client.has_update(uri))
    }

    /// The server's name, when there is such a server.
    pub(crate) fn server_name(&self, id: &str) -> Option<String> {
        self.servers.lock().ok()?.get(id).map(|s| s.config.name.clone())
    }

    /// How long a request to the server may take.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.options.connect_timeout
    }

    /// The server's live connection, waiting up to `wait` for one while it connects.
    pub(crate) async fn client(&self, id: &str, wait: Duration) -> Result<Arc<Client>, String> {
        let (mut rx, name) = {
            let servers = self.servers.lock().map_err(|_| "the MCP hub is broken".to_owned())?;
            let server = servers.get(id).ok_or_else(|| "this MCP server was removed".to_owned())?;
            if !server.enabled {
                return Err(format!("the MCP server {} is switched off", server.config.name));
            }
            (server.client.subscribe(), server.config.name.clone())
        };
        let waited = tokio::time::timeout(wait, rx.wait_for(|c| c.as_ref().is_some_and(|c| !c.is_closed()))).await;
        match waited {
            Ok(Ok(client)) => client.clone().ok_or_else(|| format!("the MCP server {name} is not connected")),
            _ => {
                let status = self.servers.lock().ok().and_then(|s| s.get(id).map(|s| s.status.clone()));
                let why = status.and_then(|s| s.message).unwrap_or_else(|| "it is still connecting".into());
                Err(format!("the MCP server {name} is not connected: {why}"))
            }
        }
    }
}

/// A server's log and the level asked of it (and, riding along to its connections,
/// whether it may sample without asking).
struct Logging {
    log: ServerLog,
    level: Arc<Mutex<Option<McpLogLevel>>>,
    sampling_allowed: Arc<std::sync::atomic::AtomicBool>,
}

/// Keeps one server connected until `stop`.
async fn supervise(
    inner: Arc<Inner>,
    config: McpServerConfig,
    stop: CancellationToken,
    refresh: Arc<tokio::sync::Notify>,
    logging: Logging,
) {
    let id = config.id.clone();
    if let Some(why) = &config.blocked {
        tracing::warn!(server = %config.name, error = %why, "MCP server not started");
        inner.update(&id, |s| {
            s.status =
                McpStatus { state: McpState::Error, message: Some(why.clone()), stderr_tail: None, ..s.status.clone() };
        });
        return;
    }
    let timeout = inner.options.connect_timeout;
    let mut backoff = Backoff::new();
    loop {
        inner.update(&id, |s| {
            s.status.state = McpState::Connecting;
        });
        // Roots as they are now go into the handshake's answers; a change from here on is
        // announced once the connection is up.
        let mut roots = inner.roots.subscribe();
        roots.mark_unchanged();
        let connected = tokio::select! {
            _ = stop.cancelled() => return,
            connected = Client::connect(
                &config,
                &inner.processes,
                &inner.options.http,
                timeout,
                logging.log.clone(),
                roots.clone(),
                logging.sampling_allowed.clone(),
            ) => connected,
        };
        let (problem, stderr_tail, delay) = match connected {
            Err(error) => (error.message, error.stderr, backoff.failed()),
            Ok(client) => {
                let client = Arc::new(client);
                let up_since = tokio::time::Instant::now();
                match list(&inner, &config, &client, timeout).await {
                    Err(error) if inner.known_tools(&id) == 0 => {
                        // Connected, but it offers nothing usable: treat it as a failure, so
                        // it is retried rather than sitting "ready" with no tools.
                        client.shutdown(&inner.processes).await;
                        (format!("it connected, but {error}"), client.stderr.text(), backoff.failed())
                    }
                    _ => {
                        inner.update(&id, |s| {
                            s.client.send_replace(Some(client.clone()));
                        });
                        let level = logging.level.lock().ok().and_then(|l| *l);
                        if let Some(level) = level.filter(|_| client.logs())
                            && let Err(error) = client.set_log_level(rmcp_level(level), timeout).await
                        {
                            tracing::debug!(server = %config.name, %error, "the MCP log level could not be set again");
                        }
                        let every = inner.options.ping_interval;
                        let mut pings = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                        loop {
                            tokio::select! {
                                _ = stop.cancelled() => {
                                    client.shutdown(&inner.processes).await;
                                    return;
                                }
                                _ = refresh.notified() => { let _ = list(&inner, &config, &client, timeout).await; }
                                _ = client.handler.list_changed.notified() => {
                                    let _ = list(&inner, &config, &client, timeout).await;
                                }
                                Ok(()) = roots.changed() => client.roots_changed().await,
                                _ = pings.tick(), if client.needs_pings => {
                                    tokio::select! {
                                        _ = stop.cancelled() => {
                                            client.shutdown(&inner.processes).await;
                                            return;
                                        }
                                        _ = client.ping(timeout) => {}
                                    }
                                }
                                _ = client.closed() => break,
                            }
                        }
                        inner.update(&id, |s| {
                            s.client.send_replace(None);
                        });
                        let failure = client.failure();
                        if failure.is_some() {
                            // We gave up on it; the other end may still be there.
                            client.shutdown(&inner.processes).await;
                        } else if let Some(pid) = client.pid {
                            inner.processes.forget(pid);
                        }
                        let delay = backoff.ended(up_since.elapsed());
                        let problem =
                            failure.unwrap_or_else(|| "the server stopped or closed the connection".to_owned());
                        (problem, client.stderr.text(), delay)
                    }
                }
            }
        };
        tracing::warn!(server = %config.name, error = %problem, retry_in = delay.as_secs(), "MCP server unavailable");
        inner.update(&id, |s| {
            s.status = McpStatus {
                state: McpState::Error,
                message: Some(format!("{problem}; trying again in {} s", delay.as_secs())),
                stderr_tail,
                ..s.status.clone()
            };
        });
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
            // The user asked for the server again (`mcp_server_refresh`): try now.
            _ = refresh.notified() => {}
        }
    }
}

/// Lists the server's tools and replaces the catalog; on failure the old one stays (and
/// the status says so) and the error is returned.
async fn list(inner: &Inner, config: &McpServerConfig, client: &Client, timeout: Duration) -> Result<(), String> {
    match client.list_tools(timeout).await {
        Ok(raw) => {
            let (tools, problems) = catalog::read_tools(&raw);
            inner.options.sink.save(&config.id, &tools).await;
            inner.update(&config.id, |s| {
                s.status = McpStatus {
                    state: McpState::Ready,
                    message: None,
                    stderr_tail: None,
                    tool_count: tools.len() as u32,
                    problems,
                    instructions: client.instructions(),
                };
                s.tools = tools;
            });
            Ok(())
        }
        Err(error) => {
            tracing::warn!(server = %config.name, %error, "MCP server's tools could not be listed");
            inner.update(&config.id, |s| {
                if !s.tools.is_empty() {
                    s.status = McpStatus {
                        state: McpState::Ready,
                        message: Some(format!("{error}; the last known tools are kept")),
                        stderr_tail: client.stderr.text(),
                        ..s.status.clone()
                    };
                }
            });
            Err(error)
        }
    }
}
