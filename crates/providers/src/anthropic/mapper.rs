//! The pure event mapper: SSE frames of an Anthropic Messages stream in,
//! [`CompletionEvent`]s out.
//!
//! Content blocks are tracked by their `index`: text and thinking deltas stream as they
//! come; a `tool_use` block becomes a numbered tool call whose `input_json_delta`s are its
//! arguments; a thinking block's signature (from `signature_delta`s) is handed out when
//! the block stops, and a `redacted_thinking` block at its start. Usage is cumulative:
//! input from `message_start` (cache reads and writes included), output from the last
//! `message_delta`. `message_stop` ends the stream; an `error` event ends it with an error.

use serde_json::Value;

use crate::decoder::{EventMapper, FrameOutcome, TypedFrame, read_typed_frame};
use crate::error::ProviderError;
use crate::language_model::{CompletionEvent, StopReason, TokenUsage};
use crate::sse::SseFrame;

use super::types::{ContentBlock, Message, StreamEvent, WireUsage};

#[derive(Debug)]
pub struct MessagesEventMapper {
    provider: String,
    blocks: Vec<Block>,
    tool_calls: u32,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// Of the input, the tokens read from the prompt cache.
    cached_tokens: u64,
    stop_reason: Option<StopReason>,
}

#[derive(Debug)]
struct Block {
    index: Option<u32>,
    kind: BlockKind,
}

#[derive(Debug)]
enum BlockKind {
    Text,
    Thinking {
        signature: String,
    },
    /// A tool call numbered `call`; `input` is what the start carried, used when no
    /// `input_json_delta` streams.
    ToolUse {
        call: u32,
        streamed: bool,
        input: Option<String>,
    },
    Other,
}

impl MessagesEventMapper {
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            blocks: Vec::new(),
            tool_calls: 0,
            input_tokens: None,
            output_tokens: None,
            cached_tokens: 0,
            stop_reason: None,
        }
    }

    fn map_event(&mut self, kind: &str, event: StreamEvent) -> FrameOutcome {
        let mut events = Vec::new();
        match kind {
            "message_start" => {
                if let Some(usage) = event.message.and_then(|m| m.usage) {
                    self.note_usage(&usage);
                }
            }
            "content_block_start" => {
                let block = event.content_block.unwrap_or_default();
                let kind = self.start_block(&block, &mut events);
                self.blocks.push(Block { index: event.index, kind });
            }
            "content_block_delta" => {
                let delta = event.delta.unwrap_or_default();
                let slot = self.block_slot(event.index, delta.kind.as_deref());
                match (&mut self.blocks[slot].kind, delta.kind.as_deref()) {
                    (_, Some("text_delta")) => push_text(&mut events, CompletionEvent::TextDelta, delta.text),
                    (_, Some("thinking_delta")) => {
                        push_text(&mut events, CompletionEvent::ReasoningDelta, delta.thinking);
                    }
                    (BlockKind::Thinking { signature }, Some("signature_delta")) => {
                        signature.push_str(delta.signature.as_deref().unwrap_or_default());
                    }
                    (BlockKind::ToolUse { call, streamed, .. }, Some("input_json_delta")) => {
                        if let Some(json) = delta.partial_json.filter(|json| !json.is_empty()) {
                            *streamed = true;
                            events.push(CompletionEvent::ToolCallDelta { index: *call, arguments: json });
                        }
                    }
                    // Citations, hosted-tool input and deltas for blocks of another kind.
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(slot) = self.blocks.iter().position(|block| block.index == event.index) {
                    let block = self.blocks.remove(slot);
                    events.extend(stop_block(block.kind));
                }
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(stop_reason(&reason));
                }
                if let Some(usage) = event.usage {
                    self.note_usage(&usage);
                }
            }
            "message_stop" => {
                events.extend(self.finish());
                return FrameOutcome::Done(events);
            }
            // `ping` and event types added after this was written.
            _ => {}
        }
        FrameOutcome::Continue(events)
    }

    fn start_block(&mut self, block: &ContentBlock, events: &mut Vec<CompletionEvent>) -> BlockKind {
        match block.kind.as_deref() {
            Some("text") => {
                push_text(events, CompletionEvent::TextDelta, block.text.clone());
                BlockKind::Text
            }
            Some("thinking") => {
                push_text(events, CompletionEvent::ReasoningDelta, block.thinking.clone());
                BlockKind::Thinking { signature: block.signature.clone().unwrap_or_default() }
            }
            Some("redacted_thinking") => {
                events.push(CompletionEvent::RedactedReasoning { data: block.data.clone().unwrap_or_default() });
                BlockKind::Other
            }
            Some("tool_use") => {
                let call = self.tool_calls;
                self.tool_calls += 1;
                events.push(CompletionEvent::ToolCallStart {
                    index: call,
                    id: block.id.clone().unwrap_or_else(|| format!("toolu_{call}")),
                    name: block.name.clone().unwrap_or_default(),
                });
                let input = block.input.as_ref().filter(|input| !is_empty_input(input)).map(Value::to_string);
                BlockKind::ToolUse { call, streamed: false, input }
            }
            // Hosted tools (`server_tool_use`, `web_search_tool_result`) run upstream.
            _ => BlockKind::Other,
        }
    }

    /// The block a delta belongs to; a delta for a block that never started starts one
    /// of the kind the delta implies.
    fn block_slot(&mut self, index: Option<u32>, delta_kind: Option<&str>) -> usize {
        if let Some(slot) = self.blocks.iter().position(|block| block.index == index) {
            return slot;
        }
        let kind = match delta_kind {
            Some("text_delta") => BlockKind::Text,
            Some("thinking_delta" | "signature_delta") => BlockKind::Thinking { signature: String::new() },
            _ => BlockKind::Other,
        };
        self.blocks.push(Block { index, kind });
        self.blocks.len() - 1
    }

    fn note_usage(&mut self, usage: &WireUsage) {
        if let Some(input) = usage.input_tokens {
            let cached = usage
                .cache_creation_input_tokens
                .unwrap_or(0)
                .saturating_add(usage.cache_read_input_tokens.unwrap_or(0));
            self.input_tokens = Some(input.saturating_add(cached));
            self.cached_tokens = usage.cache_read_input_tokens.unwrap_or(0);
        }
        if let Some(output) = usage.output_tokens {
            self.output_tokens = Some(output);
        }
    }

    /// Blocks left open, usage, then `Finish`.
    fn finish(&mut self) -> Vec<CompletionEvent> {
        let mut events: Vec<CompletionEvent> = self.blocks.drain(..).flat_map(|block| stop_block(block.kind)).collect();
        if self.input_tokens.is_some() || self.output_tokens.is_some() {
            events.push(CompletionEvent::Usage(TokenUsage {
                input_tokens: self.input_tokens.unwrap_or(0),
                output_tokens: self.output_tokens.unwrap_or(0),
                // Anthropic does not count thinking tokens apart from the output.
                reasoning_tokens: 0,
                cached_tokens: self.cached_tokens,
            }));
        }
        events.push(CompletionEvent::Finish { reason: self.stop_reason.take().unwrap_or(StopReason::Stop) });
        events
    }

    /// A whole (non-streamed) message, mapped as if it had streamed.
    fn map_message(&mut self, message: Message) -> Vec<CompletionEvent> {
        let mut events = Vec::new();
        for block in &message.content {
            let kind = self.start_block(block, &mut events);
            let kind = match kind {
                BlockKind::ToolUse { call, .. } => {
                    let input = block.input.as_ref().map_or_else(|| "{}".to_owned(), Value::to_string);
                    BlockKind::ToolUse { call, streamed: false, input: Some(input) }
                }
                other => other,
            };
            events.extend(stop_block(kind));
        }
        if let Some(usage) = &message.usage {
            self.note_usage(usage);
        }
        if let Some(reason) = &message.stop_reason {
            self.stop_reason = Some(stop_reason(reason));
        }
        events.extend(self.finish());
        events
    }
}

/// What a block owes when it stops: a tool call's arguments if none streamed (so every
/// call's arguments are JSON, `{}` at least), a thinking block's signature.
fn stop_block(kind: BlockKind) -> Vec<CompletionEvent> {
    match kind {
        BlockKind::ToolUse { call, streamed: false, input } => {
            vec![CompletionEvent::ToolCallDelta { index: call, arguments: input.unwrap_or_else(|| "{}".to_owned()) }]
        }
        BlockKind::Thinking { signature } if !signature.is_empty() => {
            vec![CompletionEvent::ReasoningSignature { signature }]
        }
        _ => Vec::new(),
    }
}

fn push_text(events: &mut Vec<CompletionEvent>, event: fn(String) -> CompletionEvent, text: Option<String>) {
    if let Some(text) = text.filter(|text| !text.is_empty()) {
        events.push(event(text));
    }
}

fn is_empty_input(input: &Value) -> bool {
    match input {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolCalls,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_owned()),
    }
}

impl EventMapper for MessagesEventMapper {
    fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError> {
        let data = frame.data.trim();
        if data.is_empty() {
            return Ok(FrameOutcome::Continue(Vec::new()));
        }
        match read_typed_frame::<StreamEvent>(frame, data)? {
            TypedFrame::Event { kind, event } => Ok(self.map_event(&kind, event)),
            TypedFrame::Error(value) => Err(ProviderError::from_error_value(&self.provider, &value)),
        }
    }

    fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError> {
        // Without `message_stop`, a stop reason still says the model had finished.
        if self.stop_reason.is_none() {
            return Err(ProviderError::ended_early(&self.provider));
        }
        Ok(self.finish())
    }

    fn on_whole_body(&mut self, body: &[u8]) -> Option<Result<Vec<CompletionEvent>, ProviderError>> {
        let message: Message = serde_json::from_slice(body).ok()?;
        (message.kind.as_deref() == Some("message")).then(|| Ok(self.map_message(message)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::ok;
    use crate::error::ProviderErrorKind;
    use CompletionEvent::{Finish, ReasoningDelta, ReasoningSignature, TextDelta, ToolCallDelta, ToolCallStart, Usage};

    fn run(frames: &[&str]) -> Vec<Result<CompletionEvent, ProviderError>> {
        crate::decoder::run_frames(MessagesEventMapper::new("Acme"), frames)
    }

    #[test]
    fn a_tool_call_without_input_deltas_gets_its_start_input_or_an_empty_object() {
        let events = run(&[
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"now","input":{}}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"f","input":{"x":1}}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4}}"#,
        ]);
        assert_eq!(
            events,
            ok(vec![
                ToolCallStart { index: 0, id: "toolu_a".into(), name: "now".into() },
                ToolCallDelta { index: 0, arguments: "{}".into() },
                ToolCallStart { index: 1, id: "toolu_b".into(), name: "f".into() },
                ToolCallDelta { index: 1, arguments: "{\"x\":1}".into() },
                Usage(TokenUsage::new(0, 4)),
                Finish { reason: StopReason::ToolCalls },
            ]),
            "EOF after a stop reason is a clean end"
        );
    }

    #[test]
    fn counts_cached_input_and_takes_the_last_cumulative_output() {
        let events = run(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":7}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(
            events,
            ok(vec![
                TextDelta("a".into()),
                Usage(TokenUsage { input_tokens: 115, output_tokens: 7, reasoning_tokens: 0, cached_tokens: 100 }),
                Finish { reason: StopReason::Length }
            ])
        );
    }

    #[test]
    fn an_error_event_after_200_is_classified() {
        let events = run(&[
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        assert_eq!(events[0], Ok(TextDelta("par".into())));
        let err = events[1].clone().unwrap_err();
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Overloaded, true));

        let events = run(&[r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut"}}"#]);
        assert_eq!(events[1].clone().unwrap_err().kind, ProviderErrorKind::Network, "EOF before the end");
    }

    #[test]
    fn a_frame_with_a_field_of_the_wrong_type_is_read_leniently_and_errors_still_count() {
        let events = run(&[
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
            // `index` is not a number: the frame reads as its type with nothing usable.
            r#"{"type":"content_block_delta","index":"one","delta":{"type":"text_delta","text":"lost"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}"#,
            // No type, the Chat Completions way of reporting a failure.
            r#"{"error":{"type":"rate_limit_error","message":"Slow down"},"index":"x"}"#,
        ]);
        assert_eq!(events[..2], ok(vec![TextDelta("a".into()), TextDelta("b".into())]));
        let err = events[2].clone().unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::RateLimit, "{err:?}");
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn maps_a_whole_message() {
        let body = r#"{"type":"message","role":"assistant","content":[
            {"type":"thinking","thinking":"hmm","signature":"sig"},
            {"type":"text","text":"Hi"},
            {"type":"tool_use","id":"toolu_1","name":"f","input":{"q":"x"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}"#;
        let events = MessagesEventMapper::new("Acme").on_whole_body(body.as_bytes()).unwrap().unwrap();
        assert_eq!(
            events,
            vec![
                ReasoningDelta("hmm".into()),
                ReasoningSignature { signature: "sig".into() },
                TextDelta("Hi".into()),
                ToolCallStart { index: 0, id: "toolu_1".into(), name: "f".into() },
                ToolCallDelta { index: 0, arguments: "{\"q\":\"x\"}".into() },
                Usage(TokenUsage::new(3, 4)),
                Finish { reason: StopReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn never_panics_on_hostile_frames() {
        for data in [
            "null",
            "[]",
            "{}",
            r#"{"type":"content_block_start"}"#,
            r#"{"type":"content_block_delta","delta":null}"#,
            r#"{"type":"content_block_delta","index":4294967295,"delta":{"type":"signature_delta"}}"#,
            r#"{"type":"content_block_stop","index":"x"}"#,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":18446744073709551615,"cache_read_input_tokens":1}}}"#,
            r#"{"type":"error"}"#,
        ] {
            let _ = run(&[data, r#"{"type":"message_stop"}"#]);
        }
    }
}
