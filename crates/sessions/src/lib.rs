//! Agent sessions: conversations with an external coding agent (the Claude Code CLI
//! first) that run as topics `agent-session:<id>` with the same stream contract as chat.
//!
//! - [`driver`]: the seam: [`Driver`] connects a session, a [`Connection`] takes
//!   prompts and answers and yields [`DriverEvent`]s.
//! - [`claude_code`]: the Claude Code driver (stream-json and its control protocol).
//! - [`acp`]: the driver for any agent speaking the Agent Client Protocol (each
//!   connection on a thread of its own: the protocol crate's futures are not `Send`).
//! - [`SessionHost`]: every session's `Slot` and the idle timer (`host.rs`); it starts
//!   turns.
//! - `slot`: one session's state (the warm connection, the resume token, steering and
//!   approval decisions), shared by the host and the running turn.
//! - `turn`: one turn as a reply for the stream manager (a `turn::TurnRunner`); it sees
//!   the host only through `TurnHost` (the driver, and "the turn let go"), so it never
//!   imports `host`.
//!
//! API boundary: the host knows nothing about storage; the engine gives each turn its
//! gate (policy, approvals, ledger) and a [`TokenStore`] for resume tokens.

pub mod acp;
pub mod claude_code;
pub mod driver;
mod host;
mod slot;
mod turn;

pub use self::turn::{AgentUsage, TokenStore};
pub use acp::{AcpAgentConfig, AcpDriver};
pub use claude_code::{ClaudeCode, ClaudeCodeConfig};
pub use driver::{
    Connection, ConnectionControl, Driver, DriverError, DriverEvent, PermissionAnswer, PermissionMode,
    PromptCapabilities, PromptFile, SessionSpec,
};
pub use host::{ModeSwitch, SessionHost, SetModeError};
pub use slot::Decision;

#[cfg(test)]
mod tests;
