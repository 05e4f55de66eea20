//! The [`Tool`] trait and what a call gets to work with.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use protocol::tool::{RuleCondition, ToolAnnotations, ToolOutput};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a tool is, independent of any call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// What the model calls it: letters, digits, `_` and `-`, at most 64 characters.
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// A JSON Schema object for the input.
    pub input_schema: Value,
    pub annotations: ToolAnnotations,
}

/// A tool the agent can call.
#[async_trait]
pub trait Tool: Send + Sync {
    fn definition(&self) -> &ToolDefinition;

    /// Runs one call. `input` has already passed the schema. Implementations watch
    /// `ctx.cancel` in anything that can take long.
    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// What the call would change, for the approval card (a unified diff for file
    /// edits); `None` when there is nothing more to show than the input.
    async fn preview(&self, _input: &Value, _ctx: &ToolContext) -> Option<String> {
        None
    }

    /// The arguments as approval rules see them: rule conditions are matched against
    /// this. File tools give their paths relative to the workspace and normalized, so
    /// `./.env`, `a/../.env` and the absolute path of the same file all read `.env` and a
    /// rule on a path cannot be walked around. The default is the arguments as they are.
    fn rule_input(&self, input: &Value, _ctx: &ToolContext) -> Value {
        input.clone()
    }

    /// What an "Always" answer to this call's approval covers: the conditions its saved
    /// rule gets, matched against [`Tool::rule_input`]. The default, none, covers every call
    /// of the tool; `fetch_url` covers the host asked for, so approving a local address
    /// once for good opens that host and nothing else.
    fn always_conditions(&self, _input: &Value) -> Vec<RuleCondition> {
        Vec::new()
    }

    /// Why this call deserves the user's say although the tool is read-only and would run
    /// without asking (`fetch_url` to an address on this computer or the local network).
    /// With no rule about the call, it then asks. `None`: nothing special.
    async fn caution(&self, _input: &Value, _ctx: &ToolContext) -> Option<String> {
        None
    }

    /// How many later model rounds still see this tool's results (`None`: all of them).
    /// Bulky, short-lived results (a fetched page) leave the context after a while.
    fn context_rounds(&self) -> Option<u32> {
        None
    }

    /// How long one call may take before it is cut off.
    fn timeout(&self) -> Duration {
        Duration::from_secs(60)
    }
}

/// Progress a running call reports (MCP progress notifications, long built-in work).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where progress goes; cheap to clone.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// What a call may use.
#[derive(Clone)]
pub struct ToolContext {
    /// The folder file tools work in; `None` means file tools refuse to run.
    pub workspace: Option<PathBuf>,
    pub http: reqwest::Client,
    /// Cancelled when the user stops the turn.
    pub cancel: CancellationToken,
    pub progress: ProgressSink,
    /// The model's id for this call.
    pub call_id: String,
    /// The user allowed this call: by answering its approval card, or by one of their
    /// rules. False when only the tool's default let it run: tools with extra guards
    /// apply them then (`fetch_url` keeps its private-address guard either way, but lifts
    /// it for the host an allowed call names).
    pub allowed_by_user: bool,
    /// Where a server's questions to the user go while this call runs (MCP
    /// elicitation); `None`: nobody can answer, and the server is told so.
    pub asks: Option<crate::asks::AskSink>,
}

impl ToolContext {
    /// A context for tests and previews: no workspace, a fresh client, no progress.
    pub fn detached(workspace: Option<PathBuf>) -> Self {
        Self {
            workspace,
            http: reqwest::Client::new(),
            cancel: CancellationToken::new(),
            progress: Arc::new(|_| {}),
            call_id: String::new(),
            allowed_by_user: false,
            asks: None,
        }
    }
}

/// Why a call produced no result. The message goes to the model (so it can correct
/// itself) and to the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The input makes no sense for this tool (beyond what the schema says).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The call was refused (a path outside the workspace, no workspace chosen).
    #[error("refused: {0}")]
    Refused(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    #[error("stopped before it finished")]
    Cancelled,
    #[error("timed out after {} s", .0.as_secs())]
    TimedOut(Duration),
}
