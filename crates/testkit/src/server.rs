//! [`MockServer`]: the HTTP server, its shared state, its routes (one wire format each, on
//! the format's real path) and per-format key checks. The `/_testkit/*` control routes
//! are in `control.rs`, served only when [`MockConfig::control_token`] is set.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::script::Script;
use crate::{anthropic, control, gemini, openai_chat, openai_responses};

/// How the mock behaves when no script says otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MockConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Delay before each streamed chunk.
    pub token_delay: Duration,
    /// When set, API requests must carry this key the way their format sends it:
    /// `Authorization: Bearer` (OpenAI formats), `x-api-key` (Anthropic), `x-goog-api-key`
    /// or `?key=` (Gemini).
    pub api_key: Option<String>,
    /// What the model lists list.
    pub models: Vec<String>,
    /// Serves the `/_testkit/*` control routes (queue scripts, read the recorded requests,
    /// reset), each requiring `Authorization: Bearer <token>`. `None` serves none: the
    /// app's demo provider runs without them, so no web page can script its model.
    pub control_token: Option<String>,
    /// How many requests are kept for [`MockServer::requests`] (the newest); 0 keeps none.
    pub recorded_requests: usize,
}

/// How many requests a mock keeps by default.
pub const DEFAULT_RECORDED_REQUESTS: usize = 200;

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            port: 0,
            token_delay: Duration::from_millis(20),
            api_key: None,
            models: vec!["scripted".to_owned()],
            control_token: None,
            recorded_requests: DEFAULT_RECORDED_REQUESTS,
        }
    }
}

/// A request the mock received (any route but the `/_testkit` controls), for assertions.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Every header, names lowercased (including `authorization`).
    pub headers: BTreeMap<String, String>,
    /// The JSON body; `Null` when it was empty or not JSON.
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

/// A running mock. Dropping it (or [`MockServer::shutdown`]) stops the server and ends
/// every open stream.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    serve: Option<JoinHandle<()>>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: MockConfig,
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<VecDeque<RecordedRequest>>,
    open_streams: AtomicUsize,
    next_id: AtomicU64,
    /// Cancelled on shutdown: stops accepting and ends open streams.
    pub(crate) shutdown: CancellationToken,
}

impl MockServer {
    /// Binds 127.0.0.1:`config.port` and starts serving.
    pub async fn start(config: MockConfig) -> io::Result<MockServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            scripts: Mutex::new(VecDeque::new()),
            requests: Mutex::new(VecDeque::new()),
            open_streams: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            shutdown: CancellationToken::new(),
        });
        let app = router(Arc::clone(&shared));
        let stop = shared.shutdown.clone().cancelled_owned();
        let serve = tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, app).with_graceful_shutdown(stop).await {
                tracing::warn!(%err, "testkit server stopped with an error");
            }
        });
        tracing::debug!(%addr, "testkit listening");
        Ok(MockServer { addr, shared, serve: Some(serve) })
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL to configure a client with (any format:
    /// Gemini's routes are served under `/v1` too).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1beta`, Gemini's real base path.
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}/v1beta", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply; each chat request takes the oldest one.
    pub fn push_script(&self, script: Script) {
        self.shared.scripts().push_back(script);
    }

    /// The requests received (but the `/_testkit` controls), oldest first: the last
    /// [`MockConfig::recorded_requests`] of them.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests().iter().cloned().collect()
    }

    /// Forgets queued scripts and recorded requests.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// How many streamed responses are being sent right now. Drops back when a client
    /// disconnects, which is how tests see that cancellation reached the server.
    pub fn open_streams(&self) -> usize {
        self.shared.open_streams.load(Ordering::SeqCst)
    }

    /// Stops accepting, ends open streams, and waits for the server to wind down.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(serve) = self.serve.take() {
            let _ = serve.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

impl Shared {
    pub(crate) fn scripts(&self) -> MutexGuard<'_, VecDeque<Script>> {
        self.scripts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn requests(&self) -> MutexGuard<'_, VecDeque<RecordedRequest>> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn reset(&self) {
        self.scripts().clear();
        self.requests().clear();
    }

    /// The next queued script, or the default reply.
    pub(crate) fn next_script(&self) -> Script {
        self.scripts().pop_front().unwrap_or_default()
    }

    /// A number unique to this server, for reply ids.
    pub(crate) fn next_number(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts a stream as open until the returned guard is dropped.
    pub(crate) fn stream_opened(self: &Arc<Self>) -> OpenStream {
        self.open_streams.fetch_add(1, Ordering::SeqCst);
        OpenStream(Arc::clone(self))
    }

    fn record(&self, method: &Method, uri: &Uri, headers: &HeaderMap, body: &[u8]) {
        let keep = self.config.recorded_requests;
        if keep == 0 {
            return;
        }
        let headers = headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect();
        let path = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
        let request = RecordedRequest {
            method: method.as_str().to_owned(),
            path,
            headers,
            body: serde_json::from_slice(body).unwrap_or(Value::Null),
        };
        let mut requests = self.requests();
        while requests.len() >= keep {
            requests.pop_front();
        }
        requests.push_back(request);
    }

    /// `Some(error response)`, shaped as `wire` answers it, when a key is configured and
    /// the request does not carry it the way `wire` sends keys.
    fn reject_unauthorized(&self, wire: Wire, headers: &HeaderMap, uri: &Uri) -> Option<Response> {
        let expected = self.config.api_key.as_deref()?;
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        let given = match wire {
            Wire::OpenAi => bearer,
            // Anthropic also takes OAuth tokens as bearer tokens.
            Wire::Anthropic => header("x-api-key").or(bearer),
            Wire::Gemini => header("x-goog-api-key").or_else(|| query_key(uri)),
        };
        if given == Some(expected) {
            return None;
        }
        Some(match wire {
            Wire::OpenAi => openai_chat::error_response(
                StatusCode::UNAUTHORIZED,
                "Incorrect API key provided",
                "invalid_request_error",
                Some("invalid_api_key"),
            ),
            Wire::Anthropic => {
                anthropic::error_response(StatusCode::UNAUTHORIZED, "authentication_error", "invalid x-api-key")
            }
            Wire::Gemini if given.is_none() => gemini::error_response(
                StatusCode::FORBIDDEN,
                "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
                "PERMISSION_DENIED",
            ),
            Wire::Gemini => gemini::error_response(
                StatusCode::BAD_REQUEST,
                "API key not valid. Please pass a valid API key.",
                "INVALID_ARGUMENT",
            ),
        })
    }
}

/// How a route's format sends keys and shapes errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    /// Chat Completions and Responses.
    OpenAi,
    Anthropic,
    Gemini,
}

/// The `key` query parameter (Gemini's other way to send a key).
fn query_key(uri: &Uri) -> Option<&str> {
    uri.query()?.split('&').find_map(|pair| pair.strip_prefix("key="))
}

/// Which format's model list a `GET /v1/models` asks for, judging by how it authenticates.
fn list_format(headers: &HeaderMap, uri: &Uri) -> Wire {
    if headers.contains_key("anthropic-version") || headers.contains_key("x-api-key") {
        Wire::Anthropic
    } else if headers.contains_key("x-goog-api-key") || query_key(uri).is_some() {
        Wire::Gemini
    } else {
        Wire::OpenAi
    }
}

/// Keeps [`MockServer::open_streams`] counted while a response body is alive.
#[derive(Debug)]
pub(crate) struct OpenStream(Arc<Shared>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::SeqCst);
    }
}

fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/responses", post(responses))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(list_models))
        .route("/v1/models/{call}", post(generate_content))
        .route("/v1beta/models", get(list_gemini_models))
        .route("/v1beta/models/{call}", post(generate_content))
        .fallback(unknown_route)
        // Long conversations make big request bodies; the default 2 MB limit is too small.
        .layer(DefaultBodyLimit::max(64 * 1024 * 1024));
    let api = match shared.config.control_token.clone() {
        Some(token) => api.merge(control::router(token)),
        None => api,
    };
    api.with_state(shared)
}

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, &uri, &headers, &body);
    if let Some(rejection) = shared.reject_unauthorized(Wire::OpenAi, &headers, &uri) {
        return rejection;
    }
    let Ok(request) = serde_json::from_slice::<openai_chat::ChatRequest>(&body) else {
        return openai_chat::error_response(
            StatusCode::BAD_REQUEST,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
            None,
        );
    };
    let script = shared.next_script();
    openai_chat::respond(&shared, &request, script)
}

async fn responses(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, &uri, &headers, &body);
    if let Some(rejection) = shared.reject_unauthorized(Wire::OpenAi, &headers, &uri) {
        return rejection;
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return openai_chat::error_response(
            StatusCode::BAD_REQUEST,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
            None,
        );
    };
    openai_responses::respond(&shared, &request, shared.next_script())
}

async fn messages(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, &uri, &headers, &body);
    if let Some(rejection) = shared.reject_unauthorized(Wire::Anthropic, &headers, &uri) {
        return rejection;
    }
    if !headers.contains_key("anthropic-version") {
        return anthropic::error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "anthropic-version: header is required",
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return anthropic::error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "There was an issue with the JSON body of your request",
        );
    };
    anthropic::respond(&shared, &request, shared.next_script())
}

/// `POST …/models/{model}:streamGenerateContent` (or `:generateContent`).
async fn generate_content(
    State(shared): State<Arc<Shared>>,
    Path(call): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, &uri, &headers, &body);
    if let Some(rejection) = shared.reject_unauthorized(Wire::Gemini, &headers, &uri) {
        return rejection;
    }
    let sse = uri.query().is_some_and(|query| query.split('&').any(|pair| pair == "alt=sse"));
    let (model, form) = match call.rsplit_once(':') {
        Some((model, "streamGenerateContent")) if sse => (model, gemini::Form::Sse),
        Some((model, "streamGenerateContent")) => (model, gemini::Form::JsonArray),
        Some((model, "generateContent")) => (model, gemini::Form::Whole),
        _ => {
            return gemini::error_response(
                StatusCode::NOT_FOUND,
                &format!("Unknown method in {}.", uri.path()),
                "NOT_FOUND",
            );
        }
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return gemini::error_response(StatusCode::BAD_REQUEST, "Invalid JSON payload received.", "INVALID_ARGUMENT");
    };
    gemini::respond(&shared, model, &request, shared.next_script(), form)
}

/// `GET /v1/models`: OpenAI's list, or Anthropic's or Gemini's when asked their way.
async fn list_models(State(shared): State<Arc<Shared>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    shared.record(&method, &uri, &headers, &[]);
    let wire = list_format(&headers, &uri);
    if let Some(rejection) = shared.reject_unauthorized(wire, &headers, &uri) {
        return rejection;
    }
    match wire {
        Wire::OpenAi => openai_chat::model_list(&shared.config.models),
        Wire::Anthropic => anthropic::model_list(&shared.config.models),
        Wire::Gemini => gemini::model_list(&shared.config.models),
    }
}

async fn list_gemini_models(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    shared.record(&method, &uri, &headers, &[]);
    if let Some(rejection) = shared.reject_unauthorized(Wire::Gemini, &headers, &uri) {
        return rejection;
    }
    gemini::model_list(&shared.config.models)
}

async fn unknown_route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, &uri, &headers, &body);
    openai_chat::error_response(
        StatusCode::NOT_FOUND,
        &format!("Unknown request URL: {method} {}.", uri.path()),
        "invalid_request_error",
        Some("unknown_url"),
    )
}
