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
}

/// Parses a request body, naming the offending field on failure as a dotted path
/// (`models.0.providerId`), whatever went wrong with it (missing, wrong type, unknown
/// variant). Nothing is parsed half: the error is all the caller gets.
pub fn parse_body<T: serde::de::DeserializeOwned>(body: serde_json::Value) -> Result<T, ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request("body", "the request must be a JSON object"));
    }
    serde_path_to_error::deserialize(body).map_err(|err| {
        let inner = err.inner().to_string();
        let mut path: Vec<String> = err
            .path()
            .iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        // A missing or unknown field is named by the message, one level below the path.
        if (inner.starts_with("missing field") || inner.starts_with("unknown field"))
            && let Some(name) = field_from_serde_message(&inner)
            && path.last() != Some(&name)
        {
            path.push(name);
        }
        // An empty key (`{"": 1}`) names nothing: the nearest named field above it does.
        if let Some(empty) = path.iter().position(String::is_empty) {
            path.truncate(empty);
        }
        let field = if path.is_empty() { "body".to_owned() } else { path.join(".") };
        ApiError {
            kind: ErrorKind::BadRequest,
            message: format!("{field}: {}", strip_position(&inner)),
            retryable: false,
            field: Some(field),
            code: None,
        }
    })
}

/// serde_json appends "at line 1 column 12", which means nothing for a parsed value.
fn strip_position(text: &str) -> &str {
    match text.rfind(" at line ") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// serde words its errors as "missing field `x`" or "unknown field `x`, expected …";
/// picks out the backticked name.
fn field_from_serde_message(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let end = start + text[start..].find('`')?;
    Some(text[start..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_bodies_name_the_field_at_any_depth() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Model {
            provider_id: String,
        }
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[allow(dead_code)]
        struct Body {
            decision: Decision,
            #[serde(default)]
            models: Vec<Model>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Decision {
            Approve,
        }
        let field = |body| parse_body::<Body>(body).unwrap_err().field.unwrap();
        assert_eq!(field(serde_json::json!({"decision": "maybe"})), "decision");
        assert_eq!(field(serde_json::json!({})), "decision");
        assert_eq!(
            field(serde_json::json!({"decision": "approve", "models": [{"providerId": 1}]})),
            "models.0.providerId"
        );
        assert_eq!(field(serde_json::json!({"decision": "approve", "models": [{}]})), "models.0.providerId");
        assert_eq!(field(serde_json::json!({"decision": "approve", "extra": 1})), "extra");
        assert_eq!(field(serde_json::json!([1])), "body");
        let err = parse_body::<Body>(serde_json::json!({"decision": "maybe"})).unwrap_err();
        assert!(err.message.starts_with("decision: unknown variant `maybe`"), "{}", err.message);
    }

    #[test]
    fn serializes_as_kind_message_retryable() {
        let json = serde_json::to_value(ApiError::not_found("topic", "t1")).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "not_found", "message": "topic t1 not found", "retryable": false}));
    }
}
