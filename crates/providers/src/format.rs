//! [`ProviderFormat`]: which wire format a provider speaks, and building a model or listing
//! models for any of them from stored settings ([`model_for`], [`list_models_for`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::anthropic::{self, AnthropicMessages};
use crate::decoder::EventMapper;
use crate::error::ProviderError;
use crate::gemini::{self, Gemini};
use crate::http::ProviderHttp;
use crate::language_model::LanguageModel;
use crate::openai_chat::{self, OpenAiChat};
use crate::openai_responses::OpenAiResponses;
use crate::retry::RetryPolicy;

/// The wire format of a provider's API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFormat {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), also spoken by OpenRouter,
    /// DeepSeek, Ollama, LM Studio, vLLM and most other servers.
    OpenaiChat,
    /// OpenAI Responses (`POST {base}/responses`).
    OpenaiResponses,
    /// Anthropic Messages (`POST {base}/messages`, base usually `https://api.anthropic.com/v1`).
    Anthropic,
    /// Google Gemini (`POST {base}/models/{model}:streamGenerateContent?alt=sse`).
    Gemini,
}

impl ProviderFormat {
    pub const ALL: [ProviderFormat; 4] = [
        ProviderFormat::OpenaiChat,
        ProviderFormat::OpenaiResponses,
        ProviderFormat::Anthropic,
        ProviderFormat::Gemini,
    ];

    /// The stable snake_case name, as stored and as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderFormat::OpenaiChat => "openai_chat",
            ProviderFormat::OpenaiResponses => "openai_responses",
            ProviderFormat::Anthropic => "anthropic",
            ProviderFormat::Gemini => "gemini",
        }
    }

    pub(crate) fn event_mapper(self, provider: &str) -> Box<dyn EventMapper> {
        match self {
            ProviderFormat::OpenaiChat => {
                Box::new(openai_chat::ChatEventMapper::new(provider, crate::call_id::fresh_seed()))
            }
            ProviderFormat::OpenaiResponses => {
                Box::new(crate::openai_responses::ResponsesEventMapper::new(provider, crate::call_id::fresh_seed()))
            }
            ProviderFormat::Anthropic => Box::new(anthropic::MessagesEventMapper::new(provider)),
            ProviderFormat::Gemini => Box::new(gemini::GeminiEventMapper::new(provider, crate::call_id::fresh_seed())),
        }
    }
}

impl fmt::Display for ProviderFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderFormat::ALL.into_iter().find(|format| format.as_str() == s.trim()).ok_or_else(|| {
            format!("unknown API format “{s}” (expected openai_chat, openai_responses, anthropic or gemini)")
        })
    }
}

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

/// A model speaking `format`, reached through `config`.
pub fn model_for(format: ProviderFormat, config: ProviderConfig) -> Arc<dyn LanguageModel> {
    match format {
        ProviderFormat::OpenaiChat => Arc::new(OpenAiChat::from_config(config)),
        ProviderFormat::OpenaiResponses => Arc::new(OpenAiResponses::new(config)),
        ProviderFormat::Anthropic => Arc::new(AnthropicMessages::new(config)),
        ProviderFormat::Gemini => Arc::new(Gemini::new(config)),
    }
}

/// Lists the model ids a provider offers, sorted and without duplicates: `GET {base}/models`
/// for the OpenAI formats and Anthropic, `GET {base}/models` (Gemini's shape, only models
/// that can generate content, without the `models/` prefix) for Gemini. An error never
/// carries the API key, whatever the endpoint echoed.
pub async fn list_models_for(
    format: ProviderFormat,
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    list_models_of(format, http, base_url, api_key).await.map_err(|err| err.without_secret(api_key))
}

async fn list_models_of(
    format: ProviderFormat,
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let mut models = match format {
        ProviderFormat::OpenaiChat | ProviderFormat::OpenaiResponses => {
            return openai_chat::list_models(http, base_url, api_key).await;
        }
        ProviderFormat::Anthropic => anthropic::list_models(http, base_url, api_key).await?,
        ProviderFormat::Gemini => gemini::list_models(http, base_url, api_key).await?,
    };
    models.retain(|id| !id.trim().is_empty());
    models.sort();
    models.dedup();
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_round_trip_through_their_names() {
        for format in ProviderFormat::ALL {
            assert_eq!(format.as_str().parse(), Ok(format));
            assert_eq!(serde_json::to_value(format).unwrap(), serde_json::json!(format.as_str()));
        }
        let err = "openai".parse::<ProviderFormat>().unwrap_err();
        assert!(err.contains("openai_chat, openai_responses, anthropic or gemini"), "{err}");
    }

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let config =
            ProviderConfig::new("Acme", "http://h/v1", Some("sk-very-secret".into()), ProviderHttp::new().unwrap());
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-very-secret") && shown.contains("<redacted>"), "{shown}");
        for format in ProviderFormat::ALL {
            let _model = model_for(format, config.clone());
        }
    }
}
