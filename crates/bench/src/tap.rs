//! The tap: a transparent TCP relay between the pipeline and the testkit that notes when
//! each marked chunk's bytes are handed to the pipeline's socket.
//!
//! It runs as its own process (`colloquy-bench-streams tap UPSTREAM`) so its CPU time and
//! memory never count as the pipeline's. Chunk texts carry markers (`m0000000042 `); the
//! tap stamps every read from upstream with `CLOCK_MONOTONIC` just before writing it on,
//! and the listeners stamp each text delta on arrival with the same clock, so their
//! difference is the latency from "provider byte on our socket" to "listener has it".

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::children::ChildProcess;
use crate::machine::monotonic_ns;

const NEEDLE: &[u8] = br#""content":"m"#;
const DIGITS: usize = 10;

/// The text of chunk `id`: a marker the tap and the listeners both recognize.
pub fn marker(id: u64) -> String {
    format!("m{id:010} ")
}

/// The marker id in a text delta, if it is one.
pub fn parse_marker(delta: &str) -> Option<u64> {
    let digits = delta.strip_prefix('m')?.get(..DIGITS)?;
    digits.parse().ok()
}

/// Marker ids in a byte stream that arrives in arbitrary pieces.
#[derive(Default)]
struct MarkerScanner {
    /// Unscanned tail of the previous piece (a marker cut in two).
    pending: Vec<u8>,
}

impl MarkerScanner {
    fn scan(&mut self, bytes: &[u8], mut found: impl FnMut(u64)) {
        self.pending.extend_from_slice(bytes);
        let data = &self.pending;
        let mut pos = 0;
        let keep_from = loop {
            match data[pos..].windows(NEEDLE.len()).position(|w| w == NEEDLE) {
                Some(offset) => {
                    let digits = pos + offset + NEEDLE.len();
                    if data.len() < digits + DIGITS {
                        break pos + offset;
                    }
                    if let Some(id) =
                        std::str::from_utf8(&data[digits..digits + DIGITS]).ok().and_then(|d| d.parse().ok())
                    {
                        found(id);
                    }
                    pos = digits + DIGITS;
                }
                None => break pos.max(data.len().saturating_sub(NEEDLE.len() - 1)),
            }
        };
        self.pending.drain(..keep_from);
    }
}

type Records = Arc<Mutex<Vec<(u64, u64)>>>;

/// The tap process: relays `127.0.0.1:<free port>` to `upstream` until stdin closes.
/// `dump PATH` on stdin writes the stamps so far (`id ns` lines) to PATH and forgets them.
pub fn run(upstream: String) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("tap listening on {}", listener.local_addr()?);
        let records: Records = Arc::default();
        let accepting = records.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let records = accepting.clone();
                tokio::spawn(async move {
                    if let Err(err) = relay(client, &upstream, records).await {
                        eprintln!("tap: {err}");
                    }
                });
            }
        });
        // Commands arrive on stdin, read by a plain thread (tokio's stdin needs a feature
        // the rest of the workspace does not enable).
        let (commands_tx, mut commands) = tokio::sync::mpsc::unbounded_channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::stdin().lines().map_while(Result::ok) {
                if commands_tx.send(line).is_err() {
                    break;
                }
            }
        });
        while let Some(command) = commands.recv().await {
            if let Some(path) = command.strip_prefix("dump ") {
                let taken = std::mem::take(&mut *records.lock().unwrap_or_else(PoisonError::into_inner));
                let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
                for (id, ns) in &taken {
                    writeln!(out, "{id} {ns}")?;
                }
                out.flush()?;
                println!("dumped {}", taken.len());
            }
        }
        Ok(())
    })
}

async fn relay(client: TcpStream, upstream: &str, records: Records) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    // No Nagle delay on either side: the stamp is taken right before the write.
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let requests = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
    let mut buf = vec![0u8; 16 * 1024];
    let mut scanner = MarkerScanner::default();
    let mut found = Vec::new();
    loop {
        let n = server_read.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let stamp = monotonic_ns();
        scanner.scan(&buf[..n], |id| found.push((id, stamp)));
        client_write.write_all(&buf[..n]).await?;
        if !found.is_empty() {
            records.lock().unwrap_or_else(PoisonError::into_inner).append(&mut found);
        }
    }
    client_write.shutdown().await?;
    requests.abort();
    Ok(())
}

/// The tap process, seen from the benchmark.
pub struct Tap {
    process: ChildProcess,
    /// `127.0.0.1:PORT`
    addr: String,
}

impl Tap {
    pub async fn start(upstream: &str, log_dir: &Path) -> Result<Self> {
        let exe = std::env::current_exe().context("where is this benchmark binary?")?;
        let mut command = tokio::process::Command::new(exe);
        command.args(["tap", upstream]);
        let (process, addr) = ChildProcess::start("tap", command, "tap listening on", &log_dir.join("tap.log")).await?;
        Ok(Self { process, addr })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Marker id → when its bytes were handed to the pipeline (`CLOCK_MONOTONIC` ns), for
    /// everything relayed since the last call.
    pub async fn take_stamps(&mut self, dir: &Path) -> Result<HashMap<u64, u64>> {
        let path = dir.join("tap-stamps.txt");
        self.process.send_line(&format!("dump {}", path.display())).await?;
        self.process.line_starting("dumped", Duration::from_secs(60)).await?;
        let text = std::fs::read_to_string(&path)?;
        Ok(text
            .lines()
            .filter_map(|line| {
                let (id, ns) = line.split_once(' ')?;
                Some((id.parse().ok()?, ns.parse().ok()?))
            })
            .collect())
    }
}
