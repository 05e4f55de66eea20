//! The provider-neutral interface: a request goes in, a stream of [`CompletionEvent`]s
//! comes out. Wire adapters translate to and from it; nothing above this crate sees a
//! wire format.

use std::pin::Pin;

use futures::Stream;

use crate::error::ProviderError;

/// The events of one completion, ending after [`CompletionEvent::Finish`] or the first `Err`.
pub type CompletionStream = Pin<Box<dyn Stream<Item = Result<CompletionEvent, ProviderError>> + Send>>;

/// A model that can stream a completion.
pub trait LanguageModel: Send + Sync {
    /// Starts a completion. Connection/HTTP errors arrive as the first (and last) item,
    /// possibly after [`CompletionEvent::Retrying`] events. Dropping the stream cancels the
    /// request (and any pending retry).
    ///
    /// A successful stream ends with exactly one [`CompletionEvent::Finish`]; a
    /// [`CompletionEvent::Usage`], when the provider reports one, comes right before it.
    /// After an `Err` item the stream ends.
    fn stream(&self, request: CompletionRequest) -> CompletionStream;
}

/// What to ask the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompletionRequest {
    /// The provider's own model name, e.g. `gpt-4o-mini`.
    pub model: String,
    /// The conversation so far, oldest first.
    pub messages: Vec<ChatMessage>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: ChatRole::System, content: content.into() }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self { role: ChatRole::User, content: content.into() }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: ChatRole::Assistant, content: content.into() }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChatRole {
    System,
    User,
    Assistant,
}

/// One step of a streaming completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompletionEvent {
    /// Visible answer text, to append.
    TextDelta(String),
    /// Thinking text (`reasoning_content` and friends), to append.
    ReasoningDelta(String),
    /// A tool call begins; `index` identifies it in later [`CompletionEvent::ToolCallDelta`]s.
    ToolCallStart { index: u32, id: String, name: String },
    /// More of the tool call's JSON arguments, to append.
    ToolCallDelta { index: u32, arguments: String },
    /// Token counts for the whole completion.
    Usage(TokenUsage),
    /// The model is done; always the last event of a successful stream.
    Finish { reason: StopReason },
    /// An opaque signature for the reasoning streamed before it, ending that reasoning
    /// block: an Anthropic `thinking` block's signature, or a Gemini `thoughtSignature`
    /// (which comes right before the text or function call it rode on). It must be sent
    /// back verbatim with the assistant message when the conversation goes on (tool loops).
    ReasoningSignature { signature: String },
    /// Reasoning the provider encrypted (Anthropic `redacted_thinking`): nothing to show,
    /// but it must be sent back verbatim like a signature.
    RedactedReasoning { data: String },
    /// The provider refused before sending any of the answer, and the request will be sent
    /// again after `delay_ms`. `attempt` is the number of the attempt about to be made (2
    /// for the first retry); `reason` says why, in a few words (`rate limited (HTTP 429)`).
    /// Only ever comes before the first event of the answer: once any of the answer has
    /// arrived, nothing is retried.
    Retrying { attempt: u32, delay_ms: u64, reason: String },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl From<TokenUsage> for protocol::message::Usage {
    fn from(usage: TokenUsage) -> Self {
        Self { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens }
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// A natural end of the answer.
    Stop,
    /// The `max_tokens` limit (or the context window) cut the answer short.
    Length,
    /// The model wants tools to run.
    ToolCalls,
    /// The provider's content filter removed or stopped the answer.
    ContentFilter,
    /// A reason this crate does not know, as the provider spelled it.
    Other(String),
}

impl StopReason {
    /// The reason as a stable lowercase word (`stop`, `length`, `tool_calls`, …).
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolCalls => "tool_calls",
            StopReason::ContentFilter => "content_filter",
            StopReason::Other(other) => other,
        }
    }
}
