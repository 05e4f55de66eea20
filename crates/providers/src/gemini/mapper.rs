//! The pure event mapper: SSE frames of a Gemini `streamGenerateContent` stream in,
//! [`CompletionEvent`]s out.
//!
//! Each frame is a whole `GenerateContentResponse` holding the next parts of the first
//! candidate: text, thought text (`thought: true`), and function calls, which arrive whole
//! and get an id when Gemini gives none (`call_<responseId>_<n>`, unique per answer). A
//! part's `thoughtSignature` comes right before the part's own events. There is no end marker: the
//! stream is over at EOF, which is clean once a `finishReason` came. A prompt blocked by
//! `promptFeedback.blockReason` is a content-filter error.

use crate::decoder::{EventMapper, FrameOutcome, parse_frame};
use crate::error::ProviderError;
use crate::language_model::{CompletionEvent, StopReason, TokenUsage};
use crate::sse::SseFrame;

use super::types::{GenerateContentResponse, Part, UsageMetadata};

#[derive(Debug)]
pub struct GeminiEventMapper {
    provider: String,
    /// Makes synthesized call ids unique when the answer has no `responseId`.
    id_seed: String,
    response_id: Option<String>,
    tool_calls: u32,
    finish_reason: Option<StopReason>,
    usage: Option<TokenUsage>,
}

impl GeminiEventMapper {
    pub fn new(provider: impl Into<String>, id_seed: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            id_seed: id_seed.into(),
            response_id: None,
            tool_calls: 0,
            finish_reason: None,
            usage: None,
        }
    }

    fn map_response(&mut self, response: GenerateContentResponse) -> Result<Vec<CompletionEvent>, ProviderError> {
        if let Some(error) = response.error.as_ref().filter(|e| !e.is_null()) {
            return Err(ProviderError::from_error_value(&self.provider, &serde_json::json!({ "error": error })));
        }
        if let Some(feedback) = &response.prompt_feedback
            && let Some(reason) = feedback.block_reason.as_deref().filter(|r| !r.is_empty())
        {
            return Err(ProviderError::prompt_blocked(
                &self.provider,
                reason,
                feedback.block_reason_message.as_deref(),
            ));
        }
        if self.response_id.is_none() {
            self.response_id = response.response_id.filter(|id| !id.is_empty());
        }
        let mut events = Vec::new();
        // We never ask for several candidates; others are ignored.
        for candidate in response.candidates.into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            for part in candidate.content.map(|content| content.parts).unwrap_or_default() {
                self.map_part(part, &mut events);
            }
            if let Some(reason) = candidate.finish_reason.as_deref().filter(|r| !r.is_empty()) {
                self.finish_reason = Some(finish_reason(reason));
            }
        }
        if let Some(usage) = response.usage_metadata {
            self.note_usage(&usage);
        }
        Ok(events)
    }

    fn map_part(&mut self, part: Part, events: &mut Vec<CompletionEvent>) {
        // The signature closes the thoughts before this part, so it comes before the
        // part's own content (Gemini wants it back on this same part).
        if let Some(signature) = part.thought_signature.filter(|s| !s.is_empty()) {
            events.push(CompletionEvent::ReasoningSignature { signature });
        }
        if let Some(call) = part.function_call {
            let index = self.tool_calls;
            self.tool_calls += 1;
            let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| {
                crate::call_id::synthesized(self.response_id.as_deref().unwrap_or(&self.id_seed), index)
            });
            events.push(CompletionEvent::ToolCallStart { index, id, name: call.name.unwrap_or_default() });
            let arguments = match call.args {
                Some(args) if !args.is_null() => args.to_string(),
                _ => "{}".to_owned(),
            };
            events.push(CompletionEvent::ToolCallDelta { index, arguments });
        } else if let Some(text) = part.text.filter(|text| !text.is_empty()) {
            events.push(if part.thought == Some(true) {
                CompletionEvent::ReasoningDelta(text)
            } else {
                CompletionEvent::TextDelta(text)
            });
        }
    }

    fn note_usage(&mut self, usage: &UsageMetadata) {
        // Every frame repeats the running totals: the last one wins.
        let thoughts = usage.thoughts_token_count.unwrap_or(0);
        let output = usage.candidates_token_count.unwrap_or(0).saturating_add(thoughts);
        self.usage = Some(TokenUsage {
            input_tokens: usage.prompt_token_count.unwrap_or(0),
            output_tokens: output,
            reasoning_tokens: thoughts,
            cached_tokens: usage.cached_content_token_count.unwrap_or(0),
        });
    }

    fn finish(&mut self) -> Vec<CompletionEvent> {
        let mut events: Vec<CompletionEvent> = self.usage.take().map(CompletionEvent::Usage).into_iter().collect();
        let reason = match self.finish_reason.take().unwrap_or(StopReason::Stop) {
            // Gemini says STOP after function calls too.
            StopReason::Stop if self.tool_calls > 0 => StopReason::ToolCalls,
            other => other,
        };
        events.push(CompletionEvent::Finish { reason });
        events
    }
}

fn finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            StopReason::ContentFilter
        }
        other => StopReason::Other(other.to_ascii_lowercase()),
    }
}

impl EventMapper for GeminiEventMapper {
    fn on_frame(&mut self, frame: &SseFrame) -> Result<FrameOutcome, ProviderError> {
        let data = frame.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(FrameOutcome::Continue(Vec::new()));
        }
        let response: GenerateContentResponse = parse_frame(data)?;
        Ok(FrameOutcome::Continue(self.map_response(response)?))
    }

    fn on_end_of_stream(&mut self) -> Result<Vec<CompletionEvent>, ProviderError> {
        if self.finish_reason.is_none() {
            return Err(ProviderError::ended_early(&self.provider));
        }
        Ok(self.finish())
    }

    /// Without `alt=sse` Gemini answers with a JSON array of the same responses.
    fn on_whole_body(&mut self, body: &[u8]) -> Option<Result<Vec<CompletionEvent>, ProviderError>> {
        let value: serde_json::Value = serde_json::from_slice(body).ok()?;
        let items = match value {
            serde_json::Value::Array(items) => items,
            object @ serde_json::Value::Object(_) => vec![object],
            _ => return None,
        };
        let mut events = Vec::new();
        for item in items {
            let response: GenerateContentResponse = serde_json::from_value(item).ok()?;
            match self.map_response(response) {
                Ok(more) => events.extend(more),
                Err(err) => return Some(Err(err)),
            }
        }
        events.extend(self.finish());
        Some(Ok(events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProviderErrorKind;
    use CompletionEvent::{Finish, ReasoningSignature, TextDelta, ToolCallDelta, ToolCallStart, Usage};

    fn run(frames: &[&str]) -> Vec<Result<CompletionEvent, ProviderError>> {
        crate::decoder::run_frames(GeminiEventMapper::new("Gemini", "seed"), frames)
    }

    #[test]
    fn function_calls_get_ids_unique_to_the_answer() {
        let events = run(&[
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"a"},"thoughtSignature":"sig"},{"functionCall":{"name":"b","args":{"x":1},"id":"given"}}]},"finishReason":"STOP"}]}"#,
        ]);
        assert_eq!(
            events.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            vec![
                ReasoningSignature { signature: "sig".into() },
                ToolCallStart { index: 0, id: "call_seed_0".into(), name: "a".into() },
                ToolCallDelta { index: 0, arguments: "{}".into() },
                ToolCallStart { index: 1, id: "given".into(), name: "b".into() },
                ToolCallDelta { index: 1, arguments: "{\"x\":1}".into() },
                Finish { reason: StopReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn maps_finish_reasons() {
        for (wire, reason) in [
            ("STOP", StopReason::Stop),
            ("MAX_TOKENS", StopReason::Length),
            ("SAFETY", StopReason::ContentFilter),
            ("RECITATION", StopReason::ContentFilter),
            ("MALFORMED_FUNCTION_CALL", StopReason::Other("malformed_function_call".into())),
        ] {
            let frame = format!(r#"{{"candidates":[{{"finishReason":"{wire}"}}]}}"#);
            assert_eq!(run(&[&frame]), vec![Ok(Finish { reason })], "{wire}");
        }
    }

    #[test]
    fn a_blocked_prompt_is_a_content_filter_error() {
        let events =
            run(&[r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":4}}"#]);
        let err = events[0].clone().unwrap_err();
        assert_eq!((err.kind, err.retryable), (ProviderErrorKind::ContentFiltered, false));
        assert_eq!(err.message, "Gemini blocked the prompt (PROHIBITED_CONTENT) — rephrase the message");
    }

    #[test]
    fn eof_before_a_finish_reason_is_an_error() {
        let events = run(&[r#"{"candidates":[{"content":{"parts":[{"text":"cut"}]}}]}"#]);
        assert_eq!(events[0], Ok(TextDelta("cut".into())));
        assert_eq!(events[1].clone().unwrap_err().kind, ProviderErrorKind::Network);
    }

    #[test]
    fn maps_a_whole_json_array_answer() {
        let body = r#"[{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}],"responseId":"r"},
                      {"candidates":[{"content":{"parts":[{"text":"!"}]},"finishReason":"STOP"}],
                       "usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":3,"thoughtsTokenCount":4,"cachedContentTokenCount":1}}]"#;
        let events = GeminiEventMapper::new("Gemini", "s").on_whole_body(body.as_bytes()).unwrap().unwrap();
        assert_eq!(
            events,
            vec![
                TextDelta("Hi".into()),
                TextDelta("!".into()),
                Usage(TokenUsage { input_tokens: 2, output_tokens: 7, reasoning_tokens: 4, cached_tokens: 1 }),
                Finish { reason: StopReason::Stop },
            ]
        );
    }

    #[test]
    fn never_panics_on_hostile_frames() {
        for data in [
            "null",
            "[]",
            "{}",
            r#"{"candidates":null}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":null,"text":7}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"args":"not an object"}}]}}]}"#,
            r#"{"usageMetadata":{"candidatesTokenCount":18446744073709551615,"thoughtsTokenCount":9}}"#,
            r#"{"promptFeedback":{"blockReason":""}}"#,
            r#"{"error":{}}"#,
        ] {
            let _ = run(&[data]);
        }
    }
}
