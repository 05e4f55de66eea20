//! Assistants: saved setups (system prompt, models, tools, tool-call cap, workspace,
//! reply strategies).

use protocol::api::{Assistant, ModelParams};
use protocol::{ListName, ModelRef};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// The editable fields of an assistant, already validated.
#[derive(Clone, Debug)]
pub struct AssistantFields<'a> {
    pub name: &'a str,
    pub system_prompt: &'a str,
    pub models: &'a [ModelRef],
    pub tools: Option<&'a [String]>,
    pub max_tool_calls: u32,
    pub workspace: Option<&'a str>,
    /// The features its turns enable, by name; `None`: the defaults.
    pub features: Option<&'a [String]>,
    pub params: ModelParams,
}

fn from_row(row: &SqliteRow) -> Result<Assistant> {
    // A damaged list reads as empty (the assistant still works with the topic's model).
    let models: Vec<ModelRef> = serde_json::from_str(&row.try_get::<String, _>("models")?).unwrap_or_default();
    let tools: Option<Vec<String>> =
        row.try_get::<Option<String>, _>("tools")?.and_then(|t| serde_json::from_str(&t).ok());
    // A damaged list reads as absent: the default features.
    let features: Option<Vec<String>> =
        row.try_get::<Option<String>, _>("features")?.and_then(|f| serde_json::from_str(&f).ok());
    Ok(Assistant {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        system_prompt: row.try_get("system_prompt")?,
        models,
        tools,
        max_tool_calls: u32::try_from(row.try_get::<i64, _>("max_tool_calls")?).unwrap_or(20),
        workspace: row.try_get("workspace")?,
        features,
        params: crate::topics::model_params(row)?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn encode(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode(e.to_string()))
}

impl Store {
    /// Every workspace folder a topic or an assistant names, each once (what MCP servers
    /// are offered as their roots).
    pub async fn workspace_folders(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT workspace FROM topics WHERE coalesce(workspace, '') != '' \
             UNION SELECT workspace FROM assistants WHERE coalesce(workspace, '') != '' ORDER BY 1",
        )
        .fetch_all(self.pool())
        .await?)
    }

    pub async fn list_assistants(&self) -> Result<Vec<Assistant>> {
        let rows =
            sqlx::query("SELECT * FROM assistants ORDER BY name COLLATE NOCASE, id").fetch_all(self.pool()).await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_assistant(&self, id: &str) -> Result<Assistant> {
        let row = sqlx::query("SELECT * FROM assistants WHERE id = ?").bind(id).fetch_optional(self.pool()).await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "assistant", id: id.to_owned() }),
        }
    }

    /// Creates the assistant `id`, or replaces its fields.
    pub async fn save_assistant(&self, id: &str, fields: &AssistantFields<'_>) -> Result<Assistant> {
        let now = now();
        sqlx::query(
            "INSERT INTO assistants (id, name, system_prompt, models, tools, max_tool_calls, workspace, features, model_params, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, system_prompt = excluded.system_prompt, \
             models = excluded.models, tools = excluded.tools, max_tool_calls = excluded.max_tool_calls, \
             workspace = excluded.workspace, features = excluded.features, model_params = excluded.model_params, \
             updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(fields.name)
        .bind(fields.system_prompt)
        .bind(encode(&fields.models)?)
        .bind(fields.tools.map(|tools| encode(&tools)).transpose()?)
        .bind(i64::from(fields.max_tool_calls))
        .bind(fields.workspace)
        .bind(fields.features.map(|features| encode(&features)).transpose()?)
        .bind(crate::topics::encode_model_params(&fields.params)?)
        .bind(&now)
        .bind(&now)
        .execute(&mut *self.writer().await?)
        .await?;
        self.get_assistant(id).await
    }

    /// Deletes the assistant; topics that used it go back to the defaults.
    pub async fn delete_assistant(&self, id: &str) -> Result<()> {
        let mut tx = self.write().await?;
        let done = sqlx::query("DELETE FROM assistants WHERE id = ?").bind(id).execute(&mut *tx).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "assistant", id: id.to_owned() });
        }
        let left = sqlx::query("UPDATE topics SET assistant_id = NULL WHERE assistant_id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        if left.rows_affected() > 0 {
            // Its topics (chats; sessions have no assistant) show none now.
            self.list_changed(ListName::Topics);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;
    use protocol::ProviderId;

    #[tokio::test]
    async fn assistants_round_trip_and_leave_their_topics_when_deleted() {
        let (store, _dir) = store().await;
        let models = vec![ModelRef { provider_id: ProviderId("p".into()), model: "m".into() }];
        let tools = vec!["read_file".to_owned()];
        let fields = AssistantFields {
            name: "Coder",
            system_prompt: "Be terse.",
            models: &models,
            tools: Some(&tools),
            max_tool_calls: 7,
            workspace: Some("/w"),
            features: None,
            params: ModelParams { temperature: Some(0.2), ..ModelParams::default() },
        };
        let saved = store.save_assistant("a1", &fields).await.unwrap();
        assert_eq!(saved.params.temperature, Some(0.2));
        assert_eq!((saved.max_tool_calls, saved.tools.as_deref(), saved.models.len()), (7, Some(&tools[..]), 1));
        let saved = store.save_assistant("a1", &AssistantFields { tools: None, ..fields }).await.unwrap();
        assert_eq!(saved.tools, None);
        let topic = store.create_topic("t", None).await.unwrap();
        let changes = crate::topics::TopicChanges { assistant_id: Some(Some("a1")), ..Default::default() };
        store.change_topic(&topic.id, &changes).await.unwrap();
        store.delete_assistant("a1").await.unwrap();
        assert_eq!(store.get_topic(&topic.id).await.unwrap().assistant_id, None);
        assert!(matches!(store.delete_assistant("a1").await, Err(StoreError::NotFound { .. })));
    }

    #[tokio::test]
    async fn an_assistants_features_round_trip_absent_empty_or_named() {
        let (store, _dir) = store().await;
        let named = vec!["context-rounds".to_owned(), "prompt-tool-calling".to_owned()];
        let fields = AssistantFields {
            name: "Coder",
            system_prompt: "",
            models: &[],
            tools: None,
            max_tool_calls: 20,
            workspace: None,
            features: Some(&named),
            params: ModelParams::default(),
        };
        let saved = store.save_assistant("a1", &fields).await.unwrap();
        assert_eq!(saved.features.as_deref(), Some(&named[..]));
        assert_eq!(store.get_assistant("a1").await.unwrap().features.as_deref(), Some(&named[..]));
        let saved =
            store.save_assistant("a1", &AssistantFields { features: Some(&[]), ..fields.clone() }).await.unwrap();
        assert_eq!(saved.features, Some(Vec::new()), "an empty list is kept, not read as the defaults");
        let saved = store.save_assistant("a1", &AssistantFields { features: None, ..fields }).await.unwrap();
        assert_eq!(saved.features, None);
        assert_eq!(store.list_assistants().await.unwrap()[0].features, None);
    }

    #[tokio::test]
    async fn an_assistant_from_before_features_reads_as_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("colloquy.db");
        // The schema of the version before assistants had features, with one assistant.
        let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}?mode=rwc", path.display())).await.unwrap();
        crate::MIGRATOR.run_to(11, &pool).await.unwrap();
        sqlx::query(
            "INSERT INTO assistants (id, name, system_prompt, models, tools, max_tool_calls, workspace, created_at, updated_at) \
             VALUES ('old', 'Old', 'Be kind.', '[]', NULL, 20, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;

        let store = Store::open(&path).await.unwrap();
        let old = store.get_assistant("old").await.unwrap();
        assert_eq!((old.name.as_str(), old.system_prompt.as_str(), old.features), ("Old", "Be kind.", None));
    }
}
