//! How the engine is configured: where its data is, and the timings and programs the
//! environment may override.

use std::path::PathBuf;

use streams::StreamConfig;

/// Where the engine keeps its data and how it presents itself.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// `desktop` or `server`, reported to the UI.
    pub mode: String,
    pub streams: StreamConfig,
    /// Delay between tokens of the demo provider.
    pub demo_token_delay: std::time::Duration,
    /// How refused provider requests are retried (before the first byte only).
    pub retry: providers::RetryPolicy,
    /// Where the Claude Code CLI is, and what it runs with.
    pub claude: ::sessions::ClaudeCodeConfig,
    /// An agent session's connection closes after this long without a turn.
    pub agent_idle_timeout: std::time::Duration,
}

impl EngineConfig {
    pub fn new(data_dir: PathBuf, mode: &str) -> Self {
        Self {
            data_dir,
            mode: mode.to_owned(),
            streams: StreamConfig::default(),
            demo_token_delay: std::time::Duration::from_millis(25),
            retry: providers::RetryPolicy::default(),
            claude: ::sessions::ClaudeCodeConfig::default(),
            agent_idle_timeout: std::time::Duration::from_secs(300),
        }
    }

    /// Applies `COLLOQUY_GRACE_SECONDS` (how long a finished reply stays attachable),
    /// `COLLOQUY_IDLE_TIMEOUT_SECONDS` (the default of how long a silent reply may wait
    /// before it is stopped as stalled; a value chosen in Settings wins over it),
    /// `COLLOQUY_AGENT_IDLE_SECONDS` (how long an agent session's
    /// connection stays open between turns) and `COLLOQUY_CLAUDE_PATH` (the Claude Code
    /// CLI). A number that is not a whole number of seconds is reported and ignored.
    pub fn with_env_overrides(mut self) -> Self {
        if let Some(secs) = env_seconds("COLLOQUY_GRACE_SECONDS") {
            self.streams.grace_period = secs;
        }
        if let Some(secs) = env_seconds("COLLOQUY_IDLE_TIMEOUT_SECONDS") {
            self.streams.idle_timeout = secs;
        }
        if let Some(secs) = env_seconds("COLLOQUY_AGENT_IDLE_SECONDS") {
            self.agent_idle_timeout = secs;
        }
        if let Some(path) = std::env::var_os("COLLOQUY_CLAUDE_PATH").filter(|p| !p.is_empty()) {
            self.claude.program = PathBuf::from(path);
        }
        self
    }
}

fn env_seconds(name: &str) -> Option<std::time::Duration> {
    let value = std::env::var(name).ok()?;
    match value.trim().parse::<u64>() {
        Ok(secs) => Some(std::time::Duration::from_secs(secs)),
        Err(_) => {
            tracing::warn!(name, value, "not a whole number of seconds; using the default");
            None
        }
    }
}
