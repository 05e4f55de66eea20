//! Model providers behind one provider-neutral interface.
//!
//! - [`LanguageModel`] and its vocabulary ([`CompletionRequest`], [`CompletionEvent`], …):
//!   what the rest of Colloquy codes against, in `language_model.rs`.
//! - [`error`]: [`ProviderError`], every failure classified into something the user can act on.
//! - [`sse`]: a `text/event-stream` decoder shared by the wire adapters.
//! - [`openai_chat`]: the OpenAI Chat Completions adapter ([`OpenAiChat`]) and
//!   [`list_models`], for OpenAI and every compatible endpoint (Ollama, LM Studio, OpenRouter, …).
//! - [`validate_base_url`]: the check a provider's base URL must pass before it is saved.
//!
//! Architecture invariant: wire formats stay inside their module folder; parsing never
//! panics — bad input becomes a [`ProviderError`].

mod base_url;
pub mod error;
mod language_model;
pub mod openai_chat;
pub mod sse;

pub use base_url::validate_base_url;
pub use error::{ProviderError, ProviderErrorKind};
pub use language_model::{
    ChatMessage, ChatRole, CompletionEvent, CompletionRequest, CompletionStream, LanguageModel, StopReason, TokenUsage,
};
pub use openai_chat::{OpenAiChat, OpenAiChatConfig, list_models};
