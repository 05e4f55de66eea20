//! The OpenAI Responses side of the mock (`POST /v1/responses`): typed SSE events
//! (`response.created`, output items for the reasoning summary, the message and each
//! function call, their deltas, `response.completed` with usage), standalone `error`
//! events, and OpenAI-shaped JSON errors.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::openai_chat::default_error;
use crate::reply::{self, Prompt, Reply, Step, Transcript, argument_pieces, text_of};
use crate::script::{Finish, Script};
use crate::server::Shared;

/// The request fields the mock reads: `instructions`, and `input` as a string or a list
/// of messages.
pub(crate) fn prompt(body: &Value) -> Prompt {
    let instructions = std::iter::once((false, text_of(&body["instructions"])));
    let input: Vec<(bool, String)> = match &body["input"] {
        Value::String(text) => vec![(true, text.clone())],
        Value::Array(items) => items.iter().map(|item| (item["role"] == "user", text_of(&item["content"]))).collect(),
        _ => Vec::new(),
    };
    Prompt::from_messages(body["model"].as_str().map(str::to_owned), instructions.chain(input))
}

/// Answers one responses request according to `script`.
pub(crate) fn respond(shared: &Arc<Shared>, body: &Value, script: Script) -> Response {
    if let Some(response) = reply::scripted_status(&script, default_error) {
        return response;
    }
    let reply = Reply::new(shared, &prompt(body), script);
    if body["stream"] != true {
        return axum::Json(response_object(&reply, final_status(&reply))).into_response();
    }
    reply::event_stream(shared, stream_steps(&reply), &reply.framing)
}

fn response_id(reply: &Reply) -> String {
    format!("resp_testkit_{}", reply.number)
}

fn message_item(reply: &Reply, text: &str, status: &str) -> Value {
    json!({ "id": format!("msg_testkit_{}", reply.number), "type": "message", "status": status, "role": "assistant",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }] })
}

fn reasoning_item(reply: &Reply) -> Value {
    json!({ "id": format!("rs_testkit_{}", reply.number), "type": "reasoning",
            "summary": [{ "type": "summary_text", "text": reply.reasoning.concat() }] })
}

fn call_item(reply: &Reply, index: usize, arguments: &str, status: &str) -> Value {
    json!({ "id": format!("fc_testkit_{}_{index}", reply.number), "type": "function_call", "status": status,
            "call_id": reply.call_id(index, "call_"), "name": reply.tool_calls[index].name, "arguments": arguments })
}

/// How the response ends: `completed`, or `incomplete` when the script cuts it.
fn final_status(reply: &Reply) -> &'static str {
    if reply.finish.is_natural() { "completed" } else { "incomplete" }
}

/// The response object, with every output item complete.
fn response_object(reply: &Reply, status: &str) -> Value {
    let mut output = Vec::new();
    if !reply.reasoning.is_empty() {
        output.push(reasoning_item(reply));
    }
    output.push(message_item(reply, &reply.text(), "completed"));
    output.extend(
        reply.tool_calls.iter().enumerate().map(|(index, call)| call_item(reply, index, &call.arguments, "completed")),
    );
    let (input, output_tokens) = (reply.usage.prompt_tokens, reply.usage.completion_tokens);
    let incomplete = match (status, reply.finish) {
        ("incomplete", Finish::Length) => json!({ "reason": "max_output_tokens" }),
        ("incomplete", Finish::ContentFilter) => json!({ "reason": "content_filter" }),
        _ => Value::Null,
    };
    json!({
        "id": response_id(reply), "object": "response", "created_at": reply.created, "status": status,
        "model": reply.model, "output": output, "incomplete_details": incomplete,
        "usage": { "input_tokens": input, "output_tokens": output_tokens, "total_tokens": input.saturating_add(output_tokens),
                   "input_tokens_details": { "cached_tokens": reply.usage.cached_tokens },
                   "output_tokens_details": { "reasoning_tokens": reply.usage.reasoning_tokens } },
    })
}

fn stream_steps(reply: &Reply) -> Vec<Step> {
    let mut sequence = 0u64;
    let mut event = |name: &'static str, mut data: Value, delay: bool| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        if delay { Step::token(reply, Some(name), data.to_string()) } else { Step::now(Some(name), data.to_string()) }
    };
    let mut transcript = Transcript::default();
    let mut in_progress = response_object(reply, "in_progress");
    in_progress["output"] = json!([]);
    in_progress["usage"] = Value::Null;
    transcript.head.push(event("response.created", json!({ "response": in_progress }), false));
    transcript.head.push(event("response.in_progress", json!({ "response": in_progress }), false));

    let mut output_index = 0;
    if !reply.reasoning.is_empty() {
        let item = reasoning_item(reply);
        let item_id = item["id"].clone();
        let mut added = item.clone();
        added["summary"] = json!([]);
        transcript.head.push(event(
            "response.output_item.added",
            json!({ "output_index": output_index, "item": added }),
            false,
        ));
        let part = json!({ "item_id": item_id, "output_index": output_index, "summary_index": 0 });
        transcript.head.push(event("response.reasoning_summary_part.added", part.clone(), false));
        for thought in &reply.reasoning {
            let mut delta = part.clone();
            delta["delta"] = json!(thought);
            transcript.head.push(event("response.reasoning_summary_text.delta", delta, true));
        }
        let mut done = part.clone();
        done["text"] = json!(reply.reasoning.concat());
        transcript.head.push(event("response.reasoning_summary_text.done", done, false));
        transcript.head.push(event(
            "response.output_item.done",
            json!({ "output_index": output_index, "item": item }),
            false,
        ));
        output_index += 1;
    }

    let message = message_item(reply, "", "in_progress");
    let message_id = message["id"].clone();
    let mut added = message.clone();
    added["content"] = json!([]);
    transcript.head.push(event(
        "response.output_item.added",
        json!({ "output_index": output_index, "item": added }),
        false,
    ));
    let part = json!({ "item_id": message_id, "output_index": output_index, "content_index": 0 });
    let mut part_added = part.clone();
    part_added["part"] = json!({ "type": "output_text", "text": "", "annotations": [] });
    transcript.head.push(event("response.content_part.added", part_added, false));
    for text in &reply.chunks {
        let mut delta = part.clone();
        delta["delta"] = json!(text);
        transcript.chunks.push(vec![event("response.output_text.delta", delta, true)]);
    }
    let mut text_done = part.clone();
    text_done["text"] = json!(reply.text());
    transcript.tail.push(event("response.output_text.done", text_done, false));
    transcript.tail.push(event(
        "response.output_item.done",
        json!({ "output_index": output_index, "item": message_item(reply, &reply.text(), "completed") }),
        false,
    ));
    output_index += 1;

    for (index, call) in reply.tool_calls.iter().enumerate() {
        let item = call_item(reply, index, "", "in_progress");
        let ids = json!({ "item_id": item["id"], "output_index": output_index });
        transcript.tail.push(event(
            "response.output_item.added",
            json!({ "output_index": output_index, "item": item }),
            false,
        ));
        for piece in argument_pieces(&call.arguments) {
            let mut delta = ids.clone();
            delta["delta"] = json!(piece);
            transcript.tail.push(event("response.function_call_arguments.delta", delta, true));
        }
        let mut done = ids.clone();
        done["arguments"] = json!(call.arguments);
        transcript.tail.push(event("response.function_call_arguments.done", done, false));
        transcript.tail.push(event(
            "response.output_item.done",
            json!({ "output_index": output_index, "item": call_item(reply, index, &call.arguments, "completed") }),
            false,
        ));
        output_index += 1;
    }
    let (terminal, status) = if reply.finish.is_natural() {
        ("response.completed", "completed")
    } else {
        ("response.incomplete", "incomplete")
    };
    transcript.tail.push(event(terminal, json!({ "response": response_object(reply, status) }), false));

    let malformed = Step::now(Some("response.output_text.delta"), "{not json");
    let failed = {
        let mut failed = response_object(reply, "failed");
        failed["output"] = json!([]);
        failed["usage"] = Value::Null;
        failed
    };
    reply::assemble(transcript, reply, malformed, |failure| {
        let code = failure.code.unwrap_or("server_error");
        if failure.failed {
            let mut response = failed;
            response["error"] = json!({ "code": code, "message": failure.message });
            let data = json!({ "type": "response.failed", "sequence_number": sequence, "response": response });
            return vec![Step::now(Some("response.failed"), data.to_string())];
        }
        let error = json!({ "type": "error", "code": code, "message": failure.message, "param": null });
        vec![Step::now(Some("error"), error.to_string())]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{frames, test_reply};

    fn reply(script: Script) -> Reply {
        test_reply(5, "gpt", script)
    }

    #[test]
    fn every_frame_names_its_type_in_the_event_line_and_the_data() {
        let script = Script::text(["Hi"]).with_reasoning(["hmm"]).with_tool_call("f", r#"{"a":1}"#).with_usage(2, 3);
        let steps = stream_steps(&reply(script));
        let types: Vec<&str> = steps
            .iter()
            .map(|step| match step {
                Step::Frame { event: Some(event), data, .. } => {
                    let value: Value = serde_json::from_str(data).unwrap();
                    assert_eq!(value["type"], *event);
                    *event
                }
                other => panic!("unexpected step {other:?}"),
            })
            .collect();
        assert_eq!(types.first(), Some(&"response.created"));
        assert_eq!(types.last(), Some(&"response.completed"));
        for expected in [
            "response.reasoning_summary_text.delta",
            "response.output_text.delta",
            "response.function_call_arguments.delta",
        ] {
            assert!(types.contains(&expected), "{expected} in {types:?}");
        }
        let completed: Value = serde_json::from_str(frames(&steps).last().unwrap()).unwrap();
        assert_eq!(completed["response"]["usage"]["output_tokens"], 3);
        assert_eq!(completed["response"]["output"][2]["arguments"], r#"{"a":1}"#);
    }

    #[test]
    fn reads_string_and_list_input() {
        let prompt = prompt(&json!({"model": "m", "instructions": "be brief", "input": "hello there"}));
        assert_eq!((prompt.last_user_text.as_str(), prompt.words), ("hello there", 4));
        let prompt = prompt_of_list();
        assert_eq!(prompt.last_user_text, "second");
    }

    fn prompt_of_list() -> Prompt {
        prompt(&json!({"input": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "input_text", "text": "second"}]}
        ]}))
    }

    #[test]
    fn a_cut_reply_ends_incomplete_with_its_reason_and_a_failure_is_response_failed() {
        for (finish, expected) in [(Finish::Length, "max_output_tokens"), (Finish::ContentFilter, "content_filter")] {
            let steps = stream_steps(&reply(Script::text(["Hi"]).with_finish(finish)));
            let last: Value = serde_json::from_str(frames(&steps).last().unwrap()).unwrap();
            assert_eq!(last["type"], "response.incomplete");
            assert_eq!(last["response"]["status"], "incomplete");
            assert_eq!(last["response"]["incomplete_details"]["reason"], expected);
        }
        let script = Script::text(["a", "b"])
            .with_fault(crate::script::Fault::Failed { after: 1, message: "model gave up".into() })
            .with_error_code("server_error");
        let steps = stream_steps(&reply(script));
        let texts: Vec<Value> = frames(&steps).iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        assert_eq!(texts.iter().filter(|v| v["type"] == "response.output_text.delta").count(), 1);
        let last = texts.last().unwrap();
        assert_eq!(last["type"], "response.failed");
        assert_eq!(last["response"]["status"], "failed");
        assert_eq!(last["response"]["error"], json!({"code": "server_error", "message": "model gave up"}));
    }
}
