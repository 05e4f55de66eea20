//! Messages: the user's rows and the assistant replies, stored as UI message parts.
//!
//! The row's `status` and `status_reason` columns are the truth about a reply's state;
//! they are copied into the message metadata on every read, so the UI reads one place.

use protocol::api::StoredMessage;
use protocol::message::merge_objects;
use protocol::{
    ApiError, ErrorKind, MessageId, MessageRole, MessageStatus, ModelRef, TopicId, TurnId, UiMessage, UiPart,
};
use serde_json::{Value, json};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use crate::topics::model_ref;
use crate::tree::{self, Tip, Tree};
use crate::{Result, Store, StoreError, now};

/// One assistant reply to create when a turn is admitted.
#[derive(Clone, Debug)]
pub struct AssistantSlot {
    pub message_id: MessageId,
    pub model: ModelRef,
    pub metadata: Value,
}

/// A user message and the pending replies it starts, written in one transaction.
#[derive(Clone, Debug)]
pub struct NewTurn {
    pub topic_id: TopicId,
    pub turn_id: TurnId,
    pub user_message_id: MessageId,
    /// The user's message: its text and attachments.
    pub user_parts: Vec<UiPart>,
    /// The user message this one is a new version of (an edit): it goes under the same
    /// parent. `None`: it continues the topic's active path.
    pub edit_of: Option<MessageId>,
    pub assistants: Vec<AssistantSlot>,
}

/// The latest state of a live reply.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub message_id: MessageId,
    pub status: MessageStatus,
    pub status_reason: Option<String>,
    pub message: UiMessage,
}

pub(crate) fn from_row(row: &SqliteRow) -> Result<StoredMessage> {
    let id: String = row.try_get("id")?;
    let role = match row.try_get::<String, _>("role")?.as_str() {
        "user" => MessageRole::User,
        "system" => MessageRole::System,
        _ => MessageRole::Assistant,
    };
    let status_text: String = row.try_get("status")?;
    let status = MessageStatus::parse(&status_text).unwrap_or(MessageStatus::Error);
    let status_reason: Option<String> = row.try_get("status_reason")?;
    let parts_text: String = row.try_get("parts")?;
    let metadata_text: String = row.try_get("metadata")?;

    let parts = match serde_json::from_str::<Vec<Value>>(&parts_text) {
        Ok(values) => values.into_iter().map(decode_part).collect(),
        Err(err) => vec![damaged(format!("the stored content of this message could not be read ({err})"))],
    };
    let metadata = serde_json::from_str::<Value>(&metadata_text).unwrap_or_else(|_| json!({}));
    let row_facts = json!({ "status": status, "statusReason": status_reason });
    // A reason that no longer holds (a reply that waited, then finished) is cleared: null.
    let metadata = merge_objects(metadata, &row_facts);

    Ok(StoredMessage {
        id: MessageId(id.clone()),
        topic_id: TopicId(row.try_get("topic_id")?),
        parent_id: row.try_get::<Option<String>, _>("parent_id")?.map(MessageId),
        turn_id: row.try_get::<Option<String>, _>("turn_id")?.map(TurnId),
        status,
        status_reason,
        model: model_ref(row.try_get("provider_id")?, row.try_get("model_name")?),
        message: UiMessage { id, role, parts, metadata: Some(metadata) },
        versions: Vec::new(),
        revision: u64::try_from(row.try_get::<i64, _>("revision")?).unwrap_or(0),
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A part we cannot decode (from a newer or damaged version) is shown, not dropped.
fn decode_part(value: Value) -> UiPart {
    match serde_json::from_value::<UiPart>(value.clone()) {
        Ok(part) => part,
        Err(_) => {
            damaged(format!("a part of this message has an unknown shape: {}", truncate(&value.to_string(), 200)))
        }
    }
}

fn damaged(message: String) -> UiPart {
    UiPart::error(&ApiError::new(ErrorKind::Internal, message))
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((index, _)) => &text[..index],
        None => text,
    }
}

pub(crate) fn encode(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode(e.to_string()))
}

impl Store {
    /// Oldest first.
    pub async fn list_messages(&self, topic_id: &TopicId) -> Result<Vec<StoredMessage>> {
        let rows =
            sqlx::query(concat!("SELECT ", message_columns!(), " FROM messages WHERE topic_id = ? ORDER BY rowid"))
                .bind(topic_id.as_str())
                .fetch_all(self.pool())
                .await?;
        rows.iter().map(from_row).collect()
    }

    pub async fn get_message(&self, id: &MessageId) -> Result<StoredMessage> {
        let row = sqlx::query(concat!("SELECT ", message_columns!(), " FROM messages WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(self.pool())
            .await?;
        match row {
            Some(row) => from_row(&row),
            None => Err(StoreError::NotFound { what: "message", id: id.to_string() }),
        }
    }

    /// Admission: the user's row and one pending row per model, atomically. The user's
    /// row continues the active path, or (an edit) sits beside the message it edits; either
    /// way it and its replies become the active versions.
    pub async fn insert_turn(&self, turn: &NewTurn) -> Result<()> {
        let now = now();
        let mut tx = self.write().await?;
        let nodes = tree::nodes(&mut tx, turn.topic_id.as_str()).await?;
        let tree = Tree::new(&nodes);
        let parent: Option<String> = match &turn.edit_of {
            Some(edited) => {
                let index = tree
                    .find(edited.as_str())
                    .filter(|&i| nodes[i].user)
                    .ok_or_else(|| StoreError::NotFound { what: "message", id: edited.to_string() })?;
                tree.parent_user(index).map(|p| nodes[p].id.clone())
            }
            None => tree
                .path(Tip::Active)
                .unwrap_or_default()
                .iter()
                .rev()
                .find(|s| nodes[s.node].user)
                .map(|s| nodes[s.node].id.clone()),
        };
        let selected = next_selected(&mut tx, &turn.topic_id).await?;
        sqlx::query(
            "INSERT INTO messages (id, topic_id, parent_id, turn_id, role, status, parts, metadata, selected, created_at, updated_at) \
             VALUES (?, ?, ?, ?, 'user', 'success', ?, '{}', ?, ?, ?)",
        )
        .bind(turn.user_message_id.as_str())
        .bind(turn.topic_id.as_str())
        .bind(parent)
        .bind(turn.turn_id.as_str())
        .bind(encode(&turn.user_parts)?)
        .bind(selected)
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        insert_reply_rows(
            &mut tx,
            &turn.topic_id,
            &turn.turn_id,
            turn.user_message_id.as_str(),
            &turn.assistants,
            selected,
            &now,
        )
        .await?;
        sqlx::query("UPDATE topics SET updated_at = ? WHERE id = ?")
            .bind(&now)
            .bind(turn.topic_id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        // Lists show the most recently written-in first.
        self.topic_list_changed(&turn.topic_id);
        Ok(())
    }

    /// Adds reply rows to an existing turn: another model answers the same message, or a
    /// new version of a model's reply (a regeneration). They become the active versions.
    pub async fn insert_replies(&self, topic_id: &TopicId, turn_id: &TurnId, replies: &[AssistantSlot]) -> Result<()> {
        let now = now();
        let mut tx = self.write().await?;
        let user: Option<String> =
            sqlx::query_scalar("SELECT id FROM messages WHERE topic_id = ? AND turn_id = ? AND role = 'user' LIMIT 1")
                .bind(topic_id.as_str())
                .bind(turn_id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let Some(user) = user else { return Err(StoreError::NotFound { what: "turn", id: turn_id.to_string() }) };
        let selected = next_selected(&mut tx, topic_id).await?;
        insert_reply_rows(&mut tx, topic_id, turn_id, &user, replies, selected, &now).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Makes an existing reply pending again, keeping its parts (continue, resume). `seen`
    /// is the revision the caller prepared the run from: if the reply was written since,
    /// nothing changes and [`StoreError::Changed`] says so.
    pub async fn reopen_reply(&self, message_id: &MessageId, seen: u64) -> Result<()> {
        let seen = i64::try_from(seen).unwrap_or(i64::MAX);
        let mut tx = self.write().await?;
        let result = sqlx::query(
            "UPDATE messages SET status = 'pending', status_reason = NULL, revision = revision + 1, updated_at = ? \
             WHERE id = ? AND role = 'assistant' AND revision = ?",
        )
        .bind(now())
        .bind(message_id.as_str())
        .bind(seen)
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() == 0 {
            let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM messages WHERE id = ? AND role = 'assistant'")
                .bind(message_id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            let id = message_id.to_string();
            return Err(if exists.is_some() {
                StoreError::Changed { what: "reply", id }
            } else {
                StoreError::NotFound { what: "reply", id }
            });
        }
        tx.commit().await?;
        Ok(())
    }

    /// Writes the latest state of several live replies in one transaction.
    pub async fn write_checkpoints(&self, checkpoints: &[Checkpoint]) -> Result<()> {
        if checkpoints.is_empty() {
            return Ok(());
        }
        let now = now();
        let mut tx = self.write().await?;
        for checkpoint in checkpoints {
            let metadata = checkpoint.message.metadata.clone().unwrap_or_else(|| json!({}));
            sqlx::query("UPDATE messages SET status = ?, status_reason = ?, parts = ?, metadata = ?, revision = revision + 1, updated_at = ? WHERE id = ?")
                .bind(checkpoint.status.as_str())
                .bind(checkpoint.status_reason.as_deref())
                .bind(encode(&checkpoint.message.parts)?)
                .bind(encode(&metadata)?)
                .bind(&now)
                .bind(checkpoint.message_id.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// For each topic, the statuses of the replies of its latest turn.
    pub async fn latest_turn_statuses(&self) -> Result<Vec<(TopicId, Vec<MessageStatus>)>> {
        let rows = sqlx::query(
            "SELECT m.topic_id, m.status FROM messages m \
             WHERE m.role = 'assistant' AND m.turn_id = (SELECT turn_id FROM messages \
                 WHERE topic_id = m.topic_id AND role = 'user' ORDER BY rowid DESC LIMIT 1) \
             ORDER BY m.topic_id, m.rowid",
        )
        .fetch_all(self.pool())
        .await?;
        let mut out: Vec<(TopicId, Vec<MessageStatus>)> = Vec::new();
        for row in rows {
            let topic = TopicId(row.try_get("topic_id")?);
            let status = MessageStatus::parse(&row.try_get::<String, _>("status")?).unwrap_or(MessageStatus::Error);
            match out.last_mut() {
                Some((last, statuses)) if *last == topic => statuses.push(status),
                _ => out.push((topic, vec![status])),
            }
        }
        Ok(out)
    }

    /// The statuses of the replies of the topic's latest turn.
    pub async fn last_turn_statuses(&self, topic_id: &TopicId) -> Result<Vec<MessageStatus>> {
        let statuses: Vec<String> = sqlx::query_scalar(
            "SELECT status FROM messages WHERE topic_id = ?1 AND role = 'assistant' AND turn_id = \
             (SELECT turn_id FROM messages WHERE topic_id = ?1 AND role = 'user' ORDER BY rowid DESC LIMIT 1) \
             ORDER BY rowid",
        )
        .bind(topic_id.as_str())
        .fetch_all(self.pool())
        .await?;
        Ok(statuses.iter().map(|s| MessageStatus::parse(s).unwrap_or(MessageStatus::Error)).collect())
    }

    /// At start-up: replies left `pending`/`streaming` by a crash become `paused` with
    /// reason `interrupted`, keeping whatever was checkpointed, with the parts that were
    /// still open closed (see [`close_open_parts`]). Returns how many.
    pub async fn recover_interrupted(&self) -> Result<u64> {
        let now = now();
        let mut tx = self.write().await?;
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT id, parts FROM messages WHERE status IN ('pending', 'streaming')")
                .fetch_all(&mut *tx)
                .await?;
        for (id, parts) in &rows {
            // Parts that cannot be read are left as they are (they read as a `data-error`).
            let parts = match serde_json::from_str::<Vec<Value>>(parts) {
                Ok(mut parts) => {
                    close_open_parts(&mut parts);
                    encode(&parts)?
                }
                Err(_) => parts.clone(),
            };
            sqlx::query(
                "UPDATE messages SET status = 'paused', status_reason = 'interrupted', parts = ?, \
                 revision = revision + 1, updated_at = ? WHERE id = ?",
            )
            .bind(parts)
            .bind(&now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(rows.len() as u64)
    }
}

/// The `selected` a new or newly chosen row takes: above every row of the topic, so it
/// is the active one among its siblings.
pub(crate) async fn next_selected(conn: &mut SqliteConnection, topic_id: &TopicId) -> Result<i64> {
    let highest: Option<i64> = sqlx::query_scalar("SELECT MAX(selected) FROM messages WHERE topic_id = ?")
        .bind(topic_id.as_str())
        .fetch_one(conn)
        .await?;
    Ok(highest.unwrap_or(0) + 1)
}

/// Pending reply rows under a user message.
async fn insert_reply_rows(
    conn: &mut SqliteConnection,
    topic_id: &TopicId,
    turn_id: &TurnId,
    user: &str,
    replies: &[AssistantSlot],
    selected: i64,
    now: &str,
) -> Result<()> {
    for slot in replies {
        sqlx::query(
            "INSERT INTO messages (id, topic_id, parent_id, turn_id, siblings_group_id, role, status, provider_id, model_name, parts, metadata, selected, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, 'assistant', 'pending', ?, ?, '[]', ?, ?, ?, ?)",
        )
        .bind(slot.message_id.as_str())
        .bind(topic_id.as_str())
        .bind(user)
        .bind(turn_id.as_str())
        .bind(turn_id.as_str())
        .bind(slot.model.provider_id.as_str())
        .bind(&slot.model.model)
        .bind(encode(&slot.metadata)?)
        .bind(selected)
        .bind(now)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The error a tool call whose input was still streaming when the app stopped ends with.
pub const INTERRUPTED_TOOL_INPUT: &str =
    "the app stopped while the model was still writing this tool call; it did not run";

/// Closes the parts a reply cut off by a crash left open, as the agent loop does on every
/// exit path it sees: text and reasoning still `streaming` are `done` (what was kept is
/// all there is), and a tool call whose input was still streaming is an error that says
/// so. Works on the stored JSON, so parts this version does not know pass through.
pub(crate) fn close_open_parts(parts: &mut [Value]) {
    for part in parts {
        let Some(object) = part.as_object_mut() else { continue };
        let kind = object.get("type").and_then(Value::as_str).unwrap_or_default();
        let state = object.get("state").and_then(Value::as_str).unwrap_or_default();
        match (kind, state) {
            ("text" | "reasoning", "streaming") => {
                object.insert("state".into(), json!("done"));
            }
            ("dynamic-tool", "input-streaming") => {
                object.insert("state".into(), json!("output-error"));
                object.insert("errorText".into(), json!(INTERRUPTED_TOOL_INPUT));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;
    use protocol::{PartState, ProviderId};

    fn model() -> ModelRef {
        ModelRef { provider_id: ProviderId("p".into()), model: "m".into() }
    }

    async fn turn(store: &Store, topic: &TopicId, text: &str) -> (MessageId, MessageId) {
        let user = MessageId::new();
        let reply = MessageId::new();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.clone(),
                turn_id: TurnId::new(),
                user_message_id: user.clone(),
                user_parts: UiMessage::user_text("", text).parts,
                edit_of: None,
                assistants: vec![AssistantSlot {
                    message_id: reply.clone(),
                    model: model(),
                    metadata: json!({"model": "m"}),
                }],
            })
            .await
            .unwrap();
        (user, reply)
    }

    #[tokio::test]
    async fn a_turn_is_a_user_row_and_a_pending_reply() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (user, reply) = turn(&store, &topic.id, "hello").await;
        let rows = store.list_messages(&topic.id).await.unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id, user);
        assert_eq!(rows[0].message.text(), "hello");
        assert_eq!(rows[1].id, reply);
        assert_eq!(rows[1].status, MessageStatus::Pending);
        assert_eq!(rows[1].parent_id.as_ref(), Some(&user));
        assert_eq!(rows[1].model, Some(model()));

        // The next turn's user row hangs under the previous turn's user row.
        let (user2, _) = turn(&store, &topic.id, "again").await;
        let rows = store.list_messages(&topic.id).await.unwrap();
        assert_eq!(rows[2].id, user2);
        assert_eq!(rows[2].parent_id.as_ref(), Some(&user));
    }

    #[tokio::test]
    async fn checkpoints_and_recovery_keep_the_text() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (_, reply) = turn(&store, &topic.id, "hello").await;
        let mut message =
            UiMessage { id: reply.to_string(), role: MessageRole::Assistant, parts: vec![], metadata: None };
        message.parts.push(UiPart::Text { text: "partial".into(), state: Some(PartState::Streaming) });
        store
            .write_checkpoints(&[Checkpoint {
                message_id: reply.clone(),
                status: MessageStatus::Streaming,
                status_reason: None,
                message,
            }])
            .await
            .unwrap();
        assert_eq!(store.recover_interrupted().await.unwrap(), 1);
        let row = store.get_message(&reply).await.unwrap();
        assert_eq!(row.status, MessageStatus::Paused);
        assert_eq!(row.status_reason.as_deref(), Some("interrupted"));
        assert_eq!(row.message.text(), "partial");
        assert_eq!(row.message.typed_metadata().status, Some(MessageStatus::Paused));
        assert_eq!(row.message.typed_metadata().status_reason.as_deref(), Some("interrupted"));
    }

    #[tokio::test]
    async fn audit_17_recovery_closes_the_parts_a_crash_left_open() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (_, reply) = turn(&store, &topic.id, "hello").await;
        let open = vec![
            UiPart::Reasoning {
                id: Some("r0".into()),
                text: "thinking".into(),
                state: Some(PartState::Streaming),
                provider_metadata: None,
            },
            UiPart::Text { text: "partial".into(), state: Some(PartState::Streaming) },
            UiPart::DynamicTool {
                tool_name: "write_file".into(),
                tool_call_id: "c1".into(),
                state: protocol::message::ToolState::InputStreaming,
                input: None,
                output: None,
                error_text: None,
                approval: None,
            },
        ];
        let message = UiMessage { id: reply.to_string(), role: MessageRole::Assistant, parts: open, metadata: None };
        let checkpoint =
            Checkpoint { message_id: reply.clone(), status: MessageStatus::Streaming, status_reason: None, message };
        store.write_checkpoints(&[checkpoint]).await.unwrap();

        assert_eq!(store.recover_interrupted().await.unwrap(), 1);
        let row = store.get_message(&reply).await.unwrap();
        assert_eq!((row.status, row.status_reason.as_deref()), (MessageStatus::Paused, Some("interrupted")));
        assert_eq!(row.message.text(), "partial");
        match &row.message.parts[..] {
            [
                UiPart::Reasoning { state: reasoning, .. },
                UiPart::Text { state: text, .. },
                UiPart::DynamicTool { state: tool, error_text, .. },
            ] => {
                assert_eq!((*reasoning, *text), (Some(PartState::Done), Some(PartState::Done)));
                assert_eq!(*tool, protocol::message::ToolState::OutputError);
                assert_eq!(error_text.as_deref(), Some(INTERRUPTED_TOOL_INPUT));
            }
            other => panic!("unexpected parts {other:?}"),
        }
    }

    #[tokio::test]
    async fn damaged_rows_read_as_an_error_part_not_a_failure() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (_, reply) = turn(&store, &topic.id, "hello").await;
        sqlx::query("UPDATE messages SET parts = '{not json', metadata = 'nope' WHERE id = ?")
            .bind(reply.as_str())
            .execute(store.pool())
            .await
            .unwrap();
        let rows = store.list_messages(&topic.id).await.unwrap();
        assert_eq!(rows.len(), 2);
        assert!(matches!(&rows[1].message.parts[0], UiPart::Data(d) if d.kind == "data-error"));

        sqlx::query(
            r#"UPDATE messages SET parts = '[{"type":"text","text":"kept"},{"type":"hologram"}]' WHERE id = ?"#,
        )
        .bind(reply.as_str())
        .execute(store.pool())
        .await
        .unwrap();
        let row = store.get_message(&reply).await.unwrap();
        assert_eq!(row.message.text(), "kept");
        assert!(matches!(&row.message.parts[1], UiPart::Data(d) if d.kind == "data-error"));
    }

    #[tokio::test]
    async fn replies_can_be_added_to_a_turn_and_reopened() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (user, reply) = turn(&store, &topic.id, "hello").await;
        let turn_id = store.get_message(&reply).await.unwrap().turn_id.unwrap();
        let second = MessageId::new();
        let slot = AssistantSlot { message_id: second.clone(), model: model(), metadata: json!({}) };
        store.insert_replies(&topic.id, &turn_id, &[slot]).await.unwrap();
        let row = store.get_message(&second).await.unwrap();
        assert_eq!(row.parent_id.as_ref(), Some(&user));
        assert_eq!(row.turn_id.as_ref(), Some(&turn_id));

        let mut message =
            UiMessage { id: reply.to_string(), role: MessageRole::Assistant, parts: vec![], metadata: None };
        message.parts.push(UiPart::Text { text: "partial".into(), state: Some(PartState::Done) });
        let checkpoint = Checkpoint {
            message_id: reply.clone(),
            status: MessageStatus::Paused,
            status_reason: Some("user_stop".into()),
            message,
        };
        let before = store.get_message(&reply).await.unwrap().revision;
        store.write_checkpoints(&[checkpoint]).await.unwrap();
        let seen = store.get_message(&reply).await.unwrap().revision;
        assert!(seen > before, "every write bumps the revision");
        // Prepared from the read before the checkpoint: refused, nothing changes.
        assert!(matches!(store.reopen_reply(&reply, before).await, Err(StoreError::Changed { .. })));
        assert_eq!(store.get_message(&reply).await.unwrap().status, MessageStatus::Paused);
        store.reopen_reply(&reply, seen).await.unwrap();
        let row = store.get_message(&reply).await.unwrap();
        assert_eq!(
            (row.status, row.status_reason.as_deref(), row.message.text().as_str()),
            (MessageStatus::Pending, None, "partial")
        );
        assert!(
            matches!(store.reopen_reply(&user, 0).await, Err(StoreError::NotFound { .. })),
            "user rows are not replies"
        );
        // Writes other than ours (an approval answered, recovery at start-up) bump it too.
        let seen = store.get_message(&reply).await.unwrap().revision;
        store.recover_interrupted().await.unwrap();
        assert!(store.get_message(&reply).await.unwrap().revision > seen);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_turns_in_many_topics_all_get_admitted() {
        let (store, _dir) = store().await;
        let mut topics = Vec::new();
        for i in 0..20 {
            topics.push(store.create_topic(&format!("t{i}"), None).await.unwrap().id);
        }
        let mut tasks = Vec::new();
        for topic in topics {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..5 {
                    turn(&store, &topic, "hello").await;
                }
            }));
        }
        for task in tasks {
            task.await.expect("no admission failed with `database is locked`");
        }
    }

    #[tokio::test]
    async fn deleting_a_topic_deletes_its_messages() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (user, _) = turn(&store, &topic.id, "hello").await;
        store.delete_topic(&topic.id).await.unwrap();
        assert!(matches!(store.get_message(&user).await, Err(StoreError::NotFound { .. })));
    }
}
