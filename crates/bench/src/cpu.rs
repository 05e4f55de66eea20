//! 1. CPU time per streamed chunk: the full pipeline versus the stock AI SDK.
//!
//! Both consume the same scripted reply from the same `colloquy-testkit` process over
//! loopback HTTP. Ours: `OpenAiChat` → agent loop → topic actor → 3 listeners, with
//! checkpoints and the final write to SQLite; measured with `getrusage` on this process
//! (every thread). The listeners are fed as a desktop window is (in place) and, in a
//! second row, as `colloquy serve`'s SSE responses are (a buffer drained by a task on the
//! stream thread). Theirs: `streamText(...).toUIMessageStream()` read to the end in a
//! Node child, measured with its own `process.cpuUsage()` around each repetition.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use testkit::Script;

use crate::Setup;
use crate::children::Testkit;
use crate::fake_model;
use crate::machine::{child_cpu, process_cpu};
use crate::pipeline::{Deliveries, Delivery, Pipeline, Probe};
use crate::report::{Table, Verdict, micros, millis};
use crate::stats::median;

const LISTENERS: usize = 3;

/// One scripted reply of `chunks` deltas of 7 bytes, `delay` apart.
struct Workload {
    chunks: usize,
    delay: Duration,
}

impl Workload {
    fn script(&self) -> Script {
        Script::text((0..self.chunks).map(|i| format!("w{:05} ", i % 100_000))).with_token_delay(self.delay)
    }

    fn describe(&self) -> String {
        let pace = if self.delay.is_zero() {
            "back to back".to_owned()
        } else {
            format!("1 per {} ms", self.delay.as_millis())
        };
        format!("{} chunks × 7 B, {pace}", self.chunks)
    }
}

struct Side {
    us_per_chunk: Vec<f64>,
    wall_ms: Vec<f64>,
    testkit_us_per_chunk: f64,
}

pub async fn run(setup: &Setup, table: &mut Table) -> Result<()> {
    let testkit = Testkit::start(&setup.testkit, Duration::ZERO, setup.work.path()).await?;
    let workloads = if setup.quick {
        vec![Workload { chunks: 2_000, delay: Duration::ZERO }]
    } else {
        vec![
            Workload { chunks: 20_000, delay: Duration::ZERO },
            Workload { chunks: 2_000, delay: Duration::from_millis(1) },
        ]
    };
    for workload in &workloads {
        let window = ours(setup, &testkit, workload, Delivery::Window).await?;
        let buffered = ours(setup, &testkit, workload, Delivery::Buffered).await?;
        let node = node(setup, &testkit, workload).await?;
        let node_us = median(&node.us_per_chunk);
        for (ours, listeners) in [(&window, "3 window listeners"), (&buffered, "3 SSE-style buffered listeners")] {
            let ours_us = median(&ours.us_per_chunk);
            let ratio = node_us / ours_us;
            table.push(
                "1",
                format!("CPU per chunk, full pipeline ({listeners} + SQLite)"),
                workload.describe(),
                format!("{} (wall {})", micros(ours_us), millis(median(&ours.wall_ms))),
                format!("AI SDK {} (wall {})", micros(node_us), millis(median(&node.wall_ms))),
                Verdict::Info,
            );
            table.push(
                "1",
                format!("AI SDK CPU ÷ ours ({listeners})"),
                workload.describe(),
                format!("{ratio:.1}×"),
                "target ≥ 10×",
                Verdict::of(ratio >= 10.0),
            );
        }
        let floor = floor(setup, &testkit, workload).await?;
        table.push(
            "1",
            "CPU per chunk, the same HTTP stream only read (one thread, no decoding; the floor, diagnostic)",
            workload.describe(),
            micros(median(&floor)),
            format!("AI SDK ÷ this: {:.1}× (the most any reader of this stream could show)", node_us / median(&floor)),
            Verdict::Info,
        );
        let ours = window;
        if workload.delay.is_zero() {
            let (fake, lagged) = in_process(setup, workload).await?;
            let result = match (fake.is_empty(), lagged) {
                (true, _) => "every repetition dropped a lagging listener".to_owned(),
                (false, 0) => micros(median(&fake)),
                (false, n) => {
                    format!("{} ({n} repetition(s) dropped a lagging listener; not counted)", micros(median(&fake)))
                }
            };
            table.push(
                "1",
                "CPU per chunk, same chunks from an in-process FakeModel (no HTTP, no SSE; diagnostic)",
                workload.describe(),
                result,
                "shows what the HTTP adapter costs",
                Verdict::Info,
            );
        }
        table.push(
            "1",
            "testkit server CPU per chunk (context, same for both)",
            workload.describe(),
            format!("{} while serving us", micros(ours.testkit_us_per_chunk)),
            format!("{} while serving the AI SDK", micros(node.testkit_us_per_chunk)),
            Verdict::Info,
        );
    }
    Ok(())
}

async fn ours(setup: &Setup, testkit: &Testkit, workload: &Workload, delivery: Delivery) -> Result<Side> {
    let pipeline = Pipeline::start().await?;
    let model = pipeline.openai(&testkit.base_url);
    let mut side = Side { us_per_chunk: Vec::new(), wall_ms: Vec::new(), testkit_us_per_chunk: 0.0 };
    let server_before = child_cpu(testkit.process.pid());
    // Repetition 0 warms up (connection pool, allocator, SQLite pages) and is not counted.
    for rep in 0..=setup.reps {
        testkit.queue(&[workload.script()]).await?;
        let topic = pipeline.topic().await?;
        let started = Instant::now();
        let before = process_cpu();
        let drains = pipeline.open_turn(&topic, model.clone(), LISTENERS, Probe::default(), delivery).await?;
        let mut deliveries = Deliveries::default();
        let mut first_listener_deltas = 0;
        for drain in drains {
            let report = drain.await?;
            if deliveries.listeners == 0 {
                first_listener_deltas = report.text_deltas;
            }
            deliveries.add(&report);
        }
        let cpu = process_cpu() - before;
        let wall = started.elapsed();
        if first_listener_deltas != workload.chunks as u64 || deliveries.seq_gaps > 0 || deliveries.unfinished > 0 {
            bail!(
                "the pipeline lost its way: {first_listener_deltas} of {} deltas, {} seq gaps, {} unfinished listeners",
                workload.chunks,
                deliveries.seq_gaps,
                deliveries.unfinished
            );
        }
        if rep > 0 {
            side.us_per_chunk.push(cpu.as_secs_f64() * 1e6 / workload.chunks as f64);
            side.wall_ms.push(wall.as_secs_f64() * 1e3);
        }
    }
    // Includes the warm-up, as on the AI SDK side: the server's meter is too coarse to split.
    let server_cpu = child_cpu(testkit.process.pid()) - server_before;
    side.testkit_us_per_chunk = server_cpu.as_secs_f64() * 1e6 / (workload.chunks * (setup.reps + 1)) as f64;
    pipeline.manager.shutdown().await;
    Ok(side)
}

/// What reading the same stream costs with nothing done to it: the chat request on a
/// current-thread runtime of its own, each body chunk read and dropped. The wake-up per
/// chunk and the kernel's receive path are in it (and on loopback the ACK each read
/// sends, delivered to the testkit on this thread); decoding, the agent loop, the topic
/// and SQLite are not.
async fn floor(setup: &Setup, testkit: &Testkit, workload: &Workload) -> Result<Vec<f64>> {
    let url = format!("{}/chat/completions", testkit.base_url);
    let mut us_per_chunk = Vec::new();
    for rep in 0..=setup.reps {
        testkit.queue(&[workload.script()]).await?;
        let url = url.clone();
        let (cpu, bytes) = tokio::task::spawn_blocking(move || -> Result<(Duration, usize)> {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async move {
                let client = reqwest::Client::new();
                let before = process_cpu();
                let body = serde_json::json!({
                    "model": "scripted",
                    "messages": [{ "role": "user", "content": "bench" }],
                    "stream": true,
                    "stream_options": { "include_usage": true },
                });
                let mut response = client.post(url).json(&body).send().await?.error_for_status()?;
                let mut bytes = 0;
                while let Some(chunk) = response.chunk().await? {
                    bytes += chunk.len();
                }
                Ok((process_cpu() - before, bytes))
            })
        })
        .await??;
        if bytes < workload.chunks * 7 {
            bail!("the bare reader read {bytes} bytes, less than the {} chunks' text", workload.chunks);
        }
        if rep > 0 {
            us_per_chunk.push(cpu.as_secs_f64() * 1e6 / workload.chunks as f64);
        }
    }
    Ok(us_per_chunk)
}

/// The same chunk count through the same pipeline from the in-process [`fake_model`]: what is left
/// when HTTP, SSE decoding and the wire mapper are taken out. Nothing paces this model,
/// so a listener can fall more than its buffer behind and be dropped (by design); such
/// repetitions did less work and are left out (and counted).
async fn in_process(setup: &Setup, workload: &Workload) -> Result<(Vec<f64>, usize)> {
    let pipeline = Pipeline::start().await?;
    let mut us_per_chunk = Vec::new();
    let mut lagged = 0;
    for rep in 0..=setup.reps {
        let model = Arc::new(fake_model::finishing(workload.chunks * 7, workload.chunks));
        let topic = pipeline.topic().await?;
        let before = process_cpu();
        let drains = pipeline.open_turn(&topic, model, LISTENERS, Probe::default(), Delivery::Window).await?;
        let mut deliveries = Deliveries::default();
        for drain in drains {
            deliveries.add(&drain.await?);
        }
        let cpu = process_cpu() - before;
        if deliveries.seq_gaps > 0 {
            bail!("the in-process run saw {} seq gaps", deliveries.seq_gaps);
        }
        if rep == 0 {
            continue;
        }
        if deliveries.unfinished > 0 {
            lagged += 1;
        } else {
            us_per_chunk.push(cpu.as_secs_f64() * 1e6 / workload.chunks as f64);
        }
    }
    pipeline.manager.shutdown().await;
    Ok((us_per_chunk, lagged))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeRep {
    rep: usize,
    cpu_us: f64,
    wall_ms: f64,
    text_deltas: usize,
}

async fn node(setup: &Setup, testkit: &Testkit, workload: &Workload) -> Result<Side> {
    let script_path = setup.work.path().join("script.json");
    std::fs::write(&script_path, serde_json::to_vec(&workload.script())?)?;
    let server_before = child_cpu(testkit.process.pid());
    let output = tokio::process::Command::new(&setup.node)
        .arg("stream.mjs")
        .args(["--base-url", &testkit.base_url, "--script"])
        .arg(&script_path)
        .args(["--reps", &(setup.reps + 1).to_string()])
        .args(["--control-token", &testkit.control_token])
        .current_dir(&setup.aisdk)
        .output()
        .await
        .with_context(|| format!("could not run node in {}", setup.aisdk.display()))?;
    let server_cpu = child_cpu(testkit.process.pid()) - server_before;
    if !output.status.success() {
        bail!(
            "the AI SDK side failed ({}); did `npm ci` run in {}?\n{}",
            output.status,
            setup.aisdk.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut side = Side { us_per_chunk: Vec::new(), wall_ms: Vec::new(), testkit_us_per_chunk: 0.0 };
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let rep: NodeRep =
            serde_json::from_str(line).with_context(|| format!("unexpected output from node: {line}"))?;
        if rep.text_deltas != workload.chunks {
            bail!("the AI SDK read {} of {} deltas", rep.text_deltas, workload.chunks);
        }
        // Repetition 0 warms up the JIT and is not counted, as on our side.
        if rep.rep > 0 {
            side.us_per_chunk.push(rep.cpu_us / workload.chunks as f64);
            side.wall_ms.push(rep.wall_ms);
        }
    }
    side.testkit_us_per_chunk = server_cpu.as_secs_f64() * 1e6 / (workload.chunks * (setup.reps + 1)) as f64;
    Ok(side)
}
