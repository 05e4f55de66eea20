//! 3. Many concurrent streaming topics, 2 listeners each.
//!
//! Measured: throughput, latency under load, memory per active stream, and `seq`
//! continuity at every listener.
//!
//! Paced runs: every topic streams marked chunks from the testkit (through the tap, for
//! latency) at a steady rate, all at once: the load (50 chunks/s per topic), the
//! same with the replay ring switched off (a diagnostic that shows what the ring costs),
//! and a lighter load (10 chunks/s per topic). RSS is read before the turns open (after
//! `malloc_trim`) and every 50 ms while they run; "per stream" is the peak while all of
//! them are live, minus the baseline and the benchmark's own stamp buffers, divided by the
//! topic count. CPU of the testkit and tap processes is shown too: they share the cores.
//! Saturated run: the same topics with chunks back to back and no tap, for the most
//! chunks per second this machine sustains.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use streams::StreamConfig;
use testkit::Script;
use tokio::task::JoinHandle;

use crate::Setup;
use crate::children::Testkit;
use crate::machine::{child_cpu, process_cpu, release_free_memory, rss_bytes};
use crate::pipeline::{Deliveries, Delivery, ListenerReport, Pipeline, Probe, latencies};
use crate::report::{Table, Verdict, millis};
use crate::stats::Latencies;
use crate::tap::{Tap, marker};

const LISTENERS: usize = 2;

struct Load {
    topics: usize,
    chunks: usize,
    delay: Duration,
}

struct Outcome {
    reports: Vec<ListenerReport>,
    wall: Duration,
    cpu: Duration,
    rss_before: u64,
    rss_peak_all_live: Option<u64>,
}

pub async fn run(setup: &Setup, table: &mut Table) -> Result<()> {
    let topics = if setup.quick { 100 } else { 1_000 };
    let testkit = Testkit::start(&setup.testkit, Duration::ZERO, setup.work.path()).await?;
    let mut tap = Tap::start(testkit.addr(), setup.work.path()).await?;

    // The load: every topic at 50 chunks/s (1 per 20 ms), for 10 s.
    let heavy = Load { topics, chunks: if setup.quick { 100 } else { 500 }, delay: Duration::from_millis(20) };
    let run = paced(setup, &testkit, &mut tap, &heavy, StreamConfig::default()).await?;
    let input = heavy.describe();
    table.push(
        "3",
        "throughput, paced (chunks/s numbered by the actors)",
        input.clone(),
        format!(
            "{:.0}/s, {:.0} deliveries/s; CPU: ours {:.2} cores, testkit + tap {:.2} cores",
            run.chunks_per_second, run.deliveries_per_second, run.cpu_cores, run.load_generator_cores
        ),
        format!("offered ≈ {:.0}/s at full overlap", heavy.offered()),
        Verdict::Info,
    );
    push_latency(table, &input, &run.latency);
    push_rss(table, "RSS per active stream", &input, &heavy, &run, true);
    table.push(
        "3",
        "`seq` gaps at every listener",
        format!("{} listeners", run.deliveries.listeners),
        format!("{} gaps, {} listeners ended early", run.deliveries.seq_gaps, run.deliveries.unfinished),
        "must be 0",
        Verdict::of(run.deliveries.seq_gaps == 0 && run.deliveries.unfinished == 0),
    );
    let mut retries = vec![run.busy_retries];

    // Diagnostic: the same load without the replay ring, to show what the ring costs.
    let no_ring = StreamConfig { replay_capacity: 0, ..StreamConfig::default() };
    let run = paced(setup, &testkit, &mut tap, &heavy, no_ring).await?;
    push_rss(table, "RSS per active stream, replay ring off (diagnostic only)", &input, &heavy, &run, false);
    retries.push(run.busy_retries);

    // A lighter load: every topic at 10 chunks/s.
    let light = Load { topics, chunks: if setup.quick { 20 } else { 100 }, delay: Duration::from_millis(100) };
    let run = paced(setup, &testkit, &mut tap, &light, StreamConfig::default()).await?;
    let input = light.describe();
    table.push(
        "3",
        "throughput, lighter load",
        input.clone(),
        format!(
            "{:.0}/s; CPU: ours {:.2} cores, testkit + tap {:.2} cores; {} gaps",
            run.chunks_per_second, run.cpu_cores, run.load_generator_cores, run.deliveries.seq_gaps
        ),
        format!("offered ≈ {:.0}/s at full overlap", light.offered()),
        Verdict::of(run.deliveries.seq_gaps == 0 && run.deliveries.unfinished == 0),
    );
    push_latency(table, &input, &run.latency);
    push_rss(table, "RSS per active stream, lighter load", &input, &light, &run, true);
    retries.push(run.busy_retries);

    // Saturated: no pacing, no tap.
    let saturated = Load { topics, chunks: if setup.quick { 50 } else { 200 }, delay: Duration::ZERO };
    let pipeline = Pipeline::start().await?;
    let model = pipeline.openai(&testkit.base_url);
    let _ =
        run_load(&pipeline, &testkit, model.clone(), &Load { topics: 1, chunks: 10, delay: Duration::ZERO }, 0).await?;
    let testkit_before = child_cpu(testkit.process.pid());
    let outcome = run_load(&pipeline, &testkit, model, &saturated, 0).await?;
    let testkit_cpu = child_cpu(testkit.process.pid()) - testkit_before;
    retries.push(pipeline.busy_retries.load(Ordering::Relaxed));
    pipeline.manager.shutdown().await;
    let mut deliveries = Deliveries::default();
    for report in &outcome.reports {
        deliveries.add(report);
    }
    table.push(
        "3",
        "throughput, saturated (chunks/s numbered by the actors)",
        saturated.describe(),
        format!(
            "{:.0}/s in {}; CPU: ours {:.2} cores, testkit {:.2} cores; {} gaps",
            numbered(&outcome.reports) as f64 / outcome.wall.as_secs_f64(),
            millis(outcome.wall.as_secs_f64() * 1e3),
            outcome.cpu.as_secs_f64() / outcome.wall.as_secs_f64(),
            testkit_cpu.as_secs_f64() / outcome.wall.as_secs_f64(),
            deliveries.seq_gaps
        ),
        "testkit on the same 2 cores",
        Verdict::of(deliveries.seq_gaps == 0 && deliveries.unfinished == 0),
    );
    table.push(
        "3",
        "turn admissions refused with `database is locked` (the bench retries them)",
        format!("{topics} turns opened at once, per run above"),
        retries.iter().map(u64::to_string).collect::<Vec<_>>().join(" / "),
        "should be 0",
        Verdict::of(retries.iter().all(|&r| r == 0)),
    );
    Ok(())
}

impl Load {
    fn describe(&self) -> String {
        let pace = if self.delay.is_zero() {
            "back to back".to_owned()
        } else {
            format!("1 per {} ms", self.delay.as_millis())
        };
        format!("{} topics × {} chunks, {pace} each, {LISTENERS} listeners each", self.topics, self.chunks)
    }

    /// Chunks per second when every stream runs at once.
    fn offered(&self) -> f64 {
        self.topics as f64 / self.delay.as_secs_f64()
    }
}

struct PacedRun {
    deliveries: Deliveries,
    chunks_per_second: f64,
    deliveries_per_second: f64,
    cpu_cores: f64,
    load_generator_cores: f64,
    latency: Latencies,
    rss_before: u64,
    rss_peak_all_live: Option<u64>,
    busy_retries: u64,
}

/// One paced run through the tap on a fresh pipeline.
async fn paced(setup: &Setup, testkit: &Testkit, tap: &mut Tap, load: &Load, config: StreamConfig) -> Result<PacedRun> {
    let pipeline = Pipeline::with_config(config).await?;
    let model = pipeline.openai(&tap.base_url());
    // Warm up the runtime, the HTTP client and SQLite with one small stream.
    let _ =
        run_load(&pipeline, testkit, model.clone(), &Load { topics: 1, chunks: 10, delay: Duration::ZERO }, 0).await?;
    let _ = tap.take_stamps(setup.work.path()).await?;
    let others_before = child_cpu(testkit.process.pid()) + child_cpu(tap.pid());
    let outcome = run_load(&pipeline, testkit, model, load, load.chunks).await?;
    let others = child_cpu(testkit.process.pid()) + child_cpu(tap.pid()) - others_before;
    let sent = tap.take_stamps(setup.work.path()).await?;
    let busy_retries = pipeline.busy_retries.load(Ordering::Relaxed);
    pipeline.manager.shutdown().await;

    let mut deliveries = Deliveries::default();
    for report in &outcome.reports {
        deliveries.add(report);
    }
    let wall = outcome.wall.as_secs_f64();
    Ok(PacedRun {
        chunks_per_second: numbered(&outcome.reports) as f64 / wall,
        deliveries_per_second: deliveries.chunks as f64 / wall,
        cpu_cores: outcome.cpu.as_secs_f64() / wall,
        load_generator_cores: others.as_secs_f64() / wall,
        latency: Latencies::of(latencies(&outcome.reports, &sent)),
        rss_before: outcome.rss_before,
        rss_peak_all_live: outcome.rss_peak_all_live,
        deliveries,
        busy_retries,
    })
}

fn push_latency(table: &mut Table, input: &str, latency: &Latencies) {
    table.push(
        "3",
        "provider byte → listener under load, p50 / p99 (max)",
        format!("{input} ({} samples)", latency.count),
        format!("{} / {} (max {})", millis(latency.p50_ms), millis(latency.p99_ms), millis(latency.max_ms)),
        // Item 3 asks for p99 under load as a figure; the < 1 ms target is item 2's, for
        // one stream (see `latency.rs`).
        "",
        Verdict::Info,
    );
}

fn push_rss(table: &mut Table, measure: &str, input: &str, load: &Load, run: &PacedRun, judged: bool) {
    let probe_bytes = (LISTENERS * load.chunks * 8) as u64;
    let Some(peak) = run.rss_peak_all_live else {
        table.push("3", measure, input, "never all live at once", "target ≤ 100 KB", Verdict::Missed);
        return;
    };
    let per_stream = peak.saturating_sub(run.rss_before) as f64 / load.topics as f64 - probe_bytes as f64;
    let verdict = if judged { Verdict::of(per_stream <= 100_000.0) } else { Verdict::Info };
    table.push(
        "3",
        measure,
        format!(
            "{input}; {} → {} MiB (peak while all live), less {:.1} KB/stream of bench stamp buffers",
            run.rss_before / (1 << 20),
            peak / (1 << 20),
            probe_bytes as f64 / 1000.0
        ),
        format!("{:.1} KB", per_stream / 1000.0),
        if judged { "target ≤ 100 KB" } else { "" },
        verdict,
    );
}

/// Opens `load.topics` turns at once and waits for every listener to finish.
async fn run_load(
    pipeline: &Pipeline,
    testkit: &Testkit,
    model: Arc<dyn providers::LanguageModel>,
    load: &Load,
    stamp_markers: usize,
) -> Result<Outcome> {
    let mut topics = Vec::with_capacity(load.topics);
    for _ in 0..load.topics {
        topics.push(pipeline.topic().await?);
    }
    // Stream s carries markers s·10⁶ + c (0 is the warm-up's), whichever request takes it.
    let scripts: Vec<Script> = (1..=load.topics as u64)
        .map(|s| Script::text((0..load.chunks as u64).map(|c| marker(s * 1_000_000 + c))).with_token_delay(load.delay))
        .collect();
    testkit.queue(&scripts).await?;

    release_free_memory();
    let rss_before = rss_bytes();
    let finished = Arc::new(AtomicBool::new(false));
    let sampler = {
        let finished = finished.clone();
        let manager = pipeline.manager.clone();
        let topics = load.topics;
        tokio::spawn(async move {
            let mut peak: Option<u64> = None;
            while !finished.load(Ordering::SeqCst) {
                if manager.live_turns() == topics {
                    peak = Some(peak.unwrap_or(0).max(rss_bytes()));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            peak
        })
    };

    let started = Instant::now();
    let cpu_before = process_cpu();
    let probe = Probe { stamp_markers };
    let opens: Vec<JoinHandle<Result<Vec<JoinHandle<ListenerReport>>>>> = topics
        .into_iter()
        .map(|topic| {
            let model = model.clone();
            // Each open runs on its own task, as concurrent user requests would.
            let opener = pipeline.opener();
            tokio::spawn(async move { opener.open_turn(&topic, model, LISTENERS, probe, Delivery::Buffered).await })
        })
        .collect();
    let mut reports = Vec::with_capacity(load.topics * LISTENERS);
    for open in opens {
        for drain in open.await?? {
            reports.push(drain.await?);
        }
    }
    let wall = started.elapsed();
    let cpu = process_cpu() - cpu_before;
    finished.store(true, Ordering::SeqCst);
    let rss_peak_all_live = sampler.await?;
    Ok(Outcome { reports, wall, cpu, rss_before, rss_peak_all_live })
}

/// Chunks the actors numbered: what each turn's opening listener (first of its group) saw.
fn numbered(reports: &[ListenerReport]) -> u64 {
    reports.iter().step_by(LISTENERS).map(|r| r.chunks).sum()
}
