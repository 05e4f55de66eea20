//! Child process groups: every stdio MCP server, and every agent CLI (Claude Code) an
//! agent session runs, is the leader of its own process group (so a child that starts
//! children is stopped whole), the groups are written to one file in the data folder, and
//! at the next start any group a crash left behind is killed.
//!
//! A recorded group is only killed if its leader still has the start time recorded with
//! it, so a process id reused by something else since is never touched. A group whose
//! leader is gone (it died with the app, see [`die_with_parent`]) is still reaped: its
//! id cannot be taken by another process while members are left, and only members that
//! started after the recorded leader are killed, one by one.
//!
//! [`die_with_parent`] also ends a child as soon as the app dies (Linux), so one that
//! was mid-task does not run on until the next start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The process groups of running children (stdio servers, agent CLIs), mirrored in a
/// file. One registry per data folder: its owners share it (`Arc`).
#[derive(Debug)]
pub struct ProcessRegistry {
    path: PathBuf,
    groups: Mutex<BTreeMap<u32, Recorded>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Recorded {
    /// The leader's start time, in clock ticks since boot (`/proc/<pid>/stat` field 22).
    start_time: u64,
    /// What it is, for the log (a server's name, "Claude Code, session …").
    server: String,
}

impl ProcessRegistry {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), groups: Mutex::new(BTreeMap::new()) }
    }

    /// Kills the groups a previous run left behind (it crashed or was killed) and empties
    /// the file. Returns how many groups were still alive. Waits (up to two seconds) until
    /// what it killed is gone: SIGKILL takes effect when the process next runs, which on a
    /// busy machine may be a while, and no new server should start beside an old one.
    pub fn reap_orphans(&self) -> usize {
        let recorded: BTreeMap<u32, Recorded> =
            std::fs::read_to_string(&self.path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        let mut reaped = 0;
        let mut killed_groups = Vec::new();
        let mut killed_members = Vec::new();
        for (pid, entry) in recorded {
            match start_time(pid) {
                Some(started) if started == entry.start_time => {
                    tracing::warn!(pid, process = %entry.server, "stopping a child process left running by the last run");
                    kill_group(pid, libc::SIGKILL);
                    killed_groups.push(pid);
                    reaped += 1;
                }
                // The id is someone else's now: so is any group of that id.
                Some(_) => {}
                None => {
                    let members = members_since(pid, entry.start_time);
                    if !members.is_empty() {
                        tracing::warn!(
                            pid,
                            process = %entry.server,
                            left = members.len(),
                            "stopping what a child process left running by the last run started"
                        );
                        for member in members {
                            kill_process(member, libc::SIGKILL);
                            killed_members.push(member);
                        }
                        reaped += 1;
                    }
                }
            }
        }
        for _ in 0..80 {
            let alive = killed_groups.iter().any(|&pid| group_alive(pid))
                || killed_members.iter().any(|&pid| start_time(pid).is_some());
            if !alive {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        if let Ok(mut groups) = self.groups.lock() {
            groups.clear();
        }
        self.save();
        reaped
    }

    /// Remembers a new child process (its own group leader); `label` says what it is.
    pub fn add(&self, pid: u32, label: &str) {
        let Some(start_time) = start_time(pid) else { return };
        if let Ok(mut groups) = self.groups.lock() {
            groups.insert(pid, Recorded { start_time, server: label.to_owned() });
        }
        self.save();
    }

    /// Stops a server's whole process group: SIGTERM, then SIGKILL for what is left.
    pub async fn stop(&self, pid: u32) {
        kill_group(pid, libc::SIGTERM);
        for _ in 0..20 {
            if !group_alive(pid) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        kill_group(pid, libc::SIGKILL);
        self.forget(pid);
    }

    /// The process has exited by itself.
    pub fn forget(&self, pid: u32) {
        if let Ok(mut groups) = self.groups.lock() {
            groups.remove(&pid);
        }
        self.save();
    }

    /// Every recorded group, killed at once (app exit).
    pub fn stop_all_now(&self) {
        let pids: Vec<u32> = self.groups.lock().map(|g| g.keys().copied().collect()).unwrap_or_default();
        for pid in pids {
            kill_group(pid, libc::SIGKILL);
        }
        if let Ok(mut groups) = self.groups.lock() {
            groups.clear();
        }
        self.save();
    }

    fn save(&self) {
        let Ok(groups) = self.groups.lock() else { return };
        let text = serde_json::to_string(&*groups).unwrap_or_else(|_| "{}".into());
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = self.path.with_extension("tmp");
        if write_private(&tmp, text.as_bytes()).and_then(|()| std::fs::rename(&tmp, &self.path)).is_err() {
            tracing::warn!(path = %self.path.display(), "could not record child processes");
        }
    }
}

/// Writes `path` readable by the user only (the data folder is private, see the engine's
/// `data_folder`); the rename then also replaces a file an older version left `0644`.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(path)?;
    // `mode` only applies to a new file: a `.tmp` left by an older version keeps its own.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

/// Linux: the child gets SIGKILL as soon as the app dies, however it dies (a SIGKILL
/// included), instead of running on, re-parented to init, until the next start reaps its
/// group. (Only the leader gets the signal; what it started is reaped with its group.)
///
/// The kernel sends it when the *thread* that spawned the child ends: spawn from a
/// runtime's worker thread (an async task), never from a blocking-pool thread, which
/// exits when idle. A no-op elsewhere.
pub fn die_with_parent(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        // SAFETY: the closure runs in the forked child before exec, where only
        // async-signal-safe calls are allowed: prctl(2) and getppid(2) are, and it touches
        // no memory but a copied integer.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                // The app died between fork and prctl: no signal will come.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

fn kill_group(pid: u32, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return };
    if pid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
    unsafe {
        libc::kill(-pid, signal);
    }
}

fn kill_process(pid: u32, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return };
    if pid <= 1 {
        return;
    }
    // SAFETY: kill(2) on one process id; no memory is involved.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// The live members of group `pgid` that started at or after `since` (clock ticks).
fn members_since(pgid: u32, since: u64) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else { return false };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let group = fields.get(2).and_then(|g| g.parse::<u32>().ok());
            let started = fields.get(22 - 3).and_then(|t| t.parse::<u64>().ok());
            fields.first() != Some(&"Z") && group == Some(pgid) && started.is_some_and(|t| t >= since)
        })
        .collect()
}

/// Whether a process of the group is still running. Killed processes linger as zombies
/// until their (adoptive) parent reaps them, and a signal to the group still "reaches"
/// them, so this reads `/proc` instead.
pub fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { return false };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
        let Some(rest) = stat.rfind(')').map(|at| &stat[at + 1..]) else { return false };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Fields after the name: state (3), ppid (4), pgrp (5).
        fields.first() != Some(&"Z") && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
    })
}

/// A live process's start time, or `None` when it is gone (or a zombie).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after it
    // start after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); start time is field 22.
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// Whether `done` holds within five seconds. It polls: what it waits for is another
    /// process's exit, which sends this test no event.
    fn within_five_seconds(done: impl Fn() -> bool) -> bool {
        for _ in 0..200 {
            if done() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        false
    }

    fn spawn_group() -> std::process::Child {
        // A shell that starts a child of its own: both must go.
        std::process::Command::new("sh").args(["-c", "sleep 300 & sleep 300"]).process_group(0).spawn().unwrap()
    }

    #[test]
    fn orphans_from_a_crashed_run_are_killed_with_their_children() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-processes.json");
        let mut child = spawn_group();
        let pid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(100));
        {
            let crashed = ProcessRegistry::new(&path);
            crashed.add(pid, "everything");
            // The app dies here without stopping anything.
        }
        // A pid recorded with another start time (reused since) is left alone.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("everything"));
        let next = ProcessRegistry::new(&path);
        assert_eq!(next.reap_orphans(), 1);
        assert!(child.wait().unwrap().code().is_none(), "killed by a signal");
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!group_alive(pid), "the server's children are gone too");
        assert_eq!(ProcessRegistry::new(&path).reap_orphans(), 0, "the file was emptied");
    }

    #[test]
    fn audit_16_a_child_started_to_die_with_its_parent_ends_when_the_spawning_thread_does() {
        // The spawning thread stands in for the app: when it ends, the child must too.
        let pid = std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let mut command = tokio::process::Command::new("sleep");
                command.arg("300");
                die_with_parent(&mut command);
                let child = command.spawn().unwrap();
                let pid = child.id().unwrap();
                // Not killed on drop, not waited for: only the parent's death ends it.
                std::mem::forget(child);
                pid
            })
        })
        .join()
        .unwrap();
        let gone = within_five_seconds(|| start_time(pid).is_none());
        if !gone {
            kill_group(pid, libc::SIGKILL);
        }
        assert!(gone, "the child outlived the thread that started it");
    }

    #[test]
    fn audit_16_a_group_whose_leader_died_with_the_app_is_still_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-processes.json");
        let mut child = spawn_group();
        let pid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(100));
        ProcessRegistry::new(&path).add(pid, "Claude Code, agent session s1");
        // The leader died with the app (its parent-death signal); its child runs on.
        kill_process(pid, libc::SIGKILL);
        child.wait().unwrap();
        assert!(group_alive(pid), "the leader's child outlived it");
        assert_eq!(ProcessRegistry::new(&path).reap_orphans(), 1);
        let gone = within_five_seconds(|| !group_alive(pid));
        if !gone {
            kill_group(pid, libc::SIGKILL);
        }
        assert!(gone, "the next start stopped what the dead leader had started");
    }

    #[test]
    fn a_reused_pid_is_not_killed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-processes.json");
        let mut child = spawn_group();
        let pid = child.id();
        std::fs::write(&path, format!(r#"{{"{pid}": {{"start_time": 1, "server": "old"}}}}"#)).unwrap();
        assert_eq!(ProcessRegistry::new(&path).reap_orphans(), 0);
        assert!(child.try_wait().unwrap().is_none(), "still running");
        kill_group(pid, libc::SIGKILL);
        child.wait().unwrap();
    }
}
