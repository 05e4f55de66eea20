//! OpenAI Chat Completions (`POST {base_url}/chat/completions`), the wire format OpenAI and
//! nearly every compatible server speak.
//!
//! - `request`: [`CompletionRequest`] → request body.
//! - `types`: lenient response wire types.
//! - `mapper`: the pure frame → [`CompletionEvent`] mapper.
//! - here: the HTTP exchange, and [`ChatStreamDecoder`], which joins the SSE decoder and the
//!   mapper into one byte-fed state machine.

mod mapper;
mod request;
mod types;

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use crate::base_url::{endpoint, validate_base_url};
use crate::error::{BodyShape, ProviderError, ProviderErrorKind};
use crate::language_model::{CompletionEvent, CompletionRequest, CompletionStream, LanguageModel};
use crate::sse::{SseDecoder, SseFrame};

use mapper::{ChatEventMapper, FrameOutcome};
use request::ChatCompletionRequest;
use types::{ChatCompletion, ModelList};

/// How much of an error body is read to explain the error; the rest is dropped.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// How to reach one OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct OpenAiChatConfig {
    /// Shown to the user in error messages, e.g. `OpenAI` or `My Ollama`.
    pub provider_name: String,
    /// E.g. `https://api.openai.com/v1`; a trailing `/` is fine.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set and not empty.
    pub api_key: Option<String>,
    pub http: reqwest::Client,
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
#[derive(Clone, Debug)]
pub struct OpenAiChat {
    config: Arc<OpenAiChatConfig>,
}

impl OpenAiChat {
    pub fn new(config: OpenAiChatConfig) -> Self {
        Self { config: Arc::new(config) }
    }

    pub fn provider_name(&self) -> &str {
        &self.config.provider_name
    }
}

impl LanguageModel for OpenAiChat {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        let config = Arc::clone(&self.config);
        let opened = async move { open_stream(&config, &request).await.map(|response| (config, response)) };
        stream::once(opened)
            .flat_map(|opened| match opened {
                Ok((config, response)) => response_events(&config.provider_name, response),
                Err(err) => stream::iter([Err(err)]).boxed(),
            })
            .boxed()
    }
}

/// Sends the request and checks the status; the `Ok` response is 2xx.
async fn open_stream(
    config: &OpenAiChatConfig,
    request: &CompletionRequest,
) -> Result<reqwest::Response, ProviderError> {
    let provider = &config.provider_name;
    let body = serde_json::to_vec(&ChatCompletionRequest::streaming(request)).map_err(|err| {
        ProviderError::new(
            ProviderErrorKind::InvalidRequest,
            format!("could not encode the request for {provider}: {err}"),
        )
    })?;
    let mut builder = config
        .http
        .post(endpoint(&config.base_url, "chat/completions"))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    if let Some(key) = config.api_key.as_deref().filter(|key| !key.is_empty()) {
        // `bearer_auth` marks the header sensitive, so it never shows in debug output.
        builder = builder.bearer_auth(key);
    }
    tracing::debug!(provider = %provider, model = %request.model, "opening a chat completion stream");
    let response = builder.send().await.map_err(|err| ProviderError::from_request_error(provider, &err))?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let body = read_capped(response).await;
        let err = ProviderError::from_http_status(provider, status, &body);
        tracing::debug!(provider = %provider, status, kind = err.kind.as_str(), "provider refused the request");
        return Err(err);
    }
    Ok(response)
}

/// The events of a 2xx response: usually an event stream, but a server that ignored
/// `stream: true` answers with one JSON completion, and a wrong base URL with a web page.
fn response_events(
    provider: &str,
    response: reqwest::Response,
) -> BoxStream<'static, Result<CompletionEvent, ProviderError>> {
    let provider = provider.to_owned();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        return stream::once(whole_completion(provider, response)).flat_map(stream::iter).boxed();
    }
    if content_type.starts_with("text/html") {
        let status = response.status().as_u16();
        let error = async move {
            let body = read_capped(response).await;
            let mut err = ProviderError::unexpected_body(&provider, status, &BodyShape::of(&body));
            err.message = format!("{} (it should end in something like /v1)", err.message);
            Err(err)
        };
        return stream::once(error).boxed();
    }
    sse_events(provider, response)
}

async fn whole_completion(
    provider: String,
    response: reqwest::Response,
) -> Vec<Result<CompletionEvent, ProviderError>> {
    let status = response.status().as_u16();
    let body = match response.bytes().await {
        Ok(body) => body,
        Err(err) => return vec![Err(ProviderError::from_body_error(&provider, &err))],
    };
    let completion: ChatCompletion = match serde_json::from_slice(&body) {
        Ok(completion) => completion,
        // An event stream mislabelled as JSON (some proxies do that): decode it as one.
        Err(_) if body.trim_ascii_start().starts_with(b"data:") => {
            let mut decoder = ChatStreamDecoder::new(&provider);
            let mut items = decoder.push(&body);
            items.extend(decoder.finish());
            return items;
        }
        Err(_) => return vec![Err(ProviderError::unexpected_body(&provider, status, &BodyShape::of(&body)))],
    };
    match ChatEventMapper::new(provider).map_completion(completion) {
        Ok(events) => events.into_iter().map(Ok).collect(),
        Err(err) => vec![Err(err)],
    }
}

/// Reads the body as an event stream; dropping the returned stream drops the body, which
/// closes the connection and so cancels the request upstream.
fn sse_events(
    provider: String,
    response: reqwest::Response,
) -> BoxStream<'static, Result<CompletionEvent, ProviderError>> {
    struct Reading {
        provider: String,
        body: BoxStream<'static, reqwest::Result<Bytes>>,
        decoder: ChatStreamDecoder,
        ready: VecDeque<Result<CompletionEvent, ProviderError>>,
    }
    let reading = Reading {
        decoder: ChatStreamDecoder::new(&provider),
        provider,
        body: response.bytes_stream().boxed(),
        ready: VecDeque::new(),
    };
    stream::unfold(reading, |mut reading| async move {
        loop {
            if let Some(item) = reading.ready.pop_front() {
                return Some((item, reading));
            }
            if reading.decoder.is_finished() {
                return None;
            }
            let events = match reading.body.next().await {
                Some(Ok(bytes)) => reading.decoder.push(&bytes),
                Some(Err(err)) => reading.decoder.fail(ProviderError::from_body_error(&reading.provider, &err)),
                None => reading.decoder.finish(),
            };
            reading.ready.extend(events);
        }
    })
    .boxed()
}

/// Bytes of a Chat Completions event stream in, events out: the SSE decoder and the
/// mapper behind one explicit lifecycle. Nothing comes out after the first error or the
/// final `Finish`.
#[derive(Debug)]
pub(crate) struct ChatStreamDecoder {
    sse: SseDecoder,
    mapper: ChatEventMapper,
    phase: Phase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Streaming,
    /// Ended by `[DONE]`, EOF or an error; later input is ignored.
    Finished,
}

type Item = Result<CompletionEvent, ProviderError>;

impl ChatStreamDecoder {
    pub(crate) fn new(provider: &str) -> Self {
        Self { sse: SseDecoder::new(), mapper: ChatEventMapper::new(provider), phase: Phase::Streaming }
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Feeds one network chunk.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<Item> {
        let mut out = Vec::new();
        if self.is_finished() {
            return out;
        }
        for frame in self.sse.push(bytes) {
            self.apply(&frame, &mut out);
            if self.is_finished() {
                break;
            }
        }
        out
    }

    /// The body ended.
    pub(crate) fn finish(&mut self) -> Vec<Item> {
        let mut out = Vec::new();
        if let Some(frame) = self.sse.finish().filter(|_| !self.is_finished()) {
            self.apply(&frame, &mut out);
        }
        if !self.is_finished() {
            self.phase = Phase::Finished;
            match self.mapper.on_end_of_stream() {
                Ok(events) => out.extend(events.into_iter().map(Ok)),
                Err(err) => out.push(Err(err)),
            }
        }
        out
    }

    /// Reading the body failed.
    pub(crate) fn fail(&mut self, err: ProviderError) -> Vec<Item> {
        if self.is_finished() {
            return Vec::new();
        }
        self.phase = Phase::Finished;
        vec![Err(err)]
    }

    fn apply(&mut self, frame: &SseFrame, out: &mut Vec<Item>) {
        match self.mapper.on_frame(frame) {
            Ok(FrameOutcome::Continue(events)) => out.extend(events.into_iter().map(Ok)),
            Ok(FrameOutcome::Done(events)) => {
                out.extend(events.into_iter().map(Ok));
                self.phase = Phase::Finished;
            }
            Err(err) => {
                out.push(Err(err));
                self.phase = Phase::Finished;
            }
        }
    }
}

/// Lists the model ids an OpenAI-compatible endpoint offers (`GET {base_url}/models`),
/// sorted and without duplicates.
pub async fn list_models(
    http: &reqwest::Client,
    base_url: &str,
    api_key: Option<&str>,
) -> Result<Vec<String>, ProviderError> {
    let url = validate_base_url(base_url)
        .map_err(|message| ProviderError::new(ProviderErrorKind::InvalidRequest, message))?;
    let provider = url.host_str().unwrap_or("the provider").to_owned();
    let mut builder = http.get(endpoint(url.as_str(), "models")).header(ACCEPT, "application/json");
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        builder = builder.bearer_auth(key);
    }
    let response = builder.send().await.map_err(|err| ProviderError::from_request_error(&provider, &err))?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        let body = read_capped(response).await;
        return Err(ProviderError::from_http_status(&provider, status, &body));
    }
    let body = response.bytes().await.map_err(|err| ProviderError::from_body_error(&provider, &err))?;
    let list: ModelList = serde_json::from_slice(&body).map_err(|_| {
        let mut err = ProviderError::unexpected_body(&provider, status, &BodyShape::of(&body));
        err.message = format!("{} instead of a model list (the base URL usually ends in /v1)", err.message);
        err
    })?;
    let mut models: Vec<String> =
        list.data.into_iter().filter_map(|model| model.id).filter(|id| !id.trim().is_empty()).collect();
    models.sort();
    models.dedup();
    Ok(models)
}

/// The first [`ERROR_BODY_LIMIT`] bytes of an error body; a body that fails to read
/// halfway is explained by what did arrive.
async fn read_capped(mut response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(ERROR_BODY_LIMIT - body.len())]),
            Ok(None) | Err(_) => break,
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language_model::{StopReason, TokenUsage};

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
        let mut decoder = ChatStreamDecoder::new("Acme");
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
                Ok(CompletionEvent::Usage(TokenUsage { input_tokens: 5, output_tokens: 7 })),
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
        let mut decoder = ChatStreamDecoder::new("Acme");
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
            http: reqwest::Client::new(),
        };
        let model = OpenAiChat::new(config);
        let shown = format!("{model:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
