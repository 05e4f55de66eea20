//! The pure event mapper: SSE frames of a Chat Completions stream in, [`CompletionEvent`]s
//! out. No I/O, so recorded transcripts test it directly.
//!
//! Usage and the finish reason are held back until the stream is done (`[DONE]`, or EOF
//! after a finish reason), so a successful stream always ends `…, Usage?, Finish`.

use crate::decoder::{EventMapper, FrameOutcome, parse_frame};
use crate::error::ProviderError;
use crate::language_model::{CompletionEvent, StopReason, TokenUsage, detail_count};
use crate::sse::SseFrame;

use super::types::{ChatCompletion, ChatCompletionChunk, Delta, ToolCallFragment, WireUsage};

#[derive(Debug)]
pub struct ChatEventMapper {
    provider: String,
    /// Makes the ids of calls sent without one unique (`call_<seed>_<index>`).
    id_seed: String,
    tool_calls: Vec<ToolCallProgress>,
    finish_reason: Option<StopReason>,
    usage: Option<TokenUsage>,
}

/// A tool call being assembled: its start is announced once its name is known.
#[derive(Debug)]
struct ToolCallProgress {
    index: u32,
    id: Option<String>,
    name: Option<String>,
    started: bool,
    /// Argument text that arrived before the name did.
    early_arguments: String,
}

impl ChatEventMapper {
    /// `provider` names the provider in error messages.
    pub fn new(provider: impl Into<String>, id_seed: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            id_seed: id_seed.into(),
            tool_calls: Vec::new(),
            finish_reason: None,
            usage: None,
        }
    }

    /// Maps one SSE frame. An `Err` is final: the caller stops reading.
    pub fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError> {
        let data = frame.data.trim();
        if data == "[DONE]" {
            return Ok(FrameOutcome::Done(self.finish()));
        }
        if data.is_empty() {
            return Ok(FrameOutcome::Continue(Vec::new()));
        }
        let chunk: ChatCompletionChunk = parse_frame(data)?;
        if let Some(error) = &chunk.error {
            return Err(ProviderError::from_error_value(&self.provider, &serde_json::json!({ "error": error })));
        }
        if frame.event.as_deref() == Some("error") {
            let value = serde_json::from_str(data).unwrap_or_default();
            return Err(ProviderError::from_error_value(&self.provider, &value));
        }
        Ok(FrameOutcome::Continue(self.map_chunk(chunk)))
    }

    /// The body ended without `[DONE]`: fine if the model had finished, an error if not.
    pub fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError> {
        if self.finish_reason.is_none() {
            return Err(ProviderError::ended_early(&self.provider));
        }
        Ok(self.finish())
    }

    /// Maps a whole (non-streaming) completion, for servers that ignore `stream: true`.
    pub fn map_completion(&mut self, completion: ChatCompletion) -> Result<Vec<CompletionEvent>, ProviderError> {
        if let Some(error) = &completion.error {
            return Err(ProviderError::from_error_value(&self.provider, &serde_json::json!({ "error": error })));
        }
        let mut events = Vec::new();
        for choice in completion.choices.into_iter().filter(|choice| choice.index.unwrap_or(0) == 0) {
            if let Some(message) = choice.message {
                // A message's tool calls carry no index: their position is their index.
                let mut message = message;
                for (position, call) in message.tool_calls.iter_mut().enumerate() {
                    call.index = call.index.or(u32::try_from(position).ok());
                }
                self.map_delta(message, &mut events);
            }
            self.note_finish_reason(choice.finish_reason.as_deref());
        }
        self.note_usage(completion.usage);
        self.finish_reason.get_or_insert(StopReason::Stop);
        events.extend(self.finish());
        Ok(events)
    }

    fn map_chunk(&mut self, chunk: ChatCompletionChunk) -> Vec<CompletionEvent> {
        let mut events = Vec::new();
        // We never ask for `n > 1`; a server that sends other choices anyway is ignored.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                self.map_delta(delta, &mut events);
            }
            self.note_finish_reason(choice.finish_reason.as_deref());
        }
        self.note_usage(chunk.usage);
        events
    }

    fn map_delta(&mut self, delta: Delta, events: &mut Vec<CompletionEvent>) {
        // Servers that send both spellings send the same text twice; take one.
        let reasoning = delta.reasoning_content.filter(|r| !r.is_empty()).or(delta.reasoning);
        if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
            events.push(CompletionEvent::ReasoningDelta(reasoning));
        }
        let text = delta.content.map(|content| content.0).unwrap_or_default();
        if !text.is_empty() {
            events.push(CompletionEvent::TextDelta(text));
        }
        for (position, fragment) in delta.tool_calls.into_iter().enumerate() {
            self.map_tool_call(fragment, position, events);
        }
    }

    fn map_tool_call(&mut self, fragment: ToolCallFragment, position: usize, events: &mut Vec<CompletionEvent>) {
        let index = fragment.index.or(u32::try_from(position).ok()).unwrap_or(0);
        let slot = match self.tool_calls.iter().position(|call| call.index == index) {
            Some(slot) => slot,
            None => {
                self.tool_calls.push(ToolCallProgress {
                    index,
                    id: None,
                    name: None,
                    started: false,
                    early_arguments: String::new(),
                });
                self.tool_calls.len() - 1
            }
        };
        let call = &mut self.tool_calls[slot];
        if call.id.is_none() {
            call.id = fragment.id.filter(|id| !id.is_empty());
        }
        let (name, arguments) = fragment.function.map(|f| (f.name, f.arguments)).unwrap_or_default();
        if call.name.is_none() {
            call.name = name.filter(|name| !name.is_empty());
        }
        let arguments = arguments.unwrap_or_default();
        if call.started {
            if !arguments.is_empty() {
                events.push(CompletionEvent::ToolCallDelta { index, arguments });
            }
            return;
        }
        call.early_arguments.push_str(&arguments);
        if call.name.is_some() {
            events.extend(call.start(&self.id_seed));
        }
    }

    fn note_finish_reason(&mut self, reason: Option<&str>) {
        let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) else { return };
        self.finish_reason = Some(match reason {
            "stop" | "end_turn" | "eos" => StopReason::Stop,
            "length" | "max_tokens" => StopReason::Length,
            "tool_calls" | "function_call" | "tool_use" => StopReason::ToolCalls,
            "content_filter" | "safety" => StopReason::ContentFilter,
            other => StopReason::Other(other.to_owned()),
        });
    }

    fn note_usage(&mut self, usage: Option<WireUsage>) {
        // Some servers repeat (growing) usage on every chunk: the last one wins.
        if let Some(usage) = usage {
            self.usage = Some(TokenUsage {
                input_tokens: usage.prompt_tokens.unwrap_or(0),
                output_tokens: usage.completion_tokens.unwrap_or(0),
                reasoning_tokens: detail_count(&usage.completion_tokens_details, "reasoning_tokens"),
                cached_tokens: detail_count(&usage.prompt_tokens_details, "cached_tokens"),
            });
        }
    }

    /// The closing events: tool calls still waiting for a name, usage, then `Finish`.
    fn finish(&mut self) -> Vec<CompletionEvent> {
        let mut events: Vec<_> = self
            .tool_calls
            .iter_mut()
            .filter(|call| !call.started)
            .flat_map(|call| call.start(&self.id_seed))
            .collect();
        events.extend(self.usage.take().map(CompletionEvent::Usage));
        events.push(CompletionEvent::Finish { reason: self.finish_reason.take().unwrap_or(StopReason::Stop) });
        events
    }
}

impl EventMapper for ChatEventMapper {
    fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError> {
        ChatEventMapper::on_frame(self, frame)
    }

    fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError> {
        ChatEventMapper::on_end_of_stream(self)
    }

    fn on_whole_body(&mut self, body: &[u8]) -> Option<Result<Vec<CompletionEvent>, ProviderError>> {
        let completion: ChatCompletion = serde_json::from_slice(body).ok()?;
        Some(self.map_completion(completion))
    }
}

impl ToolCallProgress {
    fn start(&mut self, id_seed: &str) -> Vec<CompletionEvent> {
        self.started = true;
        let mut events = vec![CompletionEvent::ToolCallStart {
            index: self.index,
            id: self.id.clone().unwrap_or_else(|| crate::call_id::synthesized(id_seed, self.index)),
            name: self.name.clone().unwrap_or_default(),
        }];
        let arguments = std::mem::take(&mut self.early_arguments);
        if !arguments.is_empty() {
            events.push(CompletionEvent::ToolCallDelta { index: self.index, arguments });
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::ok;
    use crate::error::ProviderErrorKind;
    use CompletionEvent::{Finish, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStart, Usage};

    fn run(frames: &[&str]) -> Vec<Result<CompletionEvent, ProviderError>> {
        crate::decoder::run_frames(ChatEventMapper::new("Acme", "seed"), frames)
    }

    #[test]
    fn maps_text_usage_and_finish_in_order() {
        let events = run(&[
            r#"{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            ok(vec![
                TextDelta("Hel".into()),
                TextDelta("lo".into()),
                Usage(TokenUsage::new(9, 2)),
                Finish { reason: StopReason::Stop },
            ])
        );
    }

    #[test]
    fn reads_cached_and_reasoning_token_details_leniently() {
        let events = run(&[
            r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":6}}}"#,
            "[DONE]",
        ]);
        let usage = TokenUsage { input_tokens: 20, output_tokens: 9, reasoning_tokens: 6, cached_tokens: 16 };
        assert_eq!(events, ok(vec![TextDelta("x".into()), Usage(usage), Finish { reason: StopReason::Stop }]));
        // A server that sends the details in another shape still reports its counts.
        let events = run(&[
            r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":"n/a"}}"#,
            "[DONE]",
        ]);
        assert_eq!(events, ok(vec![Usage(TokenUsage::new(2, 1)), Finish { reason: StopReason::Stop }]));
    }

    #[test]
    fn maps_both_reasoning_spellings_without_doubling() {
        let events = run(&[
            r#"{"choices":[{"delta":{"reasoning_content":"think"}}]}"#,
            r#"{"choices":[{"delta":{"reasoning":"more"}}]}"#,
            r#"{"choices":[{"delta":{"reasoning":"same","reasoning_content":"same"}}]}"#,
            r#"{"choices":[{"delta":{"content":"answer"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            ok(vec![
                ReasoningDelta("think".into()),
                ReasoningDelta("more".into()),
                ReasoningDelta("same".into()),
                TextDelta("answer".into()),
                Finish { reason: StopReason::Stop },
            ])
        );
    }

    #[test]
    fn assembles_tool_calls_per_index() {
        let events = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"open","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"rust\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            ok(vec![
                ToolCallStart { index: 0, id: "call_a".into(), name: "search".into() },
                ToolCallDelta { index: 0, arguments: "{\"q\":".into() },
                ToolCallStart { index: 1, id: "call_b".into(), name: "open".into() },
                ToolCallDelta { index: 1, arguments: "{}".into() },
                ToolCallDelta { index: 0, arguments: "\"rust\"}".into() },
                Finish { reason: StopReason::ToolCalls },
            ])
        );
    }

    #[test]
    fn tool_calls_without_index_id_or_early_name_still_come_out_whole() {
        let events = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"calc","arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":3,"function":{"arguments":"x"}}]}}]}"#,
            r#"{"choices":[{"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            ok(vec![
                ToolCallStart { index: 0, id: "call_seed_0".into(), name: "calc".into() },
                ToolCallDelta { index: 0, arguments: "{\"a\":1}".into() },
                ToolCallStart { index: 3, id: "call_seed_3".into(), name: String::new() },
                ToolCallDelta { index: 3, arguments: "x".into() },
                Finish { reason: StopReason::ToolCalls },
            ])
        );
    }

    #[test]
    fn maps_finish_reasons() {
        for (wire, reason) in [
            ("stop", StopReason::Stop),
            ("length", StopReason::Length),
            ("tool_calls", StopReason::ToolCalls),
            ("function_call", StopReason::ToolCalls),
            ("content_filter", StopReason::ContentFilter),
            ("recitation", StopReason::Other("recitation".into())),
        ] {
            let data = format!(r#"{{"choices":[{{"delta":{{}},"finish_reason":"{wire}"}}]}}"#);
            assert_eq!(run(&[&data, "[DONE]"]), ok(vec![Finish { reason }]), "{wire}");
        }
    }

    #[test]
    fn tolerates_nulls_missing_fields_unknown_fields_and_content_parts() {
        let events = run(&[
            r#"{"choices":null,"usage":null}"#,
            r#"{"choices":[{"delta":null,"finish_reason":null,"logprobs":{"x":1}}],"system_fingerprint":"fp"}"#,
            r#"{"choices":[{"delta":{"content":null,"tool_calls":null,"refusal":null}}]}"#,
            r#"{"choices":[{"delta":{"content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            r#"{"choices":[{"delta":{"content":"c"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}"#,
            "[DONE]",
        ]);
        assert_eq!(
            events,
            ok(vec![
                TextDelta("ab".into()),
                TextDelta("c".into()),
                Usage(TokenUsage::new(1, 0)),
                Finish { reason: StopReason::Stop },
            ])
        );
    }

    #[test]
    fn a_malformed_frame_ends_the_stream_after_the_text_before_it() {
        let events = run(&[
            r#"{"choices":[{"delta":{"content":"kept"}}]}"#,
            "{not json",
            r#"{"choices":[{"delta":{"content":"lost"}}]}"#,
        ]);
        assert_eq!(events[0], Ok(TextDelta("kept".into())));
        let err = events[1].clone().unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::BadResponse);
        assert!(err.message.starts_with("the provider sent a malformed stream frame: "), "{}", err.message);
        assert!(err.message.contains("{not json"), "{}", err.message);
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn an_error_frame_becomes_an_error_with_its_message() {
        let events = run(&[
            r#"{"choices":[{"delta":{"content":"partial"}}]}"#,
            r#"{"error":{"message":"The model is overloaded","type":"server_error"}}"#,
        ]);
        assert_eq!(events[0], Ok(TextDelta("partial".into())));
        let err = events[1].clone().unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Overloaded);
        assert!(err.message.contains("The model is overloaded"), "{}", err.message);

        let events = run(&["{\"error\":\"plain text error\"}"]);
        assert!(events[0].as_ref().unwrap_err().message.contains("plain text error"));
    }

    #[test]
    fn eof_after_a_finish_reason_is_a_clean_end_but_eof_before_it_is_an_error() {
        let events = run(&[r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"length"}]}"#]);
        assert_eq!(events, ok(vec![TextDelta("a".into()), Finish { reason: StopReason::Length }]));

        let events = run(&[r#"{"choices":[{"delta":{"content":"a"}}]}"#]);
        assert_eq!(events[0], Ok(TextDelta("a".into())));
        let err = events[1].clone().unwrap_err();
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Network, true));
        assert_eq!(err.message, "the stream from Acme ended early, before the reply was complete — try again");
    }

    #[test]
    fn done_without_a_finish_reason_counts_as_stop() {
        assert_eq!(run(&["", "[DONE]"]), ok(vec![Finish { reason: StopReason::Stop }]));
    }

    #[test]
    fn maps_a_whole_completion() {
        let completion: ChatCompletion = serde_json::from_str(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"hmm",
                "tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],
                "usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
        )
        .unwrap();
        let events = ChatEventMapper::new("Acme", "seed").map_completion(completion).unwrap();
        assert_eq!(
            events,
            vec![
                ReasoningDelta("hmm".into()),
                TextDelta("Hi".into()),
                ToolCallStart { index: 0, id: "t1".into(), name: "f".into() },
                ToolCallDelta { index: 0, arguments: "{}".into() },
                Usage(TokenUsage::new(3, 4)),
                Finish { reason: StopReason::ToolCalls },
            ]
        );
    }

    /// Whatever arrives, the mapper answers with events or an error, never a panic.
    #[test]
    fn never_panics_on_hostile_frames() {
        let frames = [
            "null",
            "[]",
            "42",
            "\"text\"",
            r#"{"choices":[null]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":4294967295,"function":{"name":"x"}}]}}]}"#,
            r#"{"usage":{"prompt_tokens":-5}}"#,
            r#"{"error":null}"#,
            r#"{"error":{}}"#,
            "\u{0}",
        ];
        for data in frames {
            let _ = run(&[data, "[DONE]"]);
        }
    }
}
