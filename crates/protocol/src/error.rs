//! The error shape that crosses every boundary to the UI: `{ kind, message, retryable }`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What went wrong, in terms the caller can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request was malformed; `field` names what was wrong.
    BadRequest,
    /// The named topic, message or provider does not exist.
    NotFound,
    /// The request conflicts with current state (e.g. the topic is already streaming).
    Conflict,
    /// Missing or wrong bearer token (server mode only).
    Unauthorized,
    /// The model provider failed; the message says how.
    Provider,
    /// A bug or an environment problem on our side.
    Internal,
}

/// An error as the UI sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
    pub retryable: bool,
    /// For `bad_request`: the offending field, as a dotted path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
    /// A finer classification within `kind`; for `provider` errors what the provider's
    /// failure was: `auth`, `rate_limit`, `overloaded`, `context_too_long`,
    /// `content_filtered`, `network`, `server`, `bad_response`, `invalid_request`, `timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
}

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), retryable: false, field: None, code: None }
    }

    pub fn bad_request(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let message = message.into();
        Self {
            kind: ErrorKind::BadRequest,
            message: format!("{field}: {message}"),
            retryable: false,
            field: Some(field),
            code: None,
        }
    }

    pub fn not_found(what: &str, id: impl std::fmt::Display) -> Self {
        Self::new(ErrorKind::NotFound, format!("{what} {id} not found"))
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Turns a serde error from an untrusted request body into a `bad_request` that names
    /// the field serde choked on, when it can tell.
    pub fn from_body_error(err: &serde_json::Error) -> Self {
        let text = err.to_string();
        let field = field_from_serde_message(&text).unwrap_or_else(|| "body".to_owned());
        Self {
            kind: ErrorKind::BadRequest,
            message: format!("invalid request: {text}"),
            retryable: false,
            field: Some(field),
            code: None,
        }
    }
}

/// serde_json words its errors as "missing field `x`" or "unknown field `x`" or
/// "invalid type: ... expected ..."; pick out the backticked name when there is one.
fn field_from_serde_message(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let end = start + text[start..].find('`')?;
    Some(text[start..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_error_names_the_missing_field() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Body {
            topic_id: String,
        }
        let err = serde_json::from_str::<Body>("{}").unwrap_err();
        let api = ApiError::from_body_error(&err);
        assert_eq!(api.kind, ErrorKind::BadRequest);
        assert_eq!(api.field.as_deref(), Some("topic_id"));
        assert!(api.message.contains("topic_id"), "{}", api.message);
    }

    #[test]
    fn serializes_as_kind_message_retryable() {
        let json = serde_json::to_value(ApiError::not_found("topic", "t1")).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "not_found", "message": "topic t1 not found", "retryable": false}));
    }
}
