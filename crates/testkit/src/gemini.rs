//! The Gemini side of the mock (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
//! `GET /v1beta/models`; the same under `/v1`): each frame a whole
//! `GenerateContentResponse` — thought parts, text parts, function calls in one frame with
//! the thought signature on the first — then a frame with `finishReason` and usage.
//! Errors are `{"error":{"code","message","status"}}`.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::reply::{self, Prompt, Reply, Step, Transcript, text_of};
use crate::script::{Finish, Script};
use crate::server::Shared;

/// The request fields the mock reads; the model comes from the path.
pub(crate) fn prompt(model: &str, body: &Value) -> Prompt {
    let system = std::iter::once((false, text_of(&body["systemInstruction"]["parts"])));
    let contents = body["contents"].as_array().into_iter().flatten();
    Prompt::from_messages(
        Some(model.to_owned()),
        system.chain(contents.map(|c| (c["role"] != "model", text_of(&c["parts"])))),
    )
}

/// Answers one `streamGenerateContent` (`sse` true with `alt=sse`, else a JSON array) or
/// `generateContent` (`whole`) request according to `script`.
pub(crate) fn respond(shared: &Arc<Shared>, model: &str, body: &Value, script: Script, form: Form) -> Response {
    if let Some(response) = reply::scripted_status(&script, default_error) {
        return response;
    }
    let reply = Reply::new(shared, &prompt(model, body), script);
    let steps = stream_steps(&reply);
    match form {
        Form::Sse => reply::event_stream(shared, steps, &reply.framing),
        // Only `status` faults apply to whole answers.
        Form::JsonArray | Form::Whole => {
            let Transcript { head, chunks, tail } = transcript(&reply);
            let frames: Vec<Value> = head
                .into_iter()
                .chain(chunks.into_iter().flatten())
                .chain(tail)
                .filter_map(|step| match step {
                    Step::Frame { data, .. } => serde_json::from_str(&data).ok(),
                    Step::Reset | Step::Stall => None,
                })
                .collect();
            match form {
                Form::JsonArray => axum::Json(Value::Array(frames)).into_response(),
                _ => axum::Json(merge(&reply, &frames)).into_response(),
            }
        }
    }
}

/// How the answer is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `streamGenerateContent?alt=sse`.
    Sse,
    /// `streamGenerateContent` without `alt=sse`.
    JsonArray,
    /// `generateContent`.
    Whole,
}

/// A Google API error: `{"error":{"code","message","status"}}`.
pub(crate) fn error_response(status: StatusCode, message: &str, code_name: &str) -> Response {
    let body = json!({ "error": { "code": status.as_u16(), "message": message, "status": code_name } });
    (status, axum::Json(body)).into_response()
}

/// Google's status name for an HTTP status.
fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        408 | 504 => "DEADLINE_EXCEEDED",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        503 | 529 => "UNAVAILABLE",
        _ => "UNKNOWN",
    }
}

/// The HTTP status for a Google status name, for scripted in-stream errors.
fn status_code(name: &str) -> u16 {
    match name {
        "INVALID_ARGUMENT" => 400,
        "UNAUTHENTICATED" => 401,
        "PERMISSION_DENIED" => 403,
        "RESOURCE_EXHAUSTED" => 429,
        "UNAVAILABLE" => 503,
        "DEADLINE_EXCEEDED" => 504,
        _ => 500,
    }
}

/// The body of an unscripted status answer.
pub(crate) fn default_error(status: StatusCode) -> Response {
    let message = match status.as_u16() {
        503 | 529 => "The model is overloaded. Please try again later.",
        429 => "Resource has been exhausted (e.g. check quota).",
        _ => status.canonical_reason().unwrap_or("Scripted error"),
    };
    error_response(status, message, status_name(status.as_u16()))
}

/// `GET /v1beta/models` in Gemini's shape.
pub(crate) fn model_list(models: &[String]) -> Response {
    let models: Vec<Value> = models
        .iter()
        .map(|id| {
            json!({ "name": format!("models/{id}"), "displayName": id,
                    "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"] })
        })
        .collect();
    axum::Json(json!({ "models": models })).into_response()
}

fn response_id(reply: &Reply) -> String {
    format!("testkit-{}", reply.number)
}

/// Gemini counts thoughts apart from the candidates; `generated` counts both.
fn usage(reply: &Reply, generated: u64) -> Value {
    let prompt = reply.usage.prompt_tokens;
    let thoughts = reply.usage.reasoning_tokens.min(generated);
    let mut usage = json!({ "promptTokenCount": prompt, "candidatesTokenCount": generated - thoughts,
                            "totalTokenCount": prompt.saturating_add(generated) });
    if thoughts > 0 {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    if reply.usage.cached_tokens > 0 {
        usage["cachedContentTokenCount"] = json!(reply.usage.cached_tokens);
    }
    usage
}

fn transcript(reply: &Reply) -> Transcript {
    let response_id = response_id(reply);
    let frame = |parts: Vec<Value>, finish: Option<&str>, candidates: u64| {
        let mut candidate = json!({ "content": { "parts": parts, "role": "model" }, "index": 0 });
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        json!({ "candidates": [candidate], "usageMetadata": usage(reply, candidates),
                "modelVersion": reply.model, "responseId": response_id })
        .to_string()
    };
    let signature = format!("dGhvdWdodA-testkit-{}", reply.number);
    let mut transcript = Transcript::default();
    let mut generated = 0;
    for thought in &reply.reasoning {
        generated += 1;
        transcript.head.push(Step::token(
            reply,
            None,
            frame(vec![json!({ "text": thought, "thought": true })], None, generated),
        ));
    }
    // The signature rides on the first function call or, without one, the first answer part.
    let mut pending_signature = (!reply.reasoning.is_empty()).then_some(signature);
    for text in &reply.chunks {
        generated += 1;
        let mut part = json!({ "text": text });
        if reply.tool_calls.is_empty()
            && let Some(signature) = pending_signature.take()
        {
            part["thoughtSignature"] = json!(signature);
        }
        transcript.chunks.push(vec![Step::token(reply, None, frame(vec![part], None, generated))]);
    }
    if !reply.tool_calls.is_empty() {
        let parts: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(|call| {
                let args = serde_json::from_str::<Value>(&call.arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                let mut part = json!({ "functionCall": { "name": call.name, "args": args } });
                if let Some(id) = &call.id {
                    part["functionCall"]["id"] = json!(id);
                }
                if let Some(signature) = pending_signature.take() {
                    part["thoughtSignature"] = json!(signature);
                }
                part
            })
            .collect();
        generated += 1;
        transcript.tail.push(Step::token(reply, None, frame(parts, None, generated)));
    }
    transcript.tail.push(Step::now(
        None,
        frame(vec![json!({ "text": "" })], Some(finish_reason(reply)), reply.usage.completion_tokens),
    ));
    transcript
}

fn stream_steps(reply: &Reply) -> Vec<Step> {
    reply::assemble(transcript(reply), reply, Step::now(None, "{not json"), |failure| {
        let name = failure.code.unwrap_or("INTERNAL");
        let error = json!({ "error": { "code": status_code(name), "message": failure.message, "status": name } });
        vec![Step::now(None, error.to_string())]
    })
}

fn finish_reason(reply: &Reply) -> &'static str {
    match reply.finish {
        Finish::Natural => "STOP",
        Finish::Length => "MAX_TOKENS",
        Finish::ContentFilter => "SAFETY",
    }
}

/// A `generateContent` answer: the streamed frames folded into one response.
fn merge(reply: &Reply, frames: &[Value]) -> Value {
    let parts: Vec<Value> = frames
        .iter()
        .filter_map(|frame| frame["candidates"][0]["content"]["parts"].as_array())
        .flatten()
        .filter(|part| part.get("text").is_none_or(|text| text != ""))
        .cloned()
        .collect();
    json!({
        "candidates": [{ "content": { "parts": parts, "role": "model" }, "finishReason": finish_reason(reply),
                         "index": 0 }],
        "usageMetadata": usage(reply, reply.usage.completion_tokens),
        "modelVersion": reply.model,
        "responseId": response_id(reply),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{frames, test_reply};
    use crate::script::Fault;

    fn reply(script: Script) -> Reply {
        test_reply(2, "gemini", script)
    }

    fn parts(steps: &[Step]) -> Vec<Value> {
        frames(steps)
            .iter()
            .filter_map(|f| serde_json::from_str::<Value>(f).ok())
            .flat_map(|v| v["candidates"][0]["content"]["parts"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    #[test]
    fn thoughts_text_and_calls_with_the_signature_on_the_first_call() {
        let script =
            Script::text(["Hi"]).with_reasoning(["hmm"]).with_tool_call("a", r#"{"x":1}"#).with_tool_call("b", "nope");
        let steps = stream_steps(&reply(script));
        assert_eq!(
            parts(&steps),
            vec![
                json!({"text": "hmm", "thought": true}),
                json!({"text": "Hi"}),
                json!({"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "dGhvdWdodA-testkit-2"}),
                json!({"functionCall": {"name": "b", "args": {}}}),
                json!({"text": ""}),
            ]
        );
        let last: Value = serde_json::from_str(frames(&steps).last().unwrap()).unwrap();
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn without_calls_the_signature_rides_on_the_first_text() {
        let parts = parts(&stream_steps(&reply(Script::text(["a", "b"]).with_reasoning(["t"]))));
        assert_eq!(parts[1], json!({"text": "a", "thoughtSignature": "dGhvdWdodA-testkit-2"}));
        assert_eq!(parts[2], json!({"text": "b"}));
    }

    #[test]
    fn an_in_stream_error_uses_googles_shape() {
        let script = Script::text(["a"])
            .with_fault(Fault::ErrorFrame { after: 1, message: "Quota".into() })
            .with_error_code("RESOURCE_EXHAUSTED");
        let last: Value = serde_json::from_str(frames(&stream_steps(&reply(script))).last().unwrap()).unwrap();
        assert_eq!(last, json!({"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}}));
    }

    #[test]
    fn reads_contents_and_the_system_instruction() {
        let prompt = prompt(
            "m",
            &json!({"systemInstruction": {"parts": [{"text": "be brief"}]},
                    "contents": [{"role": "user", "parts": [{"text": "hi there"}]}, {"role": "model", "parts": [{"text": "yo"}]}]}),
        );
        assert_eq!((prompt.last_user_text.as_str(), prompt.words, prompt.model.as_deref()), ("hi there", 5, Some("m")));
    }

    #[test]
    fn a_cut_reply_says_why_in_its_finish_reason() {
        for (finish, expected) in [(Finish::Length, "MAX_TOKENS"), (Finish::ContentFilter, "SAFETY")] {
            let steps = stream_steps(&reply(Script::text(["a"]).with_finish(finish)));
            let last: Value = serde_json::from_str(frames(&steps).last().unwrap()).unwrap();
            assert_eq!(last["candidates"][0]["finishReason"], expected);
        }
    }
}
