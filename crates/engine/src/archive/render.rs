//! What Markdown and HTML exports say the same way: who speaks, when, a tool call's
//! summary, an attachment's description.

use protocol::MessageRole;
use protocol::api::StoredMessage;
use protocol::message::ToolState;

/// "You", or "Assistant (model)".
pub(crate) fn speaker(message: &StoredMessage) -> String {
    match message.message.role {
        MessageRole::User => "You".to_owned(),
        MessageRole::System => "System".to_owned(),
        MessageRole::Assistant => match &message.model {
            Some(model) => format!("Assistant ({})", model.model),
            None => "Assistant".to_owned(),
        },
    }
}

/// An RFC 3339 time as `2026-11-25 10:04 UTC` (as given when it does not look like one).
pub(crate) fn when(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(time)) if rfc3339.as_bytes().get(10) == Some(&b'T') => format!("{day} {time} UTC"),
        _ => rfc3339.to_owned(),
    }
}

pub(crate) fn tool_summary(name: &str, state: ToolState) -> String {
    let outcome = match state {
        ToolState::OutputAvailable => "done",
        ToolState::OutputError => "failed",
        ToolState::OutputDenied => "denied",
        ToolState::ApprovalRequested => "waiting for approval",
        ToolState::InputStreaming | ToolState::InputAvailable | ToolState::ApprovalResponded => "not finished",
    };
    format!("Tool call: {name} ({outcome})")
}

/// A file part, described by name and type (its bytes stay in the JSON export).
pub(crate) struct Attachment<'a> {
    media_type: &'a str,
    url: &'a str,
    filename: Option<&'a str>,
}

impl<'a> Attachment<'a> {
    pub(crate) fn new(media_type: &'a str, url: &'a str, filename: Option<&'a str>) -> Self {
        Self { media_type, url, filename }
    }

    pub(crate) fn describe(&self) -> String {
        let name = self.filename.filter(|n| !n.trim().is_empty());
        match (name, self.url.starts_with("data:")) {
            (Some(name), true) => format!("Attachment: {name} ({}, {})", self.media_type, size(self.url)),
            (Some(name), false) => format!("Attachment: {name} ({}, {})", self.media_type, self.url),
            (None, true) => format!("Attachment ({}, {})", self.media_type, size(self.url)),
            (None, false) => format!("Attachment: {}", self.url),
        }
    }
}

/// The decoded size of a base64 `data:` URL, in words.
fn size(data_url: &str) -> String {
    let data = data_url.split_once(',').map(|(_, data)| data.trim_end()).unwrap_or("");
    let padding = data.chars().rev().take_while(|&c| c == '=').count();
    let bytes = (data.len() / 4 * 3).saturating_sub(padding);
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{} KB", bytes / 1024),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_day_and_minute() {
        assert_eq!(when("2026-11-25T10:04:05.123Z"), "2026-11-25 10:04 UTC");
        assert_eq!(when("yesterday"), "yesterday");
    }
}
