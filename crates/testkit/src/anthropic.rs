//! The Anthropic Messages side of the mock (`POST /v1/messages`, and `GET /v1/models` when
//! asked the Anthropic way): typed SSE events (`message_start`, `content_block_*` for a
//! signed thinking block, the text and each `tool_use`, `ping`, `message_delta` with
//! cumulative usage, `message_stop`), errors as `{"type":"error","error":{…}}`.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::reply::{self, Prompt, Reply, Step, Transcript, argument_pieces, text_of};
use crate::script::{Finish, Script};
use crate::server::Shared;

/// The request fields the mock reads.
pub(crate) fn prompt(body: &Value) -> Prompt {
    let system = std::iter::once((false, text_of(&body["system"])));
    let messages = body["messages"].as_array().into_iter().flatten();
    Prompt::from_messages(
        body["model"].as_str().map(str::to_owned),
        system.chain(messages.map(|m| (m["role"] == "user", text_of(&m["content"])))),
    )
}

/// Answers one messages request according to `script`.
pub(crate) fn respond(shared: &Arc<Shared>, body: &Value, script: Script) -> Response {
    if let Some(response) = reply::scripted_status(&script, default_error) {
        return response;
    }
    let reply = Reply::new(shared, &prompt(body), script);
    if body["stream"] != true {
        return axum::Json(whole_message(&reply)).into_response();
    }
    reply::event_stream(shared, stream_steps(&reply), &reply.framing)
}

/// An Anthropic error: `{"type":"error","error":{"type","message"}}`.
pub(crate) fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({ "type": "error", "error": { "type": kind, "message": message } });
    (status, axum::Json(body)).into_response()
}

/// The body of an unscripted status answer, typed as Anthropic types it.
pub(crate) fn default_error(status: StatusCode) -> Response {
    let kind = match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    let message = match status.as_u16() {
        529 => "Overloaded",
        _ => status.canonical_reason().unwrap_or("Scripted error"),
    };
    error_response(status, kind, message)
}

/// `GET /v1/models` in Anthropic's shape.
pub(crate) fn model_list(models: &[String]) -> Response {
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({ "type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z" }))
        .collect();
    axum::Json(json!({
        "data": data,
        "has_more": false,
        "first_id": models.first(),
        "last_id": models.last(),
    }))
    .into_response()
}

fn message_id(reply: &Reply) -> String {
    format!("msg_testkit_{}", reply.number)
}

/// A deterministic stand-in for the opaque signature of a thinking block.
fn signature(reply: &Reply) -> String {
    format!("c2lnbmF0dXJl-testkit-{}", reply.number)
}

fn stop_reason(reply: &Reply) -> &'static str {
    match reply.finish {
        Finish::Length => "max_tokens",
        Finish::ContentFilter => "refusal",
        Finish::Natural if reply.tool_calls.is_empty() => "end_turn",
        Finish::Natural => "tool_use",
    }
}

fn arguments(arguments: &str) -> Value {
    serde_json::from_str::<Value>(arguments).ok().filter(Value::is_object).unwrap_or_else(|| json!({}))
}

fn whole_message(reply: &Reply) -> Value {
    let mut content = Vec::new();
    if !reply.reasoning.is_empty() {
        content
            .push(json!({ "type": "thinking", "thinking": reply.reasoning.concat(), "signature": signature(reply) }));
    }
    content.push(json!({ "type": "text", "text": reply.text() }));
    for (index, call) in reply.tool_calls.iter().enumerate() {
        content.push(
            json!({ "type": "tool_use", "id": reply.call_id(index, "toolu_").unwrap_or_default(), "name": call.name,
                             "input": arguments(&call.arguments) }),
        );
    }
    json!({
        "id": message_id(reply),
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": { "input_tokens": uncached_input(reply), "cache_read_input_tokens": reply.usage.cached_tokens,
                   "output_tokens": reply.usage.completion_tokens },
    })
}

/// Anthropic counts cache reads apart from `input_tokens`.
fn uncached_input(reply: &Reply) -> u64 {
    reply.usage.prompt_tokens.saturating_sub(reply.usage.cached_tokens)
}

fn stream_steps(reply: &Reply) -> Vec<Step> {
    let event = |name: &'static str, data: Value| Step::now(Some(name), data.to_string());
    let delta = |index: usize, delta: Value| {
        Step::token(
            reply,
            Some("content_block_delta"),
            json!({ "type": "content_block_delta", "index": index, "delta": delta }).to_string(),
        )
    };
    let start = |index: usize, block: Value| {
        event("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": block }))
    };
    let stop = |index: usize| event("content_block_stop", json!({ "type": "content_block_stop", "index": index }));

    let mut transcript = Transcript::default();
    transcript.head.push(event(
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": message_id(reply), "type": "message", "role": "assistant", "model": reply.model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": uncached_input(reply), "cache_read_input_tokens": reply.usage.cached_tokens,
                       "output_tokens": 1 } } }),
    ));
    let mut block = 0;
    if !reply.reasoning.is_empty() {
        transcript.head.push(start(block, json!({ "type": "thinking", "thinking": "", "signature": "" })));
        transcript.head.push(event("ping", json!({ "type": "ping" })));
        for thought in &reply.reasoning {
            transcript.head.push(delta(block, json!({ "type": "thinking_delta", "thinking": thought })));
        }
        transcript.head.push(delta(block, json!({ "type": "signature_delta", "signature": signature(reply) })));
        transcript.head.push(stop(block));
        block += 1;
    }
    let text_block = block;
    for (position, text) in reply.chunks.iter().enumerate() {
        let mut frames = Vec::new();
        if position == 0 {
            frames.push(start(text_block, json!({ "type": "text", "text": "" })));
        }
        frames.push(delta(text_block, json!({ "type": "text_delta", "text": text })));
        transcript.chunks.push(frames);
    }
    if !reply.chunks.is_empty() {
        transcript.tail.push(stop(text_block));
        block += 1;
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        transcript.tail.push(start(
            block,
            json!({ "type": "tool_use", "id": reply.call_id(index, "toolu_").unwrap_or_default(), "name": call.name, "input": {} }),
        ));
        for piece in argument_pieces(&call.arguments) {
            transcript.tail.push(delta(block, json!({ "type": "input_json_delta", "partial_json": piece })));
        }
        transcript.tail.push(stop(block));
        block += 1;
    }
    transcript.tail.push(event(
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": stop_reason(reply), "stop_sequence": null },
                "usage": { "output_tokens": reply.usage.completion_tokens } }),
    ));
    transcript.tail.push(event("message_stop", json!({ "type": "message_stop" })));

    let malformed = Step::now(Some("content_block_delta"), "{not json");
    reply::assemble(transcript, reply, malformed, |failure| {
        let error = json!({ "type": "error",
                            "error": { "type": failure.code.unwrap_or("api_error"), "message": failure.message } });
        vec![Step::now(Some("error"), error.to_string())]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{frames, test_reply};
    use crate::script::Fault;

    fn reply(script: Script) -> Reply {
        test_reply(3, "claude", script)
    }

    fn events(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|step| match step {
                Step::Frame { event: Some(event), data, .. } => {
                    let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                    assert!(value.is_null() || value["type"] == *event, "the data's type matches the event: {data}");
                    let detail = value["delta"]["type"].as_str().or(value["content_block"]["type"].as_str());
                    detail.map_or_else(|| (*event).to_owned(), |detail| format!("{event}:{detail}"))
                }
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn streams_thinking_text_and_tool_use_as_typed_events() {
        let script = Script::text(["Hel", "lo"]).with_reasoning(["hmm"]).with_tool_call("f", "{}").with_usage(9, 4);
        let steps = stream_steps(&reply(script));
        assert_eq!(
            events(&steps),
            [
                "message_start",
                "content_block_start:thinking",
                "ping",
                "content_block_delta:thinking_delta",
                "content_block_delta:signature_delta",
                "content_block_stop",
                "content_block_start:text",
                "content_block_delta:text_delta",
                "content_block_delta:text_delta",
                "content_block_stop",
                "content_block_start:tool_use",
                "content_block_delta:input_json_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        let message_delta: Value = serde_json::from_str(&frames(&steps)[13]).unwrap();
        assert_eq!(message_delta["delta"]["stop_reason"], "tool_use");
        assert_eq!(message_delta["usage"]["output_tokens"], 4);
    }

    #[test]
    fn an_error_event_ends_the_stream_with_the_scripted_type() {
        let script = Script::text(["a", "b"])
            .with_fault(Fault::ErrorFrame { after: 1, message: "Overloaded".into() })
            .with_error_code("overloaded_error");
        let steps = stream_steps(&reply(script));
        let last: Value = serde_json::from_str(frames(&steps).last().unwrap()).unwrap();
        assert_eq!(last, json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}));
        assert_eq!(events(&steps).last().map(String::as_str), Some("error"));
    }

    #[test]
    fn a_cut_reply_says_why_in_its_stop_reason() {
        for (finish, expected) in [(Finish::Length, "max_tokens"), (Finish::ContentFilter, "refusal")] {
            let steps = stream_steps(&reply(Script::text(["a"]).with_finish(finish)));
            let delta: Value = frames(&steps)
                .iter()
                .filter_map(|f| serde_json::from_str::<Value>(f).ok())
                .find(|v| v["type"] == "message_delta")
                .unwrap();
            assert_eq!(delta["delta"]["stop_reason"], expected);
            assert_eq!(whole_message(&reply(Script::text(["a"]).with_finish(finish)))["stop_reason"], expected);
        }
    }
}
