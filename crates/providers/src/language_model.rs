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

    /// The wire format's name (`anthropic`, `gemini`, …): reasoning signatures this model
    /// emits are tagged with it, and only sent back to models of the same format.
    fn format_name(&self) -> &'static str {
        ""
    }
}

/// What to ask the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompletionRequest {
    /// The provider's own model name, e.g. `gpt-4o-mini`.
    pub model: String,
    /// The conversation so far, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call; empty means a plain chat.
    pub tools: Vec<ToolSpec>,
    /// Ask the model to think before answering, where the format has a switch for it
    /// (Anthropic extended thinking, OpenAI reasoning effort and summaries, Gemini thoughts).
    /// `None` sends nothing: the model's default applies.
    pub reasoning: Option<ReasoningEffort>,
    pub temperature: Option<f32>,
    /// Nucleus sampling: only the most likely tokens whose probabilities add up to this.
    pub top_p: Option<f32>,
    /// The longest answer, in tokens.
    pub max_tokens: Option<u32>,
}

/// A tool offered to the model: its name, what it does, and the JSON Schema of its input.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object (`{"type": "object", "properties": …}`).
    pub input_schema: serde_json::Value,
}

/// How hard a reasoning model should think.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }

    /// A thinking budget in tokens, for formats that take one (Anthropic, Gemini).
    pub fn budget_tokens(self) -> u32 {
        match self {
            ReasoningEffort::Low => 1024,
            ReasoningEffort::Medium => 4096,
            ReasoningEffort::High => 16384,
        }
    }
}

/// One message of the conversation: who said it, and its parts in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: Vec<ContentPart>,
}

impl ChatMessage {
    pub fn new(role: ChatRole, content: Vec<ContentPart>) -> Self {
        Self { role, content }
    }

    pub fn system(text: impl Into<String>) -> Self {
        Self::new(ChatRole::System, vec![ContentPart::text(text)])
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::new(ChatRole::User, vec![ContentPart::text(text)])
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(ChatRole::Assistant, vec![ContentPart::text(text)])
    }

    /// Results of the assistant's tool calls, sent back to the model.
    pub fn tool_results(results: Vec<ToolResult>) -> Self {
        Self::new(ChatRole::Tool, results.into_iter().map(ContentPart::ToolResult).collect())
    }

    /// The text parts, joined: all a format without structured content can send.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.content {
            if let ContentPart::Text { text } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// True when nothing in the message would reach the model.
    pub fn is_blank(&self) -> bool {
        self.content.iter().all(|part| match part {
            ContentPart::Text { text } => text.trim().is_empty(),
            ContentPart::Reasoning(reasoning) => {
                reasoning.text.is_empty() && reasoning.signature.is_none() && reasoning.redacted.is_none()
            }
            _ => false,
        })
    }

    /// The tool calls in this (assistant) message.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|part| if let ContentPart::ToolCall(call) = part { Some(call) } else { None })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChatRole {
    System,
    User,
    Assistant,
    /// Tool results answering the previous assistant message's calls.
    Tool,
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// An image or a document (PDF, plain text…) the user attached, or a tool returned.
    Media(Media),
    /// Thinking the model did earlier, with whatever the provider needs to accept it back.
    Reasoning(Reasoning),
    /// A call the model made (assistant messages).
    ToolCall(ToolCall),
    /// What a call returned (tool messages).
    ToolResult(ToolResult),
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }
}

/// Attached content: bytes (base64) or a URL, with its media type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Media {
    /// E.g. `image/png`, `application/pdf`, `text/plain`.
    pub media_type: String,
    pub source: MediaSource,
    /// The file name, when there is one; some formats show it to the model.
    pub filename: Option<String>,
}

impl Media {
    pub fn is_image(&self) -> bool {
        self.media_type.starts_with("image/")
    }

    /// `data:` URL form (the URL itself for a linked file).
    pub fn data_url(&self) -> String {
        match &self.source {
            MediaSource::Base64(data) => format!("data:{};base64,{data}", self.media_type),
            MediaSource::Url(url) => url.clone(),
        }
    }

    /// The text of a text document carried inline, when it decodes as UTF-8.
    pub fn inline_text(&self) -> Option<String> {
        use base64::Engine as _;
        if !(self.media_type.starts_with("text/") || self.media_type == "application/json") {
            return None;
        }
        let MediaSource::Base64(data) = &self.source else { return None };
        let bytes = base64::engine::general_purpose::STANDARD.decode(data).ok()?;
        String::from_utf8(bytes).ok()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MediaSource {
    /// Standard base64 without line breaks.
    Base64(String),
    /// An `http(s)` URL the provider fetches itself.
    Url(String),
}

/// Earlier reasoning. Providers only take back what they produced: `signature` and
/// `redacted` are opaque tokens of the format named by `format`, and are dropped when the
/// request goes to another format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reasoning {
    pub text: String,
    /// Anthropic's thinking `signature`, or Gemini's `thoughtSignature` (which goes back on
    /// the part that follows the reasoning).
    pub signature: Option<String>,
    /// Anthropic `redacted_thinking` data.
    pub redacted: Option<String>,
    /// The format whose model produced `signature`/`redacted`, e.g. `anthropic`.
    pub format: Option<String>,
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them, parsed (an object, normally).
    pub arguments: serde_json::Value,
}

/// A tool call's outcome, answering the call with the same `call_id`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    /// The tool's name (Gemini matches results to calls by name).
    pub name: String,
    /// Text and, where the format takes them, images.
    pub content: Vec<ContentPart>,
    /// The call failed (or was denied); the content says why.
    pub is_error: bool,
}

impl ToolResult {
    pub fn text(call_id: impl Into<String>, name: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        Self { call_id: call_id.into(), name: name.into(), content: vec![ContentPart::text(text)], is_error }
    }

    /// The text parts, joined with newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|part| if let ContentPart::Text { text } = part { Some(text.as_str()) } else { None })
            .collect();
        texts.join("\n")
    }
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

/// Token counts of one completion, the same meaning whatever the wire format:
/// `input_tokens` counts every prompt token (cached ones included), `output_tokens` every
/// generated token (reasoning included). `cached_tokens` and `reasoning_tokens` say how
/// many of those were read from the provider's prompt cache, or spent thinking; 0 when
/// the provider does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `output_tokens`, the reasoning ones.
    pub reasoning_tokens: u64,
    /// Of `input_tokens`, the ones read from the prompt cache.
    pub cached_tokens: u64,
}

impl TokenUsage {
    /// Only input and output counts (the other two 0).
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self { input_tokens, output_tokens, ..Self::default() }
    }

    /// Adds another completion's counts (saturating: counts from outside may be absurd).
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
}

impl From<TokenUsage> for protocol::message::Usage {
    fn from(usage: TokenUsage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            reasoning_tokens: (usage.reasoning_tokens > 0).then_some(usage.reasoning_tokens),
            cached_tokens: (usage.cached_tokens > 0).then_some(usage.cached_tokens),
        }
    }
}

/// A count inside a provider's `…_details` object (`{"cached_tokens": 5}`); 0 when the
/// object or the count is missing or not a number.
pub(crate) fn detail_count(details: &Option<serde_json::Value>, key: &str) -> u64 {
    details.as_ref().and_then(|d| d.get(key)).and_then(serde_json::Value::as_u64).unwrap_or(0)
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
