//! Chat topics: creating and changing them, and the title a new topic starts with and
//! then takes from its first message.

use std::sync::Arc;

use protocol::ApiError;
use protocol::api::{CreateTopic, Topic, UpdateTopic};
use store::Store;

use crate::limits;
use crate::model_providers::Providers;

/// The title of a topic created without one, until its first message names it.
pub(crate) const DEFAULT_TOPIC_TITLE: &str = "New topic";
/// Longest automatic topic title, in characters.
const TITLE_CHARS: usize = 60;

pub(crate) struct Topics {
    store: Store,
    providers: Arc<Providers>,
}

impl Topics {
    pub(crate) fn new(store: Store, providers: Arc<Providers>) -> Self {
        Self { store, providers }
    }

    pub(crate) async fn create_topic(&self, request: CreateTopic) -> Result<Topic, ApiError> {
        let title = request.title.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or(DEFAULT_TOPIC_TITLE);
        limits::at_most("title", title, limits::TITLE)?;
        if let Some(model) = &request.model {
            self.providers.check_model(model).await?;
        }
        Ok(self.store.create_topic(title, request.model.as_ref()).await?)
    }

    pub(crate) async fn update_topic(&self, request: UpdateTopic) -> Result<Topic, ApiError> {
        let title = match request.title.as_deref() {
            Some(title) => Some(limits::at_most("title", limits::required("title", title)?, limits::TITLE)?),
            None => None,
        };
        if let Some(model) = &request.model {
            self.providers.check_model(model).await?;
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
                self.store.get_assistant(id).await.map_err(|e| match e {
                    store::StoreError::NotFound { .. } => {
                        ApiError::bad_request("assistantId", format!("no assistant {id}"))
                    }
                    other => other.into(),
                })?;
                Some(Some(id))
            }
        };
        let system_prompt = match request.system_prompt.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(prompt) => Some(Some(limits::at_most("systemPrompt", prompt, limits::SYSTEM_PROMPT)?)),
        };
        let params = request.params.map(|params| crate::model_params::checked("params", params)).transpose()?;
        let changes = store::topics::TopicChanges {
            title,
            model: request.model.as_ref(),
            workspace: workspace.as_ref().map(|w| w.as_deref()),
            assistant_id,
            system_prompt,
            params: params.as_ref(),
        };
        Ok(self.store.change_topic(&request.id, &changes).await?)
    }
}

/// A topic title from the first message: its first line, cut at a word boundary.
pub(crate) fn auto_title(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or(text).trim();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TITLE_CHARS).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > TITLE_CHARS / 2 => &cut[..space],
        _ => &cut,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_line_and_are_cut_at_a_word() {
        assert_eq!(auto_title("\n  Hello there\nmore"), "Hello there");
        let long = "word ".repeat(30);
        let title = auto_title(&long);
        assert!(title.ends_with('…'));
        assert!(title.chars().count() <= 61);
    }
}
