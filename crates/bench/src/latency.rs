//! 2. Added latency from provider byte to listener, on an otherwise idle pipeline.
//!
//! The testkit streams marked chunks through the tap (see `tap`), which stamps each read
//! right before handing it to our socket; each of the 3 listeners (fed as a desktop
//! window is, in place) stamps every marked text delta as it is handed over. Both stamps are `CLOCK_MONOTONIC`, so the
//! difference covers: loopback delivery, HTTP/SSE decoding, the event mapper, the agent
//! loop, the topic actor (numbering, folding, fan-out) and the listener's wake-up.

use std::time::Duration;

use anyhow::{Result, bail};
use testkit::Script;

use crate::Setup;
use crate::children::Testkit;
use crate::pipeline::{Delivery, Pipeline, Probe, latencies};
use crate::report::{Table, Verdict, millis};
use crate::stats::Latencies;
use crate::tap::{Tap, marker};

const LISTENERS: usize = 3;
const DELAY: Duration = Duration::from_millis(1);

pub async fn run(setup: &Setup, table: &mut Table) -> Result<()> {
    let chunks = if setup.quick { 500 } else { 3_000 };
    let testkit = Testkit::start(&setup.testkit, DELAY, setup.work.path()).await?;
    let mut tap = Tap::start(testkit.addr(), setup.work.path()).await?;
    let pipeline = Pipeline::start().await?;
    let model = pipeline.openai(&tap.base_url());

    // A short warm-up stream (connection, allocator), then the measured one.
    for (stream, count) in [(0u64, 100usize), (1, chunks)] {
        testkit.queue(&[Script::text((0..count as u64).map(|c| marker(stream * 1_000_000 + c)))]).await?;
        let topic = pipeline.topic().await?;
        let probe = Probe { stamp_markers: count };
        let drains = pipeline.open_turn(&topic, model.clone(), LISTENERS, probe, Delivery::Window).await?;
        let mut reports = Vec::new();
        for drain in drains {
            reports.push(drain.await?);
        }
        let sent = tap.take_stamps(setup.work.path()).await?;
        if stream == 0 {
            continue;
        }
        let gaps: u64 = reports.iter().map(|r| r.seq_gaps).sum();
        let samples = latencies(&reports, &sent);
        if gaps > 0 || samples.len() < chunks {
            bail!("latency run incomplete: {gaps} seq gaps, {} samples for {chunks} chunks", samples.len());
        }
        let stats = Latencies::of(samples);
        let input =
            format!("{chunks} chunks, 1 per {} ms, {LISTENERS} listeners ({} samples)", DELAY.as_millis(), stats.count);
        table.push("2", "provider byte → listener, p50", input.clone(), millis(stats.p50_ms), "", Verdict::Info);
        table.push(
            "2",
            "provider byte → listener, p99 (max)",
            input,
            format!("{} (max {})", millis(stats.p99_ms), millis(stats.max_ms)),
            "target p99 < 1 ms",
            Verdict::of(stats.p99_ms < 1.0),
        );
    }
    pipeline.manager.shutdown().await;
    Ok(())
}
