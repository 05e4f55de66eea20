//! The stream thread and listeners fed in place.

use std::sync::Mutex;

use super::*;

/// The name of the thread each call ran on, in order.
#[derive(Clone, Default)]
struct Threads(Arc<Mutex<Vec<String>>>);

impl Threads {
    fn note(&self) {
        let name = std::thread::current().name().unwrap_or("unnamed").to_owned();
        self.0.lock().unwrap().push(name);
    }

    fn seen(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A reply of one text part that notes the thread it runs on.
struct Noting {
    threads: Threads,
}

#[async_trait::async_trait]
impl TurnRunner<ChunkSender> for Noting {
    async fn run(self: Box<Self>, context: RunContext, sink: &mut ChunkSender) -> TurnOutcome {
        self.threads.note();
        let mut writer = PartWriter::new(context.part_offset);
        let mut chunks = vec![writer.start_step()];
        chunks.extend(writer.text("done".into()));
        chunks.extend(writer.finish_step());
        let _ = send_all(sink, chunks).await;
        TurnOutcome::Finished { reason: FinishReason::Stop }
    }
}

fn noting_turn(h: &Harness, threads: &Threads) -> (PreparedTurn, MessageId) {
    let message_id = MessageId::new();
    let turn = PreparedTurn {
        topic_id: h.topic.clone(),
        turn_id: TurnId::new(),
        user: Some(user("hi")),
        executions: vec![PreparedExecution {
            message_id: message_id.clone(),
            model_ref: ModelRef { provider_id: protocol::ProviderId("p".into()), model: "m".into() },
            provider_name: "Fake".into(),
            runner: Box::new(Noting { threads: threads.clone() }),
            slot: ReplySlot::New,
            idle_timeout: None,
        }],
    };
    (turn, message_id)
}

/// A direct listener that keeps every message and notes the thread it was called on.
fn direct(id: &str, threads: &Threads) -> (Listener, Arc<Mutex<Vec<StreamMessage>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (kept, threads) = (seen.clone(), threads.clone());
    let listener = Listener::direct(ListenerId(id.into()), move |message| {
        threads.note();
        kept.lock().unwrap().push(message);
        true
    });
    (listener, seen)
}

async fn until_done(seen: &Mutex<Vec<StreamMessage>>) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !seen.lock().unwrap().iter().any(is_topic_done) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the turn ends");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_runs_and_delivers_on_the_stream_thread_and_the_thread_ends_with_the_manager() {
    let h = harness(StreamConfig::default()).await;
    let threads = Threads::default();
    let (turn, message_id) = noting_turn(&h, &threads);
    let (listener, seen) = direct("window", &threads);
    assert!(h.manager.open(turn, listener).await.unwrap().live);
    until_done(&seen).await;

    let names = threads.seen();
    assert!(names.len() > 3, "the runner and every delivery: {names:?}");
    assert!(names.iter().all(|name| name == "colloquy-streams"), "{names:?}");
    let messages = seen.lock().unwrap().clone();
    assert_eq!(reconstruct(&messages), "done");
    assert_eq!(seqs(&messages), (1..=seqs(&messages).len() as u64).collect::<Vec<_>>());
    let row = h.store.get_message(&message_id).await.unwrap();
    assert_eq!(row.message.text(), "done");

    // Once the manager is gone and its tasks have ended, so has the thread.
    let alive = || {
        std::fs::read_dir("/proc/self/task")
            .map(|tasks| {
                tasks.flatten().any(|task| {
                    std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.trim() == "colloquy-stream")
                })
            })
            .unwrap_or(false)
    };
    if cfg!(target_os = "linux") {
        assert!(alive(), "the stream thread runs while the manager lives");
    }
    drop(h);
    if cfg!(target_os = "linux") {
        tokio::time::timeout(Duration::from_secs(10), async {
            while alive() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the stream thread ends after the manager is dropped");
    }
}

#[tokio::test]
async fn a_direct_listener_that_says_it_is_gone_is_removed_and_the_others_go_on() {
    let h = harness(StreamConfig::default()).await;
    let (feed, mut rx, _) = h.open("w1").await;
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let gone = Listener::direct(ListenerId("gone".into()), move |_| {
        *counted.lock().unwrap() += 1;
        false
    });
    h.manager.attach(&h.topic, vec![], gone).await;
    for t in ["a", "b", "c"] {
        feed.send(token(t)).unwrap();
    }
    drop(feed);
    let messages = read_until(&mut rx, is_topic_done).await;
    assert_eq!(reconstruct(&messages), "abc");
    assert_eq!(*calls.lock().unwrap(), 1, "its snapshot, then it is removed");
}
