//! The optional "show Colloquy" shortcut: one key combination registered with the system
//! (tauri-plugin-global-shortcut) that brings the main window forward from any app.
//!
//! Off by default. Settings → General sets it through `show_shortcut_set`, which parses
//! the combination, registers it, and only then stores it (`AppSettings.showShortcut`),
//! so what Settings shows is what the system has. At start the stored one is registered
//! again; if another app has taken it meanwhile, the log says so and Settings still shows
//! it, to be changed.
//!
//! The plugin itself is added only once a shortcut is wanted ([`ensure_plugin`]): on X11
//! it polls the X server every 50 ms from a thread of its own for as long as it lives, 20
//! wake-ups a second of an otherwise idle app that has no shortcut (the default).

use std::str::FromStr;

use engine::{Engine, Operations};
use protocol::ApiError;
use protocol::api::{AppSettings, ShowShortcutRequest};
use tauri::{AppHandle, Manager, Wry};
use tauri_plugin_global_shortcut::{GlobalShortcut, GlobalShortcutExt, Modifiers, Shortcut, ShortcutState};

/// The plugin, with one handler: any registered shortcut shows the main window.
fn plugin() -> tauri::plugin::TauriPlugin<Wry> {
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
    let registered = match parse(&text) {
        Ok(shortcut) => ensure_plugin(app).await.and_then(|()| register(app, &text, shortcut)),
        Err(err) => Err(err),
    };
    match registered {
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
    if wanted.is_none() && old.is_none() {
        return engine.store_show_shortcut(None).await;
    }
    // The old one, if any, was registered at start, which added the plugin.
    ensure_plugin(app).await?;
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

/// Adds the plugin unless it is there already. Added on the main thread, which also keeps
/// two callers from adding it twice (the check and the add are one step there), and where
/// the hot-key services of other systems want to be set up.
async fn ensure_plugin(app: &AppHandle) -> Result<(), ApiError> {
    if app.try_state::<GlobalShortcut<Wry>>().is_some() {
        return Ok(());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let handle = app.clone();
    app.run_on_main_thread(move || {
        let added = match handle.try_state::<GlobalShortcut<Wry>>() {
            Some(_) => Ok(()),
            None => handle.plugin(plugin()).map_err(|err| err.to_string()),
        };
        let _ = tx.send(added);
    })
    .map_err(|err| ApiError::internal(format!("cannot start the system's shortcut service: {err}")))?;
    match rx.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err(ApiError::internal(format!("cannot start the system's shortcut service: {err}"))),
        Err(_) => Err(ApiError::internal("cannot start the system's shortcut service: the app is closing")),
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
