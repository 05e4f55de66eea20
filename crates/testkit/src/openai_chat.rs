//! The OpenAI Chat Completions side of the mock: reading requests, and writing replies in
//! the exact wire shape (SSE chunks, `[DONE]`, usage chunk, JSON errors), faults included.

use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::default_reply::default_reply;
use crate::script::{Fault, Script, ScriptUsage};
use crate::server::{OpenStream, Shared};

/// The parts of a chat request the mock looks at; everything else is ignored.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChatRequest {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Default, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

impl ChatRequest {
    /// The text of the last user message, which the default reply talks about.
    fn last_user_text(&self) -> String {
        self.messages.iter().rev().find(|m| m["role"] == "user").map(|m| text_of(&m["content"])).unwrap_or_default()
    }

    /// A rough token count of the whole conversation (one per word).
    fn prompt_tokens(&self) -> u64 {
        let words: usize = self.messages.iter().map(|m| text_of(&m["content"]).split_whitespace().count()).sum();
        u64::try_from(words.max(1)).unwrap_or(u64::MAX)
    }
}

/// `content` as text: a string, or the text parts of a list.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Answers one chat request according to `script`.
pub(crate) fn respond(shared: &Arc<Shared>, request: &ChatRequest, script: Script) -> Response {
    if let Some(Fault::Status { status, body, content_type }) = &script.fault {
        return status_fault(*status, body.as_deref(), content_type.as_deref());
    }
    let reply = Reply::new(shared, request, script);
    if request.stream != Some(true) {
        // Only `status` faults apply to non-streaming requests.
        return axum::Json(reply.whole_completion()).into_response();
    }
    let steps = reply.stream_steps();
    let mut response =
        Body::from_stream(stream_steps(steps, shared.stream_opened(), shared.shutdown.clone())).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// An OpenAI-style error response: `{"error": {"message", "type", "param", "code"}}`.
pub(crate) fn error_response(status: StatusCode, message: &str, kind: &str, code: Option<&str>) -> Response {
    let body = json!({ "error": { "message": message, "type": kind, "param": null, "code": code } });
    (status, axum::Json(body)).into_response()
}

/// `GET /v1/models` in OpenAI's list shape.
pub(crate) fn model_list(models: &[String]) -> Response {
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "colloquy-testkit" }))
        .collect();
    axum::Json(json!({ "object": "list", "data": data })).into_response()
}

fn status_fault(status: u16, body: Option<&str>, content_type: Option<&str>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let Some(body) = body else {
        let message = status.canonical_reason().unwrap_or("Scripted error");
        let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
        return error_response(status, message, kind, None);
    };
    let content_type = HeaderValue::from_str(content_type.unwrap_or("application/json"))
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    (status, [(header::CONTENT_TYPE, content_type)], body.to_owned()).into_response()
}

/// A `chat.completion.chunk`, fields in OpenAI's order (serde keeps struct order; a
/// `json!` map would sort them).
#[derive(Debug, Serialize)]
struct ChunkFrame<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: Vec<ChunkChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<WireUsage>,
}

#[derive(Debug, Serialize)]
struct ChunkChoice<'a> {
    index: u32,
    delta: Delta<'a>,
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
}

#[derive(Debug, Default, Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

/// Everything needed to write one reply, in either form.
struct Reply {
    id: String,
    model: String,
    created: u64,
    chunks: Vec<String>,
    reasoning: Vec<String>,
    usage: ScriptUsage,
    include_usage: bool,
    token_delay: Duration,
    fault: Option<Fault>,
}

/// One thing the streamed body does next.
#[derive(Debug, PartialEq)]
enum Step {
    /// Wait `delay`, then send `data: <data>\n\n`.
    Frame { delay: Duration, data: String },
    /// Abort the connection mid-body.
    Reset,
    /// Send nothing more; hold the connection until the client leaves.
    Stall,
}

impl Reply {
    fn new(shared: &Shared, request: &ChatRequest, script: Script) -> Self {
        let chunks = script.chunks.unwrap_or_else(|| default_reply(&request.last_user_text()));
        let counted = ScriptUsage {
            prompt_tokens: request.prompt_tokens(),
            completion_tokens: u64::try_from(chunks.len() + script.reasoning.len()).unwrap_or(u64::MAX),
        };
        let model = request.model.clone().filter(|m| !m.is_empty());
        Self {
            id: shared.next_completion_id(),
            model: model.or_else(|| shared.config.models.first().cloned()).unwrap_or_else(|| "scripted".to_owned()),
            created: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            usage: script.usage.unwrap_or(counted),
            include_usage: request.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false),
            token_delay: script.token_delay_ms.map_or(shared.config.token_delay, Duration::from_millis),
            reasoning: script.reasoning,
            fault: script.fault,
            chunks,
        }
    }

    fn wire_usage(&self) -> WireUsage {
        let ScriptUsage { prompt_tokens, completion_tokens } = self.usage;
        WireUsage { prompt_tokens, completion_tokens, total_tokens: prompt_tokens.saturating_add(completion_tokens) }
    }

    fn whole_completion(&self) -> Value {
        let mut message = json!({ "role": "assistant", "content": self.chunks.concat() });
        if !self.reasoning.is_empty() {
            message["reasoning_content"] = json!(self.reasoning.concat());
        }
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": "stop" }],
            "usage": self.wire_usage(),
        })
    }

    /// A `chat.completion.chunk` with one choice.
    fn chunk(&self, delta: Delta<'_>, finish_reason: Option<&'static str>) -> String {
        let choice = ChunkChoice { index: 0, delta, logprobs: None, finish_reason };
        self.frame(vec![choice], None)
    }

    fn frame(&self, choices: Vec<ChunkChoice<'_>>, usage: Option<WireUsage>) -> String {
        let frame = ChunkFrame {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices,
            usage,
        };
        serde_json::to_string(&frame).unwrap_or_default()
    }

    fn stream_steps(&self) -> Vec<Step> {
        let now = |data: String| Step::Frame { delay: Duration::ZERO, data };
        let token = |data: String| Step::Frame { delay: self.token_delay, data };
        let fault_after = match &self.fault {
            Some(
                Fault::MalformedFrame { after }
                | Fault::Reset { after }
                | Fault::ErrorFrame { after, .. }
                | Fault::Stall { after },
            ) => Some((*after).min(self.chunks.len())),
            Some(Fault::Status { .. }) | None => None,
        };

        let mut steps =
            vec![now(self.chunk(Delta { role: Some("assistant"), content: Some(""), ..Delta::default() }, None))];
        steps.extend(
            self.reasoning
                .iter()
                .map(|r| token(self.chunk(Delta { reasoning_content: Some(r), ..Delta::default() }, None))),
        );
        for (sent, text) in self.chunks.iter().enumerate() {
            if fault_after == Some(sent) && self.push_fault(&mut steps) == Continue::No {
                return steps;
            }
            steps.push(token(self.chunk(Delta { content: Some(text), ..Delta::default() }, None)));
        }
        if fault_after == Some(self.chunks.len()) && self.push_fault(&mut steps) == Continue::No {
            return steps;
        }
        steps.push(now(self.chunk(Delta::default(), Some("stop"))));
        if self.include_usage {
            steps.push(now(self.frame(Vec::new(), Some(self.wire_usage()))));
        }
        steps.push(now("[DONE]".to_owned()));
        steps
    }

    fn push_fault(&self, steps: &mut Vec<Step>) -> Continue {
        let now = |data: &str| Step::Frame { delay: Duration::ZERO, data: data.to_owned() };
        match &self.fault {
            Some(Fault::MalformedFrame { .. }) => {
                steps.push(now("{not json"));
                Continue::Yes
            }
            Some(Fault::ErrorFrame { message, .. }) => {
                let error =
                    json!({ "error": { "message": message, "type": "server_error", "param": null, "code": null } });
                steps.push(now(&error.to_string()));
                steps.push(now("[DONE]"));
                Continue::No
            }
            Some(Fault::Reset { .. }) => {
                steps.push(Step::Reset);
                Continue::No
            }
            Some(Fault::Stall { .. }) => {
                steps.push(Step::Stall);
                Continue::No
            }
            Some(Fault::Status { .. }) | None => Continue::Yes,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Continue {
    Yes,
    No,
}

/// The body stream for `steps`. It ends early on server shutdown, and is dropped (with
/// its [`OpenStream`] guard) when the client disconnects.
fn stream_steps(
    steps: Vec<Step>,
    open: OpenStream,
    shutdown: CancellationToken,
) -> impl futures::Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
    stream::unfold((steps.into_iter(), open), |(mut steps, open)| async move {
        match steps.next()? {
            Step::Frame { delay, data } => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(Bytes::from(format!("data: {data}\n\n"))), (steps, open)))
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
    })
    .take_until(shutdown.cancelled_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(script: Script, include_usage: bool) -> Reply {
        Reply {
            id: "chatcmpl-1".into(),
            model: "m".into(),
            created: 7,
            chunks: script.chunks.unwrap_or_default(),
            reasoning: script.reasoning,
            usage: script.usage.unwrap_or_default(),
            include_usage,
            token_delay: Duration::from_millis(1),
            fault: script.fault,
        }
    }

    fn frames(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|step| match step {
                Step::Frame { data, .. } => data.clone(),
                Step::Reset => "RESET".into(),
                Step::Stall => "STALL".into(),
            })
            .collect()
    }

    #[test]
    fn streams_in_the_exact_openai_shape() {
        let steps = reply(Script::text(["Hi"]).with_reasoning(["hmm"]).with_usage(3, 1), true).stream_steps();
        let frames = frames(&steps);
        let parsed: Vec<Value> = frames[..frames.len() - 1].iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        let choice = |delta: Value, finish: Value| {
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m",
                   "choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]})
        };
        assert_eq!(
            parsed,
            vec![
                choice(json!({"role":"assistant","content":""}), Value::Null),
                choice(json!({"reasoning_content":"hmm"}), Value::Null),
                choice(json!({"content":"Hi"}), Value::Null),
                choice(json!({}), json!("stop")),
                json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],
                       "usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}),
            ]
        );
        assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
        assert_eq!(
            frames[0],
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
            "field order as OpenAI sends it"
        );
    }

    #[test]
    fn places_faults_after_the_given_number_of_chunks() {
        let content = |frames: &[String]| -> Vec<String> {
            frames
                .iter()
                .map(|f| match serde_json::from_str::<Value>(f) {
                    Ok(v) if v["choices"][0]["delta"]["content"].as_str().is_some_and(|c| !c.is_empty()) => {
                        v["choices"][0]["delta"]["content"].as_str().unwrap_or_default().to_owned()
                    }
                    Ok(v) if v.get("error").is_some() => "ERROR".into(),
                    Ok(v) if v["choices"][0]["finish_reason"] == "stop" => "STOP".into(),
                    Ok(_) => "OTHER".into(),
                    Err(_) => f.clone(),
                })
                .filter(|f| f != "OTHER")
                .collect()
        };
        let script = |fault| Script::text(["a", "b", "c"]).with_fault(fault);
        let run = |fault| content(&frames(&reply(script(fault), false).stream_steps()));
        assert_eq!(run(Fault::Reset { after: 2 }), ["a", "b", "RESET"]);
        assert_eq!(run(Fault::Stall { after: 0 }), ["STALL"]);
        assert_eq!(run(Fault::MalformedFrame { after: 1 }), ["a", "{not json", "b", "c", "STOP", "[DONE]"]);
        assert_eq!(run(Fault::ErrorFrame { after: 9, message: "x".into() }), ["a", "b", "c", "ERROR", "[DONE]"]);
    }

    #[test]
    fn the_usage_chunk_is_only_sent_when_asked_for() {
        let frames = frames(&reply(Script::text(["a"]), false).stream_steps());
        assert!(!frames.iter().any(|f| f.contains("\"usage\"")));
    }

    #[test]
    fn reads_the_last_user_message_in_either_content_form() {
        let request: ChatRequest = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "reply"},
                {"role": "user", "content": [{"type": "text", "text": "second"}, {"type": "image_url"}]},
                {"role": "system", "content": "sys"}
            ]
        }))
        .unwrap();
        assert_eq!(request.last_user_text(), "second");
        assert_eq!(request.prompt_tokens(), 4);
    }
}
