//! The other processes a run drives: the testkit server, the tap, `colloquy serve`.
//! Each announces itself with one stdout line; stderr goes to a log file in the run's
//! temporary folder so a failure can be diagnosed.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// A child process, killed when dropped.
pub struct ChildProcess {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl ChildProcess {
    /// Starts `command` and waits for its stdout line starting with `announce`; returns
    /// the process and the rest of that line.
    pub async fn start(name: &str, mut command: Command, announce: &str, stderr_log: &Path) -> Result<(Self, String)> {
        let log =
            std::fs::File::create(stderr_log).with_context(|| format!("could not create {}", stderr_log.display()))?;
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log).kill_on_drop(true);
        let mut child = command.spawn().with_context(|| format!("could not start {name}"))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut process =
            Self { name: name.to_owned(), stdin: child.stdin.take(), child, stdout: BufReader::new(stdout).lines() };
        let rest = process
            .line_starting(announce, Duration::from_secs(60))
            .await
            .with_context(|| format!("{name} did not start (its stderr is in {})", stderr_log.display()))?;
        Ok((process, rest))
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// The rest of the next stdout line that starts with `prefix` (other lines are skipped).
    pub async fn line_starting(&mut self, prefix: &str, timeout: Duration) -> Result<String> {
        let read = async {
            while let Some(line) = self.stdout.next_line().await? {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return Ok(rest.trim().to_owned());
                }
            }
            bail!("{} exited before printing `{prefix}`", self.name)
        };
        tokio::time::timeout(timeout, read).await.with_context(|| format!("{} said nothing in time", self.name))?
    }

    /// Writes one line to the child's stdin.
    pub async fn send_line(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().context("stdin is closed")?;
        stdin.write_all(format!("{line}\n").as_bytes()).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// SIGKILL, then reap.
    pub async fn kill(&mut self) -> Result<()> {
        self.child.start_kill().with_context(|| format!("could not kill {}", self.name))?;
        self.child.wait().await?;
        Ok(())
    }
}

/// `colloquy-testkit --token-delay-ms D` and the HTTP client to script it.
pub struct Testkit {
    pub process: ChildProcess,
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    /// The bearer token its `/_testkit/*` control routes want.
    pub control_token: String,
    http: reqwest::Client,
}

impl Testkit {
    pub async fn start(binary: &Path, token_delay: Duration, log_dir: &Path) -> Result<Self> {
        let control_token = uuid::Uuid::new_v4().simple().to_string();
        let mut command = Command::new(binary);
        command.args(["--port", "0", "--token-delay-ms", &token_delay.as_millis().to_string()]);
        command.args(["--control-token", &control_token]);
        let (process, base_url) =
            ChildProcess::start("colloquy-testkit", command, "testkit listening on", &log_dir.join("testkit.log"))
                .await?;
        Ok(Self { process, base_url, control_token, http: reqwest::Client::new() })
    }

    /// `127.0.0.1:PORT`
    pub fn addr(&self) -> &str {
        self.base_url.trim_start_matches("http://").trim_end_matches("/v1")
    }

    /// Queues replies; each chat request takes the next one.
    pub async fn queue(&self, scripts: &[testkit::Script]) -> Result<()> {
        let url = format!("http://{}/_testkit/script", self.addr());
        let response = self.http.post(url).bearer_auth(&self.control_token).json(scripts).send().await?;
        if !response.status().is_success() {
            bail!("the testkit refused the scripts: {}", response.status());
        }
        Ok(())
    }
}
