//! One TLS setup for the engine's HTTP clients.
//!
//! With native-tls, every reqwest client builds its own OpenSSL context and parses the
//! system's whole CA bundle into it (about 150 certificates, tens of milliseconds each
//! time on a quiet machine, 230 ms on a loaded 2-core one). The engine made three such
//! clients (plain, provider, MCP) on the path to its first answer, about 0.7 s of a
//! desktop cold start (docs/benchmarks.md, "Desktop"). The context is built once here and
//! shared (a clone of the connector shares it), and [`warm`] lets a binary start building
//! it on a thread of its own while the window is being made.

use std::sync::OnceLock;

static CONNECTOR: OnceLock<Result<native_tls::TlsConnector, String>> = OnceLock::new();

/// Starts building the shared TLS setup on a thread of its own; the engine's start then
/// finds it ready (or waits for the rest). Call it early in a binary's start.
pub fn warm() {
    let started = std::thread::Builder::new().name("tls-setup".into()).spawn(|| {
        let _ = connector();
    });
    if let Err(err) = started {
        // The engine builds it when it needs it.
        tracing::debug!(error = %err, "could not start the TLS setup early");
    }
}

/// The shared connector; built by the first caller, others wait for it.
fn connector() -> Result<native_tls::TlsConnector, String> {
    CONNECTOR.get_or_init(build).clone()
}

/// What reqwest builds for a client with native-tls and HTTP/1 (the only version we
/// enable): the system's roots and ALPN `http/1.1`.
fn build() -> Result<native_tls::TlsConnector, String> {
    native_tls::TlsConnector::builder()
        .request_alpns(&["http/1.1"])
        .build()
        .map_err(|e| format!("cannot set up TLS: {e}"))
}

/// The shared TLS setup, for `reqwest::ClientBuilder::tls_backend_preconfigured`. Waits
/// (off the async runtime's workers) if it is still being built.
pub(crate) async fn shared() -> Result<native_tls::TlsConnector, String> {
    tokio::task::spawn_blocking(connector).await.map_err(|e| format!("cannot set up TLS: {e}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn clients_share_one_setup_that_reqwest_accepts() {
        warm();
        let client = |tls| reqwest::Client::builder().tls_backend_preconfigured(tls).build();
        let first = client(shared().await.unwrap());
        let second = client(shared().await.unwrap());
        // A connector of another native-tls version than reqwest's would fail here
        // ("unknown TLS backend"), not at the first HTTPS call.
        assert!(first.is_ok() && second.is_ok(), "{:?} {:?}", first.err(), second.err());
    }
}
