//! The one task that writes live replies to the database.
//!
//! Actors hand it checkpoints and final states; it writes whatever has queued up in one
//! transaction. Being the only writer of reply rows, it keeps their order: a final state
//! is never overwritten by an older checkpoint.

use std::collections::HashMap;
use std::sync::Arc;

use protocol::MessageId;
use store::{Checkpoint, Store, StoreError};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Where reply states go: the store in the app; tests put a recorder in its place to see
/// what is written when, on tokio's paused clock, without waiting on SQLite.
#[async_trait::async_trait]
pub(crate) trait ReplyWriter: Send + Sync + 'static {
    /// Writes the rows in one transaction.
    async fn write_replies(&self, rows: &[Checkpoint]) -> Result<(), StoreError>;
}

#[async_trait::async_trait]
impl ReplyWriter for Store {
    async fn write_replies(&self, rows: &[Checkpoint]) -> Result<(), StoreError> {
        self.write_checkpoints(rows).await
    }
}

enum Job {
    Checkpoint(Checkpoint),
    /// The terminal write; `done` fires once it is committed (or has failed and been logged).
    Final {
        checkpoint: Checkpoint,
        done: Option<oneshot::Sender<()>>,
    },
}

#[derive(Clone)]
pub(crate) struct Persister {
    tx: mpsc::UnboundedSender<Job>,
    stop: CancellationToken,
}

impl Persister {
    pub(crate) fn spawn(writer: Arc<dyn ReplyWriter>, tracker: &TaskTracker) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        tracker.spawn(run(writer, rx, stop.clone()));
        Self { tx, stop }
    }

    pub(crate) fn checkpoint(&self, checkpoint: Checkpoint) {
        let _ = self.tx.send(Job::Checkpoint(checkpoint));
    }

    /// Queues the final state; the returned receiver resolves once it is on disk.
    pub(crate) fn finish(&self, checkpoint: Checkpoint) -> oneshot::Receiver<()> {
        let (done, rx) = oneshot::channel();
        let _ = self.tx.send(Job::Final { checkpoint, done: Some(done) });
        rx
    }

    /// Lets the writer write what is queued and exit.
    pub(crate) fn close(&self) {
        self.stop.cancel();
    }
}

async fn run(writer: Arc<dyn ReplyWriter>, mut rx: mpsc::UnboundedReceiver<Job>, stop: CancellationToken) {
    loop {
        let first = tokio::select! {
            job = rx.recv() => job,
            _ = stop.cancelled() => None,
        };
        let mut batch: Vec<Job> = first.into_iter().collect();
        while let Ok(job) = rx.try_recv() {
            batch.push(job);
        }
        let stopping = batch.is_empty();
        if !batch.is_empty() {
            write(writer.as_ref(), batch).await;
        }
        if stopping {
            return;
        }
    }
}

async fn write(writer: &dyn ReplyWriter, jobs: Vec<Job>) {
    let mut waiters = Vec::new();
    let rows = newest_per_reply(jobs, &mut waiters);
    if let Err(err) = writer.write_replies(&rows).await {
        tracing::error!(error = %err, rows = rows.len(), "could not persist replies");
    }
    for waiter in waiters {
        let _ = waiter.send(());
    }
}

/// One row per reply, in the order replies first appear: its newest state, where a
/// final state wins over any checkpoint queued after it. Collects the final writes'
/// waiters into `waiters`.
fn newest_per_reply(jobs: Vec<Job>, waiters: &mut Vec<oneshot::Sender<()>>) -> Vec<Checkpoint> {
    let mut latest: HashMap<MessageId, (Checkpoint, bool)> = HashMap::new();
    let mut order: Vec<MessageId> = Vec::new();
    for job in jobs {
        let (checkpoint, is_final) = match job {
            Job::Checkpoint(c) => (c, false),
            Job::Final { checkpoint, done } => {
                waiters.extend(done);
                (checkpoint, true)
            }
        };
        let id = checkpoint.message_id.clone();
        match latest.get(&id) {
            Some((_, true)) if !is_final => continue,
            Some(_) => {}
            None => order.push(id.clone()),
        }
        latest.insert(id, (checkpoint, is_final));
    }
    order.into_iter().filter_map(|id| latest.remove(&id).map(|(c, _)| c)).collect()
}

#[cfg(test)]
mod tests {
    use protocol::{MessageStatus, UiMessage};

    use super::*;

    fn state(id: &MessageId, text: &str, status: MessageStatus) -> Checkpoint {
        let mut message = UiMessage::user_text(id.as_str(), text);
        message.role = protocol::MessageRole::Assistant;
        Checkpoint { message_id: id.clone(), status, status_reason: None, message }
    }

    #[test]
    fn a_batch_keeps_the_newest_state_per_reply_and_never_lets_a_checkpoint_undo_the_final_one() {
        let (a, b) = (MessageId::new(), MessageId::new());
        let (done, _rx) = oneshot::channel();
        let jobs = vec![
            Job::Checkpoint(state(&a, "He", MessageStatus::Streaming)),
            Job::Checkpoint(state(&b, "x", MessageStatus::Streaming)),
            Job::Checkpoint(state(&a, "Hello", MessageStatus::Streaming)),
            Job::Final { checkpoint: state(&a, "Hello!", MessageStatus::Success), done: Some(done) },
            // An older state arriving after the final one (it never should) is ignored.
            Job::Checkpoint(state(&a, "Hel", MessageStatus::Streaming)),
            Job::Checkpoint(state(&b, "xy", MessageStatus::Streaming)),
        ];
        let mut waiters = Vec::new();
        let rows = newest_per_reply(jobs, &mut waiters);
        let rows: Vec<(MessageId, String, MessageStatus)> =
            rows.into_iter().map(|r| (r.message_id, r.message.text(), r.status)).collect();
        assert_eq!(
            rows,
            [(a, "Hello!".to_owned(), MessageStatus::Success), (b, "xy".to_owned(), MessageStatus::Streaming)]
        );
        assert_eq!(waiters.len(), 1, "the final write's waiter is told once the batch is written");
    }
}
