//! Features: per-turn plugins that shape a turn (after TidGi's plugin workflow).
//!
//! A feature may assemble the prompt (`process_prompts`), look at each finished model
//! response and ask for another round (`response_complete`), and contribute hooks.
//! Features hold no state between rounds: everything they need travels in the context
//! they are given, so one feature value can serve any number of turns at once.
//!
//! Features are registered by name in a [`FeatureRegistry`]; a turn enables the ones its
//! configuration names ([`crate::TurnRequest::feature_names`]), or, when it names none,
//! the ones [`default_features`] derives from the fields a turn has always had. The
//! built-in features, in the order they compose:
//!
//! | name | what it does | enabled by default |
//! |---|---|---|
//! | `context-rounds` | a tool result that stays in the context for N rounds is replaced by a note once they are used up ([`ContextRounds`]) | always |
//! | `prompt-tool-calling` | tools described in the system prompt, earlier calls and results written as text ([`PromptToolCalling`]) | `ToolCalling::Prompt` |
//! | `tool-loop` | after a response that called tools, another round so the model sees the results ([`ToolLoop`]) | always |
//!
//! A new strategy is a new feature and one [`FeatureRegistry::register`] line, not an
//! edit of the loop.

mod context_rounds;
mod prompt_tool_calling;
mod tool_loop;

use std::collections::HashMap;
use std::sync::Arc;

use providers::{ChatMessage, StopReason, ToolCall, ToolSpec};

use crate::hooks::AgentHooks;

pub use context_rounds::ContextRounds;
pub use prompt_tool_calling::PromptToolCalling;
pub use tool_loop::ToolLoop;

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
    /// Tool results that only a limited number of model calls see: how many more do, by
    /// call id (0: this call no longer sees it).
    pub rounds_left: &'a HashMap<String, u32>,
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
    /// Nothing: as far as this feature goes, the turn may end here.
    Done,
    /// Another model round, with these messages added after the response (and after the
    /// results of its tool calls, if it made any): e.g. a nudge to finish a cut-off answer.
    NextRound { messages: Vec<ChatMessage> },
}

pub trait Feature: Send + Sync {
    fn name(&self) -> &str;

    /// Adds to or rewrites the prompt of a model call.
    fn process_prompts(&self, _ctx: &PromptContext<'_>, _messages: &mut Vec<ChatMessage>) {}

    /// Whether the turn goes on after this response. The first feature that asks for
    /// another round wins; the later ones are not asked.
    fn response_complete(&self, _ctx: &ResponseContext<'_>) -> RoundAction {
        RoundAction::Done
    }

    fn hooks(&self) -> Option<Arc<dyn AgentHooks>> {
        None
    }
}

/// Makes a feature.
pub type FeatureConstructor = fn() -> Arc<dyn Feature>;

/// A name the configuration gave that no feature is registered under.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("there is no feature named {name:?}; the features are: {}", known.join(", "))]
pub struct UnknownFeature {
    pub name: String,
    pub known: Vec<String>,
}

/// Features by name. Whatever order a configuration names them in, enabled features
/// compose in the order they were registered: the prompt passes through them in that
/// order, and the first to ask for another round wins.
#[derive(Clone)]
struct Registered {
    name: &'static str,
    description: &'static str,
    make: FeatureConstructor,
}

#[derive(Clone, Default)]
pub struct FeatureRegistry {
    entries: Vec<Registered>,
}

impl FeatureRegistry {
    /// No features.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in features (see the module docs for the table).
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        // Results past their rounds are shortened while the prompt is still in its native
        // shape (results known by call id), before prompt tool calling writes it as text.
        registry.register(ContextRounds::NAME, ContextRounds::DESCRIPTION, || Arc::new(ContextRounds));
        registry.register(PromptToolCalling::NAME, PromptToolCalling::DESCRIPTION, || Arc::new(PromptToolCalling));
        registry.register(ToolLoop::NAME, ToolLoop::DESCRIPTION, || Arc::new(ToolLoop));
        registry
    }

    /// Registers a feature with a one-line description of what it does (shown to the
    /// user); a name registered before is replaced, keeping its place.
    pub fn register(&mut self, name: &'static str, description: &'static str, make: FeatureConstructor) {
        let entry = Registered { name, description, make };
        match self.entries.iter_mut().find(|known| known.name == name) {
            Some(known) => *known = entry,
            None => self.entries.push(entry),
        }
    }

    /// The registered names, in composition order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|entry| entry.name)
    }

    /// The registered features as a client lists them (`assistant_features_list`), in
    /// composition order.
    pub fn describe(&self) -> Vec<protocol::api::FeatureInfo> {
        self.entries
            .iter()
            .map(|entry| protocol::api::FeatureInfo {
                name: entry.name.to_owned(),
                description: entry.description.to_owned(),
            })
            .collect()
    }

    /// The features `names` enables, in composition order (a name given twice counts
    /// once). Any name that is not registered is an error: nothing is built then.
    pub fn build<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<Arc<dyn Feature>>, UnknownFeature> {
        if let Some(unknown) = names.iter().map(AsRef::as_ref).find(|name| !self.names().any(|known| known == *name)) {
            return Err(UnknownFeature { name: unknown.to_owned(), known: self.names().map(str::to_owned).collect() });
        }
        Ok(self
            .entries
            .iter()
            .filter(|entry| names.iter().any(|wanted| wanted.as_ref() == entry.name))
            .map(|entry| (entry.make)())
            .collect())
    }
}

/// The features a turn whose configuration names none has: what the loop did before
/// features had names. Results keep their context rounds, a model without native tool
/// calling gets its tools through the prompt, and the turn goes on while the model calls
/// tools.
pub fn default_features(tool_calling: ToolCalling) -> Vec<&'static str> {
    let mut names = vec![ContextRounds::NAME];
    if tool_calling == ToolCalling::Prompt {
        names.push(PromptToolCalling::NAME);
    }
    names.push(ToolLoop::NAME);
    names
}

#[cfg(test)]
mod tests;
