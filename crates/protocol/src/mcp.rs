//! MCP servers as settings shows them: how to reach one, and how it is doing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A variable or header of a server as settings shows it: its name, and whether a value
/// is stored for it. Values are kept in the secret store (the keychain, or the private
/// file) and never leave the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpSecretName {
    pub name: String,
    /// False when the secret store has no value for it (lost, or unreadable).
    pub set: bool,
}

/// How to reach an MCP server, as settings shows it: variables and headers by name only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum McpTransport {
    /// A local program speaking MCP on its stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Environment variables set for it, by name.
        env: Vec<McpSecretName>,
        /// The folder it runs in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cwd: Option<String>,
    },
    /// A server speaking MCP's streamable HTTP transport.
    Http {
        url: String,
        /// Sent with every request (e.g. `Authorization`), by name.
        headers: Vec<McpSecretName>,
    },
}

/// How to reach an MCP server, as settings saves it. A variable or header whose value is
/// `null` keeps the value stored for that name; one left out is removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum McpTransportInput {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, Option<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cwd: Option<String>,
    },
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, Option<String>>,
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
    /// Not usable right now; `message` says why and when Colloquy tries again.
    Error,
}

/// A server's live status. `Ready` with a `message` means it is connected but its last
/// tool listing failed (the tools listed before are still offered); `Ready` with
/// `problems` means some of its tools were left out.
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
    /// What the server's `initialize` said about using it (`instructions`), as it said it
    /// when it last connected. The first 4 KiB go into the system prompt of turns that
    /// offer its tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub instructions: Option<String>,
}

/// An MCP server in settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    pub id: String,
    pub name: String,
    /// The prefix of its tools' names, chosen when it was added and kept when it is
    /// renamed.
    pub namespace: String,
    pub transport: McpTransport,
    pub enabled: bool,
    /// Tools the server marks read-only run without asking.
    pub trust_read_only: bool,
    /// The server may ask the reply's model for completions (MCP sampling) without asking
    /// the user each time.
    pub sampling_allowed: bool,
    /// How long one call may take, in seconds.
    pub timeout_secs: u32,
    pub status: McpStatus,
    /// The names its tools have in Colloquy (`<namespace>__<tool>`).
    pub tools: Vec<String>,
    pub created_at: String,
}

/// Add or edit an MCP server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerInput {
    pub name: String,
    pub transport: McpTransportInput,
    #[serde(default)]
    #[ts(optional)]
    pub enabled: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub trust_read_only: Option<bool>,
    /// Left out: as it was (false for a new server).
    #[serde(default)]
    #[ts(optional)]
    pub sampling_allowed: Option<bool>,
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

/// The severity of a server's log message (MCP's, from syslog), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpLogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// One message a server sent through MCP logging (`notifications/message`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpLogEntry {
    /// When it arrived (RFC 3339, UTC).
    pub at: String,
    pub level: McpLogLevel,
    /// The part of the server that logged it, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub logger: Option<String>,
    /// Its data (text as is, anything else as JSON), cut at 4 KiB.
    pub text: String,
}

/// The tail of a server's log: the last 200 messages since the app started, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerLog {
    /// Whether the connected server offers logging (`logging` capability): only then can
    /// the level be set. False while it is not connected.
    pub supported: bool,
    /// The least severe level asked for with `logging/setLevel`, if one was; the server's
    /// own default otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub level: Option<McpLogLevel>,
    pub entries: Vec<McpLogEntry>,
}

/// Asks a server to send log messages of `level` and above.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpLogLevelRequest {
    pub id: String,
    pub level: McpLogLevel,
}
