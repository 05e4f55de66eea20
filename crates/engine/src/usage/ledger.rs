//! The agent loop's facts, into the usage ledger: one row per model call, and each tool
//! call's run time. A caller hook of the loop: it runs at step boundaries, never on the
//! chunk path, and a write that fails is logged while the reply goes on.

use std::time::SystemTime;

use agent::hooks::{AgentHooks, HookError, ModelCallEnd, ModelCallReport, ToolExecutionEnd};
use async_trait::async_trait;
use store::Store;
use store::usage::{Tokens, UsageCall, UsageKind};

/// Whose calls these are: the reply and the model that makes it.
pub(crate) struct LedgerHook {
    pub store: Store,
    pub topic_id: String,
    pub message_id: String,
    pub provider_id: String,
    pub provider_name: String,
    pub model: String,
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn timestamp(at: SystemTime) -> String {
    store::timestamp(time::OffsetDateTime::from(at))
}

#[async_trait]
impl AgentHooks for LedgerHook {
    fn name(&self) -> &str {
        "usage-ledger"
    }

    async fn on_model_call(&self, call: &ModelCallReport) -> Result<(), HookError> {
        let usage = call.usage.unwrap_or_default();
        let row = UsageCall {
            topic_id: self.topic_id.clone(),
            message_id: self.message_id.clone(),
            kind: UsageKind::Model,
            step: call.step,
            attempt: call.attempt,
            provider_id: Some(self.provider_id.clone()),
            provider_name: self.provider_name.clone(),
            model: self.model.clone(),
            tokens: Tokens {
                input: usage.input_tokens,
                output: usage.output_tokens,
                reasoning: usage.reasoning_tokens,
                cached: usage.cached_tokens,
            },
            request_messages: Some(call.request_messages),
            request_chars: Some(call.request_chars),
            started_at: timestamp(call.started_at),
            ttft_ms: call.time_to_first_token.map(millis),
            duration_ms: millis(call.duration),
            provider_retries: call.provider_retries,
            finish: call.end.as_str().to_owned(),
            error: match &call.end {
                ModelCallEnd::Failed(message) => Some(message.clone()),
                _ => None,
            },
            reported_cost_usd: None,
        };
        self.store.record_usage(&row).await.map_err(|e| HookError(format!("the usage ledger: {e}")))
    }

    async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) -> Result<(), HookError> {
        let started = SystemTime::now().checked_sub(event.duration).unwrap_or_else(SystemTime::now);
        self.store
            .record_tool_run(&self.message_id, &event.call_id, &timestamp(started), millis(event.duration))
            .await
            .map_err(|e| HookError(format!("the tool call's run time: {e}")))
    }
}
