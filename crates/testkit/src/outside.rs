//! Waits on other processes a test starts (MCP fixtures, HTTP servers). Such a process
//! sends the test no event it could await, so these helpers poll, generously (real
//! processes on a loaded machine are slow); everything the app itself does is awaited.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// A loopback port nothing listens on right now.
pub async fn free_port() -> std::io::Result<u16> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    Ok(listener.local_addr()?.port())
}

/// Resolves once something accepts connections on the loopback `port`; panics after 30 s.
pub async fn until_listening(port: u16) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing ever listened on port {port}");
}

/// The messages an MCP recorder fixture has logged so far (one JSON object a line).
pub fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .collect()
}

/// The first message the recorder has logged that satisfies `wanted`; panics after 30 s.
pub async fn received_until(log: &Path, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..300 {
        if let Some(entry) = received(log).into_iter().find(|e| wanted(e)) {
            return entry;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server never received {what}; it got {:#?}", received(log));
}
