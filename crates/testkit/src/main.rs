//! `colloquy-testkit`: runs the mock LLM server until SIGINT/SIGTERM.

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use colloquy_testkit::{MockConfig, MockServer};

/// Scripted mock LLM server speaking OpenAI Chat Completions, OpenAI Responses, Anthropic
/// Messages and Gemini.
#[derive(Debug, Parser)]
#[command(name = "colloquy-testkit", version)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Delay before each streamed chunk, in milliseconds.
    #[arg(long, default_value_t = 20)]
    token_delay_ms: u64,
    /// Require KEY on API routes, sent each format's way (`Authorization: Bearer`,
    /// `x-api-key`, `x-goog-api-key`).
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
    /// The bearer token the `/_testkit/*` control routes require. Without it a random one
    /// is made and printed (`testkit control token: TOKEN`) before the listening line.
    #[arg(long, value_name = "TOKEN", env = "COLLOQUY_TESTKIT_TOKEN")]
    control_token: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();

    // Listen for signals before announcing: a script may send SIGTERM right after the line.
    let stop = StopSignal::listen()?;
    let given_token = args.control_token.filter(|token| !token.is_empty());
    let made_token = given_token.is_none();
    let control_token = given_token.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    let config = MockConfig {
        port: args.port,
        token_delay: Duration::from_millis(args.token_delay_ms),
        api_key: args.api_key,
        control_token: Some(control_token.clone()),
        ..MockConfig::default()
    };
    let server =
        MockServer::start(config).await.with_context(|| format!("could not listen on 127.0.0.1:{}", args.port))?;
    {
        // Scripts wait for this exact line, so it must leave the process at once.
        let mut stdout = std::io::stdout().lock();
        if made_token {
            writeln!(stdout, "testkit control token: {control_token}")?;
        }
        writeln!(stdout, "testkit listening on {}", server.base_url())?;
        stdout.flush()?;
    }
    stop.received().await;
    server.shutdown().await;
    Ok(())
}

/// SIGINT or SIGTERM (Ctrl-C elsewhere), registered up front so none is missed.
#[cfg(unix)]
struct StopSignal {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignal {
    fn listen() -> anyhow::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).context("could not listen for SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("could not listen for SIGTERM")?,
        })
    }

    async fn received(mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

#[cfg(not(unix))]
struct StopSignal;

#[cfg(not(unix))]
impl StopSignal {
    fn listen() -> anyhow::Result<Self> {
        Ok(Self)
    }

    async fn received(self) {
        if tokio::signal::ctrl_c().await.is_err() {
            // Without a Ctrl-C handler there is no way to be stopped politely: run until killed.
            std::future::pending::<()>().await;
        }
    }
}
