//! What a storage failure looks like to the UI: the [`ApiError`] every operation returns.

use protocol::ApiError;

use crate::{StoreError, Unusable};

/// `ApiError::code` when the database file is damaged.
pub const DATABASE_DAMAGED: &str = "database_damaged";
/// `ApiError::code` when the database file was written by a newer version.
pub const DATABASE_NEWER: &str = "database_newer";

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound { what, id } => ApiError::not_found(what, id),
            StoreError::Changed { .. } => ApiError::conflict(format!("{err}; look at it again")),
            StoreError::Refused(message) => ApiError::conflict(message),
            StoreError::BadQuery { field, message } => ApiError::bad_request(field, message),
            StoreError::Invalid(message) => ApiError::new(protocol::ErrorKind::BadRequest, message),
            // The file itself cannot be used: the caller may offer to move it aside.
            StoreError::Unusable { ref problem, .. } => {
                let code = match problem {
                    Unusable::Damaged(_) => DATABASE_DAMAGED,
                    Unusable::Newer { .. } => DATABASE_NEWER,
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
}
