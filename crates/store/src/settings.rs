//! App settings: one JSON value per key, a missing key meaning "the default". The
//! engine owns what each key means and validates values before they get here.

use serde_json::Value;
use sqlx::Row;

use crate::{Result, Store, StoreError, now};

impl Store {
    /// The stored value of `key`; `None` when the user never changed it. A value that is
    /// not JSON (a damaged row) reads as `None`, so the default applies instead of failing.
    pub async fn setting(&self, key: &str) -> Result<Option<Value>> {
        let row =
            sqlx::query("SELECT value FROM app_settings WHERE key = ?").bind(key).fetch_optional(self.pool()).await?;
        let Some(row) = row else { return Ok(None) };
        let text: String = row.try_get("value")?;
        match serde_json::from_str(&text) {
            Ok(value) => Ok(Some(value)),
            Err(err) => {
                tracing::warn!(key, %err, "a stored setting is not valid JSON; using its default");
                Ok(None)
            }
        }
    }

    /// Stores `value` for `key`, or forgets the key (back to the default) when `None`.
    pub async fn set_setting(&self, key: &str, value: Option<&Value>) -> Result<()> {
        match value {
            Some(value) => {
                let text = serde_json::to_string(value).map_err(|e| StoreError::Encode(e.to_string()))?;
                sqlx::query(
                    "INSERT INTO app_settings (key, value, updated_at) VALUES (?, ?, ?)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                )
                .bind(key)
                .bind(text)
                .bind(now())
                .execute(&mut *self.writer().await?)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM app_settings WHERE key = ?")
                    .bind(key)
                    .execute(&mut *self.writer().await?)
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_support::store;

    #[tokio::test]
    async fn a_setting_is_absent_until_set_and_can_go_back_to_the_default() {
        let (store, _dir) = store().await;
        assert_eq!(store.setting("idle").await.unwrap(), None);
        store.set_setting("idle", Some(&json!(30))).await.unwrap();
        store.set_setting("idle", Some(&json!(45))).await.unwrap();
        assert_eq!(store.setting("idle").await.unwrap(), Some(json!(45)));
        store.set_setting("idle", None).await.unwrap();
        assert_eq!(store.setting("idle").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_damaged_value_reads_as_unset() {
        let (store, _dir) = store().await;
        sqlx::query("INSERT INTO app_settings (key, value, updated_at) VALUES ('idle', '{oops', 'now')")
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(store.setting("idle").await.unwrap(), None);
    }
}
