//! The steering inbox: per-topic messages waiting to become the next turn.
//!
//! Items are ordered by `position`; a `steer` item goes first. Nothing leaves the inbox
//! except by [`Store::remove_inbox_item`] (its turn was admitted, or the user cancelled it).

use protocol::api::{InboxItem, InboxMode, InboxState};
use protocol::{ModelRef, TopicId};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

fn mode_text(mode: InboxMode) -> &'static str {
    match mode {
        InboxMode::Queue => "queue",
        InboxMode::Steer => "steer",
    }
}

fn from_row(row: &SqliteRow) -> Result<InboxItem> {
    let mode = if row.try_get::<String, _>("mode")? == "steer" { InboxMode::Steer } else { InboxMode::Queue };
    let state = if row.try_get::<String, _>("state")? == "held" { InboxState::Held } else { InboxState::Queued };
    Ok(InboxItem {
        id: row.try_get("id")?,
        topic_id: TopicId(row.try_get("topic_id")?),
        text: row.try_get("text")?,
        mode,
        state,
        note: row.try_get("note")?,
        models: models_from_text(row.try_get("models")?),
        created_at: row.try_get("created_at")?,
    })
}

/// The stored model choice. Text this build cannot read (a damaged or newer database)
/// reads as no choice: the item still runs, on the topic's model.
fn models_from_text(text: Option<String>) -> Option<Vec<ModelRef>> {
    let text = text?;
    match serde_json::from_str::<Vec<ModelRef>>(&text) {
        Ok(models) if !models.is_empty() => Some(models),
        Ok(_) => None,
        Err(err) => {
            tracing::warn!(error = %err, "an inbox item's stored models cannot be read; it goes to the topic's model");
            None
        }
    }
}

macro_rules! inbox_columns {
    () => {
        "id, topic_id, text, mode, state, note, models, created_at"
    };
}

impl Store {
    /// In run order.
    pub async fn list_inbox(&self, topic_id: &TopicId) -> Result<Vec<InboxItem>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            inbox_columns!(),
            " FROM inbox WHERE topic_id = ? ORDER BY position, created_at"
        ))
        .bind(topic_id.as_str())
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_inbox_item(&self, id: &str) -> Result<InboxItem> {
        let row = sqlx::query(concat!("SELECT ", inbox_columns!(), " FROM inbox WHERE id = ?"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "inbox item", id: id.to_owned() }),
        }
    }

    /// Queues a message: `queue` at the end, `steer` at the front. `models`: who answers
    /// it when it runs (`None`: the topic's model then).
    pub async fn add_inbox_item(
        &self,
        topic_id: &TopicId,
        text: &str,
        mode: InboxMode,
        models: Option<&[ModelRef]>,
    ) -> Result<InboxItem> {
        let id = protocol::MessageId::new().0;
        let now = now();
        let position = match mode {
            InboxMode::Queue => "(SELECT COALESCE(MAX(position), -1) + 1 FROM inbox WHERE topic_id = ?1)",
            InboxMode::Steer => "(SELECT COALESCE(MIN(position), 1) - 1 FROM inbox WHERE topic_id = ?1)",
        };
        let sql = format!(
            "INSERT INTO inbox (id, topic_id, text, mode, state, note, position, created_at, updated_at, models) \
             VALUES (?2, ?1, ?3, ?4, 'queued', NULL, {position}, ?5, ?5, ?6)"
        );
        let models = match models {
            Some(models) if !models.is_empty() => {
                Some(serde_json::to_string(models).map_err(|e| StoreError::Encode(e.to_string()))?)
            }
            _ => None,
        };
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(topic_id.as_str())
            .bind(&id)
            .bind(text)
            .bind(mode_text(mode))
            .bind(&now)
            .bind(models)
            .execute(&mut *self.writer().await?)
            .await?;
        self.get_inbox_item(&id).await
    }

    /// Edits an item's text or mode; switching to `steer` moves it to the front.
    pub async fn update_inbox_item(&self, id: &str, text: Option<&str>, mode: Option<InboxMode>) -> Result<InboxItem> {
        let item = self.get_inbox_item(id).await?;
        let mut tx = self.write().await?;
        sqlx::query("UPDATE inbox SET text = COALESCE(?, text), mode = COALESCE(?, mode), updated_at = ? WHERE id = ?")
            .bind(text)
            .bind(mode.map(mode_text))
            .bind(now())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if mode == Some(InboxMode::Steer) && item.mode != InboxMode::Steer {
            sqlx::query(
                "UPDATE inbox SET position = (SELECT MIN(position) - 1 FROM inbox WHERE topic_id = ?) WHERE id = ?",
            )
            .bind(item.topic_id.as_str())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.get_inbox_item(id).await
    }

    /// Moves an item to a 0-based position among its topic's items.
    pub async fn move_inbox_item(&self, id: &str, position: usize) -> Result<Vec<InboxItem>> {
        let item = self.get_inbox_item(id).await?;
        // Read the order inside the transaction: an item added or sent meanwhile is kept.
        let mut tx = self.write().await?;
        let mut ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM inbox WHERE topic_id = ? ORDER BY position, created_at")
                .bind(item.topic_id.as_str())
                .fetch_all(&mut *tx)
                .await?;
        if !ids.iter().any(|other| other == id) {
            return Err(StoreError::NotFound { what: "inbox item", id: id.to_owned() });
        }
        ids.retain(|other| other != id);
        ids.insert(position.min(ids.len()), id.to_owned());
        for (index, id) in ids.iter().enumerate() {
            sqlx::query("UPDATE inbox SET position = ? WHERE id = ?")
                .bind(index as i64)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.list_inbox(&item.topic_id).await
    }

    pub async fn remove_inbox_item(&self, id: &str) -> Result<()> {
        let result = sqlx::query("DELETE FROM inbox WHERE id = ?").bind(id).execute(&mut *self.writer().await?).await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "inbox item", id: id.to_owned() });
        }
        Ok(())
    }

    /// Holds every queued item of the topic (or of all topics), saying why.
    pub async fn hold_inbox(&self, topic_id: Option<&TopicId>, note: &str) -> Result<u64> {
        let result = sqlx::query(
            "UPDATE inbox SET state = 'held', note = ?, updated_at = ? WHERE state = 'queued' AND (? IS NULL OR topic_id = ?)",
        )
        .bind(note)
        .bind(now())
        .bind(topic_id.map(TopicId::as_str))
        .bind(topic_id.map(TopicId::as_str))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(result.rows_affected())
    }

    /// A held item may run again.
    pub async fn release_inbox_item(&self, id: &str) -> Result<InboxItem> {
        let result = sqlx::query("UPDATE inbox SET state = 'queued', note = NULL, updated_at = ? WHERE id = ?")
            .bind(now())
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "inbox item", id: id.to_owned() });
        }
        self.get_inbox_item(id).await
    }

    /// The item that should run next: the first queued one.
    pub async fn next_queued(&self, topic_id: &TopicId) -> Result<Option<InboxItem>> {
        Ok(self.list_inbox(topic_id).await?.into_iter().find(|i| i.state == InboxState::Queued))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;

    #[tokio::test]
    async fn the_inbox_keeps_order_steers_first_and_survives_a_reopen() {
        let (store, dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        let a = store.add_inbox_item(&topic, "a", InboxMode::Queue, None).await.unwrap();
        let b = store.add_inbox_item(&topic, "b", InboxMode::Queue, None).await.unwrap();
        let s = store.add_inbox_item(&topic, "s", InboxMode::Steer, None).await.unwrap();
        let texts = |items: Vec<InboxItem>| items.into_iter().map(|i| i.text).collect::<Vec<_>>();
        assert_eq!(texts(store.list_inbox(&topic).await.unwrap()), ["s", "a", "b"]);
        assert_eq!(texts(store.move_inbox_item(&b.id, 0).await.unwrap()), ["b", "s", "a"]);
        store.update_inbox_item(&a.id, Some("a2"), Some(InboxMode::Steer)).await.unwrap();
        assert_eq!(texts(store.list_inbox(&topic).await.unwrap()), ["a2", "b", "s"]);
        store.remove_inbox_item(&s.id).await.unwrap();

        assert_eq!(store.hold_inbox(Some(&topic), "the reply before it failed").await.unwrap(), 2);
        assert_eq!(store.next_queued(&topic).await.unwrap(), None);
        let released = store.release_inbox_item(&b.id).await.unwrap();
        assert_eq!((released.state, released.note), (InboxState::Queued, None));

        // Durable: a new connection to the same file sees the same inbox.
        store.close().await;
        let reopened = Store::open(&dir.path().join("colloquy.db")).await.unwrap();
        let items = reopened.list_inbox(&topic).await.unwrap();
        assert_eq!(texts(items.clone()), ["a2", "b"]);
        assert_eq!(items[0].state, InboxState::Held);
        assert_eq!(reopened.next_queued(&topic).await.unwrap().map(|i| i.text).as_deref(), Some("b"));
    }

    #[tokio::test]
    async fn an_item_keeps_its_models_and_an_unreadable_choice_reads_as_none() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        let models = vec![
            ModelRef { provider_id: protocol::ProviderId("p1".into()), model: "a".into() },
            ModelRef { provider_id: protocol::ProviderId("p2".into()), model: "b".into() },
        ];
        let picked = store.add_inbox_item(&topic, "both", InboxMode::Queue, Some(&models)).await.unwrap();
        assert_eq!(picked.models.as_ref(), Some(&models));
        let plain = store.add_inbox_item(&topic, "plain", InboxMode::Queue, Some(&[])).await.unwrap();
        assert_eq!(plain.models, None);
        assert_eq!(store.next_queued(&topic).await.unwrap().unwrap().models, Some(models));

        sqlx::query("UPDATE inbox SET models = '{not json' WHERE id = ?")
            .bind(&picked.id)
            .execute(&mut *store.writer().await.unwrap())
            .await
            .unwrap();
        let item = store.get_inbox_item(&picked.id).await.unwrap();
        assert_eq!((item.text.as_str(), item.models), ("both", None));
    }
}
