//! [`KeychainSecretStore`]: keys in the operating system's keychain (the Secret Service
//! on Linux, the Keychain on macOS, the Credential Manager on Windows).

use super::{SecretError, SecretStore};

/// The keychain "service" Colloquy's entries are filed under.
const SERVICE: &str = "dev.colloquy.app";

pub struct KeychainSecretStore {
    service: String,
}

impl KeychainSecretStore {
    /// The keychain, if one answers: a probe entry is written, read back and removed.
    pub fn probe() -> Result<Self, String> {
        let store = Self { service: SERVICE.to_owned() };
        let key = "colloquy-probe";
        store.set(key, "probe").map_err(|e| e.message)?;
        let read = store.get(key).map_err(|e| e.message)?;
        store.delete(key).map_err(|e| e.message)?;
        if read.as_deref() != Some("probe") {
            return Err("the keychain did not give back what was stored".into());
        }
        Ok(store)
    }

    fn entry(&self, key: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, key).map_err(|e| self.error(e))
    }

    fn error(&self, error: impl std::fmt::Display) -> SecretError {
        SecretError { path: self.describe(), message: error.to_string() }
    }
}

impl SecretStore for KeychainSecretStore {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        match self.entry(key)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(self.error(e)),
        }
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.entry(key)?.set_password(value).map_err(|e| self.error(e))
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(self.error(e)),
        }
    }

    fn describe(&self) -> String {
        if cfg!(target_os = "macos") {
            "the macOS Keychain".to_owned()
        } else if cfg!(windows) {
            "the Windows Credential Manager".to_owned()
        } else {
            "the system keychain (Secret Service)".to_owned()
        }
    }
}
