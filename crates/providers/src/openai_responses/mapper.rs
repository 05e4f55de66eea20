//! The pure event mapper: SSE frames of a Responses stream in, [`CompletionEvent`]s out.
//!
//! Function calls are numbered in the order their output items appear; argument deltas
//! find their call by `item_id` (or `output_index`). A call whose arguments never
//! streamed gets them whole from `…arguments.done` or `output_item.done`. Usage and the
//! stop reason come with the terminal event (`response.completed|incomplete`);
//! `response.failed` and a standalone `error` end the stream with an error.

use serde_json::Value;

use crate::decoder::{EventMapper, FrameOutcome, TypedFrame, read_typed_frame};
use crate::error::{ProviderError, ProviderErrorKind};
use crate::language_model::{CompletionEvent, StopReason, TokenUsage, detail_count};
use crate::sse::SseFrame;

use super::types::{OutputItem, ResponseObject, StreamEvent, text};

#[derive(Debug)]
pub struct ResponsesEventMapper {
    provider: String,
    /// Makes the ids of calls sent without one unique (`call_<seed>_<index>`).
    id_seed: String,
    calls: Vec<CallProgress>,
    /// `(item_id, summary_index)` of the reasoning text streamed last: a new summary part
    /// is set apart from the previous one by a blank line.
    reasoning_part: Option<(Option<String>, Option<u32>)>,
}

#[derive(Debug)]
struct CallProgress {
    item_id: Option<String>,
    output_index: Option<u32>,
    index: u32,
    /// Some arguments were already handed out.
    streamed: bool,
}

impl ResponsesEventMapper {
    pub fn new(provider: impl Into<String>, id_seed: impl Into<String>) -> Self {
        Self { provider: provider.into(), id_seed: id_seed.into(), calls: Vec::new(), reasoning_part: None }
    }

    fn map_event(&mut self, kind: &str, event: StreamEvent) -> Result<FrameOutcome, ProviderError> {
        let mut events = Vec::new();
        match kind {
            "response.output_item.added" => {
                if let Some(item) = event.item.filter(is_function_call) {
                    self.start_call(&item, event.output_index, &mut events);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = text(event.delta.as_ref()).filter(|d| !d.is_empty()) {
                    events.push(CompletionEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = text(event.delta.as_ref()).filter(|d| !d.is_empty()) {
                    let part = (event.item_id.clone(), event.summary_index);
                    if self.reasoning_part.as_ref().is_some_and(|last| *last != part) {
                        events.push(CompletionEvent::ReasoningDelta("\n\n".to_owned()));
                    }
                    self.reasoning_part = Some(part);
                    events.push(CompletionEvent::ReasoningDelta(delta.to_owned()));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = text(event.delta.as_ref()).filter(|d| !d.is_empty()) {
                    let slot = self.call_slot(event.item_id.as_deref(), event.output_index, &mut events);
                    self.calls[slot].streamed = true;
                    let index = self.calls[slot].index;
                    events.push(CompletionEvent::ToolCallDelta { index, arguments: delta.to_owned() });
                }
            }
            "response.function_call_arguments.done" => {
                let slot = self.call_slot(event.item_id.as_deref(), event.output_index, &mut events);
                self.finish_call(slot, text(event.arguments.as_ref()), &mut events);
            }
            "response.output_item.done" => {
                if let Some(item) = event.item.filter(is_function_call) {
                    let slot = match self.find_call(item.id.as_deref(), event.output_index) {
                        Some(slot) => slot,
                        None => self.start_call(&item, event.output_index, &mut events),
                    };
                    self.finish_call(slot, text(item.arguments.as_ref()), &mut events);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = event.response.unwrap_or_default();
                events.extend(self.finish(&response));
                return Ok(FrameOutcome::Done(events));
            }
            "response.failed" => {
                let error = event.response.and_then(|r| r.error).filter(|e| !e.is_null());
                return Err(match error {
                    Some(error) => {
                        ProviderError::from_error_value(&self.provider, &serde_json::json!({ "error": error }))
                    }
                    None => ProviderError::new(
                        ProviderErrorKind::Server,
                        format!("{} reported that the response failed — try again", self.provider),
                    ),
                });
            }
            // Lifecycle, content-part and annotation events, hosted tools, keep-alives: nothing to show.
            _ => {}
        }
        Ok(FrameOutcome::Continue(events))
    }

    /// Announces a function call; returns its slot.
    fn start_call(&mut self, item: &OutputItem, output_index: Option<u32>, events: &mut Vec<CompletionEvent>) -> usize {
        let index = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        let id = item
            .call_id
            .clone()
            .or_else(|| item.id.clone())
            .unwrap_or_else(|| crate::call_id::synthesized(&self.id_seed, index));
        events.push(CompletionEvent::ToolCallStart { index, id, name: item.name.clone().unwrap_or_default() });
        let mut call = CallProgress { item_id: item.id.clone(), output_index, index, streamed: false };
        if let Some(arguments) = text(item.arguments.as_ref()).filter(|a| !a.is_empty()) {
            events.push(CompletionEvent::ToolCallDelta { index, arguments: arguments.to_owned() });
            call.streamed = true;
        }
        self.calls.push(call);
        self.calls.len() - 1
    }

    fn find_call(&self, item_id: Option<&str>, output_index: Option<u32>) -> Option<usize> {
        self.calls.iter().position(|call| match (item_id, &call.item_id) {
            (Some(wanted), Some(id)) => wanted == id,
            _ => output_index.is_some() && call.output_index == output_index,
        })
    }

    /// The slot of the call an event refers to; a call never announced is announced now.
    fn call_slot(
        &mut self,
        item_id: Option<&str>,
        output_index: Option<u32>,
        events: &mut Vec<CompletionEvent>,
    ) -> usize {
        if let Some(slot) = self.find_call(item_id, output_index) {
            return slot;
        }
        let item = OutputItem { id: item_id.map(str::to_owned), ..OutputItem::default() };
        self.start_call(&item, output_index, events)
    }

    /// Hands out whole arguments for a call whose arguments never streamed.
    fn finish_call(&mut self, slot: usize, arguments: Option<&str>, events: &mut Vec<CompletionEvent>) {
        let call = &mut self.calls[slot];
        if call.streamed {
            return;
        }
        call.streamed = true;
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            events.push(CompletionEvent::ToolCallDelta { index: call.index, arguments: arguments.to_owned() });
        }
    }

    /// Usage and `Finish` from a terminal response object.
    fn finish(&mut self, response: &ResponseObject) -> Vec<CompletionEvent> {
        let mut events = Vec::new();
        if let Some(usage) = &response.usage {
            events.push(CompletionEvent::Usage(TokenUsage {
                input_tokens: usage.input_tokens.unwrap_or(0),
                output_tokens: usage.output_tokens.unwrap_or(0),
                reasoning_tokens: detail_count(&usage.output_tokens_details, "reasoning_tokens"),
                cached_tokens: detail_count(&usage.input_tokens_details, "cached_tokens"),
            }));
        }
        let incomplete = response.incomplete_details.as_ref().and_then(|d| d.reason.as_deref());
        let reason = match (response.status.as_deref(), incomplete) {
            (_, Some("max_output_tokens")) => StopReason::Length,
            (_, Some("content_filter")) => StopReason::ContentFilter,
            (_, Some(other)) => StopReason::Other(other.to_owned()),
            (Some("incomplete"), None) => StopReason::Length,
            _ if !self.calls.is_empty() => StopReason::ToolCalls,
            _ => StopReason::Stop,
        };
        events.push(CompletionEvent::Finish { reason });
        events
    }

    /// A whole (non-streamed) response object, mapped as if it had streamed.
    fn map_response(&mut self, response: ResponseObject) -> Result<Vec<CompletionEvent>, ProviderError> {
        if let Some(error) = response.error.as_ref().filter(|e| !e.is_null()) {
            return Err(ProviderError::from_error_value(&self.provider, &serde_json::json!({ "error": error })));
        }
        let mut events = Vec::new();
        for (position, item) in response.output.iter().enumerate() {
            match item.kind.as_deref() {
                Some("message") => {
                    let text: String = item
                        .content
                        .iter()
                        .filter_map(|part| part.text.as_deref().or(part.refusal.as_deref()))
                        .collect();
                    if !text.is_empty() {
                        events.push(CompletionEvent::TextDelta(text));
                    }
                }
                Some("reasoning") => {
                    let summary: Vec<&str> = item.summary.iter().filter_map(|part| part.text.as_deref()).collect();
                    if !summary.is_empty() {
                        events.push(CompletionEvent::ReasoningDelta(summary.join("\n\n")));
                    }
                }
                Some("function_call") => {
                    let slot = self.start_call(item, u32::try_from(position).ok(), &mut events);
                    self.finish_call(slot, text(item.arguments.as_ref()), &mut events);
                }
                _ => {}
            }
        }
        events.extend(self.finish(&response));
        Ok(events)
    }
}

fn is_function_call(item: &OutputItem) -> bool {
    item.kind.as_deref() == Some("function_call")
}

impl EventMapper for ResponsesEventMapper {
    fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError> {
        let data = frame.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(FrameOutcome::Continue(Vec::new()));
        }
        // An untyped frame with an `error` is how compatible servers that speak the Chat
        // Completions way report failures.
        match read_typed_frame::<StreamEvent>(frame, data)? {
            TypedFrame::Event { kind, event } => self.map_event(&kind, event),
            TypedFrame::Error(value) => Err(ProviderError::from_error_value(&self.provider, &value)),
        }
    }

    fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError> {
        Err(ProviderError::ended_early(&self.provider))
    }

    fn on_whole_body(&mut self, body: &[u8]) -> Option<Result<Vec<CompletionEvent>, ProviderError>> {
        let value: Value = serde_json::from_slice(body).ok()?;
        if value.get("object").and_then(Value::as_str) != Some("response") && value.get("output").is_none() {
            return None;
        }
        let response: ResponseObject = serde_json::from_value(value).ok()?;
        Some(self.map_response(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::ok;
    use CompletionEvent::{Finish, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStart, Usage};

    fn run(frames: &[&str]) -> Vec<Result<CompletionEvent, ProviderError>> {
        crate::decoder::run_frames(ResponsesEventMapper::new("Acme", "seed"), frames)
    }

    #[test]
    fn function_calls_without_deltas_get_their_arguments_whole() {
        let events = run(&[
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":1,"delta":"{}"}"#,
            r#"{"type":"response.function_call_arguments.done","item_id":"fc_2","output_index":1,"arguments":"{}"}"#,
            r#"{"type":"response.completed","response":{"status":"completed"}}"#,
        ]);
        assert_eq!(
            events,
            ok(vec![
                ToolCallStart { index: 0, id: "call_1".into(), name: "f".into() },
                ToolCallDelta { index: 0, arguments: "{\"a\":1}".into() },
                ToolCallStart { index: 1, id: "fc_2".into(), name: String::new() },
                ToolCallDelta { index: 1, arguments: "{}".into() },
                Finish { reason: StopReason::ToolCalls },
            ])
        );
    }

    #[test]
    fn reads_cached_and_reasoning_token_details() {
        let events = run(&[
            r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":30,"output_tokens":12,"input_tokens_details":{"cached_tokens":24},"output_tokens_details":{"reasoning_tokens":8}}}}"#,
        ]);
        let usage = TokenUsage { input_tokens: 30, output_tokens: 12, reasoning_tokens: 8, cached_tokens: 24 };
        assert_eq!(events, ok(vec![Usage(usage), Finish { reason: StopReason::Stop }]));
    }

    #[test]
    fn reasoning_summary_parts_are_set_apart() {
        let events = run(&[
            r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":0,"delta":"One."}"#,
            r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":0,"delta":" More."}"#,
            r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":1,"delta":"Two."}"#,
            r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":9}}}"#,
        ]);
        assert_eq!(
            events,
            ok(vec![
                ReasoningDelta("One.".into()),
                ReasoningDelta(" More.".into()),
                ReasoningDelta("\n\n".into()),
                ReasoningDelta("Two.".into()),
                Usage(TokenUsage::new(3, 9)),
                Finish { reason: StopReason::Length },
            ])
        );
    }

    #[test]
    fn failures_and_error_events_end_the_stream_with_their_message() {
        let events = run(&[
            r#"{"type":"response.output_text.delta","delta":"partial"}"#,
            r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model crashed"}}}"#,
        ]);
        assert_eq!(events[0], Ok(TextDelta("partial".into())));
        let err = events[1].clone().unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Server);
        assert!(err.message.contains("The model crashed"), "{}", err.message);

        let events =
            run(&[r#"{"type":"error","code":"context_length_exceeded","message":"Too long","param":"input"}"#]);
        assert_eq!(events[0].clone().unwrap_err().kind, ProviderErrorKind::ContextTooLong);

        let events = run(&[r#"{"type":"response.output_text.delta","delta":"cut"}"#]);
        assert_eq!(events[1].clone().unwrap_err().kind, ProviderErrorKind::Network, "EOF before the end");
    }

    #[test]
    fn maps_a_whole_response_object() {
        let body = r#"{"object":"response","status":"completed","output":[
            {"type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]},
            {"type":"message","content":[{"type":"output_text","text":"Hi"}]},
            {"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],
            "usage":{"input_tokens":1,"output_tokens":2}}"#;
        let events = ResponsesEventMapper::new("Acme", "seed").on_whole_body(body.as_bytes()).unwrap().unwrap();
        assert_eq!(
            events,
            vec![
                ReasoningDelta("a\n\nb".into()),
                TextDelta("Hi".into()),
                ToolCallStart { index: 0, id: "c".into(), name: "f".into() },
                ToolCallDelta { index: 0, arguments: "{}".into() },
                Usage(TokenUsage::new(1, 2)),
                Finish { reason: StopReason::ToolCalls },
            ]
        );
        assert!(ResponsesEventMapper::new("Acme", "seed").on_whole_body(br#"{"choices":[]}"#).is_none());
    }

    #[test]
    fn never_panics_on_hostile_frames() {
        for data in [
            "null",
            "[]",
            "42",
            "{}",
            r#"{"type":null}"#,
            r#"{"type":"response.output_item.added","item":7}"#,
            r#"{"type":"response.function_call_arguments.done"}"#,
            r#"{"type":"response.completed","response":null}"#,
            r#"{"type":"response.failed"}"#,
            r#"{"type":"error"}"#,
        ] {
            let _ = run(&[data]);
        }
    }
}
