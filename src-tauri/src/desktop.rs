//! The desktop shell: one engine per process, windows as subscribers.
//!
//! Closing the last window while a reply streams does not stop it: the app stays in the
//! background until every reply has finished, and launching Colloquy again reopens the
//! window on the live reply (see `single_instance`).

use std::path::PathBuf;
use std::time::Duration;

use engine::instance::ClaimError;
use engine::{Engine, EngineConfig};
use tauri::{AppHandle, Manager};
use tauri_plugin_dialog::{DialogExt, MessageDialogKind};

use crate::commands;
use crate::single_instance;

const MAIN_WINDOW: &str = "main";

pub fn run() -> std::process::ExitCode {
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .manage(commands::StatusFeeds::default())
        .invoke_handler(commands::handler())
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                commands::window_destroyed(window.app_handle(), window.label());
            }
        })
        .setup(|app| {
            // Telemetry needs the runtime Tauri has just started.
            let telemetry = tauri::async_runtime::block_on(async { engine::telemetry::init("colloquy-desktop") });
            app.manage(TelemetryGuard(std::sync::Mutex::new(Some(telemetry))));
            let data_dir = data_dir(app)?;
            let lock = match engine::instance::claim(&data_dir, "desktop") {
                Ok(lock) => lock,
                Err(ClaimError::Taken { holder, .. })
                    if holder.mode.as_deref() != Some("server") && single_instance::ask_to_open(&data_dir).is_ok() =>
                {
                    println!("Colloquy is already running ({holder}); it has opened its window.");
                    std::process::exit(0);
                }
                Err(err) => {
                    // Another mode holds the folder (or it cannot be locked): say so where
                    // the user looks, not only on stderr.
                    eprintln!("colloquy: {err}");
                    let handle = app.handle().clone();
                    app.dialog()
                        .message(err.to_string())
                        .title("Colloquy cannot start")
                        .kind(MessageDialogKind::Error)
                        .show(move |_| handle.exit(1));
                    return Ok(());
                }
            };
            let handle = app.handle().clone();
            single_instance::listen(&data_dir, move || open_main_window(&handle));
            let engine = tauri::async_runtime::block_on(Engine::open_claimed(
                EngineConfig::new(data_dir.clone(), "desktop").with_env_overrides(),
                lock,
            ))
            .map_err(|e| e.message)?;
            tracing::info!(data_dir = %data_dir.display(), "engine ready");
            crate::notify::watch(app.handle().clone(), engine.clone());
            app.manage(engine);
            open_main_window(app.handle());
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(err) => {
            eprintln!("colloquy: could not start the desktop app: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    app.run(|handle, event| match event {
        tauri::RunEvent::ExitRequested { code: None, api, .. } => {
            // The last window closed (not an explicit quit): finish live replies first.
            let live = handle.try_state::<Engine>().map(|e| e.live_turns()).unwrap_or(0);
            if live > 0 {
                tracing::info!(
                    live,
                    "window closed while replies stream; finishing them in the background (launch Colloquy to reopen)"
                );
                api.prevent_exit();
                tauri::async_runtime::spawn(exit_when_idle(handle.clone()));
            }
        }
        tauri::RunEvent::Exit => {
            // Replies still live at an explicit quit are stopped and persisted as interrupted.
            if let Some(engine) = handle.try_state::<Engine>() {
                let engine = engine.inner().clone();
                tauri::async_runtime::block_on(engine.shutdown());
            }
            if let Some(guard) = handle.try_state::<TelemetryGuard>() {
                guard.0.lock().ok().and_then(|mut g| g.take());
            }
        }
        _ => {}
    });
    std::process::ExitCode::SUCCESS
}

/// Shows the main window, creating it if it was closed.
fn open_main_window(handle: &AppHandle) {
    if let Some(window) = handle.get_webview_window(MAIN_WINDOW) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
        return;
    }
    if let Err(err) = build_window(handle, MAIN_WINDOW, "index.html".into()) {
        tracing::error!(error = %err, "could not open the window");
    }
}

/// Opens one more window; on `topic` when given. Every window is an equal subscriber.
pub fn open_window(handle: &AppHandle, topic: Option<&protocol::TopicId>) -> tauri::Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let label = format!("window-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let url = match topic {
        Some(topic) => format!("index.html#topic={topic}"),
        None => "index.html".to_owned(),
    };
    build_window(handle, &label, url)
}

fn build_window(handle: &AppHandle, label: &str, url: String) -> tauri::Result<()> {
    let mut builder = tauri::WebviewWindowBuilder::new(handle, label, tauri::WebviewUrl::App(url.into()))
        .title("Colloquy")
        .inner_size(1120.0, 780.0)
        .min_inner_size(480.0, 400.0);
    // An explicit data folder holds the webview's storage too, so separate data folders
    // (tests, profiles) never share UI state.
    if let Some(dir) = explicit_data_dir() {
        builder = builder.data_directory(dir.join("webview"));
    }
    builder.build().map(|_| ())
}

/// Exits once no reply is streaming, unless a window has been reopened meanwhile.
async fn exit_when_idle(handle: AppHandle) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if !handle.webview_windows().is_empty() {
            return;
        }
        let live = handle.try_state::<Engine>().map(|e| e.live_turns()).unwrap_or(0);
        if live == 0 {
            handle.exit(0);
            return;
        }
    }
}

struct TelemetryGuard(std::sync::Mutex<Option<engine::telemetry::Telemetry>>);

fn data_dir(app: &tauri::App) -> Result<PathBuf, Box<dyn std::error::Error>> {
    match explicit_data_dir() {
        Some(dir) => Ok(dir),
        None => Ok(app.path().app_data_dir()?),
    }
}

/// `COLLOQUY_DATA_DIR`, when set: everything the app stores goes there.
fn explicit_data_dir() -> Option<PathBuf> {
    std::env::var_os("COLLOQUY_DATA_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
}
