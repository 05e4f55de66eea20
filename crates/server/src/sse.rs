//! A subscription as a `text/event-stream` response.

use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use engine::{StatusFeed, Subscription};
use futures::StreamExt;
use protocol::{AttachReply, StreamMessage};
use tokio_util::sync::CancellationToken;

/// `event: reply` with the [`AttachReply`], then one `data:` event per message; ends
/// after the topic's last terminal, after a lagged notice, when nothing is live, or at
/// server shutdown.
pub(crate) fn event_stream(reply: AttachReply, rx: Subscription, shutdown: CancellationToken) -> Response {
    let live = reply.live;
    let first = futures::stream::once(async move {
        Ok::<_, Infallible>(Event::default().event("reply").json_data(&reply).unwrap_or_default())
    });
    let messages = futures::stream::unfold((rx, live), |(mut rx, open)| async move {
        if !open {
            return None;
        }
        let message = rx.recv().await?;
        let done = matches!(&message, StreamMessage::Terminal(t) if t.is_topic_done)
            || matches!(message, StreamMessage::Lagged(_));
        Some((message, (rx, !done)))
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
