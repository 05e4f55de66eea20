//! Agent sessions: conversations with an external coding agent (the Claude Code CLI
//! first) that run as topics `agent-session:<id>` with the same stream contract as chat.
//!
//! - [`driver`]: the seam: [`Driver`] connects a session, a [`Connection`] takes
//!   prompts and answers and yields [`DriverEvent`]s.
//! - [`claude_code`]: the Claude Code driver (stream-json and its control protocol).
//! - [`SessionHost`]: per session, the warm connection, the resume token, steering and
//!   approval decisions, and the idle timer (`host.rs`).
//! - `turn`: one turn as a reply for the stream manager (a `turn::TurnRunner`).
//!
//! API boundary: the host knows nothing about storage; the engine gives each turn its
//! gate (policy, approvals, ledger) and a [`TokenStore`] for resume tokens.

pub mod claude_code;
pub mod driver;
mod host;
mod turn;

pub use claude_code::{ClaudeCode, ClaudeCodeConfig};
pub use driver::{Connection, Driver, DriverError, DriverEvent, PermissionAnswer, PermissionMode, SessionSpec};
pub use host::{Decision, SessionHost, TokenStore};

#[cfg(test)]
mod tests;
