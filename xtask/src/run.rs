//! `cargo xtask run`: set up, build the UI and the app, and start it.

use anyhow::{Result, bail};

use crate::cmd::Cmd;
use crate::repo::Repo;
use crate::{setup, ui};

pub const USAGE: &str = "\
Usage: cargo xtask run [--release | --debug] [-- ARGS...]

  --release   optimized build (the default)
  --debug     debug build (faster to compile)
  ARGS        passed to colloquy, e.g. `cargo xtask run -- serve --port 0`";

/// Runs the app; returns its exit code.
pub fn run(repo: &Repo, args: &[String]) -> Result<i32> {
    let mut release = true;
    let mut app_args: &[String] = &[];
    for (i, arg) in args.iter().enumerate() {
        match arg.as_str() {
            "--release" => release = true,
            "--debug" => release = false,
            "--" => {
                app_args = &args[i + 1..];
                break;
            }
            other => bail!("unknown option `{other}`\n\n{USAGE}"),
        }
    }

    setup::run(repo)?;
    ui::build(repo)?;
    let mut build = Cmd::cargo().args(["build", "-p", "colloquy"]);
    if release {
        build = build.arg("--release");
    }
    build.run()?;

    let binary = repo.binary(if release { "release" } else { "debug" }, "colloquy");
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    // Only `colloquy` without arguments opens a window (see docs/api.md).
    let opens_window = app_args.is_empty();
    let app = if opens_window && !has_display {
        println!(
            "run: no DISPLAY or WAYLAND_DISPLAY, so the window opens in a virtual X server (xvfb-run -a) \
             and is not visible; use `cargo xtask run -- serve` for the browser UI"
        );
        Cmd::new("xvfb-run").arg("-a").arg(&binary)
    } else {
        Cmd::new(&binary)
    };
    // From the repository root, so `colloquy serve`'s default `--ui-dir ui/dist` is found.
    let status = app.args(app_args).dir(repo.root()).status()?;
    Ok(status.code().unwrap_or(1))
}
