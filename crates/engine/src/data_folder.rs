//! The data folder is private to the user: conversations, keys on disk, the lock.
//!
//! It is created `0700`, and a folder an older version created readable by others is
//! tightened at start (the database files are `0600`, see `Store::open`).

use std::io;
use std::path::Path;

/// Creates the folder (and missing parents) readable by the user only, and takes away
/// what others may do with an existing one.
pub(crate) fn prepare(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::info!(dir = %dir.display(), "making the data folder private to this user");
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}
