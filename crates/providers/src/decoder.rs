//! [`StreamDecoder`]: bytes of a provider's answer in, [`CompletionEvent`]s out — the SSE
//! decoder and a wire format's pure event mapper behind one explicit lifecycle.
//!
//! Each wire format implements [`EventMapper`]; this module owns what they share: frame
//! dispatch, "nothing after the first error or the end", and answers that came as one
//! JSON body instead of an event stream.

use crate::error::{BodyShape, ErrorDetail, ProviderError};
use crate::language_model::CompletionEvent;
use crate::sse::{SseDecoder, SseFrame};

/// One item of a completion stream.
pub(crate) type Item = Result<CompletionEvent, ProviderError>;

/// What a frame meant for the stream as a whole.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameOutcome {
    /// More frames will follow.
    Continue(Vec<CompletionEvent>),
    /// The provider said the completion is over; ignore anything after it.
    Done(Vec<CompletionEvent>),
}

/// A wire format's pure mapper: SSE frames in, events out. An `Err` is final.
pub(crate) trait EventMapper: Send + std::fmt::Debug {
    fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError>;

    /// The body ended: the closing events if the model had finished, an error if not.
    fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError>;

    /// A whole (non-streamed) answer in this format's JSON, for servers that ignore the
    /// request to stream. `None` when the body is not that shape.
    fn on_whole_body(&mut self, body: &[u8]) -> Option<Result<Vec<CompletionEvent>, ProviderError>> {
        let _ = body;
        None
    }
}

/// Test support for the mappers: runs `data:` payloads through `mapper` the way a
/// [`StreamDecoder`] would (nothing after `Done` or an error; end of stream otherwise) and
/// collects everything, errors included.
#[cfg(test)]
pub(crate) fn run_frames(mut mapper: impl EventMapper, frames: &[&str]) -> Vec<Item> {
    let mut out = Vec::new();
    for data in frames {
        let frame = SseFrame { data: (*data).to_owned(), ..SseFrame::default() };
        match mapper.on_frame(&frame) {
            Ok(FrameOutcome::Continue(events)) => out.extend(events.into_iter().map(Ok)),
            Ok(FrameOutcome::Done(events)) => {
                out.extend(events.into_iter().map(Ok));
                return out;
            }
            Err(err) => {
                out.push(Err(err));
                return out;
            }
        }
    }
    match mapper.on_end_of_stream() {
        Ok(events) => out.extend(events.into_iter().map(Ok)),
        Err(err) => out.push(Err(err)),
    }
    out
}

/// Test support: events as a successful stream yields them.
#[cfg(test)]
pub(crate) fn ok(events: Vec<CompletionEvent>) -> Vec<Item> {
    events.into_iter().map(Ok).collect()
}

/// Decodes one answer in a given wire format, fed with network chunks of any size: the
/// chunking never changes the events. Nothing comes out after the first error or the end.
#[derive(Debug)]
pub struct StreamDecoder {
    provider: String,
    sse: SseDecoder,
    mapper: Box<dyn EventMapper>,
    phase: Phase,
    /// Whether any event-stream frame arrived.
    seen_frame: bool,
    /// The start of the body, kept until the first frame: a body with no frame at all (a
    /// plain-text page served as a success) is reported by what it says.
    preview: Vec<u8>,
}

/// How much of a body without frames is kept to describe it.
const PREVIEW_BYTES: usize = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Streaming,
    /// Ended by the provider's end marker, EOF or an error; later input is ignored.
    Finished,
}

impl StreamDecoder {
    /// A decoder running `mapper`; `provider` names the provider in error messages. Each
    /// format module builds its own (`StreamDecoder::new` picks one by format).
    pub(crate) fn with_mapper(provider: &str, mapper: Box<dyn EventMapper>) -> Self {
        Self {
            provider: provider.to_owned(),
            sse: SseDecoder::new(),
            mapper,
            phase: Phase::Streaming,
            seen_frame: false,
            preview: Vec::new(),
        }
    }

    /// Whether the answer is over (nothing more will come out).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Feeds one network chunk of an event stream.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Result<CompletionEvent, ProviderError>> {
        let mut out = Vec::new();
        if self.is_finished() {
            return out;
        }
        if !self.seen_frame && self.preview.len() < PREVIEW_BYTES {
            let room = PREVIEW_BYTES - self.preview.len();
            self.preview.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        let frames = match self.sse.push(bytes) {
            Ok(frames) => frames,
            Err(too_large) => {
                self.phase = Phase::Finished;
                out.push(Err(ProviderError::too_large(&self.provider, "a stream event", too_large.limit)));
                return out;
            }
        };
        for frame in frames {
            self.apply(&frame, &mut out);
            if self.is_finished() {
                break;
            }
        }
        out
    }

    /// The body ended.
    pub fn finish(&mut self) -> Vec<Result<CompletionEvent, ProviderError>> {
        let mut out = Vec::new();
        if let Some(frame) = self.sse.finish().filter(|_| !self.is_finished()) {
            self.apply(&frame, &mut out);
        }
        if !self.is_finished() {
            self.phase = Phase::Finished;
            if !self.seen_frame && !looks_like_event_stream(&self.preview) {
                let shape = BodyShape::of(&self.preview);
                if shape != BodyShape::Empty {
                    out.push(Err(ProviderError::not_an_event_stream(&self.provider, &shape)));
                    return out;
                }
            }
            match self.mapper.on_end_of_stream() {
                Ok(events) => out.extend(events.into_iter().map(Ok)),
                Err(err) => out.push(Err(err)),
            }
        }
        out
    }

    /// Reading the body failed.
    pub fn fail(&mut self, err: ProviderError) -> Vec<Result<CompletionEvent, ProviderError>> {
        if self.is_finished() {
            return Vec::new();
        }
        self.phase = Phase::Finished;
        vec![Err(err)]
    }

    /// A whole 2xx body that was labelled JSON: the format's non-streamed answer, an event
    /// stream mislabelled as JSON (some proxies do that), or an error object.
    pub fn decode_whole(&mut self, status: u16, body: &[u8]) -> Vec<Result<CompletionEvent, ProviderError>> {
        if self.is_finished() {
            return Vec::new();
        }
        let start = body.trim_ascii_start();
        if [b"data:".as_slice(), b"event:", b":"].iter().any(|prefix| start.starts_with(prefix)) {
            let mut out = self.push(body);
            out.extend(self.finish());
            return out;
        }
        self.phase = Phase::Finished;
        match self.mapper.on_whole_body(body) {
            Some(Ok(events)) => events.into_iter().map(Ok).collect(),
            Some(Err(err)) => vec![Err(err)],
            None => match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(value) if ErrorDetail::from_value(&value).is_some() => {
                    vec![Err(ProviderError::from_error_value(&self.provider, &value))]
                }
                _ => vec![Err(ProviderError::unexpected_body(&self.provider, status, &BodyShape::of(body)))],
            },
        }
    }

    fn apply(&mut self, frame: &SseFrame, out: &mut Vec<Item>) {
        if !self.seen_frame {
            self.seen_frame = true;
            self.preview = Vec::new();
        }
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

/// Whether a body that produced no frame was an event stream all the same (keep-alive
/// comments, an `event:` line cut off before its data): then it ended early, rather than
/// being some other kind of page.
fn looks_like_event_stream(preview: &[u8]) -> bool {
    preview.split(|b| *b == b'\n').map(<[u8]>::trim_ascii_start).any(|line| {
        [b":".as_slice(), b"data:", b"event:", b"id:", b"retry:"].iter().any(|field| line.starts_with(field))
    })
}

/// Parses a frame's JSON into the format's lenient wire type; bad JSON is a malformed frame.
pub(crate) fn parse_frame<'a, T: serde::Deserialize<'a>>(data: &'a str) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|err| ProviderError::malformed_frame(&err, data))
}

/// A format whose frames carry their kind in a `type` field and are read into one flat
/// lenient struct (Responses, Anthropic).
pub(crate) trait TypedEvent: serde::de::DeserializeOwned + Default {
    /// The `type` field.
    fn kind(&self) -> Option<&str>;
    /// Whether the frame has a non-null `error` field.
    fn has_error(&self) -> bool;
}

/// A [`TypedEvent`] frame, read.
pub(crate) enum TypedFrame<T> {
    Event {
        kind: String,
        event: T,
    },
    /// The provider reported an error; the whole frame, for [`ProviderError::from_error_value`].
    Error(serde_json::Value),
}

/// Reads a frame of a [`TypedEvent`] format in one pass. A frame whose fields have
/// unexpected types is still read leniently (through a `Value`: slower, but rare); the
/// frame's type falls back to the SSE `event:` line. Bad JSON is a malformed frame.
pub(crate) fn read_typed_frame<T: TypedEvent>(frame: &SseFrame, data: &str) -> Result<TypedFrame<T>, ProviderError> {
    let fallback = frame.event.as_deref();
    let is_error = |kind: &str, has_error: bool| kind == "error" || (kind.is_empty() && has_error);
    match serde_json::from_str::<T>(data) {
        Ok(event) => {
            let kind = event.kind().or(fallback).unwrap_or_default().to_owned();
            if is_error(&kind, event.has_error()) {
                return Ok(TypedFrame::Error(parse_frame(data)?));
            }
            Ok(TypedFrame::Event { kind, event })
        }
        Err(_) => {
            let value: serde_json::Value = parse_frame(data)?;
            let kind =
                value.get("type").and_then(serde_json::Value::as_str).or(fallback).unwrap_or_default().to_owned();
            if is_error(&kind, value.get("error").is_some_and(|error| !error.is_null())) {
                return Ok(TypedFrame::Error(value));
            }
            Ok(TypedFrame::Event { kind, event: serde_json::from_value(value).unwrap_or_default() })
        }
    }
}

/// For lenient wire types: a list whose unreadable elements are skipped, and which reads
/// `null` (or anything but a list) as empty.
pub(crate) fn lenient_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize;
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::Array(items) => {
            items.into_iter().filter_map(|item| serde_json::from_value(item).ok()).collect()
        }
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProviderErrorKind;

    fn decode(body: &[u8]) -> Vec<Item> {
        let mut decoder = crate::openai_chat::decoder("Acme");
        let mut items = decoder.push(body);
        items.extend(decoder.finish());
        items
    }

    #[test]
    fn a_success_without_any_frame_says_what_came_instead() {
        let items = decode(b"Service is up. Try /docs for the API.\n");
        let [Err(err)] = items.as_slice() else { panic!("{items:?}") };
        assert_eq!(err.kind, ProviderErrorKind::BadResponse);
        assert_eq!(
            err.message,
            "Acme answered with an unexpected body (\u{201c}Service is up. Try /docs for the API.\u{201d}) instead of a stream of events — check the base URL and the API format in the provider settings"
        );
    }

    #[test]
    fn an_event_stream_that_stops_before_any_event_ended_early() {
        for body in [b": keep-alive\n\n".as_slice(), b"event: message_start\n", b""] {
            let items = decode(body);
            let [Err(err)] = items.as_slice() else { panic!("{items:?}") };
            assert_eq!(err.kind, ProviderErrorKind::Network, "{}", String::from_utf8_lossy(body));
            assert!(err.message.contains("ended early"), "{}", err.message);
        }
    }
}
