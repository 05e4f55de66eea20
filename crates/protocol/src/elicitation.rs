//! MCP elicitation: a server asks the user to fill in a form during one of its tool calls.
//!
//! The server's requested schema is read into an [`ElicitationForm`] (a flat list of
//! fields, the only shape MCP allows), shown as an [`ElicitationCard`] in the reply (a
//! `data-mcp-elicitation` part), and answered with [`ElicitationRespond`]; accepted
//! content is checked against the form ([`ElicitationForm::check`]) before it is sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

/// The kind of the reply part that shows an elicitation.
pub const ELICITATION_PART: &str = "data-mcp-elicitation";

/// The most fields a form may have, and the longest text a schema may give anywhere.
const MAX_FIELDS: usize = 64;
const MAX_TEXT: usize = 4000;

/// A form a server asks the user to fill in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationForm {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    /// In the order the server gave them.
    pub fields: Vec<ElicitationField>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationField {
    /// The key of the answer's content.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub required: bool,
    pub input: FieldInput,
}

/// What a field takes, with the server's limits and default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum FieldInput {
    Text {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        format: Option<TextFormat>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        min_length: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        max_length: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        default: Option<String>,
    },
    Number {
        /// Whole numbers only.
        integer: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        minimum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        maximum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        default: Option<f64>,
    },
    Boolean {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        default: Option<bool>,
    },
    /// One of the options.
    Choice {
        options: Vec<FieldOption>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        default: Option<String>,
    },
    /// Some of the options (a list of their values).
    MultiChoice {
        options: Vec<FieldOption>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        min_items: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        max_items: Option<u32>,
        #[serde(default)]
        default: Vec<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldOption {
    /// What the answer holds.
    pub value: String,
    /// What the user sees.
    pub label: String,
}

/// Where an elicitation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationState {
    /// Waiting for the user.
    Pending,
    Accepted,
    Declined,
    Cancelled,
    /// Nobody answered in time: the server was told `cancel`.
    Expired,
    /// The call that asked ended first (stopped, timed out, the server gave up, or
    /// Colloquy restarted).
    Withdrawn,
    /// Colloquy could not show the form (`problem` says why); the server was told so.
    Refused,
}

/// An elicitation as the reply shows it: the data of its `data-mcp-elicitation` part
/// (one part per elicitation, replaced as its state changes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCard {
    pub elicitation_id: String,
    /// The tool call during which the server asked.
    pub tool_call_id: String,
    pub server_name: String,
    /// What the server says it needs.
    pub message: String,
    /// `None` when the schema could not be read (then `problem` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub form: Option<ElicitationForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
    pub state: ElicitationState,
    /// What was sent, once accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub content: Option<Map<String, Value>>,
}

/// The user's answer to an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// Send the form's content.
    Accept,
    /// Say no; the server's call goes on without it.
    Decline,
    /// Dismiss the question.
    Cancel,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ElicitationRespond {
    pub elicitation_id: String,
    pub action: ElicitationAction,
    /// The form's values by field name, for `accept`; fields left empty are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitationForm {
    /// Reads a server's requested schema. An error says, in words meant for the server's
    /// author and the user alike, what does not fit a flat form.
    pub fn from_schema(schema: &Value) -> Result<Self, String> {
        let Some(object) = schema.as_object() else {
            return Err("the requested schema is not a JSON object".into());
        };
        match object.get("type") {
            Some(Value::String(kind)) if kind == "object" => {}
            _ => return Err("the requested schema must have `\"type\": \"object\"`".into()),
        }
        let properties = match object.get("properties") {
            None => Map::new(),
            Some(Value::Object(properties)) => properties.clone(),
            Some(_) => return Err("the requested schema's `properties` is not an object".into()),
        };
        if properties.len() > MAX_FIELDS {
            return Err(format!(
                "the requested schema has {} fields, more than the {MAX_FIELDS} a form may have",
                properties.len()
            ));
        }
        let required: Vec<String> = match object.get("required") {
            None => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|name| {
                    name.as_str().map(str::to_owned).ok_or("`required` lists something that is not a field name")
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("the requested schema's `required` is not a list".into()),
        };
        if let Some(unknown) = required.iter().find(|name| !properties.contains_key(*name)) {
            return Err(format!("`required` names `{unknown}`, which is not one of the schema's properties"));
        }
        let mut fields = Vec::with_capacity(properties.len());
        for (name, property) in &properties {
            let input = field_input(property).map_err(|why| format!("field `{}`: {why}", short(name)))?;
            fields.push(ElicitationField {
                name: name.clone(),
                title: text(property, "title"),
                description: text(property, "description"),
                required: required.contains(name),
                input,
            });
        }
        Ok(Self { title: text(schema, "title"), fields })
    }

    /// Checks accepted content against the form: every value of the right kind and
    /// within its limits, every required field present, no field the form lacks. The
    /// error names the field and what is wrong with it.
    pub fn check(&self, content: &Map<String, Value>) -> Result<(), String> {
        if let Some(unknown) = content.keys().find(|key| !self.fields.iter().any(|f| &f.name == *key)) {
            return Err(format!("`{}` is not a field of this form", short(unknown)));
        }
        for field in &self.fields {
            let label = field.title.as_deref().unwrap_or(&field.name);
            match content.get(&field.name) {
                None | Some(Value::Null) if field.required => return Err(format!("{label} is required")),
                None | Some(Value::Null) => {}
                Some(value) => check_value(&field.input, value).map_err(|why| format!("{label}: {why}"))?,
            }
        }
        Ok(())
    }
}

fn check_value(input: &FieldInput, value: &Value) -> Result<(), String> {
    match input {
        FieldInput::Text { format, min_length, max_length, .. } => {
            let Some(text) = value.as_str() else { return Err("must be text".into()) };
            let length = text.chars().count();
            if let Some(min) = min_length
                && length < *min as usize
            {
                return Err(format!("must be at least {min} characters long"));
            }
            if let Some(max) = max_length
                && length > *max as usize
            {
                return Err(format!("must be at most {max} characters long"));
            }
            match format {
                Some(TextFormat::Email) if !is_email(text) => {
                    Err("must be an email address, like name@example.com".into())
                }
                Some(TextFormat::Uri) if !is_uri(text) => Err("must be a URI, like https://example.com".into()),
                Some(TextFormat::Date) if !is_date(text) => Err("must be a date, like 2026-01-31".into()),
                Some(TextFormat::DateTime) if !is_date_time(text) => {
                    Err("must be a date and time, like 2026-01-31T09:30:00Z".into())
                }
                _ => Ok(()),
            }
        }
        FieldInput::Number { integer, minimum, maximum, .. } => {
            let Some(number) = value.as_f64() else { return Err("must be a number".into()) };
            if *integer && number.fract() != 0.0 {
                return Err("must be a whole number".into());
            }
            if let Some(min) = minimum
                && number < *min
            {
                return Err(format!("must be at least {min}"));
            }
            if let Some(max) = maximum
                && number > *max
            {
                return Err(format!("must be at most {max}"));
            }
            Ok(())
        }
        FieldInput::Boolean { .. } => value.is_boolean().then_some(()).ok_or_else(|| "must be true or false".into()),
        FieldInput::Choice { options, .. } => match value.as_str() {
            Some(chosen) if options.iter().any(|o| o.value == chosen) => Ok(()),
            _ => Err("must be one of the options".into()),
        },
        FieldInput::MultiChoice { options, min_items, max_items, .. } => {
            let Some(chosen) = value.as_array() else { return Err("must be a list of options".into()) };
            for (at, item) in chosen.iter().enumerate() {
                match item.as_str() {
                    Some(v) if options.iter().any(|o| o.value == v) => {}
                    _ => return Err("must hold only the options".into()),
                }
                if chosen[..at].contains(item) {
                    return Err("holds an option twice".into());
                }
            }
            if let Some(min) = min_items
                && chosen.len() < *min as usize
            {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = max_items
                && chosen.len() > *max as usize
            {
                return Err(format!("choose at most {max}"));
            }
            Ok(())
        }
    }
}

/// A property of the requested schema as a form input.
fn field_input(property: &Value) -> Result<FieldInput, String> {
    let Some(object) = property.as_object() else { return Err("is not a JSON object".into()) };
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "string" => {
            if let Some(options) = options(property)? {
                let default = text(property, "default").filter(|d| options.iter().any(|o| &o.value == d));
                return Ok(FieldInput::Choice { options, default });
            }
            let format = match object.get("format").and_then(Value::as_str) {
                None => None,
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                // Formats MCP does not list are taken as plain text.
                Some(_) => None,
            };
            Ok(FieldInput::Text {
                format,
                min_length: count(property, "minLength")?,
                max_length: count(property, "maxLength")?,
                default: text(property, "default"),
            })
        }
        "number" | "integer" => {
            let bound = |key: &str| match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => value.as_f64().map(Some).ok_or_else(|| format!("`{key}` is not a number")),
            };
            let (minimum, maximum) = (bound("minimum")?, bound("maximum")?);
            if let (Some(min), Some(max)) = (minimum, maximum)
                && min > max
            {
                return Err(format!("`minimum` ({min}) is above `maximum` ({max})"));
            }
            let default = object.get("default").and_then(Value::as_f64);
            Ok(FieldInput::Number { integer: kind == "integer", minimum, maximum, default })
        }
        "boolean" => Ok(FieldInput::Boolean { default: object.get("default").and_then(Value::as_bool) }),
        "array" => {
            let items = object.get("items").ok_or("a list field needs `items` giving its options")?;
            let options = options(items)?.ok_or("a list field's `items` must list its options (`enum` or `anyOf`)")?;
            let default = match object.get("default") {
                Some(Value::Array(values)) => values
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|v| options.iter().any(|o| o.value == *v))
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            Ok(FieldInput::MultiChoice {
                options,
                min_items: count(property, "minItems")?,
                max_items: count(property, "maxItems")?,
                default,
            })
        }
        "" => Err("has no `type`".into()),
        other => Err(format!(
            "is of type `{}`; a form field is a string, number, integer, boolean or a list of options",
            short(other)
        )),
    }
}

/// The options of an enum (`enum` with `enumNames`, or `oneOf`/`anyOf` of `const`s with
/// titles); `None` when the property is not an enum.
fn options(property: &Value) -> Result<Option<Vec<FieldOption>>, String> {
    if let Some(values) = property.get("enum") {
        let Some(values) = values.as_array() else { return Err("`enum` is not a list".into()) };
        let names = property.get("enumNames").and_then(Value::as_array);
        let options = values
            .iter()
            .enumerate()
            .map(|(at, value)| {
                let value = value.as_str().ok_or("`enum` lists something that is not text")?;
                let label = names.and_then(|n| n.get(at)).and_then(Value::as_str).unwrap_or(value);
                Ok(FieldOption { value: value.to_owned(), label: label.to_owned() })
            })
            .collect::<Result<Vec<_>, String>>()?;
        return non_empty(options).map(Some);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(choices) = property.get(key) {
            let Some(choices) = choices.as_array() else { return Err(format!("`{key}` is not a list")) };
            let options = choices
                .iter()
                .map(|choice| {
                    let value = choice
                        .get("const")
                        .and_then(Value::as_str)
                        .ok_or(format!("`{key}` lists an option without a text `const`"))?;
                    let label = choice.get("title").and_then(Value::as_str).unwrap_or(value);
                    Ok(FieldOption { value: value.to_owned(), label: label.to_owned() })
                })
                .collect::<Result<Vec<_>, String>>()?;
            return non_empty(options).map(Some);
        }
    }
    Ok(None)
}

fn non_empty(options: Vec<FieldOption>) -> Result<Vec<FieldOption>, String> {
    if options.is_empty() {
        return Err("lists no options".into());
    }
    if options.len() > 500 {
        return Err("lists more than 500 options".into());
    }
    Ok(options)
}

/// A text property of the schema, capped.
fn text(value: &Value, key: &str) -> Option<String> {
    let text = value.get(key)?.as_str()?.trim();
    (!text.is_empty()).then(|| text.chars().take(MAX_TEXT).collect())
}

/// A count (`minLength`, `maxItems`…): absent, or a whole number ≥ 0.
fn count(value: &Value, key: &str) -> Result<Option<u32>, String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`{key}` is not a whole number ≥ 0")),
    }
}

/// A name from the server as an error quotes it.
fn short(name: &str) -> String {
    let cut: String = name.chars().take(60).collect();
    if cut.len() < name.len() { format!("{cut}…") } else { cut }
}

fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else { return false };
    !local.is_empty()
        && !domain.contains('@')
        && !text.chars().any(char::is_whitespace)
        && domain.split('.').count() >= 2
        && domain.split('.').all(|label| !label.is_empty())
}

fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !text.chars().any(char::is_whitespace)
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| {
        text.get(range).filter(|s| s.bytes().all(|b| b.is_ascii_digit()))?.parse::<u32>().ok()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else { return false };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339: `2026-01-31T09:30:00Z`, seconds and fractions optional, `Z` or an offset.
fn is_date_time(text: &str) -> bool {
    let Some((date, time)) = text.split_once(['T', 't', ' ']) else { return false };
    if !is_date(date) {
        return false;
    }
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => return false,
    };
    let zone_ok = matches!(zone, "Z" | "z") || (zone.len() == 6 && is_clock(&zone[1..], false));
    zone_ok && is_clock(clock, true)
}

/// `hh:mm`, with `:ss` and a fraction when `seconds` allows them.
fn is_clock(text: &str, seconds: bool) -> bool {
    let (main, fraction) = match text.split_once('.') {
        Some((main, fraction)) => (main, Some(fraction)),
        None => (text, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()))
        || (fraction.is_some() && !seconds)
    {
        return false;
    }
    let parts: Vec<&str> = main.split(':').collect();
    let limits: &[u32] = match (parts.len(), seconds) {
        (2, _) => &[23, 59],
        (3, true) => &[23, 59, 60],
        _ => return false,
    };
    parts.iter().zip(limits).all(|(part, max)| {
        part.len() == 2 && part.bytes().all(|b| b.is_ascii_digit()) && part.parse::<u32>().is_ok_and(|n| n <= *max)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> ElicitationForm {
        ElicitationForm::from_schema(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 2},
                "email": {"type": "string", "format": "email"},
                "born": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "age": {"type": "integer", "minimum": 1, "maximum": 150, "default": 42},
                "ok": {"type": "boolean"},
                "pet": {"type": "string", "enum": ["c", "d"], "enumNames": ["Cat", "Dog"]},
                "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
                "tools": {"type": "array", "maxItems": 2, "items": {"anyOf": [{"const": "a"}, {"const": "b"}, {"const": "c"}]}}
            },
            "required": ["name"]
        }))
        .unwrap()
    }

    #[test]
    fn a_schema_becomes_a_form_with_labels_limits_and_defaults() {
        let form = form();
        assert_eq!(form.fields.len(), 9);
        let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
        assert!(field("name").required && !field("email").required);
        assert_eq!(
            field("pet").input,
            FieldInput::Choice {
                options: vec![
                    FieldOption { value: "c".into(), label: "Cat".into() },
                    FieldOption { value: "d".into(), label: "Dog".into() }
                ],
                default: None
            }
        );
        assert!(matches!(&field("hero").input, FieldInput::Choice { options, .. } if options[0].label == "Superman"));
        assert!(matches!(field("age").input, FieldInput::Number { integer: true, default: Some(42.0), .. }));
        assert!(
            matches!(&field("tools").input, FieldInput::MultiChoice { options, max_items: Some(2), .. } if options.len() == 3)
        );
    }

    #[test]
    fn content_is_checked_field_by_field() {
        let form = form();
        let check = |content: Value| form.check(content.as_object().unwrap());
        assert_eq!(
            check(
                json!({"name": "Ada", "email": "ada@example.com", "born": "1815-12-10", "at": "2026-01-31T09:30:00+01:00",
                "age": 36, "ok": true, "pet": "c", "hero": "h1", "tools": ["a", "c"]})
            ),
            Ok(())
        );
        assert_eq!(check(json!({})), Err("Name is required".into()));
        assert_eq!(check(json!({"name": "A"})), Err("Name: must be at least 2 characters long".into()));
        assert_eq!(
            check(json!({"name": "Ada", "email": "ada"})).unwrap_err(),
            "email: must be an email address, like name@example.com"
        );
        assert!(check(json!({"name": "Ada", "born": "1815-02-30"})).unwrap_err().contains("must be a date"));
        assert!(check(json!({"name": "Ada", "at": "2026-01-31 25:00Z"})).is_err());
        assert_eq!(check(json!({"name": "Ada", "age": 36.5})), Err("age: must be a whole number".into()));
        assert_eq!(check(json!({"name": "Ada", "age": 200})), Err("age: must be at most 150".into()));
        assert_eq!(check(json!({"name": "Ada", "pet": "fish"})), Err("pet: must be one of the options".into()));
        assert_eq!(check(json!({"name": "Ada", "tools": ["a", "b", "c"]})), Err("tools: choose at most 2".into()));
        assert_eq!(check(json!({"name": "Ada", "ok": "yes"})), Err("ok: must be true or false".into()));
        assert_eq!(check(json!({"name": "Ada", "x": 1})), Err("`x` is not a field of this form".into()));
    }

    #[test]
    fn a_schema_that_is_not_a_flat_form_is_refused_with_why() {
        let refused = |schema: Value| ElicitationForm::from_schema(&schema).unwrap_err();
        assert!(refused(json!("x")).contains("not a JSON object"));
        assert!(refused(json!({"type": "array"})).contains("\"type\": \"object\""));
        assert!(
            refused(json!({"type": "object", "properties": {"a": {"type": "object"}}}))
                .contains("field `a`: is of type `object`")
        );
        assert!(
            refused(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}))
                .contains("`b`")
        );
        assert!(
            refused(json!({"type": "object", "properties": {"a": {"type": "string", "enum": []}}}))
                .contains("no options")
        );
        assert!(
            refused(json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 5, "maximum": 1}}}))
                .contains("above")
        );
        assert!(
            refused(json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": -1}}}))
                .contains("maxLength")
        );
    }
}
