//! The React UI in ui/, driven through its npm scripts.

use anyhow::Result;

use crate::cmd::Cmd;
use crate::repo::Repo;

/// `npm run <script>` in ui/.
pub fn npm_run(repo: &Repo, script: &str) -> Cmd {
    Cmd::new("npm").args(["run", script]).dir(repo.ui())
}

/// Builds ui/dist, which src-tauri embeds: it must exist before cargo compiles src-tauri.
pub fn build(repo: &Repo) -> Result<()> {
    npm_run(repo, "build").run()
}
