//! JSON Schema checks: is a tool's input schema usable, and does a call's input pass it.

use serde_json::Value;

/// A compiled input schema.
pub struct InputSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputSchema")
    }
}

/// How many problems one message lists; the rest are counted.
const MAX_LISTED: usize = 5;

impl InputSchema {
    /// Compiles `schema`. It must be a JSON Schema describing an object (tool inputs are
    /// always objects); the error says what is wrong with it.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        let Some(object) = schema.as_object() else {
            return Err("the input schema is not a JSON object".to_owned());
        };
        match object.get("type") {
            None => {}
            Some(Value::String(kind)) if kind == "object" => {}
            Some(other) => return Err(format!("the input schema describes {other}, not an object")),
        }
        let validator = jsonschema::validator_for(schema).map_err(|e| format!("the input schema is invalid: {e}"))?;
        Ok(Self { validator })
    }

    /// Checks `input`; the error lists what does not fit, with JSON pointers, in words a
    /// model can act on.
    pub fn check(&self, input: &Value) -> Result<(), String> {
        let problems: Vec<String> = self
            .validator
            .iter_errors(input)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() { error.to_string() } else { format!("{at}: {error}") }
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        let mut message = problems.iter().take(MAX_LISTED).cloned().collect::<Vec<_>>().join("; ");
        if problems.len() > MAX_LISTED {
            message.push_str(&format!(" (and {} more)", problems.len() - MAX_LISTED));
        }
        Err(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_are_checked_against_the_schema_with_pointers() {
        let schema = InputSchema::compile(&json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["path"],
            "additionalProperties": false
        }))
        .unwrap();
        assert!(schema.check(&json!({"path": "a.txt", "limit": 3})).is_ok());
        let error = schema.check(&json!({"path": 5, "limit": 0})).unwrap_err();
        assert!(error.contains("/path") && error.contains("string"), "{error}");
        assert!(error.contains("/limit"), "{error}");
        let error = schema.check(&json!({"limit": 2, "extra": true})).unwrap_err();
        assert!(error.contains("path") && error.contains("extra"), "{error}");
    }

    #[test]
    fn unusable_schemas_are_refused_with_a_reason() {
        assert!(InputSchema::compile(&json!("object")).unwrap_err().contains("not a JSON object"));
        assert!(InputSchema::compile(&json!({"type": "array"})).unwrap_err().contains("not an object"));
        assert!(InputSchema::compile(&json!({"type": "object", "properties": {"a": {"type": 12}}})).is_err());
        assert!(InputSchema::compile(&json!({})).is_ok());
    }
}
