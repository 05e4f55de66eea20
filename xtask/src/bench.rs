//! `cargo xtask bench [NAME] [ARGS...]`: benchmarks that print a table.

use anyhow::{Result, bail};

use crate::repo::Repo;

/// A named benchmark. Add one by writing `fn(&Repo, &[String]) -> Result<()>` and
/// listing it in `BENCHES`.
struct Bench {
    name: &'static str,
    about: &'static str,
    run: fn(&Repo, &[String]) -> Result<()>,
}

const BENCHES: &[Bench] = &[];

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
