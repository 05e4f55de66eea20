//! Usage and cost: what replies, topics and periods used, what they cost, and the reply
//! inspector's timeline. Token counts mean the same whatever the provider: input includes
//! the cached tokens, output includes the reasoning tokens. Costs are in US dollars and
//! absent when no call counted had a price.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// Sums over some ledger rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Model calls (agent-session turns count one each).
    pub calls: u32,
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub reasoning_tokens: u64,
    #[ts(type = "number")]
    pub cached_tokens: u64,
    /// The cost of the calls that have a price (or a cost the agent reported); absent
    /// when none has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    /// Calls whose model has no price: their tokens are counted, their cost is not.
    pub unpriced_calls: u32,
    /// Time spent in model calls, in milliseconds.
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// One reply's usage, as its footer shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplyUsage {
    pub message_id: String,
    pub totals: UsageTotals,
    /// The first model call's time to first token, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub time_to_first_token_ms: Option<u64>,
    /// Output tokens per second of generation (after the first token), over every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens_per_second: Option<f64>,
    /// When the first call started (RFC 3339, UTC).
    pub started_at: String,
    /// The model of the last call.
    pub model: String,
}

/// A topic's usage: its total (every version of every reply, shown or not) and each reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopicUsage {
    pub topic_id: String,
    pub total: UsageTotals,
    pub replies: Vec<ReplyUsage>,
}

/// The reply inspector: a reply's usage and its timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplyDetails {
    pub message_id: String,
    /// Absent when the ledger has nothing for this reply (written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<ReplyUsage>,
    /// In the order things happened.
    pub timeline: Vec<TimelineEntry>,
}

/// One thing that happened while a reply was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TimelineEntry {
    /// A call to the model (or an agent session's turn, `agent: true`).
    ModelCall {
        /// The step of the agent loop (0 first), and the attempt at it (0 first).
        step: u32,
        attempt: u32,
        agent: bool,
        provider_name: String,
        model: String,
        started_at: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        request_messages: Option<u32>,
        /// The size of what was sent, in characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        request_chars: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        time_to_first_token_ms: Option<u64>,
        #[ts(type = "number")]
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tokens_per_second: Option<f64>,
        #[ts(type = "number")]
        input_tokens: u64,
        #[ts(type = "number")]
        output_tokens: u64,
        #[ts(type = "number")]
        reasoning_tokens: u64,
        #[ts(type = "number")]
        cached_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cost_usd: Option<f64>,
        /// `stop`, `length`, `tool_calls`, `content_filter`, the provider's own reason, or
        /// `stopped`, `stalled`, `failed`.
        finish: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error: Option<String>,
        /// Retries the provider client made before the first byte.
        provider_retries: u32,
    },
    /// A tool call the model made.
    ToolCall {
        call_id: String,
        tool_name: String,
        input: Value,
        /// `requested`, `approved`, `denied`, `running`, `done`, `error`.
        state: String,
        /// When the model asked for it.
        requested_at: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        started_at: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        duration_ms: Option<u64>,
        /// The size of its output, in characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        output_chars: Option<u64>,
        /// Who allowed (or refused) it: `user`, `app`, `rule:<id>` or `default`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        decided_by: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error: Option<String>,
    },
    /// A call waited for the user's decision.
    ApprovalWait {
        approval_id: String,
        call_id: String,
        tool_name: String,
        /// `pending`, `approved` or `denied`.
        state: String,
        requested_at: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        decided_at: Option<String>,
        /// How long it waited (so far, while pending), in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "number")]
        waited_ms: Option<u64>,
    },
}

/// `usage_report`: a period and how to count days.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageReportRequest {
    /// The first day counted, `YYYY-MM-DD`; absent: since the first call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub from: Option<String>,
    /// The last day counted (inclusive), `YYYY-MM-DD`; absent: up to today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub to: Option<String>,
    /// Days start at midnight this many minutes ahead of UTC (the user's time zone;
    /// JavaScript's `-new Date().getTimezoneOffset()`); absent: UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub utc_offset_minutes: Option<i32>,
}

/// Totals over a period, by day, by model and by provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    pub total: UsageTotals,
    /// Days with usage, oldest first.
    pub by_day: Vec<UsageGroup>,
    /// Most expensive first (then most tokens).
    pub by_model: Vec<UsageGroup>,
    pub by_provider: Vec<UsageGroup>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageGroup {
    /// The day (`YYYY-MM-DD`), the model's name or the provider's name.
    pub key: String,
    pub totals: UsageTotals,
}

/// The price of a model's tokens, in US dollars per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelPrice {
    /// A model name; it also prices dated or suffixed versions of it (`gpt-4o` prices
    /// `gpt-4o-2024-08-06`, not `gpt-4o-mini` when that has its own price) and names
    /// behind a router's prefix (`openai/gpt-4o`).
    pub model: String,
    pub input_usd: f64,
    pub output_usd: f64,
    /// Input tokens read from the prompt cache; absent: the input price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cached_input_usd: Option<f64>,
    /// `default`: built in; `custom`: set by the user (over a default or for a new model).
    pub source: PriceSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum PriceSource {
    Default,
    Custom,
}

/// `usage_price_set`: the user's price of a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPriceInput {
    pub model: String,
    pub input_usd: f64,
    pub output_usd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cached_input_usd: Option<f64>,
}

/// `usage_price_reset`: forget the user's price of a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelPriceRequest {
    pub model: String,
}
