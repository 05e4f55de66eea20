//! `colloquy-bench-streams`: the stream pipeline measured end to end, printed as a
//! Markdown table (`cargo xtask bench streams`; results in `docs/benchmarks.md`).
//!
//! - [`cpu`]: 1. CPU per chunk, ours versus the stock AI SDK in Node.
//! - [`latency`]: 2. provider byte → listener latency.
//! - [`concurrent`]: 3. 1,000 concurrent topics: throughput, latency, RSS, `seq` gaps.
//! - [`attach`]: 4. attach time to a live 1 MB reply versus its chunk count.
//! - [`crash`]: 5. output lost on SIGKILL of `colloquy serve`.
//!
//! Helpers: [`pipeline`] (the stream manager under test and its listeners), [`tap`] (a
//! timestamping relay run as a child process), [`fake_model`], [`children`] (testkit,
//! tap and server processes); [`machine`], [`stats`] and [`report`] come from the library
//! both benchmark binaries share.

mod attach;
mod children;
mod concurrent;
mod cpu;
mod crash;
mod fake_model;
mod latency;
mod pipeline;
mod tap;

use colloquy_bench::{load_average, machine, report, stats};

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::machine::{Machine, machine_busy, process_cpu};
use crate::report::{Table, Verdict};

const USAGE: &str = "\
Usage: colloquy-bench-streams [--only cpu,latency,concurrent,attach,crash] [--reps N] [--quick]
                              [--testkit PATH] [--colloquy PATH] [--aisdk DIR] [--node PATH]
                              [--without-search-index]

Run from the repository root after `cargo build --release -p colloquy-bench -p colloquy-testkit -p colloquy`
and `npm ci` in bench/aisdk (`cargo xtask bench streams` does all of that).
  --only     run some sections (default: all)
  --reps     repetitions per measured median (default 5)
  --quick    small inputs, to check the benchmark itself works
  --testkit, --colloquy   binaries (default: beside this one)
  --aisdk    the Node baseline's folder (default: bench/aisdk)
  --node     the Node binary (default: node)
  --without-search-index   drop the full-text index's triggers from each database (its cost)";

const SECTIONS: &[&str] = &["cpu", "latency", "concurrent", "attach", "crash"];

/// Where everything is, and how much to run.
pub struct Setup {
    pub testkit: PathBuf,
    pub colloquy: PathBuf,
    pub aisdk: PathBuf,
    pub node: PathBuf,
    pub reps: usize,
    pub quick: bool,
    /// Logs, databases and scripts of this run.
    pub work: tempfile::TempDir,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((command, rest)) if command == "tap" => match rest.first() {
            Some(upstream) => tap::run(upstream.clone()),
            None => Err(anyhow::anyhow!("usage: colloquy-bench-streams tap UPSTREAM_ADDR")),
        },
        Some((flag, _)) if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        _ => bench(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: &[String]) -> Result<()> {
    let (setup, sections) = parse(args)?;
    machine::raise_open_files_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let table = runtime.block_on(run(&setup, &sections))?;
    if table.missed() > 0 {
        println!("\n{} target(s) missed.", table.missed());
    }
    Ok(())
}

fn parse(args: &[String]) -> Result<(Setup, Vec<String>)> {
    let exe_dir = std::env::current_exe()?.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut setup = Setup {
        testkit: exe_dir.join("colloquy-testkit"),
        colloquy: exe_dir.join("colloquy"),
        aisdk: PathBuf::from("bench/aisdk"),
        node: PathBuf::from("node"),
        reps: 5,
        quick: false,
        work: tempfile::Builder::new().prefix("colloquy-bench-").tempdir()?,
    };
    let mut sections: Vec<String> = SECTIONS.iter().map(|s| (*s).to_owned()).collect();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--only" => {
                sections = value()?.split(',').map(str::to_owned).collect();
                if let Some(unknown) = sections.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    bail!("unknown section `{unknown}`; known: {}", SECTIONS.join(", "));
                }
            }
            "--reps" => setup.reps = value()?.parse::<usize>().context("--reps takes a number")?.max(1),
            "--quick" => setup.quick = true,
            "--without-search-index" => pipeline::WITHOUT_SEARCH_INDEX.store(true, Ordering::Relaxed),
            "--testkit" => setup.testkit = value()?.into(),
            "--colloquy" => setup.colloquy = value()?.into(),
            "--aisdk" => setup.aisdk = value()?.into(),
            "--node" => setup.node = value()?.into(),
            other => bail!("unknown option `{other}`\n\n{USAGE}"),
        }
    }
    Ok((setup, sections))
}

async fn run(setup: &Setup, sections: &[String]) -> Result<Table> {
    let machine = Machine::describe();
    let node_version = tokio::process::Command::new(&setup.node)
        .arg("--version")
        .output()
        .await
        .map_or_else(|_| "not found".to_owned(), |o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    println!(
        "Machine: {} · {} cores · {:.1} GiB RAM · Linux {}",
        machine.cpu_model, machine.cores, machine.memory_gib, machine.kernel
    );
    println!(
        "Build: {} · Node {node_version} · medians of {} repetitions after 1 warm-up{}",
        if cfg!(debug_assertions) { "DEBUG (numbers are meaningless; use --release)" } else { "release" },
        setup.reps,
        if setup.quick { " · --quick inputs" } else { "" }
    );
    if pipeline::WITHOUT_SEARCH_INDEX.load(Ordering::Relaxed) {
        println!("Search index: its triggers dropped from every database (--without-search-index)");
    }
    // Other work on the machine skews the latency rows most: say how busy it was.
    println!("Load average at start: {}", load_average());
    println!();

    let mut table = Table::default();
    let mut busy = Vec::new();
    for section in sections {
        eprintln!("bench: running `{section}`…");
        let (started, machine_before, own_before) = (Instant::now(), machine_busy(), process_cpu());
        let outcome = match section.as_str() {
            "cpu" => cpu::run(setup, &mut table).await,
            "latency" => latency::run(setup, &mut table).await,
            "concurrent" => concurrent::run(setup, &mut table).await,
            "attach" => attach::run(setup, &mut table).await,
            "crash" => crash::run(setup, &mut table).await,
            _ => Ok(()),
        };
        if let Err(error) = outcome {
            eprintln!("bench: `{section}` failed: {error:#}");
            table.push("!", format!("`{section}` did not complete"), "", format!("{error:#}"), "", Verdict::Missed);
        }
        let wall = started.elapsed().as_secs_f64();
        let cores = |cpu: Duration| cpu.as_secs_f64() / wall;
        busy.push(format!(
            "`{section}` {:.0} s: machine {:.2} cores busy, this process {:.2}",
            wall,
            cores(machine_busy() - machine_before),
            cores(process_cpu() - own_before)
        ));
    }
    table.print();
    // The rest of "machine" is the testkit, tap, Node and server children, and anything
    // else running on the machine: on a quiet machine it stays well under the core count.
    println!("\nCPU in use while each section ran (all processes on the machine vs this one):");
    for line in busy {
        println!("- {line}");
    }
    println!("\nLoad average at end: {}", load_average());
    Ok(table)
}
