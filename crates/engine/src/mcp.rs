//! MCP servers in the engine: their settings in the store, the hub that keeps them
//! connected, the catalog cache it writes back, and the operations settings uses.

use std::sync::Arc;
use std::time::Duration;

use ::tools::mcp::{CatalogSink, McpHub, McpServerConfig, McpToolSpec};
use async_trait::async_trait;
use protocol::ApiError;
use protocol::mcp::{McpServer, McpServerInput, McpState, McpStatus, McpTransport, UpdateMcpServer};
use protocol::tool::{PolicyDecision, ToolSource};
use store::Store;
use store::mcp::{McpServerRow, McpToolRow};

use crate::tools::{CatalogTool, default_decision};
use crate::{Engine, store_error};

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

pub(crate) fn config(row: &McpServerRow) -> McpServerConfig {
    McpServerConfig {
        id: row.id.clone(),
        name: row.name.clone(),
        transport: row.transport.clone(),
        timeout: Duration::from_secs(u64::from(row.timeout_secs)),
        trust_read_only: row.trust_read_only,
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

/// Starts every stored server on `hub`, from its cached tools.
pub(crate) async fn load(store: &Store, hub: &McpHub) -> Result<(), ApiError> {
    for row in store.list_mcp_servers().await.map_err(store_error)? {
        let cached = store.mcp_tools(&row.id).await.map_err(store_error)?.into_iter().map(spec).collect();
        hub.upsert(config(&row), row.enabled, cached);
    }
    Ok(())
}

impl Engine {
    /// The tools of enabled MCP servers, from the cache. An MCP tool asks unless the
    /// server marks it read-only and the user trusts the server's read-only tools.
    pub(crate) fn mcp_catalog(&self) -> Vec<CatalogTool> {
        self.inner
            .mcp
            .tools()
            .into_iter()
            .map(|entry| {
                let annotations = entry.tool.definition().annotations;
                let default = if entry.trust_read_only { default_decision(&annotations) } else { PolicyDecision::Ask };
                CatalogTool {
                    tool: entry.tool,
                    source: ToolSource::Mcp { server_id: entry.server_id, server_name: entry.server_name },
                    default,
                }
            })
            .collect()
    }

    pub(crate) async fn list_mcp_servers(&self) -> Result<Vec<McpServer>, ApiError> {
        let rows = self.inner.store.list_mcp_servers().await.map_err(store_error)?;
        let tools = self.inner.mcp.tools();
        Ok(rows
            .into_iter()
            .map(|row| {
                let status = self.inner.mcp.status(&row.id).unwrap_or(McpStatus {
                    state: if row.enabled { McpState::Connecting } else { McpState::Disabled },
                    message: None,
                    stderr_tail: None,
                    tool_count: 0,
                    problems: Vec::new(),
                });
                let names =
                    tools.iter().filter(|t| t.server_id == row.id).map(|t| t.tool.definition().name.clone()).collect();
                McpServer {
                    id: row.id,
                    name: row.name,
                    transport: row.transport,
                    enabled: row.enabled,
                    trust_read_only: row.trust_read_only,
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
        let transport = checked_transport(input.transport)?;
        let timeout_secs = input.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&timeout_secs) {
            return Err(ApiError::bad_request(
                "timeoutSecs",
                format!("must be between 1 and {MAX_TIMEOUT_SECS} seconds"),
            ));
        }
        let (id, created_at, enabled, trust) = match id {
            Some(id) => {
                let existing = self.inner.store.get_mcp_server(&id).await.map_err(store_error)?;
                (id, existing.created_at, existing.enabled, existing.trust_read_only)
            }
            None => (uuid::Uuid::now_v7().to_string(), store::now(), true, false),
        };
        let row = McpServerRow {
            id: id.clone(),
            name: name.to_owned(),
            transport,
            enabled: input.enabled.unwrap_or(enabled),
            trust_read_only: input.trust_read_only.unwrap_or(trust),
            timeout_secs,
            created_at,
        };
        self.inner.store.save_mcp_server(&row).await.map_err(store_error)?;
        let cached = self.inner.store.mcp_tools(&id).await.map_err(store_error)?.into_iter().map(spec).collect();
        self.inner.mcp.upsert(config(&row), row.enabled, cached);
        let servers = self.list_mcp_servers().await?;
        servers.into_iter().find(|s| s.id == id).ok_or_else(|| ApiError::internal("the saved server vanished"))
    }

    pub(crate) async fn update_mcp_server(&self, request: UpdateMcpServer) -> Result<McpServer, ApiError> {
        self.save_mcp_server(Some(request.id), request.server).await
    }

    pub(crate) async fn delete_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        self.inner.store.delete_mcp_server(id).await.map_err(store_error)?;
        self.inner.mcp.remove(id);
        Ok(())
    }

    pub(crate) async fn refresh_mcp_server(&self, id: &str) -> Result<(), ApiError> {
        let server = self.inner.store.get_mcp_server(id).await.map_err(store_error)?;
        if !self.inner.mcp.refresh(id) {
            return Err(ApiError::conflict(format!("{} is switched off; switch it on to list its tools", server.name)));
        }
        Ok(())
    }
}

/// The transport with its fields checked and trimmed; errors name the field.
fn checked_transport(transport: McpTransport) -> Result<McpTransport, ApiError> {
    match transport {
        McpTransport::Stdio { command, args, env, cwd } => {
            let command = command.trim().to_owned();
            if command.is_empty() {
                return Err(ApiError::bad_request("transport.command", "must name the program to run"));
            }
            if let Some(key) = env.keys().find(|k| k.trim().is_empty() || k.contains('=')) {
                return Err(ApiError::bad_request("transport.env", format!("`{key}` is not a valid variable name")));
            }
            let cwd = cwd.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
            if let Some(dir) = &cwd
                && !std::path::Path::new(dir).is_dir()
            {
                return Err(ApiError::bad_request("transport.cwd", format!("{dir} is not a folder")));
            }
            Ok(McpTransport::Stdio { command, args, env, cwd })
        }
        McpTransport::Http { url, headers } => {
            let parsed = url::Url::parse(url.trim())
                .map_err(|e| ApiError::bad_request("transport.url", format!("not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ApiError::bad_request("transport.url", "must start with http:// or https://"));
            }
            for (name, value) in &headers {
                if reqwest::header::HeaderName::try_from(name.as_str()).is_err() {
                    return Err(ApiError::bad_request(
                        "transport.headers",
                        format!("`{name}` is not a valid header name"),
                    ));
                }
                if reqwest::header::HeaderValue::try_from(value.as_str()).is_err() {
                    return Err(ApiError::bad_request(
                        "transport.headers",
                        format!("the value of `{name}` is not valid"),
                    ));
                }
            }
            Ok(McpTransport::Http { url: parsed.to_string(), headers })
        }
    }
}

/// The hub's options for an engine over `store`.
pub(crate) fn hub_options(
    data_dir: &std::path::Path,
    store: &Store,
    http: reqwest::Client,
) -> ::tools::mcp::HubOptions {
    ::tools::mcp::HubOptions {
        processes_file: data_dir.join("mcp-processes.json"),
        connect_timeout: Duration::from_secs(30),
        http,
        sink: Arc::new(StoreSink(store.clone())),
    }
}
