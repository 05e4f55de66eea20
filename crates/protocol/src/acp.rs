//! Coding agents reached over the Agent Client Protocol, as settings shows them: how to
//! start one. Sessions pick one of these (`AgentSessionInput::acp_agent_id`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An environment variable of an agent as settings shows it. A secret one's value is kept
/// in the secret store (the keychain, or the private file) and never leaves the backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AcpVariable {
    pub name: String,
    pub secret: bool,
    /// The value of a variable that is not secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value: Option<String>,
    /// False when a secret one has no value in the secret store (lost, or unreadable).
    pub set: bool,
}

/// An environment variable as settings saves it. A secret one whose `value` is `null`
/// keeps the value stored for that name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcpVariableInput {
    pub name: String,
    #[serde(default)]
    pub secret: bool,
    #[serde(default)]
    pub value: Option<String>,
}

/// A coding agent Colloquy starts as a program speaking ACP on its stdin/stdout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AcpAgent {
    pub id: String,
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub variables: Vec<AcpVariable>,
    /// The folder new sessions with this agent work in, when they name none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// Add or edit an agent (also what a preset is).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcpAgentInput {
    pub name: String,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub variables: Vec<AcpVariableInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAcpAgent {
    pub id: String,
    pub agent: AcpAgentInput,
}

fn preset(name: &str, command: &str, args: &[&str]) -> AcpAgentInput {
    AcpAgentInput {
        name: name.to_owned(),
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        variables: Vec::new(),
        workspace: None,
    }
}

/// Agents known to speak ACP, as a starting point the user edits before saving.
pub fn acp_presets() -> Vec<AcpAgentInput> {
    vec![
        preset("Claude Code (ACP)", "npx", &["@zed-industries/claude-agent-acp"]),
        preset("Qwen Code", "qwen", &["--acp"]),
        preset("Gemini CLI", "gemini", &["--experimental-acp"]),
        preset("Codex", "npx", &["@zed-industries/codex-acp"]),
        preset("OpenCode", "opencode", &["acp"]),
    ]
}
