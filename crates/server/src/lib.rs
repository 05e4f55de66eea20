//! `colloquy serve`: the engine's operations over HTTP, for a browser UI and for tests.
//!
//! - `POST /api/<operation>` runs a plain operation (JSON in, JSON out).
//! - `POST /api/stream_open` and `POST /api/stream_attach` answer with server-sent events.
//! - Everything else is the built UI (`--ui-dir`), with `index.html` for unknown paths.
//!
//! Every `/api` route requires `Authorization: Bearer <token>`. The server binds
//! 127.0.0.1 unless told otherwise, and then answers only to loopback `Host` names.
//! Every answer carries [`CONTENT_SECURITY_POLICY`]. See `docs/api.md` for the wire
//! contract.

mod assets;
mod chat;
mod guard;
mod on_runtime;
mod routes;
mod sse;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use axum::Router;
use engine::{Engine, EngineConfig};
use tokio_util::sync::CancellationToken;

pub use guard::{AllowedHosts, CONTENT_SECURITY_POLICY};
pub use on_runtime::OnRuntime;
pub use routes::{MAX_REQUEST_BYTES, router};

/// The shortest token `--token` accepts: shorter ones can be guessed.
pub const MIN_TOKEN_CHARS: usize = 16;

#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to bind. Anything but loopback exposes your conversations to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port to bind; 0 picks a free one.
    #[arg(long, default_value_t = 8787)]
    pub port: u16,
    /// Where the database and keys live (default: the desktop app's data folder).
    #[arg(long, env = "COLLOQUY_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// The built UI to serve.
    #[arg(long, default_value = "ui/dist")]
    pub ui_dir: PathBuf,
    /// Bearer token clients must send, at least 16 characters (default: a new random
    /// one each start).
    #[arg(long, env = "COLLOQUY_TOKEN", value_parser = parse_token)]
    pub token: Option<String>,
}

/// `--token`: empty means "make one up"; anything shorter than [`MIN_TOKEN_CHARS`] is
/// refused rather than silently weakening the server.
fn parse_token(value: &str) -> Result<String, String> {
    let chars = value.chars().count();
    if chars > 0 && chars < MIN_TOKEN_CHARS {
        return Err(format!(
            "the token has {chars} characters; use at least {MIN_TOKEN_CHARS} (or leave it out for a random one)"
        ));
    }
    Ok(value.to_owned())
}

/// Shared by every request.
#[derive(Clone)]
pub struct AppState {
    pub engine: Engine,
    pub token: String,
    /// The `Host` names answered (see [`AllowedHosts::for_bind_address`]).
    pub hosts: AllowedHosts,
    /// Cancelled at shutdown so open event streams end and the server can stop.
    pub shutdown: CancellationToken,
}

/// Runs the server until Ctrl-C or SIGTERM, then stops live replies cleanly.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let data_dir = args.data_dir.clone().unwrap_or_else(engine::default_data_dir);
    let engine = Engine::open(EngineConfig::new(data_dir.clone(), "server").with_env_overrides())
        .await
        .map_err(|e| anyhow::anyhow!(e.message))
        .context("opening the engine")?;
    let token = args.token.clone().filter(|t| !t.is_empty()).unwrap_or_else(random_token);
    if !args.ui_dir.join("index.html").exists() {
        tracing::warn!(ui_dir = %args.ui_dir.display(), "no built UI here; only the API is served (build it with `npm run build` in ui/)");
    }
    let shutdown = CancellationToken::new();
    if !args.host.is_loopback() {
        tracing::warn!(
            host = %args.host,
            "binding a non-loopback address: anyone who can reach it and has the token can read and write your \
             conversations; the HTTP traffic (token included) is not encrypted"
        );
    }
    let hosts = AllowedHosts::for_bind_address(args.host);
    let state = AppState { engine: engine.clone(), token: token.clone(), hosts, shutdown: shutdown.clone() };
    // Bound here, registered with the stream thread's I/O below (see `on_runtime`).
    let listener = std::net::TcpListener::bind(SocketAddr::new(args.host, args.port))
        .with_context(|| format!("binding {}:{}", args.host, args.port))?;
    listener.set_nonblocking(true).context("setting the listening socket non-blocking")?;
    let addr = listener.local_addr()?;
    println!("Colloquy is serving on http://{addr}/#token={token}");
    println!("token: {token}");
    println!("data: {}", data_dir.display());
    use std::io::Write;
    let _ = std::io::stdout().flush();

    // Connections on the stream thread, handlers on this runtime (`on_runtime`).
    let handlers = tokio::runtime::Handle::current();
    let connections = engine.stream_runtime().unwrap_or_else(|| handlers.clone());
    let app = Router::new().fallback_service(OnRuntime::new(router(state, &args.ui_dir), handlers.clone()));
    let signal = {
        let shutdown = shutdown.clone();
        handlers.spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutting down");
            shutdown.cancel();
        })
    };
    let stop = shutdown.clone();
    let server = connections.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, app).with_graceful_shutdown(async move { stop.cancelled().await }).await
    });
    let served = server.await;
    signal.abort();
    served.context("the server's task ended abnormally")??;
    engine.shutdown().await;
    Ok(())
}

fn random_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
