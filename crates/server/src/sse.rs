//! A subscription as a `text/event-stream` response.

use std::collections::HashMap;
use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use engine::{Engine, ListenerId, StatusFeed, Subscription};
use futures::StreamExt;
use protocol::{AttachReply, ExecutionCursor, ExecutionId, StreamMessage, TopicId, TurnId};
use tokio_util::sync::CancellationToken;

/// What an event stream needs to pick up again after its listener was dropped for
/// falling behind: the topic, and the engine to attach to it again.
pub(crate) struct Resume {
    pub(crate) engine: Engine,
    pub(crate) topic_id: TopicId,
}

/// `event: reply` with the [`AttachReply`], then one `data:` event per message; ends
/// after the topic's last terminal, when nothing is live, or at server shutdown.
///
/// A reader too slow for the listener's buffer is never cut off: when the topic drops
/// its listener, the response attaches again with the cursor of every execution it has
/// sent (a replay of the missed chunks, or a snapshot when the memory no longer has
/// them all) and goes on. What it already sent is never sent again. Only if the turn is
/// gone by then (evicted, or replaced by the next one) does it end with `lagged`.
pub(crate) fn event_stream(
    reply: AttachReply,
    rx: Subscription,
    resume: Resume,
    shutdown: CancellationToken,
) -> Response {
    let first = futures::stream::once({
        let reply = reply.clone();
        async move { Ok::<_, Infallible>(Event::default().event("reply").json_data(&reply).unwrap_or_default()) }
    });
    let delivery = Delivery::new(&reply, rx, resume);
    let messages = futures::stream::unfold(delivery, |mut delivery| async move {
        let message = delivery.next().await?;
        Some((message, delivery))
    })
    .map(|message| {
        let mut event = Event::default();
        if let StreamMessage::Chunk(chunk) = &message {
            event = event.id(format!("{}:{}", chunk.execution.execution_id, chunk.seq));
        }
        Ok::<_, Infallible>(event.json_data(&message).unwrap_or_default())
    });
    let stream = first.chain(messages).take_until(async move { shutdown.cancelled().await });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// How far the response got with one execution.
#[derive(Clone, Copy, Debug, Default)]
struct Sent {
    /// The last `seq` sent (a chunk's, or the one a snapshot covers).
    seq: u64,
    /// Its terminal was sent.
    done: bool,
}

/// The messages one response sends, across re-attachments.
pub(crate) struct Delivery {
    rx: Subscription,
    resume: Resume,
    /// The turn the response follows; a re-attachment must find the same one.
    turn_id: Option<TurnId>,
    sent: HashMap<ExecutionId, Sent>,
    /// False once the last message has been sent.
    open: bool,
}

impl Delivery {
    pub(crate) fn new(reply: &AttachReply, rx: Subscription, resume: Resume) -> Self {
        Self { rx, resume, turn_id: reply.turn_id.clone(), sent: HashMap::new(), open: reply.live }
    }

    /// The next message to send, or `None` when the response is complete.
    pub(crate) async fn next(&mut self) -> Option<StreamMessage> {
        while self.open {
            let message = self.rx.recv().await?;
            match message {
                StreamMessage::Lagged(notice) => {
                    if !self.reattach().await {
                        self.open = false;
                        return Some(StreamMessage::Lagged(notice));
                    }
                }
                message => {
                    if let Some(message) = self.admit(message) {
                        return Some(message);
                    }
                }
            }
        }
        None
    }

    /// Keeps a message the response has not sent yet, and notes how far it gets.
    fn admit(&mut self, message: StreamMessage) -> Option<StreamMessage> {
        match &message {
            StreamMessage::Chunk(event) => {
                let sent = self.sent.entry(event.execution.execution_id.clone()).or_default();
                if sent.done || event.seq <= sent.seq {
                    return None;
                }
                sent.seq = event.seq;
            }
            StreamMessage::Snapshot(snapshot) => {
                let sent = self.sent.get(&snapshot.execution_id).copied();
                // After a re-attachment, a snapshot the response is already at is
                // nothing new.
                if sent.is_some_and(|sent| sent.done || snapshot.seq <= sent.seq) {
                    return None;
                }
                self.sent.insert(snapshot.execution_id.clone(), Sent { seq: snapshot.seq, done: false });
            }
            StreamMessage::Terminal(terminal) => {
                let sent = self.sent.entry(terminal.execution_id.clone()).or_default();
                if sent.done {
                    return None;
                }
                sent.done = true;
                if terminal.is_topic_done {
                    self.open = false;
                }
            }
            StreamMessage::Lagged(_) => self.open = false,
        }
        Some(message)
    }

    /// Subscribes again after the cursors sent so far. False if the turn is gone.
    async fn reattach(&mut self) -> bool {
        let after = self
            .sent
            .iter()
            .map(|(execution_id, sent)| ExecutionCursor { execution_id: execution_id.clone(), seq: sent.seq })
            .collect();
        let Resume { engine, topic_id } = &self.resume;
        let (listener, rx) = engine.listener(ListenerId::unique(), topic_id);
        match engine.stream_attach(topic_id, after, listener).await {
            Ok(reply) if reply.live && reply.turn_id == self.turn_id => {
                tracing::debug!(topic = %topic_id, "an event stream fell behind; it goes on from its cursors");
                self.rx = rx;
                true
            }
            Ok(_) => false,
            Err(err) => {
                tracing::warn!(topic = %topic_id, error = %err.message, "an event stream could not attach again");
                false
            }
        }
    }
}

/// The status feed as events, until the client goes away or the server stops.
pub(crate) fn status_stream(feed: StatusFeed, shutdown: CancellationToken) -> Response {
    let events = futures::stream::unfold(feed, |mut feed| async move {
        let message = feed.recv().await?;
        Some((Ok::<_, Infallible>(Event::default().json_data(&message).unwrap_or_default()), feed))
    });
    Sse::new(events.take_until(async move { shutdown.cancelled().await }))
        .keep_alive(KeepAlive::default())
        .into_response()
}
