//! Where API keys live. Never in the database, never sent to the UI, never logged.
//!
//! [`SecretStore`] is the seam. [`open`] picks the OS keychain ([`KeychainSecretStore`])
//! when one answers, and otherwise (a headless Linux machine without a Secret Service)
//! [`FileSecretStore`]: a JSON file readable only by the user, in the app's data dir,
//! whose description says why it is used. Keys an earlier run kept in the file move to
//! the keychain once one is there.

mod keychain;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
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

pub use keychain::KeychainSecretStore;

/// How long start-up waits for the keychain to answer.
const KEYCHAIN_PATIENCE: Duration = Duration::from_secs(3);

/// The keychain if it answers within a few seconds, else the private file in `data_dir`.
/// `COLLOQUY_SECRET_STORE=file` chooses the file without asking the keychain.
pub fn open(data_dir: &Path) -> Box<dyn SecretStore> {
    if std::env::var("COLLOQUY_SECRET_STORE").is_ok_and(|v| v == "file") {
        let file = FileSecretStore::new(data_dir.join("secrets.json"));
        return Box::new(file.because("COLLOQUY_SECRET_STORE=file chose it"));
    }
    open_with(data_dir, KeychainSecretStore::probe, KEYCHAIN_PATIENCE)
}

/// [`open`] with the keychain found by `probe`, waited for at most `patience`: the
/// keychain when it answers (keys left in the file move into it), else the file, whose
/// description says why.
fn open_with(
    data_dir: &Path,
    probe: impl FnOnce() -> Result<KeychainSecretStore, String> + Send + 'static,
    patience: Duration,
) -> Box<dyn SecretStore> {
    let file = FileSecretStore::new(data_dir.join("secrets.json"));
    // A missing session bus fails at once, but a bus that never answers must not hold up
    // start-up: the probe runs on its own thread, which ends when the probe does.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(probe());
    });
    match rx.recv_timeout(patience) {
        Ok(Ok(keychain)) => {
            move_file_keys(&file, &keychain);
            Box::new(keychain)
        }
        Ok(Err(why)) => {
            tracing::info!(why = %why, "no usable keychain: API keys are kept in a private file");
            Box::new(file.because(&why))
        }
        Err(_) => Box::new(file.because(&format!(
            "the keychain did not answer within {} s; Colloquy asks it again at its next start",
            patience.as_secs().max(1)
        ))),
    }
}

/// Moves keys from the file into the keychain; a key that fails to move stays in the file
/// (and is still found there: nothing is lost).
fn move_file_keys(file: &FileSecretStore, keychain: &dyn SecretStore) {
    let Ok(keys) = file.keys() else { return };
    for key in keys {
        let moved = file.get(&key).ok().flatten().map(|value| keychain.set(&key, &value));
        match moved {
            Some(Ok(())) => {
                let _ = file.delete(&key);
            }
            Some(Err(err)) => {
                tracing::warn!(error = %err, "an API key could not be moved to the keychain; it stays in the file")
            }
            None => {}
        }
    }
}

/// A `0600` JSON file. Reads and writes are serialized by a mutex; writes go through a
/// temporary file and a rename so a crash never leaves half a file.
pub struct FileSecretStore {
    path: PathBuf,
    lock: Mutex<()>,
    /// Why the file is used rather than a keychain, for the settings page.
    reason: Option<String>,
}

impl FileSecretStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), lock: Mutex::new(()), reason: None }
    }

    #[must_use]
    pub fn because(mut self, reason: &str) -> Self {
        self.reason = Some(reason.to_owned());
        self
    }

    /// The keys stored in the file.
    pub fn keys(&self) -> Result<Vec<String>, SecretError> {
        let _guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(self.read()?.into_keys().collect())
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
        let file = format!("a file readable only by you: {}", self.path.display());
        match &self.reason {
            Some(reason) => format!("{file} ({reason})"),
            None => file,
        }
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
    fn file_keys_move_to_a_keychain_and_a_failure_keeps_them() {
        struct Memory(Mutex<BTreeMap<String, String>>, bool);
        impl SecretStore for Memory {
            fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
                Ok(self.0.lock().unwrap().get(key).cloned())
            }
            fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
                if self.1 {
                    return Err(SecretError { path: "memory".into(), message: "locked".into() });
                }
                self.0.lock().unwrap().insert(key.into(), value.into());
                Ok(())
            }
            fn delete(&self, key: &str) -> Result<(), SecretError> {
                self.0.lock().unwrap().remove(key);
                Ok(())
            }
            fn describe(&self) -> String {
                "memory".into()
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let file = FileSecretStore::new(dir.path().join("secrets.json"));
        file.set("p1", "sk-1").unwrap();
        let locked = Memory(Mutex::new(BTreeMap::new()), true);
        move_file_keys(&file, &locked);
        assert_eq!(file.get("p1").unwrap().as_deref(), Some("sk-1"), "a key that could not move stays");
        let keychain = Memory(Mutex::new(BTreeMap::new()), false);
        move_file_keys(&file, &keychain);
        assert_eq!(keychain.get("p1").unwrap().as_deref(), Some("sk-1"));
        assert_eq!(file.get("p1").unwrap(), None);
        assert!(file.because("no keychain").describe().ends_with("(no keychain)"));
    }

    #[test]
    fn without_a_keychain_the_file_is_used_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let store = open_with(dir.path(), || Err("no keychain service is running".into()), KEYCHAIN_PATIENCE);
        let path = dir.path().join("secrets.json");
        assert_eq!(
            store.describe(),
            format!("a file readable only by you: {} (no keychain service is running)", path.display())
        );
        store.set("p", "sk-in-the-file").unwrap();
        assert_eq!(store.get("p").unwrap().as_deref(), Some("sk-in-the-file"));
        assert_eq!(FileSecretStore::new(&path).get("p").unwrap().as_deref(), Some("sk-in-the-file"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn keys_left_in_the_file_move_into_a_keychain_that_answers_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = FileSecretStore::new(dir.path().join("secrets.json"));
        file.set("p1", "sk-one").unwrap();
        file.set("p2", "sk-two").unwrap();
        let keychain = keychain::memory::MemoryKeychain::default();
        let backend = std::sync::Arc::new(keychain.clone());
        let store = open_with(dir.path(), move || KeychainSecretStore::probe_backend(backend), KEYCHAIN_PATIENCE);
        assert!(!store.describe().starts_with("a file"), "the keychain is used: {}", store.describe());
        assert_eq!(store.get("p1").unwrap().as_deref(), Some("sk-one"));
        assert_eq!(store.get("p2").unwrap().as_deref(), Some("sk-two"));
        assert_eq!(file.keys().unwrap(), Vec::<String>::new(), "nothing is left in the file");
        assert_eq!(keychain.count(), 2);
    }

    #[test]
    fn a_keychain_that_never_answers_does_not_hold_up_start_up() {
        let dir = tempfile::tempdir().unwrap();
        // The probe waits for a message that never comes; dropping `hang` at the end lets
        // its thread finish.
        let (hang, wait) = std::sync::mpsc::channel::<()>();
        let probe = move || {
            let _ = wait.recv();
            Err("gave up".to_owned())
        };
        let store = open_with(dir.path(), probe, Duration::from_millis(10));
        assert!(store.describe().contains("(the keychain did not answer within 1 s;"), "{}", store.describe());
        store.set("p", "k").unwrap();
        assert_eq!(store.get("p").unwrap().as_deref(), Some("k"));
        drop(hang);
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
