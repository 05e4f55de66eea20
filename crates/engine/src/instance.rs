//! One process per data folder, whatever its mode.
//!
//! The process that opens a data folder's database first takes an exclusive lock on
//! `colloquy.lock` in it and writes its pid and mode there. Another process (a second
//! desktop launch, a `colloquy serve` on the desktop app's folder) cannot take the lock
//! and learns from the file who holds it; it never opens the database, so it cannot
//! "recover" the first one's live replies or reap its MCP servers. The operating system
//! releases the lock when the holder exits, however it exits.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The file holding the lock, in the data folder.
pub const LOCK_FILE: &str = "colloquy.lock";

/// This process's hold on a data folder: kept as long as the engine runs.
#[derive(Debug)]
pub struct DataFolderLock {
    _file: File,
}

/// The process that holds a data folder, as it wrote itself into the lock file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// `None` when the file could not be read (it is being written right now).
    pub pid: Option<u32>,
    /// `desktop` or `server` (`None` as for `pid`).
    pub mode: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode.as_deref() {
            Some("desktop") => "the desktop app".to_owned(),
            Some("server") => "colloquy serve".to_owned(),
            Some(other) => format!("colloquy ({other})"),
            None => "another Colloquy process".to_owned(),
        };
        match self.pid {
            Some(pid) => write!(f, "{mode}, pid {pid}"),
            None => write!(f, "{mode}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("the data folder {} is in use by {holder}; quit it first, or use another data folder", dir.display())]
    Taken { dir: PathBuf, holder: Holder },
    #[error("cannot lock the data folder {}: {source}", dir.display())]
    Io { dir: PathBuf, source: std::io::Error },
}

/// Takes the data folder for this process (`mode`: `desktop` or `server`), creating the
/// folder if needed; fails with [`ClaimError::Taken`] naming the process that holds it.
pub fn claim(data_dir: &Path, mode: &str) -> Result<DataFolderLock, ClaimError> {
    let io = |source| ClaimError::Io { dir: data_dir.to_owned(), source };
    crate::data_folder::prepare(data_dir).map_err(io)?;
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(data_dir.join(LOCK_FILE)).map_err(io)?;
    // An older version created it `0644`; `mode` only applies to a new file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    match file.try_lock() {
        Ok(()) => {
            // Who holds it, for the next process that tries.
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{} {mode}", std::process::id()).map_err(io)?;
            Ok(DataFolderLock { _file: file })
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            Err(ClaimError::Taken { dir: data_dir.to_owned(), holder: parse_holder(&text) })
        }
        Err(std::fs::TryLockError::Error(err)) => Err(io(err)),
    }
}

fn parse_holder(text: &str) -> Holder {
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse().ok());
    let mode = pid.and(words.next()).map(str::to_owned);
    Holder { pid, mode }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_07_a_second_process_is_refused_and_told_who_holds_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let first = claim(dir.path(), "server").unwrap();
        let Err(ClaimError::Taken { holder, .. }) = claim(dir.path(), "desktop") else {
            panic!("a second claim must be refused")
        };
        assert_eq!(holder, Holder { pid: Some(std::process::id()), mode: Some("server".into()) });
        let err = claim(dir.path(), "server").unwrap_err().to_string();
        assert!(err.contains(&format!("colloquy serve, pid {}", std::process::id())), "{err}");

        drop(first);
        let again = claim(dir.path(), "desktop").unwrap();
        drop(again);
    }
}
