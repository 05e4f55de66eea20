//! `session/update` notifications → [`DriverEvent`]s: pure, tested on scripted updates.
//!
//! Message and thought chunks become text and reasoning (a switch between them closes
//! the open one); a tool call becomes a tool part named by its kind, whose input carries
//! the title, locations and raw input, and whose output (once completed or failed) carries
//! its content: text, each diff as a unified diff, each terminal by id; plan, available
//! commands and mode become events of their own. The user's own chunks (replayed by
//! `session/load`) are not ours to show again.

use std::collections::HashMap;

use agent_client_protocol as acp;
use protocol::tool::ToolOutput;
use serde_json::{Value, json};

use crate::driver::DriverEvent;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Open {
    Text,
    Thinking,
}

/// What the mapper remembers between updates: the open block, and every tool call as its
/// updates left it.
#[derive(Default)]
pub(crate) struct UpdateMapper {
    open: Option<Open>,
    calls: HashMap<String, acp::ToolCall>,
}

/// A tool call's kind in our words: what its tool part is named, and what rules match.
pub(crate) fn kind_name(kind: acp::ToolKind) -> &'static str {
    match kind {
        acp::ToolKind::Read => "read",
        acp::ToolKind::Edit => "edit",
        acp::ToolKind::Delete => "delete",
        acp::ToolKind::Move => "move",
        acp::ToolKind::Search => "search",
        acp::ToolKind::Execute => "execute",
        acp::ToolKind::Think => "think",
        acp::ToolKind::Fetch => "fetch",
        acp::ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

/// The input shown on a tool part and matched by rules: the title, the files it touches
/// and what the agent passed to its tool.
pub(crate) fn call_input(call: &acp::ToolCall) -> Value {
    let mut input = serde_json::Map::new();
    input.insert("title".into(), json!(call.title));
    if !call.locations.is_empty() {
        let locations: Vec<Value> = call
            .locations
            .iter()
            .map(|l| match l.line {
                Some(line) => json!({ "path": l.path.display().to_string(), "line": line }),
                None => json!({ "path": l.path.display().to_string() }),
            })
            .collect();
        input.insert("locations".into(), Value::Array(locations));
    }
    if let Some(raw) = &call.raw_input {
        input.insert("input".into(), raw.clone());
    }
    Value::Object(input)
}

/// A tool call's content as text: its text blocks, each diff as a unified diff, each
/// terminal by id.
pub(crate) fn content_text(content: &[acp::ToolCallContent], terminal: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = Vec::new();
    for item in content {
        match item {
            acp::ToolCallContent::Content(c) => out.push(block_text(&c.content)),
            acp::ToolCallContent::Diff(d) => {
                let shown = d.path.display().to_string();
                out.push(tools::builtin::diff(&shown, d.old_text.as_deref().unwrap_or(""), &d.new_text));
            }
            acp::ToolCallContent::Terminal(t) => {
                let id = t.terminal_id.to_string();
                out.push(terminal(&id).unwrap_or_else(|| format!("[terminal {id}]")));
            }
            _ => {}
        }
    }
    out.retain(|s| !s.is_empty());
    out.join("\n")
}

fn block_text(block: &acp::ContentBlock) -> String {
    match block {
        acp::ContentBlock::Text(t) => t.text.clone(),
        acp::ContentBlock::ResourceLink(link) => link.uri.clone(),
        acp::ContentBlock::Resource(_) => "[resource]".to_owned(),
        acp::ContentBlock::Image(_) => "[image]".to_owned(),
        acp::ContentBlock::Audio(_) => "[audio]".to_owned(),
        _ => String::new(),
    }
}

impl UpdateMapper {
    /// The tool call as its updates left it.
    pub(crate) fn call(&self, id: &str) -> Option<&acp::ToolCall> {
        self.calls.get(id)
    }

    /// The events of one update; `terminal` is the output of a terminal by id, for the
    /// result of a call that shows one.
    pub(crate) fn map(
        &mut self,
        update: acp::SessionUpdate,
        terminal: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match update {
            acp::SessionUpdate::AgentMessageChunk(chunk) => {
                let text = block_text(&chunk.content);
                if !text.is_empty() {
                    self.switch(Open::Text, &mut out);
                    out.push(DriverEvent::TextDelta { block: 0, text });
                }
            }
            acp::SessionUpdate::AgentThoughtChunk(chunk) => {
                let text = block_text(&chunk.content);
                if !text.is_empty() {
                    self.switch(Open::Thinking, &mut out);
                    out.push(DriverEvent::ThinkingDelta { block: 0, text });
                }
            }
            acp::SessionUpdate::UserMessageChunk(_) => {}
            acp::SessionUpdate::ToolCall(call) => {
                self.close(&mut out);
                let id = call.tool_call_id.to_string();
                self.calls.insert(id.clone(), call);
                self.show(&id, terminal, &mut out);
            }
            acp::SessionUpdate::ToolCallUpdate(update) => {
                self.close(&mut out);
                let id = update.tool_call_id.to_string();
                match self.calls.get_mut(&id) {
                    Some(call) => call.update(update.fields),
                    None => {
                        // An update for a call never announced: it is the announcement.
                        let title = update.fields.title.clone().unwrap_or_else(|| "tool call".to_owned());
                        let mut call = acp::ToolCall::new(update.tool_call_id.clone(), title);
                        call.update(update.fields);
                        self.calls.insert(id.clone(), call);
                    }
                }
                self.show(&id, terminal, &mut out);
            }
            acp::SessionUpdate::Plan(plan) => {
                self.close(&mut out);
                let entries = serde_json::to_value(&plan.entries).unwrap_or(Value::Null);
                out.push(DriverEvent::Plan { entries });
            }
            acp::SessionUpdate::AvailableCommandsUpdate(update) => {
                let commands = serde_json::to_value(&update.available_commands).unwrap_or(Value::Null);
                out.push(DriverEvent::Commands { commands });
            }
            acp::SessionUpdate::CurrentModeUpdate(update) => {
                out.push(DriverEvent::ModeChanged { mode: update.current_mode_id.to_string() });
            }
            other => tracing::debug!(update = ?other, "an ACP session update Colloquy does not show"),
        }
        out
    }

    /// The call's part, with its input as it is now, and its result once it has one.
    fn show(&self, id: &str, terminal: &dyn Fn(&str) -> Option<String>, out: &mut Vec<DriverEvent>) {
        let Some(call) = self.calls.get(id) else { return };
        out.push(DriverEvent::ToolUse {
            id: id.to_owned(),
            name: kind_name(call.kind).to_owned(),
            input: call_input(call),
        });
        let failed = call.status == acp::ToolCallStatus::Failed;
        if failed || call.status == acp::ToolCallStatus::Completed {
            let mut text = content_text(&call.content, terminal);
            if text.is_empty()
                && let Some(raw) = &call.raw_output
            {
                text = match raw {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
            }
            if text.is_empty() {
                text = if failed { "failed".to_owned() } else { "done".to_owned() };
            }
            let mut output = ToolOutput::text(text);
            output.is_error = failed;
            out.push(DriverEvent::ToolResult { id: id.to_owned(), output });
        }
    }

    fn switch(&mut self, to: Open, out: &mut Vec<DriverEvent>) {
        if self.open != Some(to) {
            self.close(out);
            self.open = Some(to);
        }
    }

    fn close(&mut self, out: &mut Vec<DriverEvent>) {
        if self.open.take().is_some() {
            out.push(DriverEvent::BlockStopped { block: 0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(value: Value) -> acp::SessionUpdate {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn chunks_tool_calls_and_plans_become_events_in_order() {
        let mut mapper = UpdateMapper::default();
        let mut events = Vec::new();
        for value in [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}),
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "replayed"}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.txt", "kind": "edit",
                   "status": "pending", "locations": [{"path": "/w/a.txt"}], "rawInput": {"path": "/w/a.txt"}}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                   "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}]}),
            json!({"sessionUpdate": "plan", "entries": [{"content": "step", "priority": "high", "status": "pending"}]}),
            json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),
        ] {
            events.extend(mapper.map(update(value), &|_| None));
        }
        let input = json!({"title": "Edit a.txt", "locations": [{"path": "/w/a.txt"}], "input": {"path": "/w/a.txt"}});
        assert_eq!(events[0], DriverEvent::ThinkingDelta { block: 0, text: "hmm".into() });
        assert_eq!(events[1], DriverEvent::BlockStopped { block: 0 });
        assert_eq!(events[2], DriverEvent::TextDelta { block: 0, text: "Hi".into() });
        assert_eq!(events[3], DriverEvent::BlockStopped { block: 0 });
        assert_eq!(events[4], DriverEvent::ToolUse { id: "t1".into(), name: "edit".into(), input: input.clone() });
        assert_eq!(events[5], DriverEvent::ToolUse { id: "t1".into(), name: "edit".into(), input });
        let DriverEvent::ToolResult { id, output } = &events[6] else { panic!("{:?}", events[6]) };
        assert_eq!(id, "t1");
        assert!(output.text_content().contains("-a\n+b"), "{}", output.text_content());
        assert!(matches!(&events[7], DriverEvent::Plan { entries } if entries[0]["content"] == "step"));
        assert_eq!(events[8], DriverEvent::ModeChanged { mode: "plan".into() });
        assert_eq!(events.len(), 9);
    }

    #[test]
    fn a_failed_call_is_an_error_and_an_unannounced_update_announces_it() {
        let mut mapper = UpdateMapper::default();
        let events = mapper.map(
            update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t9", "status": "failed",
                "content": [{"type": "content", "content": {"type": "text", "text": "no such file"}}]})),
            &|_| None,
        );
        assert!(matches!(&events[0], DriverEvent::ToolUse { id, name, .. } if id == "t9" && name == "other"));
        let DriverEvent::ToolResult { output, .. } = &events[1] else { panic!("{events:?}") };
        assert!(output.is_error);
        assert_eq!(output.text_content(), "no such file");
    }
}
