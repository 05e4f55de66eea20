//! Anthropic Messages (`POST {base_url}/messages`, base usually `https://api.anthropic.com/v1`),
//! with extended thinking: thinking text, signatures and redacted thinking.
//!
//! - `request`: [`CompletionRequest`] → request body.
//! - `types`: lenient stream-event, message and model-list wire types.
//! - `mapper`: the pure frame → [`CompletionEvent`](crate::CompletionEvent) mapper.
//! - here: the model ([`AnthropicMessages`]) and [`list_models`].

mod mapper;
mod request;
mod types;

use std::sync::Arc;

use protocol::api::ApiFormat;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};

use crate::base_url::{endpoint, endpoint_with_query, validate_base_url};
use crate::config::ProviderConfig;
use crate::decoder::StreamDecoder;
use crate::error::{ProviderError, ProviderErrorKind};
use crate::http::ProviderHttp;
use crate::language_model::{CompletionRequest, CompletionStream, LanguageModel};
use crate::transport::{self, StreamingCall, secret_header};

use mapper::MessagesEventMapper;
pub use request::DEFAULT_MAX_TOKENS;
use request::MessagesRequest;
use types::ModelPage;

/// The API version every request names (`anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

const API_KEY: HeaderName = HeaderName::from_static("x-api-key");
const VERSION: HeaderName = HeaderName::from_static("anthropic-version");

/// Pages of the model list read at most (1000 models each).
const MAX_MODEL_PAGES: usize = 10;

/// A [`LanguageModel`] backed by the Anthropic Messages API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AnthropicMessages {
    config: Arc<ProviderConfig>,
}

impl AnthropicMessages {
    pub fn new(config: ProviderConfig) -> Self {
        Self { config: Arc::new(config) }
    }

    pub fn provider_name(&self) -> &str {
        &self.config.provider_name
    }
}

impl LanguageModel for AnthropicMessages {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        transport::completion_stream(streaming_call(&self.config, &request))
    }

    fn format_name(&self) -> &'static str {
        ApiFormat::Anthropic.as_str()
    }
}

fn streaming_call(config: &ProviderConfig, request: &CompletionRequest) -> Result<StreamingCall, ProviderError> {
    let provider = &config.provider_name;
    let body = transport::json_body(provider, &MessagesRequest::streaming(request))?;
    let builder = with_auth(
        config
            .http
            .streams()
            .post(endpoint(&config.base_url, "messages"))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body),
        config.key(),
    )?;
    tracing::debug!(provider = %provider, model = %request.model, "opening a messages stream");
    Ok(StreamingCall {
        provider: provider.clone(),
        http: config.http.streams().clone(),
        request: builder.build().map_err(|err| ProviderError::from_request_error(provider, &err))?,
        retry: config.retry,
        decoder: decoder(provider),
        base_url_hint: " (for Anthropic it is usually https://api.anthropic.com/v1)",
        secret: config.key().map(str::to_owned),
    })
}

/// A decoder of this format's answers; `provider` names the provider in error messages.
pub(crate) fn decoder(provider: &str) -> StreamDecoder {
    StreamDecoder::with_mapper(provider, Box::new(MessagesEventMapper::new(provider)))
}

fn with_auth(
    builder: reqwest::RequestBuilder,
    api_key: Option<&str>,
) -> Result<reqwest::RequestBuilder, ProviderError> {
    let builder = builder.header(VERSION, HeaderValue::from_static(API_VERSION));
    Ok(match api_key {
        Some(key) => builder.header(API_KEY, secret_header(key)?),
        None => builder,
    })
}

/// Lists the model ids an Anthropic endpoint offers (`GET {base_url}/models`, every page).
pub async fn list_models(
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let url = validate_base_url(base_url)
        .map_err(|message| ProviderError::new(ProviderErrorKind::InvalidRequest, message))?;
    let provider = url.host_str().unwrap_or("the provider").to_owned();
    let api_key = api_key.map(str::trim).filter(|key| !key.is_empty());
    let mut models = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_MODEL_PAGES {
        let mut query = vec![("limit", "1000")];
        query.extend(after.as_deref().map(|id| ("after_id", id)));
        let request =
            http.client().get(endpoint_with_query(url.as_str(), "models", &query)).header(ACCEPT, "application/json");
        let (status, body) = transport::get_json(&provider, with_auth(request, api_key)?).await?;
        let page: ModelPage = serde_json::from_slice(&body).map_err(|_| {
            transport::not_a_model_list(&provider, status, &body, "for Anthropic the base URL ends in /v1")
        })?;
        models.extend(page.data.into_iter().filter_map(|model| model.id));
        match (page.has_more, page.last_id) {
            (Some(true), Some(last)) => after = Some(last),
            _ => break,
        }
    }
    Ok(models)
}
