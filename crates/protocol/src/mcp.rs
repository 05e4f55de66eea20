//! MCP servers as settings shows them: how to reach one, and how it is doing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How to reach an MCP server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum McpTransport {
    /// A local program speaking MCP on its stdin/stdout.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// The folder it runs in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cwd: Option<String>,
    },
    /// A server speaking MCP's streamable HTTP transport.
    Http {
        url: String,
        /// Sent with every request (e.g. `Authorization`).
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

/// Where a server's connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpState {
    /// Switched off by the user.
    Disabled,
    Connecting,
    Ready,
    /// Not usable right now; `message` says why. Colloquy keeps retrying.
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpStatus {
    pub state: McpState,
    /// What went wrong, in the server's own words when it gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// The last lines the server wrote to stderr (stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stderr_tail: Option<String>,
    /// Tools it offers (from the cached list while it is not connected).
    pub tool_count: u32,
    /// Tools left out, and why (an unusable input schema, a clashing name).
    #[serde(default)]
    pub problems: Vec<String>,
}

/// An MCP server in settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    pub id: String,
    pub name: String,
    pub transport: McpTransport,
    pub enabled: bool,
    /// Tools the server marks read-only run without asking.
    pub trust_read_only: bool,
    /// How long one call may take, in seconds.
    pub timeout_secs: u32,
    pub status: McpStatus,
    /// The names its tools have in Colloquy (`<server>__<tool>`).
    pub tools: Vec<String>,
    pub created_at: String,
}

/// Add or edit an MCP server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerInput {
    pub name: String,
    pub transport: McpTransport,
    #[serde(default)]
    #[ts(optional)]
    pub enabled: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub trust_read_only: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub timeout_secs: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateMcpServer {
    pub id: String,
    pub server: McpServerInput,
}
