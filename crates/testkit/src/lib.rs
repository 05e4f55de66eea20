//! A scripted mock LLM server that speaks real wire formats over real HTTP, with fault
//! injection. Tests start one per case; the app ships it as the demo provider.
//!
//! - [`MockServer`] / [`MockConfig`]: start, stop, queue scripts, read recorded requests
//!   (`server.rs`, which also holds the `/_testkit/*` control routes).
//! - [`Script`] / [`Fault`]: what to answer to one request (`script.rs`).
//! - `openai_chat.rs`: the OpenAI Chat Completions wire side (`/v1/chat/completions`,
//!   `/v1/models`).
//! - [`default_reply`]: the deterministic markdown answer used when no script is queued.

mod default_reply;
mod openai_chat;
mod script;
mod server;

pub use default_reply::{default_reply, default_reply_text};
pub use script::{Fault, Script, ScriptUsage};
pub use server::{MockConfig, MockServer, RecordedRequest};
