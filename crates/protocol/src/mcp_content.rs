//! What MCP servers offer beside tools: resources (and resource templates) that can be
//! read and attached to a message, and prompts that expand into one.
//!
//! An attached resource is read by the backend when the message is sent and kept on the
//! user message as a `data-mcp-resource` part ([`ResourceAttachment`]), so the model, a
//! reload and an export all see the same contents.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kind of the user-message part that holds an attached resource.
pub const RESOURCE_PART: &str = "data-mcp-resource";

/// A resource a server lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpResource {
    pub server_id: String,
    pub server_name: String,
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
}

/// A family of resources a server can read, named by filling in a URI template
/// (RFC 6570, e.g. `demo://resource/{id}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceTemplate {
    pub server_id: String,
    pub server_name: String,
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
}

/// A server that could not be asked, and why, in words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerProblem {
    pub server_id: String,
    pub server_name: String,
    pub message: String,
}

/// The resources of every enabled, connected server that offers resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceCatalog {
    pub resources: Vec<McpResource>,
    pub templates: Vec<McpResourceTemplate>,
    /// Servers that offer resources but could not list them now.
    pub problems: Vec<McpServerProblem>,
}

/// One resource of one server (`mcp_resource_read`, and an attachment of a message).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpResourceRef {
    pub server_id: String,
    pub uri: String,
}

/// One piece of what a resource read returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum ResourceContent {
    Text {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mime_type: Option<String>,
        text: String,
    },
    /// Standard base64 of the bytes.
    Blob {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mime_type: Option<String>,
        blob: String,
    },
}

/// A resource as read: `mcp_resource_read`'s answer, and (as a `data-mcp-resource` part)
/// a resource attached to a user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAttachment {
    pub server_id: String,
    pub server_name: String,
    pub uri: String,
    pub contents: Vec<ResourceContent>,
    /// Whether this is a fresher read than the one first attached (the server said the
    /// resource changed since).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(type = "boolean | undefined")]
    pub updated: bool,
}

/// A prompt a server offers (a slash command in the composer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpPrompt {
    pub server_id: String,
    pub server_name: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub arguments: Vec<McpPromptArgument>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpPromptArgument {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub required: bool,
}

/// The prompts of every enabled, connected server that offers prompts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpPromptCatalog {
    pub prompts: Vec<McpPrompt>,
    pub problems: Vec<McpServerProblem>,
}

/// Run a prompt (`prompts/get`) with its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpPromptGetRequest {
    pub server_id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: BTreeMap<String, String>,
}

/// A prompt's messages, ready for the composer: their text (messages joined by blank
/// lines, each not the user's marked with its role) and the resources they embed, read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpPromptExpansion {
    pub text: String,
    pub resources: Vec<ResourceAttachment>,
}

/// Ask a server for values of a prompt's argument (`completion/complete`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpCompleteRequest {
    pub server_id: String,
    pub prompt: String,
    pub argument: String,
    /// What is typed so far.
    pub value: String,
    /// The other arguments filled in so far (a server may narrow by them).
    #[serde(default)]
    pub context: BTreeMap<String, String>,
}

/// Values the server suggests, best first (at most 100).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpCompletion {
    pub values: Vec<String>,
    /// The server knows more than it sent.
    pub has_more: bool,
}
