//! Model providers behind one provider-neutral interface.
//!
//! - [`LanguageModel`] and its vocabulary ([`CompletionRequest`], [`CompletionEvent`], …):
//!   what the rest of Colloquy codes against, in `language_model.rs`.
//! - [`error`]: [`ProviderError`], every failure classified into something the user can act on.
//! - [`ProviderConfig`]: how to reach a provider (`config.rs`); [`model_for`],
//!   [`list_models_for`], [`StreamDecoder::new`]: build a model, list models or decode an
//!   answer for any wire format ([`ApiFormat`](protocol::api::ApiFormat), the one enum of
//!   formats) — `format.rs`, a table no format module imports.
//! - [`ProviderHttp`]: the HTTP client provider calls go through; it refuses a redirect to
//!   another origin, so no API key leaves for another host (`http.rs`).
//! - [`PRESETS`]: the providers people use, as data (`presets.rs`).
//! - [`RetryPolicy`]: retries before the first byte of an answer (`retry.rs`); the HTTP
//!   exchange every format shares is `transport.rs`.
//! - [`sse`]: a `text/event-stream` decoder; [`StreamDecoder`]: SSE plus a format's event
//!   mapper, bytes in and events out (`decoder.rs`).
//! - Wire formats, one folder each (request mapping, lenient wire types, pure event mapper):
//!   [`openai_chat`] ([`OpenAiChat`], [`list_models`]; OpenAI and every compatible endpoint),
//!   [`openai_responses`] ([`OpenAiResponses`]), [`anthropic`] ([`AnthropicMessages`]),
//!   [`gemini`] ([`Gemini`]).
//! - [`validate_base_url`]: the check a provider's base URL must pass before it is saved.
//!
//! Architecture invariant: wire formats stay inside their module folder; parsing never
//! panics — bad input becomes a [`ProviderError`]; a request is only sent again before the
//! first byte of a successful answer.

pub mod anthropic;
mod attachment;
mod base_url;
mod call_id;
mod config;
mod decoder;
pub mod error;
mod format;
pub mod gemini;
mod http;
mod language_model;
pub mod openai_chat;
pub mod openai_responses;
mod presets;
mod retry;
pub mod sse;
mod transport;

pub use anthropic::AnthropicMessages;
pub(crate) use attachment::{attachment_text, unsupported_attachment};
pub use base_url::validate_base_url;
pub use config::ProviderConfig;
pub use decoder::StreamDecoder;
pub use error::{ProviderError, ProviderErrorKind};
pub use format::{list_models_for, model_for};
pub use gemini::Gemini;
pub use http::{CrossOriginRedirect, ProviderHttp};
pub use language_model::{
    ChatMessage, ChatRole, CompletionEvent, CompletionRequest, CompletionStream, ContentPart, LanguageModel, Media,
    MediaSource, Reasoning, ReasoningEffort, StopReason, TokenUsage, ToolCall, ToolResult, ToolSpec,
};
pub use openai_chat::{OpenAiChat, OpenAiChatConfig, list_models};
pub use openai_responses::OpenAiResponses;
pub use presets::{PRESETS, ProviderPreset, preset};
pub use retry::RetryPolicy;
pub use transport::{MODEL_LIST_LIMIT, WHOLE_ANSWER_LIMIT};
