//! Mapping inner errors to the [`ApiError`] the UI sees.

use protocol::{ApiError, ErrorKind};
use store::StoreError;
use streams::StreamError;

/// `ApiError::code` when the database file is damaged.
pub const DATABASE_DAMAGED: &str = "database_damaged";
/// `ApiError::code` when the database file was written by a newer version.
pub const DATABASE_NEWER: &str = "database_newer";

pub fn store_error(err: StoreError) -> ApiError {
    match err {
        StoreError::NotFound { what, id } => ApiError::not_found(what, id),
        StoreError::Changed { .. } => ApiError::conflict(format!("{err}; look at it again")),
        // The file itself cannot be used: the caller may offer to move it aside.
        StoreError::Unusable { ref problem, .. } => {
            let code = match problem {
                store::Unusable::Damaged(_) => DATABASE_DAMAGED,
                store::Unusable::Newer { .. } => DATABASE_NEWER,
            };
            tracing::error!(error = %err, "the database cannot be opened");
            let message = format!("{err}. Nothing was changed in it; Colloquy never deletes it.");
            ApiError { code: Some(code.to_owned()), ..ApiError::internal(message) }
        }
        // Said in words, and worth trying again: writing works as soon as there is space.
        StoreError::DiskFull => {
            tracing::error!(error = %err, "storage failure");
            ApiError { retryable: true, code: Some("disk_full".to_owned()), ..ApiError::internal(err.to_string()) }
        }
        other => {
            tracing::error!(error = %other, "storage failure");
            ApiError::internal(other.to_string())
        }
    }
}

pub(crate) fn stream_error(err: StreamError) -> ApiError {
    match err {
        StreamError::ModelInTurn(model) => {
            ApiError::conflict(format!("{} is already answering in this turn", model.model))
        }
        StreamError::Busy | StreamError::ReplyRunning | StreamError::ReplyChanged => {
            ApiError::conflict(err.to_string())
        }
        StreamError::Store(err) => store_error(err),
        StreamError::ShuttingDown => {
            ApiError { kind: ErrorKind::Internal, message: err.to_string(), retryable: true, field: None, code: None }
        }
    }
}
