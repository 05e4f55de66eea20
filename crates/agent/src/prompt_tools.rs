//! Prompt-based tool calling, for models without native tools: the tool list goes into
//! the system prompt, the model writes `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
//! in its reply, and results come back in a user message as `<tool_result>` blocks.
//!
//! [`CallScanner`] reads calls out of the streamed text as it arrives, so the markup never
//! shows in the reply and each call becomes a tool part like a native one.

use providers::ToolSpec;
use serde_json::Value;

pub(crate) const OPEN: &str = "<tool_call>";
pub(crate) const CLOSE: &str = "</tool_call>";

/// The system prompt section that teaches the model the tools and the syntax.
pub(crate) fn system_section(tools: &[ToolSpec]) -> String {
    let mut out = String::from(
        "You can use tools. To call one, write a block exactly like this, with the arguments as a JSON object:\n\
         <tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {}}</tool_call>\n\
         You may write several blocks. After your calls, stop writing: the results arrive in the next \
         message as <tool_result name=\"…\" id=\"…\">…</tool_result> blocks. Never write a tool_result yourself.\n\n\
         Available tools:\n",
    );
    for tool in tools {
        out.push_str(&format!("- {}: {}\n  arguments schema: {}\n", tool.name, tool.description, tool.input_schema));
    }
    out
}

/// One call as the model wrote it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ScannedCall {
    /// Parsed: a name and an arguments object.
    Call { name: String, arguments: Value },
    /// Not a usable call; the raw text and what is wrong with it.
    Malformed { raw: String, error: String },
}

/// Something the scanner found in the text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scanned {
    Text(String),
    Call(ScannedCall),
}

/// Splits streamed text into visible text and tool calls. Text that could be the start of
/// `<tool_call>` is held back until the next delta shows what it is.
#[derive(Default)]
pub(crate) struct CallScanner {
    pending: String,
    in_call: bool,
}

impl CallScanner {
    pub(crate) fn push(&mut self, delta: &str) -> Vec<Scanned> {
        self.pending.push_str(delta);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(end) = self.pending.find(CLOSE) else { break };
                let raw: String = self.pending[..end].to_owned();
                self.pending.drain(..end + CLOSE.len());
                self.in_call = false;
                out.push(Scanned::Call(parse_call(&raw)));
            } else if let Some(start) = self.pending.find(OPEN) {
                if start > 0 {
                    out.push(Scanned::Text(self.pending[..start].to_owned()));
                }
                self.pending.drain(..start + OPEN.len());
                self.in_call = true;
            } else {
                // Keep back a tail that might be the beginning of `<tool_call>`.
                let keep = partial_prefix_len(&self.pending, OPEN);
                let emit = self.pending.len() - keep;
                if emit > 0 {
                    out.push(Scanned::Text(self.pending[..emit].to_owned()));
                    self.pending.drain(..emit);
                }
                break;
            }
        }
        out
    }

    /// The stream ended: held-back text is text after all; an unclosed call is malformed.
    pub(crate) fn finish(&mut self) -> Vec<Scanned> {
        let rest = std::mem::take(&mut self.pending);
        if self.in_call {
            self.in_call = false;
            return vec![Scanned::Call(ScannedCall::Malformed {
                error: format!("the call was not closed with {CLOSE}"),
                raw: rest,
            })];
        }
        if rest.is_empty() { Vec::new() } else { vec![Scanned::Text(rest)] }
    }
}

/// The length of the longest suffix of `text` that is a proper prefix of `marker`.
fn partial_prefix_len(text: &str, marker: &str) -> usize {
    (1..marker.len())
        .rev()
        .find(|&n| {
            text.len() >= n && text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

fn parse_call(raw: &str) -> ScannedCall {
    let malformed = |error: String| ScannedCall::Malformed { raw: raw.to_owned(), error };
    let value: Value = match serde_json::from_str(raw.trim()) {
        Ok(value) => value,
        Err(e) => return malformed(format!("the call is not valid JSON ({e})")),
    };
    let Some(name) = value.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
        return malformed("the call has no \"name\"".to_owned());
    };
    let arguments = value.get("arguments").cloned().unwrap_or(Value::Object(Default::default()));
    ScannedCall::Call { name: name.to_owned(), arguments }
}

/// A call as the model would have written it (for earlier turns in the prompt).
pub(crate) fn render_call(name: &str, arguments: &Value) -> String {
    format!("{OPEN}{}{CLOSE}", serde_json::json!({ "name": name, "arguments": arguments }))
}

/// A result block for the next user message.
pub(crate) fn render_result(name: &str, id: &str, text: &str, is_error: bool) -> String {
    let status = if is_error { " error=\"true\"" } else { "" };
    format!("<tool_result name=\"{name}\" id=\"{id}\"{status}>\n{text}\n</tool_result>")
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scan_all(deltas: &[&str]) -> Vec<Scanned> {
        let mut scanner = CallScanner::default();
        let mut out: Vec<Scanned> = deltas.iter().flat_map(|d| scanner.push(d)).collect();
        out.extend(scanner.finish());
        // Adjacent text pieces are one text for the reader.
        let mut merged: Vec<Scanned> = Vec::new();
        for item in out {
            match (merged.last_mut(), item) {
                (Some(Scanned::Text(prev)), Scanned::Text(next)) => prev.push_str(&next),
                (_, item) => merged.push(item),
            }
        }
        merged
    }

    #[test]
    fn calls_are_cut_out_of_text_however_the_stream_splits_them() {
        let text = "Let me look. <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call> Done <b>";
        let expected = vec![
            Scanned::Text("Let me look. ".into()),
            Scanned::Call(ScannedCall::Call { name: "read_file".into(), arguments: json!({"path": "a.txt"}) }),
            Scanned::Text(" Done <b>".into()),
        ];
        for split in 1..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(scan_all(&[a, b]), expected, "split at {split}");
        }
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(scan_all(&refs), expected);
    }

    #[test]
    fn bad_calls_are_reported_not_dropped() {
        assert_eq!(
            scan_all(&["<tool_call>{nope}</tool_call>"]),
            vec![Scanned::Call(ScannedCall::Malformed {
                raw: "{nope}".into(),
                error: "the call is not valid JSON (key must be a string at line 1 column 2)".into()
            })]
        );
        assert!(
            matches!(&scan_all(&["<tool_call>{\"arguments\": {}}</tool_call>"])[0], Scanned::Call(ScannedCall::Malformed { error, .. }) if error.contains("name"))
        );
        assert!(
            matches!(&scan_all(&["<tool_call>{\"name\": \"x\""])[0], Scanned::Call(ScannedCall::Malformed { error, .. }) if error.contains("not closed"))
        );
    }

    #[test]
    fn a_lone_angle_bracket_is_text() {
        assert_eq!(scan_all(&["a <", "b"]), vec![Scanned::Text("a <b".into())]);
        assert_eq!(scan_all(&["ends with <tool_"]), vec![Scanned::Text("ends with <tool_".into())]);
    }
}
