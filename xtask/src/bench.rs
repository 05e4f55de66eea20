//! `cargo xtask bench [NAME] [ARGS...]`: benchmarks that print a table.

use anyhow::{Result, bail};

use crate::cmd::Cmd;
use crate::repo::Repo;
use crate::{setup, ui};

/// A named benchmark. Add one by writing `fn(&Repo, &[String]) -> Result<()>` and
/// listing it in `BENCHES`.
struct Bench {
    name: &'static str,
    about: &'static str,
    run: fn(&Repo, &[String]) -> Result<()>,
}

const BENCHES: &[Bench] = &[
    Bench {
        name: "streams",
        about: "stream pipeline: CPU/chunk vs the AI SDK, latency, 1,000 topics, attach, SIGKILL (docs/benchmarks.md)",
        run: streams,
    },
    Bench {
        name: "providers",
        about: "parse + map throughput (MB/s, events/s) of each wire format on a large recorded reply (docs/benchmarks.md)",
        run: providers,
    },
    Bench {
        name: "search",
        about: "full-text search: latency p50/p99 over 100,000 messages, index size, cost per chunk checkpoint (docs/benchmarks.md)",
        run: search,
    },
    Bench {
        name: "ui",
        about: "the UI in headless Chromium: streaming, a 10,000-message topic, scrolling, heap/DOM, bundle (docs/benchmarks.md)",
        run: ui_bench,
    },
    Bench {
        name: "desktop",
        about: "the release desktop app under Xvfb: cold start to first paint, memory of all its processes, idle CPU, binary size; `colloquy serve` too (docs/benchmarks.md)",
        run: desktop,
    },
    Bench {
        name: "virtualizers",
        about: "react-virtuoso, virtua and @tanstack/react-virtual on the same 10,000-message list, in headless Chromium (docs/benchmarks.md)",
        run: virtualizers,
    },
];

pub fn run(repo: &Repo, args: &[String]) -> Result<()> {
    let Some(name) = args.first() else { return list() };
    match BENCHES.iter().find(|bench| bench.name == name) {
        Some(bench) => (bench.run)(repo, &args[1..]),
        None => {
            list()?;
            bail!("unknown benchmark `{name}`")
        }
    }
}

fn list() -> Result<()> {
    let mut any = false;
    for bench in BENCHES {
        println!("  {:<12} {}", bench.name, bench.about);
        any = true;
    }
    if !any {
        println!("No benchmarks are defined yet.");
    }
    Ok(())
}

/// `crates/bench`: builds the release binaries it drives, installs the Node baseline
/// (`bench/aisdk`, from its lock file), then runs `colloquy-bench-streams ARGS` from the
/// repository root. `cargo xtask bench streams --help` lists its options.
fn streams(repo: &Repo, args: &[String]) -> Result<()> {
    setup::run(repo)?;
    // src-tauri embeds ui/dist, so `colloquy` (the server under SIGKILL) needs it built.
    if !repo.ui().join("dist/index.html").exists() {
        ui::build(repo)?;
    }
    let aisdk = repo.root().join("bench/aisdk");
    if !aisdk.join("node_modules/ai/package.json").exists() {
        Cmd::new("npm").args(["ci", "--no-audit", "--no-fund"]).dir(&aisdk).run()?;
    }
    Cmd::cargo()
        .args(["build", "--release", "-p", "colloquy-bench", "-p", "colloquy-testkit", "-p", "colloquy"])
        .dir(repo.root())
        .run()?;
    Cmd::new(repo.binary("release", "colloquy-bench-streams")).args(args).dir(repo.root()).run()
}

/// `colloquy-bench-providers`: records a large reply from the testkit in every wire format
/// and times decoding it. `cargo xtask bench providers --help` lists its options.
fn providers(repo: &Repo, args: &[String]) -> Result<()> {
    Cmd::cargo()
        .args(["build", "--release", "-p", "colloquy-bench", "--bin", "colloquy-bench-providers"])
        .dir(repo.root())
        .run()?;
    Cmd::new(repo.binary("release", "colloquy-bench-providers")).args(args).dir(repo.root()).run()
}

/// `colloquy-bench-search`: fills a database of 100,000 messages and times searching it.
/// `cargo xtask bench search --help` lists its options.
fn search(repo: &Repo, args: &[String]) -> Result<()> {
    Cmd::cargo()
        .args(["build", "--release", "-p", "colloquy-bench", "--bin", "colloquy-bench-search"])
        .dir(repo.root())
        .run()?;
    Cmd::new(repo.binary("release", "colloquy-bench-search")).args(args).dir(repo.root()).run()
}

/// `ui/bench/ui-bench.mjs`: the built UI in headless Chromium against `colloquy serve` and
/// the testkit (debug builds, as the browser e2e tests use; the server's share of the
/// measured work is small). `cargo xtask bench ui --help` lists its options.
fn ui_bench(repo: &Repo, args: &[String]) -> Result<()> {
    setup::run(repo)?;
    // Always rebuilt: the benchmark measures the UI as it is in the working tree.
    ui::build(repo)?;
    Cmd::cargo().args(["build", "-p", "colloquy", "-p", "colloquy-testkit"]).dir(repo.root()).run()?;
    Cmd::new("node")
        .arg("bench/ui-bench.mjs")
        .args(args)
        .env("COLLOQUY_BIN", repo.binary("debug", "colloquy"))
        .env("COLLOQUY_TESTKIT_BIN", repo.binary("debug", "colloquy-testkit"))
        .dir(repo.ui())
        .run()
}

/// `tests/desktop/bench.mjs`: the release build of the desktop app (and `colloquy serve`,
/// the same binary) measured from outside, in its own X server through tauri-driver.
/// `cargo xtask bench desktop --help` lists its options.
fn desktop(repo: &Repo, args: &[String]) -> Result<()> {
    setup::run(repo)?;
    // src-tauri embeds ui/dist: the UI as it is in the working tree.
    ui::build(repo)?;
    Cmd::cargo().args(["build", "--release", "-p", "colloquy"]).dir(repo.root()).run()?;
    let tauri_driver = setup::tauri_driver()?;
    Cmd::new("xvfb-run")
        .args(["-a", "--server-args=-screen 0 1280x800x24", "node", "tests/desktop/bench.mjs"])
        .args(args)
        .dir(repo.root())
        .env("COLLOQUY_BIN", repo.binary("release", "colloquy"))
        .env("TAURI_DRIVER", tauri_driver)
        .run()
}

/// `ui/bench/virtualizers.mjs`: the list libraries issue 15 chose between, on one page
/// built from `ui/bench/virtualizers/`. `cargo xtask bench virtualizers --help` lists its options.
fn virtualizers(repo: &Repo, args: &[String]) -> Result<()> {
    setup::run(repo)?;
    Cmd::new("node").arg("bench/virtualizers.mjs").args(args).dir(repo.ui()).run()
}
