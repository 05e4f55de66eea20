//! Topics as plain data for export and import: every row of a topic's tree as stored
//! ([`Store::archive_topic`]), and a new topic written from such data in one transaction
//! ([`Store::import_topic`]). Reading and writing files is the engine's business.

use std::collections::HashMap;

use protocol::archive::{ExportedMessage, ExportedTopic};
use protocol::{ListName, MessageId, MessageRole, MessageStatus, StatusReason, TopicId, TurnId};
use serde_json::{Value, json};
use sqlx::Row;

use crate::messages::{close_open_parts, encode};
use crate::topics::model_ref;
use crate::{Result, Store, StoreError, now};

/// A topic to create from imported data.
#[derive(Clone, Debug)]
pub struct TopicImport<'a> {
    pub topic: &'a ExportedTopic,
    /// Set on the new topic's `updated_at` (so it is listed first) unless `None`.
    pub imported_at: Option<&'a str>,
}

impl Store {
    /// The topic with every message of its tree (every version and branch), oldest
    /// first, parts and metadata as stored.
    pub async fn archive_topic(&self, topic_id: &TopicId) -> Result<ExportedTopic> {
        let topic = self.get_topic(topic_id).await?;
        let rows = sqlx::query(
            "SELECT id, parent_id, turn_id, role, status, status_reason, provider_id, model_name, selected, \
             parts, metadata, created_at, updated_at FROM messages WHERE topic_id = ? ORDER BY rowid",
        )
        .bind(topic_id.as_str())
        .fetch_all(self.pool())
        .await?;
        let mut messages = Vec::with_capacity(rows.len());
        for row in &rows {
            let role = match row.try_get::<String, _>("role")?.as_str() {
                "user" => MessageRole::User,
                "system" => MessageRole::System,
                _ => MessageRole::Assistant,
            };
            let status = MessageStatus::parse(&row.try_get::<String, _>("status")?).unwrap_or(MessageStatus::Error);
            let parts_text: String = row.try_get("parts")?;
            // A damaged row is exported as what can be read of it, never dropped.
            let parts = serde_json::from_str::<Vec<Value>>(&parts_text)
                .unwrap_or_else(|_| vec![json!({ "type": "text", "text": parts_text })]);
            let metadata_text: String = row.try_get("metadata")?;
            messages.push(ExportedMessage {
                id: row.try_get("id")?,
                parent_id: row.try_get("parent_id")?,
                turn_id: row.try_get("turn_id")?,
                role,
                status,
                status_reason: row.try_get("status_reason")?,
                model: model_ref(row.try_get("provider_id")?, row.try_get("model_name")?),
                selected: row.try_get("selected")?,
                parts,
                metadata: serde_json::from_str(&metadata_text).unwrap_or_else(|_| json!({})),
                created_at: row.try_get("created_at")?,
                updated_at: row.try_get("updated_at")?,
            });
        }
        Ok(ExportedTopic {
            id: topic.id.to_string(),
            title: topic.title,
            model: topic.model,
            workspace: topic.workspace,
            assistant_id: topic.assistant_id,
            forked_from: topic.forked_from,
            system_prompt: topic.system_prompt,
            params: topic.params,
            created_at: topic.created_at,
            updated_at: topic.updated_at,
            messages,
        })
    }

    /// Writes a new topic (new topic, message and turn ids) holding the given tree, in one
    /// transaction: all of it or nothing. Messages must come parents first; a parent that
    /// is not in the topic is `StoreError::Invalid`. A reply that was still being written
    /// or waited for an approval is stored paused (`interrupted`), as a fork does.
    /// Returns the new topic's id.
    pub async fn import_topic(&self, import: &TopicImport<'_>) -> Result<TopicId> {
        let topic = import.topic;
        let topic_id = TopicId::new();
        let mut tx = self.write().await?;
        let model = topic.model.as_ref();
        sqlx::query(
            "INSERT INTO topics (id, title, provider_id, model_name, workspace, assistant_id, \
             forked_from_topic_id, forked_from_message_id, system_prompt, model_params, seen_at, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(topic_id.as_str())
        .bind(&topic.title)
        .bind(model.map(|m| m.provider_id.as_str()))
        .bind(model.map(|m| m.model.as_str()))
        .bind(topic.workspace.as_deref())
        .bind(topic.assistant_id.as_deref())
        .bind(topic.forked_from.as_ref().map(|f| f.topic_id.as_str()))
        .bind(topic.forked_from.as_ref().map(|f| f.message_id.as_str()))
        .bind(topic.system_prompt.as_deref())
        .bind(crate::topics::encode_model_params(&topic.params)?)
        .bind(now())
        .bind(&topic.created_at)
        .bind(import.imported_at.unwrap_or(topic.updated_at.as_str()))
        .execute(&mut *tx)
        .await?;

        let mut new_ids: HashMap<&str, String> = HashMap::new();
        let mut new_turns: HashMap<&str, TurnId> = HashMap::new();
        for message in &topic.messages {
            let parent = match &message.parent_id {
                None => None,
                Some(parent) => Some(new_ids.get(parent.as_str()).cloned().ok_or_else(|| {
                    StoreError::Invalid(format!("message {} comes before its parent {parent}", message.id))
                })?),
            };
            let turn = message.turn_id.as_deref().map(|t| new_turns.entry(t).or_default().clone());
            let mut metadata = match &message.metadata {
                Value::Object(_) => message.metadata.clone(),
                _ => json!({}),
            };
            if let (Some(object), Some(turn)) = (metadata.as_object_mut(), &turn)
                && object.contains_key("turnId")
            {
                object.insert("turnId".into(), Value::String(turn.to_string()));
            }
            let live = matches!(message.status, MessageStatus::Pending | MessageStatus::Streaming)
                || message.status_reason.as_deref() == Some(StatusReason::AwaitingApproval.as_str());
            let mut parts = message.parts.clone();
            let (status, reason) = if live {
                close_open_parts(&mut parts);
                (MessageStatus::Paused, Some(StatusReason::Interrupted.as_str().to_owned()))
            } else {
                (message.status, message.status_reason.clone())
            };
            let role = match message.role {
                MessageRole::User => "user",
                MessageRole::System => "system",
                MessageRole::Assistant => "assistant",
            };
            let user = message.role == MessageRole::User;
            let new_id = MessageId::new().to_string();
            let model = message.model.as_ref();
            sqlx::query(
                "INSERT INTO messages (id, topic_id, parent_id, turn_id, siblings_group_id, role, status, status_reason, \
                 provider_id, model_name, parts, metadata, selected, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&new_id)
            .bind(topic_id.as_str())
            .bind(parent)
            .bind(turn.as_ref().map(TurnId::as_str))
            .bind(if user { None } else { turn.as_ref().map(TurnId::as_str) })
            .bind(role)
            .bind(status.as_str())
            .bind(reason)
            .bind(model.map(|m| m.provider_id.as_str()))
            .bind(model.map(|m| m.model.as_str()))
            .bind(encode(&parts)?)
            .bind(encode(&metadata)?)
            .bind(message.selected)
            .bind(&message.created_at)
            .bind(&message.updated_at)
            .execute(&mut *tx)
            .await?;
            if new_ids.insert(message.id.as_str(), new_id).is_some() {
                return Err(StoreError::Invalid(format!("message id {} appears twice", message.id)));
            }
        }
        tx.commit().await?;
        self.list_changed(ListName::Topics);
        Ok(topic_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{AssistantSlot, Checkpoint, NewTurn};
    use crate::test_support::store;
    use protocol::{ModelRef, ProviderId, UiMessage, UiPart};

    fn slot(name: &str) -> AssistantSlot {
        AssistantSlot {
            message_id: MessageId::new(),
            model: ModelRef { provider_id: ProviderId("p".into()), model: name.into() },
            metadata: json!({}),
        }
    }

    async fn turn(store: &Store, topic: &TopicId, text: &str, edit_of: Option<&MessageId>) -> NewTurn {
        let turn = NewTurn {
            topic_id: topic.clone(),
            turn_id: TurnId::new(),
            user_message_id: MessageId::new(),
            user_parts: UiMessage::user_text("", text).parts,
            edit_of: edit_of.cloned(),
            assistants: vec![slot("a")],
        };
        store.insert_turn(&turn).await.unwrap();
        let reply = turn.assistants[0].message_id.clone();
        let message = UiMessage {
            id: reply.to_string(),
            role: MessageRole::Assistant,
            parts: vec![UiPart::Text { text: format!("re: {text}"), state: None }],
            metadata: Some(json!({ "turnId": turn.turn_id, "usage": { "inputTokens": 3, "outputTokens": 5 } })),
        };
        let checkpoint = Checkpoint { message_id: reply, status: MessageStatus::Success, status_reason: None, message };
        store.write_checkpoints(&[checkpoint]).await.unwrap();
        turn
    }

    /// Ids replaced by their position, so two copies of a tree compare equal.
    fn shape(topic: &ExportedTopic) -> Vec<Value> {
        let index = |id: &str| topic.messages.iter().position(|m| m.id == id);
        topic
            .messages
            .iter()
            .map(|m| {
                let mut metadata = m.metadata.clone();
                if let Some(object) = metadata.as_object_mut() {
                    object.remove("turnId");
                }
                json!([
                    m.parent_id.as_deref().map(index),
                    m.role,
                    m.status,
                    m.selected,
                    m.parts,
                    metadata,
                    m.model,
                    m.created_at
                ])
            })
            .collect()
    }

    #[tokio::test]
    async fn an_imported_tree_is_a_copy_with_new_ids_and_the_same_path() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("branchy", None).await.unwrap().id;
        let first = turn(&store, &topic, "one", None).await;
        turn(&store, &topic, "two", None).await;
        turn(&store, &topic, "one again", Some(&first.user_message_id)).await;
        let archived = store.archive_topic(&topic).await.unwrap();
        assert_eq!(archived.messages.len(), 6);

        let copy = store.import_topic(&TopicImport { topic: &archived, imported_at: None }).await.unwrap();
        assert_ne!(copy, topic);
        let again = store.archive_topic(&copy).await.unwrap();
        assert_eq!(shape(&again), shape(&archived));
        assert!(again.messages.iter().all(|m| archived.messages.iter().all(|o| o.id != m.id)));
        let texts = |path: Vec<protocol::api::StoredMessage>| path.iter().map(|m| m.message.text()).collect::<Vec<_>>();
        assert_eq!(texts(store.active_path(&copy).await.unwrap()), texts(store.active_path(&topic).await.unwrap()));
    }

    #[tokio::test]
    async fn an_import_with_a_broken_parent_leaves_nothing_behind() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        turn(&store, &topic, "one", None).await;
        let mut archived = store.archive_topic(&topic).await.unwrap();
        archived.messages[1].parent_id = Some("nowhere".into());
        let before = store.list_topics().await.unwrap().len();
        let err = store.import_topic(&TopicImport { topic: &archived, imported_at: None }).await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        assert_eq!(store.list_topics().await.unwrap().len(), before);
    }

    #[tokio::test]
    async fn a_backup_opens_and_holds_the_data() {
        let (store, dir) = store().await;
        let topic = store.create_topic("kept", None).await.unwrap().id;
        turn(&store, &topic, "hello", None).await;
        let path = dir.path().join("backup.db");
        store.backup_to(&path).await.unwrap();
        let copy = Store::open(&path).await.unwrap();
        assert_eq!(copy.get_topic(&topic).await.unwrap().title, "kept");
        assert_eq!(copy.active_path(&topic).await.unwrap().len(), 2);
        // A second backup never overwrites the first.
        assert!(store.backup_to(&path).await.is_err());
    }
}
