//! MCP sampling: a server asks, during one of its tool calls, for a completion from the
//! model of the reply that called it. The user sees an [`SamplingCard`] (a
//! `data-mcp-sampling` part of the reply) with the messages and the model that will
//! answer, and allows or denies it with [`SamplingRespond`] (optionally for good, per
//! server).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kind of the reply part that shows a sampling request.
pub const SAMPLING_PART: &str = "data-mcp-sampling";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRole {
    User,
    Assistant,
}

/// One message the server wants the model to read (text only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    pub role: SamplingRole,
    pub text: String,
}

/// Where a sampling request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SamplingState {
    /// Waiting for the user to allow or deny it.
    Pending,
    /// Allowed: the model is answering.
    Running,
    /// The model answered; `result` is what the server got.
    Done,
    /// The user said no; the server was told so.
    Denied,
    /// The model call failed (`problem` says why); the server was told so.
    Failed,
    /// Nobody answered in time: the server was told no.
    Expired,
    /// The call that asked ended first.
    Withdrawn,
}

/// A sampling request as the reply shows it: the data of its `data-mcp-sampling` part
/// (one part per request, replaced as its state changes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCard {
    pub sampling_id: String,
    /// The tool call during which the server asked.
    pub tool_call_id: String,
    pub server_id: String,
    pub server_name: String,
    /// The model that answers: the reply's own.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub system_prompt: Option<String>,
    pub messages: Vec<SamplingMessage>,
    pub max_tokens: u32,
    pub state: SamplingState,
    /// Allowed without asking: the server may always sample.
    #[serde(default)]
    pub allowed_by_rule: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SamplingDecision {
    Allow,
    Deny,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SamplingRespond {
    pub sampling_id: String,
    pub decision: SamplingDecision,
    /// With `allow`: this server may sample from now on without asking (saved with the
    /// server, `samplingAllowed`; Settings → MCP turns it off again).
    #[serde(default)]
    #[ts(optional)]
    pub always: Option<bool>,
}
