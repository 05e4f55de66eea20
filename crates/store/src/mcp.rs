//! MCP servers: their settings, and the tool list each last reported (the cache requests
//! are built from). The values of a server's environment variables and headers are not
//! here: they are in the secret store, and only their names are stored.

use std::collections::{BTreeMap, HashSet};

use protocol::tool::ToolAnnotations;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// A server's stored settings.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerRow {
    pub id: String,
    pub name: String,
    /// The prefix of its tools' names; `None` only for a row from before namespaces,
    /// until [`Store::give_mcp_namespace`] gives it one.
    pub namespace: Option<String>,
    pub transport: StoredTransport,
    pub enabled: bool,
    pub trust_read_only: bool,
    /// It may sample the reply's model without asking each time.
    pub sampling_allowed: bool,
    pub timeout_secs: u32,
    pub created_at: String,
}

/// How a server is reached, as stored: its variables and headers by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum StoredTransport {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env_names: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Values an earlier version stored here in plain text (never written again).
        #[serde(default, rename = "env", skip_serializing)]
        plain_env: PlainValues,
    },
    Http {
        url: String,
        #[serde(default)]
        header_names: Vec<String>,
        #[serde(default, rename = "headers", skip_serializing)]
        plain_headers: PlainValues,
    },
}

/// Variable or header values stored in plain text by an earlier version. `Debug` shows
/// their names only.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlainValues(pub BTreeMap<String, String>);

impl std::fmt::Debug for PlainValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl StoredTransport {
    /// The names of its variables (stdio) or headers (HTTP), each once, sorted.
    pub fn secret_names(&self) -> Vec<String> {
        let (names, plain) = match self {
            Self::Stdio { env_names, plain_env, .. } => (env_names, plain_env),
            Self::Http { header_names, plain_headers, .. } => (header_names, plain_headers),
        };
        let mut all: Vec<String> = names.iter().chain(plain.0.keys()).cloned().collect();
        all.sort();
        all.dedup();
        all
    }

    /// Values an earlier version kept in plain text.
    pub fn plain_values(&self) -> &BTreeMap<String, String> {
        match self {
            Self::Stdio { plain_env, .. } => &plain_env.0,
            Self::Http { plain_headers, .. } => &plain_headers.0,
        }
    }

    /// The same transport with its plain values dropped (their names kept).
    #[must_use]
    pub fn without_plain_values(&self) -> Self {
        let names = self.secret_names();
        match self.clone() {
            Self::Stdio { command, args, cwd, .. } => {
                Self::Stdio { command, args, env_names: names, cwd, plain_env: PlainValues::default() }
            }
            Self::Http { url, .. } => Self::Http { url, header_names: names, plain_headers: PlainValues::default() },
        }
    }
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
    let Ok(transport) = serde_json::from_str::<StoredTransport>(&transport_text) else {
        tracing::warn!(server = %id, "an MCP server's stored settings cannot be read; it is skipped");
        return Ok(None);
    };
    Ok(Some(McpServerRow {
        id,
        name: row.try_get("name")?,
        namespace: row.try_get("namespace")?,
        transport,
        enabled: row.try_get("enabled")?,
        trust_read_only: row.try_get("trust_read_only")?,
        sampling_allowed: row.try_get("sampling_allowed")?,
        timeout_secs: u32::try_from(row.try_get::<i64, _>("timeout_secs")?).unwrap_or(60),
        created_at: row.try_get("created_at")?,
    }))
}

/// `<namespace>__`, the start of every tool name of a server.
fn tool_prefix(namespace: &str) -> String {
    format!("{namespace}__")
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

    /// Adds a server with the namespace `choose` picks, given the namespaces other servers
    /// have (in the same transaction, so two servers never get the same one). Returns it.
    pub async fn create_mcp_server(
        &self,
        server: &McpServerRow,
        choose: impl FnOnce(&HashSet<String>) -> String,
    ) -> Result<String> {
        let mut tx = self.write().await?;
        let taken: Vec<String> = sqlx::query_scalar("SELECT namespace FROM mcp_servers WHERE namespace IS NOT NULL")
            .fetch_all(&mut *tx)
            .await?;
        let namespace = choose(&taken.into_iter().collect());
        let now = now();
        sqlx::query(
            "INSERT INTO mcp_servers (id, name, namespace, transport, enabled, trust_read_only, sampling_allowed, \
             timeout_secs, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&server.id)
        .bind(&server.name)
        .bind(&namespace)
        .bind(encode(&server.transport)?)
        .bind(server.enabled)
        .bind(server.trust_read_only)
        .bind(server.sampling_allowed)
        .bind(i64::from(server.timeout_secs))
        .bind(&server.created_at)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(namespace)
    }

    /// Replaces a server's settings; its namespace and cached tools stay.
    pub async fn save_mcp_server(&self, server: &McpServerRow) -> Result<()> {
        let done = sqlx::query(
            "UPDATE mcp_servers SET name = ?, transport = ?, enabled = ?, trust_read_only = ?, sampling_allowed = ?, \
             timeout_secs = ?, updated_at = ? WHERE id = ?",
        )
        .bind(&server.name)
        .bind(encode(&server.transport)?)
        .bind(server.enabled)
        .bind(server.trust_read_only)
        .bind(server.sampling_allowed)
        .bind(i64::from(server.timeout_secs))
        .bind(now())
        .bind(&server.id)
        .execute(&mut *self.writer().await?)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "MCP server", id: server.id.to_owned() });
        }
        Ok(())
    }

    /// Lets the server sample without asking from now on (its other settings stay).
    pub async fn allow_mcp_sampling(&self, id: &str) -> Result<()> {
        let done = sqlx::query("UPDATE mcp_servers SET sampling_allowed = 1, updated_at = ? WHERE id = ?")
            .bind(now())
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "MCP server", id: id.to_owned() });
        }
        Ok(())
    }

    /// The server's namespace; a server from before namespaces first gets the one `choose`
    /// picks, given the namespaces the others have.
    pub async fn give_mcp_namespace(
        &self,
        id: &str,
        choose: impl FnOnce(&HashSet<String>) -> String,
    ) -> Result<String> {
        let mut tx = self.write().await?;
        let current: Option<Option<String>> = sqlx::query_scalar("SELECT namespace FROM mcp_servers WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        match current {
            None => Err(StoreError::NotFound { what: "MCP server", id: id.to_owned() }),
            Some(Some(namespace)) => Ok(namespace),
            Some(None) => {
                let taken: Vec<String> =
                    sqlx::query_scalar("SELECT namespace FROM mcp_servers WHERE namespace IS NOT NULL")
                        .fetch_all(&mut *tx)
                        .await?;
                let namespace = choose(&taken.into_iter().collect());
                sqlx::query("UPDATE mcp_servers SET namespace = ? WHERE id = ?")
                    .bind(&namespace)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(namespace)
            }
        }
    }

    /// Removes a server with its cached tools, and the settings made for its tools: their
    /// on/off switches, the approval rules whose pattern is within its namespace and its
    /// tools in assistants' lists (a server added later may get the namespace again and
    /// must start clean).
    pub async fn delete_mcp_server(&self, id: &str) -> Result<()> {
        let mut tx = self.write().await?;
        let namespace: Option<Option<String>> = sqlx::query_scalar("SELECT namespace FROM mcp_servers WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(namespace) = namespace else {
            return Err(StoreError::NotFound { what: "MCP server", id: id.to_owned() });
        };
        sqlx::query("DELETE FROM mcp_servers WHERE id = ?").bind(id).execute(&mut *tx).await?;
        if let Some(namespace) = namespace {
            let prefix = tool_prefix(&namespace);
            sqlx::query("DELETE FROM tool_settings WHERE substr(tool_name, 1, length(?1)) = ?1")
                .bind(&prefix)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM tool_rules WHERE substr(tool, 1, length(?1)) = ?1")
                .bind(&prefix)
                .execute(&mut *tx)
                .await?;
            // Assistants that had its tools switched on lose them.
            let lists: Vec<(String, String)> =
                sqlx::query_as("SELECT id, tools FROM assistants WHERE tools IS NOT NULL").fetch_all(&mut *tx).await?;
            for (assistant, tools) in lists {
                // A list that cannot be read is read as no list (see assistants.rs); left alone.
                let Ok(tools) = serde_json::from_str::<Vec<String>>(&tools) else { continue };
                let kept: Vec<&String> = tools.iter().filter(|tool| !tool.starts_with(&prefix)).collect();
                if kept.len() < tools.len() {
                    sqlx::query("UPDATE assistants SET tools = ? WHERE id = ?")
                        .bind(encode(&kept)?)
                        .bind(&assistant)
                        .execute(&mut *tx)
                        .await?;
                }
            }
        }
        tx.commit().await?;
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

    fn stdio_row(id: &str, name: &str) -> McpServerRow {
        McpServerRow {
            id: id.into(),
            name: name.into(),
            namespace: None,
            transport: StoredTransport::Stdio {
                command: "npx".into(),
                args: vec!["x".into()],
                env_names: vec!["TOKEN".into()],
                cwd: None,
                plain_env: PlainValues::default(),
            },
            enabled: true,
            trust_read_only: false,
            sampling_allowed: false,
            timeout_secs: 60,
            created_at: now(),
        }
    }

    fn first_free(base: &str) -> impl FnOnce(&HashSet<String>) -> String {
        let base = base.to_owned();
        move |taken| {
            let mut candidate = base.clone();
            let mut n = 2;
            while taken.contains(&candidate) {
                candidate = format!("{base}_{n}");
                n += 1;
            }
            candidate
        }
    }

    #[tokio::test]
    async fn servers_and_their_cached_tools_round_trip() {
        let (store, _dir) = store().await;
        let server = stdio_row("s1", "Everything");
        assert_eq!(store.create_mcp_server(&server, first_free("everything")).await.unwrap(), "everything");
        let tool = McpToolRow {
            name: "echo".into(),
            title: None,
            description: "Echoes".into(),
            input_schema: serde_json::json!({"type": "object"}),
            annotations: ToolAnnotations { read_only: true, ..Default::default() },
        };
        store.save_mcp_tools("s1", std::slice::from_ref(&tool)).await.unwrap();
        store
            .save_mcp_server(&McpServerRow { enabled: false, name: "Renamed".into(), ..server.clone() })
            .await
            .unwrap();
        assert_eq!(store.mcp_tools("s1").await.unwrap(), vec![tool]);
        let saved = store.get_mcp_server("s1").await.unwrap();
        assert!(!saved.enabled);
        assert_eq!(saved.namespace.as_deref(), Some("everything"), "a rename keeps the namespace");
        assert_eq!(saved.transport, server.transport);
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

    #[tokio::test]
    async fn namespaces_are_unique_given_once_and_a_deleted_servers_tool_settings_go_with_it() {
        let (store, _dir) = store().await;
        let a = store.create_mcp_server(&stdio_row("a", "Files"), first_free("files")).await.unwrap();
        let b = store.create_mcp_server(&stdio_row("b", "Files"), first_free("files")).await.unwrap();
        assert_eq!((a.as_str(), b.as_str()), ("files", "files_2"));
        store.set_tool_enabled("files__write", false).await.unwrap();
        store.set_tool_enabled("files_2__write", false).await.unwrap();
        for (id, tool) in [("r1", "files__*"), ("r2", "files_2__write"), ("r3", "*")] {
            sqlx::query(
                "INSERT INTO tool_rules (id, tool, decision, created_at) VALUES (?, ?, 'allow', '2025-01-01T00:00:00Z')",
            )
            .bind(id)
            .bind(tool)
            .execute(store.pool())
            .await
            .unwrap();
        }
        store.delete_mcp_server("a").await.unwrap();
        let disabled = store.disabled_tools().await.unwrap();
        assert_eq!(disabled, HashSet::from(["files_2__write".to_owned()]));
        let rules: Vec<String> = store.list_rules().await.unwrap().into_iter().map(|r| r.tool).collect();
        assert_eq!(rules.len(), 2);
        assert!(rules.contains(&"files_2__write".to_owned()) && rules.contains(&"*".to_owned()), "{rules:?}");
        assert_eq!(store.get_mcp_server("b").await.unwrap().namespace.as_deref(), Some("files_2"), "kept");
    }

    #[tokio::test]
    async fn a_deleted_servers_tools_leave_the_assistants_that_used_them() {
        let (store, _dir) = store().await;
        store.create_mcp_server(&stdio_row("a", "Files"), first_free("files")).await.unwrap();
        store.create_mcp_server(&stdio_row("b", "Files"), first_free("files")).await.unwrap();
        let tools = ["read_file", "files__write", "files_2__write"].map(str::to_owned);
        let fields = crate::assistants::AssistantFields {
            name: "Coder",
            system_prompt: "",
            models: &[],
            tools: Some(&tools),
            max_tool_calls: 20,
            workspace: None,
            features: None,
            params: protocol::api::ModelParams::default(),
        };
        let coder = store.save_assistant("coder", &fields).await.unwrap();
        let all_tools =
            store.save_assistant("any", &crate::assistants::AssistantFields { tools: None, ..fields }).await.unwrap();
        store.delete_mcp_server("a").await.unwrap();
        let coder = store.get_assistant(&coder.id).await.unwrap();
        assert_eq!(coder.tools.as_deref(), Some(&["read_file".to_owned(), "files_2__write".to_owned()][..]));
        assert_eq!(store.get_assistant(&all_tools.id).await.unwrap().tools, None, "no list: every tool, still");
    }

    #[tokio::test]
    async fn a_row_from_before_keeps_its_plain_values_readable_until_they_are_moved() {
        let (store, _dir) = store().await;
        sqlx::query(
            "INSERT INTO mcp_servers (id, name, transport, created_at, updated_at) VALUES ('old', 'Old', ?, 'a', 'a')",
        )
        .bind(r#"{"kind":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer hunter2"}}"#)
        .execute(store.pool())
        .await
        .unwrap();
        let old = store.get_mcp_server("old").await.unwrap();
        assert_eq!(old.namespace, None);
        assert_eq!(old.transport.secret_names(), vec!["Authorization".to_owned()]);
        assert_eq!(old.transport.plain_values()["Authorization"], "Bearer hunter2");
        assert!(!format!("{old:?}").contains("hunter2"), "debug output leaves values out");
        let moved = McpServerRow { transport: old.transport.without_plain_values(), ..old };
        store.save_mcp_server(&moved).await.unwrap();
        let text: String =
            sqlx::query_scalar("SELECT transport FROM mcp_servers").fetch_one(store.pool()).await.unwrap();
        assert_eq!(text, r#"{"kind":"http","url":"https://x/mcp","headerNames":["Authorization"]}"#);
        assert_eq!(store.give_mcp_namespace("old", first_free("old")).await.unwrap(), "old");
        assert_eq!(store.give_mcp_namespace("old", first_free("other")).await.unwrap(), "old", "given once");
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
