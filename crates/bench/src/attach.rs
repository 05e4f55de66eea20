//! 4. Attach time to a live 1 MB reply, versus how many chunks it was streamed in.
//!
//! The testkit's scripted model ([`fake_model`]) streams 1,000,000 bytes of text as fast as the pipeline takes them,
//! then stays silent, so the reply is live and complete. A new listener then attaches
//! (no cursor) and we time `attach()` until its `recv()` returns the snapshot (the whole
//! 1 MB message). Also timed: attaching with a cursor 50 chunks back (replayed from the
//! ring), and encoding the snapshot as JSON, which every transport does next.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use protocol::{ExecutionCursor, StreamMessage, UiPart};
use streams::ListenerId;

use crate::Setup;
use crate::fake_model;
use crate::pipeline::{Delivery, Pipeline, Probe};
use crate::report::{Table, Verdict, millis};
use crate::stats::median;

const REPLY_BYTES: usize = 1_000_000;
/// Within the ring's byte budget (64 KiB) even for the 1,000-byte chunks.
const REPLAYED: u64 = 50;
/// `start`, `start-step` and `text-start` come before the first delta.
const CHUNKS_BEFORE_TEXT: u64 = 3;

pub async fn run(setup: &Setup, table: &mut Table) -> Result<()> {
    let pipeline = Pipeline::start().await?;
    let attaches = if setup.quick { 5 } else { 30 };
    let mut snapshot_medians = Vec::new();
    for chunks in [1_000usize, 10_000, 100_000] {
        let (model, emitted) = fake_model::holding_open(REPLY_BYTES, chunks);
        let topic = pipeline.topic().await?;
        // The opening listener is dropped at once: nobody reads the live stream.
        let drains = pipeline.open_turn(&topic, Arc::new(model), 1, Probe::default(), Delivery::Buffered).await?;
        drop(drains);
        tokio::time::timeout(Duration::from_secs(120), emitted.notified()).await?;
        let last_seq = CHUNKS_BEFORE_TEXT + chunks as u64;
        wait_until_folded(&pipeline, &topic, last_seq).await?;

        let mut snapshot_ms = Vec::new();
        let mut replay_ms = Vec::new();
        let mut json_ms = Vec::new();
        for _ in 0..attaches {
            let (listener, mut subscription) = pipeline.manager.listener(ListenerId::unique(), &topic);
            let started = Instant::now();
            pipeline.manager.attach(&topic, Vec::new(), listener).await;
            let Some(StreamMessage::Snapshot(snapshot)) = subscription.recv().await else {
                bail!("attaching did not start with a snapshot");
            };
            snapshot_ms.push(started.elapsed().as_secs_f64() * 1e3);
            if snapshot.seq != last_seq || text_len(&snapshot.message) != REPLY_BYTES {
                bail!("the snapshot covers seq {} and {} bytes", snapshot.seq, text_len(&snapshot.message));
            }
            let encoding = Instant::now();
            let json = serde_json::to_string(&StreamMessage::Snapshot(snapshot.clone()))?;
            json_ms.push(encoding.elapsed().as_secs_f64() * 1e3);
            drop(json);
            drop(subscription);

            let (listener, mut subscription) = pipeline.manager.listener(ListenerId::unique(), &topic);
            let cursor = ExecutionCursor { execution_id: snapshot.execution_id.clone(), seq: last_seq - REPLAYED };
            let started = Instant::now();
            pipeline.manager.attach(&topic, vec![cursor], listener).await;
            let mut replayed = 0;
            while replayed < REPLAYED {
                match subscription.recv().await {
                    Some(StreamMessage::Chunk(_)) => replayed += 1,
                    Some(StreamMessage::Snapshot(_)) => bail!("the ring did not cover the last {REPLAYED} chunks"),
                    _ => bail!("the replay ended early"),
                }
            }
            replay_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        pipeline.manager.abort(&topic).await;

        let input = format!("1 MB live reply in {chunks} chunks of {} B", REPLY_BYTES / chunks);
        let snapshot_median = median(&snapshot_ms);
        snapshot_medians.push(snapshot_median);
        table.push(
            "4",
            "attach → snapshot received",
            input.clone(),
            format!("{} (max {})", millis(snapshot_median), millis(max(&snapshot_ms))),
            "target < 10 ms",
            Verdict::of(snapshot_median < 10.0),
        );
        table.push(
            "4",
            format!("attach with cursor → last {REPLAYED} chunks replayed"),
            input.clone(),
            millis(median(&replay_ms)),
            "",
            Verdict::Info,
        );
        table.push(
            "4",
            "snapshot → JSON (what a transport does next)",
            input,
            millis(median(&json_ms)),
            "",
            Verdict::Info,
        );
    }
    let (low, high) = (snapshot_medians.iter().copied().fold(f64::MAX, f64::min), max(&snapshot_medians));
    let flat = high <= low * 2.0 + 0.5;
    table.push(
        "4",
        "snapshot attach flat in chunk count (slowest ÷ fastest median)",
        "1k vs 10k vs 100k chunks",
        format!("{:.2}×", high / low.max(1e-9)),
        "flat (≤ 2× or within 0.5 ms)",
        Verdict::of(flat),
    );
    pipeline.manager.shutdown().await;
    Ok(())
}

/// Waits until the actor has numbered every chunk (a throwaway attach reads the `seq`).
async fn wait_until_folded(pipeline: &Pipeline, topic: &protocol::TopicId, last_seq: u64) -> Result<()> {
    for _ in 0..2_000 {
        let (listener, mut subscription) = pipeline.manager.listener(ListenerId::unique(), topic);
        pipeline.manager.attach(topic, Vec::new(), listener).await;
        if let Some(StreamMessage::Snapshot(snapshot)) = subscription.recv().await
            && snapshot.seq >= last_seq
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    bail!("the reply never reached seq {last_seq}")
}

fn text_len(message: &protocol::UiMessage) -> usize {
    message.parts.iter().map(|part| if let UiPart::Text { text, .. } = part { text.len() } else { 0 }).sum()
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}
