//! Tools for turns: which tools a turn gets, how they are listed in settings, and
//! [`EngineGate`], the agent's [`ToolGate`] over the policy rules, the ledger and the
//! approvals table.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use protocol::api::{Assistant, ToolEnableRequest};
use protocol::tool::{PolicyDecision, ToolAnnotations, ToolInfo, ToolSource};
use protocol::{ApiError, MessageId, TopicId};
use store::Store;
use store::tools::{CallDecision, NewCall, Recorded};
use tools::mcp::McpHub;
use tools::policy::{Decider, Policy};
use tools::{Tool, ToolSet};
use turn::{Allowed, CallRecord, GateCall, GateDecision, GateError, ToolGate};

/// What happens to a call of a tool when no rule matches: read-only tools run, anything
/// that can change something asks.
pub(crate) fn default_decision(annotations: &ToolAnnotations) -> PolicyDecision {
    if annotations.read_only && !annotations.destructive { PolicyDecision::Allow } else { PolicyDecision::Ask }
}

/// Every tool the app offers, with where it comes from and its default decision.
pub(crate) struct CatalogTool {
    pub tool: Arc<dyn Tool>,
    pub source: ToolSource,
    pub default: PolicyDecision,
}

/// The tools turns may call: the built-in ones and those of MCP servers (from the hub's
/// cache), each switched on or off in settings.
/// How much of one MCP server's `instructions` goes into the system prompt.
pub(crate) const MCP_INSTRUCTIONS_BYTES: usize = 4 * 1024;

/// `text` cut to at most `max` bytes at a character boundary, saying how much was left out.
fn cut_at(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}\n[… {} more bytes of these instructions were left out]", &text[..at], text.len() - at)
}

pub(crate) struct Tools {
    store: Store,
    mcp: McpHub,
}

impl Tools {
    pub(crate) fn new(store: Store, mcp: McpHub) -> Self {
        Self { store, mcp }
    }

    /// The MCP servers, for what they offer beside tools (resources, prompts).
    pub(crate) fn mcp(&self) -> &McpHub {
        &self.mcp
    }

    /// The `instructions` of the MCP servers whose tools `offered` has, for the system
    /// prompt: each server's cut at [`MCP_INSTRUCTIONS_BYTES`] (saying so), `None` when
    /// no offered server gave any.
    pub(crate) fn mcp_instructions(&self, offered: &ToolSet) -> Option<String> {
        let parts: Vec<String> = self
            .mcp
            .instructions()
            .into_iter()
            .filter(|server| {
                let prefix = format!("{}__", server.namespace);
                offered.iter().any(|tool| tool.definition().name.starts_with(&prefix))
            })
            .map(|server| {
                let text = cut_at(&server.text, MCP_INSTRUCTIONS_BYTES);
                format!(
                    "Instructions from the MCP server \"{}\" (its tools are named {}__…):\n{text}",
                    server.server_name, server.namespace
                )
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// Every known tool (built-in first), each once.
    pub(crate) async fn catalog(&self) -> Vec<CatalogTool> {
        let mut out: Vec<CatalogTool> = tools::builtin::all()
            .into_iter()
            .map(|tool| {
                let default = default_decision(&tool.definition().annotations);
                CatalogTool { tool, source: ToolSource::Builtin, default }
            })
            .collect();
        out.extend(self.mcp_catalog());
        out
    }

    /// The tools of enabled MCP servers, from the cache. An MCP tool asks unless the
    /// server marks it read-only and the user trusts the server's read-only tools.
    pub(crate) fn mcp_catalog(&self) -> Vec<CatalogTool> {
        self.mcp
            .tools()
            .into_iter()
            .map(|entry| {
                let annotations = entry.tool.definition().annotations;
                let default = if entry.trust_read_only { default_decision(&annotations) } else { PolicyDecision::Ask };
                CatalogTool {
                    tool: entry.tool,
                    source: ToolSource::Mcp { server_id: entry.server_id, server_name: entry.server_name },
                    default,
                }
            })
            .collect()
    }

    /// Tools as settings lists them.
    pub(crate) async fn list_tools(&self) -> Result<Vec<ToolInfo>, ApiError> {
        let disabled = self.store.disabled_tools().await?;
        Ok(self
            .catalog()
            .await
            .into_iter()
            .map(|entry| {
                let definition = entry.tool.definition();
                ToolInfo {
                    name: definition.name.clone(),
                    title: definition.title.clone(),
                    description: definition.description.clone(),
                    input_schema: definition.input_schema.clone(),
                    annotations: definition.annotations,
                    source: entry.source,
                    default_decision: entry.default,
                    enabled: !disabled.contains(&definition.name),
                }
            })
            .collect())
    }

    pub(crate) async fn set_tool_enabled(&self, request: ToolEnableRequest) -> Result<(), ApiError> {
        let known = self.catalog().await.iter().any(|t| t.tool.definition().name == request.name);
        if !known {
            return Err(ApiError::bad_request("name", format!("there is no tool named {}", request.name)));
        }
        Ok(self.store.set_tool_enabled(&request.name, request.enabled).await?)
    }

    /// The tools one turn may call, and their default decisions: the enabled ones, cut
    /// down to the assistant's list when it has one; file tools only with a workspace.
    pub(crate) async fn turn_tools(
        &self,
        assistant: Option<&Assistant>,
        workspace: Option<&Path>,
    ) -> Result<(ToolSet, HashMap<String, PolicyDecision>), ApiError> {
        let disabled: HashSet<String> = self.store.disabled_tools().await?;
        let allowed: Option<HashSet<&str>> =
            assistant.and_then(|a| a.tools.as_ref()).map(|names| names.iter().map(String::as_str).collect());
        let mut set = ToolSet::new();
        let mut defaults = HashMap::new();
        for entry in self.catalog().await {
            let name = entry.tool.definition().name.clone();
            let offered = !disabled.contains(&name)
                && allowed.as_ref().is_none_or(|allowed| allowed.contains(name.as_str()))
                && (workspace.is_some() || !tools::builtin::FILE_TOOLS.contains(&name.as_str()));
            if offered && set.add(entry.tool) {
                defaults.insert(name, entry.default);
            }
        }
        Ok((set, defaults))
    }
}

/// The agent's gate for one reply.
pub(crate) struct EngineGate {
    pub store: Store,
    pub topic_id: TopicId,
    pub message_id: MessageId,
    /// Each offered tool's decision when no rule matches.
    pub defaults: HashMap<String, PolicyDecision>,
}

fn gate_error(err: store::StoreError) -> GateError {
    GateError(err.to_string())
}

#[async_trait]
impl ToolGate for EngineGate {
    async fn check(&self, call: &GateCall) -> Result<GateDecision, GateError> {
        let rules = self.store.list_rules().await.map_err(gate_error)?;
        let default =
            self.defaults.get(&call.tool_name).copied().unwrap_or_else(|| default_decision(&call.annotations));
        let verdict = Policy::new(&rules).decide(
            &call.tool_name,
            &call.rule_input,
            &self.topic_id,
            default,
            time::OffsetDateTime::now_utc(),
        );
        // A call the tool's default would let through, but that reaches further than the
        // default is meant for (a fetch of a private address): the user decides.
        let cautious = verdict.decider == Decider::Default && verdict.decision == PolicyDecision::Allow;
        let (outcome, caution) = match (&call.caution, cautious) {
            (Some(caution), true) => (PolicyDecision::Ask, Some(caution.as_str())),
            _ => (verdict.decision, None),
        };
        let actor = verdict.decider.actor();
        let approval_id = uuid::Uuid::now_v7().to_string();
        let denial = format!("the approval policy does not allow {} ({actor})", call.tool_name);
        let decision = match outcome {
            PolicyDecision::Allow => CallDecision::Allow { actor: &actor },
            PolicyDecision::Deny => CallDecision::Deny { actor: &actor, reason: Some(&denial) },
            PolicyDecision::Ask => CallDecision::Ask {
                approval_id: &approval_id,
                // The card says why it asks when there is no change to show.
                preview: call.preview.as_deref().or(caution),
                actor: &actor,
                reason: caution,
            },
        };
        let new = NewCall {
            topic_id: &self.topic_id,
            message_id: self.message_id.as_str(),
            call_id: &call.call_id,
            tool_name: &call.tool_name,
            input: &call.input,
        };
        let recorded = self.store.record_call(&new, &decision).await.map_err(gate_error)?;
        tracing::info!(tool = %call.tool_name, decision = outcome.as_str(), actor, "tool call decided");
        Ok(match recorded {
            Recorded::Approved => GateDecision::Allow,
            Recorded::Denied { reason } => GateDecision::Deny { reason: reason.unwrap_or(denial) },
            Recorded::Waiting { approval_id } => GateDecision::Ask { approval_id },
            // Past its decision: `begin` will refuse to run it again.
            Recorded::Settled => GateDecision::Allow,
        })
    }

    async fn begin(&self, call_id: &str) -> Result<Option<Allowed>, GateError> {
        let started = self.store.begin_call(self.message_id.as_str(), call_id).await.map_err(gate_error)?;
        Ok(started.map(|started| match started.decided_by.as_deref() {
            // Unknown (recorded before this was kept): the guards apply.
            Some("default") | None => Allowed::ByDefault,
            Some(_) => Allowed::ByUser,
        }))
    }

    async fn finish(&self, call_id: &str, record: &CallRecord) -> Result<(), GateError> {
        let outcome = match record {
            CallRecord::Done(output) => Ok(serde_json::to_value(output).map_err(|e| GateError(e.to_string()))?),
            CallRecord::Error(error) => Err(error.as_str()),
        };
        self.store
            .finish_call(self.message_id.as_str(), call_id, outcome.as_ref().map_err(|e| *e))
            .await
            .map_err(gate_error)
    }
}
