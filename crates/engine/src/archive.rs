//! Export, import and backup: topics out as Markdown, JSON (`colloquy-export`, lossless)
//! or HTML; conversations in from our JSON, a ChatGPT or a Claude.ai export; the whole
//! database copied while the app runs, and restored at the next start.
//!
//! Imports never touch existing topics: each conversation becomes a new topic, written in
//! one transaction (all of it or nothing), and the report says what was left out and why.

mod chatgpt;
mod claude;
mod colloquy;
mod html;
mod import;
mod markdown;
mod render;
mod timestamps;

use std::path::{Path, PathBuf};

use protocol::api::{StoredMessage, Topic};
use protocol::archive::{
    BackupInfo, EXPORT_FORMAT, EXPORT_VERSION, ExportDocument, ExportFormat, ExportRequest, ExportedFile,
    ExportedTopic, ImportReport, ImportRequest, ImportedTopic, RestorePlan, RestoreRequest,
};
use protocol::{ApiError, ErrorKind};
use store::Store;
use store::archive::TopicImport;

/// The folder of backups, inside the data folder.
const BACKUPS: &str = "backups";
/// A backup chosen for restore waits here until the next start.
const PENDING_RESTORE: &str = "restore-pending.db";

pub(crate) struct Archive {
    store: Store,
    data_dir: PathBuf,
}

impl Archive {
    pub(crate) fn new(store: Store, data_dir: PathBuf) -> Self {
        Self { store, data_dir }
    }

    /// One topic, or every chat topic (newest first), as one file.
    pub(crate) async fn export(&self, request: ExportRequest) -> Result<ExportedFile, ApiError> {
        let topics = match &request.topic_id {
            Some(id) => vec![self.store.get_topic(id).await?],
            None => self.store.list_topics().await?,
        };
        let name = match (&request.topic_id, topics.first()) {
            (Some(_), Some(topic)) => slug(&topic.title),
            _ => "colloquy-export".to_owned(),
        };
        let day = store::now().get(..10).unwrap_or("").to_owned();
        let (content, extension, media_type) = match request.format {
            ExportFormat::Json => {
                let mut archived = Vec::with_capacity(topics.len());
                for topic in &topics {
                    archived.push(self.store.archive_topic(&topic.id).await?);
                }
                let document = ExportDocument {
                    format: EXPORT_FORMAT.to_owned(),
                    version: EXPORT_VERSION,
                    exported_at: store::now(),
                    app: format!("colloquy {}", env!("CARGO_PKG_VERSION")),
                    topics: archived,
                };
                let text = serde_json::to_string_pretty(&document)
                    .map_err(|e| ApiError::internal(format!("cannot write the export: {e}")))?;
                (text, "json", "application/json")
            }
            ExportFormat::Markdown => {
                let mut text = String::new();
                for (index, (topic, path)) in self.paths(&topics).await?.iter().enumerate() {
                    if index > 0 {
                        text.push_str("\n---\n\n");
                    }
                    markdown::write_topic(&mut text, topic, path);
                }
                (text, "md", "text/markdown")
            }
            ExportFormat::Html => {
                let title = match (&request.topic_id, topics.first()) {
                    (Some(_), Some(topic)) => topic.title.clone(),
                    _ => "Colloquy export".to_owned(),
                };
                (html::page(&title, &self.paths(&topics).await?), "html", "text/html")
            }
        };
        Ok(ExportedFile { file_name: format!("{name}-{day}.{extension}"), media_type: media_type.to_owned(), content })
    }

    async fn paths(&self, topics: &[Topic]) -> Result<Vec<(Topic, Vec<StoredMessage>)>, ApiError> {
        let mut out = Vec::with_capacity(topics.len());
        for topic in topics {
            out.push((topic.clone(), self.store.active_path(&topic.id).await?));
        }
        Ok(out)
    }

    /// Every conversation of the file as a new topic; see the module's doc.
    pub(crate) async fn import(&self, request: ImportRequest) -> Result<ImportReport, ApiError> {
        let parsed = import::parse(&request.content)?;
        let mut report = ImportReport { source: parsed.source, imported: Vec::new(), skipped: parsed.skipped };
        let imported_at = store::now();
        for mut topic in parsed.topics {
            if topic.messages.is_empty() {
                report.skipped.push(import::skip(&topic.title, None, "no message of it could be imported"));
                continue;
            }
            self.fit_settings(&mut topic).await?;
            match self.store.import_topic(&TopicImport { topic: &topic, imported_at: Some(&imported_at) }).await {
                Ok(topic_id) => report.imported.push(ImportedTopic {
                    topic_id,
                    title: topic.title.clone(),
                    messages: u32::try_from(topic.messages.len()).unwrap_or(u32::MAX),
                }),
                Err(store::StoreError::Invalid(reason)) => {
                    report.skipped.push(import::skip(&topic.title, None, reason))
                }
                Err(err) => return Err(err.into()),
            }
        }
        Ok(report)
    }

    /// A topic's settings that point at nothing here (another computer's provider,
    /// assistant or folder) are dropped: the topic then uses the defaults.
    async fn fit_settings(&self, topic: &mut ExportedTopic) -> Result<(), ApiError> {
        topic.title = topic.title.trim().chars().take(200).collect();
        if topic.title.is_empty() {
            topic.title = "Imported topic".to_owned();
        }
        if let Some(model) = &topic.model {
            match self.store.get_provider(&model.provider_id).await {
                Ok(_) => {}
                Err(store::StoreError::NotFound { .. }) => topic.model = None,
                Err(err) => return Err(err.into()),
            }
        }
        if let Some(assistant) = &topic.assistant_id {
            match self.store.get_assistant(assistant).await {
                Ok(_) => {}
                Err(store::StoreError::NotFound { .. }) => topic.assistant_id = None,
                Err(err) => return Err(err.into()),
            }
        }
        if topic.workspace.as_deref().is_some_and(|w| !Path::new(w).is_dir()) {
            topic.workspace = None;
        }
        Ok(())
    }

    fn backups_dir(&self) -> PathBuf {
        self.data_dir.join(BACKUPS)
    }

    /// A copy of the database in the data folder's `backups` folder, made while replies
    /// may be streaming (SQLite's `VACUUM INTO`). Keys are not in it.
    pub(crate) async fn backup(&self) -> Result<BackupInfo, ApiError> {
        let dir = self.backups_dir();
        crate::data_folder::prepare(&dir)
            .map_err(|e| ApiError::internal(format!("cannot make the folder {}: {e}", dir.display())))?;
        let stamp: String = store::now().chars().filter(|c| c.is_ascii_alphanumeric()).take(15).collect();
        let mut path = dir.join(format!("colloquy-{stamp}.db"));
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = dir.join(format!("colloquy-{stamp}-{n}.db"));
        }
        self.store.backup_to(&path).await?;
        info(&path).ok_or_else(|| ApiError::internal(format!("the backup {} was not written", path.display())))
    }

    /// The backups in the data folder, newest first.
    pub(crate) fn backups(&self) -> Result<Vec<BackupInfo>, ApiError> {
        let dir = self.backups_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(ApiError::internal(format!("cannot read {}: {err}", dir.display()))),
        };
        let mut backups: Vec<BackupInfo> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "db"))
            .filter_map(|p| info(&p))
            .collect();
        backups.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.path.cmp(&a.path)));
        Ok(backups)
    }

    /// Checks the backup opens (a copy of it, brought up to this version), and stages the
    /// copy; the next start puts it in place and keeps the current database aside. Nothing
    /// changes before that restart.
    pub(crate) async fn restore(&self, request: RestoreRequest) -> Result<RestorePlan, ApiError> {
        let name = request.file_name.trim();
        let bad = |message: String| ApiError {
            field: Some("fileName".to_owned()),
            ..ApiError::new(ErrorKind::BadRequest, message)
        };
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad(format!("{name:?} is not the name of a backup in the backups folder")));
        }
        let source = self.backups_dir().join(name);
        if !source.is_file() {
            return Err(ApiError::not_found("backup", name));
        }
        let pending = self.data_dir.join(PENDING_RESTORE);
        let staging = self.data_dir.join(format!("{PENDING_RESTORE}.part"));
        let _ = std::fs::remove_file(&staging);
        std::fs::copy(&source, &staging)
            .map_err(|e| ApiError::internal(format!("cannot copy the backup {}: {e}", source.display())))?;
        let checked = Store::open(&staging).await;
        match checked {
            Ok(copy) => {
                // Everything in the main file, so the one file moves alone.
                copy.compact().await?;
                drop(copy);
            }
            Err(err) => {
                let _ = std::fs::remove_file(&staging);
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", staging.display()));
                }
                return Err(bad(format!("the backup {name} cannot be used: {err}")));
            }
        }
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", staging.display()));
        }
        std::fs::rename(&staging, &pending)
            .map_err(|e| ApiError::internal(format!("cannot stage the backup for restore: {e}")))?;
        Ok(RestorePlan {
            message: format!(
                "Quit and start Colloquy again to finish: {name} then replaces the current conversations, \
                 and the current database is kept in {} as colloquy.db.before-restore-<time>. \
                 API keys are not in backups: enter them again under Settings → Providers if they are missing.",
                self.data_dir.display()
            ),
        })
    }
}

/// At start, before the database opens: a staged restore takes the database's place, and
/// the database it replaces is kept beside it. Returns where the old one went.
pub(crate) fn apply_pending_restore(data_dir: &Path) -> Result<Option<PathBuf>, ApiError> {
    let pending = data_dir.join(PENDING_RESTORE);
    if !pending.is_file() {
        return Ok(None);
    }
    let database = crate::database_path(data_dir);
    let kept = if database.exists() {
        Some(store::move_aside_as(&database, "before-restore").map_err(|e| {
            ApiError::internal(format!("cannot keep the current database aside to restore a backup: {e}"))
        })?)
    } else {
        None
    };
    std::fs::rename(&pending, &database)
        .map_err(|e| ApiError::internal(format!("cannot put the restored backup in place: {e}")))?;
    tracing::info!(kept = ?kept, "restored a backup; the previous database is kept");
    Ok(kept)
}

fn info(path: &Path) -> Option<BackupInfo> {
    let metadata = std::fs::metadata(path).ok()?;
    let created_at = metadata
        .modified()
        .ok()
        .map(::time::OffsetDateTime::from)
        .and_then(|t| t.format(&::time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default();
    Some(BackupInfo { path: path.display().to_string(), bytes: metadata.len(), created_at })
}

/// A file name from a title: letters, digits and dashes, at most 60 characters.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.chars().count() >= 60 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() { "topic".to_owned() } else { out }
}
