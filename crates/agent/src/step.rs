//! One model call: stream the provider's events as UI chunks, and collect what the model
//! said (in order: reasoning with its signatures, text, tool calls) for the next step.

use std::time::Duration;

use futures::StreamExt;
use protocol::{DataChunk, UiChunk};
use providers::{
    CompletionEvent, CompletionRequest, ContentPart, LanguageModel, ProviderError, Reasoning, StopReason, TokenUsage,
};
use tokio_util::sync::CancellationToken;
use turn::{ChunkSink, PartWriter, SinkClosed};

use crate::call_ids::CallIds;
use crate::features::ToolCalling;
use crate::prompt_tools::{CallScanner, Scanned, ScannedCall};

/// How the call ended.
#[derive(Debug)]
pub(crate) enum StepEnd {
    Completed(StopReason),
    /// Stop was pressed, or nobody reads the chunks any more.
    Stopped,
    /// The model was silent longer than the idle timeout.
    Stalled,
    Failed(ProviderError),
}

/// A tool call as the model made it.
#[derive(Debug, Clone)]
pub(crate) struct StepCall {
    pub id: String,
    pub name: String,
    /// The arguments, or why they are unusable (not JSON, not an object).
    pub arguments: Result<serde_json::Value, String>,
    /// The arguments as sent, for the error shown when they are unusable.
    pub raw: String,
}

#[derive(Debug)]
pub(crate) struct StepOutput {
    pub end: StepEnd,
    /// The assistant message content so far; tool calls are placeholders (their
    /// arguments are in `calls`, which the loop fills in once checked).
    pub content: Vec<ContentPart>,
    pub calls: Vec<StepCall>,
    pub usage: Option<TokenUsage>,
    /// Whether any answer content reached the sink (a retry would repeat it).
    pub emitted: bool,
    pub timing: StepTiming,
}

/// When the call was made and how long its parts took (tokio's clock, so paused-clock
/// tests measure it too).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepTiming {
    pub started_at: std::time::SystemTime,
    pub time_to_first_token: Option<Duration>,
    pub duration: Duration,
    /// `Retrying` events: the provider's own retries before the first byte.
    pub provider_retries: u32,
}

impl StepOutput {
    pub(crate) fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
            .collect()
    }
}

pub(crate) struct StepInput<'a> {
    pub model: &'a dyn providers::LanguageModel,
    pub request: CompletionRequest,
    pub idle_timeout: Duration,
    pub tool_calling: ToolCalling,
    /// The reply's call ids: a new call never takes one it used before.
    pub call_ids: &'a mut CallIds,
}

/// Streams one model call into `sink`. The caller has written `start-step`.
pub(crate) async fn stream_step(
    input: StepInput<'_>,
    cancel: &CancellationToken,
    sink: &mut impl ChunkSink,
    writer: &mut PartWriter,
) -> StepOutput {
    let format = input.model.format_name();
    let call_ids = input.call_ids;
    let mut collector = Collector { format, ..Collector::default() };
    let started_at = std::time::SystemTime::now();
    let started = tokio::time::Instant::now();
    let mut first_token: Option<Duration> = None;
    let mut provider_retries = 0u32;
    let mut scanner = (input.tool_calling == ToolCalling::Prompt).then(CallScanner::default);
    let mut stream = LanguageModel::stream(input.model, input.request);
    // A provider waiting to retry is not silent: its announced wait extends the deadline.
    let mut announced_wait = Duration::ZERO;
    // One waiter and one timer for the whole call: a timeout per read would register and
    // cancel a timer, and a cancellation waiter, for every chunk. The timer is moved on
    // only when it fires early (the model spoke since it was set).
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let idle = tokio::time::sleep(input.idle_timeout);
    tokio::pin!(idle);
    let mut last_event = tokio::time::Instant::now();
    let end = loop {
        let next = tokio::select! {
            biased;
            _ = &mut cancelled => break StepEnd::Stopped,
            next = stream.next() => next,
            _ = &mut idle => {
                let deadline = last_event + input.idle_timeout + announced_wait;
                if tokio::time::Instant::now() >= deadline {
                    break StepEnd::Stalled;
                }
                idle.as_mut().reset(deadline);
                continue;
            }
        };
        announced_wait = Duration::ZERO;
        let event = match next {
            None => break StepEnd::Completed(collector.finish.take().unwrap_or(StopReason::Stop)),
            Some(Err(error)) => break StepEnd::Failed(error),
            Some(Ok(event)) => event,
        };
        if first_token.is_none()
            && matches!(
                event,
                CompletionEvent::TextDelta(_)
                    | CompletionEvent::ReasoningDelta(_)
                    | CompletionEvent::ToolCallStart { .. }
            )
        {
            first_token = Some(started.elapsed());
        }
        let chunks = match event {
            CompletionEvent::TextDelta(delta) => match scanner.as_mut() {
                Some(scanner) => {
                    let found = scanner.push(&delta);
                    collector.scanned(found, writer, call_ids)
                }
                None => {
                    collector.text(&delta);
                    writer.text(delta)
                }
            },
            CompletionEvent::ReasoningDelta(delta) => {
                collector.reasoning(&delta);
                writer.reasoning(delta)
            }
            CompletionEvent::ReasoningSignature { signature } => {
                collector.signature(&signature);
                writer.signature(format, signature)
            }
            CompletionEvent::RedactedReasoning { data } => {
                collector.redacted(&data);
                writer.redacted(format, data)
            }
            CompletionEvent::ToolCallStart { index, id, name } => {
                let id = call_ids.claim(&id);
                collector.call_start(index, id.clone(), name.clone());
                writer.tool_start(id, name)
            }
            CompletionEvent::ToolCallDelta { index, arguments } => match collector.call_delta(index, &arguments) {
                Some(id) => {
                    vec![writer.plain(UiChunk::ToolInputDelta { tool_call_id: id, input_text_delta: arguments })]
                }
                None => Vec::new(),
            },
            CompletionEvent::Usage(usage) => {
                collector.usage = Some(usage);
                Vec::new()
            }
            CompletionEvent::Finish { reason } => {
                collector.finish = Some(reason);
                Vec::new()
            }
            CompletionEvent::Retrying { attempt, delay_ms, reason } => {
                announced_wait = Duration::from_millis(delay_ms);
                provider_retries += 1;
                // Transient: the UI shows "retrying in N s" while it lasts; nothing is stored.
                vec![UiChunk::Data(DataChunk {
                    kind: "data-retrying".into(),
                    id: Some("retrying".into()),
                    data: serde_json::json!({ "attempt": attempt, "delayMs": delay_ms, "reason": reason }),
                    transient: Some(true),
                })]
            }
        };
        if chunks.iter().any(|c| !matches!(c, UiChunk::Data(_))) {
            collector.emitted = true;
        }
        if send_all(sink, chunks).await.is_err() {
            break StepEnd::Stopped;
        }
        // Silence counts from here: ready to read again.
        last_event = tokio::time::Instant::now();
    };
    let mut end = end;
    if let Some(scanner) = scanner.as_mut()
        && matches!(end, StepEnd::Completed(_))
    {
        let found = scanner.finish();
        let chunks = collector.scanned(found, writer, call_ids);
        if send_all(sink, chunks).await.is_err() {
            end = StepEnd::Stopped;
        }
    }
    let timing =
        StepTiming { started_at, time_to_first_token: first_token, duration: started.elapsed(), provider_retries };
    collector.into_output(end, timing)
}

/// The size of what a model call is sent, in characters: what the inspector shows as the
/// request's size (not the exact bytes of any wire format).
pub(crate) fn request_chars(messages: &[providers::ChatMessage]) -> u64 {
    fn part_chars(part: &ContentPart) -> usize {
        match part {
            ContentPart::Text { text } => text.len(),
            ContentPart::Media(media) => match &media.source {
                providers::MediaSource::Base64(data) => data.len(),
                providers::MediaSource::Url(url) => url.len(),
            },
            ContentPart::Reasoning(r) => r.text.len(),
            ContentPart::ToolCall(call) => call.name.len() + call.arguments.to_string().len(),
            ContentPart::ToolResult(result) => result.content.iter().map(part_chars).sum(),
        }
    }
    let total: usize = messages.iter().flat_map(|m| m.content.iter()).map(part_chars).sum();
    u64::try_from(total).unwrap_or(u64::MAX)
}

pub(crate) async fn send_all(sink: &mut impl ChunkSink, chunks: Vec<UiChunk>) -> Result<(), SinkClosed> {
    for chunk in chunks {
        sink.send(chunk).await?;
    }
    Ok(())
}

/// What the model said, in order.
#[derive(Default)]
struct Collector {
    format: &'static str,
    content: Vec<ContentPart>,
    calls: Vec<StepCall>,
    /// Streamed calls by the provider's index → position in `calls`.
    call_index: Vec<(u32, usize)>,
    usage: Option<TokenUsage>,
    finish: Option<StopReason>,
    emitted: bool,
}

impl Collector {
    fn text(&mut self, delta: &str) {
        match self.content.last_mut() {
            Some(ContentPart::Text { text }) => text.push_str(delta),
            _ => self.content.push(ContentPart::text(delta)),
        }
    }

    fn reasoning(&mut self, delta: &str) {
        match self.content.last_mut() {
            Some(ContentPart::Reasoning(r)) if r.signature.is_none() && r.redacted.is_none() => r.text.push_str(delta),
            _ => self.content.push(ContentPart::Reasoning(Reasoning {
                text: delta.to_owned(),
                format: Some(self.format.to_owned()),
                ..Reasoning::default()
            })),
        }
    }

    fn signature(&mut self, signature: &str) {
        match self.content.last_mut() {
            Some(ContentPart::Reasoning(r)) if r.signature.is_none() && r.redacted.is_none() => {
                r.signature = Some(signature.to_owned())
            }
            _ => self.content.push(ContentPart::Reasoning(Reasoning {
                signature: Some(signature.to_owned()),
                format: Some(self.format.to_owned()),
                ..Reasoning::default()
            })),
        }
    }

    fn redacted(&mut self, data: &str) {
        self.content.push(ContentPart::Reasoning(Reasoning {
            redacted: Some(data.to_owned()),
            format: Some(self.format.to_owned()),
            ..Reasoning::default()
        }));
    }

    fn call_start(&mut self, index: u32, id: String, name: String) {
        self.call_index.push((index, self.calls.len()));
        self.content.push(ContentPart::ToolCall(providers::ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: serde_json::Value::Null,
        }));
        self.calls.push(StepCall { id, name, arguments: Ok(serde_json::Value::Null), raw: String::new() });
    }

    /// Appends to a streamed call's arguments; its id, if the call is known.
    fn call_delta(&mut self, index: u32, arguments: &str) -> Option<String> {
        let position = self.call_index.iter().rev().find(|(i, _)| *i == index).map(|(_, p)| *p)?;
        let call = self.calls.get_mut(position)?;
        call.raw.push_str(arguments);
        Some(call.id.clone())
    }

    /// Visible text and prompt-written calls from the scanner, as chunks.
    fn scanned(&mut self, found: Vec<Scanned>, writer: &mut PartWriter, call_ids: &mut CallIds) -> Vec<UiChunk> {
        let mut chunks = Vec::new();
        for item in found {
            match item {
                Scanned::Text(text) => {
                    self.text(&text);
                    chunks.extend(writer.text(text));
                }
                Scanned::Call(call) => {
                    let id = call_ids.prompt_call();
                    let (name, arguments, raw) = match call {
                        ScannedCall::Call { name, arguments } => (name, Ok(arguments.clone()), arguments.to_string()),
                        ScannedCall::Malformed { raw, error } => ("unknown".to_owned(), Err(error), raw),
                    };
                    chunks.extend(writer.tool_start(id.clone(), name.clone()));
                    self.content.push(ContentPart::ToolCall(providers::ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: serde_json::Value::Null,
                    }));
                    self.calls.push(StepCall { id, name, arguments, raw });
                }
            }
        }
        chunks
    }

    fn into_output(mut self, end: StepEnd, timing: StepTiming) -> StepOutput {
        // Streamed arguments are JSON text; an empty text means no arguments.
        for call in &mut self.calls {
            if call.arguments.as_ref().is_ok_and(serde_json::Value::is_null) {
                call.arguments = parse_arguments(&call.raw);
            }
        }
        StepOutput { end, content: self.content, calls: self.calls, usage: self.usage, emitted: self.emitted, timing }
    }
}

fn parse_arguments(raw: &str) -> Result<serde_json::Value, String> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(other) => Err(format!("the arguments must be a JSON object, not {other}")),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}
