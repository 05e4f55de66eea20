//! Tool approvals as the user meets them: answering an approval (then the reply goes
//! on), listing approvals across topics, the policy rules, and the audit log.

use std::sync::Arc;

use protocol::api::{
    ApprovalDecision, ApprovalScope, ApprovalsListRequest, AuditListRequest, ToolApprovalRespond, ToolRuleInput,
    UpdateToolRule,
};
use protocol::tool::{Approval, ApprovalState, PolicyRule, RuleCondition};
use protocol::{ApiError, ErrorKind, MessageId, TopicId};
use store::Store;
use store::tools::ApprovalAnswer;
use streams::{ListenerId, StreamManager};
use tools::schema::InputSchema;

use crate::resuming::{ResumeClaim, Resuming};
use crate::sessions::AgentSessions;
use crate::tools::Tools;
use crate::turns::Turns;

/// Why a question is denied at start-up when its reply was not waiting for it: Colloquy
/// stopped between recording the question and the reply's last write, so answering it
/// could resume nothing. The model reads it if the reply is continued.
pub(crate) const ORPHANED_BY_A_CRASH: &str = "Colloquy stopped before this question reached the user, so it was never \
     answered; the reply was interrupted and can be continued";

/// Answering approvals (then the reply goes on), the policy rules and the audit log.
pub(crate) struct Approvals {
    store: Store,
    streams: StreamManager,
    tools: Arc<Tools>,
    turns: Arc<Turns>,
    sessions: Arc<AgentSessions>,
    resuming: Arc<Resuming>,
}

impl Approvals {
    pub(crate) fn new(
        store: Store,
        streams: StreamManager,
        tools: Arc<Tools>,
        turns: Arc<Turns>,
        sessions: Arc<AgentSessions>,
        resuming: Arc<Resuming>,
    ) -> Self {
        Self { store, streams, tools, turns, sessions, resuming }
    }

    /// Records the user's answer. When it was the last open question of its reply, the
    /// reply goes on (the approved calls run). A second answer returns the first.
    pub(crate) async fn respond_approval(&self, request: ToolApprovalRespond) -> Result<Approval, ApiError> {
        let id = request.approval_id.trim();
        if id.is_empty() {
            return Err(ApiError::bad_request("approvalId", "must not be empty"));
        }
        if let Some(input) = &request.updated_input
            && !input.is_object()
        {
            return Err(ApiError::bad_request("updatedInput", "the edited arguments must be a JSON object"));
        }
        if let Some(reason) = &request.reason
            && reason.chars().count() > 2000
        {
            return Err(ApiError::bad_request("reason", "at most 2000 characters"));
        }
        if let Some(edited) = &request.updated_input
            && request.decision == ApprovalDecision::Approve
        {
            self.check_edited_input(id, edited).await?;
        }
        let rule_id = uuid::Uuid::now_v7().to_string();
        let scope = request.scope.unwrap_or(ApprovalScope::Once);
        let rule_conditions = if request.decision == ApprovalDecision::Approve && scope != ApprovalScope::Once {
            self.always_conditions(id, request.updated_input.as_ref()).await?
        } else {
            Vec::new()
        };
        let answer = ApprovalAnswer {
            approval_id: id,
            decided_by: protocol::message::Decider::User,
            decision: request.decision,
            scope,
            reason: request.reason.as_deref(),
            updated_input: request.updated_input.as_ref(),
            rule_id: &rule_id,
            rule_conditions,
        };
        let (approval, changed) = self.store.respond_approval(&answer).await?;
        if changed {
            tracing::info!(approval = %approval.id, tool = %approval.tool_name, state = ?approval.state, "approval answered");
            if crate::sessions::is_session(&approval.topic_id) {
                // The agent's turn is still running and waits for exactly this answer.
                // (or, after a restart, the agent is resumed to hear it).
                self.sessions.session_decided(&approval, answer.scope).await;
            } else {
                self.resume_if_answered(&approval.topic_id, &approval.message_id).await;
            }
        }
        Ok(approval)
    }

    /// Edited arguments must fit the tool's schema, as the model's own must: a bad edit is
    /// refused with what does not fit, and the approval stays open to be fixed. (An
    /// answered approval is left to the store, which returns the first answer.)
    async fn check_edited_input(&self, approval_id: &str, edited: &serde_json::Value) -> Result<(), ApiError> {
        let approval = self.store.get_approval(approval_id).await?;
        if approval.state != ApprovalState::Pending {
            return Ok(());
        }
        let catalog = self.tools.catalog().await;
        // A tool that is gone since cannot be checked; running it will say it is gone.
        let Some(tool) = catalog.iter().find(|t| t.tool.definition().name == approval.tool_name) else {
            return Ok(());
        };
        let Ok(schema) = InputSchema::compile(&tool.tool.definition().input_schema) else { return Ok(()) };
        schema.check(edited).map_err(|problems| {
            ApiError::bad_request(
                "updatedInput",
                format!("the edited arguments do not fit {}: {problems}", approval.tool_name),
            )
        })
    }

    /// What an "Always" answer to a pending approval covers: the conditions its tool puts
    /// on the rule, for the arguments that will run (`edited`, else the model's). A tool
    /// that is gone since gets a rule on its name alone, as before conditions existed.
    async fn always_conditions(
        &self,
        approval_id: &str,
        edited: Option<&serde_json::Value>,
    ) -> Result<Vec<RuleCondition>, ApiError> {
        let approval = self.store.get_approval(approval_id).await?;
        if approval.state != ApprovalState::Pending {
            // The store returns the first answer and saves no rule.
            return Ok(Vec::new());
        }
        let catalog = self.tools.catalog().await;
        let Some(entry) = catalog.iter().find(|t| t.tool.definition().name == approval.tool_name) else {
            return Ok(Vec::new());
        };
        Ok(entry.tool.always_conditions(edited.unwrap_or(&approval.input)))
    }

    /// Continues a reply whose approvals are all answered.
    async fn resume_if_answered(&self, topic_id: &TopicId, message_id: &str) {
        match self.store.pending_approvals_of(message_id).await {
            Ok(0) => {}
            Ok(_) => return,
            Err(err) => {
                tracing::error!(error = %err, "could not read the reply's approvals");
                return;
            }
        }
        // Answers that land together ("Allow all", two windows) all see none left: the
        // first resumes the reply; by the time it lets go, the reply is no longer waiting.
        let Some(_claim) = ResumeClaim::take(&self.resuming, message_id) else { return };
        let request =
            protocol::api::ReplyRequest { topic_id: topic_id.clone(), message_id: MessageId(message_id.to_owned()) };
        // Windows showing the topic follow the continued reply through the status feed.
        let (listener, _unheard) = self.streams.listener(ListenerId::unique(), topic_id);
        let resumed = match self.turns.prepare_resume(request).await {
            Ok(turn) => self.streams.open(turn, listener).await.map_err(crate::error::stream_error),
            Err(err) => Err(err),
        };
        match resumed {
            Ok(_) => {}
            // Another answer resumed it first.
            Err(err) if err.kind == ErrorKind::Conflict => {}
            Err(err) => {
                tracing::error!(error = %err, "the approved reply could not go on");
                // It must not keep waiting for answers it already has: Continue or Retry
                // (after fixing what failed) takes it on from its ledger.
                match self.store.interrupt_answered_reply(message_id).await {
                    Ok(true) => self.streams.status().publish(topic_id, protocol::TopicStatus::Error),
                    Ok(false) => {}
                    Err(err) => tracing::error!(error = %err, "could not mark the reply interrupted"),
                }
            }
        }
    }

    pub(crate) async fn list_approvals(&self, request: ApprovalsListRequest) -> Result<Vec<Approval>, ApiError> {
        if let Some(topic) = &request.topic_id {
            self.store.get_topic(topic).await?;
        }
        let pending_only = !request.all.unwrap_or(false);
        let Some(message_id) = &request.message_id else {
            return Ok(self.store.list_approvals(request.topic_id.as_ref(), pending_only).await?);
        };
        let mut approvals = self.store.list_approvals_of_message(message_id, pending_only).await?;
        if let Some(topic) = &request.topic_id {
            approvals.retain(|approval| &approval.topic_id == topic);
        }
        Ok(approvals)
    }

    pub(crate) async fn save_rule(&self, id: Option<String>, input: ToolRuleInput) -> Result<PolicyRule, ApiError> {
        let (id, created_at) = match id {
            Some(id) => {
                let existing = self.store.get_rule(&id).await?;
                (existing.id, existing.created_at)
            }
            None => (uuid::Uuid::now_v7().to_string(), store::now()),
        };
        if let protocol::tool::RuleScope::Topic { topic_id } = &input.scope {
            self.store.get_topic(topic_id).await.map_err(|e| match e {
                store::StoreError::NotFound { .. } => {
                    ApiError::bad_request("scope.topicId", format!("no topic {topic_id}"))
                }
                other => other.into(),
            })?;
        }
        let rule = PolicyRule {
            id,
            tool: input.tool.trim().to_owned(),
            conditions: input.conditions,
            decision: input.decision,
            scope: input.scope,
            expires_at: input.expires_at.map(|e| e.trim().to_owned()).filter(|e| !e.is_empty()),
            created_at,
        };
        tools::policy::validate(&rule).map_err(|e| ApiError::bad_request(e.field, e.message))?;
        self.store.save_rule(&rule).await?;
        Ok(rule)
    }

    pub(crate) async fn update_rule(&self, request: UpdateToolRule) -> Result<PolicyRule, ApiError> {
        self.save_rule(Some(request.id), request.rule).await
    }

    pub(crate) async fn list_audit(
        &self,
        request: AuditListRequest,
    ) -> Result<Vec<protocol::tool::AuditEntry>, ApiError> {
        let limit = request.limit.unwrap_or(200).clamp(1, 1000);
        Ok(self.store.list_audit(request.topic_id.as_ref(), limit).await?)
    }
}
