//! Request and response bodies of the user-facing operations, shared by the Tauri
//! commands and the HTTP routes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ids::{MessageId, ModelRef, ProviderId, TopicId, TurnId};
use crate::message::{MessageStatus, UiMessage};
use crate::tool::{PolicyDecision, RuleCondition, RuleScope};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Topic {
    pub id: TopicId,
    pub title: String,
    /// The model new turns go to unless the request names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    /// The folder file tools work in (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace: Option<String>,
    /// The assistant this topic talks to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub assistant_id: Option<String>,
    /// The topic and message this topic was forked from (`topic_fork`). The origin may
    /// have been deleted since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub forked_from: Option<ForkOrigin>,
    /// What the model is told in every turn of this topic, after the assistant's own
    /// prompt when the topic has an assistant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub system_prompt: Option<String>,
    /// Sampling settings for this topic's turns; each one set here wins over the
    /// assistant's.
    #[serde(default, skip_serializing_if = "ModelParams::is_empty")]
    #[ts(as = "Option<ModelParams>", optional)]
    pub params: ModelParams,
    /// RFC 3339.
    pub created_at: String,
    pub updated_at: String,
}

/// `topics_list`'s answer: the chat topics, most recently updated first, and the list
/// version the read saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopicList {
    pub topics: Vec<Topic>,
    /// Taken before the read, so a change made while it was read counts as newer (see
    /// `ListVersion`).
    pub version: crate::ListVersion,
}

/// How a model samples its answer. Every field is optional: an absent one sends
/// nothing, and the provider's default applies. Each wire format gets them in its own
/// fields (see `docs/api.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelParams {
    /// 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub temperature: Option<f32>,
    /// Above 0, at most 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub top_p: Option<f32>,
    /// The longest answer, in tokens (1 to 1,000,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_output_tokens: Option<u32>,
    /// How hard a model with the `reasoning` capability thinks; absent: `medium`.
    /// Models without the capability are sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reasoning_effort: Option<ReasoningLevel>,
}

impl ModelParams {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// These settings, with each one left open here taken from `fallback`.
    pub fn or(self, fallback: ModelParams) -> ModelParams {
        ModelParams {
            temperature: self.temperature.or(fallback.temperature),
            top_p: self.top_p.or(fallback.top_p),
            max_output_tokens: self.max_output_tokens.or(fallback.max_output_tokens),
            reasoning_effort: self.reasoning_effort.or(fallback.reasoning_effort),
        }
    }
}

/// A reasoning model's effort; `off` asks it not to think where the format allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningLevel {
    Off,
    Low,
    Medium,
    High,
}

/// Where a forked topic came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ForkOrigin {
    pub topic_id: TopicId,
    /// The message the fork was made at, in the origin topic.
    pub message_id: MessageId,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTopic {
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<ModelRef>,
}

/// Change a topic. Absent fields stay as they are; an empty `workspace`, `assistantId`
/// or `systemPrompt` removes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateTopic {
    pub id: TopicId,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    #[serde(default)]
    #[ts(optional)]
    pub workspace: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub assistant_id: Option<String>,
    /// An empty prompt removes it.
    #[serde(default)]
    #[ts(optional)]
    pub system_prompt: Option<String>,
    /// Replaces every sampling setting of the topic (`{}` clears them).
    #[serde(default)]
    #[ts(optional)]
    pub params: Option<ModelParams>,
}

/// A stored message with its row-level facts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    pub id: MessageId,
    pub topic_id: TopicId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_id: Option<MessageId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<TurnId>,
    pub status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    pub message: UiMessage,
    /// In `messages_list` (the active path): the ids of every version of this message,
    /// oldest first, this one included. A user message's versions are its edits (the
    /// sibling user messages under the same parent); a reply's versions are the replies of
    /// the same model to the same user message (its regenerations). One id: no versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<MessageId>>", optional)]
    pub versions: Vec<MessageId>,
    /// Bumped by every write to the row. The backend uses it to refuse an operation
    /// prepared from an older read (the reply changed meanwhile).
    #[serde(default)]
    #[ts(type = "number")]
    pub revision: u64,
    pub created_at: String,
    pub updated_at: String,
}

/// Open a turn: persist the user's message and stream the reply to the caller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamOpenRequest {
    pub topic_id: TopicId,
    /// The user's message text.
    pub text: String,
    /// Client-chosen id for the user message (lets the UI keep its optimistic row).
    #[serde(default)]
    #[ts(optional)]
    pub message_id: Option<MessageId>,
    /// Overrides the topic's model for this turn.
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<ModelRef>,
    /// Ask several models at once (side-by-side replies); overrides `model`.
    #[serde(default)]
    #[ts(optional)]
    pub models: Option<Vec<ModelRef>>,
    /// Files sent with the message (images, PDFs, text files).
    #[serde(default)]
    #[ts(optional)]
    pub attachments: Option<Vec<Attachment>>,
    /// MCP resources to attach: each is read through its server when the message is
    /// sent, and kept on the message as a `data-mcp-resource` part.
    #[serde(default)]
    #[ts(optional)]
    pub mcp_resources: Option<Vec<crate::mcp_content::McpResourceRef>>,
}

/// A file attached to a message, as base64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attachment {
    /// E.g. `image/png`, `application/pdf`, `text/plain`.
    pub media_type: String,
    pub filename: String,
    /// Standard base64 of the file's bytes.
    pub data: String,
}

/// Retry or continue one reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplyRequest {
    pub topic_id: TopicId,
    pub message_id: MessageId,
}

/// One page of a topic's conversation as shown (its active path), newest pages first:
/// without `before`, the last turns; with it, the turns just above that message. A page
/// holds whole turns (a user message with its replies), never part of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesPageRequest {
    pub topic_id: TopicId,
    /// The cursor a previous page returned as `older`: a user message of the topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before: Option<MessageId>,
    /// How many turns, 1 to [`MAX_PAGE_TURNS`] (default [`DEFAULT_PAGE_TURNS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turns: Option<u32>,
}

/// Turns in a page when the request does not say.
pub const DEFAULT_PAGE_TURNS: u32 = 50;
/// The most turns one page may ask for.
pub const MAX_PAGE_TURNS: u32 = 500;

/// A page of the active path: its messages oldest first (each with its versions, as
/// `messages_list` gives them), and the cursor for the page above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MessagesPage {
    pub messages: Vec<StoredMessage>,
    /// Pass as `before` for the turns above this page; `null` when this page starts at the
    /// conversation's first turn.
    pub older: Option<MessageId>,
    /// The path changes this page has seen: read before the page, so a change made while
    /// it was read counts as newer (see `PathVersion`).
    pub path: crate::PathVersion,
}

/// Names one message of a topic: switch to it (`message_select`), delete it
/// (`message_delete`) or fork the topic there (`topic_fork`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageRequest {
    pub topic_id: TopicId,
    pub message_id: MessageId,
}

/// Edit a sent user message: a new version of it (a sibling under the same parent) with
/// this text and these files, answered by the models that answered the original.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditMessageRequest {
    pub topic_id: TopicId,
    /// The user message being edited.
    pub message_id: MessageId,
    pub text: String,
    /// Client-chosen id for the new version (lets the UI keep its optimistic row).
    #[serde(default)]
    #[ts(optional)]
    pub new_message_id: Option<MessageId>,
    /// Every file the new version carries (the original's files are not kept unless
    /// they are listed here again).
    #[serde(default)]
    #[ts(optional)]
    pub attachments: Option<Vec<Attachment>>,
}

/// Ask one more model to answer an existing turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddModelRequest {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    pub model: ModelRef,
}

/// The answer of `topic_delete_if_empty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopicDeletedIfEmpty {
    /// Whether the topic was deleted; `false`: something was said in it, and it stays.
    pub deleted: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopicRequest {
    pub topic_id: TopicId,
}

/// Subscribe to a topic's live reply. With `after`, executions the subscriber already
/// follows continue from the next `seq` (replayed from memory when possible, otherwise a
/// fresh snapshot); executions it does not name start with a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamAttachRequest {
    pub topic_id: TopicId,
    #[serde(default)]
    pub after: Vec<crate::envelope::ExecutionCursor>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any endpoint that speaks OpenAI Chat Completions.
    OpenaiCompatible,
    /// The scripted local model from `crates/testkit`, for trying the app without a key.
    Demo,
}

/// The wire format a provider's API speaks: the one enum for it on the wire, in the
/// database (`as_str`) and in TypeScript; `providers` builds a model for each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApiFormat {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), also spoken by OpenRouter,
    /// DeepSeek, Ollama, LM Studio, vLLM and most other servers.
    #[default]
    OpenaiChat,
    /// OpenAI Responses (`POST {base}/responses`).
    OpenaiResponses,
    /// Anthropic Messages (`POST {base}/messages`, base usually `https://api.anthropic.com/v1`).
    Anthropic,
    /// Google Gemini (`POST {base}/models/{model}:streamGenerateContent?alt=sse`).
    Gemini,
}

impl ApiFormat {
    pub const ALL: [ApiFormat; 4] =
        [ApiFormat::OpenaiChat, ApiFormat::OpenaiResponses, ApiFormat::Anthropic, ApiFormat::Gemini];

    /// The stable snake_case name, as stored and as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiFormat::OpenaiChat => "openai_chat",
            ApiFormat::OpenaiResponses => "openai_responses",
            ApiFormat::Anthropic => "anthropic",
            ApiFormat::Gemini => "gemini",
        }
    }

    /// The format named `text` (as [`ApiFormat::as_str`] spells it), if there is one.
    pub fn parse(text: &str) -> Option<Self> {
        ApiFormat::ALL.into_iter().find(|format| format.as_str() == text)
    }
}

impl std::fmt::Display for ApiFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ApiFormat {
    type Err = String;

    /// Like [`ApiFormat::parse`], ignoring surrounding spaces, with an error that lists the names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApiFormat::parse(s.trim()).ok_or_else(|| {
            format!("unknown API format “{s}” (expected openai_chat, openai_responses, anthropic or gemini)")
        })
    }
}

/// A reply strategy an assistant can select (`Assistant::features`), as the backend
/// registers it: its name and what it does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FeatureInfo {
    pub name: String,
    pub description: String,
}

/// A known service, to prefill the "Add provider" form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderPresetInfo {
    pub id: String,
    pub name: String,
    pub format: ApiFormat,
    /// Empty when the user must type one.
    pub base_url: String,
    pub needs_api_key: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Provider {
    pub id: ProviderId,
    pub name: String,
    pub kind: ProviderKind,
    pub format: ApiFormat,
    pub base_url: String,
    /// Whether a key is stored. The key itself never leaves the backend.
    pub has_api_key: bool,
    pub models: Vec<String>,
    pub default_model: String,
    /// What each listed model can do: what the user set, else a guess from its name.
    pub capabilities: BTreeMap<String, ModelCapabilities>,
    pub created_at: String,
}

/// What a model can do; it decides how requests are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelCapabilities {
    /// Native tool calling; without it tools are offered through the prompt.
    pub tools: bool,
    /// Thinking (extended thinking, reasoning effort, thoughts) is switched on.
    pub reasoning: bool,
    /// Takes images.
    pub vision: bool,
    /// Whether the user set these (false: guessed from the model's name).
    #[serde(default)]
    pub custom: bool,
}

/// Add or edit a provider. On update, an absent `api_key` keeps the stored key and an
/// empty one removes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderInput {
    pub name: String,
    /// Defaults to OpenAI Chat Completions.
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<ApiFormat>,
    pub base_url: String,
    #[serde(default)]
    #[ts(optional)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub models: Vec<String>,
    pub default_model: String,
    /// Capabilities the user set, by model name; models not named keep theirs.
    #[serde(default)]
    #[ts(optional)]
    pub capabilities: Option<BTreeMap<String, ModelCapabilities>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateProvider {
    pub id: ProviderId,
    pub provider: ProviderInput,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderRequest {
    pub provider_id: ProviderId,
}

/// Ask an endpoint which models it has, before (or after) saving it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListModelsRequest {
    pub base_url: String,
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<ApiFormat>,
    #[serde(default)]
    #[ts(optional)]
    pub api_key: Option<String>,
    /// Use the stored key of this provider when `api_key` is absent.
    #[serde(default)]
    #[ts(optional)]
    pub provider_id: Option<ProviderId>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    pub models: Vec<String>,
}

/// What the app knows about itself, for the UI's first paint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    /// `desktop` or `server`.
    pub mode: String,
    pub data_dir: String,
    /// Where API keys are kept, in words for the settings page (the OS keychain, or a
    /// file only the user can read, and which).
    pub secret_store: String,
}

/// Settings that apply to the whole app, as the settings page shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppSettings {
    /// How long a reply may stay silent (no text, no event) before it is stopped as
    /// `stalled`, in seconds, as the user chose it; absent: the default applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub idle_timeout_seconds: Option<u32>,
    /// What applies without a choice: `COLLOQUY_IDLE_TIMEOUT_SECONDS` when the app was
    /// started with it, else 120.
    pub default_idle_timeout_seconds: u32,
    /// The shortest idle timeout the user may choose.
    pub min_idle_timeout_seconds: u32,
    /// The longest idle timeout the user may choose.
    pub max_idle_timeout_seconds: u32,
    /// Light or dark, as the user chose it; absent: follow the system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub theme: Option<Theme>,
    /// The key combination that shows Colloquy from any app (desktop only), in the
    /// accelerator syntax `show_shortcut_set` takes, e.g. `CommandOrControl+Shift+Space`;
    /// absent: off (the default). Set only through `show_shortcut_set`, which registers it
    /// with the system first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub show_shortcut: Option<String>,
}

/// The app's colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    Light,
    Dark,
}

/// The body of `settings_update`: every setting, as it should be from now on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAppSettings {
    /// Seconds, within the bounds [`AppSettings`] names; absent or `null` goes back to the
    /// default.
    #[serde(default)]
    #[ts(optional)]
    pub idle_timeout_seconds: Option<u32>,
    /// Absent or `null`: follow the system's light or dark setting.
    #[serde(default)]
    #[ts(optional)]
    pub theme: Option<Theme>,
}

/// How a message sent while a turn runs should be handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum InboxMode {
    /// Run as the next turn, after the live one finishes.
    Queue,
    /// Go first: the live turn yields at its next step boundary and a continuation turn
    /// starts with this message.
    Steer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum InboxState {
    /// Waiting for the topic to be idle.
    Queued,
    /// Not sent because the turn before it failed or was stopped; `note` says which.
    /// It runs only when the user releases it.
    Held,
}

/// A message waiting in a topic's durable inbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InboxItem {
    pub id: String,
    pub topic_id: TopicId,
    pub text: String,
    pub mode: InboxMode,
    pub state: InboxState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
    /// Who answers it when it runs; absent: the topic's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub models: Option<Vec<ModelRef>>,
    pub created_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboxAddRequest {
    pub topic_id: TopicId,
    pub text: String,
    pub mode: InboxMode,
    /// The models that answer it when it runs (several: side by side, as `stream_open`'s
    /// `models`); absent or empty: the topic's model. Chat topics only.
    #[serde(default)]
    #[ts(optional)]
    pub models: Option<Vec<ModelRef>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboxUpdateRequest {
    pub id: String,
    #[serde(default)]
    #[ts(optional)]
    pub text: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub mode: Option<InboxMode>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboxMoveRequest {
    pub id: String,
    pub position: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InboxItemRequest {
    pub id: String,
}

/// Open another window (desktop only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowOpenRequest {
    #[serde(default)]
    #[ts(optional)]
    pub topic_id: Option<TopicId>,
}

/// The body of `show_shortcut_set` (desktop only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShowShortcutRequest {
    /// Modifiers and one key joined by `+`, e.g. `CommandOrControl+Shift+Space` or
    /// `Alt+KeyC`; absent or `null` turns the shortcut off.
    #[serde(default)]
    #[ts(optional)]
    pub shortcut: Option<String>,
}

/// How the user answers a tool call waiting for approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approve,
    Deny,
}

/// How far an approval reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This call only.
    #[default]
    Once,
    /// Every call of this tool in this topic from now on.
    Topic,
    /// Every call of this tool everywhere from now on.
    Global,
}

impl ApprovalScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalScope::Once => "once",
            ApprovalScope::Topic => "topic",
            ApprovalScope::Global => "global",
        }
    }
}

/// `tool_approval_respond`: only the backend records decisions. Answering an approval a
/// second time returns the first answer and changes nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolApprovalRespond {
    pub approval_id: String,
    pub decision: ApprovalDecision,
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<ApprovalScope>,
    /// Told to the model when denying.
    #[serde(default)]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Approve with these arguments instead of the model's.
    #[serde(default)]
    #[ts(optional, type = "unknown")]
    pub updated_input: Option<Value>,
}

/// Which approvals to list: pending ones everywhere by default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalsListRequest {
    #[serde(default)]
    #[ts(optional)]
    pub topic_id: Option<TopicId>,
    /// Only this reply's questions.
    #[serde(default)]
    #[ts(optional)]
    pub message_id: Option<String>,
    /// Include answered ones too.
    #[serde(default)]
    #[ts(optional)]
    pub all: Option<bool>,
}

/// A policy rule to save.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolRuleInput {
    pub tool: String,
    #[serde(default)]
    pub conditions: Vec<RuleCondition>,
    pub decision: PolicyDecision,
    pub scope: RuleScope,
    #[serde(default)]
    #[ts(optional)]
    pub expires_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateToolRule {
    pub id: String,
    pub rule: ToolRuleInput,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdRequest {
    pub id: String,
}

/// `image_fetch`: a remote image in a reply, which the user asked to see.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageFetchRequest {
    /// An `http://` or `https://` URL.
    pub url: String,
}

/// A fetched image, as a `data:` URL the page may show (its CSP allows no remote image).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FetchedImage {
    pub media_type: String,
    pub data_url: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditListRequest {
    #[serde(default)]
    #[ts(optional)]
    pub topic_id: Option<TopicId>,
    /// Newest first; at most this many (default 200).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// Switch a tool on or off for every conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolEnableRequest {
    pub name: String,
    pub enabled: bool,
}

/// A saved setup: what the model is told, which models answer, which tools it may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Assistant {
    pub id: String,
    pub name: String,
    pub system_prompt: String,
    /// Answer with these models (side by side when several); empty: the topic's model.
    pub models: Vec<ModelRef>,
    /// The tools it may call; absent: every enabled tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tools: Option<Vec<String>>,
    /// Tool calls one reply may make before it asks to go on (1–100).
    pub max_tool_calls: u32,
    /// The folder file tools work in for topics that have none of their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace: Option<String>,
    /// The reply strategies its turns use, by feature name (see `docs/api.md`); absent:
    /// the defaults. `[]`: none (one model call per reply, tool calls answered but not
    /// followed up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub features: Option<Vec<String>>,
    /// Sampling settings for its turns; a topic's own settings win.
    #[serde(default, skip_serializing_if = "ModelParams::is_empty")]
    #[ts(as = "Option<ModelParams>", optional)]
    pub params: ModelParams,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssistantInput {
    pub name: String,
    #[serde(default)]
    pub system_prompt: String,
    #[serde(default)]
    pub models: Vec<ModelRef>,
    #[serde(default)]
    #[ts(optional)]
    pub tools: Option<Vec<String>>,
    #[serde(default)]
    #[ts(optional)]
    pub max_tool_calls: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub workspace: Option<String>,
    /// Absent: the default features.
    #[serde(default)]
    #[ts(optional)]
    pub features: Option<Vec<String>>,
    /// Absent: none set.
    #[serde(default)]
    #[ts(as = "Option<ModelParams>", optional)]
    pub params: ModelParams,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAssistant {
    pub id: String,
    pub assistant: AssistantInput,
}

/// An agent session: a conversation with an external coding agent in a folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    pub id: String,
    /// The topic its messages live in (`agent-session:<id>`).
    pub topic_id: TopicId,
    pub title: String,
    /// `claude_code`, or `acp` for an agent of settings' list (`acp_agent_id`).
    pub agent: String,
    /// The ACP agent it runs (absent for Claude Code, or when that agent was deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub acp_agent_id: Option<String>,
    /// What the Agents list shows: "Claude Code", or the ACP agent's name.
    pub agent_name: String,
    pub workspace: String,
    /// The Anthropic-format provider it talks through; absent: the agent's own login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider_id: Option<ProviderId>,
    pub model: String,
    /// `default`, `acceptEdits`, `plan` or `dontAsk`.
    pub permission_mode: String,
    /// Whether the next turn resumes the agent's own session (false: it starts fresh).
    pub resumable: bool,
    pub created_at: String,
    pub updated_at: String,
}

/// `agent_sessions_list`'s answer: the sessions, most recently active first, and the
/// list version the read saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSessionList {
    pub sessions: Vec<AgentSession>,
    /// Taken before the read, so a change made while it was read counts as newer (see
    /// `ListVersion`).
    pub version: crate::ListVersion,
}

/// Start an agent session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSessionInput {
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// `claude_code` (the default) or `acp`, which needs `acpAgentId`.
    #[serde(default)]
    #[ts(optional)]
    pub agent: Option<String>,
    /// The ACP agent to run (from `acp_agents_list`); implies `agent: "acp"`.
    #[serde(default)]
    #[ts(optional)]
    pub acp_agent_id: Option<String>,
    /// An existing folder; not `/` and not the home folder itself. Empty: the ACP agent's
    /// own workspace.
    #[serde(default)]
    pub workspace: String,
    #[serde(default)]
    #[ts(optional)]
    pub provider_id: Option<ProviderId>,
    /// Empty: the agent's default model.
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    #[ts(optional)]
    pub permission_mode: Option<String>,
}

/// Switch an ACP session's agent to one of the modes it offers (`session/set_mode`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentModeRequest {
    /// The session.
    pub id: String,
    /// One of the `availableModes` ids of the session's latest `agentModes` metadata.
    pub mode_id: String,
}

/// How a change of the agent's mode went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentModeChange {
    pub mode_id: String,
    /// `now`: the agent switched (mid-turn too; the live or next reply's `agentMode` says
    /// so); `next_start`: the agent is not running, and switches as soon as it next starts.
    pub applied: AgentModeApplied,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AgentModeApplied {
    Now,
    NextStart,
}

/// Change a session: absent fields stay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAgentSession {
    pub id: String,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub permission_mode: Option<String>,
}
