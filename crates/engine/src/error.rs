//! Mapping the stream manager's errors to the [`ApiError`] the UI sees (a storage
//! failure maps through `From<StoreError> for ApiError`, in the store crate).

use protocol::{ApiError, ErrorKind};
use streams::StreamError;

pub(crate) fn stream_error(err: StreamError) -> ApiError {
    match err {
        StreamError::ModelInTurn(model) => {
            ApiError::conflict(format!("{} is already answering in this turn", model.model))
        }
        StreamError::Busy | StreamError::ReplyRunning | StreamError::ReplyChanged => {
            ApiError::conflict(err.to_string())
        }
        StreamError::Store(err) => err.into(),
        StreamError::ShuttingDown => {
            ApiError { kind: ErrorKind::Internal, message: err.to_string(), retryable: true, field: None, code: None }
        }
    }
}
