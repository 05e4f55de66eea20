//! Versions and branches of a conversation: reading a path, switching versions, deleting
//! a message with everything below it, forking a topic at a message. The tree itself is
//! worked out in [`crate::tree`].

use std::collections::HashMap;

use protocol::api::{StoredMessage, Topic};
use protocol::{ListName, MessageId, TopicId, TurnId};
use serde_json::Value;
use sqlx::SqliteConnection;
use sqlx::sqlite::SqliteRow;

use crate::messages::{close_open_parts, encode, from_row, next_selected};
use crate::tree::{self, Node, Step, Tip, Tree};
use crate::{Result, Store, StoreError, now};

/// Every row of a topic, oldest first, with its place in the tree.
async fn rows(conn: &mut SqliteConnection, topic_id: &TopicId) -> Result<(Vec<SqliteRow>, Vec<Node>)> {
    let rows = sqlx::query(concat!("SELECT ", message_columns!(), " FROM messages WHERE topic_id = ? ORDER BY rowid"))
        .bind(topic_id.as_str())
        .fetch_all(&mut *conn)
        .await?;
    let nodes = rows.iter().map(tree::node).collect::<Result<Vec<_>>>()?;
    Ok((rows, nodes))
}

fn not_found(id: &MessageId) -> StoreError {
    StoreError::NotFound { what: "message", id: id.to_string() }
}

/// The messages of a path, each with its versions when it has more than one.
fn stored(rows: &[SqliteRow], nodes: &[Node], steps: &[Step]) -> Result<Vec<StoredMessage>> {
    steps
        .iter()
        .map(|step| {
            let mut message = from_row(&rows[step.node])?;
            if step.versions.len() > 1 {
                message.versions = step.versions.iter().map(|&i| MessageId(nodes[i].id.clone())).collect();
            }
            Ok(message)
        })
        .collect()
}

/// Makes the rows the active ones among their siblings.
async fn select(conn: &mut SqliteConnection, topic_id: &TopicId, ids: &[&str]) -> Result<()> {
    let selected = next_selected(conn, topic_id).await?;
    for id in ids {
        sqlx::query("UPDATE messages SET selected = ? WHERE id = ?")
            .bind(selected)
            .bind(id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

impl Store {
    /// The conversation as shown: the topic's active path, oldest first, each message
    /// with its versions.
    pub async fn active_path(&self, topic_id: &TopicId) -> Result<Vec<StoredMessage>> {
        let (rows, nodes) = rows(&mut *self.pool().acquire().await?, topic_id).await?;
        let steps = Tree::new(&nodes).path(Tip::Active).unwrap_or_default();
        stored(&rows, &nodes, &steps)
    }

    /// The conversation a user message continues, with its own turn: its ancestors, each
    /// with its active replies, down to it and its active replies.
    pub async fn path_through(&self, topic_id: &TopicId, user_message: &MessageId) -> Result<Vec<StoredMessage>> {
        let (rows, nodes) = rows(&mut *self.pool().acquire().await?, topic_id).await?;
        let steps =
            Tree::new(&nodes).path(Tip::Through(user_message.as_str())).ok_or_else(|| not_found(user_message))?;
        stored(&rows, &nodes, &steps)
    }

    /// Makes a message the active version among its siblings, and the path go through it
    /// (its ancestors become active too). Nothing else changes: a live reply keeps going.
    pub async fn select_message(&self, topic_id: &TopicId, message_id: &MessageId) -> Result<()> {
        let mut tx = self.write().await?;
        let nodes = tree::nodes(&mut tx, topic_id.as_str()).await?;
        let tree = Tree::new(&nodes);
        let index = tree.find(message_id.as_str()).ok_or_else(|| not_found(message_id))?;
        let user = if nodes[index].user { Some(index) } else { tree.parent_user(index) };
        let mut ids: Vec<&str> = match user {
            Some(user) => tree
                .path(Tip::Through(&nodes[user].id))
                .unwrap_or_default()
                .iter()
                .filter(|step| nodes[step.node].user)
                .map(|step| nodes[step.node].id.as_str())
                .collect(),
            None => Vec::new(),
        };
        ids.push(message_id.as_str());
        select(&mut tx, topic_id, &ids).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a message with everything below it (a user message: its replies and every
    /// later turn of its branch; a reply version: itself), with their tool-call ledgers.
    /// When it was the active version, a neighbour becomes active. Refused while a reply
    /// in what would go is streaming or waits for an approval. Returns the deleted ids.
    pub async fn delete_message(&self, topic_id: &TopicId, message_id: &MessageId) -> Result<Vec<MessageId>> {
        let mut tx = self.write().await?;
        let nodes = tree::nodes(&mut tx, topic_id.as_str()).await?;
        let tree = Tree::new(&nodes);
        let index = tree.find(message_id.as_str()).ok_or_else(|| not_found(message_id))?;
        let doomed = tree.subtree(index);
        let what = if nodes[index].user { "this message and what follows it" } else { "this reply" };
        if doomed.iter().any(|&i| matches!(nodes[i].status.as_str(), "pending" | "streaming")) {
            return Err(StoreError::Refused(format!(
                "a reply in {what} is still being written; stop it first, then delete"
            )));
        }
        let awaiting = protocol::StatusReason::AwaitingApproval.as_str();
        if doomed.iter().any(|&i| nodes[i].status == "paused" && nodes[i].status_reason.as_deref() == Some(awaiting)) {
            return Err(StoreError::Refused(format!(
                "a reply in {what} waits for your approval; answer it or press Stop first, then delete"
            )));
        }
        if tree.is_active(index)
            && let Some(next) = tree.neighbour(index)
        {
            select(&mut tx, topic_id, &[nodes[next].id.as_str()]).await?;
        }
        // Children first: nothing is ever left pointing at a deleted parent.
        for &i in doomed.iter().rev() {
            sqlx::query("DELETE FROM messages WHERE id = ?").bind(&nodes[i].id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(doomed.into_iter().map(|i| MessageId(nodes[i].id.clone())).collect())
    }

    /// A new topic whose history is a copy of the path up to a message: at a user message,
    /// its turn with the active replies; at a reply, its turn with that reply alone. The
    /// copies have their own ids (and turn ids); a reply that was not finished is copied
    /// as paused (`interrupted`), with its open parts closed. The new topic keeps the
    /// origin's model, assistant and workspace, and says where it came from.
    pub async fn fork_topic(&self, topic_id: &TopicId, message_id: &MessageId) -> Result<Topic> {
        let new_topic = TopicId::new();
        let now = now();
        let mut tx = self.write().await?;
        let (rows, nodes) = rows(&mut tx, topic_id).await?;
        let tree = Tree::new(&nodes);
        let index = tree.find(message_id.as_str()).ok_or_else(|| not_found(message_id))?;
        let user = if nodes[index].user { Some(index) } else { tree.parent_user(index) };
        let Some(user) = user else { return Err(not_found(message_id)) };
        let mut steps: Vec<usize> =
            tree.path(Tip::Through(&nodes[user].id)).unwrap_or_default().iter().map(|s| s.node).collect();
        if !nodes[index].user {
            steps.retain(|&i| nodes[i].user || nodes[i].parent.as_deref() != Some(nodes[user].id.as_str()));
            steps.push(index);
        }

        let created = sqlx::query(
            "INSERT INTO topics (id, title, provider_id, model_name, workspace, assistant_id, \
             forked_from_topic_id, forked_from_message_id, seen_at, created_at, updated_at) \
             SELECT ?, title || ' (fork)', provider_id, model_name, workspace, assistant_id, id, ?, ?, ?, ? \
             FROM topics WHERE id = ?",
        )
        .bind(new_topic.as_str())
        .bind(message_id.as_str())
        .bind(&now)
        .bind(&now)
        .bind(&now)
        .bind(topic_id.as_str())
        .execute(&mut *tx)
        .await?;
        if created.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "topic", id: topic_id.to_string() });
        }

        let mut new_ids: HashMap<&str, String> = HashMap::new();
        let mut new_turns: HashMap<String, TurnId> = HashMap::new();
        for &i in &steps {
            let row = from_row(&rows[i])?;
            let new_id = MessageId::new().to_string();
            let parent = nodes[i].parent.as_deref().and_then(|p| new_ids.get(p)).cloned();
            let turn = row.turn_id.as_ref().map(|t| new_turns.entry(t.to_string()).or_default().clone());
            let (raw_parts, raw_metadata): (String, String) =
                sqlx::query_as("SELECT parts, metadata FROM messages WHERE id = ?")
                    .bind(&nodes[i].id)
                    .fetch_one(&mut *tx)
                    .await?;
            let mut metadata = serde_json::from_str::<Value>(&raw_metadata).unwrap_or_else(|_| serde_json::json!({}));
            if let (Some(object), Some(turn)) = (metadata.as_object_mut(), &turn)
                && object.contains_key("turnId")
            {
                object.insert("turnId".into(), Value::String(turn.to_string()));
            }
            let live = matches!(nodes[i].status.as_str(), "pending" | "streaming")
                || nodes[i].status_reason.as_deref() == Some(protocol::StatusReason::AwaitingApproval.as_str());
            let (status, reason, parts) = if live {
                let parts = match serde_json::from_str::<Vec<Value>>(&raw_parts) {
                    Ok(mut parts) => {
                        close_open_parts(&mut parts);
                        encode(&parts)?
                    }
                    Err(_) => raw_parts,
                };
                ("paused".to_owned(), Some(protocol::StatusReason::Interrupted.as_str().to_owned()), parts)
            } else {
                (nodes[i].status.clone(), nodes[i].status_reason.clone(), raw_parts)
            };
            let role = if nodes[i].user { "user" } else { "assistant" };
            let model = row.model.as_ref();
            sqlx::query(
                "INSERT INTO messages (id, topic_id, parent_id, turn_id, siblings_group_id, role, status, status_reason, \
                 provider_id, model_name, parts, metadata, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&new_id)
            .bind(new_topic.as_str())
            .bind(parent)
            .bind(turn.as_ref().map(TurnId::as_str))
            .bind(if nodes[i].user { None } else { turn.as_ref().map(TurnId::as_str) })
            .bind(role)
            .bind(status)
            .bind(reason)
            .bind(model.map(|m| m.provider_id.as_str()))
            .bind(model.map(|m| m.model.as_str()))
            .bind(parts)
            .bind(encode(&metadata)?)
            .bind(&row.created_at)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
            new_ids.insert(nodes[i].id.as_str(), new_id);
        }
        tx.commit().await?;
        self.list_changed(ListName::Topics);
        self.get_topic(&new_topic).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{AssistantSlot, Checkpoint, NewTurn};
    use crate::test_support::store;
    use protocol::{MessageRole, MessageStatus, ModelRef, ProviderId, UiMessage, UiPart};
    use serde_json::json;

    fn model(name: &str) -> ModelRef {
        ModelRef { provider_id: ProviderId("p".into()), model: name.into() }
    }

    fn slot(name: &str) -> AssistantSlot {
        AssistantSlot { message_id: MessageId::new(), model: model(name), metadata: json!({}) }
    }

    /// A turn with one reply per model; `edit_of` makes it a new version of that message.
    async fn turn(store: &Store, topic: &TopicId, text: &str, models: &[&str], edit_of: Option<&MessageId>) -> NewTurn {
        let turn = NewTurn {
            topic_id: topic.clone(),
            turn_id: TurnId::new(),
            user_message_id: MessageId::new(),
            user_parts: UiMessage::user_text("", text).parts,
            edit_of: edit_of.cloned(),
            assistants: models.iter().map(|m| slot(m)).collect(),
        };
        store.insert_turn(&turn).await.unwrap();
        turn
    }

    async fn finish(store: &Store, reply: &MessageId, text: &str) {
        let message = UiMessage {
            id: reply.to_string(),
            role: MessageRole::Assistant,
            parts: vec![UiPart::Text { text: text.into(), state: None }],
            metadata: None,
        };
        let checkpoint =
            Checkpoint { message_id: reply.clone(), status: MessageStatus::Success, status_reason: None, message };
        store.write_checkpoints(&[checkpoint]).await.unwrap();
    }

    fn texts(path: &[StoredMessage]) -> Vec<String> {
        path.iter().map(|m| m.message.text()).collect()
    }

    /// Every row's parent is a row of the same topic: nothing is left orphaned.
    async fn assert_no_orphans(store: &Store, topic: &TopicId) {
        let all = store.list_messages(topic).await.unwrap();
        for message in &all {
            if let Some(parent) = &message.parent_id {
                assert!(all.iter().any(|m| &m.id == parent), "{} points at a missing parent", message.id);
            }
        }
    }

    #[tokio::test]
    async fn regenerating_keeps_every_version_and_one_per_column_is_shown() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        let first = turn(&store, &topic, "hello", &["a", "b"], None).await;
        let a1 = first.assistants[0].message_id.clone();
        finish(&store, &a1, "a one").await;
        finish(&store, &first.assistants[1].message_id, "b one").await;
        let a2 = slot("a");
        store.insert_replies(&topic, &first.turn_id, std::slice::from_ref(&a2)).await.unwrap();
        finish(&store, &a2.message_id, "a two").await;

        let path = store.active_path(&topic).await.unwrap();
        assert_eq!(texts(&path), ["hello", "a two", "b one"], "the new version is active, columns keep their order");
        assert_eq!(path[1].versions, [a1.clone(), a2.message_id.clone()]);
        assert!(path[0].versions.is_empty() && path[2].versions.is_empty(), "one version: none listed");

        store.select_message(&topic, &a1).await.unwrap();
        assert_eq!(texts(&store.active_path(&topic).await.unwrap()), ["hello", "a one", "b one"]);
        // A new turn continues the active path whatever version is shown.
        let next = turn(&store, &topic, "more", &["a"], None).await;
        let row = store.get_message(&next.user_message_id).await.unwrap();
        assert_eq!(row.parent_id.as_ref(), Some(&first.user_message_id));
    }

    #[tokio::test]
    async fn an_edit_starts_a_branch_and_the_old_one_stays_switchable() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        turn(&store, &topic, "one", &["a"], None).await;
        let second = turn(&store, &topic, "two", &["a"], None).await;
        turn(&store, &topic, "three", &["a"], None).await;

        let edited = turn(&store, &topic, "two, edited", &["a"], Some(&second.user_message_id)).await;
        let path = store.active_path(&topic).await.unwrap();
        assert_eq!(texts(&path), ["one", "", "two, edited", ""]);
        assert_eq!(path[2].versions, [second.user_message_id.clone(), edited.user_message_id.clone()]);
        // Through the old version: the conversation it continued, with its own turn.
        let through = store.path_through(&topic, &second.user_message_id).await.unwrap();
        assert_eq!(texts(&through), ["one", "", "two", ""]);

        store.select_message(&topic, &second.user_message_id).await.unwrap();
        assert_eq!(texts(&store.active_path(&topic).await.unwrap()), ["one", "", "two", "", "three", ""]);
        // Editing something that is not a user message of the topic changes nothing.
        let bad = NewTurn { edit_of: Some(second.assistants[0].message_id.clone()), ..edited.clone() };
        let bad = NewTurn { user_message_id: MessageId::new(), ..bad };
        assert!(matches!(store.insert_turn(&bad).await, Err(StoreError::NotFound { .. })));
        assert_eq!(store.list_messages(&topic).await.unwrap().len(), 8);
    }

    #[tokio::test]
    async fn deleting_takes_what_hangs_below_and_a_neighbour_takes_over() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap().id;
        let first = turn(&store, &topic, "one", &["a"], None).await;
        let second = turn(&store, &topic, "two", &["a"], None).await;
        turn(&store, &topic, "three", &["a"], None).await;
        let edited = turn(&store, &topic, "two b", &["a"], Some(&second.user_message_id)).await;
        finish(&store, &edited.assistants[0].message_id, "answer b").await;

        // A reply still being written cannot go.
        let err = store.delete_message(&topic, &second.user_message_id).await.unwrap_err();
        assert!(matches!(err, StoreError::Refused(_)), "{err:?}");
        for message in store.list_messages(&topic).await.unwrap() {
            if message.status == MessageStatus::Pending {
                finish(&store, &message.id, "done").await;
            }
        }
        // The active version goes: its neighbour (the one before it) is shown.
        let gone = store.delete_message(&topic, &edited.user_message_id).await.unwrap();
        assert_eq!(gone.len(), 2);
        assert_eq!(texts(&store.active_path(&topic).await.unwrap()), ["one", "done", "two", "done", "three", "done"]);
        // A user message takes every later turn of its branch.
        let gone = store.delete_message(&topic, &second.user_message_id).await.unwrap();
        assert_eq!(gone.len(), 4);
        assert_eq!(texts(&store.active_path(&topic).await.unwrap()), ["one", "done"]);
        assert_no_orphans(&store, &topic).await;
        let reply = first.assistants[0].message_id.clone();
        store.delete_message(&topic, &reply).await.unwrap();
        assert_eq!(texts(&store.active_path(&topic).await.unwrap()), ["one"]);
        assert!(matches!(store.delete_message(&topic, &reply).await, Err(StoreError::NotFound { .. })));
    }

    #[tokio::test]
    async fn a_fork_copies_the_path_with_new_ids_and_the_two_diverge() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("Trip", None).await.unwrap().id;
        let first = turn(&store, &topic, "one", &["a", "b"], None).await;
        finish(&store, &first.assistants[0].message_id, "a says").await;
        finish(&store, &first.assistants[1].message_id, "b says").await;
        let second = turn(&store, &topic, "two", &["a"], None).await;

        // At a reply: its turn keeps that reply alone; a reply still pending is paused.
        let fork = store.fork_topic(&topic, &first.assistants[1].message_id).await.unwrap();
        assert_eq!(fork.title, "Trip (fork)");
        let origin = fork.forked_from.clone().unwrap();
        assert_eq!((origin.topic_id, origin.message_id), (topic.clone(), first.assistants[1].message_id.clone()));
        let copied = store.active_path(&fork.id).await.unwrap();
        assert_eq!(texts(&copied), ["one", "b says"]);
        assert!(copied.iter().all(|m| m.id != first.user_message_id && m.id != first.assistants[1].message_id));
        assert_eq!(copied[1].parent_id.as_ref(), Some(&copied[0].id));
        assert_ne!(copied[0].turn_id, Some(first.turn_id.clone()));

        let at_user = store.fork_topic(&topic, &second.user_message_id).await.unwrap();
        let copied = store.active_path(&at_user.id).await.unwrap();
        assert_eq!(texts(&copied), ["one", "a says", "b says", "two", ""]);
        assert_eq!(
            (copied[4].status, copied[4].status_reason.as_deref()),
            (MessageStatus::Paused, Some("interrupted"))
        );

        // They diverge.
        turn(&store, &fork.id, "only in the fork", &["a"], None).await;
        assert_eq!(store.active_path(&topic).await.unwrap().len(), 5);
        assert_eq!(store.active_path(&fork.id).await.unwrap().len(), 4);
        assert!(matches!(store.fork_topic(&topic, &MessageId::new()).await, Err(StoreError::NotFound { .. })));
    }

    #[tokio::test]
    async fn a_linear_topic_from_before_the_tree_migrates_to_a_single_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("colloquy.db");
        let url = format!("sqlite:{}?mode=rwc", path.display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        crate::MIGRATOR.run_to(12, &pool).await.unwrap();
        sqlx::query("INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t', 'old', 'x', 'x')")
            .execute(&pool)
            .await
            .unwrap();
        // Before the tree: a user row hung under whatever row came before it.
        let rows = [
            ("u1", None, "user", None),
            ("a1", Some("u1"), "assistant", Some("a")),
            ("b1", Some("u1"), "assistant", Some("b")),
            ("u2", Some("b1"), "user", None),
            ("a2", Some("u2"), "assistant", Some("a")),
            ("u3", Some("a2"), "user", None),
        ];
        for (id, parent, role, model) in rows {
            sqlx::query(
                "INSERT INTO messages (id, topic_id, parent_id, turn_id, role, status, provider_id, model_name, parts, created_at, updated_at) \
                 VALUES (?, 't', ?, ?, ?, 'success', ?, ?, ?, 'x', 'x')",
            )
            .bind(id)
            .bind(parent)
            .bind(format!("turn-{}", &id[1..]))
            .bind(role)
            .bind(model.map(|_| "p"))
            .bind(model)
            .bind(format!(r#"[{{"type":"text","text":"{id}"}}]"#))
            .execute(&pool)
            .await
            .unwrap();
        }
        pool.close().await;

        let store = Store::open(&path).await.unwrap();
        let topic = TopicId("t".into());
        let path = store.active_path(&topic).await.unwrap();
        assert_eq!(texts(&path), ["u1", "a1", "b1", "u2", "a2", "u3"], "every message, in order");
        assert!(path.iter().all(|m| m.versions.is_empty()), "no versions");
        let parent = |i: usize| path[i].parent_id.as_ref().map(MessageId::as_str);
        assert_eq!((parent(0), parent(3), parent(5)), (None, Some("u1"), Some("u2")), "user rows chain");
        assert_eq!(parent(4), Some("u2"), "replies stay under their message");
        assert_eq!(store.get_topic(&topic).await.unwrap().forked_from, None);
    }
}
