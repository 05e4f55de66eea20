//! Claude Code's stream-json protocol: reading its stdout lines into [`DriverEvent`]s and
//! writing what we send on its stdin. Pure: no I/O, so it is tested on recorded lines.
//!
//! Text reaches us twice: as `stream_event` deltas (what we stream) and as one
//! `assistant` message per finished block. Blocks of the message being streamed are
//! taken from the deltas; an `assistant` text block of any other message (the CLI writes
//! some itself, e.g. an API error) is passed on whole.

use protocol::tool::{ToolContent, ToolOutput};
use serde_json::{Value, json};

use crate::driver::{DriverEvent, PermissionAnswer};

/// The id we register for the PreToolUse hook.
pub(crate) const BEFORE_TOOL_HOOK: &str = "colloquy_before_tool";

/// What one stdout line means.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    Event(DriverEvent),
    /// The answer to one of our control requests.
    ControlResponse {
        request_id: String,
        result: Result<Value, String>,
    },
    /// A control request we do not handle; it must still be answered.
    UnsupportedRequest {
        request_id: String,
        subtype: String,
    },
    /// Text that is not part of the protocol (a wrapper script's banner, another
    /// program's output), trimmed and cut to a readable length.
    NotJson(String),
}

/// How much of a stray line is kept for messages.
const NOT_JSON_CHARS: usize = 300;

#[derive(Default)]
pub(crate) struct LineReader {
    /// The id of the assistant message being streamed.
    streaming_message: Option<String>,
}

impl LineReader {
    /// Reads one stdout line. Types this version does not know mean nothing (the CLI
    /// adds new ones over time); a line that is not a JSON object is reported as
    /// [`Line::NotJson`], for messages when the program turns out not to be the CLI.
    pub(crate) fn read(&mut self, line: &str) -> Vec<Line> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let value = if line.starts_with('{') { serde_json::from_str::<Value>(line).ok() } else { None };
        let Some(value) = value else {
            return vec![Line::NotJson(truncate(line, NOT_JSON_CHARS).to_owned())];
        };
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        match value.get("type").and_then(Value::as_str).unwrap_or_default() {
            "stream_event" => self.stream_event(&value),
            "assistant" => {
                if !value["parent_tool_use_id"].is_null() {
                    return Vec::new(); // a subagent's inner message
                }
                let message = &value["message"];
                let streamed = message
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| Some(id) == self.streaming_message.as_deref());
                blocks(&message["content"])
                    .filter_map(|block| match block.get("type").and_then(Value::as_str) {
                        Some("tool_use") => Some(Line::Event(DriverEvent::ToolUse {
                            id: text(block, "id").unwrap_or_default(),
                            name: text(block, "name").unwrap_or_default(),
                            input: block.get("input").cloned().unwrap_or_else(|| json!({})),
                        })),
                        Some("text") if !streamed => text(block, "text")
                            .filter(|t| !t.is_empty())
                            .map(|text| Line::Event(DriverEvent::AssistantText { text })),
                        _ => None,
                    })
                    .collect()
            }
            "user" => {
                if !value["parent_tool_use_id"].is_null() {
                    return Vec::new();
                }
                blocks(&value["message"]["content"])
                    .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .map(|block| {
                        let mut output = tool_output(block.get("content").unwrap_or(&Value::Null));
                        output.is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                        Line::Event(DriverEvent::ToolResult {
                            id: text(block, "tool_use_id").unwrap_or_default(),
                            output,
                        })
                    })
                    .collect()
            }
            "system" => system(&value).into_iter().map(Line::Event).collect(),
            "result" => vec![Line::Event(turn_finished(&value))],
            "control_request" => {
                let request_id = text(&value, "request_id").unwrap_or_default();
                let request = &value["request"];
                match request.get("subtype").and_then(Value::as_str).unwrap_or_default() {
                    "can_use_tool" => vec![Line::Event(DriverEvent::PermissionRequest {
                        request_id,
                        tool_use_id: text(request, "tool_use_id"),
                        tool_name: text(request, "tool_name").unwrap_or_default(),
                        input: request.get("input").cloned().unwrap_or_else(|| json!({})),
                        preview: None,
                    })],
                    "hook_callback" => vec![Line::Event(DriverEvent::BeforeTool {
                        request_id,
                        tool_use_id: text(request, "tool_use_id")
                            .or_else(|| request["input"].get("tool_use_id").and_then(Value::as_str).map(str::to_owned)),
                    })],
                    other => vec![Line::UnsupportedRequest { request_id, subtype: other.to_owned() }],
                }
            }
            "control_response" => {
                let response = &value["response"];
                let request_id = text(response, "request_id").unwrap_or_default();
                let result = if response.get("subtype").and_then(Value::as_str) == Some("error") {
                    Err(text(response, "error").unwrap_or_else(|| "the request failed".into()))
                } else {
                    Ok(response.get("response").cloned().unwrap_or(Value::Null))
                };
                vec![Line::ControlResponse { request_id, result }]
            }
            "control_cancel_request" => {
                vec![Line::Event(DriverEvent::PermissionCancelled {
                    request_id: text(&value, "request_id").unwrap_or_default(),
                })]
            }
            _ => Vec::new(),
        }
    }

    fn stream_event(&mut self, value: &Value) -> Vec<Line> {
        if !value["parent_tool_use_id"].is_null() {
            return Vec::new();
        }
        let event = &value["event"];
        let block = event.get("index").and_then(Value::as_u64).and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
        let events = match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                self.streaming_message = event["message"].get("id").and_then(Value::as_str).map(str::to_owned);
                vec![DriverEvent::ModelCallStarted]
            }
            "content_block_start" => {
                let start = &event["content_block"];
                match start.get("type").and_then(Value::as_str) {
                    Some("tool_use") => vec![DriverEvent::ToolUseStarted {
                        block,
                        id: start.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        name: start.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    }],
                    _ => Vec::new(),
                }
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => vec![DriverEvent::TextDelta { block, text: piece("text") }],
                    Some("thinking_delta") => vec![DriverEvent::ThinkingDelta { block, text: piece("thinking") }],
                    Some("input_json_delta") => {
                        vec![DriverEvent::ToolInputDelta { block, json: piece("partial_json") }]
                    }
                    _ => Vec::new(),
                }
            }
            "content_block_stop" => vec![DriverEvent::BlockStopped { block }],
            _ => Vec::new(),
        };
        events.into_iter().map(Line::Event).collect()
    }
}

fn blocks(content: &Value) -> impl Iterator<Item = &Value> {
    content.as_array().into_iter().flatten()
}

fn system(value: &Value) -> Option<DriverEvent> {
    let number = |key: &str| value.get(key).and_then(Value::as_u64);
    match value.get("subtype").and_then(Value::as_str)? {
        "init" => Some(DriverEvent::SessionStarted { resume_token: value.get("session_id")?.as_str()?.to_owned() }),
        "status" if value.get("status").and_then(Value::as_str) == Some("compacting") => {
            Some(DriverEvent::CompactionStarted)
        }
        "status" => match value.get("compact_result").and_then(Value::as_str) {
            Some("success") | None => None,
            Some(other) => Some(DriverEvent::CompactionFailed {
                message: value.get("compact_error").and_then(Value::as_str).unwrap_or(other).to_owned(),
            }),
        },
        "compact_boundary" => {
            let meta = &value["compact_metadata"];
            Some(DriverEvent::CompactionFinished {
                trigger: meta.get("trigger").and_then(Value::as_str).unwrap_or("auto").to_owned(),
                pre_tokens: meta.get("pre_tokens").and_then(Value::as_u64),
                post_tokens: meta.get("post_tokens").and_then(Value::as_u64),
            })
        }
        "api_retry" => Some(DriverEvent::Retrying {
            attempt: number("attempt").unwrap_or(1) as u32,
            max: number("max_retries").unwrap_or(0) as u32,
            delay_ms: value.get("retry_delay_ms").and_then(Value::as_f64).unwrap_or(0.0) as u64,
            error: value.get("error").and_then(Value::as_str).unwrap_or("error").to_owned(),
        }),
        _ => None,
    }
}

fn turn_finished(value: &Value) -> DriverEvent {
    let usage = &value["usage"];
    let tokens = |key: &str| usage.get(key).and_then(Value::as_u64);
    // Failure is `is_error`, not `subtype`: API errors come as "success" with is_error.
    let error = if value.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
        let result = value.get("result").and_then(Value::as_str).filter(|r| !r.trim().is_empty());
        let errors: Vec<&str> = value["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|e| !e.starts_with("[ede_diagnostic]"))
            .collect();
        Some(result.map(str::to_owned).unwrap_or_else(|| {
            if errors.is_empty() { "Claude Code ended the turn with an error".to_owned() } else { errors.join("; ") }
        }))
    } else {
        None
    };
    let interrupted = value.get("terminal_reason").and_then(Value::as_str).is_some_and(|r| r.starts_with("aborted"));
    let input = tokens("input_tokens").map(|i| {
        i + tokens("cache_read_input_tokens").unwrap_or(0) + tokens("cache_creation_input_tokens").unwrap_or(0)
    });
    DriverEvent::TurnFinished {
        resume_token: value.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned),
        input_tokens: input,
        output_tokens: tokens("output_tokens"),
        cost_usd: value.get("total_cost_usd").and_then(Value::as_f64),
        error: if interrupted { None } else { error },
        interrupted,
    }
}

/// A tool result's content (a string, or blocks) as our output shape.
fn tool_output(content: &Value) -> ToolOutput {
    let mut out = ToolOutput::default();
    match content {
        Value::String(text) => out.content.push(ToolContent::Text { text: text.clone() }),
        Value::Array(parts) => {
            for part in parts {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => out.content.push(ToolContent::Text {
                        text: part.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    }),
                    Some("image") => {
                        let source = &part["source"];
                        if let (Some(data), Some(mime)) = (
                            source.get("data").and_then(Value::as_str),
                            source.get("media_type").and_then(Value::as_str),
                        ) {
                            out.content.push(ToolContent::Image { mime_type: mime.to_owned(), data: data.to_owned() });
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

// ---- what we write -----------------------------------------------------------------

pub(crate) fn user_message(text: &str) -> Value {
    json!({ "type": "user", "message": { "role": "user", "content": text }, "parent_tool_use_id": null, "session_id": "" })
}

pub(crate) fn control_request(request_id: &str, request: Value) -> Value {
    json!({ "type": "control_request", "request_id": request_id, "request": request })
}

pub(crate) fn initialize() -> Value {
    json!({ "subtype": "initialize", "hooks": { "PreToolUse": [{ "matcher": null, "hookCallbackIds": [BEFORE_TOOL_HOOK] }] } })
}

fn control_response(request_id: &str, response: Value) -> Value {
    json!({ "type": "control_response", "response": { "subtype": "success", "request_id": request_id, "response": response } })
}

pub(crate) fn control_error(request_id: &str, error: &str) -> Value {
    json!({ "type": "control_response", "response": { "subtype": "error", "request_id": request_id, "error": error } })
}

pub(crate) fn permission_answer(request_id: &str, answer: &PermissionAnswer) -> Value {
    let response = match answer {
        PermissionAnswer::Allow { input, always: None } => json!({ "behavior": "allow", "updatedInput": input }),
        PermissionAnswer::Allow { input, always: Some(tool) } => json!({
            "behavior": "allow",
            "updatedInput": input,
            "updatedPermissions": [{ "type": "addRules", "rules": [{ "toolName": tool }], "behavior": "allow", "destination": "session" }],
        }),
        PermissionAnswer::Deny { message } => json!({ "behavior": "deny", "message": message }),
    };
    control_response(request_id, response)
}

pub(crate) fn before_tool_answer(request_id: &str, context: Option<&str>) -> Value {
    let response = match context {
        Some(context) => {
            json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "additionalContext": context } })
        }
        None => json!({}),
    };
    control_response(request_id, response)
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;

    fn events(lines: &[Value]) -> Vec<Line> {
        let mut reader = LineReader::default();
        lines.iter().flat_map(|l| reader.read(&l.to_string())).collect()
    }

    #[test]
    fn a_tool_turn_reads_as_streamed_text_a_call_its_result_and_the_end() {
        let lines = [
            json!({"type": "system", "subtype": "init", "session_id": "s-1", "cwd": "/w"}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "message_start", "message": {"id": "m1"}}}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Writing."}}}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "content_block_stop", "index": 0}}),
            json!({"type": "assistant", "parent_tool_use_id": null, "message": {"id": "m1", "content": [{"type": "text", "text": "Writing."}]}}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "Write", "input": {}}}}),
            json!({"type": "stream_event", "parent_tool_use_id": null, "event": {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\":"}}}),
            json!({"type": "assistant", "parent_tool_use_id": null, "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/w/a"}}]}}),
            json!({"type": "control_request", "request_id": "h1", "request": {"subtype": "hook_callback", "callback_id": BEFORE_TOOL_HOOK, "tool_use_id": "t1", "input": {}}}),
            json!({"type": "control_request", "request_id": "p1", "request": {"subtype": "can_use_tool", "tool_name": "Write", "input": {"file_path": "/w/a"}, "tool_use_id": "t1"}}),
            json!({"type": "user", "parent_tool_use_id": null, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]}}),
            json!({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10, "retry_delay_ms": 502.6, "error": "overloaded"}),
            json!({"type": "result", "subtype": "success", "is_error": false, "session_id": "s-1", "total_cost_usd": 0.5,
                   "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7}, "terminal_reason": "completed"}),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "i1", "response": {"pid": 1}}}),
        ];
        let got = events(&lines);
        let expected = vec![
            Line::Event(DriverEvent::SessionStarted { resume_token: "s-1".into() }),
            Line::Event(DriverEvent::ModelCallStarted),
            Line::Event(DriverEvent::TextDelta { block: 0, text: "Writing.".into() }),
            Line::Event(DriverEvent::BlockStopped { block: 0 }),
            Line::Event(DriverEvent::ToolUseStarted { block: 1, id: "t1".into(), name: "Write".into() }),
            Line::Event(DriverEvent::ToolInputDelta { block: 1, json: "{\"file_path\":".into() }),
            Line::Event(DriverEvent::ToolUse {
                id: "t1".into(),
                name: "Write".into(),
                input: json!({"file_path": "/w/a"}),
            }),
            Line::Event(DriverEvent::BeforeTool { request_id: "h1".into(), tool_use_id: Some("t1".into()) }),
            Line::Event(DriverEvent::PermissionRequest {
                request_id: "p1".into(),
                tool_use_id: Some("t1".into()),
                tool_name: "Write".into(),
                input: json!({"file_path": "/w/a"}),
                preview: None,
            }),
            Line::Event(DriverEvent::ToolResult { id: "t1".into(), output: ToolOutput::text("File created") }),
            Line::Event(DriverEvent::Retrying { attempt: 1, max: 10, delay_ms: 502, error: "overloaded".into() }),
            Line::Event(DriverEvent::TurnFinished {
                resume_token: Some("s-1".into()),
                input_tokens: Some(15),
                output_tokens: Some(7),
                cost_usd: Some(0.5),
                error: None,
                interrupted: false,
            }),
            Line::ControlResponse { request_id: "i1".into(), result: Ok(json!({"pid": 1})) },
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn errors_interrupts_compaction_and_noise() {
        let lines = [
            json!({"type": "assistant", "parent_tool_use_id": null, "message": {"id": "synthetic-1", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 500"}]}}),
            json!({"type": "result", "subtype": "success", "is_error": true, "result": "API Error: 500 boom", "session_id": "s"}),
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "terminal_reason": "aborted_streaming", "errors": ["[ede_diagnostic] x"]}),
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "errors": ["No conversation found with session ID: x"]}),
            json!({"type": "system", "subtype": "status", "status": "compacting"}),
            json!({"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "manual", "pre_tokens": 900, "post_tokens": 100}}),
            json!({"type": "control_cancel_request", "request_id": "p9"}),
            json!({"type": "control_request", "request_id": "x1", "request": {"subtype": "mcp_message"}}),
            json!({"type": "user", "parent_tool_use_id": "t9", "message": {"content": [{"type": "tool_result", "tool_use_id": "inner", "content": "sub"}]}}),
            json!({"type": "control_response", "response": {"subtype": "error", "request_id": "i2", "error": "nope"}}),
        ];
        let mut got = events(&lines);
        let mut reader = LineReader::default();
        got.extend(reader.read("  [SandboxDebug] hello  "));
        got.extend(reader.read("{not json"));
        got.extend(reader.read("   "));
        let long = "x".repeat(1000);
        got.extend(reader.read(&long));
        assert_eq!(got[0], Line::Event(DriverEvent::AssistantText { text: "API Error: 500".into() }));
        assert!(
            matches!(&got[1], Line::Event(DriverEvent::TurnFinished { error: Some(e), .. }) if e == "API Error: 500 boom")
        );
        assert!(matches!(&got[2], Line::Event(DriverEvent::TurnFinished { error: None, interrupted: true, .. })));
        assert!(
            matches!(&got[3], Line::Event(DriverEvent::TurnFinished { error: Some(e), .. }) if e.starts_with("No conversation found"))
        );
        assert_eq!(got[4], Line::Event(DriverEvent::CompactionStarted));
        assert_eq!(
            got[5],
            Line::Event(DriverEvent::CompactionFinished {
                trigger: "manual".into(),
                pre_tokens: Some(900),
                post_tokens: Some(100)
            })
        );
        assert_eq!(got[6], Line::Event(DriverEvent::PermissionCancelled { request_id: "p9".into() }));
        assert_eq!(got[7], Line::UnsupportedRequest { request_id: "x1".into(), subtype: "mcp_message".into() });
        assert_eq!(got[8], Line::ControlResponse { request_id: "i2".into(), result: Err("nope".into()) });
        assert_eq!(got[9], Line::NotJson("[SandboxDebug] hello".into()));
        assert_eq!(got[10], Line::NotJson("{not json".into()));
        assert_eq!(got[11], Line::NotJson("x".repeat(NOT_JSON_CHARS)), "stray text is cut to a readable length");
        assert_eq!(got.len(), 12, "subagent lines and blank lines mean nothing");
    }

    #[test]
    fn answers_have_the_shapes_the_cli_reads() {
        let always = PermissionAnswer::Allow { input: json!({"a": 1}), always: Some("Write".into()) };
        assert_eq!(
            permission_answer("p1", &always)["response"],
            json!({"subtype": "success", "request_id": "p1", "response": {
                "behavior": "allow", "updatedInput": {"a": 1},
                "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Write"}], "behavior": "allow", "destination": "session"}]}})
        );
        let deny = permission_answer("p2", &PermissionAnswer::Deny { message: "no".into() });
        assert_eq!(deny["response"]["response"], json!({"behavior": "deny", "message": "no"}));
        assert_eq!(
            before_tool_answer("h", Some("steer"))["response"]["response"]["hookSpecificOutput"]["additionalContext"],
            "steer"
        );
        assert_eq!(before_tool_answer("h", None)["response"]["response"], json!({}));
    }
}
