//! `tool-loop`: the turn goes on while the model calls tools. After a response that made
//! tool calls (the loop runs them), it asks for another round so the model sees their
//! results; a response without calls ends the turn as far as it goes. Without it a turn
//! is one model call, whose calls are run and shown but not answered.

use super::{Feature, ResponseContext, RoundAction};

pub struct ToolLoop;

impl ToolLoop {
    pub const NAME: &'static str = "tool-loop";
    /// What it does, as the assistant form shows it.
    pub const DESCRIPTION: &'static str =
        "After the model calls tools, it gets another round to read their results and go on.";
}

impl Feature for ToolLoop {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn response_complete(&self, ctx: &ResponseContext<'_>) -> RoundAction {
        if ctx.tool_calls.is_empty() { RoundAction::Done } else { RoundAction::NextRound { messages: Vec::new() } }
    }
}
