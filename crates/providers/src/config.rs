//! [`ProviderConfig`]: how to reach one provider, whatever its wire format. Every format
//! module takes one; none of them needs to know the others.

use std::fmt;

use crate::http::ProviderHttp;
use crate::retry::RetryPolicy;

/// How to reach one provider, whatever its format.
#[derive(Clone)]
pub struct ProviderConfig {
    /// Shown to the user in error messages, e.g. `Anthropic` or `My Ollama`.
    pub provider_name: String,
    /// E.g. `https://api.anthropic.com/v1`; a trailing `/` is fine.
    pub base_url: String,
    /// Sent the way the format expects (`Authorization: Bearer`, `x-api-key`,
    /// `x-goog-api-key`) when set and not empty. Never logged.
    pub api_key: Option<String>,
    pub http: ProviderHttp,
    /// Retries before the first byte of the answer.
    pub retry: RetryPolicy,
}

impl ProviderConfig {
    /// A config with the default [`RetryPolicy`].
    pub fn new(
        provider_name: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
        http: ProviderHttp,
    ) -> Self {
        Self {
            provider_name: provider_name.into(),
            base_url: base_url.into(),
            api_key,
            http,
            retry: RetryPolicy::default(),
        }
    }

    /// The key, if one is set and not blank.
    pub(crate) fn key(&self) -> Option<&str> {
        self.api_key.as_deref().map(str::trim).filter(|key| !key.is_empty())
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider_name", &self.provider_name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}
