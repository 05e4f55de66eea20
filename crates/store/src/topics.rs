//! Topics: conversations, each with an optional model of its own.

use protocol::api::{ForkOrigin, ModelParams, Topic};
use protocol::{MessageId, ModelRef, ProviderId, TopicId};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// The columns every read selects (a macro so queries stay `&'static str`).
macro_rules! topic_columns {
    () => {
        "id, title, provider_id, model_name, workspace, assistant_id, forked_from_topic_id, forked_from_message_id, \
         system_prompt, model_params, created_at, updated_at"
    };
}

fn from_row(row: &SqliteRow) -> Result<Topic> {
    let provider_id: Option<String> = row.try_get("provider_id")?;
    let model_name: Option<String> = row.try_get("model_name")?;
    Ok(Topic {
        id: TopicId(row.try_get("id")?),
        title: row.try_get("title")?,
        model: model_ref(provider_id, model_name),
        workspace: row.try_get("workspace")?,
        assistant_id: row.try_get("assistant_id")?,
        forked_from: match (
            row.try_get::<Option<String>, _>("forked_from_topic_id")?,
            row.try_get::<Option<String>, _>("forked_from_message_id")?,
        ) {
            (Some(topic_id), Some(message_id)) => {
                Some(ForkOrigin { topic_id: TopicId(topic_id), message_id: MessageId(message_id) })
            }
            _ => None,
        },
        system_prompt: row.try_get("system_prompt")?,
        params: model_params(row)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// What [`Store::change_topic`] changes: `None` leaves a field as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct TopicChanges<'a> {
    pub title: Option<&'a str>,
    pub model: Option<&'a ModelRef>,
    pub workspace: Option<Option<&'a str>>,
    pub assistant_id: Option<Option<&'a str>>,
    pub system_prompt: Option<Option<&'a str>>,
    pub params: Option<&'a ModelParams>,
}

/// The row's `model_params`; a damaged value reads as none set (the defaults apply, and
/// the next change writes a good one).
pub(crate) fn model_params(row: &SqliteRow) -> Result<ModelParams> {
    Ok(row
        .try_get::<Option<String>, _>("model_params")?
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or_default())
}

/// `None` for no settings, so an empty object is never stored.
pub(crate) fn encode_model_params(params: &ModelParams) -> Result<Option<String>> {
    if params.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(params).map(Some).map_err(|e| StoreError::Encode(e.to_string()))
}

pub(crate) fn model_ref(provider_id: Option<String>, model: Option<String>) -> Option<ModelRef> {
    Some(ModelRef { provider_id: ProviderId(provider_id?), model: model? })
}

impl Store {
    /// Chat topics, newest first (agent sessions' topics are listed as sessions).
    pub async fn list_topics(&self) -> Result<Vec<Topic>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            topic_columns!(),
            " FROM topics WHERE id NOT LIKE ? || '%' ORDER BY updated_at DESC, id DESC"
        ))
        .bind(TopicId::AGENT_SESSION_PREFIX)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_topic(&self, id: &TopicId) -> Result<Topic> {
        let row = sqlx::query(concat!("SELECT ", topic_columns!(), " FROM topics WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(self.pool())
            .await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "topic", id: id.to_string() }),
        }
    }

    pub async fn create_topic(&self, title: &str, model: Option<&ModelRef>) -> Result<Topic> {
        self.create_topic_with_id(&TopicId::new(), title, model).await
    }

    /// A topic under an id the caller chose (an AI SDK client's chat id): made if no topic
    /// has it, else the one that does (two first requests at once make one topic).
    pub async fn create_topic_with_id(&self, id: &TopicId, title: &str, model: Option<&ModelRef>) -> Result<Topic> {
        let id = id.clone();
        let now = now();
        let made = sqlx::query(
            "INSERT INTO topics (id, title, provider_id, model_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(id.as_str())
        .bind(title)
        .bind(model.map(|m| m.provider_id.as_str()))
        .bind(model.map(|m| m.model.as_str()))
        .bind(&now)
        .bind(&now)
        .execute(&mut *self.writer().await?)
        .await?;
        if made.rows_affected() > 0 {
            self.topic_list_changed(&id);
        }
        self.get_topic(&id).await
    }

    /// Changes only what is given.
    pub async fn update_topic(&self, id: &TopicId, title: Option<&str>, model: Option<&ModelRef>) -> Result<Topic> {
        self.change_topic(id, &TopicChanges { title, model, ..TopicChanges::default() }).await
    }

    /// Changes only what is given; `Some(None)` clears a workspace, assistant or system
    /// prompt.
    pub async fn change_topic(&self, id: &TopicId, changes: &TopicChanges<'_>) -> Result<Topic> {
        let params = changes.params.map(encode_model_params).transpose()?;
        let result = sqlx::query(
            "UPDATE topics SET title = COALESCE(?, title), provider_id = COALESCE(?, provider_id), \
             model_name = COALESCE(?, model_name), \
             workspace = CASE WHEN ? THEN ? ELSE workspace END, \
             assistant_id = CASE WHEN ? THEN ? ELSE assistant_id END, \
             system_prompt = CASE WHEN ? THEN ? ELSE system_prompt END, \
             model_params = CASE WHEN ? THEN ? ELSE model_params END, updated_at = ? WHERE id = ?",
        )
        .bind(changes.title)
        .bind(changes.model.map(|m| m.provider_id.as_str()))
        .bind(changes.model.map(|m| m.model.as_str()))
        .bind(changes.workspace.is_some())
        .bind(changes.workspace.flatten())
        .bind(changes.assistant_id.is_some())
        .bind(changes.assistant_id.flatten())
        .bind(changes.system_prompt.is_some())
        .bind(changes.system_prompt.flatten())
        .bind(params.is_some())
        .bind(params.flatten())
        .bind(now())
        .bind(id.as_str())
        .execute(&mut *self.writer().await?)
        .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "topic", id: id.to_string() });
        }
        self.topic_list_changed(id);
        self.get_topic(id).await
    }

    /// Marks the topic as recently active (it moves to the top of the list).
    pub async fn touch_topic(&self, id: &TopicId) -> Result<()> {
        let touched = sqlx::query("UPDATE topics SET updated_at = ? WHERE id = ?")
            .bind(now())
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        if touched.rows_affected() > 0 {
            self.topic_list_changed(id);
        }
        Ok(())
    }

    /// The user has looked at the topic now: what finished before is seen.
    pub async fn mark_topic_seen(&self, id: &TopicId) -> Result<()> {
        let result = sqlx::query("UPDATE topics SET seen_at = ? WHERE id = ?")
            .bind(now())
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "topic", id: id.to_string() });
        }
        Ok(())
    }

    /// Topics whose latest turn has a reply written since the user last looked at them
    /// ([`Store::mark_topic_seen`]): their unseen-completion mark, as it was when the app
    /// stopped.
    pub async fn unseen_topics(&self) -> Result<Vec<TopicId>> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT t.id FROM topics t WHERE EXISTS (SELECT 1 FROM messages m \
                 WHERE m.topic_id = t.id AND m.role = 'assistant' AND m.updated_at > COALESCE(t.seen_at, '') \
                 AND m.turn_id = (SELECT turn_id FROM messages WHERE topic_id = t.id AND role = 'user' \
                     ORDER BY rowid DESC LIMIT 1))",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(ids.into_iter().map(TopicId).collect())
    }

    /// Deletes the topic and its messages.
    pub async fn delete_topic(&self, id: &TopicId) -> Result<()> {
        let result = sqlx::query("DELETE FROM topics WHERE id = ?")
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "topic", id: id.to_string() });
        }
        self.topic_list_changed(id);
        Ok(())
    }

    /// Deletes the topic only if nothing was ever said in it: no message, no queued item.
    /// One statement under the write turn, so a first message written at the same moment
    /// either lands first (the topic stays) or finds the topic gone. `false`: it stays.
    pub async fn delete_topic_if_empty(&self, id: &TopicId) -> Result<bool> {
        let result = sqlx::query(
            "DELETE FROM topics WHERE id = ?1 \
             AND NOT EXISTS (SELECT 1 FROM messages WHERE topic_id = ?1) \
             AND NOT EXISTS (SELECT 1 FROM inbox WHERE topic_id = ?1)",
        )
        .bind(id.as_str())
        .execute(&mut *self.writer().await?)
        .await?;
        if result.rows_affected() == 0 {
            self.get_topic(id).await?;
            return Ok(false);
        }
        self.topic_list_changed(id);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;

    #[tokio::test]
    async fn topics_round_trip() {
        let (store, _dir) = store().await;
        let model = ModelRef { provider_id: ProviderId("p".into()), model: "m".into() };
        let topic = store.create_topic("First", Some(&model)).await.unwrap();
        assert_eq!(topic.model, Some(model));
        let renamed = store.update_topic(&topic.id, Some("Renamed"), None).await.unwrap();
        assert_eq!(renamed.title, "Renamed");
        assert_eq!(renamed.model, topic.model);
        assert_eq!(store.list_topics().await.unwrap().len(), 1);
        let changes =
            TopicChanges { workspace: Some(Some("/w")), assistant_id: Some(Some("a")), ..TopicChanges::default() };
        let set = store.change_topic(&topic.id, &changes).await.unwrap();
        assert_eq!(
            (set.workspace.as_deref(), set.assistant_id.as_deref(), set.title.as_str()),
            (Some("/w"), Some("a"), "Renamed")
        );
        let cleared = store
            .change_topic(&topic.id, &TopicChanges { workspace: Some(None), ..TopicChanges::default() })
            .await
            .unwrap();
        assert_eq!((cleared.workspace, cleared.assistant_id.as_deref()), (None, Some("a")));
        store.delete_topic(&topic.id).await.unwrap();
        assert!(matches!(store.get_topic(&topic.id).await, Err(StoreError::NotFound { .. })));
        assert!(matches!(store.delete_topic(&topic.id).await, Err(StoreError::NotFound { .. })));
    }
}
