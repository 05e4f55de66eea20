//! A topic as Markdown: the conversation as shown, one heading per message, reasoning and
//! tool calls folded in `<details>`, attachments named (never inlined).

use std::fmt::Write;

use protocol::api::{StoredMessage, Topic};
use protocol::{MessageRole, UiPart};
use serde_json::Value;

use super::render::{Attachment, speaker, tool_summary, when};

/// Appends the topic to `out`.
pub(crate) fn write_topic(out: &mut String, topic: &Topic, path: &[StoredMessage]) {
    let _ = writeln!(out, "# {}\n", one_line(&topic.title));
    let _ = writeln!(
        out,
        "*Created {}. The conversation as shown; other versions and branches are kept in the JSON export.*\n",
        when(&topic.created_at)
    );
    for message in path {
        let _ = writeln!(out, "## {} · {}\n", speaker(message), when(&message.created_at));
        for part in &message.message.parts {
            write_part(out, message.message.role, part);
        }
    }
}

fn write_part(out: &mut String, role: MessageRole, part: &UiPart) {
    match part {
        UiPart::Text { text, .. } if !text.trim().is_empty() => {
            // A user's text is shown as typed; a reply's text is already Markdown.
            if role == MessageRole::User {
                let _ = writeln!(out, "{}\n", quote_free(text));
            } else {
                let _ = writeln!(out, "{}\n", text.trim_end());
            }
        }
        UiPart::Reasoning { text, .. } if !text.trim().is_empty() => {
            let _ = writeln!(out, "<details>\n<summary>Reasoning</summary>\n\n{}\n\n</details>\n", text.trim_end());
        }
        UiPart::DynamicTool { tool_name, state, input, output, error_text, .. } => {
            let _ =
                writeln!(out, "<details>\n<summary>{}</summary>\n", escape_inline(&tool_summary(tool_name, *state)));
            if let Some(input) = input {
                let _ = writeln!(out, "Input:\n\n{}", fenced(&pretty(input), "json"));
            }
            if let Some(output) = output {
                let _ = writeln!(out, "Output:\n\n{}", fenced(&pretty(output), ""));
            }
            if let Some(error) = error_text {
                let _ = writeln!(out, "Error:\n\n{}", fenced(error, ""));
            }
            let _ = writeln!(out, "</details>\n");
        }
        UiPart::SourceUrl { url, title, .. } => {
            let label = title.as_deref().filter(|t| !t.is_empty()).unwrap_or(url);
            let _ = writeln!(out, "- Source: [{}](<{}>)\n", escape_inline(label), url.replace('>', "%3E"));
        }
        UiPart::File { media_type, url, filename } => {
            let file = Attachment::new(media_type, url, filename.as_deref());
            let _ = writeln!(out, "📎 *{}*\n", escape_inline(&file.describe()));
        }
        UiPart::Data(data) if data.kind == "data-error" => {
            let message = data.data.get("message").and_then(Value::as_str).unwrap_or("an error");
            let _ = writeln!(out, "> **Error:** {}\n", one_line(message));
        }
        _ => {}
    }
}

/// A user's text as a paragraph: Markdown in it is kept (users write Markdown too).
fn quote_free(text: &str) -> &str {
    text.trim_end()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pretty(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// A code block whose fence is longer than any run of backticks inside.
fn fenced(text: &str, language: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{language}\n{}\n{fence}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_the_backticks_inside() {
        assert_eq!(fenced("a ```` b", ""), "`````\na ```` b\n`````\n");
        assert_eq!(fenced("plain", "json"), "```json\nplain\n```\n");
    }
}
