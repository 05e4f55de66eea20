//! [`Workspace`]: the folder file tools may touch, turning the model's paths into paths
//! inside it, and reaching files there.
//!
//! Two layers keep file tools inside. [`Workspace::resolve`] checks a path up front (for
//! approval rules, previews and a clear refusal): a path that leads outside (by `..`, an
//! absolute path, or a symlink, dangling ones included) is refused, whether it exists or
//! is about to be created. Then every open, listing and folder creation goes through a
//! [`cap_std::fs::Dir`] handle on the workspace, which resolves the path again at open
//! time (`openat2(RESOLVE_BENEATH)` on Linux) and refuses any link that leads out, so a
//! link created or swapped in after the check cannot be followed either.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::{Dir, File, Metadata, OpenOptions};

use crate::tool::ToolError;

/// How many links `resolve` follows before giving up (Linux's own limit).
const MAX_LINK_HOPS: u32 = 40;

#[derive(Clone, Debug)]
pub struct Workspace {
    /// Canonical: no symlinks, no `..`.
    root: PathBuf,
    /// The open workspace folder: everything below is reached through it, never by an
    /// absolute path.
    dir: Arc<Dir>,
}

impl Workspace {
    /// The workspace at `path`, which must be an existing folder.
    pub fn open(path: &Path) -> Result<Self, ToolError> {
        let cannot_open =
            |e: io::Error| ToolError::Refused(format!("the workspace folder {} cannot be opened: {e}", path.display()));
        let root = std::fs::canonicalize(path).map_err(cannot_open)?;
        if !root.is_dir() {
            return Err(ToolError::Refused(format!("the workspace {} is not a folder", root.display())));
        }
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).map_err(cannot_open)?;
        Ok(Self { root, dir: Arc::new(dir) })
    }

    /// The workspace of a call, or a refusal telling the user to pick one.
    pub fn of(ctx: &crate::ToolContext) -> Result<Self, ToolError> {
        match &ctx.workspace {
            Some(path) => Self::open(path),
            None => Err(ToolError::Refused(
                "no workspace folder is set for this conversation; ask the user to choose one in the topic's settings"
                    .to_owned(),
            )),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` (relative to the workspace, or absolute inside it) as an absolute path inside
    /// the workspace, with the links of its existing part resolved. It need not exist yet.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let path = path.trim();
        let requested = Path::new(if path.is_empty() { "." } else { path });
        let joined = if requested.is_absolute() { requested.to_path_buf() } else { self.root.join(requested) };
        let normal = normalize(&joined).ok_or_else(|| self.outside(path))?;
        let resolved = self.resolve_links(normal, path)?;
        if resolved.starts_with(&self.root) { Ok(resolved) } else { Err(self.outside(path)) }
    }

    /// `normal` (absolute, without `..`) with the links of its existing part resolved.
    /// A dangling link counts as existing and is followed by hand: writing through it
    /// would create its target.
    fn resolve_links(&self, mut normal: PathBuf, path: &str) -> Result<PathBuf, ToolError> {
        for _ in 0..MAX_LINK_HOPS {
            let mut existing = normal.as_path();
            let mut rest = Vec::new();
            while existing.symlink_metadata().is_err() {
                let Some(parent) = existing.parent() else { return Err(self.outside(path)) };
                if let Some(name) = existing.file_name() {
                    rest.push(name.to_owned());
                }
                existing = parent;
            }
            let cannot = |e: io::Error| ToolError::Failed(format!("cannot resolve {path}: {e}"));
            let mut resolved = match std::fs::canonicalize(existing) {
                Ok(resolved) => resolved,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // `existing` is a link whose target is missing: go on from its target.
                    let target = std::fs::read_link(existing).map_err(cannot)?;
                    let parent = existing.parent().ok_or_else(|| self.outside(path))?;
                    let base = std::fs::canonicalize(parent).map_err(cannot)?;
                    let mut next = normalize(&base.join(target)).ok_or_else(|| self.outside(path))?;
                    next.extend(rest.iter().rev());
                    normal = next;
                    continue;
                }
                Err(e) => return Err(cannot(e)),
            };
            resolved.extend(rest.iter().rev());
            return Ok(resolved);
        }
        Err(ToolError::Failed(format!("cannot resolve {path}: too many levels of symbolic links")))
    }

    /// How a path inside the workspace is shown: relative, with `/`.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) => show_relative(relative),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// A resolved path as the workspace handle takes it: relative, `.` for the root. A path
    /// that is not inside stays absolute, and the handle refuses it.
    fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => Path::new("."),
            Ok(relative) => relative,
            Err(_) => path,
        }
    }

    /// Opens a resolved path, following links only while they stay inside. Opening never
    /// waits (a FIFO opens at once instead of waiting for its other end), so the caller
    /// checks what it got from the file's own metadata.
    pub(crate) fn open_file(&self, path: &Path, options: &mut OpenOptions) -> io::Result<File> {
        open_in(&self.dir, self.relative(path), options)
    }

    /// What a resolved path is, following links only while they stay inside.
    pub(crate) fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.dir.metadata(self.relative(path))
    }

    /// Opens a resolved folder for listing; its own handle keeps what is reached through it
    /// inside it.
    pub(crate) fn open_dir(&self, path: &Path) -> io::Result<Dir> {
        self.dir.open_dir(self.relative(path))
    }

    /// Creates a resolved folder and the missing ones above it, inside the workspace.
    pub(crate) fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.dir.create_dir_all(self.relative(path))
    }

    /// What a failure to reach `shown` means for the model and the user: a link that led
    /// out is a refusal like any other path outside.
    pub(crate) fn error(&self, what: &str, shown: &str, err: io::Error) -> ToolError {
        if led_outside(&err) {
            return self.outside(shown);
        }
        match err.kind() {
            io::ErrorKind::NotFound => ToolError::Failed(format!("{shown} does not exist")),
            io::ErrorKind::IsADirectory => ToolError::Failed(format!("{shown} is a folder")),
            io::ErrorKind::PermissionDenied => ToolError::Failed(format!("no permission to {what} {shown}")),
            _ => ToolError::Failed(format!("cannot {what} {shown}: {err}")),
        }
    }

    fn outside(&self, path: &str) -> ToolError {
        ToolError::Refused(format!(
            "{path} is outside the workspace folder {}; only paths inside it can be used",
            self.root.display()
        ))
    }
}

/// Opens `path` below the open folder `dir` as [`Workspace::open_file`] does: never following
/// a link out of `dir`, never waiting.
pub(crate) fn open_in(dir: &Dir, path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    dir.open_with(path, options)
}

/// `path` without `.` and `..`, or `None` when `..` climbs above its root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !normal.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => normal.push(other.as_os_str()),
        }
    }
    Some(normal)
}

fn show_relative(relative: &Path) -> String {
    if relative.as_os_str().is_empty() || relative == Path::new(".") {
        ".".to_owned()
    } else {
        relative.to_string_lossy().replace('\\', "/")
    }
}

/// Whether the workspace handle refused a path because it led outside. cap-std reports
/// that as a permission error of its own, not one from the operating system (on Linux it
/// turns `openat2`'s `EXDEV` into it).
fn led_outside(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::PermissionDenied && err.raw_os_error().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_inside_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("sub/../a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(ws.resolve("").unwrap(), root);
        assert_eq!(ws.resolve("new/deeper/file.md").unwrap(), root.join("new/deeper/file.md"));
        assert_eq!(ws.resolve(root.join("sub").to_str().unwrap()).unwrap(), root.join("sub"));
        for escape in ["../x", "sub/../../x", "/etc/passwd"] {
            assert!(matches!(ws.resolve(escape), Err(ToolError::Refused(_))), "{escape} must be refused");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        assert!(matches!(ws.resolve("link/secret.txt"), Err(ToolError::Refused(_))));
        assert!(matches!(ws.resolve("link"), Err(ToolError::Refused(_))));
    }

    #[cfg(unix)]
    #[test]
    fn audit_01_a_dangling_symlink_resolves_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        let out = outside.path().join("x");
        std::os::unix::fs::symlink(&out, dir.path().join("notes.md")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("new-folder"), dir.path().join("docs")).unwrap();
        std::os::unix::fs::symlink("drafts/today.md", dir.path().join("today.md")).unwrap();
        for path in ["notes.md", "docs/a.md", "docs"] {
            assert!(matches!(ws.resolve(path), Err(ToolError::Refused(_))), "{path} leads out and must be refused");
        }
        // A dangling link that stays inside names the file writing it would create.
        assert_eq!(ws.resolve("today.md").unwrap(), root.join("drafts/today.md"));
    }

    #[cfg(unix)]
    #[test]
    fn audit_01_a_link_swapped_in_after_the_check_is_not_followed_out_when_opening() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let checked = ws.resolve("sub/a.txt").unwrap();
        let folder = ws.resolve("sub/new").unwrap();
        // Between the check and the open, `sub` becomes a link out of the workspace.
        std::fs::remove_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();

        let err = ws.open_file(&checked, OpenOptions::new().write(true).create(true)).unwrap_err();
        assert!(matches!(ws.error("write", "sub/a.txt", err), ToolError::Refused(_)));
        let err = ws.create_dir_all(&folder).unwrap_err();
        assert!(matches!(ws.error("create", "sub/new", err), ToolError::Refused(_)));
        let err = ws.open_dir(&ws.resolve("").unwrap().join("sub")).unwrap_err();
        assert!(matches!(ws.error("list", "sub", err), ToolError::Refused(_)));
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing was created outside");
    }

    #[test]
    fn a_missing_or_plain_file_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Workspace::open(&dir.path().join("missing")).is_err());
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(Workspace::open(&dir.path().join("f")).is_err());
    }
}
