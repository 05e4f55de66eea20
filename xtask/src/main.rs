//! Project automation, run as `cargo xtask <command>` (an alias in .cargo/config.toml).
//! Plain std and anyhow: it must build in seconds on a fresh clone.

mod bench;
mod cmd;
mod generate;
mod repo;
mod run;
mod setup;
mod test;
mod ui;

use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::repo::Repo;

const USAGE: &str = "\
Usage: cargo xtask <command> [options]

Commands:
  run     set up, build the UI and the app (release), and start the desktop app
  test    every check CI runs (`cargo xtask test --help` lists the steps)
  setup   install what is missing: apt packages, tauri-driver, ui/node_modules
  gen     regenerate ui/src/protocol.gen.ts, ui/src/operations.gen.ts and ui/tests/fixtures/ui-stream.json
  bench   run a benchmark by name (`cargo xtask bench` lists them)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(args: &[String]) -> Result<ExitCode> {
    let repo = Repo::locate();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("help", &[][..]),
    };
    // Anything after `--` belongs to the app (`cargo xtask run -- --help`).
    let wants_help = rest.iter().take_while(|a| *a != "--").any(|a| a == "--help" || a == "-h");
    match command {
        "help" | "--help" | "-h" => println!("{USAGE}"),
        "test" if wants_help => println!("{}", test::usage_with_steps()),
        "test" => return Ok(if test::run(&repo, rest)? { ExitCode::SUCCESS } else { ExitCode::FAILURE }),
        "run" if wants_help => println!("{}", run::USAGE),
        "run" => {
            let code = run::run(&repo, rest)?;
            return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
        }
        "setup" => setup::run(&repo)?,
        "gen" => generate::run(&repo)?,
        "bench" => bench::run(&repo, rest)?,
        other => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
    Ok(ExitCode::SUCCESS)
}
