//! OpenAI Responses (`POST {base_url}/responses`): OpenAI's newer API, with reasoning
//! summaries and output items.
//!
//! - `request`: [`CompletionRequest`] → request body.
//! - `types`: lenient stream-event and response wire types.
//! - `mapper`: the pure frame → [`CompletionEvent`](crate::CompletionEvent) mapper.
//! - here: the model, [`OpenAiResponses`]. Models are listed like Chat Completions'
//!   ([`crate::list_models`]).

mod mapper;
mod request;
mod types;

use std::sync::Arc;

use protocol::api::ApiFormat;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use crate::base_url::endpoint;
use crate::config::ProviderConfig;
use crate::decoder::StreamDecoder;
use crate::error::ProviderError;
use crate::language_model::{CompletionRequest, CompletionStream, LanguageModel};
use crate::transport::{self, StreamingCall, secret_header};

use mapper::ResponsesEventMapper;
use request::ResponsesRequest;

/// A [`LanguageModel`] backed by an OpenAI Responses endpoint. Cheap to clone.
#[derive(Clone, Debug)]
pub struct OpenAiResponses {
    config: Arc<ProviderConfig>,
}

impl OpenAiResponses {
    pub fn new(config: ProviderConfig) -> Self {
        Self { config: Arc::new(config) }
    }

    pub fn provider_name(&self) -> &str {
        &self.config.provider_name
    }
}

impl LanguageModel for OpenAiResponses {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        transport::completion_stream(streaming_call(&self.config, &request))
    }

    fn format_name(&self) -> &'static str {
        ApiFormat::OpenaiResponses.as_str()
    }
}

fn streaming_call(config: &ProviderConfig, request: &CompletionRequest) -> Result<StreamingCall, ProviderError> {
    let provider = &config.provider_name;
    let body = transport::json_body(provider, &ResponsesRequest::streaming(request))?;
    let mut builder = config
        .http
        .streams()
        .post(endpoint(&config.base_url, "responses"))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    if let Some(key) = config.key() {
        builder = builder.header(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    tracing::debug!(provider = %provider, model = %request.model, "opening a responses stream");
    Ok(StreamingCall {
        provider: provider.clone(),
        http: config.http.streams().clone(),
        request: builder.build().map_err(|err| ProviderError::from_request_error(provider, &err))?,
        retry: config.retry,
        decoder: decoder(provider),
        base_url_hint: " (it should end in something like /v1)",
        secret: config.key().map(str::to_owned),
    })
}

/// A decoder of this format's answers; `provider` names the provider in error messages.
pub(crate) fn decoder(provider: &str) -> StreamDecoder {
    StreamDecoder::with_mapper(provider, Box::new(ResponsesEventMapper::new(provider, crate::call_id::fresh_seed())))
}
