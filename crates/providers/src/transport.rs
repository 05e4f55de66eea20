//! The HTTP side every wire format shares: send (again, while the provider refuses with a
//! transient status and nothing of the answer has arrived), then turn the 2xx body into
//! events with the format's [`StreamDecoder`].
//!
//! Architecture invariant: a request is only ever sent again from [`Phase::Send`], i.e.
//! before the first byte of a successful answer. Once the body is being read, any failure
//! is final.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderValue};

use crate::decoder::{Item, StreamDecoder};
use crate::error::{BodyShape, ProviderError, ProviderErrorKind};
use crate::language_model::{CompletionEvent, CompletionStream};
use crate::retry::{NoRetry, RetryPolicy, retry_reason};

/// How much of an error body is read to explain the error; the rest is dropped.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The most a successful answer sent as one JSON body may hold (a server that does not
/// stream sends the whole reply at once, generated images included).
pub const WHOLE_ANSWER_LIMIT: usize = 32 * 1024 * 1024;
/// The most one page of a model list may hold (the longest lists known are near 1 MiB).
pub const MODEL_LIST_LIMIT: usize = 8 * 1024 * 1024;

/// One streaming request, ready to send.
pub(crate) struct StreamingCall {
    /// Names the provider in error messages.
    pub provider: String,
    pub http: reqwest::Client,
    pub request: reqwest::Request,
    pub retry: RetryPolicy,
    pub decoder: StreamDecoder,
    /// Appended to the error when a 2xx answer is a web page (a wrong base URL).
    pub base_url_hint: &'static str,
    /// The API key the request carries, blanked out of every error message.
    pub secret: Option<String>,
}

/// A request body as JSON; failing to encode one is a bug in the request mapping, told
/// to the user as an invalid request for that provider.
pub(crate) fn json_body(provider: &str, body: &impl serde::Serialize) -> Result<Vec<u8>, ProviderError> {
    serde_json::to_vec(body).map_err(|err| {
        ProviderError::new(
            ProviderErrorKind::InvalidRequest,
            format!("could not encode the request for {provider}: {err}"),
        )
    })
}

/// A header value that never shows in debug output (API keys).
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ProviderError> {
    let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
        ProviderError::new(
            ProviderErrorKind::InvalidRequest,
            "the API key contains characters that cannot be sent — paste it again in the provider settings",
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The completion stream of `call` (or of the error that kept it from being built). No
/// error it yields carries the API key, whatever the provider echoed.
pub(crate) fn completion_stream(call: Result<StreamingCall, ProviderError>) -> CompletionStream {
    let secret = call.as_ref().ok().and_then(|call| call.secret.clone());
    let phase = match call {
        Ok(call) => Phase::Send { call: Box::new(call), attempt: 1 },
        Err(err) => Phase::Drain(VecDeque::from([Err(err)])),
    };
    let items = stream::unfold(phase, |phase| async move {
        let mut phase = phase;
        loop {
            let (item, next) = phase.step().await;
            phase = next;
            if let Some(item) = item {
                return Some((item, phase));
            }
            if matches!(phase, Phase::Done) {
                return None;
            }
        }
    });
    items.map(move |item| item.map_err(|err| err.without_secret(secret.as_deref()))).boxed()
}

/// Where the exchange is. Transitions live in [`Phase::step`].
enum Phase {
    /// Send attempt number `attempt` (1-based).
    Send {
        call: Box<StreamingCall>,
        attempt: u32,
    },
    /// Wait, then send attempt number `attempt`.
    Wait {
        call: Box<StreamingCall>,
        attempt: u32,
        delay: Duration,
    },
    /// Reading a 2xx event stream.
    Read(Box<Reading>),
    /// Hand out what is left, then end.
    Drain(VecDeque<Item>),
    Done,
}

struct Reading {
    provider: String,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: StreamDecoder,
    ready: VecDeque<Item>,
}

impl Phase {
    /// Advances one step; returns the item to hand out, if any, and the next phase.
    async fn step(self) -> (Option<Item>, Phase) {
        match self {
            Phase::Send { call, attempt } => send(call, attempt).await,
            Phase::Wait { call, attempt, delay } => {
                tokio::time::sleep(delay).await;
                (None, Phase::Send { call, attempt })
            }
            Phase::Read(mut reading) => {
                if let Some(item) = reading.ready.pop_front() {
                    return (Some(item), Phase::Read(reading));
                }
                if reading.decoder.is_finished() {
                    return (None, Phase::Done);
                }
                let items = match reading.body.next().await {
                    Some(Ok(bytes)) => reading.decoder.push(&bytes),
                    Some(Err(err)) => reading.decoder.fail(ProviderError::from_body_error(&reading.provider, &err)),
                    None => reading.decoder.finish(),
                };
                reading.ready.extend(items);
                (None, Phase::Read(reading))
            }
            Phase::Drain(mut items) => match items.pop_front() {
                Some(item) => (Some(item), Phase::Drain(items)),
                None => (None, Phase::Done),
            },
            Phase::Done => (None, Phase::Done),
        }
    }
}

async fn send(mut call: Box<StreamingCall>, attempt: u32) -> (Option<Item>, Phase) {
    let provider = call.provider.clone();
    let Some(request) = call.request.try_clone() else {
        let err = ProviderError::new(ProviderErrorKind::InvalidRequest, "the request body cannot be sent twice");
        return (Some(Err(err)), Phase::Done);
    };
    tracing::debug!(provider = %provider, attempt, "sending a streaming request");
    let response = match call.http.execute(request).await {
        Ok(response) => response,
        Err(err) => return (Some(Err(ProviderError::from_request_error(&provider, &err))), Phase::Done),
    };
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let headers = response.headers().clone();
        let body = read_capped(response).await;
        let mut err = ProviderError::from_http_status(&provider, status, &body);
        tracing::debug!(provider = %provider, status, attempt, kind = err.kind.as_str(), "provider refused the request");
        return match call.retry.delay_after(attempt, status, &headers, &err, SystemTime::now()) {
            Ok(delay) => {
                let retrying = CompletionEvent::Retrying {
                    attempt: attempt + 1,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    reason: retry_reason(&err),
                };
                (Some(Ok(retrying)), Phase::Wait { call, attempt: attempt + 1, delay })
            }
            Err(why) => {
                match why {
                    NoRetry::WaitTooLong(wait) => {
                        err.message = format!("{} (it asks to wait {} s)", err.message, wait.as_secs().max(1));
                    }
                    NoRetry::OutOfAttempts if attempt > 1 => {
                        err.message = format!("{} (gave up after {attempt} attempts)", err.message);
                    }
                    NoRetry::OutOfAttempts | NoRetry::NotTransient => {}
                }
                (Some(Err(err)), Phase::Done)
            }
        };
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        let items = match read_limited(&provider, response, WHOLE_ANSWER_LIMIT, "an answer").await {
            Ok(body) => call.decoder.decode_whole(status, &body),
            Err(err) => vec![Err(err)],
        };
        return (None, Phase::Drain(items.into()));
    }
    if content_type.starts_with("text/html") {
        let body = read_capped(response).await;
        let mut err = ProviderError::unexpected_body(&provider, status, &BodyShape::of(&body));
        err.message.push_str(call.base_url_hint);
        return (Some(Err(err)), Phase::Done);
    }
    let reading =
        Reading { provider, body: response.bytes_stream().boxed(), decoder: call.decoder, ready: VecDeque::new() };
    (None, Phase::Read(Box::new(reading)))
}

/// `GET url` expecting JSON; the body of a 2xx answer, or the classified error.
pub(crate) async fn get_json(provider: &str, request: reqwest::RequestBuilder) -> Result<(u16, Bytes), ProviderError> {
    let response = request.send().await.map_err(|err| ProviderError::from_request_error(provider, &err))?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let body = read_capped(response).await;
        return Err(ProviderError::from_http_status(provider, status, &body));
    }
    let body = read_limited(provider, response, MODEL_LIST_LIMIT, "a model list").await?;
    Ok((status, body.into()))
}

/// The whole body of a 2xx answer, if it holds at most `limit` bytes; a longer one is a
/// `bad_response` that says the limit (`what` names the body in it).
async fn read_limited(
    provider: &str,
    mut response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, ProviderError> {
    let too_large = || ProviderError::too_large(provider, what, limit);
    if response.content_length().is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| ProviderError::from_body_error(provider, &err))? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error for a 2xx model list that is not one.
pub(crate) fn not_a_model_list(provider: &str, status: u16, body: &[u8], hint: &str) -> ProviderError {
    let mut err = ProviderError::unexpected_body(provider, status, &BodyShape::of(body));
    err.message = format!("{} instead of a model list ({hint})", err.message);
    err
}

/// The first [`ERROR_BODY_LIMIT`] bytes of an error body; a body that fails to read
/// halfway is explained by what did arrive.
pub(crate) async fn read_capped(mut response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(ERROR_BODY_LIMIT - body.len())]),
            Ok(None) | Err(_) => break,
        }
    }
    body
}
