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

/// The sending half of a subscription, held by the topic's live state. Delivery never
/// waits: a listener whose buffer is full has fallen behind and is dropped; its
/// [`Subscription`] then ends with a [`StreamMessage::Lagged`] notice so its owner can
/// reattach from its last `seq`.
#[derive(Clone, Debug)]
pub struct Listener {
    pub id: ListenerId,
    sink: Sink,
}

/// Where a listener's messages go.
#[derive(Clone)]
enum Sink {
    /// A buffer its owner drains from another task ([`Subscription`]).
    Buffer { tx: mpsc::Sender<StreamMessage>, lagged: Arc<AtomicBool> },
    /// A send that never blocks and needs no task of its own (a window's IPC channel):
    /// called right where the chunk is numbered. `false`: the receiver is gone.
    Direct(Arc<dyn Fn(StreamMessage) -> bool + Send + Sync>),
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sink::Buffer { tx, .. } => f.debug_struct("Buffer").field("room", &tx.capacity()).finish(),
            Sink::Direct(_) => f.write_str("Direct"),
        }
    }
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
        let sink = Sink::Buffer { tx, lagged: lagged.clone() };
        (Self { id, sink }, Subscription { topic_id, rx, lagged, notified: false })
    }

    /// A listener that hands each message to `send` at once, in the task that produced
    /// it, with no buffer and no task in between. `send` must not block or wait (it may
    /// run while the topic's state is locked); it returns `false` once its receiver is
    /// gone, and the listener is removed. For receivers that queue by themselves, such as
    /// a window's IPC channel.
    pub fn direct(id: ListenerId, send: impl Fn(StreamMessage) -> bool + Send + Sync + 'static) -> Self {
        Self { id, sink: Sink::Direct(Arc::new(send)) }
    }

    pub(crate) fn deliver(&self, message: StreamMessage) -> Delivery {
        let (tx, lagged) = match &self.sink {
            Sink::Buffer { tx, lagged } => (tx, lagged),
            Sink::Direct(send) => return if send(message) { Delivery::Sent } else { Delivery::Dropped },
        };
        match tx.try_send(message) {
            Ok(()) => Delivery::Sent,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(listener = %self.id.0, "listener fell behind; dropping it");
                lagged.store(true, Ordering::SeqCst);
                Delivery::Dropped
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Delivery::Dropped,
        }
    }

    /// Known to be gone (a direct listener is found out at its next delivery).
    pub(crate) fn is_closed(&self) -> bool {
        match &self.sink {
            Sink::Buffer { tx, .. } => tx.is_closed(),
            Sink::Direct(_) => false,
        }
    }

    /// A handle that tells whether the live state still holds this (buffered) listener.
    #[cfg(test)]
    pub(crate) fn downgrade(&self) -> Option<mpsc::WeakSender<StreamMessage>> {
        match &self.sink {
            Sink::Buffer { tx, .. } => Some(tx.downgrade()),
            Sink::Direct(_) => None,
        }
    }

    /// How many more messages can be delivered right now without dropping it.
    pub(crate) fn room(&self) -> usize {
        match &self.sink {
            Sink::Buffer { tx, .. } => tx.capacity(),
            Sink::Direct(_) => usize::MAX,
        }
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
