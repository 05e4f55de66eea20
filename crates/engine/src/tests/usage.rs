//! Usage and cost end to end: a multi-step tool turn adds up across its model calls, each
//! wire format's usage (reasoning and cached tokens included) reaches the ledger, costs
//! follow the price table, and the reply inspector lists the turn's steps.

use protocol::usage::{ModelPrice, PriceSource, ReplyDetails, TimelineEntry, TopicUsage, UsageReport};

use super::tools::{call, tool_fixture};
use super::*;

async fn set_price(f: &Fixture, model: &str, input: f64, output: f64, cached: Option<f64>) -> Vec<ModelPrice> {
    let mut body = json!({ "model": model, "inputUsd": input, "outputUsd": output });
    if let Some(cached) = cached {
        body["cachedInputUsd"] = json!(cached);
    }
    f.call("usage_price_set", body).await
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn a_multi_step_tool_turn_adds_up_across_its_model_calls() {
    let t = tool_fixture().await;
    set_price(&t.f, "scripted", 1000.0, 2000.0, Some(100.0)).await;
    t.server.push_script(call("current_time", json!({})).with_usage_details(100, 10, 0, 0));
    t.server.push_script(call("current_time", json!({})).with_usage_details(150, 12, 0, 50));
    t.server.push_script(Script::text(["It is late."]).with_usage_details(200, 30, 5, 100));
    assert_eq!(terminal_status(&t.f.send(&t.topic, "what time is it?").await), TerminalStatus::Success);
    let reply = t.f.messages(&t.topic).await.pop().unwrap();

    let usage: TopicUsage = t.f.call("usage_topic", json!({ "topicId": t.topic.id })).await;
    assert_eq!(usage.replies.len(), 1);
    let totals = &usage.replies[0].totals;
    assert_eq!((totals.calls, totals.input_tokens, totals.output_tokens), (3, 450, 52));
    assert_eq!((totals.cached_tokens, totals.reasoning_tokens, totals.unpriced_calls), (150, 5, 0));
    // 300 uncached in at $1000/M, 150 cached at $100/M, 52 out at $2000/M.
    let expected = (300.0 * 1000.0 + 150.0 * 100.0 + 52.0 * 2000.0) / 1e6;
    assert!(close(totals.cost_usd.unwrap(), expected), "{totals:?}");
    assert_eq!(usage.total, *totals);
    assert!(usage.replies[0].time_to_first_token_ms.is_some());
    // The reply's stored metadata counts the same tokens.
    let metadata = reply.message.typed_metadata().usage.unwrap();
    assert_eq!((metadata.input_tokens, metadata.output_tokens), (450, 52));
    assert_eq!((metadata.cached_tokens, metadata.reasoning_tokens), (Some(150), Some(5)));

    // The inspector: model call, tool call, model call, tool call, model call.
    let details: ReplyDetails =
        t.f.call("usage_reply", json!({ "topicId": t.topic.id, "messageId": reply.message.id })).await;
    let kinds: Vec<&str> = details
        .timeline
        .iter()
        .map(|entry| match entry {
            TimelineEntry::ModelCall { .. } => "model",
            TimelineEntry::ToolCall { .. } => "tool",
            TimelineEntry::ApprovalWait { .. } => "wait",
        })
        .collect();
    assert_eq!(kinds, ["model", "tool", "model", "tool", "model"]);
    let steps: Vec<(u32, &str, u64)> = details
        .timeline
        .iter()
        .filter_map(|entry| match entry {
            TimelineEntry::ModelCall { step, finish, input_tokens, .. } => {
                Some((*step, finish.as_str(), *input_tokens))
            }
            _ => None,
        })
        .collect();
    assert_eq!(steps, [(0, "tool_calls", 100), (1, "tool_calls", 150), (2, "stop", 200)]);
    for entry in &details.timeline {
        match entry {
            TimelineEntry::ModelCall { request_messages, request_chars, duration_ms, .. } => {
                assert!(request_messages.is_some_and(|n| n >= 1) && request_chars.is_some_and(|n| n > 0));
                let _ = duration_ms;
            }
            TimelineEntry::ToolCall { tool_name, state, decided_by, duration_ms, output_chars, .. } => {
                assert_eq!((tool_name.as_str(), state.as_str()), ("current_time", "done"));
                assert_eq!(decided_by.as_deref(), Some("default"));
                assert!(duration_ms.is_some() && output_chars.is_some_and(|n| n > 0));
            }
            TimelineEntry::ApprovalWait { .. } => unreachable!(),
        }
    }
}

#[tokio::test]
async fn every_wire_formats_usage_reaches_the_ledger_with_reasoning_and_cached_tokens() {
    let f = fixture().await;
    let server = mock(Some("k")).await;
    for (format, provider) in provider_per_format(&f, &server, "k").await {
        let topic = topic_with(&f, &provider).await;
        server.push_script(Script::text(["hi"]).with_reasoning(["hmm"]).with_usage_details(40, 9, 6, 32));
        assert_eq!(terminal_status(&f.send(&topic, "hello").await), TerminalStatus::Success, "{format}");
        let usage: TopicUsage = f.call("usage_topic", json!({ "topicId": topic.id })).await;
        let totals = &usage.total;
        // Anthropic counts thinking inside the output, with no count of its own.
        let reasoning = if format == ApiFormat::Anthropic { 0 } else { 6 };
        assert_eq!(
            (totals.input_tokens, totals.output_tokens, totals.reasoning_tokens, totals.cached_tokens),
            (40, 9, reasoning, 32),
            "{format}"
        );
        // `scripted` has no price: tokens only.
        assert_eq!((totals.cost_usd, totals.unpriced_calls), (None, 1), "{format}");
    }
}

#[tokio::test]
async fn prices_default_for_known_models_and_the_users_price_wins_until_reset() {
    let f = fixture().await;
    let prices: Vec<ModelPrice> = f.call("usage_prices", Value::Null).await;
    let gpt = prices.iter().find(|p| p.model == "gpt-4o").unwrap();
    assert_eq!(gpt.source, PriceSource::Default);

    let prices = set_price(&f, "gpt-4o", 1.0, 2.0, None).await;
    let gpt = prices.iter().find(|p| p.model == "gpt-4o").unwrap();
    assert_eq!((gpt.input_usd, gpt.cached_input_usd, gpt.source), (1.0, None, PriceSource::Custom));
    let prices: Vec<ModelPrice> = f.call("usage_price_reset", json!({ "model": "gpt-4o" })).await;
    assert_eq!(prices.iter().find(|p| p.model == "gpt-4o").unwrap().source, PriceSource::Default);

    let again = f.engine.call("usage_price_reset", json!({ "model": "gpt-4o" })).await.unwrap_err();
    assert_eq!(again.kind, ErrorKind::NotFound);
    let negative = f.engine.call("usage_price_set", json!({ "model": "m", "inputUsd": -1, "outputUsd": 1 })).await;
    assert_eq!(negative.unwrap_err().field.as_deref(), Some("inputUsd"));
}

#[tokio::test]
async fn the_report_groups_by_day_model_and_provider_and_refuses_a_bad_period() {
    let f = fixture().await;
    let server = mock(None).await;
    let provider = f.provider(&server, "").await;
    set_price(&f, "scripted", 1.0, 1.0, None).await;
    let topic = topic_with(&f, &provider).await;
    for _ in 0..2 {
        server.push_script(Script::text(["ok"]).with_usage(500_000, 500_000));
        f.send(&topic, "hi").await;
    }
    // Deleting the topic keeps what it spent in the report.
    let _: () = f.call("topic_delete", json!({ "topicId": topic.id })).await;

    let report: UsageReport = f.call("usage_report", json!({})).await;
    assert_eq!(report.total.calls, 2);
    assert!(close(report.total.cost_usd.unwrap(), 2.0));
    assert_eq!(report.by_day.len(), 1);
    assert_eq!(report.by_model.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(), ["scripted"]);
    assert_eq!(report.by_provider.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(), ["Mock"]);
    let empty: UsageReport = f.call("usage_report", json!({ "from": "2000-01-01", "to": "2000-01-31" })).await;
    assert_eq!(empty.total.calls, 0);

    for (body, field) in [
        (json!({ "from": "yesterday" }), "from"),
        (json!({ "from": "2026-02-01", "to": "2026-01-01" }), "to"),
        (json!({ "utcOffsetMinutes": 100000 }), "utcOffsetMinutes"),
    ] {
        let error = f.engine.call("usage_report", body).await.unwrap_err();
        assert_eq!((error.kind, error.field.as_deref()), (ErrorKind::BadRequest, Some(field)));
    }
}

#[tokio::test]
async fn the_inspector_of_a_message_elsewhere_is_not_found() {
    let f = fixture().await;
    let topic = f.topic().await;
    let other = f.topic().await;
    let error =
        f.engine.call("usage_reply", json!({ "topicId": other.id, "messageId": "no-such-message" })).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotFound);
    let usage: TopicUsage = f.call("usage_topic", json!({ "topicId": topic.id })).await;
    assert_eq!((usage.total.calls, usage.replies.len()), (0, 0));
}
