//! Features: per-request plugins that shape a turn (after TidGi's plugin workflow).
//!
//! A feature may assemble the prompt (`process_prompts`), look at each finished model
//! response and ask for another round (`response_complete`), and contribute hooks.
//! Features hold no state between rounds: everything they need travels in the context
//! they are given, so one feature value can serve any number of turns at once.

use std::sync::Arc;

use providers::{ChatMessage, StopReason, ToolCall, ToolSpec};

use crate::hooks::AgentHooks;
use crate::prompt_tools;

/// Whether tools reach the model through the API or through the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolCalling {
    /// The provider's own tool calling.
    #[default]
    Native,
    /// For models without it: tools are described in the system prompt and calls are
    /// parsed out of the reply text.
    Prompt,
}

/// What `process_prompts` sees.
pub struct PromptContext<'a> {
    pub step: u32,
    pub tools: &'a [ToolSpec],
    pub tool_calling: ToolCalling,
}

/// What `response_complete` sees: one finished model response.
pub struct ResponseContext<'a> {
    pub step: u32,
    pub text: &'a str,
    pub tool_calls: &'a [ToolCall],
    pub finish: &'a StopReason,
}

/// What a feature wants after a response.
#[derive(Clone, Debug, PartialEq)]
pub enum RoundAction {
    /// Nothing: the loop goes on as the response says (tools, or the end).
    Done,
    /// Another model round even though no tool was called, with these messages added
    /// after the response (e.g. a nudge to finish a cut-off answer).
    NextRound { messages: Vec<ChatMessage> },
}

pub trait Feature: Send + Sync {
    fn name(&self) -> &str;

    /// Adds to or rewrites the prompt of a model call.
    fn process_prompts(&self, _ctx: &PromptContext<'_>, _messages: &mut Vec<ChatMessage>) {}

    fn response_complete(&self, _ctx: &ResponseContext<'_>) -> RoundAction {
        RoundAction::Done
    }

    fn hooks(&self) -> Option<Arc<dyn AgentHooks>> {
        None
    }
}

/// Prompt-based tool calling's half that lives in the prompt: the tool list and the call
/// syntax, as a system message. (Its other half, reading calls out of the streamed text,
/// is in the step.)
pub struct PromptToolCalling;

impl Feature for PromptToolCalling {
    fn name(&self) -> &str {
        "prompt-tool-calling"
    }

    fn process_prompts(&self, ctx: &PromptContext<'_>, messages: &mut Vec<ChatMessage>) {
        if ctx.tool_calling != ToolCalling::Prompt || ctx.tools.is_empty() {
            return;
        }
        let section = prompt_tools::system_section(ctx.tools);
        // After any system prompt the conversation starts with, before the first turn.
        let at = messages.iter().position(|m| m.role != providers::ChatRole::System).unwrap_or(messages.len());
        messages.insert(at, ChatMessage::system(section));
    }
}
