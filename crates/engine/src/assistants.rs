//! Assistants (saved setups) and workspace folders, with the checks that keep them
//! usable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use protocol::ApiError;
use protocol::api::{Assistant, AssistantInput, UpdateAssistant};
use store::Store;
use store::assistants::AssistantFields;

use crate::model_providers::Providers;
use crate::tools::Tools;

/// The default and the bounds of an assistant's tool-call cap.
pub(crate) const DEFAULT_MAX_TOOL_CALLS: u32 = agent::DEFAULT_MAX_TOOL_CALLS;
const MAX_TOOL_CALLS_RANGE: std::ops::RangeInclusive<u32> = 1..=100;

/// A workspace folder the user picked, checked: absolute, an existing folder, and neither
/// the file system root nor the home folder itself (tools could touch everything). The
/// canonical path comes back.
pub(crate) fn checked_workspace(field: &str, path: &str) -> Result<String, ApiError> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    checked_workspace_in(field, path, home.as_deref())
}

/// [`checked_workspace`] with the home folder given.
fn checked_workspace_in(field: &str, path: &str, home: Option<&Path>) -> Result<String, ApiError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(ApiError::bad_request(field, "choose a folder"));
    }
    let requested = Path::new(path);
    if !requested.is_absolute() {
        return Err(ApiError::bad_request(field, format!("{path} is not an absolute path")));
    }
    let canonical = std::fs::canonicalize(requested).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ApiError::bad_request(field, format!("{path} does not exist")),
        _ => ApiError::bad_request(field, format!("{path} cannot be opened: {e}")),
    })?;
    if !canonical.is_dir() {
        return Err(ApiError::bad_request(field, format!("{path} is a file, not a folder")));
    }
    if canonical.parent().is_none() {
        return Err(ApiError::bad_request(field, "the whole file system cannot be a workspace; pick a project folder"));
    }
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    if home.as_deref() == Some(canonical.as_path()) {
        return Err(ApiError::bad_request(
            field,
            "your whole home folder cannot be a workspace; pick a project folder inside it",
        ));
    }
    Ok(canonical.to_string_lossy().into_owned())
}

/// An assistant's features, checked against the registry the turns use: every name
/// registered, none given twice. `[]` is fine: a turn with no strategies (one model call
/// per reply; tool calls are answered but not followed up).
fn checked_features(features: &[String]) -> Result<(), ApiError> {
    let registry = agent::features::FeatureRegistry::builtin();
    registry.build(features).map_err(|unknown| ApiError::bad_request("features", unknown.to_string()))?;
    if let Some((_, twice)) = features.iter().enumerate().find(|(index, name)| features[..*index].contains(name)) {
        let known: Vec<&str> = registry.names().collect();
        return Err(ApiError::bad_request(
            "features",
            format!("{twice:?} is named twice; the features are: {}", known.join(", ")),
        ));
    }
    Ok(())
}

/// Saved setups: a system prompt, models, tools, a tool-call cap and a workspace.
pub(crate) struct Assistants {
    store: Store,
    providers: Arc<Providers>,
    tools: Arc<Tools>,
}

impl Assistants {
    pub(crate) fn new(store: Store, providers: Arc<Providers>, tools: Arc<Tools>) -> Self {
        Self { store, providers, tools }
    }

    pub(crate) async fn save_assistant(
        &self,
        id: Option<String>,
        input: AssistantInput,
    ) -> Result<Assistant, ApiError> {
        let name = input.name.trim();
        if name.is_empty() {
            return Err(ApiError::bad_request("name", "must not be empty"));
        }
        crate::limits::at_most("name", name, crate::limits::NAME)?;
        crate::limits::at_most("systemPrompt", input.system_prompt.trim(), crate::limits::SYSTEM_PROMPT)?;
        let max_tool_calls = input.max_tool_calls.unwrap_or(DEFAULT_MAX_TOOL_CALLS);
        if !MAX_TOOL_CALLS_RANGE.contains(&max_tool_calls) {
            return Err(ApiError::bad_request("maxToolCalls", "must be between 1 and 100"));
        }
        for (index, model) in input.models.iter().enumerate() {
            self.providers.check_model(model).await.map_err(|_| {
                ApiError::bad_request(
                    format!("models.{index}.providerId"),
                    format!("no provider {}", model.provider_id),
                )
            })?;
        }
        if let Some(tools) = &input.tools {
            let known: Vec<String> =
                self.tools.catalog().await.iter().map(|t| t.tool.definition().name.clone()).collect();
            for (index, tool) in tools.iter().enumerate() {
                if !known.contains(tool) {
                    return Err(ApiError::bad_request(
                        format!("tools.{index}"),
                        format!("there is no tool named {tool}"),
                    ));
                }
            }
        }
        if let Some(features) = &input.features {
            checked_features(features)?;
        }
        let workspace = match input.workspace.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
            Some(path) => Some(checked_workspace("workspace", path)?),
            None => None,
        };
        let id = match id {
            Some(id) => {
                self.store.get_assistant(&id).await?;
                id
            }
            None => uuid::Uuid::now_v7().to_string(),
        };
        let fields = AssistantFields {
            name,
            system_prompt: input.system_prompt.trim(),
            models: &input.models,
            tools: input.tools.as_deref(),
            max_tool_calls,
            workspace: workspace.as_deref(),
            features: input.features.as_deref(),
            params: crate::model_params::checked("params", input.params)?,
        };
        Ok(self.store.save_assistant(&id, &fields).await?)
    }

    pub(crate) async fn update_assistant(&self, request: UpdateAssistant) -> Result<Assistant, ApiError> {
        self.save_assistant(Some(request.id), request.assistant).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspaces_must_be_real_project_folders() {
        let dir = tempfile::tempdir().unwrap();
        let ok = checked_workspace("workspace", dir.path().to_str().unwrap()).unwrap();
        assert_eq!(Path::new(&ok), std::fs::canonicalize(dir.path()).unwrap());
        assert_eq!(checked_workspace("w", "relative/path").unwrap_err().field.as_deref(), Some("w"));
        assert!(checked_workspace("w", "/").unwrap_err().message.contains("whole file system"));
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        assert!(
            checked_workspace("w", file.to_str().unwrap()).unwrap_err().message.contains("is a file, not a folder")
        );
        let missing = dir.path().join("missing");
        assert_eq!(
            checked_workspace("w", missing.to_str().unwrap()).unwrap_err().message,
            format!("w: {} does not exist", missing.display())
        );
        assert_eq!(checked_workspace("w", "  ").unwrap_err().message, "w: choose a folder");
    }

    #[test]
    fn the_home_folder_itself_is_refused_but_a_folder_inside_it_is_fine() {
        let home = tempfile::tempdir().unwrap();
        let inside = home.path().join("project");
        std::fs::create_dir(&inside).unwrap();
        let err = checked_workspace_in("workspace", home.path().to_str().unwrap(), Some(home.path())).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("workspace"));
        assert!(err.message.contains("whole home folder"), "{}", err.message);
        // Spelled differently (a trailing slash, `..`), it is still the home folder.
        let roundabout = format!("{}/project/../", home.path().display());
        assert!(checked_workspace_in("workspace", &roundabout, Some(home.path())).is_err());
        assert!(checked_workspace_in("workspace", inside.to_str().unwrap(), Some(home.path())).is_ok());
    }
}
