//! [`ProviderHttp`]: the HTTP client provider calls go through.
//!
//! Requests carry the API key in a header (`Authorization`, `x-api-key`,
//! `x-goog-api-key`). reqwest drops only `Authorization` (and cookies) when a redirect
//! leaves the host, so a redirect to another origin would hand the other keys to whoever
//! answers there. The client follows a redirect only within the origin the request was
//! sent to (or from `http` to `https` on the same host); any other redirect fails the call
//! with [`CrossOriginRedirect`], which [`crate::ProviderError::from_request_error`] turns
//! into an `invalid_request` that names both places.

use std::fmt;

use reqwest::redirect::{Action, Attempt, Policy};

/// How many redirects one call follows.
const MAX_REDIRECTS: usize = 10;

/// An HTTP client for provider calls: it never follows a redirect to another origin.
/// Cheap to clone (the connection pools are shared).
#[derive(Clone)]
pub struct ProviderHttp {
    client: reqwest::Client,
    /// For model streams; the same client unless [`Self::with_stream_pool`] gave them one.
    streams: reqwest::Client,
}

impl ProviderHttp {
    /// A client with reqwest's defaults and the provider redirect policy.
    pub fn new() -> Result<Self, reqwest::Error> {
        Self::from_builder(reqwest::Client::builder())
    }

    /// `builder` (timeouts, user agent, …) with the provider redirect policy, which
    /// replaces any redirect policy the builder had.
    pub fn from_builder(builder: reqwest::ClientBuilder) -> Result<Self, reqwest::Error> {
        let client = limited(builder)?;
        Ok(Self { streams: client.clone(), client })
    }

    /// Model streams get connections of their own, from `builder` (with the same
    /// redirect policy). A connection is driven by the tokio runtime that opened it, and
    /// streams run on the stream manager's thread: a connection opened for a model list
    /// on another runtime, reused by a stream, would wake two threads for every chunk.
    pub fn with_stream_pool(self, builder: reqwest::ClientBuilder) -> Result<Self, reqwest::Error> {
        Ok(Self { streams: limited(builder)?, ..self })
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The client model streams are opened with.
    pub(crate) fn streams(&self) -> &reqwest::Client {
        &self.streams
    }
}

fn limited(builder: reqwest::ClientBuilder) -> Result<reqwest::Client, reqwest::Error> {
    let limited = Policy::limited(MAX_REDIRECTS);
    builder.redirect(Policy::custom(move |attempt| same_origin(attempt, &limited))).build()
}

impl fmt::Debug for ProviderHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProviderHttp")
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

/// A provider redirected a call to another origin; it was not followed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("redirected from {from} to {to}, another origin")]
pub struct CrossOriginRedirect {
    /// The origin the call was sent to, e.g. `https://api.anthropic.com`.
    pub from: String,
    /// Where the provider redirected it.
    pub to: String,
}
