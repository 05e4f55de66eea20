//! Writing a file the user asked to save (an export) into a folder of theirs.

use std::io::Write;
use std::path::{Path, PathBuf};

use protocol::{ApiError, ErrorKind};

/// Writes `bytes` as a new file named after `file_name` in `folder` (`name (2).ext` and
/// so on when the name is taken). Only the name's last component is used, so a name
/// cannot reach outside the folder.
pub fn save_new_file(folder: &Path, file_name: &str, bytes: &[u8]) -> Result<PathBuf, ApiError> {
    let name =
        Path::new(file_name.trim()).file_name().and_then(|n| n.to_str()).filter(|n| !n.starts_with('.')).ok_or_else(
            || ApiError {
                field: Some("fileName".to_owned()),
                ..ApiError::new(ErrorKind::BadRequest, "the file needs a name")
            },
        )?;
    std::fs::create_dir_all(folder)
        .map_err(|e| ApiError::internal(format!("cannot make the folder {}: {e}", folder.display())))?;
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, format!(".{extension}")),
        _ => (name, String::new()),
    };
    for n in 1..1000 {
        let candidate = if n == 1 { folder.join(name) } else { folder.join(format!("{stem} ({n}){extension}")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(mut file) => {
                file.write_all(bytes)
                    .map_err(|e| ApiError::internal(format!("cannot write {}: {e}", candidate.display())))?;
                return Ok(candidate);
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(ApiError::internal(format!("cannot write {}: {err}", candidate.display()))),
        }
    }
    Err(ApiError::internal(format!("too many files named {name} in {}", folder.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_number_and_a_path_stays_in_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let first = save_new_file(dir.path(), "chat.md", b"one").unwrap();
        let second = save_new_file(dir.path(), "../../chat.md", b"two").unwrap();
        assert_eq!(first, dir.path().join("chat.md"));
        assert_eq!(second, dir.path().join("chat (2).md"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "one");
        assert!(save_new_file(dir.path(), "..", b"x").is_err());
    }
}
