//! The driver seam: what the host needs from any agent runtime. A driver connects a
//! session (starting a process, opening a socket); a [`Connection`] takes prompts and
//! answers, and yields [`DriverEvent`]s in the runtime's order.
//!
//! A driver reports facts and answers questions; it makes no decisions. Steering has no
//! `redirect` here: a runtime that can take a message mid-turn asks at each tool
//! boundary ([`DriverEvent::BeforeTool`]) and the host answers with the message
//! ([`Connection::answer_before_tool`]); the host also sees where the agent starts acting
//! on it (the next [`DriverEvent::ModelCallStarted`]) and what never went in. A runtime
//! without such boundaries simply never asks, and its steering messages run as turns of
//! their own. Tool policy is not pushed into the runtime either: every permission prompt
//! comes back to Colloquy's gate ([`DriverEvent::PermissionRequest`]); only the
//! permission mode is the runtime's own ([`Connection::set_permission_mode`]).

use std::path::PathBuf;

use async_trait::async_trait;
use protocol::tool::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much the agent may do without asking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Ask before anything that changes files or runs commands.
    #[default]
    Default,
    /// File edits run without asking; commands still ask.
    AcceptEdits,
    /// Plan only; nothing is changed.
    Plan,
    /// Never ask: what would need asking is refused.
    DontAsk,
}

impl PermissionMode {
    /// The CLI's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
        }
    }
}

/// What a session runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSpec {
    pub session_id: String,
    /// Which runtime runs it, with which settings (e.g. an ACP agent's id and when it was
    /// last edited): a warm connection made for another is not reused.
    pub runtime: String,
    /// The folder the agent works in.
    pub workspace: PathBuf,
    pub model: String,
    pub permission_mode: PermissionMode,
    /// Extra environment for the runtime (credentials of the chosen provider).
    pub env: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The runtime is not installed (or not where it was said to be).
    #[error("{0}")]
    NotInstalled(String),
    /// Resuming the runtime's own session failed; nothing was started in its place.
    #[error("{0}")]
    ResumeFailed(String),
    /// The runtime did not start, or stopped, or broke the protocol.
    #[error("{0}")]
    Failed(String),
}

/// A file sent with a prompt: its media type, name and bytes (standard base64).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptFile {
    pub media_type: String,
    pub filename: String,
    pub data: String,
}

/// What a runtime takes in a prompt besides text (ACP's `promptCapabilities`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptCapabilities {
    /// Images, as image blocks.
    pub image: bool,
    /// Files' contents embedded in the prompt (resources); without it a text file goes as
    /// a link to its contents (a `data:` URI) and a PDF cannot go.
    pub embedded_context: bool,
}

impl PromptCapabilities {
    /// Why `file` cannot go into a prompt of `agent`, or `None` when it can.
    pub fn refusal(&self, agent: &str, file: &PromptFile) -> Option<String> {
        let name = &file.filename;
        let media = file.media_type.as_str();
        if media.starts_with("image/") {
            return (!self.image).then(|| format!("{agent} does not take images, so {name} cannot be sent to it"));
        }
        if media.starts_with("text/") || media == "application/json" {
            return None;
        }
        if !self.embedded_context {
            return Some(format!(
                "{agent} takes no files embedded in a message, so {name} ({media}) cannot be sent to it; text files \
                 go as links"
            ));
        }
        None
    }
}

/// How to answer a permission request.
#[derive(Clone, Debug, PartialEq)]
pub enum PermissionAnswer {
    /// Run it with `input`; `always` also lets this tool run without asking for the rest
    /// of the session.
    Allow { input: Value, always: Option<String> },
    /// Refuse it; the model is told `message`.
    Deny { message: String },
}

/// Something the runtime did, in its order.
#[derive(Clone, Debug, PartialEq)]
pub enum DriverEvent {
    /// The runtime's own session id: the token to resume it with.
    SessionStarted {
        resume_token: String,
    },
    /// A model call begins (a new assistant message).
    ModelCallStarted,
    TextDelta {
        block: u32,
        text: String,
    },
    ThinkingDelta {
        block: u32,
        text: String,
    },
    BlockStopped {
        block: u32,
    },
    ToolUseStarted {
        block: u32,
        id: String,
        name: String,
    },
    ToolInputDelta {
        block: u32,
        json: String,
    },
    /// A tool call with its whole input.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// Assistant text that was not streamed (e.g. an error the runtime wrote itself).
    AssistantText {
        text: String,
    },
    ToolResult {
        id: String,
        output: ToolOutput,
    },
    /// What a running tool call has put out so far (a command's output): shown on its
    /// part until its result replaces it.
    ToolProgress {
        id: String,
        output: ToolOutput,
    },
    /// The runtime asks whether a tool may run.
    PermissionRequest {
        request_id: String,
        tool_use_id: Option<String>,
        tool_name: String,
        input: Value,
        /// What the approval card shows besides the input (a diff, the agent's options).
        preview: Option<String>,
    },
    /// The runtime no longer needs the answer (the turn was interrupted).
    PermissionCancelled {
        request_id: String,
    },
    /// A tool is about to run: the boundary where a steering message can go in.
    BeforeTool {
        request_id: String,
        tool_use_id: Option<String>,
    },
    /// The runtime is retrying a failed model call.
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        error: String,
    },
    CompactionStarted,
    CompactionFinished {
        trigger: String,
        pre_tokens: Option<u64>,
        post_tokens: Option<u64>,
    },
    CompactionFailed {
        message: String,
    },
    /// The agent's plan for the turn, as it stands now (replaces the one before): a list
    /// of `{ content, priority, status }`.
    Plan {
        entries: Value,
    },
    /// The slash commands the agent offers now: a list of `{ name, description, input? }`.
    Commands {
        commands: Value,
    },
    /// The agent's mode (its permission mode, say) is now `mode`.
    ModeChanged {
        mode: String,
    },
    /// The modes the agent offers (a list of `{ id, name, description? }`) and the one it
    /// is in, as it said when the session started.
    Modes {
        current: String,
        available: Value,
    },
    /// The turn is over.
    TurnFinished {
        resume_token: Option<String>,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        cost_usd: Option<f64>,
        /// Why it failed, when it did.
        error: Option<String>,
        /// Ended by an interrupt.
        interrupted: bool,
    },
}

#[async_trait]
pub trait Driver: Send + Sync {
    /// Shown in messages, e.g. "Claude Code".
    fn name(&self) -> &str;

    /// Whether the runtime takes a steering message mid-turn (it asks at tool boundaries,
    /// [`DriverEvent::BeforeTool`]). One that does not (ACP) runs it as the next turn, and
    /// the reply says so.
    fn steers_mid_turn(&self) -> bool {
        true
    }

    /// Starts a connection; with `resume`, continues the runtime's session of that token
    /// (and fails rather than starting a new one).
    async fn connect(&self, spec: &SessionSpec, resume: Option<&str>) -> Result<Box<dyn Connection>, DriverError>;
}

/// What can be asked of a live connection while a running turn holds it (a `Send`,
/// shareable handle beside the [`Connection`]).
#[async_trait]
pub trait ConnectionControl: Send + Sync {
    /// Switches the agent to one of the modes it offers (ACP `session/set_mode`); on
    /// success a [`DriverEvent::ModeChanged`] follows in the connection's events.
    async fn set_mode(&self, mode: &str) -> Result<(), DriverError>;

    /// Whether the connection has ended.
    fn is_closed(&self) -> bool;
}

#[async_trait]
pub trait Connection: Send {
    /// A handle for what may be asked while a turn holds the connection; `None` when the
    /// runtime offers nothing of the kind.
    fn control(&self) -> Option<std::sync::Arc<dyn ConnectionControl>> {
        None
    }

    /// Sends the user's message: a new turn, or (mid-turn) a message the runtime takes in.
    async fn send(&mut self, text: &str) -> Result<(), DriverError>;

    /// What the runtime takes in a prompt besides text; `None`: text only.
    fn prompt_capabilities(&self) -> Option<PromptCapabilities> {
        None
    }

    /// Sends the user's message with files (checked against
    /// [`Connection::prompt_capabilities`] before).
    async fn send_with(&mut self, text: &str, files: &[PromptFile]) -> Result<(), DriverError> {
        if files.is_empty() {
            self.send(text).await
        } else {
            Err(DriverError::Failed("this agent takes text only".into()))
        }
    }

    /// The next event; `None` once the connection has ended.
    async fn next_event(&mut self) -> Option<DriverEvent>;

    async fn answer_permission(&mut self, request_id: &str, answer: PermissionAnswer) -> Result<(), DriverError>;

    /// Answers [`DriverEvent::BeforeTool`], optionally with context the model reads next
    /// (how a steering message goes in).
    async fn answer_before_tool(&mut self, request_id: &str, context: Option<String>) -> Result<(), DriverError>;

    /// Stops the running turn; its `TurnFinished` follows.
    async fn interrupt(&mut self) -> Result<(), DriverError>;

    async fn set_permission_mode(&mut self, mode: PermissionMode) -> Result<(), DriverError>;

    /// Whether the connection has ended (the process exited) or is not to take another
    /// turn; the next turn connects again, resuming.
    fn is_closed(&self) -> bool;

    /// What the runtime left for the user to read, for messages: how it ended (once it
    /// has), what it printed that was not its protocol, its error output lately.
    async fn diagnostics(&mut self) -> Option<String>;

    /// Ends the connection.
    async fn close(self: Box<Self>);
}
