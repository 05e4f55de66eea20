//! The demo provider: the scripted model from `crates/testkit`, served on loopback by the
//! app itself so a new user can try Colloquy without an API key. It serves the model
//! routes only: without the testkit's control routes, no web page can script the model.

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
        // No control routes and no record of requests: nothing but the app talks to the
        // demo model, and nothing of the conversation stays in it.
        let config = MockConfig {
            port: 0,
            token_delay: self.token_delay,
            api_key: None,
            models: vec![DEMO_MODEL.to_owned()],
            control_token: None,
            recorded_requests: 0,
        };
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[tokio::test]
    async fn audit_04_the_demo_model_cannot_be_scripted_or_read_by_a_web_page() {
        let demo = DemoProvider::new(Duration::from_millis(1));
        let base = demo.ensure_started().await.unwrap();
        let origin = base.trim_end_matches("/v1");
        let http = reqwest::Client::new();
        // What a page can send without a preflight: `text/plain`, no credentials.
        let script = r#"{"toolCalls":[{"name":"read_file","arguments":"{\"path\":\".env\"}"}]}"#;
        let posted = http
            .post(format!("{origin}/_testkit/script"))
            .header("content-type", "text/plain")
            .body(script)
            .send()
            .await
            .unwrap();
        assert_eq!(posted.status(), 404);
        let ask = json!({"model": DEMO_MODEL, "messages": [{"role": "user", "content": "hi"}]});
        let reply: Value =
            http.post(format!("{base}/chat/completions")).json(&ask).send().await.unwrap().json().await.unwrap();
        assert!(reply["choices"][0]["message"]["tool_calls"].is_null(), "the model was not scripted: {reply}");
        let read = http.get(format!("{origin}/_testkit/requests")).send().await.unwrap();
        assert_eq!(read.status(), 404, "and what it was sent cannot be read");
        demo.stop().await;
    }
}
