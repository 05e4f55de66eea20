//! `cargo xtask gen`: regenerate the files derived from Rust types.

use anyhow::Result;

use crate::cmd::Cmd;
use crate::repo::Repo;

/// Written by colloquy-protocol's tests when `COLLOQUY_UPDATE_GENERATED` is set; without
/// it those tests fail when these files are stale.
const GENERATED: &[&str] = &["ui/src/protocol.gen.ts", "ui/src/operations.gen.ts", "ui/tests/fixtures/ui-stream.json"];

pub fn run(repo: &Repo) -> Result<()> {
    Cmd::cargo()
        .args(["test", "-p", "colloquy-protocol"])
        .env("COLLOQUY_UPDATE_GENERATED", "1")
        .dir(repo.root())
        .run()?;
    println!("gen: regenerated {}", GENERATED.join(", "));
    // Best effort: show what changed when this is a git checkout.
    let _ = Cmd::new("git").args(["diff", "--stat", "--"]).args(GENERATED).dir(repo.root()).status();
    Ok(())
}
