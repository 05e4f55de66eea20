//! Sampling settings (`ModelParams`): checking what a user asks for, and what one turn
//! sends once the topic's and its assistant's settings are merged.

use std::ops::RangeInclusive;

use protocol::ApiError;
use protocol::api::{ModelParams, ReasoningLevel};
use providers::{CompletionRequest, ReasoningEffort};

const TEMPERATURE: RangeInclusive<f32> = 0.0..=2.0;
const MAX_OUTPUT_TOKENS: RangeInclusive<u32> = 1..=1_000_000;

/// The settings if every one is within bounds; else a `bad_request` naming the field
/// (`{prefix}.temperature`, …) and its bounds.
pub(crate) fn checked(prefix: &str, params: ModelParams) -> Result<ModelParams, ApiError> {
    if let Some(temperature) = params.temperature
        && !TEMPERATURE.contains(&temperature)
    {
        return Err(ApiError::bad_request(
            format!("{prefix}.temperature"),
            format!("must be between 0 and 2 (was {temperature})"),
        ));
    }
    if let Some(top_p) = params.top_p
        && !(top_p > 0.0 && top_p <= 1.0)
    {
        return Err(ApiError::bad_request(
            format!("{prefix}.topP"),
            format!("must be above 0 and at most 1 (was {top_p})"),
        ));
    }
    if let Some(tokens) = params.max_output_tokens
        && !MAX_OUTPUT_TOKENS.contains(&tokens)
    {
        return Err(ApiError::bad_request(
            format!("{prefix}.maxOutputTokens"),
            format!("must be between 1 and 1000000 (was {tokens})"),
        ));
    }
    Ok(params)
}

/// Puts `params` into a completion request for a model that can (`reasoning`) or cannot
/// reason. A reasoning model thinks at medium effort unless told otherwise; a model
/// without the capability is sent no effort, whatever was chosen (its API would refuse it).
pub(crate) fn apply(params: ModelParams, reasoning: bool, request: &mut CompletionRequest) {
    request.temperature = params.temperature;
    request.top_p = params.top_p;
    request.max_tokens = params.max_output_tokens;
    request.reasoning = match (reasoning, params.reasoning_effort) {
        (false, _) | (true, Some(ReasoningLevel::Off)) => None,
        (true, Some(ReasoningLevel::Low)) => Some(ReasoningEffort::Low),
        (true, None | Some(ReasoningLevel::Medium)) => Some(ReasoningEffort::Medium),
        (true, Some(ReasoningLevel::High)) => Some(ReasoningEffort::High),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_bounds_are_refused_with_the_field_named() {
        let bad = |params: ModelParams| checked("params", params).unwrap_err().field;
        assert_eq!(
            bad(ModelParams { temperature: Some(2.5), ..Default::default() }).as_deref(),
            Some("params.temperature")
        );
        assert_eq!(
            bad(ModelParams { temperature: Some(f32::NAN), ..Default::default() }).as_deref(),
            Some("params.temperature")
        );
        assert_eq!(bad(ModelParams { top_p: Some(0.0), ..Default::default() }).as_deref(), Some("params.topP"));
        assert_eq!(
            bad(ModelParams { max_output_tokens: Some(0), ..Default::default() }).as_deref(),
            Some("params.maxOutputTokens")
        );
        let fine = ModelParams {
            temperature: Some(0.0),
            top_p: Some(1.0),
            max_output_tokens: Some(1),
            reasoning_effort: None,
        };
        assert_eq!(checked("params", fine).unwrap(), fine);
    }

    #[test]
    fn only_a_reasoning_model_is_sent_an_effort() {
        let mut request = CompletionRequest::default();
        let params =
            ModelParams { temperature: Some(0.3), reasoning_effort: Some(ReasoningLevel::High), ..Default::default() };
        apply(params, false, &mut request);
        assert_eq!((request.temperature, request.reasoning), (Some(0.3), None));
        apply(params, true, &mut request);
        assert_eq!(request.reasoning, Some(ReasoningEffort::High));
        apply(ModelParams::default(), true, &mut request);
        assert_eq!((request.temperature, request.reasoning), (None, Some(ReasoningEffort::Medium)));
        apply(ModelParams { reasoning_effort: Some(ReasoningLevel::Off), ..Default::default() }, true, &mut request);
        assert_eq!(request.reasoning, None);
    }
}
