//! The demo provider: the scripted model from `crates/testkit`, served on loopback by the
//! app itself so a new user can try Colloquy without an API key.

use std::time::Duration;

use protocol::ApiError;
use testkit::{MockConfig, MockServer};
use tokio::sync::Mutex;

pub(crate) const DEMO_NAME: &str = "Demo (local scripted model)";
pub(crate) const DEMO_MODEL: &str = "scripted";

pub(crate) struct DemoProvider {
    token_delay: Duration,
    server: Mutex<Option<MockServer>>,
}

impl DemoProvider {
    pub(crate) fn new(token_delay: Duration) -> Self {
        Self { token_delay, server: Mutex::new(None) }
    }

    /// Starts the local server if it is not running; returns its base URL.
    pub(crate) async fn ensure_started(&self) -> Result<String, ApiError> {
        let mut server = self.server.lock().await;
        if let Some(running) = server.as_ref() {
            return Ok(running.base_url());
        }
        let config =
            MockConfig { port: 0, token_delay: self.token_delay, api_key: None, models: vec![DEMO_MODEL.to_owned()] };
        let started = MockServer::start(config)
            .await
            .map_err(|e| ApiError::internal(format!("could not start the demo provider on 127.0.0.1: {e}")))?;
        let url = started.base_url();
        tracing::info!(%url, "demo provider listening");
        *server = Some(started);
        Ok(url)
    }

    pub(crate) async fn stop(&self) {
        if let Some(server) = self.server.lock().await.take() {
            server.shutdown().await;
        }
    }
}
