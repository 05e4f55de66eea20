//! 5. Output lost when the server is killed with SIGKILL mid-reply.
//!
//! `colloquy serve` streams a steady reply from the testkit to an HTTP SSE client; we
//! SIGKILL the server at a different moment each repetition, read what the client got
//! (including bytes already on their way when the process died), restart the server on
//! the same data folder, and compare the stored reply with what the client had: the
//! stored text must be a prefix, and the difference, at the known token rate, is how
//! much output a crash costs.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use serde_json::{Value, json};
use testkit::Script;

use crate::Setup;
use crate::children::{ChildProcess, Testkit};
use crate::report::{Table, Verdict, millis};
use crate::stats::median;

const TOKEN: &str = "bench-token-0123456789";
const DELAY: Duration = Duration::from_millis(20);
const CHUNK_BYTES: usize = 7;

/// `colloquy serve` on a free port.
struct Server {
    process: ChildProcess,
    /// `http://127.0.0.1:PORT`
    url: String,
    http: reqwest::Client,
}

impl Server {
    async fn start(setup: &Setup, data_dir: &std::path::Path, generation: usize) -> Result<Self> {
        let mut command = tokio::process::Command::new(&setup.colloquy);
        command
            .args(["serve", "--host", "127.0.0.1", "--port", "0", "--token", TOKEN, "--data-dir"])
            .arg(data_dir)
            .arg("--ui-dir")
            .arg(setup.work.path().join("no-ui"));
        let log = setup.work.path().join(format!("serve-{generation}.log"));
        let (process, address) = ChildProcess::start("colloquy serve", command, "Colloquy is serving on", &log).await?;
        let url = address.split("/#").next().unwrap_or(&address).trim_end_matches('/').to_owned();
        Ok(Self { process, url, http: reqwest::Client::new() })
    }

    fn post(&self, operation: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http.post(format!("{}/api/{operation}", self.url)).bearer_auth(TOKEN).json(body)
    }

    async fn call(&self, operation: &str, body: Value) -> Result<Value> {
        let response = self.post(operation, &body).send().await?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("{operation} failed with {status}: {value}");
        }
        Ok(value)
    }
}

struct Kill {
    received: usize,
    stored: usize,
    status: String,
    prefix: bool,
}

pub async fn run(setup: &Setup, table: &mut Table) -> Result<()> {
    let testkit = Testkit::start(&setup.testkit, DELAY, setup.work.path()).await?;
    let data_dir = setup.work.path().join("serve-data");
    let mut server = Server::start(setup, &data_dir, 0).await?;
    server
        .call(
            "provider_create",
            json!({ "name": "testkit", "baseUrl": testkit.base_url, "models": ["scripted"], "defaultModel": "scripted" }),
        )
        .await?;

    let mut kills = Vec::new();
    for rep in 0..(setup.reps * 2).max(4) {
        let created = server.call("topic_create", json!({})).await?;
        let topic = created["id"].as_str().context("topic_create returned no id")?.to_owned();
        testkit.queue(&[Script::text((0..3_000).map(|i| format!("k{i:05} "))).with_token_delay(DELAY)]).await?;
        let response = server.post("stream_open", &json!({ "topicId": topic, "text": "go" })).send().await?;
        if !response.status().is_success() {
            bail!("stream_open failed with {}", response.status());
        }
        let received = Arc::new(Mutex::new(String::new()));
        let reader = tokio::spawn(read_text(response, received.clone()));
        // Kill at a different phase of the 500 ms checkpoint interval each time.
        tokio::time::sleep(Duration::from_millis(2_000 + 137 * rep as u64)).await;
        server.process.kill().await?;
        // Bytes the server wrote before it died may still be on their way: count them.
        let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        let received = received.lock().unwrap_or_else(PoisonError::into_inner).clone();

        server = Server::start(setup, &data_dir, rep + 1).await?;
        let messages = server.call("messages_list", json!({ "topicId": topic })).await?;
        let reply = messages
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["message"]["role"] == "assistant"))
            .context("the reply row is missing after the restart")?;
        let stored: String = reply["message"]["parts"]
            .as_array()
            .map(|parts| parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str()).collect())
            .unwrap_or_default();
        let status =
            format!("{}/{}", reply["status"].as_str().unwrap_or("?"), reply["statusReason"].as_str().unwrap_or("-"));
        kills.push(Kill {
            received: received.len(),
            stored: stored.len(),
            prefix: received.starts_with(&stored),
            status,
        });
    }
    server.process.kill().await?;

    let lost: Vec<f64> = kills.iter().map(|k| k.received.saturating_sub(k.stored) as f64).collect();
    let as_ms = |bytes: f64| bytes / CHUNK_BYTES as f64 * DELAY.as_secs_f64() * 1e3;
    let worst = lost.iter().copied().fold(0.0, f64::max);
    let all_prefix = kills.iter().all(|k| k.prefix);
    let statuses: Vec<&str> = kills.iter().map(|k| k.status.as_str()).collect();
    let mut statuses_seen = statuses.clone();
    statuses_seen.dedup();
    table.push(
        "5",
        "bytes lost on SIGKILL (stored reply vs client)",
        format!(
            "{} kills 2.0–{:.1} s into a {} B / {} ms stream; client had {}–{} B",
            kills.len(),
            (2_000 + 137 * (kills.len() - 1)) as f64 / 1e3,
            CHUNK_BYTES,
            DELAY.as_millis(),
            kills.iter().map(|k| k.received).min().unwrap_or(0),
            kills.iter().map(|k| k.received).max().unwrap_or(0)
        ),
        format!(
            "{:.0} B = {} of output (max {:.0} B = {}); stored is a prefix: {}; status {}",
            median(&lost),
            millis(as_ms(median(&lost))),
            worst,
            millis(as_ms(worst)),
            if all_prefix { "yes" } else { "NO" },
            statuses_seen.join(", ")
        ),
        "target ≤ 500 ms of output",
        Verdict::of(as_ms(worst) <= 500.0 && all_prefix),
    );
    Ok(())
}

/// Reads an SSE response and appends every text delta to `text`, until it ends or fails.
async fn read_text(response: reqwest::Response, text: Arc<Mutex<String>>) {
    let mut body = response.bytes_stream();
    let mut line = Vec::new();
    while let Some(Ok(bytes)) = body.next().await {
        for &byte in bytes.iter() {
            if byte != b'\n' {
                line.push(byte);
                continue;
            }
            if let Some(data) = line.strip_prefix(b"data: ")
                && let Ok(message) = serde_json::from_slice::<Value>(data)
                && message["kind"] == "chunk"
                && message["chunk"]["type"] == "text-delta"
                && let Some(delta) = message["chunk"]["delta"].as_str()
            {
                text.lock().unwrap_or_else(PoisonError::into_inner).push_str(delta);
            }
            line.clear();
        }
    }
}
