//! Usage and cost: the ledger as replies, topics and periods add it up, priced with the
//! price table, and the reply inspector's timeline (model calls from the ledger, tool calls
//! and approval waits from the tool-call ledger and the approvals).
//!
//! - `ledger`: the agent loop's hook that writes the rows.
//! - `prices`: defaults, the user's prices, what a call costs.
//!
//! Rows are priced when read, with the prices in effect then: changing a price changes
//! what past usage is shown to cost. Costs an agent reported are kept as reported.

pub(crate) mod ledger;
mod prices;

use std::collections::BTreeMap;

use protocol::api::{MessageRequest, TopicRequest};
use protocol::usage::{
    ModelPrice, ModelPriceInput, ModelPriceRequest, ReplyDetails, ReplyUsage, TimelineEntry, TopicUsage, UsageGroup,
    UsageReport, UsageReportRequest, UsageTotals,
};
use protocol::{ApiError, TopicId};
use store::usage::{Tokens, UsageCall, UsageKind};
use store::{Store, StoreError};

use prices::PriceTable;

pub(crate) struct Usage {
    store: Store,
}

/// Adds calls to totals; a call's cost is `None` when its model has no price.
fn add(totals: &mut UsageTotals, calls: u64, tokens: &Tokens, duration_ms: u64, cost: Option<f64>) {
    totals.calls = totals.calls.saturating_add(u32::try_from(calls).unwrap_or(u32::MAX));
    totals.input_tokens = totals.input_tokens.saturating_add(tokens.input);
    totals.output_tokens = totals.output_tokens.saturating_add(tokens.output);
    totals.reasoning_tokens = totals.reasoning_tokens.saturating_add(tokens.reasoning);
    totals.cached_tokens = totals.cached_tokens.saturating_add(tokens.cached);
    totals.duration_ms = totals.duration_ms.saturating_add(duration_ms);
    match cost {
        Some(cost) => totals.cost_usd = Some(totals.cost_usd.unwrap_or(0.0) + cost),
        // A call that used nothing (failed before an answer) costs nothing, priced or not.
        None if tokens.input > 0 || tokens.output > 0 => {
            totals.unpriced_calls = totals.unpriced_calls.saturating_add(u32::try_from(calls).unwrap_or(u32::MAX))
        }
        None => {}
    }
}

fn merge(into: &mut UsageTotals, from: &UsageTotals) {
    into.calls = into.calls.saturating_add(from.calls);
    into.input_tokens = into.input_tokens.saturating_add(from.input_tokens);
    into.output_tokens = into.output_tokens.saturating_add(from.output_tokens);
    into.reasoning_tokens = into.reasoning_tokens.saturating_add(from.reasoning_tokens);
    into.cached_tokens = into.cached_tokens.saturating_add(from.cached_tokens);
    into.duration_ms = into.duration_ms.saturating_add(from.duration_ms);
    into.unpriced_calls = into.unpriced_calls.saturating_add(from.unpriced_calls);
    if let Some(cost) = from.cost_usd {
        into.cost_usd = Some(into.cost_usd.unwrap_or(0.0) + cost);
    }
}

fn row_cost(table: &PriceTable, row: &UsageCall) -> Option<f64> {
    row.reported_cost_usd.or_else(|| table.cost(&row.model, &row.tokens))
}

/// Output tokens per second after the first token; `None` without a measurable span.
fn tokens_per_second(output: u64, generating_ms: u64) -> Option<f64> {
    (output > 0 && generating_ms > 0).then(|| output as f64 * 1000.0 / generating_ms as f64)
}

fn generating_ms(row: &UsageCall) -> Option<u64> {
    row.ttft_ms.map(|ttft| row.duration_ms.saturating_sub(ttft))
}

/// A reply's footer from its ledger rows (in order); `None` without rows.
fn reply_usage(table: &PriceTable, message_id: &str, rows: &[&UsageCall]) -> Option<ReplyUsage> {
    let first = rows.first()?;
    let last = rows.last()?;
    let mut totals = UsageTotals::default();
    let (mut output, mut generating) = (0u64, 0u64);
    for row in rows {
        add(&mut totals, 1, &row.tokens, row.duration_ms, row_cost(table, row));
        if let Some(ms) = generating_ms(row) {
            output = output.saturating_add(row.tokens.output);
            generating = generating.saturating_add(ms);
        }
    }
    Some(ReplyUsage {
        message_id: message_id.to_owned(),
        totals,
        time_to_first_token_ms: rows.iter().find_map(|r| r.ttft_ms),
        tokens_per_second: tokens_per_second(output, generating),
        started_at: first.started_at.clone(),
        model: last.model.clone(),
    })
}

fn model_call_entry(table: &PriceTable, row: &UsageCall) -> TimelineEntry {
    TimelineEntry::ModelCall {
        step: row.step,
        attempt: row.attempt,
        agent: row.kind == UsageKind::Agent,
        provider_name: row.provider_name.clone(),
        model: row.model.clone(),
        started_at: row.started_at.clone(),
        request_messages: row.request_messages,
        request_chars: row.request_chars,
        time_to_first_token_ms: row.ttft_ms,
        duration_ms: row.duration_ms,
        tokens_per_second: generating_ms(row).and_then(|ms| tokens_per_second(row.tokens.output, ms)),
        input_tokens: row.tokens.input,
        output_tokens: row.tokens.output,
        reasoning_tokens: row.tokens.reasoning,
        cached_tokens: row.tokens.cached,
        cost_usd: row_cost(table, row),
        finish: row.finish.clone(),
        error: row.error.clone(),
        provider_retries: row.provider_retries,
    }
}

fn waited_ms(from: &str, until: Option<&str>) -> Option<u64> {
    let from = store::parse_timestamp(from)?;
    let until = match until {
        Some(until) => store::parse_timestamp(until)?,
        None => time::OffsetDateTime::now_utc(),
    };
    u64::try_from((until - from).whole_milliseconds()).ok()
}

/// `YYYY-MM-DD`, or a `bad_request` naming the field.
fn day(field: &str, text: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else { return Ok(None) };
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(text, &format)
        .map(|_| Some(text.to_owned()))
        .map_err(|_| ApiError::bad_request(field, format!("“{text}” is not a day written YYYY-MM-DD")))
}

/// Groups sorted most expensive first, then most tokens.
fn ranked(groups: BTreeMap<String, UsageTotals>) -> Vec<UsageGroup> {
    let mut groups: Vec<UsageGroup> = groups.into_iter().map(|(key, totals)| UsageGroup { key, totals }).collect();
    groups.sort_by(|a, b| {
        let cost = |g: &UsageGroup| g.totals.cost_usd.unwrap_or(0.0);
        let tokens = |g: &UsageGroup| g.totals.input_tokens.saturating_add(g.totals.output_tokens);
        cost(b).total_cmp(&cost(a)).then(tokens(b).cmp(&tokens(a))).then(a.key.cmp(&b.key))
    });
    groups
}

impl Usage {
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }

    async fn table(&self) -> Result<PriceTable, ApiError> {
        Ok(PriceTable::new(self.store.prices().await?))
    }

    async fn check_topic(&self, topic_id: &TopicId) -> Result<(), ApiError> {
        self.store.get_topic(topic_id).await?;
        Ok(())
    }

    /// The reply inspector's data.
    pub(crate) async fn reply(&self, request: MessageRequest) -> Result<ReplyDetails, ApiError> {
        match self.store.get_message(&request.message_id).await {
            Ok(message) if message.topic_id == request.topic_id => {}
            Ok(_) | Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::not_found("message in this topic", &request.message_id));
            }
            Err(err) => return Err(err.into()),
        }
        let id = request.message_id.as_str();
        let table = self.table().await?;
        let rows = self.store.usage_of_message(id).await?;
        let usage = reply_usage(&table, id, &rows.iter().collect::<Vec<_>>());
        // Everything with the moment it began, then in that order. Times are in
        // milliseconds: on a tie, a wait comes before the call it held up, and a tool call
        // before the model call that follows it (which starts once the tool is done).
        let mut timeline: Vec<(String, u8, TimelineEntry)> =
            rows.iter().map(|row| (row.started_at.clone(), 2, model_call_entry(&table, row))).collect();
        for wait in self.store.approval_waits_of_message(id).await? {
            let waited = waited_ms(&wait.requested_at, wait.decided_at.as_deref());
            timeline.push((
                wait.requested_at.clone(),
                0,
                TimelineEntry::ApprovalWait {
                    approval_id: wait.approval_id,
                    call_id: wait.call_id,
                    tool_name: wait.tool_name,
                    state: wait.state,
                    requested_at: wait.requested_at,
                    decided_at: wait.decided_at,
                    waited_ms: waited,
                },
            ));
        }
        for run in self.store.tool_runs_of_message(id).await? {
            let at = run.started_at.clone().unwrap_or_else(|| run.requested_at.clone());
            timeline.push((
                at,
                1,
                TimelineEntry::ToolCall {
                    call_id: run.call_id,
                    tool_name: run.tool_name,
                    input: run.input,
                    state: run.state,
                    requested_at: run.requested_at,
                    started_at: run.started_at,
                    duration_ms: run.duration_ms,
                    output_chars: run.output_chars,
                    decided_by: run.decided_by,
                    error: run.error.or(run.reason),
                },
            ));
        }
        timeline.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        Ok(ReplyDetails {
            message_id: request.message_id.to_string(),
            usage,
            timeline: timeline.into_iter().map(|(_, _, entry)| entry).collect(),
        })
    }

    /// A topic's total and each reply's footer.
    pub(crate) async fn topic(&self, request: TopicRequest) -> Result<TopicUsage, ApiError> {
        self.check_topic(&request.topic_id).await?;
        let table = self.table().await?;
        let rows = self.store.usage_of_topic(request.topic_id.as_str()).await?;
        let mut by_reply: Vec<(&str, Vec<&UsageCall>)> = Vec::new();
        for row in &rows {
            match by_reply.iter_mut().find(|(id, _)| *id == row.message_id) {
                Some((_, calls)) => calls.push(row),
                None => by_reply.push((&row.message_id, vec![row])),
            }
        }
        let replies: Vec<ReplyUsage> =
            by_reply.iter().filter_map(|(id, calls)| reply_usage(&table, id, calls)).collect();
        let mut total = UsageTotals::default();
        for reply in &replies {
            merge(&mut total, &reply.totals);
        }
        Ok(TopicUsage { topic_id: request.topic_id.to_string(), total, replies })
    }

    /// Totals over a period by day, model and provider.
    pub(crate) async fn report(&self, request: UsageReportRequest) -> Result<UsageReport, ApiError> {
        let from = day("from", request.from.as_deref())?;
        let to = day("to", request.to.as_deref())?;
        if let (Some(from), Some(to)) = (&from, &to)
            && from > to
        {
            return Err(ApiError::bad_request("to", format!("the period ends ({to}) before it starts ({from})")));
        }
        let offset = request.utc_offset_minutes.unwrap_or(0);
        if !(-14 * 60..=14 * 60).contains(&offset) {
            return Err(ApiError::bad_request("utcOffsetMinutes", "a time zone is at most 14 hours from UTC"));
        }
        let table = self.table().await?;
        let sums = self.store.usage_sums(from.as_deref(), to.as_deref(), offset).await?;
        let mut total = UsageTotals::default();
        let (mut by_day, mut by_model, mut by_provider) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for sum in &sums {
            let cost = if sum.reported { sum.reported_cost_usd } else { table.cost(&sum.model, &sum.tokens) };
            let provider = if sum.provider_name.is_empty() { "Unknown provider" } else { &sum.provider_name };
            for totals in [
                &mut total,
                by_day.entry(sum.day.clone()).or_default(),
                by_model.entry(sum.model.clone()).or_default(),
                by_provider.entry(provider.to_owned()).or_default(),
            ] {
                add(totals, sum.calls, &sum.tokens, sum.duration_ms, cost);
            }
        }
        Ok(UsageReport {
            total,
            by_day: by_day.into_iter().map(|(key, totals)| UsageGroup { key, totals }).collect(),
            by_model: ranked(by_model),
            by_provider: ranked(by_provider),
        })
    }

    pub(crate) async fn prices(&self) -> Result<Vec<ModelPrice>, ApiError> {
        Ok(self.table().await?.into_list())
    }

    pub(crate) async fn set_price(&self, input: ModelPriceInput) -> Result<Vec<ModelPrice>, ApiError> {
        let price = prices::check(&input)?;
        self.store.set_price(&price).await?;
        self.prices().await
    }

    /// Back to the default price (or none, for a model without one).
    pub(crate) async fn reset_price(&self, request: ModelPriceRequest) -> Result<Vec<ModelPrice>, ApiError> {
        if !self.store.delete_price(request.model.trim()).await? {
            return Err(ApiError::not_found("price you set for model", request.model.trim()));
        }
        self.prices().await
    }
}
