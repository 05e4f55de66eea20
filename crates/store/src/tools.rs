//! Tools: the policy rules, which tools are switched off, the tool-call ledger, the
//! approvals users answer, and the audit log.
//!
//! Invariants:
//! - a ledger row only moves forward (`requested → approved | denied → running → done |
//!   error`), and `running` is entered by exactly one `UPDATE … WHERE state = 'approved'`,
//!   so a call runs at most once whoever asks;
//! - answering an approval writes the approval, the ledger row, the audit entry, the rule
//!   it creates and the message's tool part in one transaction; answering it again
//!   changes nothing and returns the first answer.

use std::collections::HashSet;

use protocol::TopicId;
use protocol::api::{ApprovalDecision, ApprovalScope};
use protocol::message::Decider;
use protocol::tool::{Approval, ApprovalState, AuditEntry, PolicyDecision, PolicyRule, RuleCondition, RuleScope};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use crate::{Result, Store, StoreError, now};

/// A ledger row.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerCall {
    pub message_id: String,
    pub call_id: String,
    pub tool_name: String,
    pub input: Value,
    pub state: LedgerState,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub reason: Option<String>,
    /// The pending (or answered) approval of this call, if it needed one.
    pub approval_id: Option<String>,
    /// Who decided it: `user`, `app`, `rule:<id>` or `default` (`None`: recorded before
    /// this was kept).
    pub decided_by: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerState {
    Requested,
    Approved,
    Denied,
    Running,
    Done,
    Error,
}

impl LedgerState {
    fn parse(text: &str) -> Self {
        match text {
            "requested" => LedgerState::Requested,
            "approved" => LedgerState::Approved,
            "denied" => LedgerState::Denied,
            "running" => LedgerState::Running,
            "done" => LedgerState::Done,
            _ => LedgerState::Error,
        }
    }
}

/// A new call and what the policy said about it.
#[derive(Clone, Debug)]
pub struct NewCall<'a> {
    pub topic_id: &'a TopicId,
    pub message_id: &'a str,
    pub call_id: &'a str,
    pub tool_name: &'a str,
    pub input: &'a Value,
}

#[derive(Clone, Debug)]
pub enum CallDecision<'a> {
    /// Allowed by `actor` (`rule:<id>` or `default`).
    Allow {
        actor: &'a str,
    },
    Deny {
        actor: &'a str,
        reason: Option<&'a str>,
    },
    /// The user decides; the approval gets this id. `reason`: why it asks although the
    /// rules would not have (goes to the audit log).
    Ask {
        approval_id: &'a str,
        preview: Option<&'a str>,
        actor: &'a str,
        reason: Option<&'a str>,
    },
}

/// Where a call stands after [`Store::record_call`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    Approved,
    Denied {
        reason: Option<String>,
    },
    Waiting {
        approval_id: String,
    },
    /// Past its decision (running, done, failed): it must not run again.
    Settled,
}

/// A call [`Store::begin_call`] let start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// Who let it run: `user`, `rule:<id>` or `default`; `None` for a call recorded before
    /// this was kept.
    pub decided_by: Option<String>,
}

fn encode(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode(e.to_string()))
}

fn json_column(row: &SqliteRow, column: &str) -> Result<Option<Value>> {
    let text: Option<String> = row.try_get(column)?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

fn rule_from_row(row: &SqliteRow) -> Result<PolicyRule> {
    let decision = match row.try_get::<String, _>("decision")?.as_str() {
        "allow" => PolicyDecision::Allow,
        "deny" => PolicyDecision::Deny,
        _ => PolicyDecision::Ask,
    };
    let conditions: Vec<RuleCondition> =
        serde_json::from_str(&row.try_get::<String, _>("conditions")?).unwrap_or_default();
    let scope = match row.try_get::<Option<String>, _>("topic_id")? {
        Some(topic) => RuleScope::Topic { topic_id: TopicId(topic) },
        None => RuleScope::Global,
    };
    Ok(PolicyRule {
        id: row.try_get("id")?,
        tool: row.try_get("tool")?,
        conditions,
        decision,
        scope,
        expires_at: row.try_get("expires_at")?,
        created_at: row.try_get("created_at")?,
    })
}

fn approval_from_row(row: &SqliteRow) -> Result<Approval> {
    let state = match row.try_get::<String, _>("state")?.as_str() {
        "approved" => ApprovalState::Approved,
        "denied" => ApprovalState::Denied,
        _ => ApprovalState::Pending,
    };
    Ok(Approval {
        id: row.try_get("id")?,
        topic_id: TopicId(row.try_get("topic_id")?),
        topic_title: row.try_get::<Option<String>, _>("title")?.unwrap_or_default(),
        message_id: row.try_get("message_id")?,
        tool_call_id: row.try_get("call_id")?,
        tool_name: row.try_get("tool_name")?,
        input: json_column(row, "updated_input")?.or(json_column(row, "input")?).unwrap_or(Value::Null),
        preview: row.try_get("preview")?,
        state,
        reason: row.try_get("reason")?,
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
    })
}

/// The approval query's head (a macro so queries stay `&'static str`).
macro_rules! approval_select {
    () => {
        "SELECT a.id, a.topic_id, t.title, a.message_id, a.call_id, a.tool_name, a.input, \
         a.updated_input, a.preview, a.state, a.reason, a.created_at, a.decided_at \
         FROM approvals a LEFT JOIN topics t ON t.id = a.topic_id"
    };
}

/// Replies `paused/awaiting_approval` with no pending approval become `paused/interrupted`
/// (`?1` is the time).
macro_rules! answered_waiting_reply {
    () => {
        "UPDATE messages SET status_reason = 'interrupted', updated_at = ?1 \
         WHERE status = 'paused' AND status_reason = 'awaiting_approval' AND NOT EXISTS \
             (SELECT 1 FROM approvals a WHERE a.message_id = messages.id AND a.state = 'pending')"
    };
}

async fn audit(
    tx: &mut sqlx::SqliteConnection,
    actor: &str,
    decision: PolicyDecision,
    call: (&str, &Value, &str, &str),
    reason: Option<&str>,
) -> Result<()> {
    let (tool_name, input, topic_id, call_id) = call;
    sqlx::query(
        "INSERT INTO tool_audit (at, actor, decision, tool_name, input, topic_id, call_id, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(now())
    .bind(actor)
    .bind(decision.as_str())
    .bind(tool_name)
    .bind(encode(input)?)
    .bind(topic_id)
    .bind(call_id)
    .bind(reason)
    .execute(tx)
    .await?;
    Ok(())
}

impl Store {
    // ---- rules -------------------------------------------------------------------------

    pub async fn list_rules(&self) -> Result<Vec<PolicyRule>> {
        let rows = sqlx::query("SELECT * FROM tool_rules ORDER BY created_at, id").fetch_all(self.pool()).await?;
        rows.iter().map(rule_from_row).collect()
    }

    /// Saves `rule` (new, or replacing the rule with its id).
    pub async fn save_rule(&self, rule: &PolicyRule) -> Result<()> {
        let topic = match &rule.scope {
            RuleScope::Global => None,
            RuleScope::Topic { topic_id } => Some(topic_id.as_str()),
        };
        sqlx::query(
            "INSERT INTO tool_rules (id, tool, conditions, decision, topic_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET tool = excluded.tool, conditions = excluded.conditions, decision = excluded.decision, \
             topic_id = excluded.topic_id, expires_at = excluded.expires_at",
        )
        .bind(&rule.id)
        .bind(&rule.tool)
        .bind(encode(&rule.conditions)?)
        .bind(rule.decision.as_str())
        .bind(topic)
        .bind(&rule.expires_at)
        .bind(&rule.created_at)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    pub async fn get_rule(&self, id: &str) -> Result<PolicyRule> {
        let row = sqlx::query("SELECT * FROM tool_rules WHERE id = ?").bind(id).fetch_optional(self.pool()).await?;
        match row {
            Some(row) => rule_from_row(&row),
            None => Err(StoreError::NotFound { what: "rule", id: id.to_owned() }),
        }
    }

    pub async fn delete_rule(&self, id: &str) -> Result<()> {
        let done =
            sqlx::query("DELETE FROM tool_rules WHERE id = ?").bind(id).execute(&mut *self.writer().await?).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound { what: "rule", id: id.to_owned() });
        }
        Ok(())
    }

    // ---- tools switched off ------------------------------------------------------------

    pub async fn disabled_tools(&self) -> Result<HashSet<String>> {
        let names: Vec<String> =
            sqlx::query_scalar("SELECT tool_name FROM tool_settings WHERE enabled = 0").fetch_all(self.pool()).await?;
        Ok(names.into_iter().collect())
    }

    pub async fn set_tool_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        sqlx::query(
            "INSERT INTO tool_settings (tool_name, enabled) VALUES (?, ?) ON CONFLICT (tool_name) DO UPDATE SET enabled = excluded.enabled",
        )
        .bind(name)
        .bind(enabled)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    // ---- the ledger --------------------------------------------------------------------

    /// Records a new call with the policy's decision (and the approval it needs). A call
    /// recorded before keeps its first record: its current standing is returned.
    pub async fn record_call(&self, call: &NewCall<'_>, decision: &CallDecision<'_>) -> Result<Recorded> {
        let mut tx = self.write().await?;
        let existing = sqlx::query("SELECT state, reason FROM tool_calls WHERE message_id = ? AND call_id = ?")
            .bind(call.message_id)
            .bind(call.call_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existing {
            let state = LedgerState::parse(&row.try_get::<String, _>("state")?);
            let reason: Option<String> = row.try_get("reason")?;
            let recorded = match state {
                LedgerState::Approved => Recorded::Approved,
                LedgerState::Denied => Recorded::Denied { reason },
                LedgerState::Requested => {
                    let approval: Option<String> = sqlx::query_scalar(
                        "SELECT id FROM approvals WHERE message_id = ? AND call_id = ? ORDER BY created_at DESC LIMIT 1",
                    )
                    .bind(call.message_id)
                    .bind(call.call_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    match approval {
                        Some(approval_id) => Recorded::Waiting { approval_id },
                        None => Recorded::Settled,
                    }
                }
                _ => Recorded::Settled,
            };
            return Ok(recorded);
        }
        let now = now();
        let (state, reason, recorded, decided_by) = match decision {
            CallDecision::Allow { actor } => ("approved", None, Recorded::Approved, Some(*actor)),
            CallDecision::Deny { reason, actor } => (
                "denied",
                reason.map(str::to_owned),
                Recorded::Denied { reason: reason.map(str::to_owned) },
                Some(*actor),
            ),
            CallDecision::Ask { approval_id, .. } => {
                ("requested", None, Recorded::Waiting { approval_id: (*approval_id).to_owned() }, None)
            }
        };
        sqlx::query(
            "INSERT INTO tool_calls (message_id, call_id, topic_id, tool_name, input, state, reason, created_at, updated_at, decided_by) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(call.message_id)
        .bind(call.call_id)
        .bind(call.topic_id.as_str())
        .bind(call.tool_name)
        .bind(encode(call.input)?)
        .bind(state)
        .bind(&reason)
        .bind(&now)
        .bind(&now)
        .bind(decided_by)
        .execute(&mut *tx)
        .await?;
        let facts = (call.tool_name, call.input, call.topic_id.as_str(), call.call_id);
        match decision {
            CallDecision::Allow { actor } => audit(&mut tx, actor, PolicyDecision::Allow, facts, None).await?,
            CallDecision::Deny { actor, reason } => audit(&mut tx, actor, PolicyDecision::Deny, facts, *reason).await?,
            CallDecision::Ask { approval_id, preview, actor, reason } => {
                sqlx::query(
                    "INSERT INTO approvals (id, topic_id, message_id, call_id, tool_name, input, preview, state, created_at) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                )
                .bind(approval_id)
                .bind(call.topic_id.as_str())
                .bind(call.message_id)
                .bind(call.call_id)
                .bind(call.tool_name)
                .bind(encode(call.input)?)
                .bind(preview)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
                audit(&mut tx, actor, PolicyDecision::Ask, facts, *reason).await?;
            }
        }
        tx.commit().await?;
        Ok(recorded)
    }

    /// `approved → running`, with who allowed it. `None` when the call is not approved (any
    /// more): it ran, is running, or was never allowed. The only way a call starts; one
    /// statement, in this process's turn to write like every write.
    pub async fn begin_call(&self, message_id: &str, call_id: &str) -> Result<Option<Started>> {
        let row = sqlx::query(
            "UPDATE tool_calls SET state = 'running', updated_at = ? WHERE message_id = ? AND call_id = ? AND state = 'approved' \
             RETURNING decided_by",
        )
        .bind(now())
        .bind(message_id)
        .bind(call_id)
        .fetch_optional(&mut *self.writer().await?)
        .await?;
        row.map(|row| Ok(Started { decided_by: row.try_get("decided_by")? })).transpose()
    }

    /// `running → done` with the output, or `running → error` with the error text.
    pub async fn finish_call(
        &self,
        message_id: &str,
        call_id: &str,
        outcome: std::result::Result<&Value, &str>,
    ) -> Result<()> {
        let (state, output, error) = match outcome {
            Ok(output) => ("done", Some(encode(output)?), None),
            Err(error) => ("error", None, Some(error.to_owned())),
        };
        sqlx::query(
            "UPDATE tool_calls SET state = ?, output = ?, error = ?, updated_at = ? WHERE message_id = ? AND call_id = ? AND state = 'running'",
        )
        .bind(state)
        .bind(output)
        .bind(error)
        .bind(now())
        .bind(message_id)
        .bind(call_id)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// The ledger rows of one reply, oldest first, each with its approval's id.
    pub async fn calls_of_message(&self, message_id: &str) -> Result<Vec<LedgerCall>> {
        let rows = sqlx::query(
            "SELECT c.*, (SELECT a.id FROM approvals a WHERE a.message_id = c.message_id AND a.call_id = c.call_id \
                 ORDER BY a.created_at DESC LIMIT 1) AS approval_id \
             FROM tool_calls c WHERE c.message_id = ? ORDER BY c.rowid",
        )
        .bind(message_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(LedgerCall {
                    message_id: row.try_get("message_id")?,
                    call_id: row.try_get("call_id")?,
                    tool_name: row.try_get("tool_name")?,
                    input: json_column(row, "input")?.unwrap_or(Value::Null),
                    state: LedgerState::parse(&row.try_get::<String, _>("state")?),
                    output: json_column(row, "output")?,
                    error: row.try_get("error")?,
                    reason: row.try_get("reason")?,
                    approval_id: row.try_get("approval_id")?,
                    decided_by: row.try_get("decided_by")?,
                })
            })
            .collect()
    }

    /// At start-up: calls left `running` by a crash become errors. They may or may not
    /// have done their work, and at most once means they are never started again.
    pub async fn recover_running_calls(&self) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE tool_calls SET state = 'error', error = 'Colloquy stopped while this call was running; it is not run again (it may or may not have finished)', \
             updated_at = ? WHERE state = 'running'",
        )
        .bind(now())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected())
    }

    // ---- approvals ---------------------------------------------------------------------

    pub async fn list_approvals(&self, topic: Option<&TopicId>, pending_only: bool) -> Result<Vec<Approval>> {
        let rows = sqlx::query(concat!(
            approval_select!(),
            " WHERE (?1 IS NULL OR a.topic_id = ?1) AND (?2 = 0 OR a.state = 'pending') ORDER BY a.created_at, a.rowid"
        ))
        .bind(topic.map(TopicId::as_str))
        .bind(pending_only)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(approval_from_row).collect()
    }

    /// The approvals of one reply, oldest first (through `approvals_by_message`).
    pub async fn list_approvals_of_message(&self, message_id: &str, pending_only: bool) -> Result<Vec<Approval>> {
        let rows = sqlx::query(concat!(
            approval_select!(),
            " WHERE a.message_id = ?1 AND (?2 = 0 OR a.state = 'pending') ORDER BY a.created_at, a.rowid"
        ))
        .bind(message_id)
        .bind(pending_only)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(approval_from_row).collect()
    }

    pub async fn get_approval(&self, id: &str) -> Result<Approval> {
        let row =
            sqlx::query(concat!(approval_select!(), " WHERE a.id = ?")).bind(id).fetch_optional(self.pool()).await?;
        match row {
            Some(row) => approval_from_row(&row),
            None => Err(StoreError::NotFound { what: "approval", id: id.to_owned() }),
        }
    }

    /// How many approvals of a reply still wait.
    pub async fn pending_approvals_of(&self, message_id: &str) -> Result<u64> {
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM approvals WHERE message_id = ? AND state = 'pending'")
                .bind(message_id)
                .fetch_one(self.pool())
                .await?;
        Ok(count.max(0) as u64)
    }

    /// Records an answer (the user's, or the app's at start-up), all in one transaction: the approval, the ledger row (with
    /// the edited input), the audit entry, a rule for a topic or global scope, and the
    /// reply's tool part. The second answer to the same approval changes nothing: it gets
    /// the first one back, with `false`.
    pub async fn respond_approval(&self, answer: &ApprovalAnswer<'_>) -> Result<(Approval, bool)> {
        let mut tx = self.write().await?;
        let row = sqlx::query(concat!(approval_select!(), " WHERE a.id = ?"))
            .bind(answer.approval_id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Err(StoreError::NotFound { what: "approval", id: answer.approval_id.to_owned() });
        };
        let approval = approval_from_row(&row)?;
        if approval.state != ApprovalState::Pending {
            return Ok((approval, false));
        }
        let now = now();
        let approved = answer.decision == ApprovalDecision::Approve;
        let input = match (approved, answer.updated_input) {
            (true, Some(edited)) => edited.clone(),
            _ => approval.input.clone(),
        };
        let reason = answer.reason.map(str::trim).filter(|r| !r.is_empty());
        sqlx::query(
            "UPDATE approvals SET state = ?, scope = ?, reason = ?, updated_input = ?, decided_at = ? WHERE id = ? AND state = 'pending'",
        )
        .bind(if approved { "approved" } else { "denied" })
        .bind(answer.scope.as_str())
        .bind(reason)
        .bind(match (approved, answer.updated_input) {
            (true, Some(edited)) => Some(encode(edited)?),
            _ => None,
        })
        .bind(&now)
        .bind(answer.approval_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE tool_calls SET state = ?, input = ?, reason = ?, updated_at = ?, decided_by = ? WHERE message_id = ? AND call_id = ? AND state = 'requested'",
        )
        .bind(if approved { "approved" } else { "denied" })
        .bind(encode(&input)?)
        .bind(reason)
        .bind(&now)
        .bind(answer.decided_by.as_str())
        .bind(&approval.message_id)
        .bind(&approval.tool_call_id)
        .execute(&mut *tx)
        .await?;
        let decision = if approved { PolicyDecision::Allow } else { PolicyDecision::Deny };
        let facts = (approval.tool_name.as_str(), &input, approval.topic_id.as_str(), approval.tool_call_id.as_str());
        audit(&mut tx, answer.decided_by.as_str(), decision, facts, reason).await?;
        if approved && answer.scope != ApprovalScope::Once {
            let topic = (answer.scope == ApprovalScope::Topic).then(|| approval.topic_id.as_str());
            sqlx::query(
                "INSERT INTO tool_rules (id, tool, conditions, decision, topic_id, expires_at, created_at) VALUES (?, ?, ?, 'allow', ?, NULL, ?)",
            )
            .bind(answer.rule_id)
            .bind(&approval.tool_name)
            .bind(encode(&answer.rule_conditions)?)
            .bind(topic)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        let mut approval_json = serde_json::json!({ "id": approval.id, "approved": approved, "reason": reason });
        if answer.decided_by != Decider::User {
            approval_json["decidedBy"] = Value::String(answer.decided_by.as_str().into());
        }
        update_tool_part(&mut tx, &approval.message_id, &approval.tool_call_id, |part| {
            part["state"] = Value::String("approval-responded".into());
            part["approval"] = approval_json.clone();
            part["input"] = input.clone();
        })
        .await?;
        tx.commit().await?;
        let decided = Approval {
            state: if approved { ApprovalState::Approved } else { ApprovalState::Denied },
            reason: reason.map(str::to_owned),
            input,
            decided_at: Some(now),
            ..approval
        };
        Ok((decided, true))
    }

    /// Denies every pending approval of a topic (its reply was stopped), with the same
    /// writes as a user's denial. Returns the reply ids whose approvals were denied.
    pub async fn deny_pending_approvals(&self, topic_id: &TopicId, reason: &str) -> Result<Vec<String>> {
        let pending = self.list_approvals(Some(topic_id), true).await?;
        let mut messages = Vec::new();
        for approval in pending {
            let answer = ApprovalAnswer {
                approval_id: &approval.id,
                // The user stopped the reply.
                decided_by: Decider::User,
                decision: ApprovalDecision::Deny,
                scope: ApprovalScope::Once,
                reason: Some(reason),
                updated_input: None,
                rule_id: "",
                rule_conditions: Vec::new(),
            };
            let (_, changed) = self.respond_approval(&answer).await?;
            if changed && !messages.contains(&approval.message_id) {
                messages.push(approval.message_id);
            }
        }
        Ok(messages)
    }

    /// Marks a reply stopped while it waited for approvals (their denials are written).
    pub async fn stop_awaiting_reply(&self, message_id: &str) -> Result<()> {
        sqlx::query(
            "UPDATE messages SET status = 'paused', status_reason = 'user_stop', updated_at = ? \
             WHERE id = ? AND status = 'paused' AND status_reason = 'awaiting_approval'",
        )
        .bind(now())
        .bind(message_id)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// After a restart: a reply whose agent was waiting for an approval when the last run
    /// ended (recovery made it `paused`) waits for that approval again, as a chat reply
    /// does (`awaiting_approval`); its open approvals show `note` on their card, before
    /// the preview they had (a diff stays whole after a blank line; a second restart adds
    /// it once). True when the reply was changed.
    pub async fn await_approval_again(&self, message_id: &str, note: &str) -> Result<bool> {
        let mut writer = self.writer().await?;
        let result = sqlx::query(
            "UPDATE messages SET status = 'paused', status_reason = 'awaiting_approval', updated_at = ? \
             WHERE id = ? AND status = 'paused'",
        )
        .bind(now())
        .bind(message_id)
        .execute(&mut *writer)
        .await?;
        if result.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE approvals SET preview = CASE WHEN preview IS NULL OR preview = '' THEN ?1 \
             ELSE ?1 || char(10) || char(10) || preview END \
             WHERE message_id = ?2 AND state = 'pending' AND (preview IS NULL OR instr(preview, ?1) = 0)",
        )
        .bind(note)
        .bind(message_id)
        .execute(&mut *writer)
        .await?;
        Ok(true)
    }

    /// At start-up, after [`Store::recover_interrupted`]: approvals and replies a crash left
    /// out of step with each other (the question and the reply's waiting state are written
    /// by separate transactions, and so are an answer and the reply's resume).
    ///
    /// - A pending approval whose reply does not wait for it (a kill fell after the question
    ///   was recorded but before the reply's final write, so the reply came back
    ///   `interrupted`) can never be acted on: it is denied with `orphan_reason`, by the app
    ///   ([`Decider::App`]: the audit log's actor and the ledger's `decided_by` are `app`), so no card stays that answering would not resume.
    /// - A reply `paused/awaiting_approval` with no pending approval left (a kill fell after
    ///   its last answer was committed but before it resumed) becomes `paused/interrupted`:
    ///   Continue takes it on, and runs or reports each call as the ledger recorded it.
    pub async fn recover_approvals(&self, orphan_reason: &str) -> Result<RecoveredApprovals> {
        let orphans: Vec<String> = sqlx::query_scalar(
            "SELECT a.id FROM approvals a LEFT JOIN messages m ON m.id = a.message_id \
             WHERE a.state = 'pending' AND (m.id IS NULL OR m.status <> 'paused' \
                 OR m.status_reason IS NOT 'awaiting_approval') \
             ORDER BY a.created_at, a.rowid",
        )
        .fetch_all(self.pool())
        .await?;
        let mut settled = 0;
        for approval_id in &orphans {
            let answer = ApprovalAnswer {
                approval_id,
                decided_by: Decider::App,
                decision: ApprovalDecision::Deny,
                scope: ApprovalScope::Once,
                reason: Some(orphan_reason),
                updated_input: None,
                rule_id: "",
                rule_conditions: Vec::new(),
            };
            if self.respond_approval(&answer).await?.1 {
                settled += 1;
            }
        }
        let unstuck = sqlx::query(concat!(answered_waiting_reply!(), " AND (?2 IS NULL OR id = ?2)"))
            .bind(now())
            .bind(None::<&str>)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(RecoveredApprovals { settled, made_continuable: unstuck.rows_affected() })
    }

    /// A reply whose questions are all answered but which could not go on (its model's
    /// provider was removed, …) stops waiting: it becomes `paused/interrupted`, offered
    /// Continue and Retry. Nothing changes while a question of it is pending. True if it
    /// changed.
    pub async fn interrupt_answered_reply(&self, message_id: &str) -> Result<bool> {
        let done = sqlx::query(concat!(answered_waiting_reply!(), " AND (?2 IS NULL OR id = ?2)"))
            .bind(now())
            .bind(message_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    // ---- audit -------------------------------------------------------------------------

    pub async fn list_audit(&self, topic: Option<&TopicId>, limit: u32) -> Result<Vec<AuditEntry>> {
        let query = if topic.is_some() {
            "SELECT * FROM tool_audit WHERE topic_id = ? ORDER BY id DESC LIMIT ?"
        } else {
            "SELECT * FROM tool_audit ORDER BY id DESC LIMIT ?"
        };
        let mut q = sqlx::query(query);
        if let Some(topic) = topic {
            q = q.bind(topic.as_str());
        }
        let rows = q.bind(i64::from(limit)).fetch_all(self.pool()).await?;
        rows.iter()
            .map(|row| {
                let decision = match row.try_get::<String, _>("decision")?.as_str() {
                    "allow" => PolicyDecision::Allow,
                    "deny" => PolicyDecision::Deny,
                    _ => PolicyDecision::Ask,
                };
                Ok(AuditEntry {
                    id: row.try_get("id")?,
                    at: row.try_get("at")?,
                    actor: row.try_get("actor")?,
                    decision,
                    tool_name: row.try_get("tool_name")?,
                    input: json_column(row, "input")?.unwrap_or(Value::Null),
                    topic_id: TopicId(row.try_get("topic_id")?),
                    tool_call_id: row.try_get("call_id")?,
                    reason: row.try_get("reason")?,
                })
            })
            .collect()
    }
}

/// What [`Store::recover_approvals`] repaired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveredApprovals {
    /// Pending approvals of replies that did not wait for them, now denied.
    pub settled: u64,
    /// Replies waiting with every question answered, now `paused/interrupted`.
    pub made_continuable: u64,
}

/// An answer to one approval.
#[derive(Clone, Debug)]
pub struct ApprovalAnswer<'a> {
    pub approval_id: &'a str,
    pub decided_by: Decider,
    pub decision: ApprovalDecision,
    pub scope: ApprovalScope,
    pub reason: Option<&'a str>,
    pub updated_input: Option<&'a Value>,
    /// The id of the rule an "always" answer creates.
    pub rule_id: &'a str,
    /// What that rule covers (none: every call of the tool).
    pub rule_conditions: Vec<RuleCondition>,
}

/// Changes the `dynamic-tool` part of `call_id` in a stored reply, in place.
async fn update_tool_part(
    tx: &mut sqlx::SqliteConnection,
    message_id: &str,
    call_id: &str,
    change: impl Fn(&mut Value),
) -> Result<()> {
    let parts: Option<String> =
        sqlx::query_scalar("SELECT parts FROM messages WHERE id = ?").bind(message_id).fetch_optional(&mut *tx).await?;
    let Some(parts) = parts else { return Ok(()) };
    let Ok(mut parts) = serde_json::from_str::<Vec<Value>>(&parts) else { return Ok(()) };
    let mut changed = false;
    for part in &mut parts {
        if part.get("type").and_then(Value::as_str) == Some("dynamic-tool")
            && part.get("toolCallId").and_then(Value::as_str) == Some(call_id)
        {
            change(part);
            changed = true;
        }
    }
    if changed {
        sqlx::query("UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?")
            .bind(encode(&parts)?)
            .bind(now())
            .bind(message_id)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{AssistantSlot, NewTurn};
    use crate::test_support::store;
    use protocol::{MessageId, ModelRef, ProviderId, TurnId, UiMessage};
    use serde_json::json;

    /// A topic with one reply whose parts hold a tool part for `c1`.
    async fn reply(store: &Store) -> (TopicId, String) {
        let topic = store.create_topic("t", None).await.unwrap();
        let reply = MessageId::new();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.id.clone(),
                turn_id: TurnId::new(),
                user_message_id: MessageId::new(),
                user_parts: UiMessage::user_text("", "go").parts,
                edit_of: None,
                assistants: vec![AssistantSlot {
                    message_id: reply.clone(),
                    model: ModelRef { provider_id: ProviderId("p".into()), model: "m".into() },
                    metadata: json!({}),
                }],
            })
            .await
            .unwrap();
        let parts = json!([{"type": "dynamic-tool", "toolName": "write_file", "toolCallId": "c1", "state": "approval-requested",
                            "input": {"path": "a"}, "approval": {"id": "ap1"}}]);
        sqlx::query(
            "UPDATE messages SET parts = ?, status = 'paused', status_reason = 'awaiting_approval' WHERE id = ?",
        )
        .bind(parts.to_string())
        .bind(reply.as_str())
        .execute(store.pool())
        .await
        .unwrap();
        (topic.id, reply.to_string())
    }

    fn call<'a>(topic: &'a TopicId, message: &'a str, call_id: &'a str, input: &'a Value) -> NewCall<'a> {
        NewCall { topic_id: topic, message_id: message, call_id, tool_name: "write_file", input }
    }

    fn answer(decision: ApprovalDecision, scope: ApprovalScope) -> ApprovalAnswer<'static> {
        ApprovalAnswer {
            decided_by: Decider::User,
            approval_id: "ap1",
            decision,
            scope,
            reason: None,
            updated_input: None,
            rule_id: "rule-1",
            rule_conditions: Vec::new(),
        }
    }

    #[tokio::test]
    async fn an_allowed_call_starts_once_however_often_it_is_begun() {
        let (store, _dir) = store().await;
        let (topic, message) = reply(&store).await;
        let input = json!({"path": "a"});
        let recorded = store
            .record_call(&call(&topic, &message, "c1", &input), &CallDecision::Allow { actor: "default" })
            .await
            .unwrap();
        assert_eq!(recorded, Recorded::Approved);
        assert_eq!(
            store.begin_call(&message, "c1").await.unwrap(),
            Some(Started { decided_by: Some("default".into()) })
        );
        assert!(store.begin_call(&message, "c1").await.unwrap().is_none(), "a second begin never runs it again");
        store.finish_call(&message, "c1", Ok(&json!({"content": []}))).await.unwrap();
        assert!(store.begin_call(&message, "c1").await.unwrap().is_none());
        // Recording it again keeps the first record.
        let again = store
            .record_call(&call(&topic, &message, "c1", &input), &CallDecision::Deny { actor: "x", reason: None })
            .await
            .unwrap();
        assert_eq!(again, Recorded::Settled);
        let calls = store.calls_of_message(&message).await.unwrap();
        assert_eq!((calls[0].state, calls[0].output.clone()), (LedgerState::Done, Some(json!({"content": []}))));
        let audit = store.list_audit(Some(&topic), 10).await.unwrap();
        assert_eq!((audit.len(), audit[0].actor.as_str(), audit[0].decision), (1, "default", PolicyDecision::Allow));
    }

    #[tokio::test]
    async fn an_answer_is_written_once_with_the_edited_input_the_rule_and_the_part() {
        let (store, _dir) = store().await;
        let (topic, message) = reply(&store).await;
        let input = json!({"path": "a"});
        let decision =
            CallDecision::Ask { approval_id: "ap1", preview: Some("+hello"), actor: "default", reason: None };
        assert_eq!(
            store.record_call(&call(&topic, &message, "c1", &input), &decision).await.unwrap(),
            Recorded::Waiting { approval_id: "ap1".into() }
        );
        let pending = store.list_approvals(None, true).await.unwrap();
        assert_eq!(
            (pending.len(), pending[0].topic_title.as_str(), pending[0].preview.as_deref()),
            (1, "t", Some("+hello"))
        );
        assert!(store.begin_call(&message, "c1").await.unwrap().is_none(), "nothing runs before the answer");

        let edited = json!({"path": "b"});
        let first =
            ApprovalAnswer { updated_input: Some(&edited), ..answer(ApprovalDecision::Approve, ApprovalScope::Topic) };
        let (approval, changed) = store.respond_approval(&first).await.unwrap();
        assert!(changed);
        assert_eq!((approval.state, approval.input.clone()), (ApprovalState::Approved, edited.clone()));
        let (again, changed) =
            store.respond_approval(&answer(ApprovalDecision::Deny, ApprovalScope::Once)).await.unwrap();
        assert!(!changed, "the second answer changes nothing");
        assert_eq!(again.state, ApprovalState::Approved);

        let calls = store.calls_of_message(&message).await.unwrap();
        assert_eq!(
            (calls[0].state, calls[0].input.clone(), calls[0].approval_id.as_deref()),
            (LedgerState::Approved, edited.clone(), Some("ap1"))
        );
        let rules = store.list_rules().await.unwrap();
        assert_eq!(
            (rules[0].tool.as_str(), rules[0].decision, rules[0].scope.clone()),
            ("write_file", PolicyDecision::Allow, RuleScope::Topic { topic_id: topic.clone() })
        );
        let stored = store.get_message(&MessageId(message.clone())).await.unwrap();
        let part = serde_json::to_value(&stored.message.parts[0]).unwrap();
        assert_eq!(
            (part["state"].as_str(), part["input"].clone(), part["approval"]["approved"].as_bool()),
            (Some("approval-responded"), edited, Some(true))
        );
        assert_eq!(store.pending_approvals_of(&message).await.unwrap(), 0);
        let of_reply = store.list_approvals_of_message(&message, false).await.unwrap();
        assert_eq!((of_reply.len(), of_reply[0].state), (1, ApprovalState::Approved), "answered ones too");
        assert!(store.list_approvals_of_message(&message, true).await.unwrap().is_empty());
        assert!(store.list_approvals_of_message("another", false).await.unwrap().is_empty());
        assert_eq!(
            store.begin_call(&message, "c1").await.unwrap(),
            Some(Started { decided_by: Some("user".into()) }),
            "the ledger knows the user let it run"
        );
        let actors: Vec<String> = store.list_audit(None, 10).await.unwrap().into_iter().map(|e| e.actor).collect();
        assert_eq!(actors, vec!["user", "default"]);
        assert!(matches!(
            store
                .respond_approval(&ApprovalAnswer {
                    approval_id: "nope",
                    ..answer(ApprovalDecision::Deny, ApprovalScope::Once)
                })
                .await,
            Err(StoreError::NotFound { .. })
        ));
    }

    #[tokio::test]
    async fn stopping_denies_what_waits_and_a_crash_leaves_running_calls_as_errors() {
        let (store, _dir) = store().await;
        let (topic, message) = reply(&store).await;
        let input = json!({"path": "a"});
        let ask = CallDecision::Ask { approval_id: "ap1", preview: None, actor: "default", reason: None };
        store.record_call(&call(&topic, &message, "c1", &input), &ask).await.unwrap();
        store
            .record_call(&call(&topic, &message, "c2", &input), &CallDecision::Allow { actor: "default" })
            .await
            .unwrap();
        assert!(store.begin_call(&message, "c2").await.unwrap().is_some());

        assert_eq!(store.deny_pending_approvals(&topic, "stopped").await.unwrap(), vec![message.clone()]);
        store.stop_awaiting_reply(&message).await.unwrap();
        let stored = store.get_message(&MessageId(message.clone())).await.unwrap();
        assert_eq!(stored.status_reason.as_deref(), Some("user_stop"));
        assert_eq!(store.recover_running_calls().await.unwrap(), 1);
        let calls = store.calls_of_message(&message).await.unwrap();
        assert_eq!((calls[0].state, calls[0].reason.as_deref()), (LedgerState::Denied, Some("stopped")));
        assert_eq!(calls[1].state, LedgerState::Error);
        assert!(store.begin_call(&message, "c2").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn rules_and_tool_switches_round_trip() {
        let (store, _dir) = store().await;
        let rule = PolicyRule {
            id: "r1".into(),
            tool: "fs_*".into(),
            conditions: vec![RuleCondition {
                pointer: "/path".into(),
                op: protocol::tool::MatchOp::Prefix,
                value: json!("docs/"),
            }],
            decision: PolicyDecision::Deny,
            scope: RuleScope::Global,
            expires_at: Some("2030-01-01T00:00:00Z".into()),
            created_at: now(),
        };
        store.save_rule(&rule).await.unwrap();
        store.save_rule(&PolicyRule { decision: PolicyDecision::Ask, ..rule.clone() }).await.unwrap();
        assert_eq!(store.list_rules().await.unwrap(), vec![PolicyRule { decision: PolicyDecision::Ask, ..rule }]);
        store.delete_rule("r1").await.unwrap();
        assert!(matches!(store.delete_rule("r1").await, Err(StoreError::NotFound { .. })));
        store.set_tool_enabled("fetch_url", false).await.unwrap();
        store.set_tool_enabled("read_file", true).await.unwrap();
        assert_eq!(store.disabled_tools().await.unwrap(), HashSet::from(["fetch_url".to_owned()]));
    }
}
