//! `context-rounds`: tool results that stay in the context for a limited number of model
//! calls (a tool's `context_rounds`, stored with its output as `contextRounds`).
//!
//! The turn counts the rounds (it knows when a model call was made and when a result
//! came); this feature only decides what the model sees: a result whose rounds are used
//! up is replaced by a note, so the user still sees it and the model knows it was there.

use std::collections::HashMap;

use providers::{ChatMessage, ContentPart, ToolResult};

use super::{Feature, PromptContext};

pub struct ContextRounds;

impl ContextRounds {
    pub const NAME: &'static str = "context-rounds";
    /// What it does, as the assistant form shows it.
    pub const DESCRIPTION: &'static str =
        "Tool results that only stay in the conversation for a few rounds are shortened to a note afterwards.";
}

impl Feature for ContextRounds {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn process_prompts(&self, ctx: &PromptContext<'_>, messages: &mut Vec<ChatMessage>) {
        if ctx.rounds_left.values().all(|rounds| *rounds > 0) {
            return;
        }
        for message in messages.iter_mut() {
            if let Some(shortened) = context_message(message, ctx.rounds_left) {
                *message = shortened;
            }
        }
    }
}

/// A conversation message as the next model call sees it, when it has results whose
/// rounds are used up (they are replaced by a note); `None` when it has none.
fn context_message(message: &ChatMessage, rounds_left: &HashMap<String, u32>) -> Option<ChatMessage> {
    let expired = |result: &ToolResult| rounds_left.get(&result.call_id) == Some(&0);
    if !message.content.iter().any(|part| matches!(part, ContentPart::ToolResult(r) if expired(r))) {
        return None;
    }
    let content = message
        .content
        .iter()
        .map(|part| match part {
            ContentPart::ToolResult(result) if expired(result) => ContentPart::ToolResult(ToolResult {
                content: vec![ContentPart::text(format!(
                    "[this result of {} was removed from the context to save space; the user still sees it]",
                    result.name
                ))],
                ..result.clone()
            }),
            other => other.clone(),
        })
        .collect();
    Some(ChatMessage::new(message.role, content))
}
