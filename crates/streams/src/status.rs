//! The topic-status feed every window subscribes to.
//!
//! Actors publish transitions here; the hub keeps the latest status per topic (so a
//! status outlives the actor's turn being evicted) and fans changes out on a broadcast
//! channel. A subscriber that falls behind on the broadcast starts over from a snapshot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use protocol::{
    ListChanged, ListName, ListVersion, ListVersions, PathChanged, PathVersion, StatusMessage, StatusSnapshot, TopicId,
    TopicPathVersion, TopicStatus, TopicStatusEvent,
};
use tokio::sync::broadcast;

#[derive(Clone)]
pub struct StatusHub {
    inner: Arc<Inner>,
}

struct Inner {
    latest: Mutex<HashMap<TopicId, TopicStatusEvent>>,
    /// Names this hub's count of path changes (see `PathVersion`): it starts over at 0 with
    /// every start of the backend.
    epoch: String,
    /// The last path version handed out, and each changed topic's version.
    paths: Mutex<Paths>,
    /// The last list version handed out, and each list's (same epoch, own counter).
    lists: Mutex<Lists>,
    /// `Changed`, `PathChanged` and `ListChanged` messages (a snapshot is made per
    /// subscriber).
    changes: broadcast::Sender<StatusMessage>,
}

impl Default for StatusHub {
    fn default() -> Self {
        Self::new()
    }
}

impl StatusHub {
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(1024);
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
        let epoch = format!("{started:x}-{:x}", std::process::id());
        Self {
            inner: Arc::new(Inner {
                latest: Mutex::new(HashMap::new()),
                epoch,
                paths: Mutex::new(Paths::default()),
                lists: Mutex::new(Lists::default()),
                changes,
            }),
        }
    }

    /// Records a new status. A finished turn (`done`, `aborted`, `error`) is unseen until
    /// [`StatusHub::mark_seen`]; a new turn clears the mark. Topic actors publish their
    /// turns' transitions; the engine publishes what it settles outside a live turn (a
    /// reply stopped while it waited for approval).
    pub fn publish(&self, topic_id: &TopicId, status: TopicStatus) {
        let unseen = matches!(status, TopicStatus::Done | TopicStatus::Aborted | TopicStatus::Error);
        self.set(TopicStatusEvent { topic_id: topic_id.clone(), status, unseen });
    }

    /// Restores a topic's status as found at start-up (already seen: nothing finished
    /// while the user could not look).
    pub fn seed(&self, topic_id: &TopicId, status: TopicStatus) {
        self.set(TopicStatusEvent { topic_id: topic_id.clone(), status, unseen: false });
    }

    /// Restores a topic's status and unseen mark as they were stored when the app stopped
    /// (the store keeps when the user last looked at each topic).
    pub fn restore(&self, topic_id: &TopicId, status: TopicStatus, unseen: bool) {
        self.set(TopicStatusEvent { topic_id: topic_id.clone(), status, unseen });
    }

    /// The user has looked at the topic: clears its unseen-completion mark.
    pub fn mark_seen(&self, topic_id: &TopicId) {
        let current = self.latest().into_iter().find(|e| &e.topic_id == topic_id);
        if let Some(event) = current.filter(|e| e.unseen) {
            self.set(TopicStatusEvent { unseen: false, ..event });
        }
    }

    /// Tells every window that the topic's active path changed without a new turn (a
    /// version was selected, a message deleted, a message edited).
    /// Call it once the change is stored: a page read after it then carries a version at
    /// least as new.
    pub fn path_changed(&self, topic_id: &TopicId) {
        let Ok(mut paths) = self.inner.paths.lock() else { return };
        paths.last += 1;
        let version = paths.last;
        paths.topics.insert(topic_id.clone(), version);
        // Sent under the lock: windows see the versions in the order they were handed out.
        let _ =
            self.inner.changes.send(StatusMessage::PathChanged(PathChanged { topic_id: topic_id.clone(), version }));
    }

    /// The path changes a read that starts now will have seen: take it before reading.
    pub fn path_version(&self) -> PathVersion {
        let version = self.inner.paths.lock().map(|paths| paths.last).unwrap_or_default();
        PathVersion { epoch: self.inner.epoch.clone(), version }
    }

    /// Tells every window that what `list` answers changed. Call it once the change is
    /// stored: a list read after it then carries a version at least as new.
    pub fn list_changed(&self, list: ListName) {
        let Ok(mut lists) = self.inner.lists.lock() else { return };
        lists.last += 1;
        let version = lists.last;
        match list {
            ListName::Topics => lists.versions.topics = version,
            ListName::AgentSessions => lists.versions.agent_sessions = version,
        }
        // Sent under the lock: windows see the versions in the order they were handed out.
        let _ = self.inner.changes.send(StatusMessage::ListChanged(ListChanged { list, version }));
    }

    /// The list changes a read that starts now will have seen: take it before reading.
    pub fn list_version(&self) -> ListVersion {
        let version = self.inner.lists.lock().map(|lists| lists.last).unwrap_or_default();
        ListVersion { epoch: self.inner.epoch.clone(), version }
    }

    /// Forgets a deleted topic.
    pub(crate) fn forget(&self, topic_id: &TopicId) {
        if let Ok(mut latest) = self.inner.latest.lock() {
            latest.remove(topic_id);
        }
        if let Ok(mut paths) = self.inner.paths.lock() {
            paths.topics.remove(topic_id);
        }
    }

    fn snapshot(&self) -> StatusSnapshot {
        let mut statuses = self.latest();
        statuses.sort_by(|a, b| a.topic_id.cmp(&b.topic_id));
        let mut path_versions: Vec<TopicPathVersion> = self
            .inner
            .paths
            .lock()
            .map(|paths| {
                let topics = paths.topics.iter();
                topics.map(|(topic_id, &version)| TopicPathVersion { topic_id: topic_id.clone(), version }).collect()
            })
            .unwrap_or_default();
        path_versions.sort_by(|a, b| a.topic_id.cmp(&b.topic_id));
        let list_versions = self.inner.lists.lock().map(|lists| lists.versions.clone()).unwrap_or_default();
        StatusSnapshot { statuses, path_epoch: self.inner.epoch.clone(), path_versions, list_versions }
    }

    pub fn latest(&self) -> Vec<TopicStatusEvent> {
        self.inner.latest.lock().map(|l| l.values().cloned().collect()).unwrap_or_default()
    }

    pub fn status_of(&self, topic_id: &TopicId) -> Option<TopicStatusEvent> {
        self.inner.latest.lock().ok().and_then(|l| l.get(topic_id).cloned())
    }

    /// A feed: the full picture first, then each change.
    pub fn subscribe(&self) -> StatusFeed {
        // Subscribe before reading the snapshot so no change falls between the two.
        let rx = self.inner.changes.subscribe();
        StatusFeed { hub: self.clone(), rx, snapshot_due: true }
    }

    fn set(&self, event: TopicStatusEvent) {
        if let Ok(mut latest) = self.inner.latest.lock() {
            if latest.get(&event.topic_id) == Some(&event) {
                return;
            }
            latest.insert(event.topic_id.clone(), event.clone());
        }
        // No receivers is fine: nobody is watching.
        let _ = self.inner.changes.send(StatusMessage::Changed(event));
    }
}

#[derive(Default)]
struct Paths {
    last: u64,
    topics: HashMap<TopicId, u64>,
}

#[derive(Default)]
struct Lists {
    last: u64,
    versions: ListVersions,
}

pub struct StatusFeed {
    hub: StatusHub,
    rx: broadcast::Receiver<StatusMessage>,
    snapshot_due: bool,
}

impl StatusFeed {
    /// The next message; `None` only when the hub is gone.
    pub async fn recv(&mut self) -> Option<StatusMessage> {
        loop {
            if self.snapshot_due {
                self.snapshot_due = false;
                return Some(StatusMessage::Snapshot(self.hub.snapshot()));
            }
            match self.rx.recv().await {
                Ok(message) => return Some(message),
                Err(broadcast::error::RecvError::Lagged(_)) => self.snapshot_due = true,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_feed_starts_with_a_snapshot_then_sees_changes_and_seen_marks() {
        let hub = StatusHub::new();
        let topic = TopicId::from("t");
        hub.publish(&topic, TopicStatus::Streaming);
        let mut feed = hub.subscribe();
        let Some(StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
        assert_eq!(snapshot.statuses[0].status, TopicStatus::Streaming);
        hub.publish(&topic, TopicStatus::Done);
        let Some(StatusMessage::Changed(done)) = feed.recv().await else { panic!() };
        assert_eq!((done.status, done.unseen), (TopicStatus::Done, true));
        hub.mark_seen(&topic);
        let Some(StatusMessage::Changed(seen)) = feed.recv().await else { panic!() };
        assert_eq!((seen.status, seen.unseen), (TopicStatus::Done, false));
        hub.path_changed(&topic);
        let Some(StatusMessage::PathChanged(changed)) = feed.recv().await else { panic!("path changes are told") };
        assert_eq!(changed.topic_id, topic);
    }

    #[tokio::test]
    async fn path_versions_order_reads_against_changes() {
        let hub = StatusHub::new();
        let (a, b) = (TopicId::from("a"), TopicId::from("b"));
        let before = hub.path_version();
        assert_eq!(before.version, 0);
        hub.path_changed(&a);
        hub.path_changed(&b);
        hub.path_changed(&a);
        let read = hub.path_version();
        assert_eq!((read.epoch.as_str(), read.version), (before.epoch.as_str(), 3));

        // A window connecting now learns each topic's last change: `a` at 3 is not newer
        // than a page read at 3; `b` at 2 neither.
        let mut feed = hub.subscribe();
        let Some(StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
        assert_eq!(snapshot.path_epoch, read.epoch);
        let versions: Vec<_> = snapshot.path_versions.iter().map(|p| (p.topic_id.as_str(), p.version)).collect();
        assert_eq!(versions, [("a", 3), ("b", 2)]);

        hub.path_changed(&b);
        let Some(StatusMessage::PathChanged(changed)) = feed.recv().await else { panic!("told") };
        assert_eq!((changed.topic_id, changed.version), (b.clone(), 4));
        hub.forget(&b);
        let Some(StatusMessage::Snapshot(snapshot)) = hub.subscribe().recv().await else { panic!() };
        assert_eq!(snapshot.path_versions.len(), 1, "a deleted topic's version is forgotten");
        assert_ne!(StatusHub::new().path_version().epoch, read.epoch, "each start has its own epoch");
    }

    #[tokio::test]
    async fn list_versions_order_reads_against_changes() {
        let hub = StatusHub::new();
        let before = hub.list_version();
        assert_eq!((before.epoch.as_str(), before.version), (hub.path_version().epoch.as_str(), 0), "same epoch");
        hub.list_changed(ListName::Topics);
        hub.list_changed(ListName::AgentSessions);
        hub.list_changed(ListName::Topics);
        // Path changes count apart: they do not move the lists' version.
        hub.path_changed(&TopicId::from("a"));
        let read = hub.list_version();
        assert_eq!(read.version, 3);

        // A window connecting now learns each list's last change: the topics at 3 are not
        // newer than a list read at 3, the sessions at 2 neither.
        let mut feed = hub.subscribe();
        let Some(StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("snapshot first") };
        assert_eq!(snapshot.list_versions, ListVersions { topics: 3, agent_sessions: 2 });

        hub.list_changed(ListName::AgentSessions);
        let Some(StatusMessage::ListChanged(changed)) = feed.recv().await else { panic!("told") };
        assert_eq!((changed.list, changed.version), (ListName::AgentSessions, 4));
        assert_eq!(hub.list_version().version, 4, "a read from now on saw it");
        let Some(StatusMessage::Snapshot(snapshot)) = hub.subscribe().recv().await else { panic!() };
        assert_eq!(snapshot.list_versions, ListVersions { topics: 3, agent_sessions: 4 });
        assert_eq!(StatusHub::new().list_version().version, 0, "each start counts from 0");
    }

    #[tokio::test]
    async fn a_lagging_feed_starts_over_from_a_snapshot() {
        let hub = StatusHub::new();
        let mut feed = hub.subscribe();
        let _ = feed.recv().await;
        for i in 0..2000 {
            hub.publish(&TopicId::from(format!("t{i}").as_str()), TopicStatus::Pending);
        }
        let Some(StatusMessage::Snapshot(snapshot)) = feed.recv().await else { panic!("lag → snapshot") };
        assert_eq!(snapshot.statuses.len(), 2000);
    }
}
