//! `cargo xtask test`: every check CI runs, in order, stopping at the first failure.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};

use crate::cmd::{Cmd, find_program};
use crate::repo::Repo;
use crate::{setup, ui};

/// One check, named for `--only`.
struct Step {
    name: &'static str,
    about: &'static str,
    group: Group,
    run: fn(&Repo) -> Result<()>,
}

#[derive(Clone, Copy, PartialEq)]
enum Group {
    Check,
    BrowserE2e,
    DesktopE2e,
}

/// The order matters: ui/dist must exist before anything compiles src-tauri (it embeds
/// the UI), cheap checks come before expensive ones, and e2e tests use the debug build.
const STEPS: &[Step] = &[
    Step {
        name: "setup",
        about: "install missing apt packages, tauri-driver, ui/node_modules",
        group: Group::Check,
        run: setup::run,
    },
    Step {
        name: "ui-build",
        about: "npm run build (ui/dist, embedded by src-tauri)",
        group: Group::Check,
        run: ui::build,
    },
    Step { name: "fmt", about: "cargo fmt --all -- --check", group: Group::Check, run: fmt },
    Step { name: "ui-lint", about: "npm run lint", group: Group::Check, run: |repo| ui::npm_run(repo, "lint").run() },
    Step {
        name: "ui-typecheck",
        about: "npm run typecheck",
        group: Group::Check,
        run: |repo| ui::npm_run(repo, "typecheck").run(),
    },
    Step {
        name: "clippy",
        about: "cargo clippy --workspace --all-targets -- -D warnings",
        group: Group::Check,
        run: clippy,
    },
    Step { name: "build", about: "cargo build --workspace --all-targets (debug)", group: Group::Check, run: build },
    Step {
        name: "rust-tests",
        about: "cargo nextest run --workspace (or cargo test) + doctests",
        group: Group::Check,
        run: rust_tests,
    },
    Step {
        name: "ui-tests",
        about: "npm test (vitest)",
        group: Group::Check,
        run: |repo| ui::npm_run(repo, "test").run(),
    },
    Step {
        name: "e2e",
        about: "npm run e2e (colloquy serve + headless Chromium)",
        group: Group::BrowserE2e,
        run: browser_e2e,
    },
    Step {
        name: "desktop",
        about: "tests/desktop/smoke.mjs (the desktop app via tauri-driver, in Xvfb)",
        group: Group::DesktopE2e,
        run: desktop_e2e,
    },
];

pub const USAGE: &str = "\
Usage: cargo xtask test [--skip-e2e] [--skip-desktop] [--only STEP[,STEP...]]...

  --skip-e2e       skip both end-to-end steps (e2e, desktop)
  --skip-desktop   skip the desktop end-to-end step
  --only STEP      run only these steps (repeatable); nothing else is run or installed first";

pub fn usage_with_steps() -> String {
    let mut text = format!("{USAGE}\n\nSteps, in order:\n");
    for step in STEPS {
        text.push_str(&format!("  {:<13} {}\n", step.name, step.about));
    }
    text
}

struct Options {
    skip_browser_e2e: bool,
    skip_desktop_e2e: bool,
    only: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options { skip_browser_e2e: false, skip_desktop_e2e: false, only: Vec::new() };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--skip-e2e" => {
                options.skip_browser_e2e = true;
                options.skip_desktop_e2e = true;
            }
            "--skip-desktop" => options.skip_desktop_e2e = true,
            "--only" => {
                let names = args.next().context("--only needs a step name")?;
                options.only.extend(names.split(',').map(str::to_owned));
            }
            other => match other.strip_prefix("--only=") {
                Some(names) => options.only.extend(names.split(',').map(str::to_owned)),
                None => bail!("unknown option `{other}`\n\n{}", usage_with_steps()),
            },
        }
    }
    for name in &options.only {
        if !STEPS.iter().any(|s| s.name == name) {
            bail!("unknown step `{name}`\n\n{}", usage_with_steps());
        }
    }
    Ok(options)
}

enum Outcome {
    Passed(Duration),
    Failed(Duration),
    NotRun,
}

/// Runs the selected steps; `Ok(false)` when one failed (the summary says which).
pub fn run(repo: &Repo, args: &[String]) -> Result<bool> {
    let options = parse(args)?;
    let selected: Vec<&Step> = STEPS
        .iter()
        .filter(|step| options.only.is_empty() || options.only.iter().any(|n| n == step.name))
        .filter(|step| !(step.group == Group::BrowserE2e && options.skip_browser_e2e))
        .filter(|step| !(step.group == Group::DesktopE2e && options.skip_desktop_e2e))
        .collect();
    let skipped: Vec<&str> =
        STEPS.iter().filter(|s| !selected.iter().any(|t| t.name == s.name)).map(|s| s.name).collect();

    let started = Instant::now();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut failure = None;
    for (index, step) in selected.iter().enumerate() {
        println!("\n==> [{}/{}] {}: {}", index + 1, selected.len(), step.name, step.about);
        let step_started = Instant::now();
        let result = (step.run)(repo);
        let took = step_started.elapsed();
        match result {
            Ok(()) => {
                println!("<== {} passed in {}", step.name, duration(took));
                outcomes.push(Outcome::Passed(took));
            }
            Err(error) => {
                println!("<== {} FAILED in {}: {error:#}", step.name, duration(took));
                outcomes.push(Outcome::Failed(took));
                failure = Some((step.name, error));
                break;
            }
        }
    }
    outcomes.resize_with(selected.len(), || Outcome::NotRun);

    println!("\nSummary:");
    for (step, outcome) in selected.iter().zip(&outcomes) {
        let (status, took) = match outcome {
            Outcome::Passed(took) => ("passed", duration(*took)),
            Outcome::Failed(took) => ("FAILED", duration(*took)),
            Outcome::NotRun => ("not run", String::new()),
        };
        println!("  {status:<8} {:<13} {took:>8}", step.name);
    }
    if !skipped.is_empty() {
        println!("  skipped: {}", skipped.join(", "));
    }
    println!("  total {}", duration(started.elapsed()));
    let passed = outcomes.iter().filter(|o| matches!(o, Outcome::Passed(_))).count();
    let failed = outcomes.iter().filter(|o| matches!(o, Outcome::Failed(_))).count();
    if let Some((name, error)) = &failure {
        println!("step `{name}` failed: {error:#}");
    }
    println!("{passed} passed, {failed} failed");
    Ok(failure.is_none())
}

fn duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 { format!("{secs:.1}s") } else { format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60) }
}

fn fmt(_: &Repo) -> Result<()> {
    let mut fmt = Cmd::cargo().args(["fmt", "--all", "--", "--check"]);
    // rustfmt colours its diff even into a pipe; follow cargo's colour setting.
    if let Ok(color @ ("never" | "always")) = std::env::var("CARGO_TERM_COLOR").as_deref() {
        fmt = fmt.args(["--color", color]);
    }
    fmt.run()
}

fn clippy(_: &Repo) -> Result<()> {
    Cmd::cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]).run()
}

/// Builds the binaries and the test targets in one go: `--bins` alone would resolve
/// dependency features without dev-dependencies (e.g. tokio's `test-util`), and the
/// test step would then rebuild tokio and everything above it, Tauri included.
fn build(_: &Repo) -> Result<()> {
    Cmd::cargo().args(["build", "--workspace", "--all-targets"]).run()
}

fn rust_tests(_: &Repo) -> Result<()> {
    if Cmd::cargo().args(["nextest", "--version"]).succeeds() {
        Cmd::cargo().args(["nextest", "run", "--workspace", "--no-fail-fast"]).run()?;
        // nextest does not run doctests.
        Cmd::cargo().args(["test", "--workspace", "--doc"]).run()
    } else {
        println!("cargo-nextest is not installed; using cargo test");
        Cmd::cargo().args(["test", "--workspace", "--no-fail-fast"]).run()
    }
}

fn debug_binary(repo: &Repo, name: &str) -> Result<PathBuf> {
    let path = repo.binary("debug", name);
    ensure!(path.exists(), "{} does not exist: run the build step first", path.display());
    Ok(path)
}

fn browser_e2e(repo: &Repo) -> Result<()> {
    ui::npm_run(repo, "e2e")
        .env("COLLOQUY_BIN", debug_binary(repo, "colloquy")?)
        .env("COLLOQUY_TESTKIT_BIN", debug_binary(repo, "colloquy-testkit")?)
        .run()
}

/// The desktop app on a clean data dir, in its own X server, driven over WebDriver.
fn desktop_e2e(repo: &Repo) -> Result<()> {
    let app = debug_binary(repo, "colloquy")?;
    let tauri_driver = setup::tauri_driver()?;
    if find_program("xvfb-run").is_none() {
        bail!("xvfb-run is not installed: run `cargo xtask setup`");
    }
    let scratch = fresh_temp_dir("colloquy-desktop")?;
    let data_dir = scratch.join("data");
    std::fs::create_dir(&data_dir)?;
    let result = Cmd::new("xvfb-run")
        .args(["-a", "--server-args=-screen 0 1280x800x24", "node", "tests/desktop/smoke.mjs"])
        .dir(repo.root())
        .env("COLLOQUY_BIN", app)
        .env("COLLOQUY_DATA_DIR", &data_dir)
        // The webview keeps its own storage (localStorage, caches) under the XDG dirs,
        // not in COLLOQUY_DATA_DIR: give it fresh ones too.
        .env("XDG_DATA_HOME", scratch.join("xdg-data"))
        .env("XDG_CACHE_HOME", scratch.join("xdg-cache"))
        .env("TAURI_DRIVER", tauri_driver)
        .env("RUST_BACKTRACE", "1")
        .run();
    match &result {
        Ok(()) => {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        Err(_) => println!(
            "desktop: the app's data is kept in {}; screenshots and logs are in {}",
            scratch.display(),
            repo.artifacts().display()
        ),
    }
    result
}

fn fresh_temp_dir(prefix: &str) -> Result<PathBuf> {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    Ok(dir)
}
