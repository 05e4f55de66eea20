//! The optional "show Colloquy" shortcut: one key combination registered with the system
//! (tauri-plugin-global-shortcut) that brings the main window forward from any app.
//!
//! Off by default. Settings → General sets it through `show_shortcut_set`, which parses
//! the combination, registers it, and only then stores it (`AppSettings.showShortcut`),
//! so what Settings shows is what the system has. At start the stored one is registered
//! again; if another app has taken it meanwhile, the log says so and Settings still shows
//! it, to be changed.

use std::str::FromStr;

use engine::{Engine, Operations};
use protocol::ApiError;
use protocol::api::{AppSettings, ShowShortcutRequest};
use tauri::AppHandle;
use tauri_plugin_global_shortcut::{GlobalShortcutExt, Modifiers, Shortcut, ShortcutState};

/// The plugin, with one handler: any registered shortcut shows the main window.
pub fn plugin() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri_plugin_global_shortcut::Builder::new()
        .with_handler(|app, _shortcut, event| {
            if event.state == ShortcutState::Pressed {
                crate::desktop::open_main_window(app);
            }
        })
        .build()
}

/// Registers the stored shortcut, if there is one (at start).
pub async fn register_stored(app: &AppHandle, engine: &Engine) {
    let stored = match engine.settings_get().await {
        Ok(settings) => settings.show_shortcut,
        Err(err) => {
            tracing::warn!(error = %err, "cannot read the show-Colloquy shortcut; it is not registered");
            return;
        }
    };
    let Some(text) = stored else { return };
    match parse(&text).and_then(|shortcut| register(app, &text, shortcut)) {
        Ok(()) => tracing::info!(shortcut = %text, "show-Colloquy shortcut registered"),
        Err(err) => tracing::warn!(shortcut = %text, error = %err.message, "show-Colloquy shortcut not registered"),
    }
}

/// `show_shortcut_set`: registers the new combination (or none), lets go of the old one,
/// and stores the choice. On any failure the old shortcut stays registered and stored.
pub async fn set(app: &AppHandle, engine: &Engine, request: ShowShortcutRequest) -> Result<AppSettings, ApiError> {
    let wanted = request.shortcut.map(|text| text.trim().to_owned()).filter(|text| !text.is_empty());
    let parsed = wanted.as_deref().map(parse).transpose()?;
    let old = engine.settings_get().await?.show_shortcut;
    let old_parsed = old.as_deref().and_then(|text| Shortcut::from_str(text).ok());
    let shortcuts = app.global_shortcut();
    if let Some(old) = old_parsed
        && shortcuts.is_registered(old)
    {
        shortcuts
            .unregister(old)
            .map_err(|err| ApiError::internal(format!("cannot let go of the old shortcut: {err}")))?;
    }
    let restore_old = || {
        if let (Some(old), Some(text)) = (old_parsed, old.as_deref()) {
            let _ = register(app, text, old);
        }
    };
    if let (Some(shortcut), Some(text)) = (parsed, wanted.as_deref())
        && let Err(err) = register(app, text, shortcut)
    {
        restore_old();
        return Err(err);
    }
    match engine.store_show_shortcut(wanted.as_deref()).await {
        Ok(settings) => Ok(settings),
        Err(err) => {
            if let Some(shortcut) = parsed {
                let _ = shortcuts.unregister(shortcut);
            }
            restore_old();
            Err(err)
        }
    }
}

/// A combination the user may choose: the plugin's accelerator syntax, with a modifier
/// other than Shift, so that it never takes a key away from typing in other apps.
fn parse(text: &str) -> Result<Shortcut, ApiError> {
    let shortcut = Shortcut::from_str(text)
        .map_err(|err| ApiError::bad_request("shortcut", format!("`{text}` is not a key combination: {err}")))?;
    if (shortcut.mods - Modifiers::SHIFT).is_empty() {
        return Err(ApiError::bad_request(
            "shortcut",
            format!("`{text}` needs Ctrl, Alt or Super (Cmd) as well, or it would take a key from typing in every app"),
        ));
    }
    Ok(shortcut)
}

fn register(app: &AppHandle, text: &str, shortcut: Shortcut) -> Result<(), ApiError> {
    app.global_shortcut().register(shortcut).map_err(|err| {
        ApiError::conflict(format!(
            "{text} could not be registered with the system ({err}); another app may use it: choose another combination"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combination_needs_a_modifier_besides_shift_and_a_known_key() {
        assert!(parse("CommandOrControl+Shift+Space").is_ok());
        assert!(parse("Alt+KeyC").is_ok());
        assert!(parse("Super+F1").is_ok());
        for (bad, says) in [
            ("Space", "needs Ctrl, Alt or Super"),
            ("Shift+KeyA", "needs Ctrl, Alt or Super"),
            ("Ctrl+Shift+Nope", "is not a key combination"),
            ("Ctrl+K+J", "is not a key combination"),
            ("Ctrl+", "is not a key combination"),
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.field.as_deref(), Some("shortcut"), "{bad}");
            assert!(err.message.contains(says), "{bad}: {}", err.message);
        }
    }
}
