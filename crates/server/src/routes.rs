//! The routes: auth, the operation dispatcher, and the static UI.

use std::path::Path;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use protocol::api::{StreamOpenRequest, TopicRequest};
use protocol::{ApiError, ErrorKind};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_http::services::{ServeDir, ServeFile};

use crate::AppState;
use crate::sse::event_stream;

pub fn router(state: AppState, ui_dir: &Path) -> Router {
    let api = Router::new()
        .route("/api/{operation}", post(operation))
        .fallback(|| async { error_response(ApiError::not_found("route", "(use POST /api/<operation>)")) })
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state);
    let ui = ServeDir::new(ui_dir).fallback(ServeFile::new(ui_dir.join("index.html")));
    api.fallback_service(ui)
}

async fn require_token(State(state): State<AppState>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let presented =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if presented.is_some_and(|token| constant_time_eq(token.as_bytes(), state.token.as_bytes())) {
        next.run(request).await
    } else {
        error_response(ApiError::new(
            ErrorKind::Unauthorized,
            "missing or wrong bearer token: open the URL printed by `colloquy serve`",
        ))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn operation(State(state): State<AppState>, UrlPath(name): UrlPath<String>, body: Bytes) -> Response {
    let request = match parse_body(&body) {
        Ok(request) => request,
        Err(err) => return error_response(err),
    };
    match name.as_str() {
        "stream_open" => match typed::<StreamOpenRequest>(request) {
            Ok(request) => {
                let (listener, rx) = state.engine.listener(engine::ListenerId::unique());
                match state.engine.stream_open(request, listener).await {
                    Ok(reply) => event_stream(reply, rx, state.shutdown.clone()),
                    Err(err) => error_response(err),
                }
            }
            Err(err) => error_response(err),
        },
        "stream_attach" => match typed::<TopicRequest>(request) {
            Ok(request) => {
                let (listener, rx) = state.engine.listener(engine::ListenerId::unique());
                match state.engine.stream_attach(&request.topic_id, listener).await {
                    Ok(reply) => event_stream(reply, rx, state.shutdown.clone()),
                    Err(err) => error_response(err),
                }
            }
            Err(err) => error_response(err),
        },
        // Over HTTP a subscription is its response: closing it detaches.
        "stream_detach" => match typed::<TopicRequest>(request) {
            Ok(_) => axum::Json(Value::Null).into_response(),
            Err(err) => error_response(err),
        },
        "stream_abort" => match typed::<TopicRequest>(request) {
            Ok(request) => match state.engine.stream_abort(&request.topic_id).await {
                Ok(()) => axum::Json(Value::Null).into_response(),
                Err(err) => error_response(err),
            },
            Err(err) => error_response(err),
        },
        name => match state.engine.call(name, request).await {
            Ok(value) => axum::Json(value).into_response(),
            Err(err) => error_response(err),
        },
    }
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request("body", format!("not valid JSON: {e}")))
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| ApiError::from_body_error(&e))
}

pub(crate) fn error_response(error: ApiError) -> Response {
    let status = match error.kind {
        ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorKind::Provider => StatusCode::BAD_GATEWAY,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(error)).into_response()
}
