//! MCP servers: their settings, and the tool list each last reported (the cache requests
//! are built from).

use protocol::mcp::McpTransport;
use protocol::tool::ToolAnnotations;
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// A server's stored settings.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerRow {
    pub id: String,
    pub name: String,
    pub transport: McpTransport,
    pub enabled: bool,
    pub trust_read_only: bool,
    pub timeout_secs: u32,
    pub created_at: String,
}

/// One cached tool of a server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolRow {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub annotations: ToolAnnotations,
}

fn encode(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode(e.to_string()))
}

fn server_from_row(row: &SqliteRow) -> Result<Option<McpServerRow>> {
    let id: String = row.try_get("id")?;
    let transport_text: String = row.try_get("transport")?;
    // A transport this version cannot read (damaged, or from a newer version) leaves the
    // server out rather than failing the whole list.
    let Ok(transport) = serde_json::from_str::<McpTransport>(&transport_text) else {
        tracing::warn!(server = %id, "an MCP server's stored settings cannot be read; it is skipped");
        return Ok(None);
    };
    Ok(Some(McpServerRow {
        id,
        name: row.try_get("name")?,
        transport,
        enabled: row.try_get("enabled")?,
        trust_read_only: row.try_get("trust_read_only")?,
        timeout_secs: u32::try_from(row.try_get::<i64, _>("timeout_secs")?).unwrap_or(60),
        created_at: row.try_get("created_at")?,
    }))
}

impl Store {
    /// Oldest first (the order their tool names are prefixed in).
    pub async fn list_mcp_servers(&self) -> Result<Vec<McpServerRow>> {
        let rows = sqlx::query("SELECT * FROM mcp_servers ORDER BY created_at, id").fetch_all(self.pool()).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.extend(server_from_row(row)?);
        }
        Ok(out)
    }

    pub async fn get_mcp_server(&self, id: &str) -> Result<McpServerRow> {
        let row = sqlx::query("SELECT * FROM mcp_servers WHERE id = ?").bind(id).fetch_optional(self.pool()).await?;
        match row.as_ref().map(server_from_row).transpose()?.flatten() {
            Some(server) => Ok(server),
            None => Err(StoreError::NotFound { what: "MCP server", id: id.to_owned() }),
        }
    }

    /// Creates the server, or replaces its settings (its cached tools stay).
    pub async fn save_mcp_server(&self, server: &McpServerRow) -> Result<()> {
        let now = now();
        sqlx::query(
            "INSERT INTO mcp_servers (id, name, transport, enabled, trust_read_only, timeout_secs, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, transport = excluded.transport, enabled = excluded.enabled, \
             trust_read_only = excluded.trust_read_only, timeout_secs = excluded.timeout_secs, updated_at = excluded.updated_at",
        )
        .bind(&server.id)
        .bind(&server.name)
        .bind(encode(&server.transport)?)
        .bind(server.enabled)
        .bind(server.trust_read_only)
        .bind(i64::from(server.timeout_secs))
        .bind(&server.created_at)
        .bind(&now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn delete_mcp_server(&self, id: &str) -> Result<()> {
        let done = sqlx::query("DELETE FROM mcp_servers WHERE id = ?").bind(id).execute(self.pool()).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "MCP server", id: id.to_owned() });
        }
        Ok(())
    }

    /// Replaces a server's cached tool list.
    pub async fn save_mcp_tools(&self, server_id: &str, tools: &[McpToolRow]) -> Result<()> {
        let mut tx = self.write().await?;
        let exists: Option<String> = sqlx::query_scalar("SELECT id FROM mcp_servers WHERE id = ?")
            .bind(server_id)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_none() {
            // Removed while it was listing: nothing to cache.
            return Ok(());
        }
        sqlx::query("DELETE FROM mcp_tools WHERE server_id = ?").bind(server_id).execute(&mut *tx).await?;
        for (position, tool) in tools.iter().enumerate() {
            sqlx::query(
                "INSERT INTO mcp_tools (server_id, name, title, description, input_schema, annotations, position) VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(server_id)
            .bind(&tool.name)
            .bind(&tool.title)
            .bind(&tool.description)
            .bind(encode(&tool.input_schema)?)
            .bind(encode(&tool.annotations)?)
            .bind(position as i64)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn mcp_tools(&self, server_id: &str) -> Result<Vec<McpToolRow>> {
        let rows = sqlx::query("SELECT * FROM mcp_tools WHERE server_id = ? ORDER BY position")
            .bind(server_id)
            .fetch_all(self.pool())
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let schema: String = row.try_get("input_schema")?;
            let Ok(input_schema) = serde_json::from_str(&schema) else { continue };
            let annotations: String = row.try_get("annotations")?;
            out.push(McpToolRow {
                name: row.try_get("name")?,
                title: row.try_get("title")?,
                description: row.try_get("description")?,
                input_schema,
                annotations: serde_json::from_str(&annotations).unwrap_or_default(),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;
    use std::collections::BTreeMap;

    #[tokio::test]
    async fn servers_and_their_cached_tools_round_trip() {
        let (store, _dir) = store().await;
        let server = McpServerRow {
            id: "s1".into(),
            name: "Everything".into(),
            transport: McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["x".into()],
                env: BTreeMap::new(),
                cwd: None,
            },
            enabled: true,
            trust_read_only: false,
            timeout_secs: 60,
            created_at: now(),
        };
        store.save_mcp_server(&server).await.unwrap();
        let tool = McpToolRow {
            name: "echo".into(),
            title: None,
            description: "Echoes".into(),
            input_schema: serde_json::json!({"type": "object"}),
            annotations: ToolAnnotations { read_only: true, ..Default::default() },
        };
        store.save_mcp_tools("s1", std::slice::from_ref(&tool)).await.unwrap();
        store.save_mcp_server(&McpServerRow { enabled: false, ..server.clone() }).await.unwrap();
        assert_eq!(store.mcp_tools("s1").await.unwrap(), vec![tool]);
        assert!(!store.get_mcp_server("s1").await.unwrap().enabled);
        sqlx::query(
            "INSERT INTO mcp_servers (id, name, transport, created_at, updated_at) VALUES ('bad', 'x', '{', 'a', 'a')",
        )
        .execute(store.pool())
        .await
        .unwrap();
        assert_eq!(store.list_mcp_servers().await.unwrap().len(), 1, "a damaged row is skipped");
        store.delete_mcp_server("s1").await.unwrap();
        assert!(store.mcp_tools("s1").await.unwrap().is_empty(), "tools go with their server");
        store.save_mcp_tools("s1", &[McpToolRow { name: "late".into(), ..store_tool() }]).await.unwrap();
        assert!(store.mcp_tools("s1").await.unwrap().is_empty(), "a listing for a removed server is dropped");
    }

    fn store_tool() -> McpToolRow {
        McpToolRow {
            name: "t".into(),
            title: None,
            description: String::new(),
            input_schema: serde_json::json!({}),
            annotations: Default::default(),
        }
    }
}
