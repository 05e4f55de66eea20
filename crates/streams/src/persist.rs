//! The one task that writes live replies to the database.
//!
//! Actors hand it checkpoints and final states; it writes whatever has queued up in one
//! transaction. Being the only writer of reply rows, it keeps their order: a final state
//! is never overwritten by an older checkpoint.

use std::collections::HashMap;

use protocol::MessageId;
use store::{Checkpoint, Store};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

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
    pub(crate) fn spawn(store: Store, tracker: &TaskTracker) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        tracker.spawn(run(store, rx, stop.clone()));
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

async fn run(store: Store, mut rx: mpsc::UnboundedReceiver<Job>, stop: CancellationToken) {
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
            write(&store, batch).await;
        }
        if stopping {
            return;
        }
    }
}

async fn write(store: &Store, jobs: Vec<Job>) {
    // Keep only the newest state per message; a final state wins over any checkpoint.
    let mut latest: HashMap<MessageId, (Checkpoint, bool)> = HashMap::new();
    let mut order: Vec<MessageId> = Vec::new();
    let mut waiters = Vec::new();
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
    let rows: Vec<Checkpoint> = order.into_iter().filter_map(|id| latest.remove(&id).map(|(c, _)| c)).collect();
    if let Err(err) = store.write_checkpoints(&rows).await {
        tracing::error!(error = %err, rows = rows.len(), "could not persist replies");
    }
    for waiter in waiters {
        let _ = waiter.send(());
    }
}
