//! Turning stored messages into the model's prompt.

use protocol::{MessageRole, UiMessage, UiPart};
use providers::{ChatMessage, ChatRole};

/// The conversation as the model sees it: text of user and assistant messages, in order.
/// Error parts, reasoning and empty replies are left out (a failed reply is not something
/// the model said).
pub fn build_prompt<'a>(history: impl IntoIterator<Item = &'a UiMessage>) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    for message in history {
        let text: String = message
            .parts
            .iter()
            .filter_map(|part| match part {
                UiPart::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if text.trim().is_empty() {
            continue;
        }
        let role = match message.role {
            MessageRole::System => ChatRole::System,
            MessageRole::User => ChatRole::User,
            MessageRole::Assistant => ChatRole::Assistant,
        };
        out.push(ChatMessage { role, content: text });
    }
    out
}
