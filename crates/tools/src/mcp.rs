//! MCP servers as a tool source (the official Rust SDK, `rmcp`, underneath).
//!
//! - [`McpHub`]: every configured server, kept connected (one connection per server,
//!   shared by all topics), with a cached catalog that requests read without waiting.
//! - [`catalog`]: reading a server's tool list and naming its tools `<server>__<tool>`.
//! - [`processes`]: stdio servers as process groups, reaped after a crash.
//! - `client`: one connection: handshake, listing, calls with progress and cancellation.
//! - `tool`: [`crate::Tool`] for one server tool.

pub mod catalog;
mod client;
mod hub;
pub mod processes;
mod tool;

use std::time::Duration;

use protocol::mcp::McpTransport;

pub use catalog::McpToolSpec;
pub use hub::{CatalogSink, HubOptions, McpHub, McpToolEntry};

/// What the hub needs to reach one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerConfig {
    pub id: String,
    pub name: String,
    pub transport: McpTransport,
    /// How long one call may take.
    pub timeout: Duration,
    /// The server's read-only tools run without asking.
    pub trust_read_only: bool,
}
