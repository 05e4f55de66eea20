//! A scripted mock LLM server that speaks real wire formats over real HTTP, with fault
//! injection. Tests start one per case; the app ships it as the demo provider.
//!
//! - [`MockServer`] / [`MockConfig`]: start, stop, queue scripts, read recorded requests
//!   (`server.rs`).
//! - `control.rs`: the `/_testkit/*` control routes, served only with a control token.
//! - [`Script`] / [`Fault`]: what to answer to one request (`script.rs`).
//! - `reply.rs`: what the formats share — the reply a script resolves to, the frames of a
//!   streamed body, and where a fault goes among them.
//! - One file per wire format, each writing the same script in its own shape:
//!   `openai_chat.rs` (`/v1/chat/completions`, `/v1/models`), `openai_responses.rs`
//!   (`/v1/responses`), `anthropic.rs` (`/v1/messages`), `gemini.rs`
//!   (`/v1beta/models/{model}:streamGenerateContent?alt=sse`, `/v1beta/models`).
//! - [`default_reply`]: the deterministic markdown answer used when no script is queued.
//! - With the `test-support` feature, [`ScriptedModel`]: the one in-process fake
//!   language model for tests and benches, no HTTP involved ([`scripted_model`]).

mod anthropic;
mod control;
mod default_reply;
mod gemini;
mod openai_chat;
mod openai_responses;
mod reply;
mod script;
#[cfg(feature = "test-support")]
pub mod scripted_model;
mod server;

pub use default_reply::{default_reply, default_reply_text};
pub use script::{Fault, Finish, Framing, Script, ScriptToolCall, ScriptUsage};
#[cfg(feature = "test-support")]
pub use scripted_model::ScriptedModel;
pub use server::{DEFAULT_RECORDED_REQUESTS, MockConfig, MockServer, RecordedRequest};
