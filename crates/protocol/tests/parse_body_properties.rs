//! `parse_body` reads every request body a client sends. Whatever the bytes, parsing them
//! the way `colloquy serve` does (JSON, then the operation's request type) never panics,
//! and a refusal names a field and says what is wrong in a message bounded by the body's
//! size. Bodies are random bytes, and random JSON built from the requests' own field
//! names (so parsing gets past the first field), serialized whole or cut short.
//!
//! `PROPTEST_CASES=100000 cargo nextest run -p colloquy-protocol -E 'test(any_body)'`
//! runs longer.

use colloquy_protocol::api::{
    AssistantInput, ProviderInput, StreamAttachRequest, StreamOpenRequest, ToolApprovalRespond, ToolRuleInput,
    UpdateTopic,
};
use colloquy_protocol::mcp::McpServerInput;
use colloquy_protocol::{ApiError, ErrorKind, parse_body};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Field names of the request types above, and a few of their values' shapes.
const KEYS: &[&str] = &[
    "topicId",
    "text",
    "messageId",
    "model",
    "models",
    "attachments",
    "providerId",
    "mediaType",
    "filename",
    "data",
    "after",
    "executionId",
    "seq",
    "name",
    "format",
    "baseUrl",
    "apiKey",
    "defaultModel",
    "capabilities",
    "tools",
    "reasoning",
    "vision",
    "approvalId",
    "decision",
    "scope",
    "reason",
    "updatedInput",
    "tool",
    "conditions",
    "pointer",
    "op",
    "value",
    "kind",
    "expiresAt",
    "systemPrompt",
    "maxToolCalls",
    "workspace",
    "id",
    "title",
    "assistantId",
    "transport",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "enabled",
    "trustReadOnly",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![3 => proptest::sample::select(KEYS).prop_map(str::to_owned), 1 => "\\PC{0,12}"]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        "\\PC{0,24}".prop_map(Value::String),
        proptest::sample::select(&["approve", "deny", "once", "topic", "global", "openai_chat", "stdio", "equals"][..])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8).prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// A body: random bytes, or random JSON (an object most of the time), possibly cut short.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        (json(), any::<bool>(), any::<proptest::sample::Index>()).prop_map(|(value, cut, at)| {
            let value = match value {
                object @ Value::Object(_) => object,
                other => serde_json::json!({ "topicId": "t", "text": other }),
            };
            let mut bytes = serde_json::to_vec(&value).unwrap();
            if cut {
                bytes.truncate(at.index(bytes.len() + 1));
            }
            bytes
        }),
    ]
}

/// What the server does with a body for one operation.
fn parse_as<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request("body", format!("not valid JSON: {e}")))?;
    parse_body(value)
}

fn refusal_is_bounded<T: DeserializeOwned>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Err(err) = parse_as::<T>(bytes) {
        prop_assert_eq!(err.kind, ErrorKind::BadRequest);
        let field = err.field.as_deref().unwrap_or_default();
        prop_assert!(!field.is_empty(), "a refusal names a field: {:?}", err);
        prop_assert!(err.message.starts_with(field), "the message says which field: {:?}", err);
        // The message may quote the body (an unknown field's name), never more than that.
        prop_assert!(
            err.message.len() <= 2 * bytes.len() + 512,
            "a {}-byte body gave a {}-byte message",
            bytes.len(),
            err.message.len()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_body_is_parsed_or_refused_with_a_named_field_never_a_panic(bytes in body()) {
        refusal_is_bounded::<StreamOpenRequest>(&bytes)?;
        refusal_is_bounded::<StreamAttachRequest>(&bytes)?;
        refusal_is_bounded::<ProviderInput>(&bytes)?;
        refusal_is_bounded::<ToolApprovalRespond>(&bytes)?;
        refusal_is_bounded::<ToolRuleInput>(&bytes)?;
        refusal_is_bounded::<AssistantInput>(&bytes)?;
        refusal_is_bounded::<McpServerInput>(&bytes)?;
        refusal_is_bounded::<UpdateTopic>(&bytes)?;
    }
}
