//! Where API keys live. Never in the database, never sent to the UI, never logged.
//!
//! [`SecretStore`] is the seam for the OS keychain (a later change); [`FileSecretStore`]
//! keeps keys in a JSON file readable only by the user, in the app's data dir.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
#[error("secret store at {path}: {message}")]
pub struct SecretError {
    pub path: String,
    pub message: String,
}

pub trait SecretStore: Send + Sync + 'static {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError>;
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError>;
    fn delete(&self, key: &str) -> Result<(), SecretError>;
    /// Where keys are kept, in words for the settings screen.
    fn describe(&self) -> String;
}

/// A `0600` JSON file. Reads and writes are serialized by a mutex; writes go through a
/// temporary file and a rename so a crash never leaves half a file.
pub struct FileSecretStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileSecretStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), lock: Mutex::new(()) }
    }

    fn error(&self, message: impl std::fmt::Display) -> SecretError {
        SecretError { path: self.path.display().to_string(), message: message.to_string() }
    }

    fn read(&self) -> Result<BTreeMap<String, String>, SecretError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| self.error(format!("not valid JSON ({e}); fix or remove the file"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(self.error(e)),
        }
    }

    fn write(&self, map: &BTreeMap<String, String>) -> Result<(), SecretError> {
        let text = serde_json::to_string_pretty(map).map_err(|e| self.error(e))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.error(e))?;
        let tmp = self.path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp).map_err(|e| self.error(e))?;
        file.write_all(text.as_bytes()).and_then(|_| file.sync_all()).map_err(|e| self.error(e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.error(e))
    }
}

impl SecretStore for FileSecretStore {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        let _guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(self.read()?.remove(key))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        let _guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut map = self.read()?;
        map.insert(key.to_owned(), value.to_owned());
        self.write(&map)
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        let _guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut map = self.read()?;
        if map.remove(key).is_some() {
            self.write(&map)?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("a file readable only by you: {}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileSecretStore::new(dir.path().join("secrets.json"));
        assert_eq!(store.get("p1").unwrap(), None);
        store.set("p1", "sk-123").unwrap();
        store.set("p2", "sk-456").unwrap();
        store.delete("p2").unwrap();
        assert_eq!(store.get("p1").unwrap().as_deref(), Some("sk-123"));
        assert_eq!(store.get("p2").unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secrets.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_damaged_file_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.json");
        std::fs::write(&path, "{oops").unwrap();
        let err = FileSecretStore::new(&path).get("p1").unwrap_err();
        assert!(err.to_string().contains("secrets.json"), "{err}");
    }
}
