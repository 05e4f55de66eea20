//! [`McpHttp`]: the HTTP client MCP servers over streamable HTTP are reached with.
//!
//! Every request carries the server's configured headers (often `Authorization` or an API
//! key). reqwest drops only `Authorization` (and cookies) when a redirect leaves the host,
//! so a redirect to another origin would hand the other headers to whoever answers there.
//! This client follows a redirect only within the origin the request was sent to (or from
//! `http` to `https` on the same host); any other redirect fails the request with
//! [`CrossOriginRedirect`], which the server's status shows.
//!
//! The policy is the one `colloquy-providers`' `ProviderHttp` applies to model providers,
//! written again here (a few lines) rather than making the tools crate depend on the model
//! providers' crate for it.

use std::fmt;

use reqwest::redirect::{Action, Attempt, Policy};

/// How many redirects one request follows.
const MAX_REDIRECTS: usize = 10;

/// An HTTP client for MCP servers: it never follows a redirect to another origin.
/// Cheap to clone (the connection pool is shared).
#[derive(Clone)]
pub struct McpHttp(reqwest::Client);

impl McpHttp {
    /// A client with reqwest's defaults and the same-origin redirect policy.
    pub fn new() -> Result<Self, reqwest::Error> {
        Self::from_builder(reqwest::Client::builder())
    }

    /// `builder` (timeouts, user agent, …) with the same-origin redirect policy, which
    /// replaces any redirect policy the builder had.
    pub fn from_builder(builder: reqwest::ClientBuilder) -> Result<Self, reqwest::Error> {
        let limited = Policy::limited(MAX_REDIRECTS);
        builder.redirect(Policy::custom(move |attempt| same_origin(attempt, &limited))).build().map(Self)
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.0
    }
}

impl fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("McpHttp")
    }
}

fn same_origin(attempt: Attempt<'_>, limited: &Policy) -> Action {
    // `previous` starts with the URL the request was sent to.
    let Some(first) = attempt.previous().first() else { return limited.redirect(attempt) };
    let next = attempt.url();
    let upgrade = first.scheme() == "http" && next.scheme() == "https" && first.host() == next.host();
    if first.origin() == next.origin() || upgrade {
        return limited.redirect(attempt);
    }
    let refused = CrossOriginRedirect { from: origin(first), to: origin(next) };
    attempt.error(refused)
}

fn origin(url: &reqwest::Url) -> String {
    url.origin().ascii_serialization()
}

/// An MCP server redirected a request to another origin; it was not followed, so the
/// server's headers were not sent there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server redirected from {from} to {to}, another origin: not followed, so its headers were not sent there \
     (if {to} is the server's real address, configure that URL)"
)]
pub struct CrossOriginRedirect {
    /// The origin the request was sent to, e.g. `https://mcp.example.com`.
    pub from: String,
    /// Where the server redirected it.
    pub to: String,
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server on 127.0.0.1 that redirects `/old` to `/new` (same origin) and answers
    /// anything else with `fine`.
    async fn serve() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let response = if head.starts_with("GET /old ") {
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: /new\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                } else {
                    "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nfine"
                };
                let _ = socket.write_all(response.as_bytes()).await;
            }
        });
        base
    }

    #[tokio::test]
    async fn audit_06_mcp_http_follows_a_redirect_within_the_origin() {
        let base = serve().await;
        let http = McpHttp::new().unwrap();
        let answer = http.client().get(format!("{base}/old")).send().await.unwrap();
        assert_eq!(answer.url().path(), "/new");
        assert_eq!(answer.text().await.unwrap(), "fine");
    }
}
