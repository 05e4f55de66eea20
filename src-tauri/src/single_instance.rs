//! A second desktop launch brings the running window back.
//!
//! The data folder's lock (`engine::instance`, taken by every mode before the database
//! is opened) decides which process owns the folder. The desktop owner also listens on
//! `colloquy.sock`; a second desktop launch, refused the lock by a desktop owner, asks it
//! over that socket to open a window and exits. So launching Colloquy while it runs in
//! the background (a reply still streaming after its window closed) brings the window
//! back, attached to the live reply.

use std::io;
use std::path::Path;

const OPEN: &str = "open";
const SOCKET: &str = "colloquy.sock";

/// Asks the desktop process that owns `data_dir` to show its window.
#[cfg(unix)]
pub fn ask_to_open(data_dir: &Path) -> io::Result<()> {
    use std::io::Write;
    let mut stream = std::os::unix::net::UnixStream::connect(data_dir.join(SOCKET))?;
    stream.write_all(format!("{OPEN}\n").as_bytes())
}

#[cfg(not(unix))]
pub fn ask_to_open(_data_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Calls `open` whenever another launch asks for a window. Only the process holding the
/// data folder's lock calls this (a socket file left here is from a process that died).
#[cfg(unix)]
pub fn listen(data_dir: &Path, open: impl Fn() + Send + 'static) {
    let path = data_dir.join(SOCKET);
    let _ = std::fs::remove_file(&path);
    let listener = match std::os::unix::net::UnixListener::bind(&path) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::warn!(error = %err, path = %path.display(), "cannot listen for a second launch; it will not reopen this window");
            return;
        }
    };
    std::thread::spawn(move || {
        use std::io::BufRead;
        for connection in listener.incoming().flatten() {
            let mut line = String::new();
            if std::io::BufReader::new(connection).read_line(&mut line).is_ok() && line.trim() == OPEN {
                open();
            }
        }
    });
}

#[cfg(not(unix))]
pub fn listen(_data_dir: &Path, open: impl Fn() + Send + 'static) {
    let _ = open;
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_second_launch_asks_the_first_to_open_a_window() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = engine::instance::claim(dir.path(), "desktop").unwrap();
        let (tx, rx) = mpsc::channel();
        listen(dir.path(), move || {
            let _ = tx.send(());
        });
        let Err(engine::instance::ClaimError::Taken { holder, .. }) = engine::instance::claim(dir.path(), "desktop")
        else {
            panic!("the second claim must be refused")
        };
        assert_eq!(holder.mode.as_deref(), Some("desktop"));
        ask_to_open(dir.path()).unwrap();
        rx.recv_timeout(Duration::from_secs(5)).expect("the first instance was asked to open a window");
    }
}
