//! The `/_testkit/*` control routes: queue scripts, read the recorded requests, reset.
//!
//! They steer the model, so they are served only by a mock started with a control token
//! (tests and the `colloquy-testkit` binary; never the app's demo provider), and every one
//! requires `Authorization: Bearer <token>`. A web page in the user's browser can send
//! neither that header nor a JSON body to another origin without a CORS preflight, which
//! the mock never answers, so it cannot script the model (say, into calling `read_file`)
//! or read what the model was sent.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::script::ScriptBatch;
use crate::server::{RecordedRequest, Shared};

/// Scripts are small; a control body larger than this is refused.
const MAX_CONTROL_BODY: usize = 4 * 1024 * 1024;

pub(crate) fn router(token: String) -> Router<Arc<Shared>> {
    let token: Arc<str> = token.into();
    Router::new()
        .route("/_testkit/script", post(queue_scripts))
        .route("/_testkit/requests", get(recorded_requests))
        .route("/_testkit/reset", post(reset))
        .layer(DefaultBodyLimit::max(MAX_CONTROL_BODY))
        .route_layer(middleware::from_fn(move |headers: HeaderMap, request: Request, next: Next| {
            let token = token.clone();
            async move {
                if presents(&headers, &token) {
                    next.run(request).await
                } else {
                    refusal(
                        StatusCode::UNAUTHORIZED,
                        "the testkit's control routes need `Authorization: Bearer <control token>`",
                    )
                }
            }
        }))
}

/// Whether the request carries the bearer token (compared in constant time).
fn presents(headers: &HeaderMap, token: &str) -> bool {
    let presented =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    presented.is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refusal(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

async fn queue_scripts(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if !is_json(&headers) {
        return refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the script as JSON, with `Content-Type: application/json`",
        );
    }
    match serde_json::from_slice::<ScriptBatch>(&body) {
        Ok(batch) => {
            let scripts = batch.into_scripts();
            let queued = scripts.len();
            shared.scripts().extend(scripts);
            axum::Json(json!({ "queued": queued })).into_response()
        }
        Err(err) => refusal(StatusCode::BAD_REQUEST, &format!("not a script or a list of scripts: {err}")),
    }
}

async fn recorded_requests(State(shared): State<Arc<Shared>>) -> Response {
    let requests: Vec<RecordedRequest> = shared.requests().iter().cloned().collect();
    axum::Json(requests).into_response()
}

async fn reset(State(shared): State<Arc<Shared>>) -> Response {
    shared.reset();
    StatusCode::NO_CONTENT.into_response()
}
