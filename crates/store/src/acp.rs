//! Coding agents reached over ACP: how to start each. Secret variable values are not
//! here but in the secret store; the engine keeps them there.

use protocol::ListName;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// A variable as stored: a secret one has no value here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredVariable {
    pub name: String,
    #[serde(default)]
    pub secret: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcpAgentRow {
    pub id: String,
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub variables: Vec<StoredVariable>,
    pub workspace: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// An agent's settings, to save.
#[derive(Clone, Debug)]
pub struct AcpAgentSettings<'a> {
    pub name: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    pub variables: &'a [StoredVariable],
    pub workspace: Option<&'a str>,
}

fn from_row(row: &SqliteRow) -> Result<AcpAgentRow> {
    let id: String = row.try_get("id")?;
    // A damaged list reads as empty rather than failing every read of the agents.
    let args: String = row.try_get("args")?;
    let args = serde_json::from_str(&args).unwrap_or_else(|err| {
        tracing::warn!(agent = %id, error = %err, "unreadable arguments of an ACP agent; read as none");
        Vec::new()
    });
    let variables: String = row.try_get("variables")?;
    let variables = serde_json::from_str(&variables).unwrap_or_else(|err| {
        tracing::warn!(agent = %id, error = %err, "unreadable variables of an ACP agent; read as none");
        Vec::new()
    });
    Ok(AcpAgentRow {
        id,
        name: row.try_get("name")?,
        command: row.try_get("command")?,
        args,
        variables,
        workspace: row.try_get("workspace")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Invalid(e.to_string()))
}

impl Store {
    /// By name.
    pub async fn list_acp_agents(&self) -> Result<Vec<AcpAgentRow>> {
        let rows =
            sqlx::query("SELECT * FROM acp_agents ORDER BY name COLLATE NOCASE, id").fetch_all(self.pool()).await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_acp_agent(&self, id: &str) -> Result<AcpAgentRow> {
        let row = sqlx::query("SELECT * FROM acp_agents WHERE id = ?").bind(id).fetch_optional(self.pool()).await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "ACP agent", id: id.to_owned() }),
        }
    }

    pub async fn create_acp_agent(&self, id: &str, agent: &AcpAgentSettings<'_>) -> Result<AcpAgentRow> {
        let now = now();
        sqlx::query(
            "INSERT INTO acp_agents (id, name, command, args, variables, workspace, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(agent.name)
        .bind(agent.command)
        .bind(json(&agent.args)?)
        .bind(json(&agent.variables)?)
        .bind(agent.workspace)
        .bind(&now)
        .bind(&now)
        .execute(&mut *self.writer().await?)
        .await?;
        self.get_acp_agent(id).await
    }

    pub async fn update_acp_agent(&self, id: &str, agent: &AcpAgentSettings<'_>) -> Result<AcpAgentRow> {
        let done = sqlx::query(
            "UPDATE acp_agents SET name = ?, command = ?, args = ?, variables = ?, workspace = ?, updated_at = ? \
             WHERE id = ?",
        )
        .bind(agent.name)
        .bind(agent.command)
        .bind(json(&agent.args)?)
        .bind(json(&agent.variables)?)
        .bind(agent.workspace)
        .bind(now())
        .bind(id)
        .execute(&mut *self.writer().await?)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "ACP agent", id: id.to_owned() });
        }
        // Its sessions are listed with its name.
        self.list_changed(ListName::AgentSessions);
        self.get_acp_agent(id).await
    }

    /// How many sessions run the agent.
    pub async fn sessions_of_acp_agent(&self, id: &str) -> Result<u64> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM agent_sessions WHERE acp_agent_id = ?")
            .bind(id)
            .fetch_one(self.pool())
            .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    pub async fn delete_acp_agent(&self, id: &str) -> Result<()> {
        let done =
            sqlx::query("DELETE FROM acp_agents WHERE id = ?").bind(id).execute(&mut *self.writer().await?).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "ACP agent", id: id.to_owned() });
        }
        // Its sessions are listed as run by a deleted agent now.
        self.list_changed(ListName::AgentSessions);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::NewSession;
    use crate::test_support::store;

    #[tokio::test]
    async fn agents_keep_their_settings_and_sessions_name_the_agent_they_run() {
        let (store, _dir) = store().await;
        let args = vec!["--acp".to_owned()];
        let variables = vec![
            StoredVariable { name: "OPENAI_BASE_URL".into(), secret: false, value: Some("http://x".into()) },
            StoredVariable { name: "OPENAI_API_KEY".into(), secret: true, value: None },
        ];
        let settings = AcpAgentSettings {
            name: "Qwen Code",
            command: "qwen",
            args: &args,
            variables: &variables,
            workspace: Some("/w"),
        };
        let agent = store.create_acp_agent("a1", &settings).await.unwrap();
        assert_eq!((agent.args.clone(), agent.variables.clone()), (args.clone(), variables.clone()));
        let session = NewSession {
            id: "s1",
            title: "t",
            agent: "acp",
            acp_agent_id: Some("a1"),
            workspace: "/w",
            provider_id: None,
            model: "",
            permission_mode: "default",
        };
        let session = store.create_session(&session).await.unwrap();
        assert_eq!(session.acp_agent_id.as_deref(), Some("a1"));
        assert_eq!(store.sessions_of_acp_agent("a1").await.unwrap(), 1);
        let renamed = AcpAgentSettings { name: "Qwen", ..settings };
        assert_eq!(store.update_acp_agent("a1", &renamed).await.unwrap().name, "Qwen");
        assert!(matches!(store.delete_acp_agent("nope").await, Err(StoreError::NotFound { .. })));
    }
}
