//! [`ProviderError`]: every way a provider call can fail, classified so the caller can
//! decide whether to retry and the user reads what happened and what to do about it.
//!
//! The classification helpers here are wire-neutral: they look at the HTTP status and at
//! the error body shapes OpenAI-compatible servers, Anthropic and Gemini actually send.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::CrossOriginRedirect;

/// What kind of failure, in terms the caller can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// The API key is missing, wrong, or lacks permission (HTTP 401/403).
    Auth,
    /// Too many requests, or the account is out of quota (HTTP 429).
    RateLimit,
    /// The provider is overloaded (HTTP 503/529).
    Overloaded,
    /// The conversation does not fit the model's context window.
    ContextTooLong,
    /// The provider's content filter refused the request.
    ContentFiltered,
    /// Could not connect, or the connection broke.
    Network,
    /// The provider failed on its side (HTTP 5xx, or an error reported mid-stream).
    Server,
    /// The provider answered something that is not the wire format (HTML, garbage).
    BadResponse,
    /// The provider rejected the request (bad model name, bad parameter, bad URL).
    InvalidRequest,
    /// The provider did not answer in time.
    Timeout,
}

impl ProviderErrorKind {
    /// A stable snake_case name, e.g. for a message's `status_reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderErrorKind::Auth => "auth",
            ProviderErrorKind::RateLimit => "rate_limit",
            ProviderErrorKind::Overloaded => "overloaded",
            ProviderErrorKind::ContextTooLong => "context_too_long",
            ProviderErrorKind::ContentFiltered => "content_filtered",
            ProviderErrorKind::Network => "network",
            ProviderErrorKind::Server => "server",
            ProviderErrorKind::BadResponse => "bad_response",
            ProviderErrorKind::InvalidRequest => "invalid_request",
            ProviderErrorKind::Timeout => "timeout",
        }
    }

    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ProviderErrorKind::RateLimit
                | ProviderErrorKind::Overloaded
                | ProviderErrorKind::Network
                | ProviderErrorKind::Server
                | ProviderErrorKind::Timeout
        )
    }
}

/// A failed provider call. `message` is written for the user: it says what happened and
/// what to do, and never contains the API key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    pub message: String,
    /// The HTTP status, when the provider answered with an error status.
    pub status: Option<u16>,
    /// Whether sending the same request again may succeed.
    pub retryable: bool,
}

impl ProviderError {
    /// An error with the kind's default retryability and no HTTP status.
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), status: None, retryable: kind.is_retryable() }
    }

    /// The error for a non-2xx answer, from its status and (possibly truncated) body.
    pub fn from_http_status(provider: &str, status: u16, body: &[u8]) -> Self {
        let detail = ErrorDetail::from_body(body);
        let shape = BodyShape::of(body);
        let (kind, retryable) = classify(Some(status), detail.as_ref());
        // A body that is neither an error object nor JSON usually means the base URL points
        // at the wrong server (a proxy, a web UI); say so unless the status alone is clear.
        let status_is_clear = matches!(
            kind,
            ProviderErrorKind::Auth
                | ProviderErrorKind::RateLimit
                | ProviderErrorKind::Overloaded
                | ProviderErrorKind::Timeout
        );
        if detail.is_none() && !status_is_clear {
            return Self::unexpected_body(provider, status, &shape);
        }
        let message = describe(kind, provider, Some(status), detail.as_ref());
        Self { kind, message, status: Some(status), retryable }
    }

    /// The error for a 2xx answer whose body is not the expected format at all.
    pub fn unexpected_body(provider: &str, status: u16, shape: &BodyShape) -> Self {
        let advice = if status >= 500 { "check the base URL, or try again later" } else { "check the base URL" };
        Self {
            kind: ProviderErrorKind::BadResponse,
            message: format!("{provider} answered HTTP {status} with {shape} — {advice}"),
            status: Some(status),
            retryable: status >= 500,
        }
    }

    /// This error with the API key blanked out of its message. A provider or proxy that
    /// echoes the request's headers in its error body must not put the key into a message
    /// the user sees, the database keeps and the log prints. Keys shorter than 8
    /// characters are left alone: blanking them would mangle ordinary words.
    #[must_use]
    pub fn without_secret(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.map(str::trim).filter(|secret| secret.len() >= 8) {
            self.message = self.message.replace(secret, "[API key]");
        }
        self
    }

    /// The error for a successful answer whose body held no event-stream frame at all
    /// (a plain-text or HTML page served with a 2xx status, e.g. by a proxy or a web UI).
    pub fn not_an_event_stream(provider: &str, shape: &BodyShape) -> Self {
        Self::new(
            ProviderErrorKind::BadResponse,
            format!(
                "{provider} answered with {shape} instead of a stream of events — check the base URL and the API format in the provider settings"
            ),
        )
    }

    /// The error for an error object the provider sent instead of (or in the middle of) a
    /// successful answer, e.g. a mid-stream `data: {"error": {...}}` frame.
    pub fn from_error_value(provider: &str, value: &Value) -> Self {
        let detail = ErrorDetail::from_value(value).unwrap_or_else(|| ErrorDetail {
            message: Some(snippet(&value.to_string(), SNIPPET_CHARS)),
            ..ErrorDetail::default()
        });
        let (kind, retryable) = classify(None, Some(&detail));
        Self { kind, message: describe(kind, provider, None, Some(&detail)), status: None, retryable }
    }

    /// A data frame that is not valid JSON for the wire format.
    pub fn malformed_frame(cause: &serde_json::Error, frame: &str) -> Self {
        Self::new(
            ProviderErrorKind::BadResponse,
            format!(
                "the provider sent a malformed stream frame: {cause} (frame starts with “{}”) — try again, or check the base URL and the API format in the provider settings",
                snippet(frame, 60)
            ),
        )
    }

    /// The provider refused to answer this prompt because of its content (Gemini's
    /// `promptFeedback.blockReason`); `reason` is the provider's word for it.
    pub fn prompt_blocked(provider: &str, reason: &str, detail: Option<&str>) -> Self {
        let detail = detail.map(|d| format!(": {}", snippet(d, 300))).unwrap_or_default();
        Self::new(
            ProviderErrorKind::ContentFiltered,
            format!("{provider} blocked the prompt ({reason}){detail} — rephrase the message"),
        )
    }

    /// A successful answer (`what`: "an answer", "a model list", "a stream event") grew
    /// past `limit` bytes; Colloquy stopped reading it.
    pub fn too_large(provider: &str, what: &str, limit: usize) -> Self {
        let size =
            if limit >= 1024 * 1024 { format!("{} MiB", limit / (1024 * 1024)) } else { format!("{limit} bytes") };
        Self::new(
            ProviderErrorKind::BadResponse,
            format!(
                "{provider} sent {what} larger than {size}, more than Colloquy reads — check the base URL and the API format in the provider settings"
            ),
        )
    }

    /// The body ended before the provider said it was done.
    pub fn ended_early(provider: &str) -> Self {
        Self::new(
            ProviderErrorKind::Network,
            format!("the stream from {provider} ended early, before the reply was complete — try again"),
        )
    }

    /// Sending the request failed before any answer arrived.
    pub fn from_request_error(provider: &str, err: &reqwest::Error) -> Self {
        if let Some(redirect) = find_cause::<CrossOriginRedirect>(err) {
            return Self::new(
                ProviderErrorKind::InvalidRequest,
                format!(
                    "{provider} redirected the request from {} to {}; Colloquy does not follow a redirect to another address, so the API key is not sent there — set the base URL to the address the service answers at",
                    redirect.from, redirect.to
                ),
            );
        }
        let cause = root_cause(err);
        if err.is_timeout() {
            return Self::new(
                ProviderErrorKind::Timeout,
                format!("{provider} did not answer in time ({cause}) — try again"),
            );
        }
        if err.is_builder() {
            return Self::new(
                ProviderErrorKind::InvalidRequest,
                format!("the base URL for {provider} is not usable ({cause}) — fix it in the provider settings"),
            );
        }
        if err.is_connect() {
            return Self::new(
                ProviderErrorKind::Network,
                format!("could not connect to {provider}: {cause} — check the base URL and that the server is running"),
            );
        }
        Self::new(
            ProviderErrorKind::Network,
            format!("the request to {provider} failed: {cause} — check the network connection and try again"),
        )
    }

    /// Reading the body failed after a successful status.
    pub fn from_body_error(provider: &str, err: &reqwest::Error) -> Self {
        let cause = root_cause(err);
        if err.is_timeout() {
            return Self::new(
                ProviderErrorKind::Timeout,
                format!("{provider} stopped sending mid-stream ({cause}) — try again"),
            );
        }
        Self::new(ProviderErrorKind::Network, format!("connection to {provider} lost mid-stream: {cause} — try again"))
    }
}

impl From<ProviderError> for protocol::ApiError {
    fn from(err: ProviderError) -> Self {
        protocol::ApiError {
            kind: protocol::ErrorKind::Provider,
            message: err.message,
            retryable: err.retryable,
            field: None,
            code: Some(err.kind.as_str().to_owned()),
        }
    }
}

/// What an error body says, in the shapes seen in the wild:
/// `{"error": {"message", "type", "code"}}` (OpenAI, Anthropic, most compatible servers),
/// `{"error": "text"}` (Ollama), `{"message"}` / `{"detail"}` (proxies, FastAPI), and a
/// one-element array of those (Gemini).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorDetail {
    pub message: Option<String>,
    /// `error.type`, e.g. `invalid_request_error`.
    pub kind: Option<String>,
    /// `error.code` (or `error.status`), e.g. `context_length_exceeded`.
    pub code: Option<String>,
}

impl ErrorDetail {
    pub fn from_body(body: &[u8]) -> Option<Self> {
        let value: Value = serde_json::from_slice(body).ok()?;
        Self::from_value(&value)
    }

    pub fn from_value(value: &Value) -> Option<Self> {
        let value = match value {
            Value::Array(items) => items.first()?,
            other => other,
        };
        let text = |v: Option<&Value>| match v? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let detail = match value.get("error") {
            // Gemini spells the kind `status` (`RESOURCE_EXHAUSTED`) next to a numeric `code`.
            Some(Value::Object(error)) => ErrorDetail {
                message: text(error.get("message")),
                kind: text(error.get("type")).or_else(|| text(error.get("status"))),
                code: text(error.get("code")).or_else(|| text(error.get("status"))),
            },
            Some(Value::String(message)) if !message.trim().is_empty() => {
                ErrorDetail { message: Some(message.trim().to_owned()), ..ErrorDetail::default() }
            }
            // OpenAI Responses' standalone `error` event: `{"type":"error","code","message"}`.
            _ => ErrorDetail {
                message: text(value.get("message")).or_else(|| text(value.get("detail"))),
                code: text(value.get("code")),
                ..ErrorDetail::default()
            },
        };
        (detail.message.is_some() || detail.code.is_some() || detail.kind.is_some()).then_some(detail)
    }

    /// Every machine-readable hint, lowercased, for keyword classification.
    fn hints(&self) -> String {
        [&self.code, &self.kind, &self.message]
            .into_iter()
            .flatten()
            .map(|s| s.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Maps a status and an error body to a kind and whether a retry may help.
fn classify(status: Option<u16>, detail: Option<&ErrorDetail>) -> (ProviderErrorKind, bool) {
    use ProviderErrorKind as K;
    let hints = detail.map(ErrorDetail::hints).unwrap_or_default();
    let hinted = |words: &[&str]| words.iter().any(|w| hints.contains(w));
    let out_of_quota = is_out_of_quota(&hints);
    let too_long = hinted(&[
        "context_length",
        "context length",
        "context window",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "string_above_max_length",
        "input token count",
    ]);
    let filtered = hinted(&["content_filter", "content_policy", "content management policy", "prohibited_content"]);
    // Gemini answers a bad key with 400 `API_KEY_INVALID`, not 401.
    let bad_key = hinted(&["api key not valid", "api_key_invalid", "invalid_api_key", "invalid x-api-key"]);
    let kind = match status {
        Some(401 | 403) => K::Auth,
        Some(400..=499) if bad_key => K::Auth,
        Some(429) => K::RateLimit,
        Some(503 | 529) => K::Overloaded,
        Some(408 | 504) => K::Timeout,
        // Too Early: the server will not risk a request it might see twice; sent again
        // later it goes through, so it is a transient server-side refusal.
        Some(425) => K::Server,
        Some(413) => K::ContextTooLong,
        Some(400..=499) if hinted(&["overloaded_error"]) => K::Overloaded,
        Some(400..=499) if too_long => K::ContextTooLong,
        Some(400..=499) if filtered => K::ContentFiltered,
        Some(400..=499) => K::InvalidRequest,
        Some(_) | None if hinted(&["overloaded"]) => K::Overloaded,
        Some(500..=599) => K::Server,
        Some(_) => K::BadResponse,
        // A mid-stream error object: no status, so the body is all there is to go on.
        None if bad_key || hinted(&["authentication", "unauthorized", "unauthenticated", "permission_denied"]) => {
            K::Auth
        }
        None if out_of_quota || hinted(&["rate_limit", "rate limit", "resource_exhausted"]) => K::RateLimit,
        None if hinted(&["unavailable"]) => K::Overloaded,
        None if too_long => K::ContextTooLong,
        None if filtered => K::ContentFiltered,
        None => K::Server,
    };
    let retryable = match kind {
        K::RateLimit => !out_of_quota,
        other => other.is_retryable(),
    };
    (kind, retryable)
}

/// A 429 that waiting will not fix.
fn is_out_of_quota(hints: &str) -> bool {
    ["insufficient_quota", "exceeded your current quota", "quota exceeded"].iter().any(|w| hints.contains(w))
}

/// The user-facing sentence: what happened, the provider's own words, what to do.
fn describe(kind: ProviderErrorKind, provider: &str, status: Option<u16>, detail: Option<&ErrorDetail>) -> String {
    use ProviderErrorKind as K;
    if kind == K::Auth {
        return format!("authentication failed — check the API key for {provider}");
    }
    let status_text = status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
    let out_of_quota = detail.is_some_and(|d| is_out_of_quota(&d.hints()));
    let (what, advice) = match kind {
        K::RateLimit if out_of_quota => {
            (format!("{provider} says the account is out of quota"), "check your plan and billing")
        }
        K::RateLimit => (format!("{provider} is rate limiting requests"), "wait a moment and try again"),
        K::Overloaded => (format!("{provider} is overloaded"), "try again in a moment"),
        K::Timeout => (format!("{provider} timed out{status_text}"), "try again"),
        K::ContextTooLong => (
            "the conversation is too long for this model".to_owned(),
            "start a new topic or choose a model with a larger context window",
        ),
        K::ContentFiltered => {
            (format!("{provider} blocked the request with its content filter"), "rephrase the message")
        }
        K::InvalidRequest if status == Some(404) => {
            (format!("{provider} has no such endpoint or model (HTTP 404)"), "check the base URL and the model name")
        }
        K::InvalidRequest => {
            (format!("{provider} rejected the request{status_text}"), "check the model name and settings")
        }
        K::Server if status.is_none() => (format!("{provider} reported an error mid-stream"), "try again"),
        K::Server if status == Some(425) => {
            (format!("{provider} asked for the request to be sent again later (HTTP 425)"), "try again in a moment")
        }
        K::Server => (format!("{provider} had a server error{status_text}"), "try again later"),
        K::Auth | K::Network | K::BadResponse => (format!("{provider} failed{status_text}"), "try again later"),
    };
    match detail.and_then(|d| d.message.as_deref()) {
        Some(message) => format!("{what}: {} — {advice}", snippet(message, 300)),
        None => format!("{what} — {advice}"),
    }
}

const SNIPPET_CHARS: usize = 120;

/// How a body that is not an error object looks, for a message: an HTML page's title, or
/// its first words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyShape {
    Empty,
    Html { title: Option<String>, text: String },
    Text(String),
}

impl BodyShape {
    pub fn of(body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        if text.is_empty() {
            return BodyShape::Empty;
        }
        let lower = text.to_ascii_lowercase();
        let looks_html = lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body");
        if !looks_html {
            return BodyShape::Text(snippet(text, SNIPPET_CHARS));
        }
        let title = element_text(text, &lower, "title")
            .map(|title| snippet(&decode_entities(title), 80))
            .filter(|title| !title.is_empty());
        let body = element_text(text, &lower, "body").unwrap_or(text);
        BodyShape::Html { title, text: snippet(&decode_entities(&strip_tags(body)), SNIPPET_CHARS) }
    }
}

impl std::fmt::Display for BodyShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyShape::Empty => f.write_str("an empty body"),
            BodyShape::Html { title: Some(title), .. } => write!(f, "an HTML page titled “{title}”"),
            BodyShape::Html { title: None, text } if text.is_empty() => f.write_str("an HTML page"),
            BodyShape::Html { title: None, text } => write!(f, "an HTML page (“{text}”)"),
            BodyShape::Text(text) => write!(f, "an unexpected body (“{text}”)"),
        }
    }
}

/// The inside of the first `<tag …>…</tag>` element (found case-insensitively through
/// `lower`, the ASCII-lowercased `text`, whose byte offsets are the same); an unclosed
/// element runs to the end.
fn element_text<'a>(text: &'a str, lower: &str, tag: &str) -> Option<&'a str> {
    let open = lower.find(&format!("<{tag}"))?;
    let start = open + lower.get(open..)?.find('>')? + 1;
    let end = lower.get(start..)?.find(&format!("</{tag}")).map_or(lower.len(), |len| start + len);
    text.get(start..end)
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

/// Collapses whitespace and cuts to `max` characters, marking the cut with `…`.
pub(crate) fn snippet(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(max).collect();
    cut.push('…');
    cut
}

/// The innermost cause of a transport error: reqwest's own top level only says "error
/// sending request", the useful part ("Connection refused") is at the bottom of the chain.
/// The first error of type `E` among `err`'s causes.
fn find_cause<E: std::error::Error + 'static>(err: &reqwest::Error) -> Option<&E> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = cause {
        if let Some(found) = current.downcast_ref::<E>() {
            return Some(found);
        }
        cause = current.source();
    }
    None
}

fn root_cause(err: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = err;
    while let Some(source) = cause.source() {
        cause = source;
    }
    let text = cause.to_string();
    if text.is_empty() { err.to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, body: &str) -> ProviderError {
        ProviderError::from_http_status("Acme", status, body.as_bytes())
    }

    #[test]
    fn auth_failures_name_the_provider_whatever_the_body() {
        for (status, body) in
            [(401, r#"{"error":{"message":"Incorrect API key provided"}}"#), (403, "<html>nope</html>"), (401, "")]
        {
            let err = http(status, body);
            assert_eq!(err.kind, ProviderErrorKind::Auth);
            assert_eq!(err.message, "authentication failed — check the API key for Acme");
            assert_eq!(err.status, Some(status));
            assert!(!err.retryable);
        }
    }

    #[test]
    fn rate_limits_are_retryable_unless_the_quota_is_gone() {
        let err = http(
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}"#,
        );
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::RateLimit, true));
        assert_eq!(
            err.message,
            "Acme is rate limiting requests: Rate limit reached for gpt-4o — wait a moment and try again"
        );

        let err = http(429, r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#);
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::RateLimit, false));
        assert!(err.message.contains("billing"), "{}", err.message);

        let err = http(429, "slow down");
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::RateLimit, true));
    }

    #[test]
    fn too_early_and_request_timeouts_say_to_try_again() {
        let err = http(425, r#"{"error":{"message":"Too Early"}}"#);
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Server, true));
        assert_eq!(
            err.message,
            "Acme asked for the request to be sent again later (HTTP 425): Too Early — try again in a moment"
        );
        let err = http(408, "Request Timeout");
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Timeout, true));
        assert_eq!(err.message, "Acme timed out (HTTP 408) — try again");
    }

    #[test]
    fn server_errors_are_retryable_and_overload_is_its_own_kind() {
        let err = http(500, r#"{"error":{"message":"The server had an error"}}"#);
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Server, true));
        assert!(err.message.contains("The server had an error"));

        for status in [503, 529] {
            let err = http(status, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
            assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Overloaded, true), "{status}");
        }
    }

    #[test]
    fn html_bodies_become_bad_response_with_the_page_title() {
        let page =
            "<!DOCTYPE html>\n<html><head><TITLE>502 Bad\n  Gateway</TITLE></head><body><h1>502</h1></body></html>";
        let err = http(502, page);
        assert_eq!(err.kind, ProviderErrorKind::BadResponse);
        assert!(err.retryable);
        assert_eq!(
            err.message,
            "Acme answered HTTP 502 with an HTML page titled “502 Bad Gateway” — check the base URL, or try again later"
        );

        let err = http(404, "<html><body><p>Cannot &amp; will not</p></body></html>");
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::BadResponse, false));
        assert!(err.message.contains("“Cannot & will not”"), "{}", err.message);
    }

    #[test]
    fn context_and_filter_errors_are_recognised_from_the_body() {
        let err = http(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#,
        );
        assert_eq!(err.kind, ProviderErrorKind::ContextTooLong);
        assert!(
            err.message.starts_with("the conversation is too long for this model: This model's maximum context length")
        );

        let err = http(400, r#"{"error":{"message":"blocked","code":"content_filter"}}"#);
        assert_eq!(err.kind, ProviderErrorKind::ContentFiltered);

        let err = http(404, r#"{"error":"model 'llama9' not found"}"#);
        assert_eq!(err.kind, ProviderErrorKind::InvalidRequest);
        assert_eq!(
            err.message,
            "Acme has no such endpoint or model (HTTP 404): model 'llama9' not found — check the base URL and the model name"
        );
    }

    #[test]
    fn error_detail_reads_the_shapes_seen_in_the_wild() {
        let cases = [
            (r#"{"error":{"message":"m","type":"t","code":"c"}}"#, Some(("m", Some("t"), Some("c")))),
            (
                r#"{"error":{"message":"m","code":400,"status":"INVALID_ARGUMENT"}}"#,
                Some(("m", Some("INVALID_ARGUMENT"), Some("400"))),
            ),
            (
                r#"[{"error":{"message":"m","status":"INVALID_ARGUMENT"}}]"#,
                Some(("m", Some("INVALID_ARGUMENT"), Some("INVALID_ARGUMENT"))),
            ),
            (r#"{"type":"error","code":"server_error","message":"m"}"#, Some(("m", None, Some("server_error")))),
            (r#"{"error":"m"}"#, Some(("m", None, None))),
            (r#"{"detail":"m"}"#, Some(("m", None, None))),
            (r#"{"ok":true}"#, None),
            ("[]", None),
            ("not json", None),
        ];
        for (body, expected) in cases {
            let detail = ErrorDetail::from_body(body.as_bytes());
            let got =
                detail.as_ref().map(|d| (d.message.as_deref().unwrap_or(""), d.kind.as_deref(), d.code.as_deref()));
            assert_eq!(got, expected, "{body}");
        }
    }

    #[test]
    fn mid_stream_error_objects_default_to_a_retryable_server_error() {
        let err = ProviderError::from_error_value("Acme", &serde_json::json!({"error": {"message": "upstream died"}}));
        assert_eq!((err.kind, err.retryable, err.status), (ProviderErrorKind::Server, true, None));
        assert_eq!(err.message, "Acme reported an error mid-stream: upstream died — try again");

        let err = ProviderError::from_error_value(
            "Acme",
            &serde_json::json!({"error": {"message": "x", "code": "context_length_exceeded"}}),
        );
        assert_eq!(err.kind, ProviderErrorKind::ContextTooLong);
    }

    #[test]
    fn snippets_are_collapsed_and_cut_on_character_boundaries() {
        assert_eq!(snippet("  a \n\t b  ", 10), "a b");
        assert_eq!(snippet("éééé", 2), "éé…");
    }

    #[test]
    fn anthropic_and_gemini_error_bodies_are_classified() {
        let err =
            http(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#);
        assert_eq!(err.kind, ProviderErrorKind::Auth);
        let gemini_bad_key = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}"#;
        assert_eq!(http(400, gemini_bad_key).kind, ProviderErrorKind::Auth);
        let err = http(
            400,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
        );
        assert_eq!(err.kind, ProviderErrorKind::ContextTooLong);
        let err = http(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        );
        assert_eq!(err.kind, ProviderErrorKind::ContextTooLong);

        let mid_stream = |value: serde_json::Value| ProviderError::from_error_value("Acme", &value);
        let overloaded =
            mid_stream(serde_json::json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}));
        assert_eq!((overloaded.kind, overloaded.retryable), (ProviderErrorKind::Overloaded, true));
        assert_eq!(overloaded.message, "Acme is overloaded: Overloaded — try again in a moment");
        let exhausted =
            mid_stream(serde_json::json!({"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}));
        assert_eq!(exhausted.kind, ProviderErrorKind::RateLimit);
        let unavailable =
            mid_stream(serde_json::json!({"error":{"code":503,"message":"Try later","status":"UNAVAILABLE"}}));
        assert_eq!(unavailable.kind, ProviderErrorKind::Overloaded);
        let responses =
            mid_stream(serde_json::json!({"type":"error","code":"rate_limit_exceeded","message":"Slow down"}));
        assert_eq!(responses.kind, ProviderErrorKind::RateLimit);
        assert!(responses.message.contains("Slow down"), "{}", responses.message);
    }

    #[test]
    fn an_echoed_api_key_is_blanked_out_of_the_message() {
        let body = r#"{"error":{"message":"bad header Authorization: Bearer sk-live-0123456789 for /v1/chat"}}"#;
        let err = http(400, body).without_secret(Some(" sk-live-0123456789 "));
        assert_eq!(
            err.message,
            "Acme rejected the request (HTTP 400): bad header Authorization: Bearer [API key] for /v1/chat — check the model name and settings"
        );
        let short = http(400, r#"{"error":{"message":"key k is wrong"}}"#).without_secret(Some("k"));
        assert!(short.message.contains("key k is wrong"), "{}", short.message);
        assert_eq!(http(400, body).without_secret(None), http(400, body));
    }

    #[test]
    fn a_blocked_prompt_says_to_rephrase() {
        let err = ProviderError::prompt_blocked("Gemini", "SAFETY", None);
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::ContentFiltered, false));
        assert_eq!(err.message, "Gemini blocked the prompt (SAFETY) — rephrase the message");
    }

    #[test]
    fn converts_to_the_ipc_error_shape() {
        let api: protocol::ApiError = http(500, r#"{"error":{"message":"boom"}}"#).into();
        assert_eq!(api.kind, protocol::ErrorKind::Provider);
        assert!(api.retryable);
        assert!(api.message.contains("boom"));
    }
}
