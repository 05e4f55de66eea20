//! [`PartWriter`]: turns model output into UI chunks with part ids a snapshot reader can
//! rebuild.
//!
//! An open text part is `t<index>` and an open reasoning part `r<index>`, where index is
//! the part's position in the message (a `step-start` and every tool part take a position
//! too). The UI relies on this to continue a part after reattaching, and a continued
//! reply numbers its new parts after the ones it kept.

use protocol::UiChunk;
use serde_json::{Value, json};

#[derive(Default)]
pub struct PartWriter {
    /// How many parts the message has (positions taken so far).
    parts: usize,
    open_text: Option<String>,
    open_reasoning: Option<String>,
    step_open: bool,
    /// Chunks written, for the turn's span.
    pub chunks: u64,
}

impl PartWriter {
    pub fn new(part_offset: usize) -> Self {
        Self { parts: part_offset, ..Self::default() }
    }

    pub fn start_step(&mut self) -> UiChunk {
        self.parts += 1;
        self.step_open = true;
        self.chunks += 1;
        UiChunk::StartStep
    }

    /// Closes open parts and the step.
    pub fn finish_step(&mut self) -> Vec<UiChunk> {
        let mut out = self.close_open_parts();
        if self.step_open {
            self.step_open = false;
            out.push(UiChunk::FinishStep);
            self.chunks += 1;
        }
        out
    }

    pub fn text(&mut self, delta: String) -> Vec<UiChunk> {
        let mut out = Vec::with_capacity(2);
        if let Some(id) = self.open_reasoning.take() {
            out.push(UiChunk::ReasoningEnd { id, provider_metadata: None });
        }
        let id = match &self.open_text {
            Some(id) => id.clone(),
            None => {
                let id = format!("t{}", self.parts);
                self.parts += 1;
                self.open_text = Some(id.clone());
                out.push(UiChunk::TextStart { id: id.clone() });
                id
            }
        };
        out.push(UiChunk::TextDelta { id, delta });
        self.chunks += out.len() as u64;
        out
    }

    pub fn reasoning(&mut self, delta: String) -> Vec<UiChunk> {
        let mut out = Vec::with_capacity(2);
        if let Some(id) = self.open_text.take() {
            out.push(UiChunk::TextEnd { id });
        }
        let id = match &self.open_reasoning {
            Some(id) => id.clone(),
            None => {
                let id = self.new_reasoning_id();
                self.open_reasoning = Some(id.clone());
                out.push(UiChunk::ReasoningStart { id: id.clone(), provider_metadata: None });
                id
            }
        };
        out.push(UiChunk::ReasoningDelta { id, delta });
        self.chunks += out.len() as u64;
        out
    }

    /// Ends the open reasoning with the provider's signature for it. With no reasoning
    /// open (Gemini signs calls even when it shows no thoughts), an empty reasoning part
    /// carries the signature.
    pub fn signature(&mut self, format: &str, signature: String) -> Vec<UiChunk> {
        self.signed_reasoning(json!({ format: { "signature": signature } }))
    }

    /// Reasoning the provider encrypted: an empty part holding the data to send back.
    pub fn redacted(&mut self, format: &str, data: String) -> Vec<UiChunk> {
        let mut out = self.close_open_parts();
        let id = self.new_reasoning_id();
        let metadata = json!({ format: { "redactedData": data } });
        out.push(UiChunk::ReasoningStart { id: id.clone(), provider_metadata: Some(metadata) });
        out.push(UiChunk::ReasoningEnd { id, provider_metadata: None });
        self.chunks += out.len() as u64;
        out
    }

    fn signed_reasoning(&mut self, metadata: Value) -> Vec<UiChunk> {
        let mut out = Vec::with_capacity(2);
        if let Some(id) = self.open_text.take() {
            out.push(UiChunk::TextEnd { id });
        }
        match self.open_reasoning.take() {
            Some(id) => out.push(UiChunk::ReasoningEnd { id, provider_metadata: Some(metadata) }),
            None => {
                let id = self.new_reasoning_id();
                out.push(UiChunk::ReasoningStart { id: id.clone(), provider_metadata: None });
                out.push(UiChunk::ReasoningEnd { id, provider_metadata: Some(metadata) });
            }
        }
        self.chunks += out.len() as u64;
        out
    }

    fn new_reasoning_id(&mut self) -> String {
        let id = format!("r{}", self.parts);
        self.parts += 1;
        id
    }

    /// A tool part begins: open text and reasoning end first.
    pub fn tool_start(&mut self, tool_call_id: String, tool_name: String) -> Vec<UiChunk> {
        let mut out = self.close_open_parts();
        self.parts += 1;
        out.push(UiChunk::ToolInputStart { tool_call_id, tool_name, dynamic: Some(true) });
        self.chunks += 1;
        out
    }

    /// A chunk that does not open a part (tool input/output updates, metadata).
    pub fn plain(&mut self, chunk: UiChunk) -> UiChunk {
        self.chunks += 1;
        chunk
    }

    /// A `data-*` part that takes a position (e.g. `data-error`).
    pub fn data(&mut self, chunk: UiChunk) -> Vec<UiChunk> {
        let mut out = self.close_open_parts();
        self.parts += 1;
        self.chunks += 1;
        out.push(chunk);
        out
    }

    pub fn close_open_parts(&mut self) -> Vec<UiChunk> {
        let mut out = Vec::new();
        if let Some(id) = self.open_reasoning.take() {
            out.push(UiChunk::ReasoningEnd { id, provider_metadata: None });
        }
        if let Some(id) = self.open_text.take() {
            out.push(UiChunk::TextEnd { id });
        }
        self.chunks += out.len() as u64;
        out
    }
}
