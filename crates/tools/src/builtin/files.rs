//! File tools inside the workspace: three that read, two that write.
//!
//! Every file is reached through the workspace handle (see `workspace.rs`), and only
//! regular files are read or written: a pipe, socket or device is refused, never waited
//! on. Reads stop at a cap (a model cannot take a gigabyte anyway) and skip binary files;
//! `edit_file` edits files up to [`EDIT_CAP`]; writes show the user a unified diff before
//! they run.

use std::ffi::OsStr;
use std::io::{Read, Seek, Write};
use std::path::Path;

use async_trait::async_trait;
use protocol::tool::{ToolAnnotations, ToolOutput};
use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use cap_std::fs::{Dir, File, Metadata, OpenOptions};

use super::Workspace;
use super::workspace::open_in;
use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError};

/// Most bytes `read_file` reads.
const READ_CAP: u64 = 256 * 1024;
/// Most entries `list_dir` returns.
const LIST_CAP: usize = 1000;
/// Files larger than this are not searched.
const SEARCH_FILE_CAP: u64 = 2 * 1024 * 1024;
/// Largest file `edit_file` edits (it holds the whole file, and the old and new text, in
/// memory) and that a write's preview shows a diff of.
pub(crate) const EDIT_CAP: u64 = 2 * 1024 * 1024;
/// Folders a listing or search does not descend into: version control and build output.
const SKIPPED_DIRS: &[&str] = &[".git", ".hg", ".svn", "node_modules", "target", "dist", "__pycache__", ".venv"];

fn definition(name: &str, description: &str, schema: Value, annotations: ToolAnnotations) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        title: None,
        description: description.to_owned(),
        input_schema: schema,
        annotations,
    }
}

const READ_ONLY: ToolAnnotations =
    ToolAnnotations { read_only: true, destructive: false, idempotent: true, open_world: false };

fn parse<T: for<'de> Deserialize<'de>>(input: Value) -> Result<T, ToolError> {
    serde_json::from_value(input).map_err(|e| ToolError::InvalidInput(e.to_string()))
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ToolError::Failed(format!("the file task failed: {e}")))?
}

/// The arguments with `path` relative to the workspace and normalized, for approval rules.
/// A path that does not resolve (outside the workspace, no workspace) stays as written:
/// the call is refused when it runs anyway.
fn rule_paths(input: &Value, ctx: &ToolContext) -> Value {
    let mut input = input.clone();
    let resolved = input.get("path").and_then(Value::as_str).and_then(|path| {
        let ws = Workspace::of(ctx).ok()?;
        let resolved = ws.resolve(path).ok()?;
        Some(ws.display(&resolved))
    });
    if let (Some(path), Some(object)) = (resolved, input.as_object_mut()) {
        object.insert("path".to_owned(), Value::String(path));
    }
    input
}

fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0)
}

/// The size of an opened file, once it is known to be a regular file.
fn regular_size(ws: &Workspace, file: &File, shown: &str) -> Result<u64, ToolError> {
    let meta = file.metadata().map_err(|e| ws.error("read", shown, e))?;
    if meta.is_dir() {
        Err(ToolError::Failed(format!("{shown} is a folder")))
    } else if meta.is_file() {
        Ok(meta.len())
    } else {
        Err(not_regular(shown))
    }
}

fn not_regular(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "{shown} is not a regular file (a pipe, socket or device); file tools read and write regular files only"
    ))
}

/// At most `cap` bytes from the start of `file`, and whether that was all of it.
fn read_capped(file: &File, cap: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let whole = bytes.len() as u64 <= cap;
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    Ok((bytes, whole))
}

/// The first bytes of a regular file in the workspace: at most `cap` of them.
struct Head {
    bytes: Vec<u8>,
    /// The file's size when it was opened.
    size: u64,
    /// Whether `bytes` is the whole file.
    whole: bool,
}

fn read_head(ws: &Workspace, path: &Path, shown: &str, cap: u64) -> Result<Head, ToolError> {
    let file = ws.open_file(path, OpenOptions::new().read(true)).map_err(|e| ws.error("read", shown, e))?;
    let size = regular_size(ws, &file, shown)?;
    let (bytes, whole) = read_capped(&file, cap).map_err(|e| ws.error("read", shown, e))?;
    Ok(Head { bytes, size, whole })
}

/// The whole text of a file `edit_file` is to change: a regular file of at most
/// [`EDIT_CAP`] bytes, in UTF-8.
fn text_to_edit(ws: &Workspace, file: &File, shown: &str) -> Result<String, ToolError> {
    let size = regular_size(ws, file, shown)?;
    let too_large = |size: u64| {
        ToolError::Failed(format!(
            "{shown} is too large to edit ({size} bytes; edit_file edits files up to {} MiB)",
            EDIT_CAP / (1024 * 1024)
        ))
    };
    if size > EDIT_CAP {
        return Err(too_large(size));
    }
    let (bytes, whole) = read_capped(file, EDIT_CAP).map_err(|e| ws.error("read", shown, e))?;
    if !whole {
        return Err(too_large(EDIT_CAP + 1));
    }
    String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("{shown} is not UTF-8 text; edit_file edits text files only")))
}

/// A preview computed off the async threads; no preview when it cannot be made.
async fn preview_blocking(work: impl FnOnce() -> Option<String> + Send + 'static) -> Option<String> {
    tokio::task::spawn_blocking(work).await.ok().flatten()
}

// ---------------------------------------------------------------------------------------

pub struct ReadFile(ToolDefinition);

impl ReadFile {
    pub fn new() -> Self {
        Self(definition(
            "read_file",
            "Read a text file in the workspace folder. Returns its lines, numbered. For long files, \
             pass `offset` (first line, 1-based) and `limit` (number of lines).",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace folder"},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)"},
                    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to return"}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            READ_ONLY,
        ))
    }
}

#[derive(Deserialize)]
struct ReadInput {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadFile {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn rule_input(&self, input: &Value, ctx: &ToolContext) -> Value {
        rule_paths(input, ctx)
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: ReadInput = parse(input)?;
        let ws = Workspace::of(ctx)?;
        let path = ws.resolve(&input.path)?;
        let shown = ws.display(&path);
        blocking(move || {
            let Head { bytes, size, whole } = read_head(&ws, &path, &shown, READ_CAP)?;
            if looks_binary(&bytes) {
                return Err(ToolError::Failed(format!(
                    "{shown} is a binary file ({size} bytes); read_file reads text only"
                )));
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let first = input.offset.unwrap_or(1).max(1);
            let lines: Vec<&str> = text.lines().collect();
            let total = lines.len();
            let take = input.limit.unwrap_or(usize::MAX);
            let mut out = String::new();
            for (number, line) in lines.iter().enumerate().skip(first - 1).take(take) {
                out.push_str(&format!("{:>6}\t{line}\n", number + 1));
            }
            if out.is_empty() {
                out = if total == 0 {
                    format!("{shown} is empty\n")
                } else {
                    format!("{shown} has only {total} lines\n")
                };
            }
            if !whole {
                out.push_str(&format!("[only the first {READ_CAP} bytes of {shown} ({size} bytes) were read]\n"));
            }
            Ok(ToolOutput::text(out))
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------

pub struct ListDir(ToolDefinition);

impl ListDir {
    pub fn new() -> Self {
        Self(definition(
            "list_dir",
            "List a folder in the workspace: one entry per line, folders ending in `/`, files with \
             their size. `recursive` lists everything below (skipping .git, node_modules, target).",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Folder relative to the workspace (default: the workspace itself)"},
                    "recursive": {"type": "boolean"}
                },
                "additionalProperties": false
            }),
            READ_ONLY,
        ))
    }
}

#[derive(Deserialize)]
struct ListInput {
    #[serde(default)]
    path: String,
    #[serde(default)]
    recursive: bool,
}

#[async_trait]
impl Tool for ListDir {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn rule_input(&self, input: &Value, ctx: &ToolContext) -> Value {
        rule_paths(input, ctx)
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: ListInput = parse(input)?;
        let ws = Workspace::of(ctx)?;
        let dir = ws.resolve(&input.path)?;
        blocking(move || {
            let shown = ws.display(&dir);
            let handle = open_folder(&ws, &dir, &shown)?;
            let mut lines = Vec::new();
            let mut more = false;
            walk(&handle, &dir, input.recursive, &mut |_, _, path, meta| {
                if lines.len() >= LIST_CAP {
                    more = true;
                    return false;
                }
                let name = ws.display(path);
                lines.push(if meta.is_dir() { format!("{name}/") } else { format!("{name}  ({} bytes)", meta.len()) });
                true
            })
            .map_err(|e| ws.error("list", &shown, e))?;
            if lines.is_empty() {
                return Ok(ToolOutput::text(format!("{shown} is empty")));
            }
            if more {
                lines.push(format!("[stopped after {LIST_CAP} entries]"));
            }
            Ok(ToolOutput::text(lines.join("\n")))
        })
        .await
    }
}

/// The resolved folder `dir`, opened for listing.
fn open_folder(ws: &Workspace, dir: &Path, shown: &str) -> Result<Dir, ToolError> {
    match ws.metadata(dir) {
        Ok(meta) if meta.is_dir() => ws.open_dir(dir).map_err(|e| ws.error("list", shown, e)),
        Ok(_) => Err(ToolError::Failed(format!("{shown} is not a folder"))),
        Err(e) => Err(ws.error("list", shown, e)),
    }
}

/// What `walk` shows a visitor: the folder holding an entry and the entry's name in it
/// (to open it through that folder), the entry's path (to show it), and its metadata (of
/// a link itself, never of its target). The visitor returns false to stop.
type Visit<'a> = dyn FnMut(&Dir, &OsStr, &Path, &Metadata) -> bool + 'a;

/// Visits the entries of the open folder `dir`, which is at `at`, in name order (folders
/// before their contents). Links are listed, never followed; subfolders are opened
/// through their parent's handle, so the walk cannot leave the folder it started in.
fn walk(dir: &Dir, at: &Path, recursive: bool, visit: &mut Visit<'_>) -> std::io::Result<bool> {
    let mut entries: Vec<(std::ffi::OsString, Metadata)> = dir
        .entries()?
        .filter_map(Result::ok)
        .filter_map(|entry| entry.metadata().ok().map(|meta| (entry.file_name(), meta)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, meta) in entries {
        let path = at.join(&name);
        if !visit(dir, &name, &path, &meta) {
            return Ok(false);
        }
        let skipped = name.to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n));
        if recursive && meta.is_dir() && !skipped && !walk(&dir.open_dir(&name)?, &path, true, visit)? {
            return Ok(false);
        }
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------

pub struct SearchFiles(ToolDefinition);

impl SearchFiles {
    pub fn new() -> Self {
        Self(definition(
            "search_files",
            "Search the text files of the workspace for a regular expression (or plain text with \
             `literal: true`). Returns `path:line: text` for each matching line.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "A regular expression (Rust syntax)"},
                    "path": {"type": "string", "description": "Folder to search, relative to the workspace (default: all of it)"},
                    "literal": {"type": "boolean", "description": "Treat the pattern as plain text"},
                    "file_glob": {"type": "string", "description": "Only files whose name matches, e.g. `*.rs`"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            READ_ONLY,
        ))
    }
}

#[derive(Deserialize)]
struct SearchInput {
    pattern: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    literal: bool,
    file_glob: Option<String>,
    max_results: Option<usize>,
}

#[async_trait]
impl Tool for SearchFiles {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn rule_input(&self, input: &Value, ctx: &ToolContext) -> Value {
        rule_paths(input, ctx)
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: SearchInput = parse(input)?;
        let pattern = if input.literal { regex::escape(&input.pattern) } else { input.pattern.clone() };
        let regex = Regex::new(&pattern)
            .map_err(|e| ToolError::InvalidInput(format!("the pattern is not a valid regular expression: {e}")))?;
        let name_filter = match &input.file_glob {
            Some(glob) => Some(
                Regex::new(&format!("^{}$", regex::escape(glob).replace(r"\*", ".*").replace(r"\?", ".")))
                    .map_err(|e| ToolError::InvalidInput(format!("file_glob: {e}")))?,
            ),
            None => None,
        };
        let max = input.max_results.unwrap_or(200).min(1000);
        let ws = Workspace::of(ctx)?;
        let root = ws.resolve(&input.path)?;
        let cancel = ctx.cancel.clone();
        blocking(move || {
            let mut hits = Vec::new();
            let mut visit = |parent: &Dir, name: &OsStr, path: &Path, meta: &Metadata| {
                if cancel.is_cancelled() || hits.len() >= max {
                    return false;
                }
                if !meta.is_file() || meta.len() > SEARCH_FILE_CAP {
                    return true;
                }
                if name_filter.as_ref().is_some_and(|filter| !filter.is_match(&name.to_string_lossy())) {
                    return true;
                }
                // Opened through its folder, checked again: it may have changed since the listing.
                let Ok(file) = open_in(parent, Path::new(name), OpenOptions::new().read(true)) else { return true };
                if !file.metadata().is_ok_and(|meta| meta.is_file()) {
                    return true;
                }
                let Ok((bytes, true)) = read_capped(&file, SEARCH_FILE_CAP) else { return true };
                if looks_binary(&bytes) {
                    return true;
                }
                let text = String::from_utf8_lossy(&bytes);
                for (number, line) in text.lines().enumerate() {
                    if regex.is_match(line) {
                        let line: String = line.chars().take(300).collect();
                        hits.push(format!("{}:{}: {}", ws.display(path), number + 1, line.trim_end()));
                        if hits.len() >= max {
                            break;
                        }
                    }
                }
                true
            };
            let meta = ws.metadata(&root).map_err(|e| ws.error("search", &input.path, e))?;
            if meta.is_dir() {
                let folder = open_folder(&ws, &root, &input.path)?;
                walk(&folder, &root, true, &mut visit).map_err(|e| ws.error("search", &input.path, e))?;
            } else if let (Some(parent), Some(name)) = (root.parent(), root.file_name()) {
                let folder = open_folder(&ws, parent, &input.path)?;
                visit(&folder, name, &root, &meta);
            }
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            if hits.is_empty() {
                return Ok(ToolOutput::text(format!("no matches for {}", input.pattern)));
            }
            if hits.len() >= max {
                hits.push(format!("[stopped at {max} matches]"));
            }
            Ok(ToolOutput::text(hits.join("\n")))
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------

const WRITES: ToolAnnotations =
    ToolAnnotations { read_only: false, destructive: true, idempotent: true, open_world: false };

/// A unified diff of a file's change, for the approval card.
/// A unified diff of `old` → `new` for the file shown as `shown`, as approval cards show it.
pub fn diff(shown: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(3).header(&format!("a/{shown}"), &format!("b/{shown}")).to_string();
    if text.is_empty() { format!("{shown}: no change") } else { text }
}

/// Writes `content` to `path` in the workspace as `write_file` does (the same checks;
/// missing folders created; never through a link out): for programs that write through
/// Colloquy (an ACP agent's `fs/write_text_file`). Says what it did. Blocks.
pub fn write_text(ws: &Workspace, path: &str, content: &str) -> Result<String, ToolError> {
    let path = ws.resolve(path)?;
    let shown = ws.display(&path);
    let existed = match ws.metadata(&path) {
        Ok(meta) if meta.is_dir() => return Err(ToolError::Failed(format!("{shown} is a folder"))),
        Ok(meta) if !meta.is_file() => return Err(not_regular(&shown)),
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(ws.error("write", &shown, e)),
    };
    if let Some(parent) = path.parent().filter(|parent| *parent != ws.root()) {
        ws.create_dir_all(parent).map_err(|e| ws.error("create the folder for", &shown, e))?;
    }
    // Not truncated on opening: only once it is known to be a regular file.
    let mut file = ws
        .open_file(&path, OpenOptions::new().write(true).create(true).truncate(false))
        .map_err(|e| ws.error("write", &shown, e))?;
    regular_size(ws, &file, &shown)?;
    file.set_len(0).and_then(|()| file.write_all(content.as_bytes())).map_err(|e| ws.error("write", &shown, e))?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(format!("{verb} {shown} ({} bytes)", content.len()))
}

/// The text of a file in the workspace, as it is (not numbered), from line `line`
/// (1-based) for `limit` lines: for programs that read through Colloquy (an ACP agent's
/// `fs/read_text_file`). The same checks as `read_file`; a file over 2 MiB, binary or
/// not UTF-8 is refused. Blocks.
pub fn read_text(ws: &Workspace, path: &str, line: Option<usize>, limit: Option<usize>) -> Result<String, ToolError> {
    let path = ws.resolve(path)?;
    let shown = ws.display(&path);
    let Head { bytes, size, whole } = read_head(ws, &path, &shown, EDIT_CAP)?;
    if !whole {
        return Err(ToolError::Failed(format!("{shown} is too large to read whole ({size} bytes)")));
    }
    if looks_binary(&bytes) {
        return Err(ToolError::Failed(format!("{shown} is a binary file ({size} bytes)")));
    }
    let text = String::from_utf8(bytes).map_err(|_| ToolError::Failed(format!("{shown} is not UTF-8 text")))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let first = line.unwrap_or(1).max(1);
    Ok(text.split_inclusive('\n').skip(first - 1).take(limit.unwrap_or(usize::MAX)).collect())
}

pub struct WriteFile(ToolDefinition);

impl Default for WriteFile {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteFile {
    pub fn new() -> Self {
        Self(definition(
            "write_file",
            "Create or overwrite a text file in the workspace with `content`. Missing folders are created.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace folder"},
                    "content": {"type": "string", "description": "The whole new content of the file"}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            WRITES,
        ))
    }
}

#[derive(Deserialize)]
struct WriteInput {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteFile {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn rule_input(&self, input: &Value, ctx: &ToolContext) -> Value {
        rule_paths(input, ctx)
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: WriteInput = parse(input)?;
        let ws = Workspace::of(ctx)?;
        blocking(move || write_text(&ws, &input.path, &input.content).map(ToolOutput::text)).await
    }

    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Option<String> {
        let input: WriteInput = parse(input.clone()).ok()?;
        let ws = Workspace::of(ctx).ok()?;
        let path = ws.resolve(&input.path).ok()?;
        let shown = ws.display(&path);
        preview_blocking(move || {
            let head = match ws.metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Some(diff(&shown, "", &input.content));
                }
                _ => read_head(&ws, &path, &shown, EDIT_CAP),
            };
            match head {
                Ok(Head { bytes, size, .. }) if looks_binary(&bytes) => {
                    Some(format!("{shown}: replaces a binary file of {size} bytes"))
                }
                Ok(Head { bytes, whole: true, .. }) => {
                    Some(diff(&shown, &String::from_utf8_lossy(&bytes), &input.content))
                }
                Ok(Head { size, .. }) => {
                    Some(format!("{shown}: replaces a file of {size} bytes, too large to show a diff"))
                }
                Err(ToolError::Refused(_)) => None,
                Err(err) => Some(format!("this write will fail: {err}")),
            }
        })
        .await
    }
}

pub struct EditFile(ToolDefinition);

impl EditFile {
    pub fn new() -> Self {
        Self(definition(
            "edit_file",
            "Replace exact text in a file of the workspace (a text file of at most 2 MiB). \
             `old_text` must match exactly once (include surrounding lines to make it unique) \
             unless `replace_all` is true.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string", "minLength": 1},
                    "new_text": {"type": "string"},
                    "replace_all": {"type": "boolean"}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
            ToolAnnotations { idempotent: false, ..WRITES },
        ))
    }
}

#[derive(Deserialize)]
struct EditInput {
    path: String,
    old_text: String,
    new_text: String,
    #[serde(default)]
    replace_all: bool,
}

/// The file's text after the edit, or why the edit cannot be made.
fn edited(text: &str, input: &EditInput, shown: &str) -> Result<String, ToolError> {
    if input.old_text.is_empty() {
        return Err(ToolError::InvalidInput("old_text must not be empty".into()));
    }
    match text.matches(input.old_text.as_str()).count() {
        0 => Err(ToolError::Failed(format!(
            "old_text was not found in {shown}; read the file and copy the text exactly"
        ))),
        1 => Ok(text.replacen(&input.old_text, &input.new_text, 1)),
        n if input.replace_all => {
            let _ = n;
            Ok(text.replace(&input.old_text, &input.new_text))
        }
        n => Err(ToolError::Failed(format!(
            "old_text matches {n} places in {shown}; include more surrounding text, or set replace_all"
        ))),
    }
}

#[async_trait]
impl Tool for EditFile {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn rule_input(&self, input: &Value, ctx: &ToolContext) -> Value {
        rule_paths(input, ctx)
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: EditInput = parse(input)?;
        let ws = Workspace::of(ctx)?;
        let path = ws.resolve(&input.path)?;
        let shown = ws.display(&path);
        blocking(move || {
            // One open for reading and writing: the text edited is the file written.
            let mut file = ws
                .open_file(&path, OpenOptions::new().read(true).write(true))
                .map_err(|e| ws.error("edit", &shown, e))?;
            let text = text_to_edit(&ws, &file, &shown)?;
            let new = edited(&text, &input, &shown)?;
            file.set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(new.as_bytes()))
                .map_err(|e| ws.error("write", &shown, e))?;
            let count = if input.replace_all { text.matches(input.old_text.as_str()).count() } else { 1 };
            Ok(ToolOutput::text(format!("edited {shown} ({count} replacement{})", if count == 1 { "" } else { "s" })))
        })
        .await
    }

    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Option<String> {
        let input: EditInput = parse(input.clone()).ok()?;
        let ws = Workspace::of(ctx).ok()?;
        let path = ws.resolve(&input.path).ok()?;
        let shown = ws.display(&path);
        preview_blocking(move || {
            let text = ws
                .open_file(&path, OpenOptions::new().read(true))
                .map_err(|e| ws.error("read", &shown, e))
                .and_then(|file| text_to_edit(&ws, &file, &shown))
                .and_then(|text| edited(&text, &input, &shown).map(|new| (text, new)));
            match text {
                Ok((text, new)) => Some(diff(&shown, &text, &new)),
                Err(ToolError::Refused(_)) => None,
                Err(err) => Some(format!("this edit will fail: {err}")),
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::detached(Some(dir.to_path_buf()))
    }

    fn text(output: &ToolOutput) -> String {
        output.text_content()
    }

    #[tokio::test]
    async fn read_list_and_search_stay_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.path().join("blob.bin"), [0u8, 1, 2]).unwrap();
        std::fs::create_dir_all(dir.path().join("node_modules/x")).unwrap();
        std::fs::write(dir.path().join("node_modules/x/i.js"), "println").unwrap();
        let ctx = ctx(dir.path());

        let out = ReadFile::new().execute(json!({"path": "notes.txt", "offset": 2, "limit": 1}), &ctx).await.unwrap();
        assert_eq!(text(&out), "     2\ttwo\n");
        let err = ReadFile::new().execute(json!({"path": "blob.bin"}), &ctx).await.unwrap_err();
        assert!(err.to_string().contains("binary"), "{err}");
        let err = ReadFile::new().execute(json!({"path": "../etc/passwd"}), &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)));
        let err = ReadFile::new().execute(json!({"path": "nope.txt"}), &ctx).await.unwrap_err();
        assert_eq!(err.to_string(), "nope.txt does not exist");

        let out = ListDir::new().execute(json!({"recursive": true}), &ctx).await.unwrap();
        let listing = text(&out);
        assert!(
            listing.contains("src/\n") && listing.contains("src/main.rs  (") && listing.contains("node_modules/"),
            "{listing}"
        );
        assert!(!listing.contains("i.js"), "node_modules is not descended into: {listing}");

        let out = SearchFiles::new().execute(json!({"pattern": "println"}), &ctx).await.unwrap();
        assert_eq!(text(&out), "src/main.rs:2:     println!(\"hi\");");
        let out = SearchFiles::new().execute(json!({"pattern": "(", "literal": true}), &ctx).await.unwrap();
        assert!(text(&out).starts_with("src/main.rs:1:"));
        let err = SearchFiles::new().execute(json!({"pattern": "("}), &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidInput(_)));
        let out = SearchFiles::new().execute(json!({"pattern": "t", "file_glob": "*.txt"}), &ctx).await.unwrap();
        assert_eq!(text(&out), "notes.txt:2: two\nnotes.txt:3: three");
    }

    #[tokio::test]
    async fn writes_and_edits_preview_a_diff_and_then_change_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx(dir.path());
        let write = WriteFile::new();
        let input = json!({"path": "docs/a.md", "content": "hello\nworld\n"});
        let preview = write.preview(&input, &ctx).await.unwrap();
        assert!(preview.contains("+++ b/docs/a.md") && preview.contains("+hello"), "{preview}");
        assert!(!dir.path().join("docs/a.md").exists(), "a preview writes nothing");
        assert_eq!(text(&write.execute(input, &ctx).await.unwrap()), "created docs/a.md (12 bytes)");

        let edit = EditFile::new();
        let input = json!({"path": "docs/a.md", "old_text": "world", "new_text": "there"});
        let preview = edit.preview(&input, &ctx).await.unwrap();
        assert!(preview.contains("-world") && preview.contains("+there"), "{preview}");
        edit.execute(input, &ctx).await.unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("docs/a.md")).unwrap(), "hello\nthere\n");

        std::fs::write(dir.path().join("b.txt"), "x x").unwrap();
        let err = edit.execute(json!({"path": "b.txt", "old_text": "x", "new_text": "y"}), &ctx).await.unwrap_err();
        assert!(err.to_string().contains("matches 2 places"), "{err}");
        edit.execute(json!({"path": "b.txt", "old_text": "x", "new_text": "y", "replace_all": true}), &ctx)
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "y y");
        let err = edit.execute(json!({"path": "b.txt", "old_text": "zz", "new_text": "y"}), &ctx).await.unwrap_err();
        assert!(err.to_string().contains("not found"), "{err}");
        let err = write.execute(json!({"path": "/tmp/outside.txt", "content": "x"}), &ctx).await.unwrap_err();
        assert!(matches!(err, ToolError::Refused(_)));
    }

    /// A workspace with a secret beside it (outside), and inside it a link to that
    /// secret's folder and one to the secret itself.
    fn workspace_with_links_out() -> (tempfile::TempDir, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "the secret").unwrap();
        std::fs::write(dir.path().join("inside.txt"), "no secret here").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
            std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("secret-link.txt")).unwrap();
        }
        (dir, outside)
    }

    fn refused(result: Result<ToolOutput, ToolError>, what: &str) {
        match result {
            Err(ToolError::Refused(message)) => assert!(message.contains("outside the workspace"), "{what}: {message}"),
            other => panic!("{what} must be refused, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn listing_searching_and_editing_never_leave_the_workspace() {
        let (dir, outside) = workspace_with_links_out();
        let ctx = ctx(dir.path());
        let secret_dir = outside.path().to_str().unwrap().to_owned();
        let secret = outside.path().join("secret.txt").to_str().unwrap().to_owned();
        let parent = format!("../{}", outside.path().file_name().unwrap().to_str().unwrap());

        for path in [parent.as_str(), secret_dir.as_str(), "out", "out/"] {
            refused(ListDir::new().execute(json!({ "path": path }), &ctx).await, &format!("list_dir {path}"));
            refused(
                SearchFiles::new().execute(json!({ "pattern": "secret", "path": path }), &ctx).await,
                &format!("search_files {path}"),
            );
        }
        for path in [format!("{parent}/secret.txt"), secret.clone(), "out/secret.txt".into(), "secret-link.txt".into()]
        {
            let input = json!({ "path": path, "old_text": "secret", "new_text": "leak" });
            refused(EditFile::new().execute(input.clone(), &ctx).await, &format!("edit_file {path}"));
            assert_eq!(EditFile::new().preview(&input, &ctx).await, None, "no preview of {path} either");
        }
        assert_eq!(std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(), "the secret");

        // Walking the workspace shows the links but never follows them out.
        let listing = text(&ListDir::new().execute(json!({ "recursive": true }), &ctx).await.unwrap());
        assert!(!listing.contains("secret.txt"), "{listing}");
        let hits = text(&SearchFiles::new().execute(json!({ "pattern": "secret" }), &ctx).await.unwrap());
        assert_eq!(hits, "inside.txt:1: no secret here");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn audit_01_write_file_refuses_a_dangling_symlink_out_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        // Links whose targets do not exist yet: a file, and a folder to write into.
        std::os::unix::fs::symlink(outside.path().join("x"), dir.path().join("notes.md")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("new"), dir.path().join("docs")).unwrap();
        let ctx = ctx(dir.path());

        for path in ["notes.md", "docs/a.md"] {
            let input = json!({ "path": path, "content": "written through a link" });
            assert_eq!(WriteFile::new().preview(&input, &ctx).await, None, "no preview of {path}");
            refused(WriteFile::new().execute(input, &ctx).await, &format!("write_file {path}"));
            let input = json!({ "path": path, "old_text": "a", "new_text": "b" });
            refused(EditFile::new().execute(input, &ctx).await, &format!("edit_file {path}"));
            refused(ReadFile::new().execute(json!({ "path": path }), &ctx).await, &format!("read_file {path}"));
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing was created outside");
        assert_eq!(WriteFile::new().rule_input(&json!({ "path": "notes.md" }), &ctx)["path"], "notes.md");

        // A dangling link that stays inside is written through, creating its target.
        std::os::unix::fs::symlink("drafts/today.md", dir.path().join("today.md")).unwrap();
        let out = WriteFile::new().execute(json!({ "path": "today.md", "content": "hi" }), &ctx).await.unwrap();
        assert_eq!(text(&out), "created drafts/today.md (2 bytes)");
        assert_eq!(std::fs::read_to_string(dir.path().join("today.md")).unwrap(), "hi");
    }

    /// Makes a FIFO at `path` and keeps opening its other end (and writing a line into it)
    /// until the returned flag is set, so that a tool that waited on the FIFO would go on
    /// instead of hanging the test.
    #[cfg(unix)]
    fn fifo_with_another_end(
        path: &Path,
    ) -> (std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<()>) {
        use std::os::unix::fs::OpenOptionsExt;
        use std::sync::atomic::Ordering;
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0, "mkfifo");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let path = path.to_path_buf();
        let flag = stop.clone();
        let other_end = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                // Read and write: opening never waits, and unblocks a reader or a writer.
                let end = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&path);
                if let Ok(mut end) = end {
                    let _ = std::io::Write::write_all(&mut end, b"from a pipe\n");
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        (stop, other_end)
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn audit_13_file_tools_refuse_a_fifo_instead_of_waiting_on_it() {
        let dir = tempfile::tempdir().unwrap();
        let (stop, other_end) = fifo_with_another_end(&dir.path().join("pipe"));
        let ctx = ctx(dir.path());

        let read = ReadFile::new().execute(json!({ "path": "pipe" }), &ctx).await;
        let write = WriteFile::new().execute(json!({ "path": "pipe", "content": "x" }), &ctx).await;
        let edit = EditFile::new().execute(json!({ "path": "pipe", "old_text": "pipe", "new_text": "x" }), &ctx).await;
        let preview =
            EditFile::new().preview(&json!({ "path": "pipe", "old_text": "pipe", "new_text": "x" }), &ctx).await;
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        other_end.join().unwrap();

        for (tool, result) in [("read_file", read), ("write_file", write), ("edit_file", edit)] {
            match result {
                Err(ToolError::Failed(message)) => assert_eq!(
                    message,
                    "pipe is not a regular file (a pipe, socket or device); file tools read and write regular files only",
                    "{tool}"
                ),
                other => panic!("{tool} must refuse the FIFO, got {other:?}"),
            }
        }
        assert!(preview.as_deref().is_some_and(|p| p.contains("not a regular file")), "{preview:?}");
    }

    #[tokio::test]
    async fn audit_13_read_file_stops_at_its_cap_and_says_how_big_the_file_is() {
        let dir = tempfile::tempdir().unwrap();
        let head: String = (1..=2000).map(|n| format!("line {n}\n")).collect();
        let file = std::fs::File::create(dir.path().join("huge.log")).unwrap();
        std::io::Write::write_all(&mut &file, head.as_bytes()).unwrap();
        file.set_len(1 << 30).unwrap(); // a sparse gigabyte
        let ctx = ctx(dir.path());

        let out = text(&ReadFile::new().execute(json!({ "path": "huge.log", "limit": 2 }), &ctx).await.unwrap());
        assert_eq!(
            out,
            "     1\tline 1\n     2\tline 2\n[only the first 262144 bytes of huge.log (1073741824 bytes) were read]\n"
        );
        let preview = WriteFile::new().preview(&json!({ "path": "huge.log", "content": "x" }), &ctx).await.unwrap();
        assert_eq!(preview, "huge.log: replaces a file of 1073741824 bytes, too large to show a diff");
    }

    #[tokio::test]
    async fn audit_13_edit_file_refuses_a_file_above_its_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        std::fs::write(&path, "hello\n").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_len(EDIT_CAP + 1).unwrap();
        let ctx = ctx(dir.path());
        let input = json!({ "path": "big.txt", "old_text": "hello", "new_text": "bye" });

        let err = EditFile::new().execute(input.clone(), &ctx).await.unwrap_err();
        let expected =
            format!("big.txt is too large to edit ({} bytes; edit_file edits files up to 2 MiB)", EDIT_CAP + 1);
        assert_eq!(err, ToolError::Failed(expected.clone()));
        assert_eq!(EditFile::new().preview(&input, &ctx).await, Some(format!("this edit will fail: {expected}")));
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"hello\n") && bytes.len() as u64 == EDIT_CAP + 1, "the file is unchanged");

        // At the limit, it is edited.
        std::fs::File::options().write(true).open(&path).unwrap().set_len(EDIT_CAP).unwrap();
        EditFile::new().execute(input, &ctx).await.unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(b"bye\n"));
    }

    #[tokio::test]
    async fn rules_see_paths_relative_to_the_workspace_however_they_are_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join(".env"), "KEY=1").unwrap();
        let ctx = ctx(dir.path());
        let absolute = std::fs::canonicalize(dir.path()).unwrap().join(".env");
        for path in [".env", "./.env", "a/../.env", absolute.to_str().unwrap()] {
            let input = json!({ "path": path, "offset": 1 });
            assert_eq!(ReadFile::new().rule_input(&input, &ctx), json!({ "path": ".env", "offset": 1 }), "{path}");
            assert_eq!(WriteFile::new().rule_input(&input, &ctx)["path"], ".env", "{path}");
        }
        // What cannot be resolved is left as written (running it is refused anyway).
        let outside = json!({ "path": "../x" });
        assert_eq!(EditFile::new().rule_input(&outside, &ctx), outside);
        assert_eq!(ListDir::new().rule_input(&json!({}), &ctx), json!({}));
        assert_eq!(SearchFiles::new().rule_input(&json!({ "pattern": "x", "path": "a/." }), &ctx)["path"], "a");
    }

    #[tokio::test]
    async fn without_a_workspace_file_tools_refuse_and_say_why() {
        let err = ListDir::new().execute(json!({}), &ToolContext::detached(None)).await.unwrap_err();
        assert!(err.to_string().contains("no workspace folder"), "{err}");
    }
}
