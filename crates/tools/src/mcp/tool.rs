//! [`McpTool`]: one tool of an MCP server, callable like any other.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use protocol::tool::ToolOutput;
use serde_json::Value;

use super::catalog::McpToolSpec;
use super::hub::Inner;
use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError};

/// How long a call waits for its server to (re)connect before it fails.
const CONNECT_WAIT: Duration = Duration::from_secs(15);

pub(crate) struct McpTool {
    hub: Arc<Inner>,
    server_id: String,
    /// The tool's name on its server.
    remote_name: String,
    definition: ToolDefinition,
    timeout: Duration,
}

impl McpTool {
    pub(crate) fn new(
        hub: Arc<Inner>,
        server_id: String,
        server_name: String,
        name: String,
        spec: McpToolSpec,
        timeout: Duration,
    ) -> Self {
        let description = if spec.description.is_empty() {
            format!("A tool of the {server_name} MCP server.")
        } else {
            spec.description.clone()
        };
        let definition = ToolDefinition {
            name,
            title: spec.title.clone(),
            description,
            input_schema: spec.input_schema.clone(),
            annotations: spec.annotations,
        };
        Self { hub, server_id, remote_name: spec.name, definition, timeout }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let client = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            client = self.hub.client(&self.server_id, CONNECT_WAIT) => client.map_err(ToolError::Failed)?,
        };
        let asks = ctx.asks.clone();
        client.call(&self.remote_name, input, ctx.progress.clone(), asks, &ctx.cancel, self.timeout).await
    }

    /// The call's own timeout (which tells the server) comes first; this is the backstop.
    fn timeout(&self) -> Duration {
        self.timeout + CONNECT_WAIT + Duration::from_secs(5)
    }
}
