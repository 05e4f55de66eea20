//! The conversation tree as the user changes it: switching versions, deleting a message
//! or a version, forking a topic. (New versions come from turns: `turns` prepares edits
//! and regenerations.) Every change is told to the windows through the status feed.

use protocol::api::{
    DEFAULT_PAGE_TURNS, MAX_PAGE_TURNS, MessageRequest, MessagesPage, MessagesPageRequest, StoredMessage, Topic,
    TopicRequest,
};
use protocol::{ApiError, TopicId};
use store::Store;
use streams::StreamManager;

pub(crate) struct Branches {
    store: Store,
    streams: StreamManager,
}

/// Agent sessions stay linear: the agent remembers what it was told and did.
fn refuse_in_session(topic_id: &TopicId, what: &str) -> Result<(), ApiError> {
    if crate::sessions::is_session(topic_id) {
        return Err(ApiError::bad_request(
            "topicId",
            format!("an agent session's history cannot be {what} (the agent remembers it as it happened)"),
        ));
    }
    Ok(())
}

impl Branches {
    pub(crate) fn new(store: Store, streams: StreamManager) -> Self {
        Self { store, streams }
    }

    /// The active path, each message with its versions.
    pub(crate) async fn list(&self, request: TopicRequest) -> Result<Vec<StoredMessage>, ApiError> {
        self.store.get_topic(&request.topic_id).await?;
        Ok(self.store.active_path(&request.topic_id).await?)
    }

    /// A page of the active path, newest pages first (see `MessagesPageRequest`).
    pub(crate) async fn page(&self, request: MessagesPageRequest) -> Result<MessagesPage, ApiError> {
        let turns = request.turns.unwrap_or(DEFAULT_PAGE_TURNS);
        if !(1..=MAX_PAGE_TURNS).contains(&turns) {
            return Err(ApiError::bad_request(
                "turns",
                format!("a page holds 1 to {MAX_PAGE_TURNS} turns (got {turns})"),
            ));
        }
        self.store.get_topic(&request.topic_id).await?;
        // Taken before the read: a change stored while it reads counts as newer.
        let path = self.streams.status().path_version();
        let page = self.store.path_page(&request.topic_id, request.before.as_ref(), turns as usize).await?;
        Ok(MessagesPage { messages: page.messages, older: page.older, path })
    }

    pub(crate) async fn select(&self, request: MessageRequest) -> Result<(), ApiError> {
        self.store.get_topic(&request.topic_id).await?;
        self.store.select_message(&request.topic_id, &request.message_id).await?;
        self.streams.status().path_changed(&request.topic_id);
        Ok(())
    }

    pub(crate) async fn delete(&self, request: MessageRequest) -> Result<(), ApiError> {
        refuse_in_session(&request.topic_id, "deleted from")?;
        self.store.get_topic(&request.topic_id).await?;
        let deleted = self.store.delete_message(&request.topic_id, &request.message_id).await?;
        self.streams.forget_messages(&request.topic_id, deleted).await;
        self.streams.status().path_changed(&request.topic_id);
        Ok(())
    }

    pub(crate) async fn fork(&self, request: MessageRequest) -> Result<Topic, ApiError> {
        refuse_in_session(&request.topic_id, "forked")?;
        Ok(self.store.fork_topic(&request.topic_id, &request.message_id).await?)
    }
}
