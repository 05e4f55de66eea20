//! MCP resources attached to a message: read through their servers when the message is
//! sent and kept on it as `data-mcp-resource` parts, and read again for a later turn when
//! the server said one changed.

use protocol::api::StoredMessage;
use protocol::mcp_content::{McpResourceRef, RESOURCE_PART, ResourceAttachment};
use protocol::message::DataPart;
use protocol::{ApiError, MessageRole, UiPart};
use tools::mcp::McpHub;

/// How many resources one message may carry.
const MAX_RESOURCES: usize = 10;

/// Reads the attached resources, in order; the first that cannot be read refuses the
/// message, naming it and why.
pub(crate) async fn resource_parts(hub: &McpHub, refs: &[McpResourceRef]) -> Result<Vec<UiPart>, ApiError> {
    if refs.len() > MAX_RESOURCES {
        return Err(ApiError::bad_request("mcpResources", format!("at most {MAX_RESOURCES} resources per message")));
    }
    let mut parts = Vec::with_capacity(refs.len());
    for (index, resource) in refs.iter().enumerate() {
        let read = hub
            .read_resource(&resource.server_id, &resource.uri)
            .await
            .map_err(|why| ApiError::bad_request(format!("mcpResources.{index}"), why))?;
        parts.push(part(&read));
    }
    Ok(parts)
}

/// The resources attached earlier in the conversation that their server said changed,
/// read again (each once, marked `updated`). One that cannot be read now is left out: the
/// model still has what was read before.
pub(crate) async fn updated_parts(hub: &McpHub, history: &[StoredMessage]) -> Vec<UiPart> {
    let mut seen = std::collections::HashSet::new();
    let mut parts = Vec::new();
    let attached = history
        .iter()
        .filter(|m| m.message.role == MessageRole::User)
        .flat_map(|m| m.message.parts.iter())
        .filter_map(attachment);
    for resource in attached {
        let key = (resource.server_id.clone(), resource.uri.clone());
        if !seen.insert(key) || !hub.take_resource_update(&resource.server_id, &resource.uri) {
            continue;
        }
        match hub.read_resource(&resource.server_id, &resource.uri).await {
            Ok(read) => parts.push(part(&ResourceAttachment { updated: true, ..read })),
            Err(error) => tracing::warn!(%error, "an updated MCP resource could not be read again"),
        }
    }
    parts
}

/// The resource a `data-mcp-resource` part holds.
pub(crate) fn attachment(part: &UiPart) -> Option<ResourceAttachment> {
    match part {
        UiPart::Data(DataPart { kind, data, .. }) if kind == RESOURCE_PART => serde_json::from_value(data.clone()).ok(),
        _ => None,
    }
}

fn part(read: &ResourceAttachment) -> UiPart {
    UiPart::Data(DataPart {
        kind: RESOURCE_PART.to_owned(),
        id: None,
        data: serde_json::to_value(read).unwrap_or_default(),
    })
}
