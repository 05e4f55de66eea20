//! Tools as the user and the UI see them: what a tool is ([`ToolInfo`]), what a call
//! returned ([`ToolOutput`], the shape of a tool part's `output`), approval policy rules
//! ([`PolicyRule`]), pending approvals ([`Approval`]) and the audit log ([`AuditEntry`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::ids::TopicId;

/// Hints a tool gives about itself (the MCP annotations). They drive the default policy:
/// a read-only tool runs without asking, anything else asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Only reads; changes nothing.
    #[serde(default)]
    pub read_only: bool,
    /// May delete or overwrite something.
    #[serde(default)]
    pub destructive: bool,
    /// Calling it twice with the same input does no more than calling it once.
    #[serde(default)]
    pub idempotent: bool,
    /// Reaches outside the machine (the network).
    #[serde(default)]
    pub open_world: bool,
}

/// Where a tool comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolSource {
    Builtin,
    #[serde(rename_all = "camelCase")]
    Mcp {
        server_id: String,
        server_name: String,
    },
}

/// A tool as listed in settings and offered to models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Unique among all tools; what the model calls it.
    pub name: String,
    /// A human title, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    pub description: String,
    #[ts(type = "Record<string, unknown>")]
    pub input_schema: Value,
    pub annotations: ToolAnnotations,
    pub source: ToolSource,
    /// What happens when no rule matches a call: `allow` or `ask`.
    pub default_decision: PolicyDecision,
    /// Whether the tool is offered to models at all.
    pub enabled: bool,
}

/// One piece of a tool's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ToolContent {
    Text {
        text: String,
    },
    /// Base64 image data.
    #[serde(rename_all = "camelCase")]
    Image {
        mime_type: String,
        data: String,
    },
    /// A resource the tool returned or linked to.
    #[serde(rename_all = "camelCase")]
    Resource {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mime_type: Option<String>,
        /// The resource's text (embedded), or a link's description or name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
        /// A link (MCP `resource_link`): the contents are not here, but its server can
        /// read them (`mcp_resource_read`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[ts(type = "boolean | undefined")]
        link: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        annotations: Option<ContentAnnotations>,
    },
}

/// What an MCP server says about a piece of content: who it is for, how much it matters,
/// when it last changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContentAnnotations {
    /// `user`, `assistant`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub audience: Vec<String>,
    /// 0 (least) to 1 (most important).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub priority: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_modified: Option<String>,
}

impl ContentAnnotations {
    /// The annotations of an MCP content block, if it has any worth showing.
    pub fn read(value: Option<&Value>) -> Option<Self> {
        let value = value?;
        let audience = value
            .get("audience")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .take(4)
            .map(|a| a.chars().take(32).collect())
            .collect();
        let annotations = Self {
            audience,
            priority: value.get("priority").and_then(Value::as_f64).filter(|p| p.is_finite()),
            last_modified: value.get("lastModified").and_then(Value::as_str).map(|t| t.chars().take(64).collect()),
        };
        (annotations != Self::default()).then_some(annotations)
    }
}

/// What a tool call returned: the `output` of a tool part, in the shape of an MCP
/// `CallToolResult` whatever the tool's source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    pub content: Vec<ToolContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub structured_content: Option<Value>,
    /// The tool reports failure; the content says why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(type = "boolean | undefined")]
    pub is_error: bool,
    /// The model was shown only the first part of this result (it was too long).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(type = "boolean | undefined")]
    pub truncated_for_model: bool,
    /// How many later model calls are shown this result (bulky, short-lived results such
    /// as a fetched page); later ones see a note that it was left out. Absent: all of them.
    /// Kept with the result so the count holds across turns, restarts and resumed replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_rounds: Option<u32>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ToolContent::Text { text: text.into() }], ..Self::default() }
    }

    /// The text content, joined with newlines; a resource link with its URI.
    pub fn text_content(&self) -> String {
        let texts: Vec<std::borrow::Cow<'_, str>> = self
            .content
            .iter()
            .filter_map(|c| match c {
                ToolContent::Text { text } => Some(text.as_str().into()),
                ToolContent::Resource { text, uri, link: true, .. } => {
                    Some(format!("{} <{uri}>", text.as_deref().unwrap_or("resource link")).into())
                }
                ToolContent::Resource { text: Some(text), .. } => Some(text.as_str().into()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// What the policy says about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PolicyDecision {
    Allow,
    Deny,
    Ask,
}

impl PolicyDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyDecision::Allow => "allow",
            PolicyDecision::Deny => "deny",
            PolicyDecision::Ask => "ask",
        }
    }
}

/// How a condition compares the argument at its JSON pointer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MatchOp {
    /// The value equals `value` (compared as JSON).
    Equals,
    /// The value is a string starting with `value`.
    Prefix,
    /// The value is a string matching the glob `value` (`*` any run, `?` one character).
    Glob,
    /// The value is a string matching the regular expression `value`.
    Regex,
}

/// A test on one argument of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RuleCondition {
    /// A JSON pointer into the call's arguments, e.g. `/path`.
    pub pointer: String,
    pub op: MatchOp,
    /// For `equals` any JSON value; for the others a string.
    #[ts(type = "unknown")]
    pub value: Value,
}

/// Where a rule applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuleScope {
    /// Everywhere.
    Global,
    /// Only in this topic.
    #[serde(rename_all = "camelCase")]
    Topic { topic_id: TopicId },
}

/// A saved policy rule: calls of tools matching `tool` (a glob on the name) whose
/// arguments pass every condition get `decision`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    pub id: String,
    pub tool: String,
    #[serde(default)]
    pub conditions: Vec<RuleCondition>,
    pub decision: PolicyDecision,
    pub scope: RuleScope,
    /// RFC 3339; the rule is ignored after this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expires_at: Option<String>,
    pub created_at: String,
}

/// The state of an approval request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    Pending,
    Approved,
    Denied,
}

/// A tool call waiting for (or given) the user's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub id: String,
    pub topic_id: TopicId,
    pub topic_title: String,
    pub message_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    #[ts(type = "unknown")]
    pub input: Value,
    /// What the call would change, when the tool can tell (a unified diff for file edits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preview: Option<String>,
    pub state: ApprovalState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_at: Option<String>,
}

/// One decision about a tool call, by the user or by a rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    #[ts(type = "number")]
    pub id: i64,
    pub at: String,
    /// `user`, `rule:<id>` or `default`.
    pub actor: String,
    pub decision: PolicyDecision,
    pub tool_name: String,
    #[ts(type = "unknown")]
    pub input: Value,
    pub topic_id: TopicId,
    pub tool_call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
}
