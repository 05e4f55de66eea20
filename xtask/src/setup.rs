//! `cargo xtask setup`: install whatever is missing; every check is fast when nothing is.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};

use crate::cmd::{Cmd, find_program};
use crate::repo::Repo;

/// Debian packages: WebKitGTK and friends to build the Tauri app, libdbus for the
/// keychain (the Secret Service), Xvfb for headless runs, Chromium for the browser e2e
/// tests, WebKitWebDriver for the desktop e2e test.
pub const APT_PACKAGES: &[&str] = &[
    "libwebkit2gtk-4.1-dev",
    "libgtk-3-dev",
    "librsvg2-dev",
    "libayatana-appindicator3-dev",
    "libssl-dev",
    "libdbus-1-dev",
    "pkg-config",
    "xvfb",
    "xauth",
    "chromium",
    "chromium-driver",
    "webkit2gtk-driver",
];

/// The tauri-driver release the desktop e2e test was written against.
const TAURI_DRIVER_VERSION: &str = "2.1.0";

pub fn run(repo: &Repo) -> Result<()> {
    check_rust_components()?;
    // tauri-driver compiles for a minute or two; let it overlap with apt and npm.
    let tauri_driver = start_tauri_driver_install(repo)?;
    install_apt_packages()?; // on error, dropping `tauri_driver` stops its install
    install_ui_dependencies(repo)?;
    tauri_driver.map_or(Ok(()), BackgroundInstall::finish)
}

fn check_rust_components() -> Result<()> {
    for (tool, component) in [("fmt", "rustfmt"), ("clippy", "clippy")] {
        if !Cmd::cargo().args([tool, "--version"]).succeeds() {
            println!("setup: `cargo {tool}` is missing; installing the {component} component");
            Cmd::new("rustup").args(["component", "add", component]).run()?;
        }
    }
    Ok(())
}

/// Where `tauri-driver` is, or an error telling how to get it.
pub fn tauri_driver() -> Result<PathBuf> {
    find_program("tauri-driver").context("tauri-driver is not installed: run `cargo xtask setup`")
}

/// A `cargo install` running in the background, logging to a file.
struct BackgroundInstall {
    child: std::process::Child,
    log: PathBuf,
    what: String,
}

impl BackgroundInstall {
    fn finish(mut self) -> Result<()> {
        let status = self.child.wait()?;
        if !status.success() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!("{} failed ({status}); last lines of {}:\n{}", self.what, self.log.display(), tail.join("\n"));
        }
        println!("setup: {} finished", self.what);
        Ok(())
    }
}

impl Drop for BackgroundInstall {
    fn drop(&mut self) {
        // Only reached without `finish` when setup bails early: do not leave it running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn start_tauri_driver_install(repo: &Repo) -> Result<Option<BackgroundInstall>> {
    if let Some(path) = find_program("tauri-driver") {
        println!("setup: tauri-driver found at {}", path.display());
        return Ok(None);
    }
    let log_dir = repo.target_dir().join("xtask");
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("tauri-driver-install.log");
    let cmd = Cmd::cargo().args(["install", "tauri-driver", "--locked", "--version", TAURI_DRIVER_VERSION]);
    println!("setup: installing tauri-driver {TAURI_DRIVER_VERSION} in the background");
    let child = cmd.spawn_logged(&log)?;
    Ok(Some(BackgroundInstall { child, log, what: format!("`{}`", cmd.display()) }))
}

fn install_apt_packages() -> Result<()> {
    if find_program("dpkg-query").is_none() {
        println!(
            "setup: no dpkg-query (not Debian/Ubuntu?): make sure these or their equivalents are installed: {}",
            APT_PACKAGES.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = APT_PACKAGES.iter().copied().filter(|p| !apt_installed(p)).collect();
    if missing.is_empty() {
        println!("setup: all {} apt packages are installed", APT_PACKAGES.len());
        return Ok(());
    }
    println!("setup: missing apt packages: {}", missing.join(" "));
    let install_line = format!(
        "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    // As root run apt-get directly; otherwise through sudo (`env` because sudo resets it).
    let prefix: Vec<&str> = if is_root() {
        vec![]
    } else if find_program("sudo").is_some() {
        vec!["sudo", "env", "DEBIAN_FRONTEND=noninteractive"]
    } else {
        bail!(
            "these apt packages are missing and this user is not root and has no sudo; as root run:\n  {install_line}"
        );
    };
    let apt = |args: &[&str]| {
        let mut words = prefix.clone();
        words.push("apt-get");
        words.extend_from_slice(args);
        Cmd::new(words[0]).args(&words[1..]).env("DEBIAN_FRONTEND", "noninteractive")
    };
    apt(&["update"]).run()?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend_from_slice(&missing);
    apt(&install).run().with_context(|| format!("installing apt packages failed; to do it by hand:\n  {install_line}"))
}

fn apt_installed(package: &str) -> bool {
    Cmd::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .read()
        .is_some_and(|status| status.trim() == "install ok installed")
}

fn is_root() -> bool {
    Cmd::new("id").arg("-u").read().is_some_and(|uid| uid.trim() == "0")
}

/// `npm ci` in ui/, tests/mcp-servers/ (the MCP servers the tests run) and
/// tests/agent-cli/ (Claude Code and the ACP agents the agent-session tests drive), each when
/// its node_modules is missing or older than its package-lock.json.
fn install_ui_dependencies(repo: &Repo) -> Result<()> {
    if find_program("npm").is_none() {
        bail!("npm is not on PATH: install Node.js 20 or newer (with npm)");
    }
    npm_ci_if_stale(&repo.ui(), "ui")?;
    npm_ci_if_stale(&repo.root().join("tests/mcp-servers"), "tests/mcp-servers")?;
    npm_ci_if_stale(&repo.root().join("tests/agent-cli"), "tests/agent-cli")
}

fn npm_ci_if_stale(dir: &Path, name: &str) -> Result<()> {
    let lock = dir.join("package-lock.json");
    if !lock.exists() {
        bail!("{} is missing: cannot install {name}'s dependencies", lock.display());
    }
    // npm writes node_modules/.package-lock.json on every install, so its age is the
    // age of the install.
    let installed =
        modified(&dir.join("node_modules/.package-lock.json")).or_else(|| modified(&dir.join("node_modules")));
    match (installed, modified(&lock)) {
        (Some(installed), Some(lock)) if installed >= lock => {
            println!("setup: {name}/node_modules is up to date");
            Ok(())
        }
        (installed, _) => {
            let why = if installed.is_some() { "older than package-lock.json" } else { "missing" };
            println!("setup: {name}/node_modules is {why}; running npm ci");
            Cmd::new("npm").args(["ci", "--no-audit", "--no-fund"]).dir(dir).run()
        }
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    path.metadata().and_then(|m| m.modified()).ok()
}
