//! [`Script`]: what the mock answers to one chat request, faults included. The JSON form
//! (camelCase) is what `POST /_testkit/script` accepts. One script means the same reply in
//! every wire format: each format writes it in its own shape.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One scripted reply. `Script::default()` is the built-in markdown reply.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Script {
    /// The reply text, one streamed chunk per entry; absent means the default reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<Vec<String>>,
    /// Thinking text, sent before the reply (Chat Completions: `delta.reasoning_content`;
    /// Responses: a reasoning summary; Anthropic: a signed thinking block; Gemini: thought
    /// parts with a `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<String>,
    /// Tool calls the model makes after its text; the reply then ends asking for tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptToolCall>,
    /// Reported token counts; absent means counted from the request and the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ScriptUsage>,
    /// Delay before each chunk, overriding the server's `token_delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// With a `status` fault: a `Retry-After` header to send, as given (seconds or an HTTP
    /// date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// With an `errorFrame` fault: the error's type or status in the format's vocabulary
    /// (e.g. `overloaded_error`, `rate_limit_exceeded`, `RESOURCE_EXHAUSTED`); absent means
    /// a generic server error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// How the event stream is written: legal variations a client must read the same.
    #[serde(default, skip_serializing_if = "Framing::is_plain")]
    pub framing: Framing,
    /// Why the model stops, when it is not the natural end of the answer.
    #[serde(default, skip_serializing_if = "Finish::is_natural")]
    pub finish: Finish,
}

/// Why the scripted model stops, each format saying it its own way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Finish {
    /// The answer is complete (or, with tool calls, the model wants the tools run).
    #[default]
    Natural,
    /// The output limit cut the answer: Chat Completions `length`, Responses
    /// `response.incomplete` (`max_output_tokens`), Anthropic `max_tokens`, Gemini `MAX_TOKENS`.
    Length,
    /// The provider's filter stopped the answer: Chat Completions `content_filter`,
    /// Responses `response.incomplete` (`content_filter`), Anthropic `refusal`, Gemini `SAFETY`.
    ContentFilter,
}

impl Finish {
    pub fn is_natural(&self) -> bool {
        *self == Finish::Natural
    }
}

/// Legal ways to write the same event stream, each a thing a client must cope with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Framing {
    /// Lines end in `\r\n`.
    #[serde(default)]
    pub crlf: bool,
    /// A `: comment` line before every frame.
    #[serde(default)]
    pub comments: bool,
    /// Each frame's JSON is pretty-printed over several `data:` lines.
    #[serde(default)]
    pub multi_line_data: bool,
    /// An event of a type no format defines, before every frame.
    #[serde(default)]
    pub unknown_events: bool,
    /// The body is sent in pieces of this many bytes (1 splits every multi-byte
    /// character across network writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<usize>,
}

impl Framing {
    pub fn is_plain(&self) -> bool {
        *self == Framing::default()
    }
}

/// One scripted tool call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptToolCall {
    pub name: String,
    /// The arguments as JSON text, e.g. `{"city":"Paris"}`. Formats that stream arguments
    /// send it in pieces; Gemini sends it parsed (`{}` when it is not a JSON object).
    #[serde(default = "empty_object")]
    pub arguments: String,
    /// The call's id; absent means one is made up in the format's style, empty means none
    /// is sent (Chat Completions and Responses; some compatible servers omit it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn empty_object() -> String {
    "{}".to_owned()
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `completion_tokens`, the reasoning ones (sent where the format has a field for them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Of `prompt_tokens`, the ones "read from the prompt cache".
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A way for the reply to go wrong. `after` counts reply chunks sent before the fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum Fault {
    /// Answer with this status instead of a completion. `body` defaults to a JSON error
    /// in the wire format's own shape (529 is Anthropic's `overloaded_error`),
    /// `contentType` to `application/json`; the script's `retryAfter` adds a header.
    Status {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
    },
    /// Send a `data: {not json` frame (with the format's `event:` line), then carry on as
    /// if nothing happened.
    MalformedFrame {
        #[serde(default)]
        after: usize,
    },
    /// Abort the TCP connection without ending the chunked body.
    Reset {
        #[serde(default)]
        after: usize,
    },
    /// After a 200, report an error in the stream the way the format does, and end it:
    /// Chat Completions `data: {"error":{…}}` then `[DONE]`; Responses and Anthropic an
    /// `error` event; Gemini a `data: {"error":{…}}` frame. The script's `errorCode` sets
    /// the error's type.
    ErrorFrame {
        #[serde(default)]
        after: usize,
        message: String,
    },
    /// After a 200, the model gives up on the reply and says so in the stream: Responses
    /// sends `response.failed` with the error in the response object; the other formats
    /// have no separate way to say it and send their error frame, as `errorFrame` does.
    Failed {
        #[serde(default)]
        after: usize,
        message: String,
    },
    /// Stop sending but keep the connection open until the client goes away.
    Stall {
        #[serde(default)]
        after: usize,
    },
}

impl Script {
    /// A reply of exactly these chunks.
    pub fn text<I, S>(chunks: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self { chunks: Some(chunks.into_iter().map(Into::into).collect()), ..Self::default() }
    }

    #[must_use]
    pub fn with_reasoning<I, S>(mut self, chunks: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.reasoning = chunks.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a tool call made after the text.
    #[must_use]
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        self.tool_calls.push(ScriptToolCall { name: name.into(), arguments: arguments.into(), id: None });
        self
    }

    #[must_use]
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(ScriptUsage { prompt_tokens, completion_tokens, ..ScriptUsage::default() });
        self
    }

    /// Reported usage with reasoning and cached counts: `reasoning` of the `completion`
    /// tokens were thinking, `cached` of the `prompt` tokens came from the prompt cache.
    #[must_use]
    pub fn with_usage_details(mut self, prompt: u64, completion: u64, reasoning: u64, cached: u64) -> Self {
        self.usage = Some(ScriptUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            reasoning_tokens: reasoning,
            cached_tokens: cached,
        });
        self
    }

    #[must_use]
    pub fn with_token_delay(mut self, delay: Duration) -> Self {
        self.token_delay_ms = Some(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        self
    }

    #[must_use]
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// A reply that is only an HTTP error.
    pub fn status(status: u16, body: impl Into<String>, content_type: impl Into<String>) -> Self {
        Self::default().with_fault(Fault::Status {
            status,
            body: Some(body.into()),
            content_type: Some(content_type.into()),
        })
    }

    /// A reply that is only an HTTP error with the format's default body, e.g. 429 or 529,
    /// optionally with a `Retry-After` header.
    pub fn refusal(status: u16, retry_after: Option<&str>) -> Self {
        Self {
            retry_after: retry_after.map(str::to_owned),
            ..Self::default().with_fault(Fault::Status { status, body: None, content_type: None })
        }
    }

    #[must_use]
    pub fn with_framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// Ends the reply the way `finish` says instead of naturally.
    #[must_use]
    pub fn with_finish(mut self, finish: Finish) -> Self {
        self.finish = finish;
        self
    }

    /// The type (or status) of a scripted in-stream error, e.g. `overloaded_error`.
    #[must_use]
    pub fn with_error_code(mut self, code: impl Into<String>) -> Self {
        self.error_code = Some(code.into());
        self
    }
}

/// The body of `POST /_testkit/script`: one script or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ScriptBatch {
    One(Box<Script>),
    Many(Vec<Script>),
}

impl ScriptBatch {
    pub(crate) fn into_scripts(self) -> Vec<Script> {
        match self {
            ScriptBatch::One(script) => vec![*script],
            ScriptBatch::Many(scripts) => scripts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_camel_case_json_form() {
        let script: Script = serde_json::from_value(json!({
            "chunks": ["Hel", "lo"],
            "reasoning": ["hmm"],
            "usage": {"promptTokens": 3, "completionTokens": 2, "reasoningTokens": 1},
            "toolCalls": [{"name": "weather", "arguments": "{\"city\":\"Paris\"}"}, {"name": "now", "id": "c2"}],
            "tokenDelayMs": 1,
            "fault": {"kind": "errorFrame", "after": 1, "message": "boom"},
            "errorCode": "overloaded_error",
            "finish": "length"
        }))
        .unwrap();
        let mut expected = Script::text(["Hel", "lo"])
            .with_reasoning(["hmm"])
            .with_tool_call("weather", r#"{"city":"Paris"}"#)
            .with_usage_details(3, 2, 1, 0)
            .with_token_delay(Duration::from_millis(1))
            .with_fault(Fault::ErrorFrame { after: 1, message: "boom".into() })
            .with_error_code("overloaded_error")
            .with_finish(Finish::Length);
        expected.tool_calls.push(ScriptToolCall { name: "now".into(), arguments: "{}".into(), id: Some("c2".into()) });
        assert_eq!(script, expected);
    }

    #[test]
    fn reads_every_fault_kind() {
        let faults = json!([
            {"kind": "status", "status": 500, "body": "<html></html>", "contentType": "text/html"},
            {"kind": "status", "status": 429},

            {"kind": "malformedFrame", "after": 2},
            {"kind": "reset"},
            {"kind": "failed", "after": 1, "message": "gave up"},
            {"kind": "stall", "after": 1}
        ]);
        let faults: Vec<Fault> = serde_json::from_value(faults).unwrap();
        assert_eq!(
            faults,
            vec![
                Fault::Status {
                    status: 500,
                    body: Some("<html></html>".into()),
                    content_type: Some("text/html".into())
                },
                Fault::Status { status: 429, body: None, content_type: None },
                Fault::MalformedFrame { after: 2 },
                Fault::Reset { after: 0 },
                Fault::Failed { after: 1, message: "gave up".into() },
                Fault::Stall { after: 1 },
            ]
        );
    }

    #[test]
    fn a_refusal_carries_its_retry_after() {
        let script: Script =
            serde_json::from_value(json!({"fault": {"kind": "status", "status": 529}, "retryAfter": "2"})).unwrap();
        assert_eq!(script, Script::refusal(529, Some("2")));
    }

    #[test]
    fn a_batch_is_one_script_or_a_list() {
        let one: ScriptBatch = serde_json::from_value(json!({"chunks": ["a"]})).unwrap();
        assert_eq!(one.into_scripts(), vec![Script::text(["a"])]);
        let many: ScriptBatch = serde_json::from_value(json!([{}, {"chunks": ["b"]}])).unwrap();
        assert_eq!(many.into_scripts(), vec![Script::default(), Script::text(["b"])]);
        assert!(serde_json::from_value::<ScriptBatch>(json!({"chunk": ["typo"]})).is_err());
    }
}
