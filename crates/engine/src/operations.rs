//! The plain (non-streaming) operations, by name, with their validation.
//!
//! Transports pass the operation name and the raw JSON request; everything about
//! parsing and validating it lives here, once.

use protocol::api::{
    ApiFormat, CreateTopic, IdRequest, ListModelsRequest, ModelCapabilities, ModelList, Provider, ProviderInput,
    ProviderKind, ProviderPresetInfo, ProviderRequest, Topic, TopicRequest, UpdateProvider, UpdateTopic,
};
use protocol::{ApiError, ErrorKind, ModelRef, ProviderId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use store::providers::{ProviderFields, ProviderRow};

use crate::demo::{DEMO_MODEL, DEMO_NAME};
use crate::{Engine, limits};

pub(crate) const DEFAULT_TOPIC_TITLE: &str = "New topic";

fn parse<T: DeserializeOwned>(request: Value) -> Result<T, ApiError> {
    // Operations without fields accept `null` as well as `{}`.
    let request = if request.is_null() { Value::Object(Default::default()) } else { request };
    protocol::parse_body(request)
}

fn json(value: impl Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::internal(e.to_string()))
}

fn required<'a>(field: &str, value: &'a str) -> Result<&'a str, ApiError> {
    let value = value.trim();
    if value.is_empty() { Err(ApiError::bad_request(field, "must not be empty")) } else { Ok(value) }
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

    async fn create_topic(&self, request: CreateTopic) -> Result<Topic, ApiError> {
        let title = request.title.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or(DEFAULT_TOPIC_TITLE);
        limits::at_most("title", title, limits::TITLE)?;
        if let Some(model) = &request.model {
            self.check_model(model).await?;
        }
        Ok(self.inner.store.create_topic(title, request.model.as_ref()).await?)
    }

    async fn update_topic(&self, request: UpdateTopic) -> Result<Topic, ApiError> {
        let title = match request.title.as_deref() {
            Some(title) => Some(limits::at_most("title", required("title", title)?, limits::TITLE)?),
            None => None,
        };
        if let Some(model) = &request.model {
            self.check_model(model).await?;
        }
        let workspace = match request.workspace.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(path) => Some(Some(crate::assistants::checked_workspace("workspace", path)?)),
        };
        let assistant_id = match request.assistant_id.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(id) => {
                self.inner.store.get_assistant(id).await.map_err(|e| match e {
                    store::StoreError::NotFound { .. } => {
                        ApiError::bad_request("assistantId", format!("no assistant {id}"))
                    }
                    other => other.into(),
                })?;
                Some(Some(id))
            }
        };
        let changes = store::topics::TopicChanges {
            title,
            model: request.model.as_ref(),
            workspace: workspace.as_ref().map(|w| w.as_deref()),
            assistant_id,
        };
        Ok(self.inner.store.change_topic(&request.id, &changes).await?)
    }

    pub(crate) async fn check_model(&self, model: &ModelRef) -> Result<(), ApiError> {
        match self.inner.store.get_provider(&model.provider_id).await {
            Ok(_) => Ok(()),
            Err(store::StoreError::NotFound { .. }) => {
                Err(ApiError::bad_request("model.providerId", format!("no provider {}", model.provider_id)))
            }
            Err(err) => Err(err.into()),
        }
    }

    pub(crate) fn provider_view(&self, row: ProviderRow) -> Provider {
        let has_api_key = matches!(self.inner.secrets.get(row.id.as_str()), Ok(Some(_)));
        let capabilities = row
            .models
            .iter()
            .map(|model| {
                let known = row.capabilities.get(model).copied();
                let capabilities = known.unwrap_or_else(|| crate::capabilities::guess(row.format, row.kind, model));
                (model.clone(), capabilities)
            })
            .collect();
        Provider {
            id: row.id,
            name: row.name,
            kind: row.kind,
            format: row.format,
            base_url: row.base_url,
            has_api_key,
            models: row.models,
            default_model: row.default_model,
            capabilities,
            created_at: row.created_at,
        }
    }

    async fn list_providers(&self) -> Result<Vec<Provider>, ApiError> {
        let rows = self.inner.store.list_providers().await?;
        Ok(rows.into_iter().map(|row| self.provider_view(row)).collect())
    }

    async fn create_provider(&self, input: ProviderInput) -> Result<Provider, ApiError> {
        let checked = CheckedProvider::new(&input)?;
        let row = self.inner.store.create_provider(&checked.fields(ProviderKind::OpenaiCompatible)).await?;
        self.store_key(&row.id, input.api_key.as_deref())?;
        Ok(self.provider_view(row))
    }

    async fn update_provider(&self, request: UpdateProvider) -> Result<Provider, ApiError> {
        let existing = self.inner.store.get_provider(&request.id).await?;
        let checked = CheckedProvider::new(&request.provider)?;
        let row = self.inner.store.update_provider(&request.id, &checked.fields(existing.kind)).await?;
        self.store_key(&row.id, request.provider.api_key.as_deref())?;
        Ok(self.provider_view(row))
    }

    /// `None` keeps the stored key, an empty key removes it.
    fn store_key(&self, id: &ProviderId, key: Option<&str>) -> Result<(), ApiError> {
        let result = match key.map(str::trim) {
            None => return Ok(()),
            Some("") => self.inner.secrets.delete(id.as_str()),
            Some(key) => self.inner.secrets.set(id.as_str(), key),
        };
        result.map_err(|e| ApiError::internal(format!("could not store the API key: {e}")))
    }

    pub(crate) fn api_key(&self, id: &ProviderId) -> Result<Option<String>, ApiError> {
        self.inner.secrets.get(id.as_str()).map_err(|e| ApiError::internal(format!("could not read the API key: {e}")))
    }

    async fn provider_models(&self, request: ListModelsRequest) -> Result<ModelList, ApiError> {
        let base_url = providers::validate_base_url(&request.base_url)
            .map_err(|message| ApiError::bad_request("baseUrl", message))?;
        let key = match (request.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()), &request.provider_id) {
            (Some(key), _) => Some(key.to_owned()),
            (None, Some(id)) => self.saved_key_for(id, &base_url).await?,
            (None, None) => None,
        };
        // The form's format; else the saved provider's; else Chat Completions.
        let format = match (request.format, &request.provider_id) {
            (Some(format), _) => format,
            (None, Some(id)) => self.inner.store.get_provider(id).await?.format,
            (None, None) => ApiFormat::OpenaiChat,
        };
        let format = crate::turns::wire_format(format);
        let models = providers::list_models_for(format, &self.inner.provider_http, base_url.as_str(), key.as_deref())
            .await
            .map_err(|e| ApiError {
                kind: ErrorKind::Provider,
                message: format!("could not list models: {}", e.message),
                retryable: e.retryable,
                field: None,
                code: Some(e.kind.as_str().to_owned()),
            })?;
        Ok(ModelList { models })
    }

    /// The saved API key of provider `id`, to be sent to `base_url`: only where the
    /// provider is saved to live (its base URL's origin). Listing another address's models
    /// with it is refused: whoever answers there would get the key.
    async fn saved_key_for(&self, id: &ProviderId, base_url: &url::Url) -> Result<Option<String>, ApiError> {
        let Some(key) = self.api_key(id)? else { return Ok(None) };
        let provider = self.inner.store.get_provider(id).await?;
        let saved = url::Url::parse(&provider.base_url).map(|url| url.origin());
        if saved.as_ref().is_ok_and(|origin| *origin == base_url.origin()) {
            return Ok(Some(key));
        }
        let saved = saved.map(|origin| origin.ascii_serialization()).unwrap_or(provider.base_url);
        Err(ApiError::bad_request(
            "baseUrl",
            format!(
                "the saved API key of {} is sent only to {saved}; to list the models at {}, enter the API key again",
                provider.name,
                base_url.origin().ascii_serialization()
            ),
        ))
    }

    /// Creates (once) and starts the demo provider.
    async fn demo_provider(&self) -> Result<Provider, ApiError> {
        let url = self.inner.demo.ensure_started().await?;
        let rows = self.inner.store.list_providers().await?;
        if let Some(row) = rows.into_iter().find(|r| r.kind == ProviderKind::Demo) {
            self.inner.store.set_provider_base_url(&row.id, &url).await?;
            let row = self.inner.store.get_provider(&row.id).await?;
            return Ok(self.provider_view(row));
        }
        let models = [DEMO_MODEL.to_owned()];
        let fields = ProviderFields {
            name: DEMO_NAME,
            kind: ProviderKind::Demo,
            format: ApiFormat::OpenaiChat,
            base_url: &url,
            default_model: DEMO_MODEL,
            models: &models,
            capabilities: None,
        };
        let row = self.inner.store.create_provider(&fields).await?;
        Ok(self.provider_view(row))
    }

    /// At start-up: the demo server gets a new port each run.
    pub(crate) async fn restart_demo(&self) -> Result<(), ApiError> {
        let rows = self.inner.store.list_providers().await?;
        let demos: Vec<_> = rows.into_iter().filter(|r| r.kind == ProviderKind::Demo).collect();
        if demos.is_empty() {
            return Ok(());
        }
        let url = self.inner.demo.ensure_started().await?;
        for row in demos {
            self.inner.store.set_provider_base_url(&row.id, &url).await?;
        }
        Ok(())
    }
}

/// The known services, for the "Add provider" form.
fn presets() -> Vec<ProviderPresetInfo> {
    providers::PRESETS
        .iter()
        .map(|p| ProviderPresetInfo {
            id: p.id.to_owned(),
            name: p.name.to_owned(),
            format: crate::turns::api_format(p.format),
            base_url: p.base_url.to_owned(),
            needs_api_key: p.needs_api_key,
        })
        .collect()
}

/// A provider input that passed validation.
struct CheckedProvider<'a> {
    name: &'a str,
    format: ApiFormat,
    base_url: String,
    default_model: &'a str,
    models: Vec<String>,
    capabilities: Option<&'a std::collections::BTreeMap<String, ModelCapabilities>>,
}

impl<'a> CheckedProvider<'a> {
    fn new(input: &'a ProviderInput) -> Result<Self, ApiError> {
        let name = limits::at_most("name", required("name", &input.name)?, limits::NAME)?;
        let base_url = providers::validate_base_url(&input.base_url)
            .map_err(|message| ApiError::bad_request("baseUrl", message))?;
        let default_model =
            limits::at_most("defaultModel", required("defaultModel", &input.default_model)?, limits::MODEL_NAME)?;
        if input.models.len() > limits::MODELS {
            return Err(ApiError::bad_request("models", format!("at most {} models", limits::MODELS)));
        }
        for (index, model) in input.models.iter().enumerate() {
            limits::at_most(&format!("models.{index}"), model.trim(), limits::MODEL_NAME)?;
        }
        let mut models: Vec<String> =
            input.models.iter().map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()).collect();
        if !models.iter().any(|m| m == default_model) {
            models.insert(0, default_model.to_owned());
        }
        if let Some(capabilities) = &input.capabilities
            && let Some(unknown) = capabilities.keys().find(|name| !models.contains(name))
        {
            return Err(ApiError::bad_request(
                "capabilities",
                format!("{unknown} is not one of this provider's models"),
            ));
        }
        Ok(Self {
            name,
            format: input.format.unwrap_or_default(),
            base_url: base_url.as_str().trim_end_matches('/').to_owned(),
            default_model,
            models,
            capabilities: input.capabilities.as_ref(),
        })
    }

    fn fields(&self, kind: ProviderKind) -> ProviderFields<'_> {
        ProviderFields {
            name: self.name,
            kind,
            format: self.format,
            base_url: &self.base_url,
            default_model: self.default_model,
            models: &self.models,
            capabilities: self.capabilities,
        }
    }
}
