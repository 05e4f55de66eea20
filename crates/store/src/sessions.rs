//! Agent sessions: how to run each one, and the token to resume its agent with.

use protocol::{ListName, ProviderId, TopicId};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub topic_id: TopicId,
    pub title: String,
    pub agent: String,
    /// The ACP agent it runs, when `agent` is `acp`.
    pub acp_agent_id: Option<String>,
    pub workspace: String,
    pub provider_id: Option<ProviderId>,
    pub model: String,
    pub permission_mode: String,
    pub resume_token: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

fn from_row(row: &SqliteRow) -> Result<SessionRow> {
    Ok(SessionRow {
        id: row.try_get("id")?,
        topic_id: TopicId(row.try_get("topic_id")?),
        title: row.try_get("title")?,
        agent: row.try_get("agent")?,
        acp_agent_id: row.try_get("acp_agent_id")?,
        workspace: row.try_get("workspace")?,
        provider_id: row.try_get::<Option<String>, _>("provider_id")?.map(ProviderId),
        model: row.try_get("model")?,
        permission_mode: row.try_get("permission_mode")?,
        resume_token: row.try_get("resume_token")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A new session's settings.
#[derive(Clone, Debug)]
pub struct NewSession<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub agent: &'a str,
    pub acp_agent_id: Option<&'a str>,
    pub workspace: &'a str,
    pub provider_id: Option<&'a ProviderId>,
    pub model: &'a str,
    pub permission_mode: &'a str,
}

impl Store {
    /// Newest first.
    pub async fn list_sessions(&self) -> Result<Vec<SessionRow>> {
        let rows = sqlx::query(
            "SELECT s.*, t.title FROM agent_sessions s JOIN topics t ON t.id = s.topic_id ORDER BY t.updated_at DESC, s.id",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_session(&self, id: &str) -> Result<SessionRow> {
        let row =
            sqlx::query("SELECT s.*, t.title FROM agent_sessions s JOIN topics t ON t.id = s.topic_id WHERE s.id = ?")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "agent session", id: id.to_owned() }),
        }
    }

    /// The session whose messages live in `topic_id`.
    pub async fn session_of_topic(&self, topic_id: &TopicId) -> Result<SessionRow> {
        let id: Option<String> = sqlx::query_scalar("SELECT id FROM agent_sessions WHERE topic_id = ?")
            .bind(topic_id.as_str())
            .fetch_optional(self.pool())
            .await?;
        match id {
            Some(id) => self.get_session(&id).await,
            None => Err(StoreError::NotFound { what: "agent session", id: topic_id.to_string() }),
        }
    }

    /// Creates the session and its topic in one transaction.
    pub async fn create_session(&self, session: &NewSession<'_>) -> Result<SessionRow> {
        let now = now();
        let topic_id = TopicId::agent_session(session.id);
        let mut tx = self.write().await?;
        sqlx::query("INSERT INTO topics (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)")
            .bind(topic_id.as_str())
            .bind(session.title)
            .bind(&now)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO agent_sessions (id, topic_id, agent, acp_agent_id, workspace, provider_id, model, permission_mode, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(session.id)
        .bind(topic_id.as_str())
        .bind(session.agent)
        .bind(session.acp_agent_id)
        .bind(session.workspace)
        .bind(session.provider_id.map(ProviderId::as_str))
        .bind(session.model)
        .bind(session.permission_mode)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.list_changed(ListName::AgentSessions);
        self.get_session(session.id).await
    }

    /// Changes what is given.
    pub async fn update_session(
        &self,
        id: &str,
        model: Option<&str>,
        permission_mode: Option<&str>,
    ) -> Result<SessionRow> {
        let done = sqlx::query(
            "UPDATE agent_sessions SET model = COALESCE(?, model), permission_mode = COALESCE(?, permission_mode), updated_at = ? WHERE id = ?",
        )
        .bind(model)
        .bind(permission_mode)
        .bind(now())
        .bind(id)
        .execute(&mut *self.writer().await?)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "agent session", id: id.to_owned() });
        }
        self.list_changed(ListName::AgentSessions);
        self.get_session(id).await
    }

    /// Records (or, with `None`, forgets) the token to resume the agent with.
    pub async fn set_resume_token(&self, id: &str, token: Option<&str>) -> Result<()> {
        let done = sqlx::query("UPDATE agent_sessions SET resume_token = ?, updated_at = ? WHERE id = ?")
            .bind(token)
            .bind(now())
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        if done.rows_affected() > 0 {
            // The list says whether a session is `resumable`.
            self.list_changed(ListName::AgentSessions);
        }
        Ok(())
    }

    /// Deletes the session with its topic and messages.
    pub async fn delete_session(&self, id: &str) -> Result<TopicId> {
        let session = self.get_session(id).await?;
        sqlx::query("DELETE FROM topics WHERE id = ?")
            .bind(session.topic_id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        self.list_changed(ListName::AgentSessions);
        Ok(session.topic_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;

    #[tokio::test]
    async fn sessions_live_in_their_own_topic_and_keep_a_resume_token() {
        let (store, _dir) = store().await;
        let new = NewSession {
            id: "s1",
            title: "Fix the build",
            agent: "claude_code",
            acp_agent_id: None,
            workspace: "/w",
            provider_id: None,
            model: "sonnet",
            permission_mode: "default",
        };
        let session = store.create_session(&new).await.unwrap();
        assert_eq!((session.topic_id.as_str(), session.title.as_str()), ("agent-session:s1", "Fix the build"));
        let chat = store.create_topic("chat", None).await.unwrap();
        let listed: Vec<TopicId> = store.list_topics().await.unwrap().into_iter().map(|topic| topic.id).collect();
        assert_eq!(listed, [chat.id], "an agent session's topic is listed as a session, not a topic");
        store.set_resume_token("s1", Some("tok")).await.unwrap();
        let session = store.update_session("s1", None, Some("acceptEdits")).await.unwrap();
        assert_eq!(
            (session.resume_token.as_deref(), session.permission_mode.as_str(), session.model.as_str()),
            (Some("tok"), "acceptEdits", "sonnet")
        );
        assert_eq!(store.session_of_topic(&session.topic_id).await.unwrap().id, "s1");
        store.delete_session("s1").await.unwrap();
        assert!(store.list_sessions().await.unwrap().is_empty());
        assert!(store.get_topic(&session.topic_id).await.is_err(), "its topic went with it");
    }
}
