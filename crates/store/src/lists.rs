//! Who hears that a list changed: the store calls one watcher (the engine hands it the
//! status hub) after each stored write that changes what [`Store::list_topics`] or
//! [`Store::list_sessions`] answer, so windows read a list again only when it changed.
//!
//! Every such write goes through this crate, so the calls live beside the writes: a topic
//! created, changed (title, model, settings), written in (its order), deleted, forked or
//! imported; an assistant deleted (topics forget it); a session created, changed, given a
//! resume token or deleted; an ACP agent renamed or deleted (sessions show its name).

use std::sync::{Arc, RwLock};

use protocol::{ListName, TopicId, TopicKind};

use crate::Store;

/// Called with the list that changed, after the write is stored.
pub type ListWatcher = Arc<dyn Fn(ListName) + Send + Sync>;

#[derive(Default)]
pub(crate) struct ListWatch(RwLock<Option<ListWatcher>>);

impl std::fmt::Debug for ListWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let watched = self.0.read().map(|w| w.is_some()).unwrap_or_default();
        f.debug_struct("ListWatch").field("watched", &watched).finish()
    }
}

impl Store {
    /// Calls `watcher` after every stored write that changes a list (see the module
    /// docs). One watcher per store: a later call replaces the earlier.
    pub fn watch_lists(&self, watcher: impl Fn(ListName) + Send + Sync + 'static) {
        if let Ok(mut watch) = self.lists.0.write() {
            *watch = Some(Arc::new(watcher));
        }
    }

    /// Tells the watcher that `list` changed; call it once the write is committed.
    pub(crate) fn list_changed(&self, list: ListName) {
        // Cloned out so the watcher runs without the lock.
        let watcher = self.lists.0.read().ok().and_then(|w| w.clone());
        if let Some(watcher) = watcher {
            watcher(list);
        }
    }

    /// Tells the watcher that the list holding `topic_id` changed (an agent session's
    /// topic is listed as the session).
    pub(crate) fn topic_list_changed(&self, topic_id: &TopicId) {
        self.list_changed(match topic_id.kind() {
            TopicKind::Chat => ListName::Topics,
            TopicKind::AgentSession => ListName::AgentSessions,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use protocol::api::ModelParams;
    use protocol::message::UiMessage;
    use protocol::{MessageId, ModelRef, ProviderId, TurnId};

    use super::*;
    use crate::acp::AcpAgentSettings;
    use crate::assistants::AssistantFields;
    use crate::sessions::NewSession;
    use crate::test_support::store;
    use crate::topics::TopicChanges;
    use crate::{AssistantSlot, NewTurn};

    /// Runs `write` and says which lists the watcher heard of.
    async fn heard<F: std::future::Future<Output = ()>>(told: &Arc<Mutex<Vec<ListName>>>, write: F) -> Vec<ListName> {
        told.lock().unwrap().clear();
        write.await;
        told.lock().unwrap().clone()
    }

    #[tokio::test]
    async fn every_write_a_list_shows_is_told_once_it_is_stored() {
        let (store, _dir) = store().await;
        let told = Arc::new(Mutex::new(Vec::new()));
        let tell = told.clone();
        store.watch_lists(move |list| tell.lock().unwrap().push(list));
        use ListName::{AgentSessions, Topics};

        let topic = store.create_topic("chat", None).await.unwrap();
        let fresh = store.create_topic("fresh", None).await.unwrap();
        assert_eq!(store.list_topics().await.unwrap().len(), 2);
        let again = heard(&told, async {
            store.create_topic_with_id(&topic.id, "chat", None).await.unwrap();
        });
        assert_eq!(again.await, [], "an id that exists makes nothing");
        let renamed = heard(&told, async {
            store.update_topic(&topic.id, Some("named by its first reply"), None).await.unwrap();
        });
        assert_eq!(renamed.await, [Topics]);
        let user = MessageId::new();
        let turn = NewTurn {
            topic_id: topic.id.clone(),
            turn_id: TurnId::new(),
            user_message_id: user.clone(),
            user_parts: UiMessage::user_text("", "hi").parts,
            edit_of: None,
            assistants: vec![AssistantSlot {
                message_id: MessageId::new(),
                model: ModelRef { provider_id: ProviderId("p".into()), model: "m".into() },
                metadata: serde_json::json!({}),
            }],
        };
        assert_eq!(heard(&told, async { store.insert_turn(&turn).await.unwrap() }).await, [Topics], "it moves up");
        assert_eq!(heard(&told, async { store.touch_topic(&topic.id).await.unwrap() }).await, [Topics]);
        let kept = heard(&told, async { assert!(!store.delete_topic_if_empty(&topic.id).await.unwrap()) });
        assert_eq!(kept.await, [], "a topic in use stays");
        let forked = heard(&told, async {
            store.fork_topic(&topic.id, &user).await.unwrap();
        });
        assert_eq!(forked.await, [Topics]);
        assert_eq!(
            heard(&told, async { assert!(store.delete_topic_if_empty(&fresh.id).await.unwrap()) }).await,
            [Topics]
        );

        let fields = AssistantFields {
            name: "helper",
            system_prompt: "",
            models: &[],
            tools: None,
            max_tool_calls: 20,
            workspace: None,
            features: None,
            params: ModelParams::default(),
        };
        store.save_assistant("a1", &fields).await.unwrap();
        store.save_assistant("a2", &fields).await.unwrap();
        let changes = TopicChanges { assistant_id: Some(Some("a1")), ..TopicChanges::default() };
        store.change_topic(&topic.id, &changes).await.unwrap();
        assert_eq!(heard(&told, async { store.delete_assistant("a1").await.unwrap() }).await, [Topics]);
        assert_eq!(heard(&told, async { store.delete_assistant("a2").await.unwrap() }).await, [], "no topic had it");

        let session = NewSession {
            id: "s1",
            title: "Fix the build",
            agent: "acp",
            acp_agent_id: Some("agent"),
            workspace: "/w",
            provider_id: None,
            model: "",
            permission_mode: "default",
        };
        let made = heard(&told, async {
            store.create_session(&session).await.unwrap();
        });
        assert_eq!(made.await, [AgentSessions]);
        let session_topic = TopicId::agent_session("s1");
        let renamed = heard(&told, async {
            store.update_topic(&session_topic, Some("Fix the tests"), None).await.unwrap();
        });
        assert_eq!(renamed.await, [AgentSessions], "a session's title is its topic's");
        let changed = heard(&told, async {
            store.update_session("s1", Some("opus"), None).await.unwrap();
        });
        assert_eq!(changed.await, [AgentSessions]);
        let resumable = heard(&told, async { store.set_resume_token("s1", Some("tok")).await.unwrap() });
        assert_eq!(resumable.await, [AgentSessions]);
        let settings = AcpAgentSettings { name: "Agent", command: "agent", args: &[], variables: &[], workspace: None };
        store.create_acp_agent("agent", &settings).await.unwrap();
        let renamed = heard(&told, async {
            store.update_acp_agent("agent", &AcpAgentSettings { name: "Renamed", ..settings }).await.unwrap();
        });
        assert_eq!(renamed.await, [AgentSessions], "sessions show their agent's name");
        assert_eq!(heard(&told, async { store.delete_acp_agent("agent").await.unwrap() }).await, [AgentSessions]);
        let gone = heard(&told, async {
            store.delete_session("s1").await.unwrap();
        });
        assert_eq!(gone.await, [AgentSessions]);
        assert_eq!(heard(&told, async { store.delete_topic(&topic.id).await.unwrap() }).await, [Topics]);

        let failed = heard(&told, async {
            assert!(store.update_topic(&topic.id, Some("gone"), None).await.is_err());
            assert!(store.delete_topic(&topic.id).await.is_err());
        });
        assert_eq!(failed.await, [], "a write that changed nothing tells nothing");
    }
}
