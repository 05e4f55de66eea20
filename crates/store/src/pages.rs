//! The conversation as shown, read a page at a time: a long topic opens with its last
//! turns and the rest comes as the user scrolls up. Pages hold whole turns (a user message
//! with its active replies), newest first; the cursor is the user message a page starts at.
//!
//! Only the light rows of the topic ([`tree::nodes`]) are read to work out the path; the
//! full rows (parts, metadata) are read for the page alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use protocol::api::StoredMessage;
use protocol::{MessageId, TopicId};

use crate::messages::from_row;
use crate::tree::{self, Node, Step, Tip, Tree};
use crate::{Result, Store, StoreError};

/// A page of the active path: its messages oldest first, and where the page above starts.
#[derive(Clone, Debug, PartialEq)]
pub struct PathPage {
    pub messages: Vec<StoredMessage>,
    /// The user message to ask the next page `before`; `None` at the first turn.
    pub older: Option<MessageId>,
}

/// The last `turns` turns of `steps` (a path, oldest first), as a range of `steps`, and
/// whether anything is above it. A turn starts at each user message; anything before the
/// first user message belongs to the first turn.
fn last_turns(nodes: &[Node], steps: &[Step], turns: usize) -> (usize, bool) {
    let starts: Vec<usize> = steps.iter().enumerate().filter(|(_, s)| nodes[s.node].user).map(|(i, _)| i).collect();
    if turns == 0 || starts.len() <= turns {
        return (0, false);
    }
    (starts[starts.len() - turns], true)
}

/// How many topics' paths are kept; a window shows one or a few at a time.
const KEPT_PATHS: usize = 8;

/// A topic's active path, worked out from all its rows, kept while `topics.path_version`
/// (migration 0020: bumped by every write that can change a path) stays the same. Paging
/// through a 10,000-message topic then reads each page's rows alone, not the whole topic's
/// shape per page.
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    entries: Mutex<Vec<(String, Arc<KnownPath>)>>,
}

#[derive(Debug)]
struct KnownPath {
    version: i64,
    nodes: Vec<Node>,
    /// The active path.
    steps: Vec<Step>,
    /// Where each user message of the path is in `steps`.
    user_at: HashMap<String, usize>,
}

impl PathCache {
    fn get(&self, topic_id: &str, version: i64) -> Option<Arc<KnownPath>> {
        let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries.iter().find(|(id, known)| id == topic_id && known.version == version).map(|(_, known)| known.clone())
    }

    fn put(&self, topic_id: &str, known: Arc<KnownPath>) {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries.retain(|(id, _)| id != topic_id);
        // Most recent last; the least recently worked out goes first.
        if entries.len() >= KEPT_PATHS {
            entries.remove(0);
        }
        entries.push((topic_id.to_owned(), known));
    }
}

impl Store {
    /// Up to `turns` turns of the topic's active path, the last ones, or (with `before`, a
    /// user message on the path) the ones just above it. A `before` that is no longer on
    /// the active path (a version above it was switched) still pages through the
    /// conversation it continues; one that is gone, or not a user message of the topic, is
    /// [`StoreError::NotFound`].
    pub async fn path_page(&self, topic_id: &TopicId, before: Option<&MessageId>, turns: usize) -> Result<PathPage> {
        // One read transaction: the page's rows are the ones the path was worked out from.
        let mut tx = self.pool().begin().await?;
        let version: Option<i64> = sqlx::query_scalar("SELECT path_version FROM topics WHERE id = ?")
            .bind(topic_id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let known = match version.and_then(|version| self.paths.get(topic_id.as_str(), version)) {
            Some(known) => known,
            None => {
                let nodes = tree::nodes(&mut tx, topic_id.as_str()).await?;
                let steps = Tree::new(&nodes).path(Tip::Active).unwrap_or_default();
                let user_at = steps
                    .iter()
                    .enumerate()
                    .filter(|(_, step)| nodes[step.node].user)
                    .map(|(at, step)| (nodes[step.node].id.clone(), at))
                    .collect();
                let known = Arc::new(KnownPath { version: version.unwrap_or(-1), nodes, steps, user_at });
                if version.is_some() {
                    self.paths.put(topic_id.as_str(), known.clone());
                }
                known
            }
        };
        let nodes = &known.nodes;
        // Above a message of the active path: the path up to it. Above one off the path
        // (a version was switched since the page was read): the path through it.
        let through: Vec<Step>;
        let steps: &[Step] = match before {
            None => &known.steps,
            Some(id) => match known.user_at.get(id.as_str()) {
                Some(&at) => &known.steps[..at],
                None => {
                    let not_found = || StoreError::NotFound { what: "message", id: id.to_string() };
                    let mut path = Tree::new(nodes).path(Tip::Through(id.as_str())).ok_or_else(not_found)?;
                    let at = path.iter().position(|s| nodes[s.node].id == id.as_str()).ok_or_else(not_found)?;
                    path.truncate(at);
                    through = path;
                    &through
                }
            },
        };
        let (start, more) = last_turns(nodes, steps, turns);
        let steps = &steps[start..];

        let ids: Vec<&str> = steps.iter().map(|s| nodes[s.node].id.as_str()).collect();
        let rows = sqlx::query(concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE topic_id = ? AND id IN (SELECT value FROM json_each(?))"
        ))
        .bind(topic_id.as_str())
        .bind(crate::messages::encode(&ids)?)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut by_id: HashMap<String, StoredMessage> = HashMap::with_capacity(rows.len());
        for row in &rows {
            let message = from_row(row)?;
            by_id.insert(message.id.as_str().to_owned(), message);
        }
        let messages = steps
            .iter()
            .filter_map(|step| {
                let mut message = by_id.remove(nodes[step.node].id.as_str())?;
                if step.versions.len() > 1 {
                    message.versions = step.versions.iter().map(|&i| MessageId(nodes[i].id.clone())).collect();
                }
                Some(message)
            })
            .collect();
        let older = if more { steps.first().map(|s| MessageId(nodes[s.node].id.clone())) } else { None };
        Ok(PathPage { messages, older })
    }
}

#[cfg(test)]
mod tests {
    use protocol::api::StoredMessage;
    use protocol::{MessageId, MessageRole, ModelRef, TopicId, TurnId, UiPart};

    use super::PathPage;
    use crate::test_support::store;
    use crate::{AssistantSlot, NewTurn, Store, StoreError};

    async fn turn(store: &Store, topic: &TopicId, text: &str, models: &[&str]) -> (MessageId, Vec<MessageId>) {
        let user = MessageId::new();
        let replies: Vec<MessageId> = models.iter().map(|_| MessageId::new()).collect();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.clone(),
                turn_id: TurnId::new(),
                user_message_id: user.clone(),
                user_parts: vec![UiPart::Text { text: text.into(), state: None }],
                edit_of: None,
                assistants: models
                    .iter()
                    .zip(&replies)
                    .map(|(model, id)| AssistantSlot {
                        message_id: id.clone(),
                        model: ModelRef { provider_id: "p".into(), model: (*model).into() },
                        metadata: serde_json::json!({}),
                    })
                    .collect(),
            })
            .await
            .unwrap();
        (user, replies)
    }

    /// An edit of user message `of`: a sibling with `text` and no reply yet.
    async fn edit(store: &Store, topic: &TopicId, of: &MessageId, text: &str) -> MessageId {
        let edit = MessageId::new();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.clone(),
                turn_id: TurnId::new(),
                user_message_id: edit.clone(),
                user_parts: vec![UiPart::Text { text: text.into(), state: None }],
                edit_of: Some(of.clone()),
                assistants: vec![],
            })
            .await
            .unwrap();
        edit
    }

    fn texts(messages: &[StoredMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m.message.role {
                MessageRole::User => m.message.text(),
                _ => format!("reply:{}", m.model.as_ref().map(|r| r.model.as_str()).unwrap_or_default()),
            })
            .collect()
    }

    async fn all_pages(store: &Store, topic: &TopicId, turns: usize) -> Vec<PathPage> {
        let mut pages = vec![store.path_page(topic, None, turns).await.unwrap()];
        while let Some(cursor) = pages.last().unwrap().older.clone() {
            pages.push(store.path_page(topic, Some(&cursor), turns).await.unwrap());
        }
        pages
    }

    #[tokio::test]
    async fn pages_go_newest_first_hold_whole_turns_and_join_into_the_active_path() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        for i in 0..7 {
            // Two models answer every third turn: a turn is more than two messages.
            let models: &[&str] = if i % 3 == 0 { &["a", "b"] } else { &["a"] };
            turn(&store, &topic.id, &format!("q{i}"), models).await;
        }
        let pages = all_pages(&store, &topic.id, 3).await;
        assert_eq!(pages.len(), 3);
        assert_eq!(texts(&pages[0].messages), ["q4", "reply:a", "q5", "reply:a", "q6", "reply:a", "reply:b"]);
        assert_eq!(texts(&pages[2].messages), ["q0", "reply:a", "reply:b"]);
        assert!(pages[2].older.is_none());
        // Every page starts at a user message with its replies right after it.
        for page in &pages {
            assert_eq!(page.messages[0].message.role, MessageRole::User);
        }
        let joined: Vec<MessageId> = pages.iter().rev().flat_map(|p| p.messages.iter().map(|m| m.id.clone())).collect();
        let path: Vec<MessageId> = store.active_path(&topic.id).await.unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(joined, path);
    }

    /// The path is kept between pages (`PathCache`): every write that changes it must show
    /// on the next page, and writes that do not (a reply's text) must not be missed either.
    #[tokio::test]
    async fn a_kept_path_follows_every_write_that_changes_it() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (first, _) = turn(&store, &topic.id, "q0", &["a"]).await;
        let newest = |store: Store, topic: TopicId| async move {
            texts(&store.path_page(&topic, None, 10).await.unwrap().messages)
        };
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["q0", "reply:a"]);

        // A new turn.
        let (second, replies) = turn(&store, &topic.id, "q1", &["a"]).await;
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["q0", "reply:a", "q1", "reply:a"]);
        // A reply's text and status change: not the path, but the page's rows are read afresh.
        store
            .write_raw(
                sqlx::query(
                    r#"UPDATE messages SET parts = '[{"type":"text","text":"new"}]', status = 'success' WHERE id = ?"#,
                )
                .bind(replies[0].as_str()),
            )
            .await
            .unwrap();
        let page = store.path_page(&topic.id, None, 10).await.unwrap();
        assert_eq!(page.messages[3].message.text(), "new");

        // An edit of the first message (a sibling) becomes the active version...
        let edit = edit(&store, &topic.id, &first, "q0 edited").await;
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["q0 edited"]);
        // ...and switching back brings the old branch (a change of `selected` only).
        store.select_message(&topic.id, &first).await.unwrap();
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["q0", "reply:a", "q1", "reply:a"]);
        // A page above a message that was on the path before the switch still works.
        store.select_message(&topic.id, &edit).await.unwrap();
        let above = store.path_page(&topic.id, Some(&second), 10).await.unwrap();
        assert_eq!(texts(&above.messages), ["q0", "reply:a"]);
        store.select_message(&topic.id, &first).await.unwrap();

        // A deleted message.
        store.delete_message(&topic.id, &second).await.unwrap();
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["q0", "reply:a"]);

        // The topic deleted and made again under the same id: the old path is not shown.
        store.delete_topic(&topic.id).await.unwrap();
        store.create_topic_with_id(&topic.id, "again", None).await.unwrap();
        assert!(newest(store.clone(), topic.id.clone()).await.is_empty());
        turn(&store, &topic.id, "fresh", &["b"]).await;
        assert_eq!(newest(store.clone(), topic.id.clone()).await, ["fresh", "reply:b"]);
    }

    #[tokio::test]
    async fn a_short_topic_is_one_page_and_an_empty_one_is_empty() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let empty = store.path_page(&topic.id, None, 50).await.unwrap();
        assert_eq!(empty, PathPage { messages: vec![], older: None });
        turn(&store, &topic.id, "only", &["a"]).await;
        let page = store.path_page(&topic.id, None, 50).await.unwrap();
        assert_eq!(texts(&page.messages), ["only", "reply:a"]);
        assert!(page.older.is_none());
    }

    #[tokio::test]
    async fn pages_follow_the_active_branch_with_versions_and_a_bad_cursor_is_not_found() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        let (first, _) = turn(&store, &topic.id, "q0", &["a"]).await;
        let (second, _) = turn(&store, &topic.id, "q1", &["a"]).await;
        turn(&store, &topic.id, "q2", &["a"]).await;
        // An edit of q1 starts a branch: the path is now q0, q1-edit.
        let edit = edit(&store, &topic.id, &second, "q1-edit").await;
        let page = store.path_page(&topic.id, None, 1).await.unwrap();
        assert_eq!(texts(&page.messages), ["q1-edit"]);
        assert_eq!(page.messages[0].versions, vec![second.clone(), edit.clone()]);
        assert_eq!(page.older.as_ref(), Some(&edit));
        let above = store.path_page(&topic.id, Some(&edit), 1).await.unwrap();
        assert_eq!(texts(&above.messages), ["q0", "reply:a"]);
        assert!(above.older.is_none());
        // The old branch's cursor still pages through the conversation it continues.
        let old_branch = store.path_page(&topic.id, Some(&second), 5).await.unwrap();
        assert_eq!(old_branch.messages[0].id, first);

        let gone = store.path_page(&topic.id, Some(&MessageId::new()), 5).await;
        assert!(matches!(gone, Err(StoreError::NotFound { what: "message", .. })), "{gone:?}");
        let other = store.create_topic("other", None).await.unwrap();
        let foreign = store.path_page(&other.id, Some(&first), 5).await;
        assert!(matches!(foreign, Err(StoreError::NotFound { .. })), "{foreign:?}");
    }
}
