//! Tools the agent can call.
//!
//! - [`Tool`]: a name, a description, a JSON Schema for its input, annotations, and
//!   `execute` (`tool.rs`); [`ToolContext`] is what a call may use (workspace, HTTP,
//!   cancellation, progress).
//! - [`asks`]: questions a server asks the user during a call (MCP elicitation).
//! - [`ToolSet`]: the tools one request may use, by name (`set.rs`).
//! - [`schema`]: checking a schema and a call's input against it.
//! - [`policy`]: rules on tool names and arguments → allow / deny / ask.
//! - [`builtin`]: file tools inside a workspace folder, `fetch_url`, `current_time`.
//! - [`mcp`]: tools of MCP servers (stdio and streamable HTTP), with a cached catalog.
//! - [`capped_lines`]: a child process's output line by line, each line capped.
//!
//! Architecture invariant: nothing here knows about topics' storage or streams; a tool
//! gets its input and a context, and returns a [`protocol::tool::ToolOutput`] or a
//! [`ToolError`]. File tools never touch a path outside the workspace they were given.

pub mod asks;
pub mod builtin;
pub mod capped_lines;
pub mod mcp;
pub mod policy;
pub mod schema;
mod set;
mod tool;

pub use set::ToolSet;
pub use tool::{Progress, ProgressSink, Tool, ToolContext, ToolDefinition, ToolError};
