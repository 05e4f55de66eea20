//! The stream manager's time rules on tokio's paused clock: checkpoint cadence, the idle
//! timeout, the grace period. Reply states go to a recorder instead of SQLite, so nothing
//! in the measured part waits on another thread while the clock is frozen (the paused
//! clock jumps ahead whenever every task is idle, and SQLite's thread looks idle).
//! Tests wait with `sleep`, not `advance`: time then moves only once every task has
//! done what it could, so each timer's work is finished before the next one fires.

use std::sync::Mutex;

use tokio::time::{Instant, sleep};

use super::*;
use crate::persist::ReplyWriter;

/// Every batch the persister wrote, with the (paused) time it was written.
#[derive(Default)]
struct Recorder {
    writes: Mutex<Vec<(Instant, Vec<store::Checkpoint>)>>,
}

#[async_trait::async_trait]
impl ReplyWriter for Recorder {
    async fn write_replies(&self, rows: &[store::Checkpoint]) -> Result<(), StoreError> {
        self.writes.lock().unwrap().push((Instant::now(), rows.to_vec()));
        Ok(())
    }
}

impl Recorder {
    /// One reply's states as written: time, text, status, reason.
    fn states_of(&self, id: &MessageId) -> Vec<(Instant, String, MessageStatus, Option<String>)> {
        let writes = self.writes.lock().unwrap();
        writes
            .iter()
            .flat_map(|(at, rows)| rows.iter().map(move |row| (*at, row)))
            .filter(|(_, row)| &row.message_id == id)
            .map(|(at, row)| (at, row.message.text(), row.status, row.status_reason.clone()))
            .collect()
    }

    fn batches(&self) -> Vec<Vec<MessageId>> {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .map(|(_, rows)| rows.iter().map(|r| r.message_id.clone()).collect())
            .collect()
    }
}

async fn recorded(config: StreamConfig) -> (Harness, Arc<Recorder>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("c.db")).await.unwrap();
    let topic = store.create_topic("t", None).await.unwrap().id;
    let recorder = Arc::new(Recorder::default());
    let manager = StreamManager::with_writer(store.clone(), recorder.clone(), config);
    (Harness { manager, store, topic, _dir: dir }, recorder)
}

/// No idle cut-off unless a test asks for one; on the test's own runtime (a stream thread
/// would not share its paused clock).
fn patient() -> StreamConfig {
    StreamConfig {
        idle_timeout: Duration::from_secs(24 * 3600),
        threads: StreamThreads::Caller,
        ..StreamConfig::default()
    }
}

/// The loss bound (`StreamConfig::max_unsaved`): output is committed within this long.
const MAX_UNSAVED: Duration = Duration::from_millis(500);
/// How long after a reply's oldest unsaved chunk its checkpoint is taken: the loss bound
/// less the default write allowance (150 ms). Also the least time between two of them.
const CHECKPOINT_DELAY: Duration = Duration::from_millis(350);
const STEP: Duration = Duration::from_millis(100);
/// Tokio's timers fire on the next whole millisecond.
const TIMER_ROUNDING: Duration = Duration::from_millis(1);

#[tokio::test]
async fn a_live_reply_is_checkpointed_at_most_once_per_checkpoint_delay_and_never_more_than_one_delay_behind() {
    let (h, recorder) = recorded(patient()).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    // From here on nothing touches SQLite (admission is done).
    tokio::time::pause();

    // One token every 100 ms for 4 s, then 2 s of silence.
    let mut fed: Vec<(Instant, String)> = Vec::new();
    let mut text = String::new();
    for i in 0..40 {
        let token_text = format!("{i} ");
        feed.send(token(&token_text)).unwrap();
        read_until(&mut rx, is_delta(&token_text)).await;
        text.push_str(&token_text);
        fed.push((Instant::now(), text.clone()));
        sleep(STEP).await;
    }
    let last_token = fed.last().unwrap().0;
    for _ in 0..20 {
        sleep(STEP).await;
    }

    // (The very first state, the reply's `start`, may have been taken before the clock
    // was paused.)
    let states: Vec<_> = recorder.states_of(&message_id).into_iter().filter(|(_, text, ..)| !text.is_empty()).collect();
    assert!(states.len() >= 9, "4 s of output is checkpointed about 10 times: {}", states.len());
    for pair in states.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 >= CHECKPOINT_DELAY,
            "two checkpoints less than 350 ms apart: {:?}",
            states.iter().map(|(w, t, s, _)| (w.saturating_duration_since(fed[0].0), t.len(), *s)).collect::<Vec<_>>()
        );
    }
    for (at, so_far) in &fed {
        assert!(
            states.iter().any(|(written, stored, ..)| *written >= *at
                && *written - *at <= CHECKPOINT_DELAY + TIMER_ROUNDING
                && stored.starts_with(so_far.as_str())),
            "the text fed at +{:?} was not written within 350 ms; written at {:?}",
            *at - fed[0].0,
            states.iter().map(|(w, t, ..)| (w.saturating_duration_since(fed[0].0), t.len())).collect::<Vec<_>>()
        );
    }
    let (last_write, last_text, status, _) = states.last().unwrap();
    assert_eq!((last_text.as_str(), *status), (text.as_str(), MessageStatus::Streaming));
    assert!(
        *last_write <= last_token + CHECKPOINT_DELAY + TIMER_ROUNDING,
        "nothing is rewritten while the reply is silent"
    );

    // The final state is written once, after every checkpoint, and is the last word.
    drop(feed);
    read_until(&mut rx, is_topic_done).await;
    let states = recorder.states_of(&message_id);
    let finals: Vec<_> = states
        .iter()
        .filter(|(_, _, status, _)| !matches!(status, MessageStatus::Pending | MessageStatus::Streaming))
        .collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(states.last().unwrap().2, MessageStatus::Success);
}

/// A disk whose every commit takes `commit`: each batch is recorded when it is committed.
struct SlowDisk {
    commit: Duration,
    recorder: Recorder,
}

#[async_trait::async_trait]
impl ReplyWriter for SlowDisk {
    async fn write_replies(&self, rows: &[store::Checkpoint]) -> Result<(), StoreError> {
        sleep(self.commit).await;
        self.recorder.write_replies(rows).await
    }
}

#[tokio::test]
async fn audit_22_every_chunk_is_committed_within_500_ms_even_the_first_and_even_when_a_commit_takes_150_ms() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("c.db")).await.unwrap();
    let topic = store.create_topic("t", None).await.unwrap().id;
    let disk = Arc::new(SlowDisk { commit: Duration::from_millis(150), recorder: Recorder::default() });
    let manager = StreamManager::with_writer(store.clone(), disk.clone(), patient());
    let h = Harness { manager, store, topic, _dir: dir };
    let (feed, mut rx, message_id) = h.open("w1").await;
    tokio::time::pause();

    // A token every 37 ms for 3 s: chunks land at every phase of the checkpoint schedule,
    // including right after a checkpoint was taken, which waits the longest.
    let mut fed: Vec<(Instant, String)> = Vec::new();
    let mut text = String::new();
    for i in 0..80 {
        let token_text = format!("{i} ");
        feed.send(token(&token_text)).unwrap();
        read_until(&mut rx, is_delta(&token_text)).await;
        text.push_str(&token_text);
        fed.push((Instant::now(), text.clone()));
        sleep(Duration::from_millis(37)).await;
    }
    sleep(Duration::from_secs(1)).await;

    let committed = disk.recorder.states_of(&message_id);
    let late: Vec<_> = fed
        .iter()
        .filter(|(at, so_far)| {
            !committed.iter().any(|(written, stored, ..)| {
                // Two timers stand between a chunk and its commit (the checkpoint's and the
                // disk's), each firing on the next whole millisecond.
                *written >= *at
                    && *written - *at <= MAX_UNSAVED + 2 * TIMER_ROUNDING
                    && stored.starts_with(so_far.as_str())
            })
        })
        .map(|(at, so_far)| (*at - fed[0].0, so_far.len()))
        .collect();
    assert!(
        late.is_empty(),
        "output not committed within 500 ms of reaching the actor (fed at, bytes): {late:?}; commits: {:?}",
        committed.iter().map(|(w, t, ..)| (w.saturating_duration_since(fed[0].0), t.len())).collect::<Vec<_>>()
    );
    drop(feed);
    read_until(&mut rx, is_topic_done).await;
}

#[tokio::test]
async fn the_replies_of_a_multi_model_turn_are_checkpointed_together_in_one_transaction() {
    let (h, recorder) = recorded(patient()).await;
    let (feed_a, a) = gated("a", MessageId::new(), ReplySlot::New);
    let (feed_b, b) = gated("b", MessageId::new(), ReplySlot::New);
    let ids = [a.message_id.clone(), b.message_id.clone()];
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("both")),
        executions: vec![a, b],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    tokio::time::pause();

    for i in 0..20 {
        let (ta, tb) = (format!("a{i} "), format!("b{i} "));
        feed_a.send(token(&ta)).unwrap();
        feed_b.send(token(&tb)).unwrap();
        // Both chunks are in before time moves on, so both replies are dirty at the tick.
        let mut waiting = vec![ta, tb];
        while !waiting.is_empty() {
            if let Some(StreamMessage::Chunk(event)) = rx.recv().await
                && let UiChunk::TextDelta { delta, .. } = &event.chunk
            {
                waiting.retain(|t| t != delta);
            }
        }
        sleep(STEP).await;
    }
    let batches = recorder.batches();
    let with_a: Vec<_> = batches.iter().filter(|batch| batch.contains(&ids[0])).collect();
    assert!(with_a.len() >= 3);
    for batch in with_a {
        assert!(batch.contains(&ids[1]), "both live replies go into the same write: {batch:?}");
    }
    drop((feed_a, feed_b));
}

#[tokio::test]
async fn a_reply_silent_for_the_idle_timeout_is_paused_as_stalled_and_each_chunk_restarts_the_wait() {
    let idle = Duration::from_secs(120);
    let (h, recorder) = recorded(StreamConfig { idle_timeout: idle, ..patient() }).await;
    let (feed, mut rx, message_id) = h.open("w1").await;
    tokio::time::pause();
    let start = Instant::now();

    feed.send(token("still ")).unwrap();
    read_until(&mut rx, is_delta("still ")).await;
    sleep(idle - Duration::from_secs(1)).await;
    feed.send(token("here")).unwrap();
    read_until(&mut rx, is_delta("here")).await;
    let last_chunk = Instant::now();
    sleep(idle - Duration::from_secs(1)).await;
    assert!(h.manager.is_streaming(&h.topic).await, "119 s of silence is not yet a stall");

    let messages = read_until(&mut rx, is_topic_done).await;
    let silence = Instant::now() - last_chunk;
    assert!(
        silence >= idle && silence <= idle + TIMER_ROUNDING,
        "cut off one idle timeout after the last chunk, not {silence:?}"
    );
    assert!(Instant::now() - start > idle * 2 - Duration::from_secs(2));
    let StreamMessage::Terminal(terminal) = messages.last().unwrap() else { panic!() };
    assert_eq!(terminal.status, TerminalStatus::Paused);
    let (_, text, status, reason) = recorder.states_of(&message_id).pop().unwrap();
    assert_eq!((text.as_str(), status, reason.as_deref()), ("still here", MessageStatus::Paused, Some("stalled")));
    drop(feed);
}

#[tokio::test]
async fn a_reply_given_its_own_idle_timeout_is_cut_off_after_it_not_the_default() {
    // The manager's default waits two minutes; this reply was given 10 s (the user's setting).
    let (h, recorder) = recorded(StreamConfig { idle_timeout: Duration::from_secs(120), ..patient() }).await;
    let own = Duration::from_secs(10);
    let message_id = MessageId::new();
    let (feed, mut execution) = gated("m", message_id.clone(), ReplySlot::New);
    execution.idle_timeout = Some(own);
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("hi")),
        executions: vec![execution],
    };
    let (l, mut rx) = h.manager.listener(ListenerId("w1".into()), &h.topic);
    h.manager.open(turn, l).await.unwrap();
    tokio::time::pause();

    feed.send(token("before the silence")).unwrap();
    read_until(&mut rx, is_delta("before the silence")).await;
    let last_chunk = Instant::now();
    let messages = read_until(&mut rx, is_topic_done).await;
    let silence = Instant::now() - last_chunk;
    assert!(silence >= own && silence <= own + TIMER_ROUNDING, "cut off after the reply's own 10 s, not {silence:?}");
    let StreamMessage::Terminal(terminal) = messages.last().unwrap() else { panic!() };
    assert_eq!(terminal.status, TerminalStatus::Paused);
    let (_, text, status, reason) = recorder.states_of(&message_id).pop().unwrap();
    assert_eq!(
        (text.as_str(), status, reason.as_deref()),
        ("before the silence", MessageStatus::Paused, Some("stalled"))
    );
    drop(feed);
}

#[tokio::test]
async fn a_finished_turn_stays_attachable_for_the_grace_period_and_its_status_outlives_it() {
    let (h, _recorder) = recorded(StreamConfig { grace_period: Duration::from_secs(30), ..patient() }).await;
    let (feed, mut rx, _) = h.open("w1").await;
    tokio::time::pause();
    feed.send(token("done")).unwrap();
    drop(feed);
    read_until(&mut rx, is_topic_done).await;

    sleep(Duration::from_secs(29)).await;
    let (l, mut late) = h.manager.listener(ListenerId("w2".into()), &h.topic);
    assert!(h.manager.attach(&h.topic, vec![], l).await.live);
    assert_eq!(reconstruct(&read_until(&mut late, is_topic_done).await), "done");

    sleep(Duration::from_secs(2)).await;
    let (l, _rx) = h.manager.listener(ListenerId("w3".into()), &h.topic);
    assert!(!h.manager.attach(&h.topic, vec![], l).await.live, "evicted after 30 s");
    let status = h.manager.status().status_of(&h.topic).unwrap();
    assert_eq!((status.status, status.unseen), (TopicStatus::Done, true), "the status survives eviction");
}
