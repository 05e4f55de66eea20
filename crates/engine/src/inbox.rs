//! The steering inbox: messages sent while a turn runs, and the dispatcher that turns
//! them into the next turns.
//!
//! The dispatcher follows the status feed. When a topic's turn finishes well, the first
//! queued item becomes the next turn; when it fails or is stopped, queued items are held
//! (with a note) until the user releases them — nothing queued is ever dropped or sent
//! behind the user's back.

use std::sync::Arc;

use protocol::api::{
    InboxAddRequest, InboxItem, InboxItemRequest, InboxMoveRequest, InboxUpdateRequest, StreamOpenRequest,
};
use protocol::{ApiError, ModelRef, StatusMessage, TopicId, TopicStatus};
use sessions::SessionHost;
use store::Store;
use streams::{ListenerId, StreamManager};
use tokio_util::sync::CancellationToken;

use crate::turns::Turns;

pub(crate) const HELD_AFTER_ERROR: &str = "Not sent: a reply before it failed. Send it now or cancel it.";
pub(crate) const HELD_AFTER_STOP: &str = "Not sent: a reply before it was stopped. Send it now or cancel it.";
pub(crate) const HELD_AFTER_RESTART: &str = "Not sent: Colloquy was closed before its turn. Send it now or cancel it.";

/// The steering inbox of every topic, and its dispatcher.
pub(crate) struct Inbox {
    store: Store,
    streams: StreamManager,
    /// Agent sessions take steering messages at their next tool boundary.
    host: SessionHost,
    turns: Arc<Turns>,
    /// Counts the dispatcher's changes to the inbox (an item held or sent), so a test
    /// can await them instead of polling the store.
    changes: tokio::sync::watch::Sender<u64>,
}

impl Inbox {
    pub(crate) fn new(store: Store, streams: StreamManager, host: SessionHost, turns: Arc<Turns>) -> Self {
        Self { store, streams, host, turns, changes: tokio::sync::watch::Sender::new(0) }
    }

    /// Marks each change the dispatcher makes to a topic's queue (an item sent or held).
    /// Subscribe before reading the inbox, then read it again after each mark.
    #[cfg(test)]
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(crate) async fn inbox_add(&self, request: InboxAddRequest) -> Result<InboxItem, ApiError> {
        let text = request.text.trim();
        if text.is_empty() {
            return Err(ApiError::bad_request("text", "the message is empty"));
        }
        self.store.get_topic(&request.topic_id).await?;
        let models = self.checked_models(&request.topic_id, request.models).await?;
        let item = self.store.add_inbox_item(&request.topic_id, text, request.mode, models.as_deref()).await?;
        if request.mode == protocol::api::InboxMode::Steer {
            self.steer(&request.topic_id, text).await?;
        }
        self.dispatch_next(&request.topic_id).await;
        self.store.get_inbox_item(&item.id).await.or(Ok(item))
    }

    /// The models a queued message picked, checked now rather than when it runs: each
    /// provider exists, none twice, not too many; none for an agent session (its agent
    /// answers). Empty is no choice.
    async fn checked_models(
        &self,
        topic_id: &TopicId,
        models: Option<Vec<ModelRef>>,
    ) -> Result<Option<Vec<ModelRef>>, ApiError> {
        let Some(models) = models.filter(|models| !models.is_empty()) else { return Ok(None) };
        if crate::sessions::is_session(topic_id) {
            return Err(ApiError::bad_request(
                "models",
                "an agent session has one agent; other models answer in chat topics",
            ));
        }
        let models = crate::turns::distinct(models)?;
        for model in &models {
            if self.store.get_provider(&model.provider_id).await.is_err() {
                return Err(ApiError::bad_request(
                    "models",
                    format!("no provider {} (for {model})", model.provider_id),
                ));
            }
        }
        Ok(Some(models))
    }

    pub(crate) async fn inbox_update(&self, request: InboxUpdateRequest) -> Result<InboxItem, ApiError> {
        let text = match request.text.as_deref().map(str::trim) {
            Some("") => return Err(ApiError::bad_request("text", "the message is empty")),
            other => other,
        };
        let was = self.store.get_inbox_item(&request.id).await?;
        let item = self.store.update_inbox_item(&request.id, text, request.mode).await?;
        // An agent session's steering message still waiting for a tool boundary goes in
        // as edited (or not at all, once it is only queued).
        if was.mode == protocol::api::InboxMode::Steer
            && crate::sessions::is_session(&item.topic_id)
            && let Ok(session) = self.store.session_of_topic(&item.topic_id).await
        {
            let now = (item.mode == protocol::api::InboxMode::Steer).then(|| item.text.clone());
            self.host.replace_steer(&session.id, &was.text, now);
        } else if was.mode != protocol::api::InboxMode::Steer && item.mode == protocol::api::InboxMode::Steer {
            // A queued message made a steering one steers now.
            self.steer(&item.topic_id, &item.text).await?;
        }
        Ok(item)
    }

    /// Asks the topic's running turn to yield to `text`: a chat turn at its next step
    /// boundary (the message then goes first: steering items lead the queue), an agent
    /// session's at its next tool boundary.
    async fn steer(&self, topic_id: &TopicId, text: &str) -> Result<(), ApiError> {
        if crate::sessions::is_session(topic_id) {
            let session = self.store.session_of_topic(topic_id).await?;
            self.host.steer(&session.id, text.to_owned());
        }
        if self.streams.steer(topic_id).await {
            tracing::info!(%topic_id, "the running turn will yield to a steering message");
        }
        Ok(())
    }

    pub(crate) async fn inbox_move(&self, request: InboxMoveRequest) -> Result<Vec<InboxItem>, ApiError> {
        Ok(self.store.move_inbox_item(&request.id, request.position as usize).await?)
    }

    pub(crate) async fn inbox_cancel(&self, request: InboxItemRequest) -> Result<(), ApiError> {
        let item = self.store.get_inbox_item(&request.id).await?;
        self.store.remove_inbox_item(&request.id).await?;
        if crate::sessions::is_session(&item.topic_id)
            && let Ok(session) = self.store.session_of_topic(&item.topic_id).await
        {
            self.host.forget_steer(&session.id, &item.text);
        }
        Ok(())
    }

    pub(crate) async fn inbox_release(&self, request: InboxItemRequest) -> Result<InboxItem, ApiError> {
        let item = self.store.release_inbox_item(&request.id).await?;
        self.dispatch_next(&item.topic_id).await;
        self.store.get_inbox_item(&item.id).await.or(Ok(item))
    }

    /// Starts the topic's next queued item if the topic is idle. Windows showing the
    /// topic follow the new turn through the status feed.
    pub(crate) async fn dispatch_next(&self, topic_id: &TopicId) {
        if self.streams.is_streaming(topic_id).await {
            return;
        }
        let item = match self.store.next_queued(topic_id).await {
            Ok(Some(item)) => item,
            Ok(None) => return,
            Err(err) => {
                tracing::error!(error = %err, "could not read the inbox");
                return;
            }
        };
        let request = StreamOpenRequest {
            topic_id: topic_id.clone(),
            text: item.text.clone(),
            message_id: None,
            model: None,
            models: item.models.clone(),
            attachments: None,
            mcp_resources: None,
        };
        // Nobody listens yet: subscribers attach when the status feed shows the turn.
        let (listener, _unheard) = self.streams.listener(ListenerId::unique(), topic_id);
        match self.turns.open(request, listener).await {
            Ok(_) => {
                if let Err(err) = self.store.remove_inbox_item(&item.id).await {
                    tracing::error!(error = %err, "a dispatched inbox item could not be removed");
                }
                self.changed();
            }
            // Someone else started a turn first: the item waits for that one to end.
            Err(err) if err.kind == protocol::ErrorKind::Conflict => {}
            Err(err) => {
                let note = format!("Not sent: {}", err.message);
                self.hold(topic_id, &note).await;
            }
        }
    }

    /// Follows the status feed until shutdown: the next queued item runs after a turn
    /// that finished well; after a failed or stopped one, the queue is held.
    ///
    /// A feed that fell behind gets a snapshot instead of the changes it missed; every
    /// finished topic in it is settled again, so a `done` lost that way cannot strand a
    /// queue. Settling twice is harmless: an idle topic never keeps queued items (adding
    /// one to an idle topic sends it), and holding is idempotent.
    pub(crate) async fn run_dispatcher(self: Arc<Self>, stop: CancellationToken) {
        let mut feed = self.streams.status().subscribe();
        // The feed opens with the picture as it is; nothing in it is news.
        let mut first = true;
        loop {
            let message = tokio::select! {
                _ = stop.cancelled() => return,
                message = feed.recv() => message,
            };
            match message {
                None => return,
                Some(StatusMessage::Changed(event)) if event.unseen => {
                    self.settle(&event.topic_id, event.status).await;
                }
                // A switched version or a changed list changes no turn's outcome.
                Some(StatusMessage::Changed(_) | StatusMessage::PathChanged(_) | StatusMessage::ListChanged(_)) => {}
                Some(StatusMessage::Snapshot(snapshot)) => {
                    if !std::mem::take(&mut first) {
                        tracing::warn!(topics = snapshot.statuses.len(), "the inbox fell behind the status feed");
                        for event in snapshot.statuses {
                            // A topic that has started another turn since is settled when
                            // that one ends.
                            if !self.streams.is_streaming(&event.topic_id).await {
                                self.settle(&event.topic_id, event.status).await;
                            }
                        }
                    }
                }
            }
        }
    }

    /// What a topic's queue does once its turn has ended this way.
    async fn settle(&self, topic_id: &TopicId, status: TopicStatus) {
        match status {
            TopicStatus::Done => self.after_done(topic_id).await,
            TopicStatus::Error => self.hold(topic_id, HELD_AFTER_ERROR).await,
            TopicStatus::Aborted => self.hold(topic_id, HELD_AFTER_STOP).await,
            _ => {}
        }
    }

    /// A turn with several replies counts as done when one succeeded; the queue goes on
    /// only if none of them failed or was stopped.
    async fn after_done(&self, topic_id: &TopicId) {
        match self.store.last_turn_statuses(topic_id).await {
            Ok(statuses) if statuses.iter().all(|s| *s == protocol::MessageStatus::Success) => {
                self.dispatch_next(topic_id).await
            }
            Ok(statuses) if statuses.contains(&protocol::MessageStatus::Error) => {
                self.hold(topic_id, HELD_AFTER_ERROR).await
            }
            Ok(_) => self.hold(topic_id, HELD_AFTER_STOP).await,
            Err(err) => tracing::error!(error = %err, "could not read the last turn"),
        }
    }

    async fn hold(&self, topic_id: &TopicId, note: &str) {
        if let Err(err) = self.store.hold_inbox(Some(topic_id), note).await {
            tracing::error!(error = %err, "could not hold the inbox");
        }
        self.changed();
    }
}
