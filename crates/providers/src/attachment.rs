//! Attachments a format cannot carry natively, spelled out as text the model can read.

use crate::language_model::Media;

/// A text document inline, named so the model can refer to it.
pub(crate) fn attachment_text(media: &Media, text: &str) -> String {
    let name = media.filename.as_deref().unwrap_or("attachment");
    format!("<file name=\"{name}\">\n{text}\n</file>")
}

/// What the model is told in place of an attachment its format cannot take.
pub(crate) fn unsupported_attachment(media: &Media) -> String {
    let name = media.filename.as_deref().unwrap_or("attachment");
    format!("[{name} ({}) was attached but cannot be sent to this model]", media.media_type)
}
