//! The usage ledger (one row per model call or agent-session turn), the prices the user
//! set, and the timing facts the reply inspector shows (tool runs, approval waits).
//!
//! Invariants:
//! - a ledger row is written once, in its own small transaction, when its call has ended;
//!   nothing on the chunk path waits for it;
//! - rows have no foreign keys: what was spent stays in the reports after a topic or reply
//!   is deleted;
//! - the store keeps counts and times; what they cost is the engine's to work out (prices
//!   change, and a row is priced with today's table).

use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, now};

/// What a ledger row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageKind {
    /// A call the agent loop made.
    Model,
    /// An agent session's turn, as the agent reported it.
    Agent,
}

impl UsageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UsageKind::Model => "model",
            UsageKind::Agent => "agent",
        }
    }

    fn parse(text: &str) -> Self {
        if text == "agent" { UsageKind::Agent } else { UsageKind::Model }
    }
}

/// Token counts as the ledger keeps them: input includes cached, output includes reasoning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cached: u64,
}

/// One ledger row.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageCall {
    pub topic_id: String,
    pub message_id: String,
    pub kind: UsageKind,
    pub step: u32,
    pub attempt: u32,
    pub provider_id: Option<String>,
    pub provider_name: String,
    pub model: String,
    pub tokens: Tokens,
    pub request_messages: Option<u32>,
    pub request_chars: Option<u64>,
    /// RFC 3339, UTC (as [`now`] writes it).
    pub started_at: String,
    pub ttft_ms: Option<u64>,
    pub duration_ms: u64,
    pub provider_retries: u32,
    pub finish: String,
    pub error: Option<String>,
    pub reported_cost_usd: Option<f64>,
}

/// Sums over ledger rows of one day, provider and model (and whether the agent reported
/// their cost).
#[derive(Clone, Debug, PartialEq)]
pub struct UsageSum {
    /// `YYYY-MM-DD` in the caller's time zone.
    pub day: String,
    pub provider_name: String,
    pub model: String,
    pub calls: u64,
    pub tokens: Tokens,
    pub duration_ms: u64,
    /// The sum of costs agents reported, for rows that have one.
    pub reported_cost_usd: Option<f64>,
    /// Whether these rows carry a reported cost (else they are priced from the table).
    pub reported: bool,
}

/// A price the user set, in USD per million tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredPrice {
    pub model: String,
    pub input_usd: f64,
    pub output_usd: f64,
    pub cached_input_usd: Option<f64>,
}

/// A tool call as the inspector shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRun {
    pub call_id: String,
    pub tool_name: String,
    pub input: Value,
    /// The ledger state: `requested`, `approved`, `denied`, `running`, `done`, `error`.
    pub state: String,
    /// Characters of the stored output (JSON), when there is one.
    pub output_chars: Option<u64>,
    pub error: Option<String>,
    pub reason: Option<String>,
    pub decided_by: Option<String>,
    pub requested_at: String,
    pub started_at: Option<String>,
    pub duration_ms: Option<u64>,
}

/// An approval a call waited for.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalWait {
    pub approval_id: String,
    pub call_id: String,
    pub tool_name: String,
    /// `pending`, `approved` or `denied`.
    pub state: String,
    pub requested_at: String,
    pub decided_at: Option<String>,
}

fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(row: &SqliteRow, column: &str) -> Result<u64> {
    let n: i64 = row.try_get(column)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

fn unsigned_opt(row: &SqliteRow, column: &str) -> Result<Option<u64>> {
    let n: Option<i64> = row.try_get(column)?;
    Ok(n.map(|n| u64::try_from(n).unwrap_or(0)))
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The columns every read of a ledger row selects (a macro so queries stay `&'static str`).
macro_rules! call_columns {
    () => {
        "topic_id, message_id, kind, step, attempt, provider_id, provider_name, model, input_tokens, output_tokens, \
         reasoning_tokens, cached_tokens, request_messages, request_chars, started_at, ttft_ms, duration_ms, \
         provider_retries, finish, error, reported_cost_usd"
    };
}

fn call_from_row(row: &SqliteRow) -> Result<UsageCall> {
    let kind: String = row.try_get("kind")?;
    Ok(UsageCall {
        topic_id: row.try_get("topic_id")?,
        message_id: row.try_get("message_id")?,
        kind: UsageKind::parse(&kind),
        step: small(unsigned(row, "step")?),
        attempt: small(unsigned(row, "attempt")?),
        provider_id: row.try_get("provider_id")?,
        provider_name: row.try_get("provider_name")?,
        model: row.try_get("model")?,
        tokens: Tokens {
            input: unsigned(row, "input_tokens")?,
            output: unsigned(row, "output_tokens")?,
            reasoning: unsigned(row, "reasoning_tokens")?,
            cached: unsigned(row, "cached_tokens")?,
        },
        request_messages: unsigned_opt(row, "request_messages")?.map(small),
        request_chars: unsigned_opt(row, "request_chars")?,
        started_at: row.try_get("started_at")?,
        ttft_ms: unsigned_opt(row, "ttft_ms")?,
        duration_ms: unsigned(row, "duration_ms")?,
        provider_retries: small(unsigned(row, "provider_retries")?),
        finish: row.try_get("finish")?,
        error: row.try_get("error")?,
        reported_cost_usd: row.try_get("reported_cost_usd")?,
    })
}

impl Store {
    /// Adds a ledger row, in its own small transaction.
    pub async fn record_usage(&self, call: &UsageCall) -> Result<()> {
        // A reported cost that is not a finite, non-negative number is not kept.
        let reported = call.reported_cost_usd.filter(|c| c.is_finite() && *c >= 0.0);
        sqlx::query(
            "INSERT INTO usage_calls (topic_id, message_id, kind, step, attempt, provider_id, provider_name, model,
                 input_tokens, output_tokens, reasoning_tokens, cached_tokens, request_messages, request_chars,
                 started_at, ttft_ms, duration_ms, provider_retries, finish, error, reported_cost_usd)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&call.topic_id)
        .bind(&call.message_id)
        .bind(call.kind.as_str())
        .bind(i64::from(call.step))
        .bind(i64::from(call.attempt))
        .bind(&call.provider_id)
        .bind(&call.provider_name)
        .bind(&call.model)
        .bind(signed(call.tokens.input))
        .bind(signed(call.tokens.output))
        .bind(signed(call.tokens.reasoning.min(call.tokens.output)))
        .bind(signed(call.tokens.cached.min(call.tokens.input)))
        .bind(call.request_messages.map(i64::from))
        .bind(call.request_chars.map(signed))
        .bind(&call.started_at)
        .bind(call.ttft_ms.map(signed))
        .bind(signed(call.duration_ms))
        .bind(i64::from(call.provider_retries))
        .bind(&call.finish)
        .bind(&call.error)
        .bind(reported)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// A reply's ledger rows, in the order they were written.
    pub async fn usage_of_message(&self, message_id: &str) -> Result<Vec<UsageCall>> {
        let rows =
            sqlx::query(concat!("SELECT ", call_columns!(), " FROM usage_calls WHERE message_id = ? ORDER BY id"))
                .bind(message_id)
                .fetch_all(self.pool())
                .await?;
        rows.iter().map(call_from_row).collect()
    }

    /// A topic's ledger rows (every version of every reply), in the order they were written.
    pub async fn usage_of_topic(&self, topic_id: &str) -> Result<Vec<UsageCall>> {
        let rows = sqlx::query(concat!("SELECT ", call_columns!(), " FROM usage_calls WHERE topic_id = ? ORDER BY id"))
            .bind(topic_id)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(call_from_row).collect()
    }

    /// Sums by day, provider and model of the calls started between the days `from` and
    /// `to` (inclusive, `YYYY-MM-DD`, either open), days counted in the time zone
    /// `utc_offset_minutes` ahead of UTC.
    pub async fn usage_sums(
        &self,
        from: Option<&str>,
        to: Option<&str>,
        utc_offset_minutes: i32,
    ) -> Result<Vec<UsageSum>> {
        let shift = format!("{utc_offset_minutes:+} minutes");
        let rows = sqlx::query(
            "SELECT date(started_at, ?1) AS day, provider_name, model,
                    reported_cost_usd IS NOT NULL AS reported,
                    COUNT(*) AS calls,
                    SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
                    SUM(reasoning_tokens) AS reasoning_tokens, SUM(cached_tokens) AS cached_tokens,
                    SUM(duration_ms) AS duration_ms, SUM(reported_cost_usd) AS reported_cost_usd
             FROM usage_calls
             WHERE day IS NOT NULL AND (?2 IS NULL OR day >= ?2) AND (?3 IS NULL OR day <= ?3)
             GROUP BY day, provider_name, model, reported
             ORDER BY day, provider_name, model",
        )
        .bind(shift)
        .bind(from)
        .bind(to)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let reported: bool = row.try_get("reported")?;
                Ok(UsageSum {
                    day: row.try_get("day")?,
                    provider_name: row.try_get("provider_name")?,
                    model: row.try_get("model")?,
                    calls: unsigned(row, "calls")?,
                    tokens: Tokens {
                        input: unsigned(row, "input_tokens")?,
                        output: unsigned(row, "output_tokens")?,
                        reasoning: unsigned(row, "reasoning_tokens")?,
                        cached: unsigned(row, "cached_tokens")?,
                    },
                    duration_ms: unsigned(row, "duration_ms")?,
                    reported_cost_usd: row.try_get("reported_cost_usd")?,
                    reported,
                })
            })
            .collect()
    }

    /// The prices the user set, by model name.
    pub async fn prices(&self) -> Result<Vec<StoredPrice>> {
        let rows =
            sqlx::query("SELECT model, input_usd, output_usd, cached_input_usd FROM model_prices ORDER BY model")
                .fetch_all(self.pool())
                .await?;
        rows.iter()
            .map(|row| {
                Ok(StoredPrice {
                    model: row.try_get("model")?,
                    input_usd: row.try_get("input_usd")?,
                    output_usd: row.try_get("output_usd")?,
                    cached_input_usd: row.try_get("cached_input_usd")?,
                })
            })
            .collect()
    }

    /// Sets the price of `model` (the engine checks the numbers first).
    pub async fn set_price(&self, price: &StoredPrice) -> Result<()> {
        sqlx::query(
            "INSERT INTO model_prices (model, input_usd, output_usd, cached_input_usd, updated_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (model) DO UPDATE SET input_usd = excluded.input_usd, output_usd = excluded.output_usd,
                 cached_input_usd = excluded.cached_input_usd, updated_at = excluded.updated_at",
        )
        .bind(&price.model)
        .bind(price.input_usd)
        .bind(price.output_usd)
        .bind(price.cached_input_usd)
        .bind(now())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Forgets the user's price of `model`; whether there was one.
    pub async fn delete_price(&self, model: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM model_prices WHERE model = ?")
            .bind(model)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Records when a tool call started running and how long it ran.
    pub async fn record_tool_run(
        &self,
        message_id: &str,
        call_id: &str,
        started_at: &str,
        duration_ms: u64,
    ) -> Result<()> {
        sqlx::query("UPDATE tool_calls SET started_at = ?, duration_ms = ? WHERE message_id = ? AND call_id = ?")
            .bind(started_at)
            .bind(signed(duration_ms))
            .bind(message_id)
            .bind(call_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// A reply's tool calls, in the order they were made.
    pub async fn tool_runs_of_message(&self, message_id: &str) -> Result<Vec<ToolRun>> {
        let rows = sqlx::query(
            "SELECT call_id, tool_name, input, state, length(output) AS output_chars, error, reason, decided_by,
                    created_at, started_at, duration_ms
             FROM tool_calls WHERE message_id = ? ORDER BY created_at, rowid",
        )
        .bind(message_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                let input: String = row.try_get("input")?;
                Ok(ToolRun {
                    call_id: row.try_get("call_id")?,
                    tool_name: row.try_get("tool_name")?,
                    // A damaged row shows its raw text rather than failing the whole reply.
                    input: serde_json::from_str(&input).unwrap_or(Value::String(input)),
                    state: row.try_get("state")?,
                    output_chars: unsigned_opt(row, "output_chars")?,
                    error: row.try_get("error")?,
                    reason: row.try_get("reason")?,
                    decided_by: row.try_get("decided_by")?,
                    requested_at: row.try_get("created_at")?,
                    started_at: row.try_get("started_at")?,
                    duration_ms: unsigned_opt(row, "duration_ms")?,
                })
            })
            .collect()
    }

    /// The approvals a reply's calls waited for.
    pub async fn approval_waits_of_message(&self, message_id: &str) -> Result<Vec<ApprovalWait>> {
        let rows = sqlx::query(
            "SELECT id, call_id, tool_name, state, created_at, decided_at FROM approvals
             WHERE message_id = ? ORDER BY created_at, rowid",
        )
        .bind(message_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ApprovalWait {
                    approval_id: row.try_get("id")?,
                    call_id: row.try_get("call_id")?,
                    tool_name: row.try_get("tool_name")?,
                    state: row.try_get("state")?,
                    requested_at: row.try_get("created_at")?,
                    decided_at: row.try_get("decided_at")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store;

    fn call(message: &str, model: &str, started_at: &str, tokens: Tokens) -> UsageCall {
        UsageCall {
            topic_id: "t1".into(),
            message_id: message.into(),
            kind: UsageKind::Model,
            step: 0,
            attempt: 0,
            provider_id: Some("p1".into()),
            provider_name: "Acme".into(),
            model: model.into(),
            tokens,
            request_messages: Some(2),
            request_chars: Some(120),
            started_at: started_at.into(),
            ttft_ms: Some(40),
            duration_ms: 900,
            provider_retries: 0,
            finish: "stop".into(),
            error: None,
            reported_cost_usd: None,
        }
    }

    #[tokio::test]
    async fn ledger_rows_come_back_per_reply_and_per_topic_in_order() {
        let (store, _dir) = store().await;
        let tokens = Tokens { input: 10, output: 5, reasoning: 2, cached: 4 };
        let first = call("m1", "gpt-4o", "2026-11-25T10:00:00.000Z", tokens);
        let second = UsageCall { step: 1, ..call("m1", "gpt-4o", "2026-11-25T10:00:01.000Z", tokens) };
        let other = call("m2", "gpt-4o", "2026-11-25T10:00:02.000Z", tokens);
        for row in [&first, &second, &other] {
            store.record_usage(row).await.unwrap();
        }
        assert_eq!(store.usage_of_message("m1").await.unwrap(), vec![first.clone(), second.clone()]);
        assert_eq!(store.usage_of_topic("t1").await.unwrap(), vec![first, second, other]);
    }

    #[tokio::test]
    async fn counts_from_outside_are_kept_consistent() {
        let (store, _dir) = store().await;
        // More reasoning than output, more cached than input, an absurd reported cost.
        let mut row =
            call("m1", "x", "2026-11-25T10:00:00.000Z", Tokens { input: 3, output: 2, reasoning: 9, cached: 7 });
        row.reported_cost_usd = Some(f64::NAN);
        row.tokens.input = u64::MAX;
        store.record_usage(&row).await.unwrap();
        let stored = &store.usage_of_message("m1").await.unwrap()[0];
        assert_eq!(stored.tokens, Tokens { input: i64::MAX as u64, output: 2, reasoning: 2, cached: 7 });
        assert_eq!(stored.reported_cost_usd, None);
    }

    #[tokio::test]
    async fn sums_group_by_local_day_provider_and_model_within_the_period() {
        let (store, _dir) = store().await;
        let tokens = Tokens { input: 100, output: 10, reasoning: 0, cached: 0 };
        // 23:30 UTC on the 24th is already the 25th two hours east of UTC.
        store.record_usage(&call("m1", "a", "2026-11-24T23:30:00.000Z", tokens)).await.unwrap();
        store.record_usage(&call("m2", "a", "2026-11-25T08:00:00.000Z", tokens)).await.unwrap();
        store.record_usage(&call("m3", "b", "2026-11-25T09:00:00.000Z", tokens)).await.unwrap();
        store.record_usage(&call("m4", "a", "2026-11-27T09:00:00.000Z", tokens)).await.unwrap();
        let sums = store.usage_sums(Some("2026-11-25"), Some("2026-11-26"), 120).await.unwrap();
        let keys: Vec<(&str, &str, u64, u64)> =
            sums.iter().map(|s| (s.day.as_str(), s.model.as_str(), s.calls, s.tokens.input)).collect();
        assert_eq!(keys, vec![("2026-11-25", "a", 2, 200), ("2026-11-25", "b", 1, 100)]);
        let utc = store.usage_sums(None, None, 0).await.unwrap();
        assert_eq!(utc.first().map(|s| s.day.as_str()), Some("2026-11-24"));
        assert_eq!(utc.len(), 4);
    }

    #[tokio::test]
    async fn a_price_can_be_set_changed_and_forgotten() {
        let (store, _dir) = store().await;
        let price = StoredPrice { model: "m".into(), input_usd: 1.0, output_usd: 2.0, cached_input_usd: None };
        store.set_price(&price).await.unwrap();
        let changed = StoredPrice { cached_input_usd: Some(0.1), ..price };
        store.set_price(&changed).await.unwrap();
        assert_eq!(store.prices().await.unwrap(), vec![changed]);
        assert!(store.delete_price("m").await.unwrap());
        assert!(!store.delete_price("m").await.unwrap());
        assert!(store.prices().await.unwrap().is_empty());
    }
}
