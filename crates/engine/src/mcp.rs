//! MCP servers in the engine: their settings in the store, the values of their variables
//! and headers in the secret store, the hub that keeps them connected, the catalog cache
//! it writes back, and the operations settings uses.
//!
//! Secrets: a server's environment variables (stdio) and headers (HTTP) are stored by
//! name in the database and by value in the secret store under
//! `mcp/<server id>/<env|header>/<name>`. Settings gets names with a "set" flag, never
//! values; an edit that sends a name with `null` keeps its value. Values an earlier
//! version kept in the database are moved out at start.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ::tools::asks::{AnswerError, OpenQuestions};
use ::tools::mcp::catalog::{slug, unique_namespace};
use ::tools::mcp::{CatalogSink, McpEndpoint, McpHub, McpServerConfig, McpToolSpec};
use async_trait::async_trait;
use protocol::ApiError;
use protocol::elicitation::{ElicitationAction, ElicitationRespond};
use protocol::mcp::{
    McpLogLevelRequest, McpSecretName, McpServer, McpServerInput, McpServerLog, McpState, McpStatus, McpTransport,
    McpTransportInput, UpdateMcpServer,
};
use protocol::mcp_content::{
    McpCompleteRequest, McpCompletion, McpPromptExpansion, McpPromptGetRequest, McpResourceRef, ResourceAttachment,
};
use protocol::sampling::{SamplingDecision, SamplingRespond};
use store::Store;
use store::mcp::{McpServerRow, McpToolRow, PlainValues, StoredTransport};
use store::secrets::SecretStore;

/// How long one call may take by default, and at most.
const DEFAULT_TIMEOUT_SECS: u32 = 60;
const MAX_TIMEOUT_SECS: u32 = 3600;

/// Saves each successful tool listing to the store.
pub(crate) struct StoreSink(pub Store);

#[async_trait]
impl CatalogSink for StoreSink {
    async fn save(&self, server_id: &str, tools: &[McpToolSpec]) {
        let rows: Vec<McpToolRow> = tools
            .iter()
            .map(|t| McpToolRow {
                name: t.name.clone(),
                title: t.title.clone(),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
                annotations: t.annotations,
            })
            .collect();
        if let Err(err) = self.0.save_mcp_tools(server_id, &rows).await {
            tracing::error!(error = %err, server = server_id, "could not cache the MCP server's tools");
        }
    }
}

/// What a server's secrets are in words, and where they are kept in the secret store.
fn secret_kind(transport: &StoredTransport) -> (&'static str, &'static str) {
    match transport {
        StoredTransport::Stdio { .. } => ("variable", "env"),
        StoredTransport::Http { .. } => ("header", "header"),
    }
}

fn secret_key(server_id: &str, transport: &StoredTransport, name: &str) -> String {
    format!("mcp/{server_id}/{}/{name}", secret_kind(transport).1)
}

/// The values of the server's variables or headers, or why they cannot all be had.
fn secret_values(row: &McpServerRow, secrets: &dyn SecretStore) -> Result<BTreeMap<String, String>, String> {
    let mut values = BTreeMap::new();
    let plain = row.transport.plain_values();
    let what = secret_kind(&row.transport).0;
    for name in row.transport.secret_names() {
        let stored = secrets.get(&secret_key(&row.id, &row.transport, &name));
        let value = match (stored, plain.get(&name)) {
            (Ok(Some(value)), _) => value,
            (_, Some(value)) => value.clone(),
            (Ok(None), None) => {
                return Err(format!(
                    "the value of the {what} {name} is missing from {}: edit the server and type it again",
                    secrets.describe()
                ));
            }
            (Err(err), None) => return Err(format!("the value of the {what} {name} could not be read: {err}")),
        };
        values.insert(name, value);
    }
    Ok(values)
}

/// What the hub needs for the server: its settings with the secret values filled in.
fn config(row: &McpServerRow, secrets: &dyn SecretStore) -> McpServerConfig {
    let (values, blocked) = match secret_values(row, secrets) {
        Ok(values) => (values, None),
        Err(why) => (BTreeMap::new(), Some(why)),
    };
    let endpoint = match &row.transport {
        StoredTransport::Stdio { command, args, cwd, .. } => {
            McpEndpoint::Stdio { command: command.clone(), args: args.clone(), env: values, cwd: cwd.clone() }
        }
        StoredTransport::Http { url, .. } => McpEndpoint::Http { url: url.clone(), headers: values },
    };
    McpServerConfig {
        id: row.id.clone(),
        name: row.name.clone(),
        namespace: row.namespace.clone().unwrap_or_else(|| slug(&row.name)),
        endpoint,
        timeout: Duration::from_secs(u64::from(row.timeout_secs)),
        trust_read_only: row.trust_read_only,
        sampling_allowed: row.sampling_allowed,
        blocked,
    }
}

/// The transport as settings shows it: names, each with whether a value is stored.
fn transport_view(row: &McpServerRow, secrets: &dyn SecretStore) -> McpTransport {
    let plain = row.transport.plain_values();
    let names: Vec<McpSecretName> = row
        .transport
        .secret_names()
        .into_iter()
        .map(|name| {
            let stored = matches!(secrets.get(&secret_key(&row.id, &row.transport, &name)), Ok(Some(_)));
            McpSecretName { set: stored || plain.contains_key(&name), name }
        })
        .collect();
    match &row.transport {
        StoredTransport::Stdio { command, args, cwd, .. } => {
            McpTransport::Stdio { command: command.clone(), args: args.clone(), env: names, cwd: cwd.clone() }
        }
        StoredTransport::Http { url, .. } => McpTransport::Http { url: url.clone(), headers: names },
    }
}

fn spec(row: McpToolRow) -> McpToolSpec {
    McpToolSpec {
        name: row.name,
        title: row.title,
        description: row.description,
        input_schema: row.input_schema,
        annotations: row.annotations,
    }
}

/// Moves values an earlier version stored in the database to the secret store. All or
/// nothing per server: on any failure the row keeps its plain values (nothing is lost).
async fn move_plain_values(store: &Store, secrets: &dyn SecretStore, row: &McpServerRow) -> Result<(), String> {
    for (name, value) in row.transport.plain_values() {
        secrets.set(&secret_key(&row.id, &row.transport, name), value).map_err(|e| e.to_string())?;
    }
    let moved = McpServerRow { transport: row.transport.without_plain_values(), ..row.clone() };
    store.save_mcp_server(&moved).await.map_err(|e| e.to_string())
}

/// The user's enabled MCP servers that can be started, with their values: what a session
/// of an ACP agent passes to the agent (which starts them itself).
pub(crate) async fn enabled_endpoints(
    store: &Store,
    secrets: &dyn SecretStore,
) -> Result<Vec<(String, ::tools::mcp::McpEndpoint)>, ApiError> {
    Ok(store
        .list_mcp_servers()
        .await?
        .iter()
        .filter(|row| row.enabled)
        .map(|row| config(row, secrets))
        .filter(|config| config.blocked.is_none())
        .map(|config| (config.name, config.endpoint))
        .collect())
}

/// Starts every stored server on `hub`, from its cached tools. Servers from before get
/// their namespace (in the order they were added: the prefixes their tools already had)
/// and their plain variable and header values moved to the secret store.
/// Offers every server the workspace folders of topics and assistants as its roots (MCP
/// `roots/list`). One connection per server serves every topic, so it is all of them, not
/// the asking topic's alone: a file server keeps to the union. Folders that are not
/// absolute, or do not exist, are left out.
pub(crate) async fn offer_roots(store: &Store, hub: &McpHub) -> Result<(), ApiError> {
    let folders = store
        .workspace_folders()
        .await?
        .into_iter()
        .map(std::path::PathBuf::from)
        .filter(|folder| folder.is_absolute() && folder.is_dir())
        .collect();
    hub.set_roots(folders);
    Ok(())
}

pub(crate) async fn load(store: &Store, secrets: &dyn SecretStore, hub: &McpHub) -> Result<(), ApiError> {
    let mut moved = false;
    for mut row in store.list_mcp_servers().await? {
        if row.namespace.is_none() {
            let name = row.name.clone();
            let namespace = store.give_mcp_namespace(&row.id, |taken| unique_namespace(&name, taken)).await?;
            row.namespace = Some(namespace);
        }
        if !row.transport.plain_values().is_empty() {
            match move_plain_values(store, secrets, &row).await {
                Ok(()) => {
                    tracing::info!(server = %row.name, "moved the MCP server's variable or header values to the secret store");
                    row.transport = row.transport.without_plain_values();
                    moved = true;
                }
                Err(err) => tracing::warn!(
                    server = %row.name,
                    error = %err,
                    "could not move the MCP server's values to the secret store; they stay in the database for now"
                ),
            }
        }
        let cached = store.mcp_tools(&row.id).await?.into_iter().map(spec).collect();
        hub.upsert(config(&row, secrets), row.enabled, cached);
    }
    if moved && let Err(err) = store.compact().await {
        tracing::warn!(error = %err, "could not compact the database after moving MCP secrets out of it");
    }
    Ok(())
}

/// The MCP servers: their settings, their secrets, and the hub that keeps them connected.
pub(crate) struct Mcp {
    store: Store,
    secrets: Arc<dyn SecretStore>,
    hub: McpHub,
    /// Servers' questions (elicitations) waiting for the user, opened by running replies.
    questions: Arc<OpenQuestions>,
}

impl Mcp {
    pub(crate) fn new(store: Store, secrets: Arc<dyn SecretStore>, hub: McpHub, questions: Arc<OpenQuestions>) -> Self {
        Self { store, secrets, hub, questions }
    }

    /// Allows or denies a server's sampling request: allowed, the reply's model answers it.
    /// `always` saves that the server may sample without asking from now on.
    pub(crate) async fn respond_sampling(&self, request: SamplingRespond) -> Result<(), ApiError> {
        let id = request.sampling_id.trim();
        if id.is_empty() {
            return Err(ApiError::bad_request("samplingId", "must not be empty"));
        }
        let always = request.always.unwrap_or(false);
        if always && request.decision != SamplingDecision::Allow {
            return Err(ApiError::bad_request("always", "only an `allow` answer can be for good"));
        }
        let allow = request.decision == SamplingDecision::Allow;
        let server_id = self.questions.decide_sampling(id, allow).map_err(|e| ApiError::conflict(e.to_string()))?;
        tracing::info!(sampling = %id, allow, always, "a server's sampling request was answered");
        if always {
            self.store.allow_mcp_sampling(&server_id).await?;
            self.hub.allow_sampling(&server_id);
        }
        Ok(())
    }

    /// Answers a server's question: the running call that asked goes on with it. Content
    /// that does not fit the form is refused with what is wrong, and the question stays open.
    pub(crate) fn respond_elicitation(&self, request: ElicitationRespond) -> Result<(), ApiError> {
        let id = request.elicitation_id.trim();
        if id.is_empty() {
            return Err(ApiError::bad_request("elicitationId", "must not be empty"));
        }
        if request.action != ElicitationAction::Accept && request.content.is_some() {
            return Err(ApiError::bad_request("content", "only an `accept` answer carries content"));
        }
        match self.questions.answer(id, request.action, request.content) {
            Ok(()) => {
                tracing::info!(elicitation = %id, action = ?request.action, "a server's question was answered");
                Ok(())
            }
            Err(AnswerError::Invalid(why)) => Err(ApiError::bad_request("content", why)),
            Err(AnswerError::NotOpen) => Err(ApiError::conflict(AnswerError::NotOpen.to_string())),
        }
    }

    /// The hub itself (roots are offered through it; tests wait on its change signal).
    pub(crate) fn hub(&self) -> &McpHub {
        &self.hub
    }

    /// Disconnects every server (at shutdown).
    pub(crate) async fn shutdown(&self) {
        self.hub.shutdown().await;
    }

    pub(crate) async fn list_mcp_servers(&self) -> Result<Vec<McpServer>, ApiError> {
        let rows = self.store.list_mcp_servers().await?;
        let tools = self.hub.tools();
        Ok(rows
            .into_iter()
            .map(|row| {
                let status = self.hub.status(&row.id).unwrap_or(McpStatus {
                    state: if row.enabled { McpState::Connecting } else { McpState::Disabled },
                    message: None,
                    stderr_tail: None,
                    tool_count: 0,
                    problems: Vec::new(),
                    instructions: None,
                });
                let names =
                    tools.iter().filter(|t| t.server_id == row.id).map(|t| t.tool.definition().name.clone()).collect();
                McpServer {
                    transport: transport_view(&row, self.secrets.as_ref()),
                    namespace: row.namespace.clone().unwrap_or_else(|| slug(&row.name)),
                    id: row.id,
                    name: row.name,
                    enabled: row.enabled,
                    trust_read_only: row.trust_read_only,
                    sampling_allowed: row.sampling_allowed,
                    timeout_secs: row.timeout_secs,
                    status,
                    tools: names,
                    created_at: row.created_at,
                }
            })
            .collect())
    }

    pub(crate) async fn save_mcp_server(
        &self,
        id: Option<String>,
        input: McpServerInput,
    ) -> Result<McpServer, ApiError> {
        let name = input.name.trim();
        if name.is_empty() {
            return Err(ApiError::bad_request("name", "must not be empty"));
        }
        crate::limits::at_most("name", name, crate::limits::NAME)?;
        let (transport, values) = checked_transport(input.transport)?;
        let timeout_secs = input.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&timeout_secs) {
            return Err(ApiError::bad_request(
                "timeoutSecs",
                format!("must be between 1 and {MAX_TIMEOUT_SECS} seconds"),
            ));
        }
        let existing = match &id {
            Some(id) => Some(self.store.get_mcp_server(id).await?),
            None => None,
        };
        let id = id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let row = McpServerRow {
            id: id.clone(),
            name: name.to_owned(),
            namespace: existing.as_ref().and_then(|e| e.namespace.clone()),
            transport,
            enabled: input.enabled.or(existing.as_ref().map(|e| e.enabled)).unwrap_or(true),
            trust_read_only: input.trust_read_only.or(existing.as_ref().map(|e| e.trust_read_only)).unwrap_or(false),
            sampling_allowed: input.sampling_allowed.or(existing.as_ref().map(|e| e.sampling_allowed)).unwrap_or(false),
            timeout_secs,
            created_at: existing.as_ref().map_or_else(store::now, |e| e.created_at.clone()),
        };
        self.store_values(&row, &values, existing.as_ref())?;
        match &existing {
            Some(_) => self.store.save_mcp_server(&row).await?,
            None => {
                let created = self.store.create_mcp_server(&row, |taken| unique_namespace(name, taken)).await;
                if let Err(err) = created {
                    self.forget_values(&row, None);
                    return Err(err.into());
                }
            }
        }
        if let Some(old) = &existing {
            self.forget_values(old, Some(&row));
        }
        let saved = self.store.get_mcp_server(&id).await?;
        let cached = self.store.mcp_tools(&id).await?.into_iter().map(spec).collect();
        self.hub.upsert(config(&saved, self.secrets.as_ref()), saved.enabled, cached);
        let servers = self.list_mcp_servers().await?;
        servers.into_iter().find(|s| s.id == id).ok_or_else(|| ApiError::internal("the saved server vanished"))
    }

    /// Writes the values given for the server's variables or headers to the secret store.
    /// A name given without a value keeps the one stored for it, which must exist for a
    /// server that is switched on; one being switched off may lack it (so the switch works
    /// on a server that shows exactly that error), and switching it on asks for it again.
    fn store_values(
        &self,
        row: &McpServerRow,
        values: &BTreeMap<String, Option<String>>,
        existing: Option<&McpServerRow>,
    ) -> Result<(), ApiError> {
        let secrets = self.secrets.as_ref();
        let (what, _) = secret_kind(&row.transport);
        let field = match row.transport {
            StoredTransport::Stdio { .. } => "transport.env",
            StoredTransport::Http { .. } => "transport.headers",
        };
        // The server as it was, when its variables or headers are of the same kind.
        let before = existing.filter(|old| secret_kind(&old.transport) == secret_kind(&row.transport));
        for (name, value) in values {
            let value = match value {
                Some(value) => value,
                None => {
                    let Some(old) = before.filter(|old| old.transport.secret_names().contains(name)) else {
                        return Err(ApiError::bad_request(field, format!("`{name}` has no value yet: type one")));
                    };
                    match secrets.get(&secret_key(&old.id, &old.transport, name)) {
                        Ok(Some(_)) => continue,
                        // An earlier version left it in the database: it moves now.
                        _ if old.transport.plain_values().contains_key(name) => &old.transport.plain_values()[name],
                        Ok(None) if !row.enabled => continue,
                        Ok(None) => {
                            return Err(ApiError::bad_request(
                                field,
                                format!("the value of `{name}` is missing from {}: type it again", secrets.describe()),
                            ));
                        }
                        Err(err) => {
                            return Err(ApiError::internal(format!(
                                "could not read the value of the {what} {name}: {err}"
                            )));
                        }
                    }
                }
            };
            secrets
                .set(&secret_key(&row.id, &row.transport, name), value)
                .map_err(|e| ApiError::internal(format!("could not store the value of the {what} {name}: {e}")))?;
        }
        Ok(())
    }

    /// Removes from the secret store the values of `old` that `new` (the same server,
    /// saved) no longer has. Failures are logged: a leftover value is never read again.
    fn forget_values(&self, old: &McpServerRow, new: Option<&McpServerRow>) {
        let still: HashSet<String> = new
            .map(|new| {
                new.transport.secret_names().into_iter().map(|n| secret_key(&new.id, &new.transport, &n)).collect()
            })
            .unwrap_or_default();
        for name in old.transport.secret_names() {
            let key = secret_key(&old.id, &old.transport, &name);
            if !still.contains(&key)
                && let Err(err) = self.secrets.delete(&key)
            {
                tracing::warn!(server = %old.name, error = %err, "could not remove a value from the secret store");
            }
        }
    }

    pub(crate) async fn update_mcp_server(&self, request: UpdateMcpServer) -> Result<McpServer, ApiError> {
        self.save_mcp_server(Some(request.id), request.server).await
    }

    pub(crate) async fn delete_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        let row = self.store.get_mcp_server(id).await?;
        self.store.delete_mcp_server(id).await?;
        self.hub.remove(id);
        self.forget_values(&row, None);
        Ok(())
    }

    pub(crate) async fn mcp_log(&self, id: &str) -> Result<McpServerLog, ApiError> {
        // An unknown id is `not_found`, as for the other operations on a server.
        self.store.get_mcp_server(id).await?;
        Ok(self.hub.log(id).unwrap_or(McpServerLog { supported: false, level: None, entries: Vec::new() }))
    }

    pub(crate) async fn set_mcp_log_level(&self, request: McpLogLevelRequest) -> Result<McpServerLog, ApiError> {
        self.store.get_mcp_server(&request.id).await?;
        self.hub.set_log_level(&request.id, request.level).await.map_err(ApiError::conflict)?;
        self.mcp_log(&request.id).await
    }

    pub(crate) async fn read_resource(&self, request: McpResourceRef) -> Result<ResourceAttachment, ApiError> {
        self.store.get_mcp_server(&request.server_id).await?;
        self.hub.read_resource(&request.server_id, &request.uri).await.map_err(ApiError::conflict)
    }

    pub(crate) async fn get_prompt(&self, request: McpPromptGetRequest) -> Result<McpPromptExpansion, ApiError> {
        self.store.get_mcp_server(&request.server_id).await?;
        if request.name.trim().is_empty() {
            return Err(ApiError::bad_request("name", "the prompt's name is empty"));
        }
        self.hub.get_prompt(&request.server_id, &request.name, &request.arguments).await.map_err(ApiError::conflict)
    }

    pub(crate) async fn complete_prompt(&self, request: McpCompleteRequest) -> Result<McpCompletion, ApiError> {
        self.store.get_mcp_server(&request.server_id).await?;
        if request.value.len() > 4096 {
            return Err(ApiError::bad_request("value", "the value is longer than 4096 bytes"));
        }
        self.hub
            .complete_prompt_argument(
                &request.server_id,
                &request.prompt,
                &request.argument,
                &request.value,
                &request.context,
            )
            .await
            .map_err(ApiError::conflict)
    }

    pub(crate) async fn refresh_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        let server = self.store.get_mcp_server(id).await?;
        if !self.hub.refresh(id) {
            return Err(ApiError::conflict(format!("{} is switched off; switch it on to list its tools", server.name)));
        }
        Ok(())
    }
}

/// The transport with its fields checked and trimmed, as stored (names only), and the
/// values given; errors name the field.
fn checked_transport(
    transport: McpTransportInput,
) -> Result<(StoredTransport, BTreeMap<String, Option<String>>), ApiError> {
    match transport {
        McpTransportInput::Stdio { command, args, env, cwd } => {
            let command = command.trim().to_owned();
            if command.is_empty() {
                return Err(ApiError::bad_request("transport.command", "must name the program to run"));
            }
            if let Some(key) = env.keys().find(|k| k.trim().is_empty() || k.contains('=') || k.contains('\0')) {
                return Err(ApiError::bad_request("transport.env", format!("`{key}` is not a valid variable name")));
            }
            if let Some((key, _)) = env.iter().find(|(_, v)| v.as_deref().is_some_and(|v| v.contains('\0'))) {
                return Err(ApiError::bad_request(
                    "transport.env",
                    format!("the value of `{key}` contains a NUL character"),
                ));
            }
            let cwd = cwd.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
            if let Some(dir) = &cwd
                && !std::path::Path::new(dir).is_dir()
            {
                return Err(ApiError::bad_request("transport.cwd", format!("{dir} is not a folder")));
            }
            let stored = StoredTransport::Stdio {
                command,
                args,
                env_names: env.keys().cloned().collect(),
                cwd,
                plain_env: PlainValues::default(),
            };
            Ok((stored, env))
        }
        McpTransportInput::Http { url, headers } => {
            let parsed = url::Url::parse(url.trim())
                .map_err(|e| ApiError::bad_request("transport.url", format!("not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ApiError::bad_request("transport.url", "must start with http:// or https://"));
            }
            let mut seen = HashSet::new();
            for (name, value) in &headers {
                if reqwest::header::HeaderName::try_from(name.as_str()).is_err() {
                    return Err(ApiError::bad_request(
                        "transport.headers",
                        format!("`{name}` is not a valid header name"),
                    ));
                }
                if !seen.insert(name.to_ascii_lowercase()) {
                    return Err(ApiError::bad_request(
                        "transport.headers",
                        format!("`{name}` is given twice (header names ignore case)"),
                    ));
                }
                if let Some(value) = value
                    && reqwest::header::HeaderValue::try_from(value.as_str()).is_err()
                {
                    return Err(ApiError::bad_request(
                        "transport.headers",
                        format!("the value of `{name}` is not valid"),
                    ));
                }
            }
            let stored = StoredTransport::Http {
                url: parsed.to_string(),
                header_names: headers.keys().cloned().collect(),
                plain_headers: PlainValues::default(),
            };
            Ok((stored, headers))
        }
    }
}

/// The hub's options for an engine over `store`.
pub(crate) fn hub_options(
    data_dir: &std::path::Path,
    store: &Store,
    http: ::tools::mcp::McpHttp,
) -> ::tools::mcp::HubOptions {
    ::tools::mcp::HubOptions {
        processes_file: data_dir.join("mcp-processes.json"),
        connect_timeout: Duration::from_secs(30),
        ping_interval: Duration::from_secs(30),
        http,
        sink: Arc::new(StoreSink(store.clone())),
    }
}
