//! App settings: what the user chose in Settings → General, validated, stored in the
//! database, and read when a turn starts.
//!
//! The stream idle timeout (`stalled`): the user's choice when there is one, else the
//! default — `COLLOQUY_IDLE_TIMEOUT_SECONDS` when the app was started with it, else 120 s.
//! The environment variable is the default, not an override, so the value Settings shows
//! is always the value a turn gets.

use std::ops::RangeInclusive;
use std::time::Duration;

use protocol::ApiError;
use protocol::api::{AppSettings, UpdateAppSettings};
use store::Store;

/// The key the idle timeout is stored under.
const IDLE_TIMEOUT_KEY: &str = "idle_timeout_seconds";
/// The key the theme is stored under.
const THEME_KEY: &str = "theme";
/// The key the desktop's "show Colloquy" shortcut is stored under.
const SHOW_SHORTCUT_KEY: &str = "show_shortcut";
/// The longest accelerator stored (`CommandOrControl+Shift+Alt+Super+BracketRight` is 45).
const SHOW_SHORTCUT_MAX_CHARS: usize = 64;
/// The idle timeouts a user may choose: shorter cuts off models that think before their
/// first token; longer and a dead connection goes unnoticed for more than an hour.
pub(crate) const IDLE_TIMEOUT_SECONDS: RangeInclusive<u32> = 10..=3600;

/// The app-wide settings: what is stored, and the default when nothing is.
pub(crate) struct Settings {
    store: Store,
    /// The idle timeout when the user chose none (`COLLOQUY_IDLE_TIMEOUT_SECONDS` or 120 s).
    default_idle_timeout: Duration,
}

impl Settings {
    pub(crate) fn new(store: Store, default_idle_timeout: Duration) -> Self {
        Self { store, default_idle_timeout }
    }

    pub(crate) async fn settings(&self) -> Result<AppSettings, ApiError> {
        let chosen = self.stored_idle_timeout().await?;
        // A value this build does not know (a newer or damaged database) reads as none.
        let theme = self.store.setting(THEME_KEY).await?.and_then(|value| serde_json::from_value(value).ok());
        let show_shortcut = self
            .store
            .setting(SHOW_SHORTCUT_KEY)
            .await?
            .and_then(|value| value.as_str().map(str::to_owned))
            .filter(|shortcut| valid_shortcut_text(shortcut));
        Ok(AppSettings {
            theme,
            show_shortcut,
            idle_timeout_seconds: chosen,
            default_idle_timeout_seconds: u32::try_from(self.default_idle_timeout.as_secs()).unwrap_or(u32::MAX),
            min_idle_timeout_seconds: *IDLE_TIMEOUT_SECONDS.start(),
            max_idle_timeout_seconds: *IDLE_TIMEOUT_SECONDS.end(),
        })
    }

    /// Replaces the settings; nothing is stored when a value is out of bounds.
    pub(crate) async fn update_settings(&self, update: UpdateAppSettings) -> Result<AppSettings, ApiError> {
        if let Some(seconds) = update.idle_timeout_seconds
            && !IDLE_TIMEOUT_SECONDS.contains(&seconds)
        {
            return Err(ApiError::bad_request(
                "idleTimeoutSeconds",
                format!(
                    "must be between {} and {} seconds (was {seconds})",
                    IDLE_TIMEOUT_SECONDS.start(),
                    IDLE_TIMEOUT_SECONDS.end()
                ),
            ));
        }
        let value = update.idle_timeout_seconds.map(serde_json::Value::from);
        self.store.set_setting(IDLE_TIMEOUT_KEY, value.as_ref()).await?;
        let theme = update.theme.map(|theme| serde_json::json!(theme));
        self.store.set_setting(THEME_KEY, theme.as_ref()).await?;
        tracing::info!(idle_timeout_seconds = ?update.idle_timeout_seconds, theme = ?update.theme, "settings changed");
        self.settings().await
    }

    /// Stores the desktop's "show Colloquy" shortcut (`None`: off). The desktop shell has
    /// parsed and registered it with the system before; this only checks it is plausible
    /// text, so a bad value never reaches the database.
    pub(crate) async fn set_show_shortcut(&self, shortcut: Option<&str>) -> Result<AppSettings, ApiError> {
        if let Some(shortcut) = shortcut
            && !valid_shortcut_text(shortcut)
        {
            return Err(ApiError::bad_request(
                "shortcut",
                format!("must be modifiers and a key joined by `+`, at most {SHOW_SHORTCUT_MAX_CHARS} characters"),
            ));
        }
        self.store.set_setting(SHOW_SHORTCUT_KEY, shortcut.map(serde_json::Value::from).as_ref()).await?;
        tracing::info!(shortcut = ?shortcut, "show-Colloquy shortcut changed");
        self.settings().await
    }

    /// How long a reply of a turn starting now may stay silent. A setting that cannot be
    /// read does not stop the turn: the default applies, and the log says why.
    pub(crate) async fn idle_timeout(&self) -> Duration {
        match self.stored_idle_timeout().await {
            Ok(Some(seconds)) => Duration::from_secs(u64::from(seconds)),
            Ok(None) => self.default_idle_timeout,
            Err(err) => {
                tracing::warn!(error = %err, "cannot read the idle timeout setting; using the default");
                self.default_idle_timeout
            }
        }
    }

    /// The user's idle timeout, if they chose one that is still within bounds (a value a
    /// newer or damaged database holds outside them reads as no choice).
    async fn stored_idle_timeout(&self) -> Result<Option<u32>, store::StoreError> {
        let value = self.store.setting(IDLE_TIMEOUT_KEY).await?;
        Ok(value
            .and_then(|v| v.as_u64())
            .and_then(|seconds| u32::try_from(seconds).ok())
            .filter(|seconds| IDLE_TIMEOUT_SECONDS.contains(seconds)))
    }
}

/// Whether `shortcut` can be an accelerator at all: short, printable, and not empty
/// around a `+`. The desktop's parser decides the rest.
fn valid_shortcut_text(shortcut: &str) -> bool {
    shortcut.chars().count() <= SHOW_SHORTCUT_MAX_CHARS
        && shortcut.split('+').all(|part| !part.trim().is_empty())
        && !shortcut.chars().any(char::is_control)
}
