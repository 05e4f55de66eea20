//! Model providers: their settings in the store, their API keys in the secret store,
//! listing a provider's models, and the local demo provider.

use std::sync::Arc;

use protocol::api::{
    ApiFormat, ListModelsRequest, ModelCapabilities, ModelList, Provider, ProviderInput, ProviderKind,
    ProviderPresetInfo, UpdateProvider,
};
use protocol::{ApiError, ErrorKind, ModelRef, ProviderId};
use store::Store;
use store::providers::{ProviderFields, ProviderRow};
use store::secrets::SecretStore;

use crate::demo::{DEMO_MODEL, DEMO_NAME, DemoProvider};
use crate::limits::{self, required};

/// The providers the user configured, and the demo one.
pub(crate) struct Providers {
    store: Store,
    secrets: Arc<dyn SecretStore>,
    /// Never follows a redirect to another origin (the API key would go along).
    http: providers::ProviderHttp,
    demo: DemoProvider,
}

impl Providers {
    pub(crate) fn new(
        store: Store,
        secrets: Arc<dyn SecretStore>,
        http: providers::ProviderHttp,
        demo: DemoProvider,
    ) -> Self {
        Self { store, secrets, http, demo }
    }

    /// What model requests go out with.
    pub(crate) fn http(&self) -> &providers::ProviderHttp {
        &self.http
    }

    /// Stops the demo server (at shutdown).
    pub(crate) async fn stop_demo(&self) {
        self.demo.stop().await;
    }

    pub(crate) async fn check_model(&self, model: &ModelRef) -> Result<(), ApiError> {
        match self.store.get_provider(&model.provider_id).await {
            Ok(_) => Ok(()),
            Err(store::StoreError::NotFound { .. }) => {
                Err(ApiError::bad_request("model.providerId", format!("no provider {}", model.provider_id)))
            }
            Err(err) => Err(err.into()),
        }
    }

    pub(crate) fn provider_view(&self, row: ProviderRow) -> Provider {
        let has_api_key = matches!(self.secrets.get(row.id.as_str()), Ok(Some(_)));
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

    pub(crate) async fn list_providers(&self) -> Result<Vec<Provider>, ApiError> {
        let rows = self.store.list_providers().await?;
        Ok(rows.into_iter().map(|row| self.provider_view(row)).collect())
    }

    pub(crate) async fn create_provider(&self, input: ProviderInput) -> Result<Provider, ApiError> {
        let checked = CheckedProvider::new(&input)?;
        let row = self.store.create_provider(&checked.fields(ProviderKind::OpenaiCompatible)).await?;
        self.store_key(&row.id, input.api_key.as_deref())?;
        Ok(self.provider_view(row))
    }

    pub(crate) async fn update_provider(&self, request: UpdateProvider) -> Result<Provider, ApiError> {
        let existing = self.store.get_provider(&request.id).await?;
        let checked = CheckedProvider::new(&request.provider)?;
        let row = self.store.update_provider(&request.id, &checked.fields(existing.kind)).await?;
        self.store_key(&row.id, request.provider.api_key.as_deref())?;
        Ok(self.provider_view(row))
    }

    /// `None` keeps the stored key, an empty key removes it.
    fn store_key(&self, id: &ProviderId, key: Option<&str>) -> Result<(), ApiError> {
        let result = match key.map(str::trim) {
            None => return Ok(()),
            Some("") => self.secrets.delete(id.as_str()),
            Some(key) => self.secrets.set(id.as_str(), key),
        };
        result.map_err(|e| ApiError::internal(format!("could not store the API key: {e}")))
    }

    pub(crate) fn api_key(&self, id: &ProviderId) -> Result<Option<String>, ApiError> {
        self.secrets.get(id.as_str()).map_err(|e| ApiError::internal(format!("could not read the API key: {e}")))
    }

    pub(crate) async fn provider_models(&self, request: ListModelsRequest) -> Result<ModelList, ApiError> {
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
            (None, Some(id)) => self.store.get_provider(id).await?.format,
            (None, None) => ApiFormat::OpenaiChat,
        };
        let models =
            providers::list_models_for(format, &self.http, base_url.as_str(), key.as_deref()).await.map_err(|e| {
                ApiError {
                    kind: ErrorKind::Provider,
                    message: format!("could not list models: {}", e.message),
                    retryable: e.retryable,
                    field: None,
                    code: Some(e.kind.as_str().to_owned()),
                }
            })?;
        Ok(ModelList { models })
    }

    /// The saved API key of provider `id`, to be sent to `base_url`: only where the
    /// provider is saved to live (its base URL's origin). Listing another address's models
    /// with it is refused: whoever answers there would get the key.
    async fn saved_key_for(&self, id: &ProviderId, base_url: &url::Url) -> Result<Option<String>, ApiError> {
        let Some(key) = self.api_key(id)? else { return Ok(None) };
        let provider = self.store.get_provider(id).await?;
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
    pub(crate) async fn demo_provider(&self) -> Result<Provider, ApiError> {
        let url = self.demo.ensure_started().await?;
        let rows = self.store.list_providers().await?;
        if let Some(row) = rows.into_iter().find(|r| r.kind == ProviderKind::Demo) {
            self.store.set_provider_base_url(&row.id, &url).await?;
            let row = self.store.get_provider(&row.id).await?;
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
        let row = self.store.create_provider(&fields).await?;
        Ok(self.provider_view(row))
    }

    /// At start-up: the demo server gets a new port each run.
    pub(crate) async fn restart_demo(&self) -> Result<(), ApiError> {
        let rows = self.store.list_providers().await?;
        let demos: Vec<_> = rows.into_iter().filter(|r| r.kind == ProviderKind::Demo).collect();
        if demos.is_empty() {
            return Ok(());
        }
        let url = self.demo.ensure_started().await?;
        for row in demos {
            self.store.set_provider_base_url(&row.id, &url).await?;
        }
        Ok(())
    }
}

/// The known services, for the "Add provider" form.
pub(crate) fn presets() -> Vec<ProviderPresetInfo> {
    providers::PRESETS
        .iter()
        .map(|p| ProviderPresetInfo {
            id: p.id.to_owned(),
            name: p.name.to_owned(),
            format: p.format,
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
