//! Preparing turns for the stream manager: which models answer, and what they are told.
//!
//! A new turn appends the user's message to the conversation; retry, continue and
//! add-model (re)start replies of an existing turn, whose prompt is the conversation up
//! to that turn's user message (plus, for continue, the reply's kept text).

use std::sync::Arc;

use protocol::api::{AddModelRequest, ApiFormat, ProviderKind, ReplyRequest, StoredMessage, StreamOpenRequest};
use protocol::{ApiError, MessageId, MessageRole, MessageStatus, ModelRef, TurnId, UiMessage};
use providers::{ChatMessage, CompletionRequest, LanguageModel, ProviderConfig, ProviderFormat};
use store::StoreError;
use streams::{PreparedExecution, PreparedTurn, ReplySlot, UserInput};

use crate::operations::DEFAULT_TOPIC_TITLE;
use crate::{Engine, store_error};

/// Longest automatic topic title, in characters.
const TITLE_CHARS: usize = 60;
/// Most models one turn may ask at once.
const MAX_MODELS: usize = 8;

impl Engine {
    /// A new turn: the user's message, answered by one model or several side by side.
    pub(crate) async fn prepare_turn(&self, request: StreamOpenRequest) -> Result<PreparedTurn, ApiError> {
        let text = request.text.trim();
        if text.is_empty() {
            return Err(ApiError::bad_request("text", "the message is empty"));
        }
        let store = &self.inner.store;
        let topic = store.get_topic(&request.topic_id).await.map_err(store_error)?;
        let models = match (request.models, request.model.or(topic.model.clone())) {
            (Some(models), _) if !models.is_empty() => models,
            (_, Some(model)) => vec![model],
            (_, None) => vec![self.default_model().await?],
        };
        let models = distinct(models)?;

        let history = store.list_messages(&topic.id).await.map_err(store_error)?;
        let user_message_id = request.message_id.unwrap_or_default();
        let user = UiMessage::user_text(user_message_id.as_str(), text);
        let conversation: Vec<&UiMessage> = prompt_messages(&history, None).chain([&user]).collect();
        let mut executions = Vec::with_capacity(models.len());
        for model in models {
            executions.push(self.execution(MessageId::new(), model, &conversation, ReplySlot::New).await?);
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
            user: Some(UserInput { message_id: user_message_id, text: text.to_owned() }),
            executions,
        })
    }

    /// Generate one reply again from scratch (`continue_reply` false), or continue it
    /// after the text it kept (a stopped, stalled or interrupted reply).
    pub(crate) async fn prepare_reply(
        &self,
        request: ReplyRequest,
        continue_reply: bool,
    ) -> Result<PreparedTurn, ApiError> {
        let history = self.inner.store.list_messages(&request.topic_id).await.map_err(store_error)?;
        let reply = history
            .iter()
            .find(|m| m.id == request.message_id && m.message.role == MessageRole::Assistant)
            .ok_or_else(|| ApiError::not_found("reply", &request.message_id))?;
        let (Some(turn_id), Some(model)) = (reply.turn_id.clone(), reply.model.clone()) else {
            return Err(ApiError::bad_request("messageId", "this reply has no turn or model to run again"));
        };
        if continue_reply && reply.status != MessageStatus::Paused {
            return Err(ApiError::bad_request(
                "messageId",
                "only a stopped or interrupted reply can be continued; retry it instead",
            ));
        }
        let mut conversation: Vec<&UiMessage> = prompt_messages(&history, Some(&turn_id)).collect();
        let slot = if continue_reply {
            conversation.push(&reply.message);
            ReplySlot::Continue(reply.message.clone())
        } else {
            ReplySlot::Restart
        };
        let execution = self.execution(reply.id.clone(), model, &conversation, slot).await?;
        Ok(PreparedTurn { topic_id: request.topic_id, turn_id, user: None, executions: vec![execution] })
    }

    /// One more model answers an existing turn, in a new reply beside the others.
    pub(crate) async fn prepare_added_model(&self, request: AddModelRequest) -> Result<PreparedTurn, ApiError> {
        let history = self.inner.store.list_messages(&request.topic_id).await.map_err(store_error)?;
        if !history.iter().any(|m| m.turn_id.as_ref() == Some(&request.turn_id) && m.message.role == MessageRole::User)
        {
            return Err(ApiError::not_found("turn", &request.turn_id));
        }
        // The stored turn is the truth even after the live one was evicted.
        if history.iter().any(|m| {
            m.turn_id.as_ref() == Some(&request.turn_id)
                && m.message.role == MessageRole::Assistant
                && m.model.as_ref() == Some(&request.model)
        }) {
            return Err(ApiError::conflict(format!("{} is already answering in this turn", request.model.model)));
        }
        let conversation: Vec<&UiMessage> = prompt_messages(&history, Some(&request.turn_id)).collect();
        let execution = self.execution(MessageId::new(), request.model, &conversation, ReplySlot::New).await?;
        Ok(PreparedTurn {
            topic_id: request.topic_id,
            turn_id: request.turn_id,
            user: None,
            executions: vec![execution],
        })
    }

    async fn execution(
        &self,
        message_id: MessageId,
        model_ref: ModelRef,
        conversation: &[&UiMessage],
        slot: ReplySlot,
    ) -> Result<PreparedExecution, ApiError> {
        let provider = match self.inner.store.get_provider(&model_ref.provider_id).await {
            Ok(provider) => provider,
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::bad_request(
                    "model",
                    format!("no provider {} (was it removed?): pick another model", model_ref.provider_id),
                ));
            }
            Err(err) => return Err(store_error(err)),
        };
        let api_key = match provider.kind {
            ProviderKind::Demo => None,
            ProviderKind::OpenaiCompatible => self.api_key(&provider.id)?,
        };
        let mut config =
            ProviderConfig::new(provider.name.clone(), provider.base_url.clone(), api_key, self.inner.http.clone());
        config.retry = self.inner.config.retry;
        let model: Arc<dyn LanguageModel> = providers::model_for(wire_format(provider.format), config);
        let messages: Vec<ChatMessage> = agent::build_prompt(conversation.iter().copied());
        if messages.is_empty() {
            return Err(ApiError::bad_request("text", "there is nothing to answer in this conversation"));
        }
        Ok(PreparedExecution {
            message_id,
            completion: CompletionRequest {
                model: model_ref.model.clone(),
                messages,
                temperature: None,
                max_tokens: None,
            },
            model_ref,
            provider_name: provider.name,
            model,
            slot,
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

pub(crate) fn wire_format(format: ApiFormat) -> ProviderFormat {
    match format {
        ApiFormat::OpenaiChat => ProviderFormat::OpenaiChat,
        ApiFormat::OpenaiResponses => ProviderFormat::OpenaiResponses,
        ApiFormat::Anthropic => ProviderFormat::Anthropic,
        ApiFormat::Gemini => ProviderFormat::Gemini,
    }
}

pub(crate) fn api_format(format: ProviderFormat) -> ApiFormat {
    match format {
        ProviderFormat::OpenaiChat => ApiFormat::OpenaiChat,
        ProviderFormat::OpenaiResponses => ApiFormat::OpenaiResponses,
        ProviderFormat::Anthropic => ApiFormat::Anthropic,
        ProviderFormat::Gemini => ApiFormat::Gemini,
    }
}

/// The conversation a model sees: each earlier turn's user message and one reply (the
/// first that has text), in order. With `upto`, stops at that turn's user message.
fn prompt_messages<'a>(history: &'a [StoredMessage], upto: Option<&TurnId>) -> impl Iterator<Item = &'a UiMessage> {
    let mut out: Vec<&UiMessage> = Vec::new();
    let mut answered: Option<&TurnId> = None;
    for stored in history {
        let turn = stored.turn_id.as_ref();
        match stored.message.role {
            MessageRole::User => {
                out.push(&stored.message);
                if upto.is_some() && turn == upto {
                    break;
                }
            }
            MessageRole::Assistant => {
                let has_text = stored
                    .message
                    .parts
                    .iter()
                    .any(|p| matches!(p, protocol::UiPart::Text { text, .. } if !text.trim().is_empty()));
                if has_text && (turn.is_none() || answered != turn) {
                    out.push(&stored.message);
                    answered = turn;
                }
            }
            MessageRole::System => out.push(&stored.message),
        }
    }
    out.into_iter()
}

/// A turn asks each model once, and not too many at a time.
fn distinct(models: Vec<ModelRef>) -> Result<Vec<ModelRef>, ApiError> {
    let mut out: Vec<ModelRef> = Vec::with_capacity(models.len());
    for model in models {
        if out.contains(&model) {
            return Err(ApiError::bad_request("models", format!("{model} is listed twice")));
        }
        out.push(model);
    }
    if out.len() > MAX_MODELS {
        return Err(ApiError::bad_request("models", format!("at most {MAX_MODELS} models can answer one message")));
    }
    Ok(out)
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
