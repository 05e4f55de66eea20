//! `current_time`: what time it is, for a model that cannot know.

use async_trait::async_trait;
use protocol::tool::{ToolAnnotations, ToolOutput};
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError};

pub struct CurrentTime(ToolDefinition);

impl CurrentTime {
    pub fn new() -> Self {
        Self(ToolDefinition {
            name: "current_time".into(),
            title: None,
            description: "The current date and time: UTC, and at an optional UTC offset such as `+02:00`.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "utc_offset": {"type": "string", "pattern": "^[+-][0-9]{2}:[0-9]{2}$", "description": "e.g. +02:00 or -05:00"}
                },
                "additionalProperties": false
            }),
            annotations: ToolAnnotations { read_only: true, destructive: false, idempotent: false, open_world: false },
        })
    }
}

#[async_trait]
impl Tool for CurrentTime {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let now = OffsetDateTime::now_utc();
        let format = |t: OffsetDateTime| t.format(&Rfc3339).map_err(|e| ToolError::Failed(e.to_string()));
        let mut text = format!("{} (UTC), {} ({} of the week)", format(now)?, now.date(), now.weekday());
        if let Some(offset) = input.get("utc_offset").and_then(Value::as_str) {
            let offset = parse_offset(offset)
                .ok_or_else(|| ToolError::InvalidInput(format!("utc_offset {offset} is not like +02:00")))?;
            text.push_str(&format!("\n{} at {offset}", format(now.to_offset(offset))?));
        }
        Ok(ToolOutput::text(text))
    }
}

fn parse_offset(text: &str) -> Option<UtcOffset> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = text[1..].split_once(':')?;
    let (hours, minutes): (i8, i8) = (hours.parse().ok()?, minutes.parse().ok()?);
    UtcOffset::from_hms(sign * hours, sign * minutes, 0).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tells_utc_and_an_offset() {
        let ctx = ToolContext::detached(None);
        let out = CurrentTime::new().execute(json!({"utc_offset": "+05:30"}), &ctx).await.unwrap().text_content();
        assert!(out.contains("(UTC)") && out.contains("+05:30"), "{out}");
        assert!(CurrentTime::new().execute(json!({"utc_offset": "5"}), &ctx).await.is_err());
    }
}
