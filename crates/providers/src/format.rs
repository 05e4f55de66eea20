//! Which wire format is built by which module: [`model_for`], [`list_models_for`] and
//! [`StreamDecoder::new`] pick the implementation of an [`ApiFormat`] (`protocol`'s, the one
//! enum of wire formats). The format modules never import this table; what they share
//! lives in `config.rs`, `decoder.rs` and `transport.rs`.

use std::sync::Arc;

use protocol::api::ApiFormat;

use crate::anthropic::{self, AnthropicMessages};
use crate::config::ProviderConfig;
use crate::decoder::StreamDecoder;
use crate::error::ProviderError;
use crate::gemini::{self, Gemini};
use crate::http::ProviderHttp;
use crate::language_model::LanguageModel;
use crate::openai_chat::{self, OpenAiChat};
use crate::openai_responses::{self, OpenAiResponses};

impl StreamDecoder {
    /// A decoder for `format`; `provider` names the provider in error messages.
    pub fn new(format: ApiFormat, provider: &str) -> Self {
        match format {
            ApiFormat::OpenaiChat => openai_chat::decoder(provider),
            ApiFormat::OpenaiResponses => openai_responses::decoder(provider),
            ApiFormat::Anthropic => anthropic::decoder(provider),
            ApiFormat::Gemini => gemini::decoder(provider),
        }
    }
}

/// A model speaking `format`, reached through `config`.
pub fn model_for(format: ApiFormat, config: ProviderConfig) -> Arc<dyn LanguageModel> {
    match format {
        ApiFormat::OpenaiChat => Arc::new(OpenAiChat::from_config(config)),
        ApiFormat::OpenaiResponses => Arc::new(OpenAiResponses::new(config)),
        ApiFormat::Anthropic => Arc::new(AnthropicMessages::new(config)),
        ApiFormat::Gemini => Arc::new(Gemini::new(config)),
    }
}

/// Lists the model ids a provider offers, sorted and without duplicates: `GET {base}/models`
/// for the OpenAI formats and Anthropic, `GET {base}/models` (Gemini's shape, only models
/// that can generate content, without the `models/` prefix) for Gemini. An error never
/// carries the API key, whatever the endpoint echoed.
pub async fn list_models_for(
    format: ApiFormat,
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    list_models_of(format, http, base_url, api_key).await.map_err(|err| err.without_secret(api_key))
}

async fn list_models_of(
    format: ApiFormat,
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let mut models = match format {
        ApiFormat::OpenaiChat | ApiFormat::OpenaiResponses => {
            return openai_chat::list_models(http, base_url, api_key).await;
        }
        ApiFormat::Anthropic => anthropic::list_models(http, base_url, api_key).await?,
        ApiFormat::Gemini => gemini::list_models(http, base_url, api_key).await?,
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
        for format in ApiFormat::ALL {
            assert_eq!(format.as_str().parse(), Ok(format));
            assert_eq!(serde_json::to_value(format).unwrap(), serde_json::json!(format.as_str()));
        }
        let err = "openai".parse::<ApiFormat>().unwrap_err();
        assert!(err.contains("openai_chat, openai_responses, anthropic or gemini"), "{err}");
    }

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let config =
            ProviderConfig::new("Acme", "http://h/v1", Some("sk-very-secret".into()), ProviderHttp::new().unwrap());
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-very-secret") && shown.contains("<redacted>"), "{shown}");
        for format in ApiFormat::ALL {
            let _model = model_for(format, config.clone());
        }
    }
}
