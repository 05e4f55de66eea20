//! The one task that writes live replies to the database.
//!
//! Actors hand it checkpoints and final states; it writes whatever has queued up in one
//! transaction. Being the only writer of reply rows, it keeps their order: a final state
//! is never overwritten by an older checkpoint.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use protocol::MessageId;
use store::{Checkpoint, Store, StoreError};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::thread::Spawner;

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
    /// Counts the batches written (or given up), for whoever waits on a reply's text to
    /// reach the database mid-turn.
    written: Arc<watch::Sender<u64>>,
}

impl Persister {
    pub(crate) fn spawn(writer: Arc<dyn ReplyWriter>, spawner: &Spawner) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let written = Arc::new(watch::Sender::new(0));
        spawner.spawn(run(writer, rx, stop.clone(), written.clone()));
        Self { tx, stop, written }
    }

    /// Marks each batch of reply states the writer has finished with.
    pub(crate) fn written(&self) -> watch::Receiver<u64> {
        self.written.subscribe()
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

async fn run(
    writer: Arc<dyn ReplyWriter>,
    mut rx: mpsc::UnboundedReceiver<Job>,
    stop: CancellationToken,
    written: Arc<watch::Sender<u64>>,
) {
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
            written.send_modify(|n| *n = n.wrapping_add(1));
        }
        if stopping {
            return;
        }
    }
}

/// Waits before each new attempt at a batch holding a final state. A failed checkpoint
/// is not retried (the next one supersedes it), but a final state is the reply's last
/// word: a busy or briefly failing database gets these chances before it is given up.
const FINAL_RETRY_DELAYS: [Duration; 3] =
    [Duration::from_millis(100), Duration::from_millis(500), Duration::from_secs(2)];

async fn write(writer: &dyn ReplyWriter, jobs: Vec<Job>) {
    let mut waiters = Vec::new();
    let rows = newest_per_reply(jobs, &mut waiters);
    let mut delays = FINAL_RETRY_DELAYS.iter();
    loop {
        let Err(err) = writer.write_replies(&rows).await else { break };
        match delays.next() {
            Some(delay) if !waiters.is_empty() => {
                tracing::warn!(error = %err, rows = rows.len(), retry_in = ?delay, "could not persist final reply states");
                tokio::time::sleep(*delay).await;
            }
            // Given up: the rows keep their last checkpoint, and the next start marks
            // replies left `streaming` as interrupted, so nothing stored is lost.
            _ => {
                tracing::error!(error = %err, rows = rows.len(), "could not persist replies");
                break;
            }
        }
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
    use tokio_util::task::TaskTracker;

    use super::*;
    use crate::StreamThreads;

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

    /// Fails its first `failures` writes, then records what it is given.
    struct Flaky {
        failures: std::sync::Mutex<usize>,
        written: std::sync::Mutex<Vec<(tokio::time::Instant, Vec<Checkpoint>)>>,
    }

    #[async_trait::async_trait]
    impl ReplyWriter for Flaky {
        async fn write_replies(&self, rows: &[Checkpoint]) -> Result<(), StoreError> {
            let mut failures = self.failures.lock().unwrap();
            if *failures > 0 {
                *failures -= 1;
                return Err(StoreError::Encode("a failing disk".into()));
            }
            self.written.lock().unwrap().push((tokio::time::Instant::now(), rows.to_vec()));
            Ok(())
        }
    }

    fn flaky(failures: usize) -> Arc<Flaky> {
        Arc::new(Flaky { failures: std::sync::Mutex::new(failures), written: Default::default() })
    }

    #[tokio::test(start_paused = true)]
    async fn a_final_state_that_fails_to_write_is_retried_before_its_waiter_is_told() {
        let writer = flaky(2);
        let spawner = Spawner::start(StreamThreads::Caller, TaskTracker::new(), CancellationToken::new());
        let persister = Persister::spawn(writer.clone(), &spawner);
        let id = MessageId::new();
        let start = tokio::time::Instant::now();
        persister.finish(state(&id, "Hello!", MessageStatus::Success)).await.unwrap();
        let written = writer.written.lock().unwrap().clone();
        assert_eq!(written.len(), 1, "written on the third attempt");
        assert_eq!(written[0].1[0].status, MessageStatus::Success);
        assert_eq!(written[0].0 - start, FINAL_RETRY_DELAYS[0] + FINAL_RETRY_DELAYS[1]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_checkpoint_is_not_retried_and_a_final_state_is_given_up_after_its_retries() {
        let writer = flaky(1);
        let spawner = Spawner::start(StreamThreads::Caller, TaskTracker::new(), CancellationToken::new());
        let persister = Persister::spawn(writer.clone(), &spawner);
        let id = MessageId::new();
        persister.checkpoint(state(&id, "Hel", MessageStatus::Streaming));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(writer.written.lock().unwrap().is_empty(), "the next checkpoint supersedes a failed one");

        *writer.failures.lock().unwrap() = usize::MAX;
        let start = tokio::time::Instant::now();
        persister.finish(state(&id, "Hello!", MessageStatus::Success)).await.unwrap();
        assert_eq!(tokio::time::Instant::now() - start, FINAL_RETRY_DELAYS.iter().sum::<Duration>());
        assert!(writer.written.lock().unwrap().is_empty());
    }
}
