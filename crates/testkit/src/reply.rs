//! What every wire format shares: the [`Reply`] a script resolves to, the [`Step`]s of a
//! streamed body, placing a script's [`Fault`] among them, and writing the body out.
//!
//! A format turns a [`Reply`] into a [`Transcript`] (frames before the text, frames per
//! text chunk, frames after); [`assemble`] then inserts the fault after the scripted number
//! of text chunks, so `after: N` means the same in every format.

use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::stream;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::default_reply::default_reply;
use crate::script::{Fault, Finish, Framing, Script, ScriptToolCall, ScriptUsage};
use crate::server::{OpenStream, Shared};

/// What the request asked, as far as the mock cares, in any format.
#[derive(Debug, Default)]
pub(crate) struct Prompt {
    /// The text of the last user message, which the default reply talks about.
    pub last_user_text: String,
    /// Words in the whole request (system prompt included): a rough token count.
    pub words: usize,
    /// The model the request named.
    pub model: Option<String>,
}

impl Prompt {
    /// Counts words of every message and remembers the last user message's text;
    /// `messages` are `(is_user, text)` in order.
    pub(crate) fn from_messages(model: Option<String>, messages: impl IntoIterator<Item = (bool, String)>) -> Self {
        let mut prompt = Prompt { model: model.filter(|m| !m.is_empty()), ..Prompt::default() };
        for (is_user, text) in messages {
            prompt.words += text.split_whitespace().count();
            if is_user {
                prompt.last_user_text = text;
            }
        }
        prompt
    }

    fn tokens(&self) -> u64 {
        u64::try_from(self.words.max(1)).unwrap_or(u64::MAX)
    }
}

/// `content` as text: a string, or the text parts of a list (`{"text": …}` elements).
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Everything needed to write one reply, in any format and either form.
#[derive(Debug)]
pub(crate) struct Reply {
    /// Unique per reply; formats build their ids from it.
    pub number: u64,
    pub model: String,
    pub created: u64,
    pub chunks: Vec<String>,
    pub reasoning: Vec<String>,
    pub tool_calls: Vec<ScriptToolCall>,
    pub usage: ScriptUsage,
    pub token_delay: Duration,
    pub fault: Option<Fault>,
    /// The type of a scripted in-stream error.
    pub error_code: Option<String>,
    pub framing: Framing,
    pub finish: Finish,
}

impl Reply {
    pub(crate) fn new(shared: &Shared, prompt: &Prompt, script: Script) -> Self {
        let chunks = script.chunks.unwrap_or_else(|| default_reply(&prompt.last_user_text));
        let generated = chunks.len() + script.reasoning.len() + script.tool_calls.len();
        let counted = ScriptUsage {
            prompt_tokens: prompt.tokens(),
            completion_tokens: u64::try_from(generated).unwrap_or(u64::MAX),
            ..ScriptUsage::default()
        };
        Self {
            number: shared.next_number(),
            model: prompt
                .model
                .clone()
                .or_else(|| shared.config.models.first().cloned())
                .unwrap_or_else(|| "scripted".to_owned()),
            created: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            usage: script.usage.unwrap_or(counted),
            token_delay: script.token_delay_ms.map_or(shared.config.token_delay, Duration::from_millis),
            reasoning: script.reasoning,
            tool_calls: script.tool_calls,
            fault: script.fault,
            error_code: script.error_code,
            framing: script.framing,
            finish: script.finish,
            chunks,
        }
    }

    /// The `index`th tool call's id: the scripted one, or `prefix` + reply + index; `None`
    /// when the script's id is empty (the server sends none, as some compatible ones do).
    pub(crate) fn call_id(&self, index: usize, prefix: &str) -> Option<String> {
        match &self.tool_calls[index].id {
            Some(id) if id.is_empty() => None,
            Some(id) => Some(id.clone()),
            None => Some(format!("{prefix}testkit_{}_{index}", self.number)),
        }
    }

    pub(crate) fn text(&self) -> String {
        self.chunks.concat()
    }
}

/// One thing the streamed body does next.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Wait `delay`, then send the frame: `event: <event>` (when set) and `data: <data>`.
    Frame { delay: Duration, event: Option<&'static str>, data: String },
    /// Abort the connection mid-body.
    Reset,
    /// Send nothing more; hold the connection until the client leaves.
    Stall,
}

impl Step {
    /// A frame sent right away.
    pub(crate) fn now(event: Option<&'static str>, data: impl Into<String>) -> Self {
        Step::Frame { delay: Duration::ZERO, event, data: data.into() }
    }

    /// A frame sent after the reply's token delay (text, reasoning, argument pieces).
    pub(crate) fn token(reply: &Reply, event: Option<&'static str>, data: impl Into<String>) -> Self {
        Step::Frame { delay: reply.token_delay, event, data: data.into() }
    }
}

/// A reply's frames, grouped so a fault can go between text chunks.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    /// Before the first text chunk: the preamble and the reasoning.
    pub head: Vec<Step>,
    /// The frames of each text chunk, in order.
    pub chunks: Vec<Vec<Step>>,
    /// After the text: tool calls, the finish, usage and the end marker.
    pub tail: Vec<Step>,
}

/// An error a format reports inside a successful (200) stream.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StreamFailure<'a> {
    pub message: &'a str,
    /// The script's `errorCode`: the error's type in the format's vocabulary.
    pub code: Option<&'a str>,
    /// The model failed the reply (`failed` fault) rather than the stream reporting an
    /// error (`errorFrame`); only Responses tells the two apart (`response.failed`).
    pub failed: bool,
}

/// The frames of the `Transcript` with `fault` placed after its `after` text chunks
/// (clamped to the number of chunks). A malformed frame is inserted and the reply goes
/// on; an error frame, a failure, a reset or a stall ends it.
pub(crate) fn assemble(
    transcript: Transcript,
    reply: &Reply,
    malformed: Step,
    error_frames: impl FnOnce(StreamFailure<'_>) -> Vec<Step>,
) -> Vec<Step> {
    let fault = reply.fault.as_ref();
    let Transcript { head, chunks, tail } = transcript;
    let fault_after = match fault {
        Some(
            Fault::MalformedFrame { after }
            | Fault::Reset { after }
            | Fault::ErrorFrame { after, .. }
            | Fault::Failed { after, .. }
            | Fault::Stall { after },
        ) => Some((*after).min(chunks.len())),
        Some(Fault::Status { .. }) | None => None,
    };
    let mut steps = head;
    let mut malformed = Some(malformed);
    let mut error_frames = Some(error_frames);
    let mut insert_fault = |steps: &mut Vec<Step>| -> bool {
        match fault {
            Some(Fault::MalformedFrame { .. }) => {
                steps.extend(malformed.take());
                true
            }
            Some(Fault::ErrorFrame { message, .. } | Fault::Failed { message, .. }) => {
                let failed = matches!(fault, Some(Fault::Failed { .. }));
                if let Some(frames) = error_frames.take() {
                    steps.extend(frames(StreamFailure { message, code: reply.error_code.as_deref(), failed }));
                }
                false
            }
            Some(Fault::Reset { .. }) => {
                steps.push(Step::Reset);
                false
            }
            Some(Fault::Stall { .. }) => {
                steps.push(Step::Stall);
                false
            }
            Some(Fault::Status { .. }) | None => true,
        }
    };
    let chunk_count = chunks.len();
    for (sent, frames) in chunks.into_iter().enumerate() {
        if fault_after == Some(sent) && !insert_fault(&mut steps) {
            return steps;
        }
        steps.extend(frames);
    }
    if fault_after == Some(chunk_count) && !insert_fault(&mut steps) {
        return steps;
    }
    steps.extend(tail);
    steps
}

/// Splits tool-call arguments into the pieces a streaming format sends (at most 16
/// characters each, never inside a character).
pub(crate) fn argument_pieces(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    chars.chunks(16).map(|piece| piece.iter().collect()).collect()
}

/// A streamed `text/event-stream` response of `steps`, written as `framing` says.
pub(crate) fn event_stream(shared: &Arc<Shared>, steps: Vec<Step>, framing: &Framing) -> Response {
    let body = body_stream(steps, framing.clone(), shared.stream_opened(), shared.shutdown.clone());
    let pieces = framing.chunk_bytes.filter(|n| *n > 0);
    let body = match pieces {
        // Re-cut every frame into pieces of `n` bytes, splitting characters as it goes.
        Some(n) => Body::from_stream(body.flat_map(move |item| {
            let pieces: Vec<Result<Bytes, io::Error>> = match item {
                Ok(bytes) => bytes.chunks(n).map(|piece| Ok(Bytes::copy_from_slice(piece))).collect(),
                Err(e) => vec![Err(e)],
            };
            stream::iter(pieces)
        })),
        None => Body::from_stream(body),
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The body stream for `steps`. It ends early on server shutdown, and is dropped (with
/// its [`OpenStream`] guard) when the client disconnects.
fn body_stream(
    steps: Vec<Step>,
    framing: Framing,
    open: OpenStream,
    shutdown: CancellationToken,
) -> impl futures::Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
    stream::unfold((steps.into_iter(), open), move |(mut steps, open)| {
        let framing = framing.clone();
        async move {
            match steps.next()? {
                Step::Frame { delay, event, data } => {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    Some((Ok(Bytes::from(frame(&framing, event, &data))), (steps, open)))
                }
                Step::Reset => {
                    // Give hyper a moment to flush what was sent before, then fail the body:
                    // hyper drops the connection without the chunked terminator.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    let reset = io::Error::new(io::ErrorKind::ConnectionReset, "testkit: scripted connection reset");
                    Some((Err(reset), (steps, open)))
                }
                Step::Stall => {
                    std::future::pending::<()>().await;
                    None
                }
            }
        }
    })
    .take_until(shutdown.cancelled_owned())
}

/// One frame as `framing` writes it.
fn frame(framing: &Framing, event: Option<&str>, data: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    if framing.comments {
        lines.push(": testkit keeps the connection busy".into());
    }
    if let Some(event) = event {
        lines.push(format!("event: {event}"));
    }
    let pretty = framing.multi_line_data.then(|| serde_json::from_str::<Value>(data).ok()).flatten();
    match pretty.and_then(|value| serde_json::to_string_pretty(&value).ok()) {
        Some(pretty) => lines.extend(pretty.lines().map(|line| format!("data: {line}"))),
        None => lines.push(format!("data: {data}")),
    }
    let end = if framing.crlf { "\r\n" } else { "\n" };
    let mut text = String::new();
    if framing.unknown_events {
        text.push_str(&format!("event: testkit_unknown{end}data: {{\"type\":\"testkit_unknown\"}}{end}{end}"));
    }
    for line in lines {
        text.push_str(&line);
        text.push_str(end);
    }
    text.push_str(end);
    text
}

/// A scripted status answer: the given body, or `default_body` (the format's JSON error).
pub(crate) fn status_fault(
    status: u16,
    body: Option<&str>,
    content_type: Option<&str>,
    retry_after: Option<&str>,
    default_body: impl FnOnce(StatusCode) -> Response,
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match body {
        None => default_body(status),
        Some(body) => {
            let content_type = HeaderValue::from_str(content_type.unwrap_or("application/json"))
                .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
            (status, [(header::CONTENT_TYPE, content_type)], body.to_owned()).into_response()
        }
    };
    if let Some(value) = retry_after.and_then(|value| HeaderValue::from_str(value).ok()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The answer to a script whose fault is a status, if it is one.
pub(crate) fn scripted_status(script: &Script, default_body: impl FnOnce(StatusCode) -> Response) -> Option<Response> {
    match &script.fault {
        Some(Fault::Status { status, body, content_type }) => Some(status_fault(
            *status,
            body.as_deref(),
            content_type.as_deref(),
            script.retry_after.as_deref(),
            default_body,
        )),
        _ => None,
    }
}

/// A reply to `script` as a format's tests need it: fixed ids and time, no delays.
#[cfg(test)]
pub(crate) fn test_reply(number: u64, model: &str, script: Script) -> Reply {
    Reply {
        number,
        model: model.to_owned(),
        created: 7,
        chunks: script.chunks.unwrap_or_default(),
        reasoning: script.reasoning,
        tool_calls: script.tool_calls,
        usage: script.usage.unwrap_or_default(),
        token_delay: Duration::from_millis(1),
        fault: script.fault,
        error_code: script.error_code,
        framing: script.framing,
        finish: script.finish,
    }
}

/// The data of a transcript's frames, for tests.
#[cfg(test)]
pub(crate) fn frames(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|step| match step {
            Step::Frame { data, .. } => data.clone(),
            Step::Reset => "RESET".into(),
            Step::Stall => "STALL".into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript() -> Transcript {
        Transcript {
            head: vec![Step::now(None, "head")],
            chunks: vec![vec![Step::now(None, "a")], vec![Step::now(None, "b1"), Step::now(None, "b2")]],
            tail: vec![Step::now(None, "tail")],
        }
    }

    fn run(fault: Fault) -> Vec<String> {
        let reply = test_reply(1, "m", Script::default().with_fault(fault).with_error_code("c"));
        let steps = assemble(transcript(), &reply, Step::now(None, "{not json"), |failure| {
            vec![Step::now(None, format!("ERROR {} {:?} failed={}", failure.message, failure.code, failure.failed))]
        });
        frames(&steps)
    }

    #[test]
    fn faults_go_between_text_chunks() {
        assert_eq!(run(Fault::MalformedFrame { after: 1 }), ["head", "a", "{not json", "b1", "b2", "tail"]);
        assert_eq!(run(Fault::Reset { after: 0 }), ["head", "RESET"]);
        assert_eq!(run(Fault::Stall { after: 2 }), ["head", "a", "b1", "b2", "STALL"]);
        assert_eq!(
            run(Fault::ErrorFrame { after: 9, message: "x".into() }),
            ["head", "a", "b1", "b2", "ERROR x Some(\"c\") failed=false"]
        );
        assert_eq!(
            run(Fault::Failed { after: 1, message: "y".into() }),
            ["head", "a", "ERROR y Some(\"c\") failed=true"]
        );
    }

    #[test]
    fn arguments_are_cut_into_pieces_on_character_boundaries() {
        assert_eq!(argument_pieces("{}"), ["{}"]);
        let text = r#"{"city":"Zürich","days":3}"#;
        let pieces = argument_pieces(text);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces.concat(), text);
        assert!(argument_pieces("").is_empty());
    }

    #[test]
    fn prompts_count_words_and_keep_the_last_user_text() {
        let prompt = Prompt::from_messages(
            Some(String::new()),
            [(false, "be brief".to_owned()), (true, "first".to_owned()), (true, "second one".to_owned())],
        );
        assert_eq!((prompt.last_user_text.as_str(), prompt.words, prompt.model), ("second one", 5, None));
    }
}
