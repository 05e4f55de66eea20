//! The routes: auth, the operation dispatcher, and the static UI.

use std::path::Path;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use engine::{Engine, Operations};
use protocol::api::{
    AddModelRequest, EditMessageRequest, ReplyRequest, StreamAttachRequest, StreamOpenRequest, TopicRequest,
};
use protocol::{ApiError, AttachReply, ErrorKind, ExecutionCursor, ExecutionId, TopicId};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::services::{ServeDir, ServeFile};

use crate::AppState;
use crate::sse::{Resume, event_stream, status_stream};

/// The largest request body: every attachment at its documented limit (40 MB in all),
/// base64-encoded as JSON carries it, plus 1 MiB for the text and the JSON around it.
pub const MAX_REQUEST_BYTES: usize = engine::MAX_TOTAL_ATTACHMENT_BYTES.div_ceil(3) * 4 + 1024 * 1024;

pub fn router(state: AppState, ui_dir: &Path) -> Router {
    // Nested, so its fallback answers every unknown `/api/...` path (with the token
    // checked first) instead of the UI's `index.html`.
    let api = Router::new()
        .route("/{operation}", post(operation).fallback(method_not_allowed))
        .merge(crate::chat::routes())
        .fallback(unknown_route)
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(state.clone());
    // `/api/` is neither the nested router's root (`/api`) nor under it.
    let api_root = Router::new()
        .route("/api/", any(unknown_route))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state.clone());
    let ui = Router::new()
        .nest_service("/assets", crate::assets::router(&ui_dir.join("assets")))
        .fallback_service(ServeDir::new(ui_dir).fallback(ServeFile::new(ui_dir.join("index.html"))))
        .layer(compression());
    crate::guard::protect(Router::new().nest("/api", api).merge(api_root).merge(ui), state.hosts)
}

/// gzip or brotli for the UI's files, as the browser's `Accept-Encoding` asks (the layer
/// sets `Content-Encoding` and `Vary: Accept-Encoding`; images and tiny files are left
/// alone). Compressed when served rather than at build time so the desktop app, which
/// embeds `ui/dist`, does not carry a second and third copy of every file. The hashed
/// files under `/assets` are compressed once and kept (`assets.rs`); this layer does
/// `index.html` and whatever `assets.rs` does not keep. The API is not behind it: SSE
/// frames must go out as they come.
fn compression() -> CompressionLayer {
    CompressionLayer::new().quality(CompressionLevel::Precise(5))
}

async fn unknown_route() -> Response {
    error_response(ApiError::not_found("route", "(use POST /api/<operation>)"))
}

async fn require_token(State(state): State<AppState>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token);
    if presented.is_some_and(|token| constant_time_eq(token.as_bytes(), state.token.as_bytes())) {
        next.run(request).await
    } else {
        error_response(ApiError::new(
            ErrorKind::Unauthorized,
            "missing or wrong bearer token: open the URL printed by `colloquy serve`",
        ))
    }
}

/// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive
/// (RFC 9110 §11.1), so `bearer` works too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim_start())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn method_not_allowed() -> Response {
    let mut response = error_with_status(
        StatusCode::METHOD_NOT_ALLOWED,
        ApiError::bad_request("method", "operations are called with POST /api/<operation>"),
    );
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// A body that could not be read: too large (413) or cut off.
fn body_rejection(rejection: BytesRejection) -> Response {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        let limit = MAX_REQUEST_BYTES / (1024 * 1024);
        error_with_status(
            StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::bad_request(
                "body",
                format!(
                    "the request is larger than {limit} MB; attachments may add up to {} MB",
                    engine::MAX_TOTAL_ATTACHMENT_BYTES / (1024 * 1024)
                ),
            ),
        )
    } else {
        error_response(ApiError::bad_request(
            "body",
            format!("could not read the request body: {}", rejection.body_text()),
        ))
    }
}

async fn operation(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return body_rejection(rejection),
    };
    let request = match parse_body(&body) {
        Ok(request) => request,
        Err(err) => return error_response(err),
    };
    let result = match name.as_str() {
        "stream_open" => {
            stream(
                &state,
                typed::<StreamOpenRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_open(r, l).await }),
            )
            .await
        }
        "stream_interrupt" => {
            stream(
                &state,
                typed::<StreamOpenRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_interrupt(r, l).await }),
            )
            .await
        }
        "stream_edit" => {
            stream(
                &state,
                typed::<EditMessageRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_edit(r, l).await }),
            )
            .await
        }
        "stream_retry" => {
            stream(
                &state,
                typed::<ReplyRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_retry(r, l).await }),
            )
            .await
        }
        "stream_continue" => {
            stream(
                &state,
                typed::<ReplyRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_continue(r, l).await }),
            )
            .await
        }
        "stream_add_model" => {
            stream(
                &state,
                typed::<AddModelRequest>(request),
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_add_model(r, l).await }),
            )
            .await
        }
        "stream_attach" => {
            let request = typed::<StreamAttachRequest>(request).map(|mut r| {
                if r.after.is_empty() {
                    r.after = last_event_id(&headers).into_iter().collect();
                }
                r
            });
            stream(
                &state,
                request,
                |r| r.topic_id.clone(),
                |engine, r, l| Box::pin(async move { engine.stream_attach(&r.topic_id, r.after, l).await }),
            )
            .await
        }
        "status_subscribe" => Ok(status_stream(state.engine.status_subscribe(), state.shutdown.clone())),
        // Over HTTP a subscription is its response: closing it detaches.
        "stream_detach" => typed::<TopicRequest>(request).map(|_| axum::Json(Value::Null).into_response()),
        "stream_abort" => match typed::<TopicRequest>(request) {
            Ok(request) => {
                state.engine.stream_abort(&request.topic_id).await.map(|()| axum::Json(Value::Null).into_response())
            }
            Err(err) => Err(err),
        },
        name => state.engine.call(name, request).await.map(|value| axum::Json(value).into_response()),
    };
    result.unwrap_or_else(error_response)
}

type Started<'a> = std::pin::Pin<Box<dyn Future<Output = Result<AttachReply, ApiError>> + Send + 'a>>;

/// The streaming operations: subscribe a fresh listener, start, answer with the events.
async fn stream<R>(
    state: &AppState,
    request: Result<R, ApiError>,
    topic: impl Fn(&R) -> TopicId,
    start: impl for<'a> FnOnce(&'a Engine, R, engine::Listener) -> Started<'a>,
) -> Result<Response, ApiError> {
    let request = request?;
    let topic_id = topic(&request);
    let (listener, subscription) = state.engine.listener(engine::ListenerId::unique(), &topic_id);
    let reply = start(&state.engine, request, listener).await?;
    let resume = Resume { engine: state.engine.clone(), topic_id };
    Ok(event_stream(reply, subscription, resume, state.shutdown.clone()))
}

/// `Last-Event-ID: <executionId>:<seq>`, as a browser's EventSource resends it.
fn last_event_id(headers: &HeaderMap) -> Option<ExecutionCursor> {
    let value = headers.get("last-event-id")?.to_str().ok()?;
    let (execution, seq) = value.rsplit_once(':')?;
    Some(ExecutionCursor { execution_id: ExecutionId::from(execution), seq: seq.parse().ok()? })
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request("body", format!("not valid JSON: {e}")))
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    protocol::parse_body(value)
}

pub(crate) fn error_response(error: ApiError) -> Response {
    let status = status_of(error.kind);
    error_with_status(status, error)
}

fn error_with_status(status: StatusCode, error: ApiError) -> Response {
    (status, axum::Json(error)).into_response()
}

fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorKind::Provider => StatusCode::BAD_GATEWAY,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}
