//! `prompt-tool-calling`: tool calling through the prompt, for models without native
//! tools. Its prompt half is here: earlier calls and results written as the text the model
//! reads (`<tool_call>` / `<tool_result>`, see `prompt_tools.rs`) and the tool list
//! with the call syntax as a system message. Its other half, reading calls out of the
//! streamed text, is in the step; the loop sends no native tool list to such a model.
//! It does nothing for a model with native tool calling.

use providers::{ChatMessage, ChatRole};

use super::{Feature, PromptContext, ToolCalling};
use crate::prompt::prompt_form;
use crate::prompt_tools;

pub struct PromptToolCalling;

impl PromptToolCalling {
    pub const NAME: &'static str = "prompt-tool-calling";
    /// What it does, as the assistant form shows it.
    pub const DESCRIPTION: &'static str =
        "For models without native tool calling: tools are described in the prompt and calls read from the reply.";
}

impl Feature for PromptToolCalling {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn process_prompts(&self, ctx: &PromptContext<'_>, messages: &mut Vec<ChatMessage>) {
        if ctx.tool_calling != ToolCalling::Prompt {
            return;
        }
        *messages = prompt_form(std::mem::take(messages));
        if ctx.tools.is_empty() {
            return;
        }
        let section = prompt_tools::system_section(ctx.tools);
        // After any system prompt the conversation starts with, before the first turn.
        let at = messages.iter().position(|m| m.role != ChatRole::System).unwrap_or(messages.len());
        messages.insert(at, ChatMessage::system(section));
    }
}
