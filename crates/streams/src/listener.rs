//! Subscribers of a topic's stream.

use protocol::StreamMessage;
use tokio::sync::mpsc;

/// Identifies a subscriber within a topic. A new listener with the same id replaces the
/// old one (a window that reattaches does not get everything twice).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ListenerId(pub String);

impl ListenerId {
    /// A process-unique id, for subscribers that have no name of their own (SSE responses).
    pub fn unique() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(format!("listener-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)))
    }
}

/// The sending half of a subscription. Delivery never waits: a listener whose buffer
/// is full has fallen behind and is dropped (it can reattach and catch up from a snapshot).
#[derive(Clone, Debug)]
pub struct Listener {
    pub id: ListenerId,
    tx: mpsc::Sender<StreamMessage>,
}

/// What delivery to one listener did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    Sent,
    /// Gone or too slow: remove it.
    Dropped,
}

impl Listener {
    /// A listener and the receiver its owner reads from.
    pub fn channel(id: ListenerId, capacity: usize) -> (Self, mpsc::Receiver<StreamMessage>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Self { id, tx }, rx)
    }

    pub(crate) fn deliver(&self, message: StreamMessage) -> Delivery {
        match self.tx.try_send(message) {
            Ok(()) => Delivery::Sent,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(listener = %self.id.0, "listener fell behind; dropping it");
                Delivery::Dropped
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Delivery::Dropped,
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}
