//! Providers and their model lists. API keys are not here: see [`crate::secrets`].

use std::collections::BTreeMap;

use protocol::ProviderId;
use protocol::api::{ApiFormat, ModelCapabilities, ProviderKind};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// A provider row as stored (without the key, which lives in the secret store).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderRow {
    pub id: ProviderId,
    pub name: String,
    pub kind: ProviderKind,
    pub format: ApiFormat,
    pub base_url: String,
    pub default_model: String,
    pub models: Vec<String>,
    /// Capabilities the user set, by model (models not here have guessed ones).
    pub capabilities: BTreeMap<String, ModelCapabilities>,
    pub created_at: String,
}

/// The editable fields of a provider.
#[derive(Clone, Debug)]
pub struct ProviderFields<'a> {
    pub name: &'a str,
    pub kind: ProviderKind,
    pub format: ApiFormat,
    pub base_url: &'a str,
    pub default_model: &'a str,
    pub models: &'a [String],
    /// New capabilities for these models; others keep what they had.
    pub capabilities: Option<&'a BTreeMap<String, ModelCapabilities>>,
}

fn kind_text(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiCompatible => "openai_compatible",
        ProviderKind::Demo => "demo",
    }
}

fn from_row(row: &SqliteRow, models: Models) -> Result<ProviderRow> {
    let kind = match row.try_get::<String, _>("kind")?.as_str() {
        "demo" => ProviderKind::Demo,
        _ => ProviderKind::OpenaiCompatible,
    };
    Ok(ProviderRow {
        id: ProviderId(row.try_get("id")?),
        name: row.try_get("name")?,
        kind,
        // A format this version does not know (written by a newer one) reads as the
        // common default rather than failing the whole list.
        format: ApiFormat::parse(&row.try_get::<String, _>("format")?).unwrap_or_default(),
        base_url: row.try_get("base_url")?,
        default_model: row.try_get("default_model")?,
        models: models.names,
        capabilities: models.capabilities,
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Oldest first: the first provider is the default for new topics.
    pub async fn list_providers(&self) -> Result<Vec<ProviderRow>> {
        let rows = sqlx::query(
            "SELECT id, name, kind, format, base_url, default_model, created_at FROM providers ORDER BY created_at, id",
        )
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: String = row.try_get("id")?;
            let models = self.models_of(&id).await?;
            out.push(from_row(row, models)?);
        }
        Ok(out)
    }

    pub async fn get_provider(&self, id: &ProviderId) -> Result<ProviderRow> {
        let row = sqlx::query(
            "SELECT id, name, kind, format, base_url, default_model, created_at FROM providers WHERE id = ?",
        )
        .bind(id.as_str())
        .fetch_optional(self.pool())
        .await?;
        match row {
            Some(row) => from_row(&row, self.models_of(id.as_str()).await?),
            None => Err(StoreError::NotFound { what: "provider", id: id.to_string() }),
        }
    }

    async fn models_of(&self, provider_id: &str) -> Result<Models> {
        let rows = sqlx::query("SELECT name, capabilities FROM models WHERE provider_id = ? ORDER BY position")
            .bind(provider_id)
            .fetch_all(self.pool())
            .await?;
        let mut models = Models::default();
        for row in rows {
            let name: String = row.try_get("name")?;
            let capabilities: Option<String> = row.try_get("capabilities")?;
            // Capabilities written by hand or by a newer version that do not parse are
            // guessed again rather than failing the provider.
            if let Some(parsed) = capabilities.and_then(|c| serde_json::from_str::<ModelCapabilities>(&c).ok()) {
                models.capabilities.insert(name.clone(), ModelCapabilities { custom: true, ..parsed });
            }
            models.names.push(name);
        }
        Ok(models)
    }

    pub async fn create_provider(&self, fields: &ProviderFields<'_>) -> Result<ProviderRow> {
        let id = ProviderId::new();
        let now = now();
        let mut tx = self.write().await?;
        sqlx::query("INSERT INTO providers (id, name, kind, format, base_url, default_model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(id.as_str())
            .bind(fields.name)
            .bind(kind_text(fields.kind))
            .bind(fields.format.as_str())
            .bind(fields.base_url)
            .bind(fields.default_model)
            .bind(&now)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        replace_models(&mut tx, &id, fields.models, fields.capabilities).await?;
        tx.commit().await?;
        self.get_provider(&id).await
    }

    pub async fn update_provider(&self, id: &ProviderId, fields: &ProviderFields<'_>) -> Result<ProviderRow> {
        let mut tx = self.write().await?;
        let result = sqlx::query(
            "UPDATE providers SET name = ?, kind = ?, format = ?, base_url = ?, default_model = ?, updated_at = ? WHERE id = ?",
        )
        .bind(fields.name)
        .bind(kind_text(fields.kind))
        .bind(fields.format.as_str())
        .bind(fields.base_url)
        .bind(fields.default_model)
        .bind(now())
        .bind(id.as_str())
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "provider", id: id.to_string() });
        }
        replace_models(&mut tx, id, fields.models, fields.capabilities).await?;
        tx.commit().await?;
        self.get_provider(id).await
    }

    /// Points a provider at a new address (the demo server gets a new port each start).
    pub async fn set_provider_base_url(&self, id: &ProviderId, base_url: &str) -> Result<()> {
        sqlx::query("UPDATE providers SET base_url = ?, updated_at = ? WHERE id = ?")
            .bind(base_url)
            .bind(now())
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    pub async fn delete_provider(&self, id: &ProviderId) -> Result<()> {
        let result = sqlx::query("DELETE FROM providers WHERE id = ?")
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "provider", id: id.to_string() });
        }
        Ok(())
    }
}

#[derive(Default)]
struct Models {
    names: Vec<String>,
    capabilities: BTreeMap<String, ModelCapabilities>,
}

/// Rewrites the model list, keeping each model's stored capabilities unless new ones
/// are given.
async fn replace_models(
    tx: &mut sqlx::SqliteConnection,
    id: &ProviderId,
    models: &[String],
    capabilities: Option<&BTreeMap<String, ModelCapabilities>>,
) -> Result<()> {
    let kept: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT name, capabilities FROM models WHERE provider_id = ?")
            .bind(id.as_str())
            .fetch_all(&mut *tx)
            .await?;
    let kept: BTreeMap<String, Option<String>> = kept.into_iter().collect();
    sqlx::query("DELETE FROM models WHERE provider_id = ?").bind(id.as_str()).execute(&mut *tx).await?;
    let mut seen = std::collections::HashSet::new();
    for (position, name) in models.iter().filter(|m| seen.insert(m.as_str())).enumerate() {
        let stored = match capabilities.and_then(|c| c.get(name)) {
            Some(new) => Some(
                serde_json::to_string(&ModelCapabilities { custom: true, ..*new })
                    .map_err(|e| StoreError::Encode(e.to_string()))?,
            ),
            None => kept.get(name).cloned().flatten(),
        };
        sqlx::query("INSERT INTO models (provider_id, name, position, capabilities) VALUES (?, ?, ?, ?)")
            .bind(id.as_str())
            .bind(name)
            .bind(position as i64)
            .bind(stored)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;

    #[tokio::test]
    async fn providers_round_trip_with_models() {
        let (store, _dir) = store().await;
        let models = vec!["b".to_owned(), "a".to_owned(), "b".to_owned()];
        let fields = ProviderFields {
            name: "Local",
            kind: ProviderKind::OpenaiCompatible,
            format: ApiFormat::Anthropic,
            base_url: "http://x/v1",
            default_model: "a",
            models: &models,
            capabilities: None,
        };
        let row = store.create_provider(&fields).await.unwrap();
        assert_eq!(row.models, vec!["b", "a"]);
        assert_eq!(row.format, ApiFormat::Anthropic);
        let updated =
            store.update_provider(&row.id, &ProviderFields { name: "Renamed", models: &[], ..fields }).await.unwrap();
        assert_eq!(updated.name, "Renamed");
        assert!(updated.models.is_empty());
        store.delete_provider(&row.id).await.unwrap();
        assert!(store.list_providers().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn capabilities_the_user_set_survive_model_list_changes() {
        let (store, _dir) = store().await;
        let models = vec!["a".to_owned(), "b".to_owned()];
        let set = BTreeMap::from([(
            "a".to_owned(),
            ModelCapabilities { tools: false, reasoning: true, vision: false, custom: false },
        )]);
        let fields = ProviderFields {
            name: "P",
            kind: ProviderKind::OpenaiCompatible,
            format: ApiFormat::OpenaiChat,
            base_url: "http://x/v1",
            default_model: "a",
            models: &models,
            capabilities: Some(&set),
        };
        let row = store.create_provider(&fields).await.unwrap();
        assert_eq!(
            row.capabilities["a"],
            ModelCapabilities { tools: false, reasoning: true, vision: false, custom: true }
        );
        assert!(!row.capabilities.contains_key("b"));
        let more = vec!["b".to_owned(), "a".to_owned(), "c".to_owned()];
        let row = store
            .update_provider(&row.id, &ProviderFields { models: &more, capabilities: None, ..fields })
            .await
            .unwrap();
        assert!(row.capabilities["a"].reasoning, "kept across an edit that does not name it");
        sqlx::query("UPDATE models SET capabilities = '{broken' WHERE name = 'a'").execute(store.pool()).await.unwrap();
        assert!(
            store.get_provider(&row.id).await.unwrap().capabilities.is_empty(),
            "damaged capabilities are guessed again"
        );
    }
}
