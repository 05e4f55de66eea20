//! One app process per data folder.
//!
//! The first process takes an exclusive lock on `colloquy.lock` and listens on
//! `colloquy.sock`. A second launch cannot take the lock; it asks the first to open a
//! window and exits. So two engines never share one database, and launching Colloquy
//! while it runs in the background (a reply still streaming after its window closed)
//! brings the window back, attached to the live reply.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

pub enum Claim {
    /// This process owns the data folder.
    Primary(Instance),
    /// Another process does; it has been asked to open a window.
    Secondary,
}

pub struct Instance {
    _lock: File,
    #[cfg(unix)]
    listener: Option<std::os::unix::net::UnixListener>,
}

const OPEN: &str = "open";

pub fn claim(data_dir: &Path) -> io::Result<Claim> {
    std::fs::create_dir_all(data_dir)?;
    let lock = OpenOptions::new().create(true).truncate(false).write(true).open(data_dir.join("colloquy.lock"))?;
    match lock.try_lock() {
        Ok(()) => Ok(Claim::Primary(Instance::listen(lock, data_dir))),
        Err(std::fs::TryLockError::WouldBlock) => {
            ask_to_open(data_dir)?;
            Ok(Claim::Secondary)
        }
        Err(std::fs::TryLockError::Error(err)) => Err(err),
    }
}

#[cfg(unix)]
fn ask_to_open(data_dir: &Path) -> io::Result<()> {
    use std::io::Write;
    let mut stream = std::os::unix::net::UnixStream::connect(data_dir.join("colloquy.sock"))?;
    stream.write_all(format!("{OPEN}\n").as_bytes())
}

#[cfg(not(unix))]
fn ask_to_open(_data_dir: &Path) -> io::Result<()> {
    Ok(())
}

impl Instance {
    #[cfg(unix)]
    fn listen(lock: File, data_dir: &Path) -> Self {
        let path = data_dir.join("colloquy.sock");
        // We hold the lock, so a socket file left here is from a process that died.
        let _ = std::fs::remove_file(&path);
        let listener = match std::os::unix::net::UnixListener::bind(&path) {
            Ok(listener) => Some(listener),
            Err(err) => {
                tracing::warn!(error = %err, path = %path.display(), "cannot listen for a second launch; it will not reopen this window");
                None
            }
        };
        Self { _lock: lock, listener }
    }

    #[cfg(not(unix))]
    fn listen(lock: File, _data_dir: &Path) -> Self {
        Self { _lock: lock }
    }

    /// Calls `open` whenever another launch asks for a window. The lock is held for the
    /// life of the process.
    pub fn serve(self, open: impl Fn() + Send + 'static) {
        #[cfg(unix)]
        {
            let Instance { _lock: lock, listener } = self;
            let Some(listener) = listener else {
                std::mem::forget(lock);
                return;
            };
            std::thread::spawn(move || {
                use std::io::BufRead;
                let _lock = lock;
                for connection in listener.incoming().flatten() {
                    let mut line = String::new();
                    if std::io::BufReader::new(connection).read_line(&mut line).is_ok() && line.trim() == OPEN {
                        open();
                    }
                }
            });
        }
        #[cfg(not(unix))]
        {
            let _ = open;
            std::mem::forget(self);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_second_launch_asks_the_first_to_open_a_window() {
        let dir = tempfile::tempdir().unwrap();
        let Claim::Primary(first) = claim(dir.path()).unwrap() else { panic!("the first claim must win") };
        let (tx, rx) = mpsc::channel();
        first.serve(move || {
            let _ = tx.send(());
        });
        assert!(matches!(claim(dir.path()).unwrap(), Claim::Secondary));
        rx.recv_timeout(Duration::from_secs(5)).expect("the first instance was asked to open a window");
    }
}
