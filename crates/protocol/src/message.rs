//! [`UiMessage`]: a stored or streaming message as a list of parts, the same shape the AI
//! SDK's `UIMessage` has; and [`MessageAccumulator`], the fold that turns a chunk stream
//! into that message exactly as the AI SDK's `readUIMessageStream` does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::chunk::{DataChunk, UiChunk};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    System,
    User,
    Assistant,
}

/// Lifecycle of a stored message row. Transitions live in `crates/streams`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Admitted, no chunk yet.
    Pending,
    /// Receiving chunks.
    Streaming,
    /// Finished normally.
    Success,
    /// Stopped before the end (by the user, a stall, or a crash); `status_reason` says which.
    Paused,
    /// Ended by an error; the error is the last part.
    Error,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Pending => "pending",
            MessageStatus::Streaming => "streaming",
            MessageStatus::Success => "success",
            MessageStatus::Paused => "paused",
            MessageStatus::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => MessageStatus::Pending,
            "streaming" => MessageStatus::Streaming,
            "success" => MessageStatus::Success,
            "paused" => MessageStatus::Paused,
            "error" => MessageStatus::Error,
            _ => return None,
        })
    }

    pub fn is_live(self) -> bool {
        matches!(self, MessageStatus::Pending | MessageStatus::Streaming)
    }
}

/// Why a reply ended before its natural end: the `status_reason` of a `paused` row, or of
/// a `success` row that ended early but well (`length`, `steered`). An `error` row's
/// reason is the error's code instead (`rate_limit`, `server`, …), so the column and the
/// wire field stay strings, and [`StatusReason::parse`] reads any of them: a value this
/// version does not know is `None`, never an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StatusReason {
    /// The user pressed Stop.
    UserStop,
    /// The model went silent for the idle timeout.
    Stalled,
    /// The turn made as many tool calls as it may; the user can let it go on.
    ToolLimit,
    /// A tool call waits for the user's decision; answering it continues the reply.
    AwaitingApproval,
    /// The turn yielded at a step boundary so a steering message can go next (`success`).
    Steered,
    /// The model's output limit (`max_tokens`) cut the reply short: it is complete as far
    /// as it went (`success`), and Continue can pick it up.
    Length,
    /// The app stopped while the reply was being written (found at the next start, or at
    /// shutdown).
    Interrupted,
}

impl StatusReason {
    pub const ALL: [StatusReason; 7] = [
        StatusReason::UserStop,
        StatusReason::Stalled,
        StatusReason::ToolLimit,
        StatusReason::AwaitingApproval,
        StatusReason::Steered,
        StatusReason::Length,
        StatusReason::Interrupted,
    ];

    /// The spelling on the wire and in the database.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatusReason::UserStop => "user_stop",
            StatusReason::Stalled => "stalled",
            StatusReason::ToolLimit => "tool_limit",
            StatusReason::AwaitingApproval => "awaiting_approval",
            StatusReason::Steered => "steered",
            StatusReason::Length => "length",
            StatusReason::Interrupted => "interrupted",
        }
    }

    /// `None` for anything else a row may hold (an error's code, or a reason a later
    /// version wrote).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == text)
    }
}

/// Metadata we attach to assistant messages (the AI SDK leaves its shape to the app).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MessageMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status: Option<MessageStatus>,
    /// Why a message is `paused` or ended early (a `StatusReason`), or an `error`'s code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
}

impl MessageMetadata {
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[ts(type = "number")]
    pub input_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Of the output, the reasoning tokens (when the provider says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub reasoning_tokens: Option<u64>,
    /// Of the input, the tokens read from the provider's prompt cache (when it says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub cached_tokens: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum PartState {
    Streaming,
    Done,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UiMessage {
    pub id: String,
    pub role: MessageRole,
    pub parts: Vec<UiPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "MessageMetadata")]
    pub metadata: Option<Value>,
}

impl UiMessage {
    pub fn user_text(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            role: MessageRole::User,
            parts: vec![UiPart::Text { text: text.into(), state: Some(PartState::Done) }],
            metadata: None,
        }
    }

    /// The concatenated text parts: what a model sees of this message in a plain chat.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let UiPart::Text { text, .. } = part {
                out.push_str(text);
            }
        }
        out
    }

    /// The typed view of `metadata`; unknown or malformed metadata reads as empty.
    pub fn typed_metadata(&self) -> MessageMetadata {
        self.metadata.clone().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
    }
}

/// One part of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum UiPart {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        state: Option<PartState>,
    },
    #[serde(rename_all = "camelCase")]
    Reasoning {
        /// The chunk id the part streamed under (the AI SDK keeps it on reasoning parts).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        id: Option<String>,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        state: Option<PartState>,
        /// Signatures or redacted data to send back to the provider, keyed by wire format.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "Record<string, unknown>")]
        provider_metadata: Option<Value>,
    },
    StepStart,
    #[serde(rename_all = "camelCase")]
    DynamicTool {
        tool_name: String,
        tool_call_id: String,
        state: ToolState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        input: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        output: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error_text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        approval: Option<ToolApproval>,
    },
    #[serde(rename_all = "camelCase")]
    SourceUrl {
        source_id: String,
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    File {
        media_type: String,
        /// A `data:` URL (attachments are stored inline) or an `http(s)` URL.
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        filename: Option<String>,
    },
    /// `data-<name>` parts, e.g. `data-error`.
    #[serde(untagged)]
    Data(DataPart),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DataPart {
    #[serde(rename = "type")]
    #[ts(type = "`data-${string}`")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub id: Option<String>,
    pub data: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ToolState {
    InputStreaming,
    InputAvailable,
    ApprovalRequested,
    ApprovalResponded,
    OutputAvailable,
    OutputError,
    OutputDenied,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolApproval {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approved: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Who answered, when it was not the user (absent: the user, as the AI SDK has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_by: Option<Decider>,
}

/// Who answered an approval: the audit log's actor and the tool-call ledger's
/// `decided_by` say the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// The user answered it (or stopped the reply that asked).
    User,
    /// The app settled it itself: start-up recovery denying a question nobody can answer.
    App,
}

impl Decider {
    pub fn as_str(self) -> &'static str {
        match self {
            Decider::User => "user",
            Decider::App => "app",
        }
    }
}

/// A chunk that does not fit the message built so far (our own producers never emit one;
/// a wrong one is dropped and logged, never a panic).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AccumulateError(pub String);

/// Folds chunks into a [`UiMessage`] with the same rules as the AI SDK's
/// `processUIMessageStream`, so our snapshot and a stock client's message agree.
#[derive(Clone, Debug)]
pub struct MessageAccumulator {
    message: UiMessage,
    /// Open text/reasoning parts by chunk id → index in `message.parts`.
    active_text: Vec<(String, usize)>,
    active_reasoning: Vec<(String, usize)>,
    /// Raw tool input text per tool call, while it streams.
    tool_input_text: Vec<(String, String)>,
}

impl MessageAccumulator {
    pub fn new(message_id: impl Into<String>) -> Self {
        Self::resume(UiMessage {
            id: message_id.into(),
            role: MessageRole::Assistant,
            parts: Vec::new(),
            metadata: None,
        })
    }

    /// Continue from an existing (e.g. checkpointed) message.
    pub fn resume(message: UiMessage) -> Self {
        Self { message, active_text: Vec::new(), active_reasoning: Vec::new(), tool_input_text: Vec::new() }
    }

    pub fn message(&self) -> &UiMessage {
        &self.message
    }

    pub fn into_message(self) -> UiMessage {
        self.message
    }

    pub fn apply(&mut self, chunk: &UiChunk) -> Result<(), AccumulateError> {
        match chunk {
            UiChunk::Start { message_id, message_metadata } => {
                if let Some(id) = message_id {
                    self.message.id = id.clone();
                }
                self.merge_metadata(message_metadata.as_ref());
            }
            UiChunk::StartStep => self.message.parts.push(UiPart::StepStart),
            UiChunk::FinishStep => {
                self.active_text.clear();
                self.active_reasoning.clear();
            }
            UiChunk::TextStart { id } => {
                self.message.parts.push(UiPart::Text { text: String::new(), state: Some(PartState::Streaming) });
                upsert(&mut self.active_text, id, self.message.parts.len() - 1);
            }
            UiChunk::TextDelta { id, delta } => {
                let index = lookup(&self.active_text, id).ok_or_else(|| missing("text-delta", id))?;
                if let Some(UiPart::Text { text, .. }) = self.message.parts.get_mut(index) {
                    text.push_str(delta);
                }
            }
            UiChunk::TextEnd { id } => {
                let index = lookup(&self.active_text, id).ok_or_else(|| missing("text-end", id))?;
                if let Some(UiPart::Text { state, .. }) = self.message.parts.get_mut(index) {
                    *state = Some(PartState::Done);
                }
                self.active_text.retain(|(key, _)| key != id);
            }
            UiChunk::ReasoningStart { id, provider_metadata } => {
                self.message.parts.push(UiPart::Reasoning {
                    id: Some(id.clone()),
                    text: String::new(),
                    state: Some(PartState::Streaming),
                    provider_metadata: provider_metadata.clone(),
                });
                upsert(&mut self.active_reasoning, id, self.message.parts.len() - 1);
            }
            UiChunk::ReasoningDelta { id, delta } => {
                let index = lookup(&self.active_reasoning, id).ok_or_else(|| missing("reasoning-delta", id))?;
                if let Some(UiPart::Reasoning { text, .. }) = self.message.parts.get_mut(index) {
                    text.push_str(delta);
                }
            }
            UiChunk::ReasoningEnd { id, provider_metadata } => {
                let index = lookup(&self.active_reasoning, id).ok_or_else(|| missing("reasoning-end", id))?;
                if let Some(UiPart::Reasoning { state, provider_metadata: slot, .. }) =
                    self.message.parts.get_mut(index)
                {
                    *state = Some(PartState::Done);
                    if provider_metadata.is_some() {
                        *slot = provider_metadata.clone();
                    }
                }
                self.active_reasoning.retain(|(key, _)| key != id);
            }
            UiChunk::ToolInputStart { tool_call_id, tool_name, .. } => {
                upsert_text(&mut self.tool_input_text, tool_call_id, String::new());
                self.upsert_tool(tool_call_id, tool_name, |part| {
                    if let UiPart::DynamicTool { state, .. } = part {
                        *state = ToolState::InputStreaming;
                    }
                });
            }
            UiChunk::ToolInputDelta { tool_call_id, input_text_delta } => {
                let text = match self.tool_input_text.iter_mut().find(|(id, _)| id == tool_call_id) {
                    Some((_, text)) => {
                        text.push_str(input_text_delta);
                        text.clone()
                    }
                    None => return Err(missing("tool-input-delta", tool_call_id)),
                };
                if let Some(UiPart::DynamicTool { input, .. }) = self.tool_mut(tool_call_id)
                    && let Ok(value) = serde_json::from_str::<Value>(&text)
                {
                    *input = Some(value);
                }
            }
            UiChunk::ToolInputAvailable { tool_call_id, tool_name, input, .. } => {
                let input = input.clone();
                self.upsert_tool(tool_call_id, tool_name, move |part| {
                    if let UiPart::DynamicTool { state, input: slot, .. } = part {
                        *state = ToolState::InputAvailable;
                        *slot = Some(input);
                    }
                });
            }
            UiChunk::ToolInputError { tool_call_id, tool_name, input, error_text, .. } => {
                let (input, error) = (input.clone(), error_text.clone());
                self.upsert_tool(tool_call_id, tool_name, move |part| {
                    if let UiPart::DynamicTool { state, input: slot, error_text, .. } = part {
                        *state = ToolState::OutputError;
                        *slot = Some(input);
                        *error_text = Some(error);
                    }
                });
            }
            UiChunk::ToolApprovalRequest { approval_id, tool_call_id } => {
                let Some(UiPart::DynamicTool { state, approval, .. }) = self.tool_mut(tool_call_id) else {
                    return Err(missing("tool-approval-request", tool_call_id));
                };
                *state = ToolState::ApprovalRequested;
                *approval =
                    Some(ToolApproval { id: approval_id.clone(), approved: None, reason: None, decided_by: None });
            }
            UiChunk::ToolOutputAvailable { tool_call_id, output, .. } => {
                let Some(UiPart::DynamicTool { state, output: slot, .. }) = self.tool_mut(tool_call_id) else {
                    return Err(missing("tool-output-available", tool_call_id));
                };
                *state = ToolState::OutputAvailable;
                *slot = Some(output.clone());
            }
            UiChunk::ToolOutputError { tool_call_id, error_text, .. } => {
                let Some(UiPart::DynamicTool { state, error_text: slot, .. }) = self.tool_mut(tool_call_id) else {
                    return Err(missing("tool-output-error", tool_call_id));
                };
                *state = ToolState::OutputError;
                *slot = Some(error_text.clone());
            }
            UiChunk::ToolOutputDenied { tool_call_id } => {
                let Some(UiPart::DynamicTool { state, .. }) = self.tool_mut(tool_call_id) else {
                    return Err(missing("tool-output-denied", tool_call_id));
                };
                *state = ToolState::OutputDenied;
            }
            UiChunk::SourceUrl { source_id, url, title } => self.message.parts.push(UiPart::SourceUrl {
                source_id: source_id.clone(),
                url: url.clone(),
                title: title.clone(),
            }),
            UiChunk::File { url, media_type } => self.message.parts.push(UiPart::File {
                media_type: media_type.clone(),
                url: url.clone(),
                filename: None,
            }),
            UiChunk::MessageMetadata { message_metadata } => self.merge_metadata(Some(message_metadata)),
            UiChunk::Finish { message_metadata, .. } => self.merge_metadata(message_metadata.as_ref()),
            UiChunk::Error { .. } | UiChunk::Abort { .. } => {}
            UiChunk::Data(DataChunk { kind, id, data, transient }) => {
                if transient == &Some(true) {
                    return Ok(());
                }
                let existing = id.as_ref().and_then(|id| {
                    self.message.parts.iter_mut().find_map(|part| match part {
                        UiPart::Data(p) if &p.kind == kind && p.id.as_ref() == Some(id) => Some(p),
                        _ => None,
                    })
                });
                match existing {
                    Some(part) => part.data = data.clone(),
                    None => self.message.parts.push(UiPart::Data(DataPart {
                        kind: kind.clone(),
                        id: id.clone(),
                        data: data.clone(),
                    })),
                }
            }
        }
        Ok(())
    }

    /// Marks every still-open text or reasoning part done, e.g. when a stream is cut off.
    pub fn close_open_parts(&mut self) {
        for (_, index) in self.active_text.drain(..).chain(self.active_reasoning.drain(..)) {
            match self.message.parts.get_mut(index) {
                Some(UiPart::Text { state, .. }) | Some(UiPart::Reasoning { state, .. }) => {
                    *state = Some(PartState::Done)
                }
                _ => {}
            }
        }
    }

    fn merge_metadata(&mut self, patch: Option<&Value>) {
        let Some(patch) = patch else { return };
        let merged = match self.message.metadata.take() {
            Some(base) => merge_objects(base, patch),
            None => patch.clone(),
        };
        self.message.metadata = Some(merged);
    }

    fn tool_mut(&mut self, tool_call_id: &str) -> Option<&mut UiPart> {
        self.message
            .parts
            .iter_mut()
            .find(|part| matches!(part, UiPart::DynamicTool { tool_call_id: id, .. } if id == tool_call_id))
    }

    fn upsert_tool(&mut self, tool_call_id: &str, tool_name: &str, update: impl FnOnce(&mut UiPart)) {
        if self.tool_mut(tool_call_id).is_none() {
            self.message.parts.push(UiPart::DynamicTool {
                tool_name: tool_name.to_owned(),
                tool_call_id: tool_call_id.to_owned(),
                state: ToolState::InputStreaming,
                input: None,
                output: None,
                error_text: None,
                approval: None,
            });
        }
        if let Some(part) = self.tool_mut(tool_call_id) {
            update(part);
        }
    }
}

fn missing(chunk: &str, id: &str) -> AccumulateError {
    AccumulateError(format!("{chunk} for unknown id {id:?}"))
}

fn lookup(active: &[(String, usize)], id: &str) -> Option<usize> {
    active.iter().find(|(key, _)| key == id).map(|(_, index)| *index)
}

fn upsert(active: &mut Vec<(String, usize)>, id: &str, index: usize) {
    active.retain(|(key, _)| key != id);
    active.push((id.to_owned(), index));
}

fn upsert_text(active: &mut Vec<(String, String)>, id: &str, text: String) {
    active.retain(|(key, _)| key != id);
    active.push((id.to_owned(), text));
}

/// Deep merge of JSON objects, as the AI SDK merges message metadata: objects merge key by
/// key, anything else in `patch` replaces what was there.
pub fn merge_objects(base: Value, patch: &Value) -> Value {
    match (base, patch) {
        (Value::Object(mut base), Value::Object(patch)) => {
            for (key, value) in patch {
                let merged = match base.remove(key) {
                    Some(existing) => merge_objects(existing, value),
                    None => value.clone(),
                };
                base.insert(key.clone(), merged);
            }
            Value::Object(base)
        }
        (_, patch) => patch.clone(),
    }
}

/// The object without its `null` members: a metadata patch that sets only what is known.
pub fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect::<Map<_, _>>()),
        other => other,
    }
}

impl UiPart {
    /// A `data-error` part: how an error is shown inside a message, and stored with it.
    pub fn error(error: &crate::ApiError) -> Self {
        UiPart::Data(DataPart {
            kind: "data-error".to_owned(),
            id: None,
            data: serde_json::to_value(error).unwrap_or(Value::Null),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fold(chunks: &[UiChunk]) -> UiMessage {
        let mut acc = MessageAccumulator::new("");
        for chunk in chunks {
            acc.apply(chunk).unwrap();
        }
        acc.into_message()
    }

    #[test]
    fn a_status_reason_is_spelled_the_same_in_json_and_in_the_database_and_reads_back() {
        for reason in StatusReason::ALL {
            assert_eq!(serde_json::to_value(reason).unwrap(), json!(reason.as_str()));
            assert_eq!(StatusReason::parse(reason.as_str()), Some(reason));
        }
        // An error's code shares the column; it is not a status reason, and not an error.
        assert_eq!(StatusReason::parse("rate_limit"), None);
    }

    #[test]
    fn text_parts_accumulate_and_close() {
        let message = fold(&[
            UiChunk::Start { message_id: Some("m".into()), message_metadata: Some(json!({"model": "x"})) },
            UiChunk::StartStep,
            UiChunk::TextStart { id: "0".into() },
            UiChunk::TextDelta { id: "0".into(), delta: "Hel".into() },
            UiChunk::TextDelta { id: "0".into(), delta: "lo".into() },
            UiChunk::TextEnd { id: "0".into() },
            UiChunk::FinishStep,
            UiChunk::Finish { finish_reason: None, message_metadata: Some(json!({"status": "success"})) },
        ]);
        assert_eq!(message.id, "m");
        assert_eq!(message.text(), "Hello");
        assert_eq!(message.parts[0], UiPart::StepStart);
        assert_eq!(message.parts[1], UiPart::Text { text: "Hello".into(), state: Some(PartState::Done) });
        assert_eq!(message.metadata, Some(json!({"model": "x", "status": "success"})));
    }

    #[test]
    fn delta_for_an_unknown_part_is_an_error_not_a_panic() {
        let mut acc = MessageAccumulator::new("m");
        assert!(acc.apply(&UiChunk::TextDelta { id: "nope".into(), delta: "x".into() }).is_err());
        assert!(acc.message().parts.is_empty());
    }

    #[test]
    fn data_parts_with_the_same_id_are_replaced() {
        let data = |v: i32| {
            UiChunk::Data(DataChunk {
                kind: "data-progress".into(),
                id: Some("p".into()),
                data: json!(v),
                transient: None,
            })
        };
        let message = fold(&[data(1), data(2)]);
        assert_eq!(message.parts.len(), 1);
        assert_eq!(
            message.parts[0],
            UiPart::Data(DataPart { kind: "data-progress".into(), id: Some("p".into()), data: json!(2) })
        );
    }

    #[test]
    fn metadata_merges_deeply() {
        let merged = merge_objects(json!({"a": {"x": 1}, "b": 1}), &json!({"a": {"y": 2}, "b": 3}));
        assert_eq!(merged, json!({"a": {"x": 1, "y": 2}, "b": 3}));
    }
}
