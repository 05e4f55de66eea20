//! [`Workspace`]: the folder file tools may touch, and turning the model's paths into
//! paths inside it. A path that leads outside (by `..`, an absolute path, or a symlink)
//! is refused, whether it exists or is about to be created.

use std::path::{Component, Path, PathBuf};

use crate::tool::ToolError;

#[derive(Clone, Debug)]
pub struct Workspace {
    /// Canonical: no symlinks, no `..`.
    root: PathBuf,
}

impl Workspace {
    /// The workspace at `path`, which must be an existing folder.
    pub fn open(path: &Path) -> Result<Self, ToolError> {
        let root = std::fs::canonicalize(path).map_err(|e| {
            ToolError::Refused(format!("the workspace folder {} cannot be opened: {e}", path.display()))
        })?;
        if !root.is_dir() {
            return Err(ToolError::Refused(format!("the workspace {} is not a folder", root.display())));
        }
        Ok(Self { root })
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
    /// the workspace. It need not exist yet.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let path = path.trim();
        let requested = Path::new(if path.is_empty() { "." } else { path });
        let joined = if requested.is_absolute() { requested.to_path_buf() } else { self.root.join(requested) };
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    if !normal.pop() {
                        return Err(self.outside(path));
                    }
                }
                Component::CurDir => {}
                other => normal.push(other.as_os_str()),
            }
        }
        // Symlinks: canonicalize the deepest part that exists, then add the rest.
        let mut existing = normal.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            let Some(parent) = existing.parent() else { return Err(self.outside(path)) };
            if let Some(name) = existing.file_name() {
                rest.push(name.to_owned());
            }
            existing = parent;
        }
        let mut resolved =
            std::fs::canonicalize(existing).map_err(|e| ToolError::Failed(format!("cannot resolve {path}: {e}")))?;
        for name in rest.into_iter().rev() {
            resolved.push(name);
        }
        if resolved.starts_with(&self.root) { Ok(resolved) } else { Err(self.outside(path)) }
    }

    /// How a path inside the workspace is shown: relative, with `/`.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.to_string_lossy().replace('\\', "/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    fn outside(&self, path: &str) -> ToolError {
        ToolError::Refused(format!(
            "{path} is outside the workspace folder {}; only paths inside it can be used",
            self.root.display()
        ))
    }
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

    #[test]
    fn a_missing_or_plain_file_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Workspace::open(&dir.path().join("missing")).is_err());
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(Workspace::open(&dir.path().join("f")).is_err());
    }
}
