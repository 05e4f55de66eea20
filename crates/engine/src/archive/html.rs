//! A topic as one self-contained HTML page: inline CSS, no script, no remote resource
//! (a Content-Security-Policy says so to the browser), every text escaped.

use std::fmt::Write;

use protocol::api::{StoredMessage, Topic};
use protocol::{MessageRole, UiPart};
use serde_json::Value;

use super::render::{Attachment, speaker, tool_summary, when};

const STYLE: &str = "\
body{font:15px/1.55 system-ui,-apple-system,'Segoe UI',sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}\
h1{font-size:1.5rem;margin-bottom:.25rem}\
.note{color:#666;font-size:.85rem;margin-bottom:2rem}\
section.topic{margin-bottom:3rem}\
article{border-top:1px solid #e5e5ea;padding:.75rem 0}\
article.user{background:#f5f7fb;padding:.75rem 1rem;border-radius:8px;border-top:none;margin:.75rem 0}\
header{font-weight:600;font-size:.85rem;color:#444;margin-bottom:.35rem}\
header time{font-weight:400;color:#888;margin-left:.5rem}\
.text{white-space:pre-wrap;overflow-wrap:anywhere}\
details{margin:.5rem 0;border:1px solid #e5e5ea;border-radius:6px;padding:.35rem .6rem;background:#fafafa}\
summary{cursor:pointer;color:#555;font-size:.85rem}\
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f0f0f3;padding:.5rem;border-radius:4px;font-size:.8rem}\
.file,.source{font-size:.85rem;color:#555}\
.error{color:#b00020}\
@media (prefers-color-scheme:dark){body{background:#1c1c1e;color:#eee}article.user{background:#2c2c30}details{background:#242427;border-color:#3a3a3d}pre{background:#2f2f33}header{color:#ccc}}";

/// A page holding the given topics (one section each).
pub(crate) fn page(title: &str, topics: &[(Topic, Vec<StoredMessage>)]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    for (topic, path) in topics {
        write_topic(&mut out, topic, path);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn write_topic(out: &mut String, topic: &Topic, path: &[StoredMessage]) {
    let _ = writeln!(out, "<section class=\"topic\">\n<h1>{}</h1>", escape(&topic.title));
    let _ = writeln!(
        out,
        "<p class=\"note\">Created {}. The conversation as shown; other versions and branches are kept in the JSON export.</p>",
        escape(&when(&topic.created_at))
    );
    for message in path {
        let class = if message.message.role == MessageRole::User { "user" } else { "assistant" };
        let _ = writeln!(
            out,
            "<article class=\"{class}\">\n<header>{}<time>{}</time></header>",
            escape(&speaker(message)),
            escape(&when(&message.created_at))
        );
        for part in &message.message.parts {
            write_part(out, part);
        }
        out.push_str("</article>\n");
    }
    out.push_str("</section>\n");
}

fn write_part(out: &mut String, part: &UiPart) {
    match part {
        UiPart::Text { text, .. } if !text.trim().is_empty() => {
            let _ = writeln!(out, "<div class=\"text\">{}</div>", escape(text.trim_end()));
        }
        UiPart::Reasoning { text, .. } if !text.trim().is_empty() => {
            let _ = writeln!(
                out,
                "<details><summary>Reasoning</summary><div class=\"text\">{}</div></details>",
                escape(text.trim_end())
            );
        }
        UiPart::DynamicTool { tool_name, state, input, output, error_text, .. } => {
            let _ = write!(out, "<details><summary>{}</summary>", escape(&tool_summary(tool_name, *state)));
            if let Some(input) = input {
                let _ = write!(out, "<div>Input</div><pre>{}</pre>", escape(&pretty(input)));
            }
            if let Some(output) = output {
                let _ = write!(out, "<div>Output</div><pre>{}</pre>", escape(&pretty(output)));
            }
            if let Some(error) = error_text {
                let _ = write!(out, "<div class=\"error\">Error</div><pre>{}</pre>", escape(error));
            }
            out.push_str("</details>\n");
        }
        UiPart::SourceUrl { url, title, .. } => {
            // Shown as text, not a link: the page makes no request of its own.
            let label = title.as_deref().filter(|t| !t.is_empty()).unwrap_or(url);
            let _ = writeln!(out, "<div class=\"source\">Source: {} ({})</div>", escape(label), escape(url));
        }
        UiPart::File { media_type, url, filename } => {
            let file = Attachment::new(media_type, url, filename.as_deref());
            let _ = writeln!(out, "<div class=\"file\">📎 {}</div>", escape(&file.describe()));
        }
        UiPart::Data(data) if data.kind == "data-error" => {
            let message = data.data.get("message").and_then(Value::as_str).unwrap_or("an error");
            let _ = writeln!(out, "<div class=\"error\">Error: {}</div>", escape(message));
        }
        _ => {}
    }
}

fn pretty(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// Text as HTML text or attribute content.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }
}
