//! MCP servers as a tool source (the official Rust SDK, `rmcp`, underneath).
//!
//! - [`McpHub`]: every configured server, kept connected (one connection per server,
//!   shared by all topics), with a cached catalog that requests read without waiting.
//! - [`catalog`]: reading a server's tool list and naming its tools `<namespace>__<tool>`.
//! - [`processes`]: stdio servers as process groups, reaped after a crash.
//! - [`environment`]: what a stdio server sees of the app's environment (a safe set).
//! - `backoff`: how long to wait before reconnecting a server that failed or died.
//! - `client`: one connection: handshake, listing, calls with progress and cancellation.
//! - `http`: the HTTP client under rmcp, which also reads "no valid session" as expired.
//! - [`redirects`]: [`McpHttp`], which never follows a redirect to another origin (the
//!   server's headers would go along).
//! - `tool`: [`crate::Tool`] for one server tool.
//! - `logs`: what each server logs (`notifications/message`), a bounded ring per server.
//! - `words`: the SDK's errors in words, without the Rust type names it prints.

mod backoff;
pub mod catalog;
mod client;
pub mod environment;
mod http;
mod hub;
mod logs;
pub mod offers;
pub mod processes;
pub mod redirects;
mod tool;
mod words;

use std::collections::BTreeMap;
use std::time::Duration;

pub use catalog::McpToolSpec;
pub use hub::{CatalogSink, HubOptions, McpHub, McpInstructions, McpToolEntry};
pub use logs::{LOG_ENTRIES, LOG_ENTRY_BYTES};
pub use redirects::McpHttp;

/// What the hub needs to reach one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerConfig {
    pub id: String,
    pub name: String,
    /// The prefix of its tools' names, chosen once when the server was added (unique
    /// among servers, without `__`): renaming a server or removing another never renames
    /// its tools, so settings kept per tool name stay with it.
    pub namespace: String,
    pub endpoint: McpEndpoint,
    /// How long one call may take.
    pub timeout: Duration,
    /// The server's read-only tools run without asking.
    pub trust_read_only: bool,
    /// It may sample the reply's model without asking the user each time
    /// ([`McpHub::allow_sampling`] changes it on a live connection).
    pub sampling_allowed: bool,
    /// Why the server cannot be started with these settings (a stored value could not be
    /// read, say): it shows as an error with this message and is not started.
    pub blocked: Option<String>,
}

/// How to reach a server, with its variables' and headers' values filled in (they come
/// from the secret store). `Debug` leaves the values out.
#[derive(Clone, PartialEq, Eq)]
pub enum McpEndpoint {
    /// A local program speaking MCP on its stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<String> },
    /// A server speaking MCP's streamable HTTP transport.
    Http { url: String, headers: BTreeMap<String, String> },
}

impl std::fmt::Debug for McpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio { command, args, env, cwd } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Self::Http { url, headers } => {
                f.debug_struct("Http").field("url", url).field("headers", &headers.keys().collect::<Vec<_>>()).finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_names_variables_and_headers_but_never_their_values() {
        let stdio = McpEndpoint::Stdio {
            command: "server".into(),
            args: vec![],
            env: BTreeMap::from([("TOKEN".to_owned(), "hunter2".to_owned())]),
            cwd: None,
        };
        let http = McpEndpoint::Http {
            url: "https://x/mcp".into(),
            headers: BTreeMap::from([("Authorization".to_owned(), "Bearer hunter2".to_owned())]),
        };
        for shown in [format!("{stdio:?}"), format!("{http:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        assert!(format!("{stdio:?}").contains("TOKEN"));
    }
}
