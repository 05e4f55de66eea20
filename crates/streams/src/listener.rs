//! Subscribers of a topic's stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use protocol::{LaggedNotice, StreamMessage, TopicId};
use tokio::sync::mpsc;

/// Identifies a subscriber within a topic. A new listener with the same id replaces the
/// old one (a window that reattaches does not get everything twice).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ListenerId(pub String);

impl ListenerId {
    /// A process-unique id, for subscribers that have no name of their own (SSE responses).
    pub fn unique() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(format!("listener-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
    }
}

/// The sending half of a subscription, held by the topic actor. Delivery never waits:
/// a listener whose buffer is full has fallen behind and is dropped; its
/// [`Subscription`] then ends with a [`StreamMessage::Lagged`] notice so its owner can
/// reattach from its last `seq`.
#[derive(Clone, Debug)]
pub struct Listener {
    pub id: ListenerId,
    tx: mpsc::Sender<StreamMessage>,
    lagged: Arc<AtomicBool>,
}

/// The receiving half: what a window's forwarder or an SSE response reads.
#[derive(Debug)]
pub struct Subscription {
    topic_id: TopicId,
    rx: mpsc::Receiver<StreamMessage>,
    lagged: Arc<AtomicBool>,
    notified: bool,
}

/// What delivery to one listener did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    Sent,
    /// Gone or too slow: remove it.
    Dropped,
}

impl Listener {
    /// A listener for `topic_id` and the subscription its owner reads from.
    pub fn channel(id: ListenerId, topic_id: TopicId, capacity: usize) -> (Self, Subscription) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let lagged = Arc::new(AtomicBool::new(false));
        (Self { id, tx, lagged: lagged.clone() }, Subscription { topic_id, rx, lagged, notified: false })
    }

    pub(crate) fn deliver(&self, message: StreamMessage) -> Delivery {
        match self.tx.try_send(message) {
            Ok(()) => Delivery::Sent,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(listener = %self.id.0, "listener fell behind; dropping it");
                self.lagged.store(true, Ordering::SeqCst);
                Delivery::Dropped
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Delivery::Dropped,
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// A handle that tells whether the actor still holds this listener.
    #[cfg(test)]
    pub(crate) fn downgrade(&self) -> mpsc::WeakSender<StreamMessage> {
        self.tx.downgrade()
    }

    /// How many more messages fit in the buffer right now.
    pub(crate) fn room(&self) -> usize {
        self.tx.capacity()
    }
}

impl Subscription {
    /// The next message; `None` once the listener is detached, replaced or dropped. A
    /// listener dropped for lagging yields one last [`StreamMessage::Lagged`] first.
    pub async fn recv(&mut self) -> Option<StreamMessage> {
        match self.rx.recv().await {
            Some(message) => Some(message),
            None if self.lagged.load(Ordering::SeqCst) && !self.notified => {
                self.notified = true;
                Some(StreamMessage::Lagged(LaggedNotice { topic_id: self.topic_id.clone() }))
            }
            None => None,
        }
    }

    /// A message if one is ready now.
    pub fn try_recv(&mut self) -> Option<StreamMessage> {
        self.rx.try_recv().ok()
    }
}
