//! Timestamps of imported files, as the store writes them (RFC 3339, milliseconds, UTC).

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub(crate) fn now() -> String {
    store::now()
}

fn format(at: OffsetDateTime) -> Option<String> {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.to_offset(time::UtcOffset::UTC).format(&format).ok()
}

/// Seconds since the epoch (a float, as ChatGPT writes them).
pub(crate) fn from_epoch(value: &Value) -> Option<String> {
    let seconds = value.as_f64()?;
    if !seconds.is_finite() {
        return None;
    }
    // Milliseconds, rounded: the float's last digits are noise (1.25 reads 1.2499…).
    let nanos = (seconds * 1e3).round() as i128 * 1_000_000;
    format(OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()?)
}

/// An RFC 3339 string (as Claude.ai writes them), normalized.
pub(crate) fn from_rfc3339(value: &Value) -> Option<String> {
    format(OffsetDateTime::parse(value.as_str()?, &Rfc3339).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn epochs_and_offsets_become_utc_milliseconds() {
        assert_eq!(from_epoch(&json!(1700000000.5)).unwrap(), "2023-11-14T22:13:20.500Z");
        assert_eq!(from_rfc3339(&json!("2024-03-01T12:00:00.123456+02:00")).unwrap(), "2024-03-01T10:00:00.123Z");
        assert_eq!(from_epoch(&json!("soon")), None);
    }
}
