//! The built-in tools: useful offline, so approval has real stakes.
//!
//! - `workspace`: resolving paths inside the folder the user picked, and opening them
//!   through a handle on it that refuses links out at open time; nothing outside it.
//! - `files`: `read_file`, `list_dir`, `search_files` (read-only) and `write_file`,
//!   `edit_file` (destructive, with a diff preview for the approval card).
//! - `fetch`: `fetch_url`, an HTTP GET with a size cap.
//! - `clock`: `current_time`.

mod clock;
mod fetch;
mod files;
mod workspace;

use std::sync::Arc;

use crate::ToolSet;
use crate::tool::Tool;

pub use files::{WriteFile, diff, read_text, write_text};
pub use workspace::Workspace;

/// GETs `url` as `fetch_url` does without the user's say: never to a private address,
/// each redirect hop checked (for a remote image the user asked to see).
pub async fn get_public(url: &url::Url) -> Result<reqwest::Response, crate::ToolError> {
    fetch::FetchUrl::new().fetch_guarded(url, None).await
}

/// Every built-in tool.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(files::ReadFile::new()),
        Arc::new(files::ListDir::new()),
        Arc::new(files::SearchFiles::new()),
        Arc::new(files::WriteFile::new()),
        Arc::new(files::EditFile::new()),
        Arc::new(fetch::FetchUrl::new()),
        Arc::new(clock::CurrentTime::new()),
    ]
}

/// The built-in tools as a set.
pub fn tool_set() -> ToolSet {
    let mut set = ToolSet::new();
    for tool in all() {
        set.add(tool);
    }
    set
}

/// Names of the tools that work on the workspace folder.
pub const FILE_TOOLS: &[&str] = &["read_file", "list_dir", "search_files", "write_file", "edit_file"];
