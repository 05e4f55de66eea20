//! [`KeychainSecretStore`]: keys in the operating system's keychain (the Secret Service
//! on Linux, the Keychain on macOS, the Credential Manager on Windows).

use std::sync::Arc;

use keyring::credential::CredentialBuilder;

use super::{SecretError, SecretStore};

/// The keychain "service" Colloquy's entries are filed under.
const SERVICE: &str = "dev.colloquy.app";

pub struct KeychainSecretStore {
    service: String,
    /// Where entries are made: `None` is the platform's keychain; tests pass an in-memory
    /// backend written against `keyring`'s own credential API.
    backend: Option<Arc<CredentialBuilder>>,
}

impl KeychainSecretStore {
    /// The platform's keychain, if one answers: a probe entry is written, read back and
    /// removed.
    pub fn probe() -> Result<Self, String> {
        Self::checked(Self { service: SERVICE.to_owned(), backend: None })
    }

    /// A keychain on another `keyring` backend (an in-memory one in tests), probed the
    /// same way.
    #[cfg(test)]
    pub(crate) fn probe_backend(backend: Arc<CredentialBuilder>) -> Result<Self, String> {
        Self::checked(Self { service: SERVICE.to_owned(), backend: Some(backend) })
    }

    /// The probe's failure is said in words with what to do ([`in_words`]); the
    /// platform's own message goes to the log.
    fn checked(store: Self) -> Result<Self, String> {
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
        match &self.backend {
            None => keyring::Entry::new(&self.service, key).map_err(|e| self.error(e)),
            Some(backend) => {
                let credential = backend.build(None, &self.service, key).map_err(|e| self.error(e))?;
                Ok(keyring::Entry::new_with_credential(credential))
            }
        }
    }

    fn error(&self, error: keyring::Error) -> SecretError {
        tracing::warn!(error = %error, "a keychain call failed");
        SecretError { path: self.describe(), message: in_words(&error) }
    }
}

/// A keychain failure as the user should read it: what happened and what to do, without
/// the platform's error dump (D-Bus names, OS status codes), which goes to the log.
pub(crate) fn in_words(error: &keyring::Error) -> String {
    let raw = error.to_string().to_lowercase();
    let said = |patterns: &[&str]| patterns.iter().any(|p| raw.contains(p));
    match error {
        keyring::Error::NoStorageAccess(_) if said(&["lock", "dismissed", "denied"]) => {
            "the keychain is locked or refused access: unlock it (or allow Colloquy) and try again".to_owned()
        }
        keyring::Error::NoStorageAccess(_) => {
            "Colloquy may not use the keychain: allow it in the keychain's settings and try again".to_owned()
        }
        keyring::Error::PlatformFailure(_)
            if said(&[
                "no secret service",
                "serviceunknown",
                "not provided by any",
                "org.freedesktop.secrets",
                "no such interface",
            ]) =>
        {
            "no keychain service is running (on Linux: GNOME Keyring, KWallet or KeePassXC's Secret Service); \
             start one and restart Colloquy to keep keys there"
                .to_owned()
        }
        // libdbus finds no bus address and cannot start one (`autolaunch`, `dbus-launch`).
        keyring::Error::PlatformFailure(_)
            if said(&[
                "session bus",
                "dbus_session_bus_address",
                "failed to connect",
                "no such file or directory",
                "autolaunch",
                "dbus-launch",
            ]) =>
        {
            "there is no desktop session bus to reach a keychain through (a headless or remote session)".to_owned()
        }
        keyring::Error::TooLong(what, limit) => format!("the {what} is too long for the keychain (at most {limit})"),
        keyring::Error::BadEncoding(_) => {
            "the keychain holds a key Colloquy cannot read: enter the key again in Settings".to_owned()
        }
        _ => "the keychain could not be used; the log has the system's own message".to_owned(),
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

/// An in-memory keychain written against `keyring`'s own credential API, so tests run the
/// real [`KeychainSecretStore`] (entries, `NoEntry`, errors) without an OS keychain.
/// Unlike `keyring::mock`, entries with the same service and key share their secret, as in
/// a real keychain.
#[cfg(test)]
pub(crate) mod memory {
    use std::any::Any;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use keyring::credential::{Credential, CredentialApi, CredentialBuilderApi, CredentialPersistence};

    type Entries = Arc<Mutex<BTreeMap<(String, String), Vec<u8>>>>;

    #[derive(Clone, Default)]
    pub struct MemoryKeychain {
        entries: Entries,
        /// While set, every call fails the way a locked keychain does.
        locked: Arc<AtomicBool>,
    }

    impl MemoryKeychain {
        /// The secret stored for `(service, key)`.
        pub fn secret(&self, service: &str, key: &str) -> Option<String> {
            let entries = self.entries.lock().unwrap();
            entries.get(&(service.to_owned(), key.to_owned())).map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        }

        pub fn count(&self) -> usize {
            self.entries.lock().unwrap().len()
        }

        pub fn lock(&self, locked: bool) {
            self.locked.store(locked, Ordering::SeqCst);
        }
    }

    struct MemoryCredential {
        keychain: MemoryKeychain,
        id: (String, String),
    }

    impl MemoryCredential {
        fn check(&self) -> keyring::Result<()> {
            if self.keychain.locked.load(Ordering::SeqCst) {
                return Err(keyring::Error::NoStorageAccess("the keychain is locked".into()));
            }
            Ok(())
        }
    }

    impl CredentialApi for MemoryCredential {
        fn set_secret(&self, secret: &[u8]) -> keyring::Result<()> {
            self.check()?;
            self.keychain.entries.lock().unwrap().insert(self.id.clone(), secret.to_vec());
            Ok(())
        }

        fn get_secret(&self) -> keyring::Result<Vec<u8>> {
            self.check()?;
            self.keychain.entries.lock().unwrap().get(&self.id).cloned().ok_or(keyring::Error::NoEntry)
        }

        fn delete_credential(&self) -> keyring::Result<()> {
            self.check()?;
            self.keychain.entries.lock().unwrap().remove(&self.id).map(|_| ()).ok_or(keyring::Error::NoEntry)
        }

        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    impl CredentialBuilderApi for MemoryKeychain {
        fn build(&self, _target: Option<&str>, service: &str, user: &str) -> keyring::Result<Box<Credential>> {
            Ok(Box::new(MemoryCredential { keychain: self.clone(), id: (service.to_owned(), user.to_owned()) }))
        }

        fn as_any(&self) -> &dyn Any {
            self
        }

        fn persistence(&self) -> CredentialPersistence {
            CredentialPersistence::ProcessOnly
        }
    }
}

#[cfg(test)]
mod tests {
    use super::memory::MemoryKeychain;
    use super::*;

    #[test]
    fn keys_round_trip_through_the_keychain() {
        let keychain = MemoryKeychain::default();
        let store = KeychainSecretStore::probe_backend(Arc::new(keychain.clone())).expect("the keychain answers");
        assert_eq!(keychain.count(), 0, "the probe entry is removed again");
        assert_eq!(store.get("provider-1").unwrap(), None);
        store.set("provider-1", "sk-first").unwrap();
        store.set("provider-1", "sk-second").unwrap();
        store.set("provider-2", "sk-other").unwrap();
        assert_eq!(store.get("provider-1").unwrap().as_deref(), Some("sk-second"));
        // Filed under the app's service, one entry per provider.
        assert_eq!(keychain.secret(SERVICE, "provider-2").as_deref(), Some("sk-other"));
        store.delete("provider-1").unwrap();
        store.delete("provider-1").unwrap();
        assert_eq!(store.get("provider-1").unwrap(), None);
        assert_eq!(keychain.count(), 1);
    }

    #[test]
    fn a_locked_keychain_fails_the_probe_and_later_calls_say_why() {
        let keychain = MemoryKeychain::default();
        keychain.lock(true);
        let why = KeychainSecretStore::probe_backend(Arc::new(keychain.clone())).err().expect("the probe fails");
        assert!(why.contains("locked"), "{why}");

        keychain.lock(false);
        let store = KeychainSecretStore::probe_backend(Arc::new(keychain.clone())).unwrap();
        store.set("p", "sk").unwrap();
        keychain.lock(true);
        let err = store.get("p").unwrap_err();
        assert_eq!(err.path, store.describe());
        assert!(err.message.contains("locked"), "{err}");
        assert!(store.set("p", "sk-new").is_err());
        keychain.lock(false);
        assert_eq!(store.get("p").unwrap().as_deref(), Some("sk"), "a failed write changes nothing");
    }

    #[test]
    fn keychain_failures_are_said_in_words_without_the_platform_dump() {
        let platform = |message: &str| keyring::Error::PlatformFailure(message.into());
        // The Secret Service's failures as libdbus words them (recorded on Debian 12: no
        // bus address and no display, a bus socket that is gone, a display without a bus,
        // a bus without a keychain).
        let cases = [
            (
                platform("DBus error: Unable to autolaunch a dbus-daemon without a $DISPLAY for X11"),
                "no desktop session bus",
            ),
            (
                platform("DBus error: Failed to connect to socket /run/user/1000/bus: No such file or directory"),
                "no desktop session bus",
            ),
            (
                platform("DBus error: /usr/bin/dbus-launch terminated abnormally without any error message"),
                "no desktop session bus",
            ),
            (
                platform("DBus error: The name org.freedesktop.secrets was not provided by any .service files"),
                "no keychain service is running",
            ),
            (keyring::Error::NoStorageAccess("the keychain is locked".into()), "unlock it"),
            (keyring::Error::BadEncoding(vec![0xff]), "enter the key again"),
            (platform("0x80004005"), "could not be used"),
        ];
        for (error, says) in cases {
            let words = in_words(&error);
            assert!(words.contains(says), "{error}: {words}");
            assert!(
                !words.contains("DBus") && !words.contains("org.freedesktop") && !words.contains("/usr/bin"),
                "{words}"
            );
        }
    }
}
