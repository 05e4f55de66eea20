//! The OpenAI Chat Completions side of the mock (`POST /v1/chat/completions`,
//! `GET /v1/models`): reading requests, and writing replies in the exact wire shape (SSE
//! chunks, tool-call fragments, `[DONE]`, usage chunk, JSON errors), faults included.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::reply::{self, Prompt, Reply, Step, Transcript, argument_pieces, text_of};
use crate::script::{Finish, Script};
use crate::server::Shared;

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
    fn prompt(&self) -> Prompt {
        Prompt::from_messages(
            self.model.clone(),
            self.messages.iter().map(|m| (m["role"] == "user", text_of(&m["content"]))),
        )
    }
}

/// Answers one chat request according to `script`.
pub(crate) fn respond(shared: &Arc<Shared>, request: &ChatRequest, script: Script) -> Response {
    if let Some(response) = reply::scripted_status(&script, default_error) {
        return response;
    }
    let reply = Reply::new(shared, &request.prompt(), script);
    if request.stream != Some(true) {
        // Only `status` faults apply to non-streaming requests.
        return axum::Json(whole_completion(&reply)).into_response();
    }
    let include_usage = request.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false);
    reply::event_stream(shared, stream_steps(&reply, include_usage), &reply.framing)
}

/// An OpenAI-style error response: `{"error": {"message", "type", "param", "code"}}`.
pub(crate) fn error_response(status: StatusCode, message: &str, kind: &str, code: Option<&str>) -> Response {
    let body = json!({ "error": { "message": message, "type": kind, "param": null, "code": code } });
    (status, axum::Json(body)).into_response()
}

/// The body of an unscripted status answer.
pub(crate) fn default_error(status: StatusCode) -> Response {
    let message = status.canonical_reason().unwrap_or("Scripted error");
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    error_response(status, message, kind, None)
}

/// `GET /v1/models` in OpenAI's list shape.
pub(crate) fn model_list(models: &[String]) -> Response {
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "colloquy-testkit" }))
        .collect();
    axum::Json(json!({ "object": "list", "data": data })).into_response()
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallFragment<'a>>,
}

#[derive(Debug, Serialize)]
struct ToolCallFragment<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    function: FunctionFragment<'a>,
}

#[derive(Debug, Serialize)]
struct FunctionFragment<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_tokens_details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_tokens_details: Option<Value>,
}

fn wire_usage(reply: &Reply) -> WireUsage {
    let usage = reply.usage;
    let (prompt_tokens, completion_tokens) = (usage.prompt_tokens, usage.completion_tokens);
    WireUsage {
        prompt_tokens,
        completion_tokens,
        total_tokens: prompt_tokens.saturating_add(completion_tokens),
        prompt_tokens_details: (usage.cached_tokens > 0).then(|| json!({ "cached_tokens": usage.cached_tokens })),
        completion_tokens_details: (usage.reasoning_tokens > 0)
            .then(|| json!({ "reasoning_tokens": usage.reasoning_tokens })),
    }
}

fn completion_id(reply: &Reply) -> String {
    format!("chatcmpl-testkit-{}", reply.number)
}

fn finish_reason(reply: &Reply) -> &'static str {
    match reply.finish {
        Finish::Length => "length",
        Finish::ContentFilter => "content_filter",
        Finish::Natural if reply.tool_calls.is_empty() => "stop",
        Finish::Natural => "tool_calls",
    }
}

fn whole_completion(reply: &Reply) -> Value {
    let mut message = json!({ "role": "assistant", "content": reply.text() });
    if !reply.reasoning.is_empty() {
        message["reasoning_content"] = json!(reply.reasoning.concat());
    }
    if !reply.tool_calls.is_empty() {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                json!({ "id": reply.call_id(index, "call_"), "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments } })
            })
            .collect();
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": completion_id(reply),
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(reply) }],
        "usage": wire_usage(reply),
    })
}

fn stream_steps(reply: &Reply, include_usage: bool) -> Vec<Step> {
    let id = completion_id(reply);
    let frame = |choices: Vec<ChunkChoice<'_>>, usage: Option<WireUsage>| {
        let frame = ChunkFrame {
            id: &id,
            object: "chat.completion.chunk",
            created: reply.created,
            model: &reply.model,
            choices,
            usage,
        };
        serde_json::to_string(&frame).unwrap_or_default()
    };
    let chunk = |delta: Delta<'_>, finish_reason: Option<&'static str>| {
        frame(vec![ChunkChoice { index: 0, delta, logprobs: None, finish_reason }], None)
    };

    let mut transcript = Transcript {
        head: vec![Step::now(
            None,
            chunk(Delta { role: Some("assistant"), content: Some(""), ..Delta::default() }, None),
        )],
        ..Transcript::default()
    };
    transcript.head.extend(
        reply
            .reasoning
            .iter()
            .map(|r| Step::token(reply, None, chunk(Delta { reasoning_content: Some(r), ..Delta::default() }, None))),
    );
    transcript.chunks = reply
        .chunks
        .iter()
        .map(|text| vec![Step::token(reply, None, chunk(Delta { content: Some(text), ..Delta::default() }, None))])
        .collect();
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let start = ToolCallFragment {
            index,
            id: reply.call_id(index, "call_"),
            kind: Some("function"),
            function: FunctionFragment { name: Some(&call.name), arguments: "" },
        };
        transcript.tail.push(Step::token(
            reply,
            None,
            chunk(Delta { tool_calls: vec![start], ..Delta::default() }, None),
        ));
        for piece in argument_pieces(&call.arguments) {
            let fragment = ToolCallFragment {
                index,
                id: None,
                kind: None,
                function: FunctionFragment { name: None, arguments: &piece },
            };
            transcript.tail.push(Step::token(
                reply,
                None,
                chunk(Delta { tool_calls: vec![fragment], ..Delta::default() }, None),
            ));
        }
    }
    transcript.tail.push(Step::now(None, chunk(Delta::default(), Some(finish_reason(reply)))));
    if include_usage {
        transcript.tail.push(Step::now(None, frame(Vec::new(), Some(wire_usage(reply)))));
    }
    transcript.tail.push(Step::now(None, "[DONE]"));

    reply::assemble(transcript, reply, Step::now(None, "{not json"), |failure| {
        let error = json!({ "error": { "message": failure.message, "type": "server_error", "param": null,
                                       "code": failure.code } });
        vec![Step::now(None, error.to_string()), Step::now(None, "[DONE]")]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{frames, test_reply};
    use crate::script::Fault;

    fn reply(script: Script) -> Reply {
        test_reply(1, "m", script)
    }

    #[test]
    fn streams_in_the_exact_openai_shape() {
        let steps = stream_steps(&reply(Script::text(["Hi"]).with_reasoning(["hmm"]).with_usage(3, 1)), true);
        let frames = frames(&steps);
        let parsed: Vec<Value> = frames[..frames.len() - 1].iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        let choice = |delta: Value, finish: Value| {
            json!({"id":"chatcmpl-testkit-1","object":"chat.completion.chunk","created":7,"model":"m",
                   "choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]})
        };
        assert_eq!(
            parsed,
            vec![
                choice(json!({"role":"assistant","content":""}), Value::Null),
                choice(json!({"reasoning_content":"hmm"}), Value::Null),
                choice(json!({"content":"Hi"}), Value::Null),
                choice(json!({}), json!("stop")),
                json!({"id":"chatcmpl-testkit-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],
                       "usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}),
            ]
        );
        assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
        assert_eq!(
            frames[0],
            r#"{"id":"chatcmpl-testkit-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
            "field order as OpenAI sends it"
        );
    }

    #[test]
    fn tool_calls_stream_as_indexed_fragments_then_finish_with_tool_calls() {
        let script = Script::text(["Checking."]).with_tool_call("weather", r#"{"city":"Paris","unit":"celsius"}"#);
        let frames = frames(&stream_steps(&reply(script), false));
        let calls: Vec<Value> = frames
            .iter()
            .filter_map(|f| serde_json::from_str::<Value>(f).ok())
            .filter_map(|v| v["choices"][0]["delta"]["tool_calls"].get(0).cloned())
            .collect();
        assert_eq!(
            calls[0],
            json!({"index":0,"id":"call_testkit_1_0","type":"function","function":{"name":"weather","arguments":""}})
        );
        let arguments: String = calls[1..].iter().map(|c| c["function"]["arguments"].as_str().unwrap()).collect();
        assert_eq!(arguments, r#"{"city":"Paris","unit":"celsius"}"#);
        assert!(calls.len() > 2, "arguments arrive in pieces");
        assert!(frames[frames.len() - 2].contains(r#""finish_reason":"tool_calls""#));
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
        let run = |fault| content(&frames(&stream_steps(&reply(script(fault)), false)));
        assert_eq!(run(Fault::Reset { after: 2 }), ["a", "b", "RESET"]);
        assert_eq!(run(Fault::Stall { after: 0 }), ["STALL"]);
        assert_eq!(run(Fault::MalformedFrame { after: 1 }), ["a", "{not json", "b", "c", "STOP", "[DONE]"]);
        assert_eq!(run(Fault::ErrorFrame { after: 9, message: "x".into() }), ["a", "b", "c", "ERROR", "[DONE]"]);
    }

    #[test]
    fn the_usage_chunk_is_only_sent_when_asked_for() {
        let frames = frames(&stream_steps(&reply(Script::text(["a"])), false));
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
        let prompt = request.prompt();
        assert_eq!(prompt.last_user_text, "second");
        assert_eq!(prompt.words, 4);
    }

    #[test]
    fn a_cut_reply_says_why_in_its_finish_reason() {
        for (finish, expected) in [(Finish::Length, "length"), (Finish::ContentFilter, "content_filter")] {
            let steps = stream_steps(&reply(Script::text(["a"]).with_finish(finish)), false);
            let frames = frames(&steps);
            assert!(frames[frames.len() - 2].contains(&format!(r#""finish_reason":"{expected}""#)), "{frames:?}");
            let whole = whole_completion(&reply(Script::text(["a"]).with_finish(finish)));
            assert_eq!(whole["choices"][0]["finish_reason"], expected);
        }
    }
}
