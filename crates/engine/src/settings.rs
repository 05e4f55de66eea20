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
        Ok(AppSettings {
            theme,
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
