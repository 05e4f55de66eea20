//! OpenAI Chat Completions (`POST {base_url}/chat/completions`), the wire format OpenAI and
//! nearly every compatible server speak.
//!
//! - `request`: [`CompletionRequest`] → request body.
//! - `types`: lenient response wire types.
//! - `mapper`: the pure frame → [`CompletionEvent`] mapper.
//! - here: the model ([`OpenAiChat`]) and [`list_models`]; the HTTP exchange itself is
//!   shared by every format (`transport.rs`).

mod mapper;
mod request;
mod types;

use std::fmt;
use std::sync::Arc;

use protocol::api::ApiFormat;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use crate::base_url::{endpoint, validate_base_url};
use crate::config::ProviderConfig;
use crate::decoder::StreamDecoder;
use crate::error::{ProviderError, ProviderErrorKind};
use crate::http::ProviderHttp;
use crate::language_model::{CompletionRequest, CompletionStream, LanguageModel};
use crate::retry::RetryPolicy;
use crate::transport::{self, StreamingCall, secret_header};

use mapper::ChatEventMapper;
use request::ChatCompletionRequest;
use types::ModelList;

/// How to reach one OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct OpenAiChatConfig {
    /// Shown to the user in error messages, e.g. `OpenAI` or `My Ollama`.
    pub provider_name: String,
    /// E.g. `https://api.openai.com/v1`; a trailing `/` is fine.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set and not empty.
    pub api_key: Option<String>,
    pub http: ProviderHttp,
}

impl fmt::Debug for OpenAiChatConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiChatConfig")
            .field("provider_name", &self.provider_name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

/// A [`LanguageModel`] backed by a Chat Completions endpoint. Cheap to clone.
///
/// Built with [`OpenAiChat::new`] it sends each request once; [`OpenAiChat::with_retry`]
/// (or [`crate::model_for`]) adds retries before the first byte.
#[derive(Clone, Debug)]
pub struct OpenAiChat {
    config: Arc<ProviderConfig>,
}

impl OpenAiChat {
    /// A model that never retries.
    pub fn new(config: OpenAiChatConfig) -> Self {
        let OpenAiChatConfig { provider_name, base_url, api_key, http } = config;
        Self::from_config(ProviderConfig { provider_name, base_url, api_key, http, retry: RetryPolicy::none() })
    }

    pub fn from_config(config: ProviderConfig) -> Self {
        Self { config: Arc::new(config) }
    }

    /// The same model, retrying refused requests as `policy` says.
    #[must_use]
    pub fn with_retry(self, policy: RetryPolicy) -> Self {
        let mut config = Arc::unwrap_or_clone(self.config);
        config.retry = policy;
        Self::from_config(config)
    }

    pub fn provider_name(&self) -> &str {
        &self.config.provider_name
    }
}

impl LanguageModel for OpenAiChat {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        transport::completion_stream(streaming_call(&self.config, &request))
    }

    fn format_name(&self) -> &'static str {
        ApiFormat::OpenaiChat.as_str()
    }
}

fn streaming_call(config: &ProviderConfig, request: &CompletionRequest) -> Result<StreamingCall, ProviderError> {
    let provider = &config.provider_name;
    let body = transport::json_body(provider, &ChatCompletionRequest::streaming(request))?;
    let mut builder = config
        .http
        .streams()
        .post(endpoint(&config.base_url, "chat/completions"))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    if let Some(key) = config.key() {
        builder = builder.header(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    tracing::debug!(provider = %provider, model = %request.model, "opening a chat completion stream");
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
    StreamDecoder::with_mapper(provider, Box::new(ChatEventMapper::new(provider, crate::call_id::fresh_seed())))
}

/// Lists the model ids an OpenAI-compatible endpoint offers (`GET {base_url}/models`),
/// sorted and without duplicates.
pub async fn list_models(
    http: &ProviderHttp,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let url = validate_base_url(base_url)
        .map_err(|message| ProviderError::new(ProviderErrorKind::InvalidRequest, message))?;
    let provider = url.host_str().unwrap_or("the provider").to_owned();
    let mut builder = http.client().get(endpoint(url.as_str(), "models")).header(ACCEPT, "application/json");
    if let Some(key) = api_key.map(str::trim).filter(|key| !key.is_empty()) {
        builder = builder.header(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    let (status, body) = transport::get_json(&provider, builder).await?;
    let list: ModelList = serde_json::from_slice(&body)
        .map_err(|_| transport::not_a_model_list(&provider, status, &body, "the base URL usually ends in /v1"))?;
    let mut models: Vec<String> =
        list.data.into_iter().filter_map(|model| model.id).filter(|id| !id.trim().is_empty()).collect();
    models.sort();
    models.dedup();
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::Item;
    use crate::language_model::{CompletionEvent, StopReason, TokenUsage};

    const TRANSCRIPT: &str = concat!(
        ": OPENROUTER PROCESSING\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Let me think… 🤔\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Ünïcödé \"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"✓ done\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n",
        "data: [DONE]\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after done\"}}]}\n\n",
    );

    fn decode(chunks: &[&[u8]]) -> Vec<Item> {
        let mut decoder = decoder("Acme");
        let mut out: Vec<Item> = chunks.iter().flat_map(|chunk| decoder.push(chunk)).collect();
        out.extend(decoder.finish());
        out
    }

    #[test]
    fn decodes_a_recorded_transcript() {
        assert_eq!(
            decode(&[TRANSCRIPT.as_bytes()]),
            vec![
                Ok(CompletionEvent::ReasoningDelta("Let me think… 🤔".into())),
                Ok(CompletionEvent::TextDelta("Ünïcödé ".into())),
                Ok(CompletionEvent::TextDelta("✓ done".into())),
                Ok(CompletionEvent::ToolCallStart { index: 0, id: "c".into(), name: "f".into() }),
                Ok(CompletionEvent::ToolCallDelta { index: 0, arguments: "{}".into() }),
                Ok(CompletionEvent::Usage(TokenUsage::new(5, 7))),
                Ok(CompletionEvent::Finish { reason: StopReason::Stop }),
            ]
        );
    }

    /// Network chunking never changes the events (text deltas included: SSE frames, not
    /// bytes, delimit them).
    #[test]
    fn every_split_point_yields_the_same_events() {
        let bytes = TRANSCRIPT.as_bytes();
        let expected = decode(&[bytes]);
        for split in 0..=bytes.len() {
            assert_eq!(decode(&[&bytes[..split], &bytes[split..]]), expected, "split at byte {split}");
        }
        let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&one_by_one), expected);
    }

    #[test]
    fn nothing_comes_out_after_an_error() {
        let mut decoder = decoder("Acme");
        let out = decoder.push(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\ndata: {\"choices\":[]}\n\n",
        );
        assert_eq!(out.len(), 2);
        assert!(out[1].is_err());
        assert!(decoder.push(b"data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n").is_empty());
        assert!(decoder.finish().is_empty());
        assert!(decoder.fail(ProviderError::ended_early("Acme")).is_empty());
    }

    #[test]
    fn a_last_frame_without_blank_line_still_counts() {
        let out = decode(&[
            b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]",
        ]);
        assert_eq!(
            out,
            vec![Ok(CompletionEvent::TextDelta("a".into())), Ok(CompletionEvent::Finish { reason: StopReason::Stop })]
        );
    }

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let config = OpenAiChatConfig {
            provider_name: "Acme".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            api_key: Some("sk-very-secret".into()),
            http: ProviderHttp::new().unwrap(),
        };
        let model = OpenAiChat::new(config);
        let shown = format!("{model:?} {:?}", model.clone().with_retry(RetryPolicy::default()));
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
