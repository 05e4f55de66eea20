//! [`ToolGate`]: what the loop asks before and around running a tool call. The engine
//! implements it over the policy rules, the approvals table and the tool-call ledger; the
//! loop only sees decisions.
//!
//! Ledger, per call: `requested → approved | denied → running → done | error`. `begin`
//! is the one transition to `running`, so a call runs at most once however often the
//! loop is resumed.

use async_trait::async_trait;
use protocol::tool::{ToolAnnotations, ToolOutput};
use serde_json::Value;

/// A call the model made, as the gate sees it.
#[derive(Clone, Debug)]
pub struct GateCall {
    pub call_id: String,
    pub tool_name: String,
    pub input: Value,
    /// The arguments as policy rules see them (the tool's `rule_input`: file paths
    /// normalized inside the workspace).
    pub rule_input: Value,
    pub annotations: ToolAnnotations,
    /// What the tool says the call would change (a diff), for the approval card.
    pub preview: Option<String>,
    /// Why this call should ask although its tool's default would let it run (the tool's
    /// `caution`, e.g. a fetch of a private address).
    pub caution: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateDecision {
    /// Run it (a rule or the tool's default allowed it).
    Allow,
    /// Do not run it (the policy refuses it); the model is told why.
    Deny { reason: String },
    /// The user decides: an approval request with this id is recorded.
    Ask { approval_id: String },
}

/// How a call ended, for the ledger.
#[derive(Clone, Debug)]
pub enum CallRecord {
    Done(ToolOutput),
    Error(String),
}

/// Who let a call run, as [`ToolGate::begin`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// Only the tool's default: tools with extra guards (`fetch_url` and private
    /// addresses) apply them.
    ByDefault,
    /// The user's answer, or one of their rules.
    ByUser,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct GateError(pub String);

#[async_trait]
pub trait ToolGate: Send + Sync {
    /// Decides a new call and records it (`requested`, then `approved`/`denied` when a rule
    /// or default decides, or a pending approval when the user must).
    async fn check(&self, call: &GateCall) -> Result<GateDecision, GateError>;

    /// Marks an approved call `running`, saying who allowed it. `None` when it is not
    /// `approved` any more (it ran already, or is running elsewhere): the caller must not
    /// run it.
    async fn begin(&self, call_id: &str) -> Result<Option<Allowed>, GateError>;

    /// Records the outcome of a call that `begin` let run.
    async fn finish(&self, call_id: &str, record: &CallRecord) -> Result<(), GateError>;
}

/// A gate that allows everything and remembers nothing: for callers without approvals
/// (tests, benchmarks).
pub struct AllowAll;

#[async_trait]
impl ToolGate for AllowAll {
    async fn check(&self, _call: &GateCall) -> Result<GateDecision, GateError> {
        Ok(GateDecision::Allow)
    }

    /// Everything is allowed on purpose: as if by the user.
    async fn begin(&self, _call_id: &str) -> Result<Option<Allowed>, GateError> {
        Ok(Some(Allowed::ByUser))
    }

    async fn finish(&self, _call_id: &str, _record: &CallRecord) -> Result<(), GateError> {
        Ok(())
    }
}

/// A call of the message being continued whose step had not finished: what the engine
/// knows of it from the ledger.
#[derive(Clone, Debug)]
pub struct PendingCall {
    pub call_id: String,
    pub tool_name: String,
    pub input: Value,
    pub state: PendingState,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PendingState {
    /// Never checked (the turn paused at the tool-call limit before it).
    Unchecked,
    /// Still waiting for the user.
    Waiting { approval_id: String },
    /// Approved; `input` is what runs (the user may have edited it).
    Approved,
    /// The user said no.
    Denied { reason: Option<String> },
    /// The approval policy said no; `reason` says which rule.
    Refused { reason: String },
    /// Ran already: only its result is reported.
    Done(ToolOutput),
    /// Was running when the app stopped; it is not run again.
    Interrupted,
}
