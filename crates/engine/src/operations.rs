//! The plain (non-streaming) operations, by name, with their validation.
//!
//! Transports pass the operation name and the raw JSON request; everything about
//! parsing and validating it lives here, once.

use protocol::api::{IdRequest, ProviderRequest, TopicRequest};
use protocol::{ApiError, ErrorKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Engine;
use crate::model_providers::presets;

fn parse<T: DeserializeOwned>(request: Value) -> Result<T, ApiError> {
    // Operations without fields accept `null` as well as `{}`.
    let request = if request.is_null() { Value::Object(Default::default()) } else { request };
    protocol::parse_body(request)
}

fn json(value: impl Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::internal(e.to_string()))
}

/// The names [`Engine::call`] answers to (transports check they expose every one).
pub const OPERATIONS: &[&str] = &[
    "app_info",
    "settings_get",
    "settings_update",
    "topics_list",
    "topic_create",
    "topic_update",
    "topic_delete",
    "topic_mark_seen",
    "inbox_list",
    "inbox_add",
    "inbox_update",
    "inbox_move",
    "inbox_cancel",
    "inbox_release",
    "window_open",
    "messages_list",
    "image_fetch",
    "providers_list",
    "provider_create",
    "provider_update",
    "provider_delete",
    "provider_models",
    "provider_demo",
    "provider_presets",
    "tools_list",
    "tool_set_enabled",
    "tool_approval_respond",
    "approvals_list",
    "tool_rules_list",
    "tool_rule_create",
    "tool_rule_update",
    "tool_rule_delete",
    "tool_audit_list",
    "assistants_list",
    "assistant_create",
    "assistant_update",
    "assistant_delete",
    "mcp_servers_list",
    "mcp_server_create",
    "mcp_server_update",
    "mcp_server_delete",
    "mcp_server_refresh",
    "agent_sessions_list",
    "agent_session_create",
    "agent_session_update",
    "agent_session_delete",
    "agent_session_reset",
];

impl Engine {
    /// Runs the named plain operation on a JSON request. Unknown names and malformed
    /// requests are `bad_request` errors naming what was wrong; nothing changes then.
    pub async fn call(&self, name: &str, request: Value) -> Result<Value, ApiError> {
        match name {
            "app_info" => json(self.info()),
            "settings_get" => json(self.settings().await?),
            "settings_update" => json(self.update_settings(parse(request)?).await?),
            "topics_list" => json(self.inner.store.list_topics().await?),
            "topic_create" => json(self.create_topic(parse(request)?).await?),
            "topic_update" => json(self.update_topic(parse(request)?).await?),
            "topic_delete" => {
                let request: TopicRequest = parse(request)?;
                self.inner.store.get_topic(&request.topic_id).await?;
                self.inner.streams.close_topic(&request.topic_id).await;
                self.inner.store.delete_topic(&request.topic_id).await?;
                Ok(Value::Null)
            }
            "topic_mark_seen" => {
                let request: TopicRequest = parse(request)?;
                self.inner.store.mark_topic_seen(&request.topic_id).await?;
                self.inner.streams.status().mark_seen(&request.topic_id);
                Ok(Value::Null)
            }
            "inbox_list" => {
                let request: TopicRequest = parse(request)?;
                self.inner.store.get_topic(&request.topic_id).await?;
                json(self.inner.store.list_inbox(&request.topic_id).await?)
            }
            "inbox_add" => json(self.inbox_add(parse(request)?).await?),
            "inbox_update" => json(self.inbox_update(parse(request)?).await?),
            "inbox_move" => json(self.inbox_move(parse(request)?).await?),
            "inbox_cancel" => {
                self.inbox_cancel(parse(request)?).await?;
                Ok(Value::Null)
            }
            "inbox_release" => json(self.inbox_release(parse(request)?).await?),
            // Served by the desktop shell itself; over HTTP there is no window to open.
            "window_open" => Err(ApiError::new(
                ErrorKind::BadRequest,
                "only the desktop app opens windows; open the topic in a new tab instead",
            )),
            "messages_list" => {
                let request: TopicRequest = parse(request)?;
                self.inner.store.get_topic(&request.topic_id).await?;
                json(self.inner.store.list_messages(&request.topic_id).await?)
            }
            "image_fetch" => json(crate::images::fetch_image(parse(request)?).await?),
            "providers_list" => json(self.list_providers().await?),
            "provider_create" => json(self.create_provider(parse(request)?).await?),
            "provider_update" => json(self.update_provider(parse(request)?).await?),
            "provider_delete" => {
                let request: ProviderRequest = parse(request)?;
                self.inner.store.delete_provider(&request.provider_id).await?;
                if let Err(err) = self.inner.secrets.delete(request.provider_id.as_str()) {
                    tracing::warn!(error = %err, "could not remove the deleted provider's key");
                }
                Ok(Value::Null)
            }
            "provider_models" => json(self.provider_models(parse(request)?).await?),
            "provider_demo" => json(self.demo_provider().await?),
            "provider_presets" => json(presets()),
            "tools_list" => json(self.list_tools().await?),
            "tool_set_enabled" => {
                self.set_tool_enabled(parse(request)?).await?;
                Ok(Value::Null)
            }
            "tool_approval_respond" => json(self.respond_approval(parse(request)?).await?),
            "approvals_list" => json(self.list_approvals(parse(request)?).await?),
            "tool_rules_list" => json(self.inner.store.list_rules().await?),
            "tool_rule_create" => json(self.save_rule(None, parse(request)?).await?),
            "tool_rule_update" => json(self.update_rule(parse(request)?).await?),
            "tool_rule_delete" => {
                let request: IdRequest = parse(request)?;
                self.inner.store.delete_rule(&request.id).await?;
                Ok(Value::Null)
            }
            "tool_audit_list" => json(self.list_audit(parse(request)?).await?),
            "assistants_list" => json(self.inner.store.list_assistants().await?),
            "assistant_create" => json(self.save_assistant(None, parse(request)?).await?),
            "assistant_update" => json(self.update_assistant(parse(request)?).await?),
            "assistant_delete" => {
                let request: IdRequest = parse(request)?;
                self.inner.store.delete_assistant(&request.id).await?;
                Ok(Value::Null)
            }
            "mcp_servers_list" => json(self.list_mcp_servers().await?),
            "mcp_server_create" => json(self.save_mcp_server(None, parse(request)?).await?),
            "mcp_server_update" => json(self.update_mcp_server(parse(request)?).await?),
            "mcp_server_delete" => {
                let request: IdRequest = parse(request)?;
                self.delete_mcp_server(&request.id).await?;
                Ok(Value::Null)
            }
            "mcp_server_refresh" => {
                let request: IdRequest = parse(request)?;
                self.refresh_mcp_server(&request.id).await?;
                Ok(Value::Null)
            }
            "agent_sessions_list" => json(self.list_sessions().await?),
            "agent_session_create" => json(self.create_session(parse(request)?).await?),
            "agent_session_update" => json(self.update_session(parse(request)?).await?),
            "agent_session_delete" => {
                let request: IdRequest = parse(request)?;
                self.delete_session(&request.id).await?;
                Ok(Value::Null)
            }
            "agent_session_reset" => {
                let request: IdRequest = parse(request)?;
                json(self.reset_session(&request.id).await?)
            }
            other => Err(ApiError::bad_request("operation", format!("unknown operation `{other}`"))),
        }
    }
}
