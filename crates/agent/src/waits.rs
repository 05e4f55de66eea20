//! The `approval_wait` spans of a continued reply.
//!
//! A turn ends while a call waits for the user (`AwaitingApproval`); the answer continues
//! the reply in a new turn. So a wait has no live span to time: its span is written when
//! the continued turn picks the answer up, as a child of that turn's `resumed` step, with
//! the wait's own start and end (when the question was asked, when it was answered). The
//! span goes straight to the OpenTelemetry tracer the `tracing` layer exports through (the
//! global one, which the binaries install), because a `tracing` span cannot be given a
//! start in the past. Without an exporter both the parent context and the global tracer
//! are no-ops. The log gets one line per wait.

use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, TraceContextExt as _, Tracer as _};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// A question the user (or a rule, after a restart) answered while the reply was
/// stopped, as the continued turn hears of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnsweredWait {
    pub approval_id: String,
    pub call_id: String,
    pub tool_name: String,
    /// `approved` or `denied`.
    pub decision: String,
    pub requested_at: SystemTime,
    pub decided_at: SystemTime,
}

impl AnsweredWait {
    fn waited_ms(&self) -> i64 {
        self.decided_at
            .duration_since(self.requested_at)
            .map_or(0, |waited| i64::try_from(waited.as_millis()).unwrap_or(i64::MAX))
    }
}

/// Writes one `approval_wait` span per answered wait, under the current `tracing` span.
pub(crate) fn record(waits: &[AnsweredWait]) {
    if waits.is_empty() {
        return;
    }
    let parent = tracing::Span::current().context();
    let tracer = opentelemetry::global::tracer("colloquy");
    for wait in waits {
        tracing::info!(
            approval = %wait.approval_id,
            tool = %wait.tool_name,
            decision = %wait.decision,
            waited_ms = wait.waited_ms(),
            "approval wait"
        );
        // No OpenTelemetry layer (no exporter configured): no trace to hang the span on.
        if !parent.span().span_context().is_valid() {
            continue;
        }
        let builder = tracer.span_builder("approval_wait").with_start_time(wait.requested_at).with_attributes([
            KeyValue::new("approval_id", wait.approval_id.clone()),
            KeyValue::new("call_id", wait.call_id.clone()),
            KeyValue::new("tool", wait.tool_name.clone()),
            KeyValue::new("decision", wait.decision.clone()),
            KeyValue::new("waited_ms", wait.waited_ms()),
        ]);
        tracer.build_with_context(builder, &parent).end_with_timestamp(wait.decided_at);
    }
}
