//! Mapping inner errors to the [`ApiError`] the UI sees.

use protocol::{ApiError, ErrorKind};
use store::StoreError;
use streams::StreamError;

pub fn store_error(err: StoreError) -> ApiError {
    match err {
        StoreError::NotFound { what, id } => ApiError::not_found(what, id),
        StoreError::Changed { .. } => ApiError::conflict(format!("{err}; look at it again")),
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
