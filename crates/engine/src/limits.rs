//! How long the text fields users name and describe things with may be.
//!
//! Every one is listed (and repeated in `docs/api.md`): a name shows in a list, so a
//! megabyte in one makes every list that holds it a megabyte. Lengths are counted in
//! characters (Unicode scalar values) after trimming.

use protocol::ApiError;

/// Topic and agent-session titles.
pub(crate) const TITLE: usize = 200;
/// Provider, assistant and MCP server names.
pub(crate) const NAME: usize = 100;
/// A model's name (a provider's models and default model, an agent session's model).
pub(crate) const MODEL_NAME: usize = 200;
/// How many models one provider may list.
pub(crate) const MODELS: usize = 1000;
/// An assistant's system prompt.
pub(crate) const SYSTEM_PROMPT: usize = 100_000;

/// `value` if it has at most `max` characters, else a `bad_request` on `field` that says
/// the limit.
pub(crate) fn at_most<'a>(field: &str, value: &'a str, max: usize) -> Result<&'a str, ApiError> {
    let chars = value.chars().count();
    if chars > max {
        Err(ApiError::bad_request(field, format!("at most {max} characters (this one has {chars})")))
    } else {
        Ok(value)
    }
}

/// `value` trimmed, unless that leaves nothing: then a `bad_request` on `field`.
pub(crate) fn required<'a>(field: &str, value: &'a str) -> Result<&'a str, ApiError> {
    let value = value.trim();
    if value.is_empty() { Err(ApiError::bad_request(field, "must not be empty")) } else { Ok(value) }
}
