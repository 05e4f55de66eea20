//! Preparing a turn: which model answers, and what it is told.

use std::sync::Arc;

use protocol::api::{ProviderKind, StreamOpenRequest};
use protocol::{ApiError, MessageId, ModelRef, TurnId, UiMessage};
use providers::{ChatMessage, CompletionRequest, LanguageModel, OpenAiChat, OpenAiChatConfig};
use store::StoreError;
use streams::{PreparedExecution, PreparedTurn};

use crate::operations::DEFAULT_TOPIC_TITLE;
use crate::{Engine, store_error};

/// Longest automatic topic title, in characters.
const TITLE_CHARS: usize = 60;

impl Engine {
    pub(crate) async fn prepare_turn(&self, request: StreamOpenRequest) -> Result<PreparedTurn, ApiError> {
        let text = request.text.trim();
        if text.is_empty() {
            return Err(ApiError::bad_request("text", "the message is empty"));
        }
        let store = &self.inner.store;
        let topic = store.get_topic(&request.topic_id).await.map_err(store_error)?;
        let model_ref = match request.model.or(topic.model.clone()) {
            Some(model) => model,
            None => self.default_model().await?,
        };
        let provider = match store.get_provider(&model_ref.provider_id).await {
            Ok(provider) => provider,
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::bad_request(
                    "model",
                    "the provider for this topic was removed; pick another model",
                ));
            }
            Err(err) => return Err(store_error(err)),
        };
        let api_key = match provider.kind {
            ProviderKind::Demo => None,
            ProviderKind::OpenaiCompatible => self.api_key(&provider.id)?,
        };
        let model: Arc<dyn LanguageModel> = Arc::new(OpenAiChat::new(OpenAiChatConfig {
            provider_name: provider.name.clone(),
            base_url: provider.base_url.clone(),
            api_key,
            http: self.inner.http.clone(),
        }));

        let history = store.list_messages(&topic.id).await.map_err(store_error)?;
        let user_message_id = request.message_id.unwrap_or_default();
        let user = UiMessage::user_text(user_message_id.as_str(), text);
        let mut messages: Vec<ChatMessage> = agent::build_prompt(history.iter().map(|m| &m.message).chain([&user]));
        // The reply answers the whole conversation, never an empty prompt.
        if messages.is_empty() {
            messages.push(ChatMessage::user(text));
        }

        if topic.title == DEFAULT_TOPIC_TITLE && history.is_empty() {
            let title = auto_title(text);
            if let Err(err) = store.update_topic(&topic.id, Some(&title), None).await {
                tracing::warn!(error = %err, "could not title the topic");
            }
        }

        Ok(PreparedTurn {
            topic_id: topic.id,
            turn_id: TurnId::new(),
            user_message_id,
            user_text: text.to_owned(),
            executions: vec![PreparedExecution {
                message_id: MessageId::new(),
                completion: CompletionRequest {
                    model: model_ref.model.clone(),
                    messages,
                    temperature: None,
                    max_tokens: None,
                },
                model_ref,
                provider_name: provider.name,
                model,
            }],
        })
    }

    /// The first provider's default model: what a topic without a model of its own uses.
    async fn default_model(&self) -> Result<ModelRef, ApiError> {
        let providers = self.inner.store.list_providers().await.map_err(store_error)?;
        providers.into_iter().next().map(|p| ModelRef { provider_id: p.id, model: p.default_model }).ok_or_else(|| {
            ApiError::bad_request("model", "no provider is configured: add one in Settings, or try the demo provider")
        })
    }
}

/// A topic title from the first message: its first line, cut at a word boundary.
fn auto_title(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or(text).trim();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TITLE_CHARS).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > TITLE_CHARS / 2 => &cut[..space],
        _ => &cut,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::auto_title;

    #[test]
    fn titles_come_from_the_first_line_and_are_cut_at_a_word() {
        assert_eq!(auto_title("\n  Hello there\nmore"), "Hello there");
        let long = "word ".repeat(30);
        let title = auto_title(&long);
        assert!(title.ends_with('…'));
        assert!(title.chars().count() <= 61);
    }
}
