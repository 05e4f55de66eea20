//! `fetch_url`: an HTTP GET that returns text, cut at a size cap.

use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use protocol::tool::{ToolAnnotations, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError};

const DEFAULT_MAX_BYTES: usize = 200_000;
const MAX_BYTES: usize = 2_000_000;

pub struct FetchUrl(ToolDefinition);

impl FetchUrl {
    pub fn new() -> Self {
        Self(ToolDefinition {
            name: "fetch_url".into(),
            title: None,
            description: "Fetch a web page or file over HTTP(S) with GET and return its text (HTML is \
                          returned as is). At most `max_bytes` bytes are read (default 200000)."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string", "description": "An http:// or https:// URL"},
                    "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_BYTES}
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            annotations: ToolAnnotations { read_only: true, destructive: false, idempotent: true, open_world: true },
        })
    }
}

#[derive(Deserialize)]
struct FetchInput {
    url: String,
    max_bytes: Option<usize>,
}

#[async_trait]
impl Tool for FetchUrl {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: FetchInput = serde_json::from_value(input).map_err(|e| ToolError::InvalidInput(e.to_string()))?;
        let url = url::Url::parse(input.url.trim()).map_err(|e| ToolError::InvalidInput(format!("not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::InvalidInput(format!(
                "only http and https URLs can be fetched, not {}:",
                url.scheme()
            )));
        }
        let cap = input.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).min(MAX_BYTES);
        let response = ctx
            .http
            .get(url.clone())
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| ToolError::Failed(format!("could not fetch {url}: {e}")))?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        let mut truncated = false;
        while let Some(chunk) = stream.next().await {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let chunk = chunk.map_err(|e| ToolError::Failed(format!("reading {url} failed: {e}")))?;
            let room = cap - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        if body.iter().take(8192).any(|b| *b == 0) {
            return Err(ToolError::Failed(format!(
                "{url} returned binary content ({content_type}); only text can be read"
            )));
        }
        let mut text = format!("HTTP {} {}\n\n", status.as_u16(), content_type);
        text.push_str(&String::from_utf8_lossy(&body));
        if truncated {
            text.push_str(&format!("\n[cut at {cap} bytes]"));
        }
        let mut output = ToolOutput::text(text);
        output.is_error = !status.is_success();
        Ok(output)
    }

    /// A fetched page is bulky and rarely needed for long.
    fn context_rounds(&self) -> Option<u32> {
        Some(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fetches_text_with_a_cap_and_refuses_other_schemes() {
        let server = testkit::MockServer::start(testkit::MockConfig::default()).await.unwrap();
        let ctx = ToolContext::detached(None);
        let url = format!("{}/models", server.base_url());
        let out = FetchUrl::new().execute(json!({"url": url, "max_bytes": 20}), &ctx).await.unwrap();
        let text = out.text_content();
        assert!(text.starts_with("HTTP 200 application/json"), "{text}");
        assert!(text.ends_with("[cut at 20 bytes]"), "{text}");
        let err = FetchUrl::new().execute(json!({"url": "file:///etc/passwd"}), &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidInput(_)));
        server.shutdown().await;
    }
}
