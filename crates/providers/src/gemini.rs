//! Google Gemini (`POST {base_url}/models/{model}:streamGenerateContent?alt=sse`, base
//! usually `https://generativelanguage.googleapis.com/v1beta`), with thoughts and thought
//! signatures.
//!
//! - `request`: [`CompletionRequest`] → request body.
//! - `types`: lenient response and model-list wire types.
//! - `mapper`: the pure frame → [`CompletionEvent`](crate::CompletionEvent) mapper.
//! - here: the model ([`Gemini`]) and [`list_models`].

mod mapper;
mod request;
mod types;

use std::sync::Arc;

use protocol::api::ApiFormat;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName};

use crate::base_url::{endpoint, endpoint_with_query, validate_base_url};
use crate::config::ProviderConfig;
use crate::decoder::StreamDecoder;
use crate::error::{ProviderError, ProviderErrorKind};
use crate::http::ProviderHttp;
use crate::language_model::{CompletionRequest, CompletionStream, LanguageModel};
use crate::transport::{self, StreamingCall, secret_header};

use mapper::GeminiEventMapper;
use request::GenerateContentRequest;
use types::ModelPage;

/// The key travels in a header, never in the URL (URLs end up in logs).
const API_KEY: HeaderName = HeaderName::from_static("x-goog-api-key");

/// Pages of the model list read at most (1000 models each).
const MAX_MODEL_PAGES: usize = 10;

/// A [`LanguageModel`] backed by the Gemini API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Gemini {
    config: Arc<ProviderConfig>,
}

impl Gemini {
    pub fn new(config: ProviderConfig) -> Self {
        Self { config: Arc::new(config) }
    }

    pub fn provider_name(&self) -> &str {
        &self.config.provider_name
    }
}

impl LanguageModel for Gemini {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        transport::completion_stream(streaming_call(&self.config, &request))
    }

    fn format_name(&self) -> &'static str {
        ApiFormat::Gemini.as_str()
    }
}

fn streaming_call(config: &ProviderConfig, request: &CompletionRequest) -> Result<StreamingCall, ProviderError> {
    let provider = &config.provider_name;
    let body = transport::json_body(provider, &GenerateContentRequest::new(request))?;
    let path = format!("models/{}:streamGenerateContent?alt=sse", model_path_segment(&request.model));
    let mut builder = config
        .http
        .streams()
        .post(endpoint(&config.base_url, &path))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    if let Some(key) = config.key() {
        builder = builder.header(API_KEY, secret_header(key)?);
    }
    tracing::debug!(provider = %provider, model = %request.model, "opening a gemini stream");
    Ok(StreamingCall {
        provider: provider.clone(),
        http: config.http.streams().clone(),
        request: builder.build().map_err(|err| ProviderError::from_request_error(provider, &err))?,
        retry: config.retry,
        decoder: decoder(provider),
        base_url_hint: " (for Gemini it is usually https://generativelanguage.googleapis.com/v1beta)",
        secret: config.key().map(str::to_owned),
    })
}

/// A decoder of this format's answers; `provider` names the provider in error messages.
pub(crate) fn decoder(provider: &str) -> StreamDecoder {
    StreamDecoder::with_mapper(provider, Box::new(GeminiEventMapper::new(provider, crate::call_id::fresh_seed())))
}

/// The model as one path segment: without the `models/` prefix the model list gives, and
/// with anything outside `[A-Za-z0-9._-]` percent-encoded.
fn model_path_segment(model: &str) -> String {
    let model = model.trim();
    let model = model.strip_prefix("models/").unwrap_or(model);
    let mut out = String::with_capacity(model.len());
    for byte in model.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Lists the models a Gemini endpoint can generate content with (`GET {base_url}/models`,
/// every page), without their `models/` prefix.
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
    let mut page_token: Option<String> = None;
    for _ in 0..MAX_MODEL_PAGES {
        let mut query = vec![("pageSize", "1000")];
        query.extend(page_token.as_deref().map(|token| ("pageToken", token)));
        let mut request =
            http.client().get(endpoint_with_query(url.as_str(), "models", &query)).header(ACCEPT, "application/json");
        if let Some(key) = api_key {
            request = request.header(API_KEY, secret_header(key)?);
        }
        let (status, body) = transport::get_json(&provider, request).await?;
        let page: ModelPage = serde_json::from_slice(&body).map_err(|_| {
            transport::not_a_model_list(&provider, status, &body, "for Gemini the base URL ends in /v1beta")
        })?;
        let generates = |methods: &Option<Vec<String>>| {
            methods.as_ref().is_none_or(|methods| methods.iter().any(|m| m.contains("generateContent")))
        };
        models.extend(
            page.models
                .into_iter()
                .filter(|model| generates(&model.supported_generation_methods))
                .filter_map(|model| model.name)
                .map(|name| name.strip_prefix("models/").map(str::to_owned).unwrap_or(name)),
        );
        match page.next_page_token.filter(|token| !token.is_empty()) {
            Some(token) => page_token = Some(token),
            None => break,
        }
    }
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_become_one_safe_path_segment() {
        assert_eq!(model_path_segment("gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(model_path_segment(" models/gemini-2.0-flash-001 "), "gemini-2.0-flash-001");
        assert_eq!(model_path_segment("a/b:c?d"), "a%2Fb%3Ac%3Fd");
    }
}
