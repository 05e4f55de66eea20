//! Files attached to a message: checked (type, count, size) and stored inline as `file`
//! parts with `data:` URLs.

use base64::Engine as _;
use protocol::api::Attachment;
use protocol::{ApiError, UiPart};

/// Attachments: how many per message, and how large (decoded bytes).
const MAX_ATTACHMENTS: usize = 10;
pub const MAX_ATTACHMENT_BYTES: usize = 20 * 1024 * 1024;
pub const MAX_TOTAL_ATTACHMENT_BYTES: usize = 40 * 1024 * 1024;

/// Checks attached files and turns them into `file` parts (inline `data:` URLs).
pub(crate) fn attachment_parts(attachments: &[Attachment]) -> Result<Vec<UiPart>, ApiError> {
    if attachments.len() > MAX_ATTACHMENTS {
        return Err(ApiError::bad_request("attachments", format!("at most {MAX_ATTACHMENTS} files per message")));
    }
    let mut total = 0;
    let mut parts = Vec::with_capacity(attachments.len());
    for (index, attachment) in attachments.iter().enumerate() {
        let field = |name: &str| format!("attachments.{index}.{name}");
        let media_type = attachment.media_type.trim().to_ascii_lowercase();
        let supported = media_type.starts_with("image/")
            || media_type.starts_with("text/")
            || matches!(media_type.as_str(), "application/pdf" | "application/json");
        if !supported || !media_type.contains('/') || media_type.contains([';', ',', ' ']) {
            return Err(ApiError::bad_request(
                field("mediaType"),
                format!("{media_type} files cannot be attached; images, PDFs and text files can"),
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(attachment.data.trim())
            .map_err(|e| ApiError::bad_request(field("data"), format!("not valid base64 ({e})")))?;
        if bytes.len() > MAX_ATTACHMENT_BYTES {
            return Err(ApiError::bad_request(field("data"), format!("{} is larger than 20 MB", attachment.filename)));
        }
        total += bytes.len();
        if total > MAX_TOTAL_ATTACHMENT_BYTES {
            return Err(ApiError::bad_request("attachments", "the files add up to more than 40 MB"));
        }
        // A name, never a path.
        let filename = attachment.filename.rsplit(['/', '\\']).next().unwrap_or_default().trim();
        let filename = if filename.is_empty() { "attachment".to_owned() } else { filename.to_owned() };
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        parts.push(UiPart::File {
            url: format!("data:{media_type};base64,{data}"),
            media_type,
            filename: Some(filename),
        });
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_are_checked_and_stored_inline() {
        let png = Attachment {
            media_type: "image/PNG".into(),
            filename: "../../cat.png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let parts = attachment_parts(std::slice::from_ref(&png)).unwrap();
        assert_eq!(
            parts,
            vec![UiPart::File {
                media_type: "image/png".into(),
                url: "data:image/png;base64,iVBORw0KGgo=".into(),
                filename: Some("cat.png".into())
            }]
        );
        let exe = Attachment { media_type: "application/x-msdownload".into(), ..png.clone() };
        assert_eq!(attachment_parts(&[exe]).unwrap_err().field.as_deref(), Some("attachments.0.mediaType"));
        let garbage = Attachment { data: "not base64!".into(), ..png.clone() };
        assert_eq!(attachment_parts(&[garbage]).unwrap_err().field.as_deref(), Some("attachments.0.data"));
        let many = vec![png; MAX_ATTACHMENTS + 1];
        assert_eq!(attachment_parts(&many).unwrap_err().field.as_deref(), Some("attachments"));
    }
}
