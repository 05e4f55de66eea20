//! The desktop shell: one engine per process, windows as subscribers.
//!
//! Closing the last window while a reply streams does not stop it: the app stays in the
//! background until every reply has finished, and launching Colloquy again reopens the
//! window on the live reply (see `single_instance`).

use std::path::PathBuf;
use std::time::Duration;

use engine::instance::{ClaimError, DataFolderLock};
use engine::{Engine, EngineConfig};
use protocol::ApiError;
use tauri::{AppHandle, Manager};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

use crate::commands;
use crate::single_instance;

const MAIN_WINDOW: &str = "main";

pub fn run() -> std::process::ExitCode {
    // SAFETY: nothing has started a thread yet: `main` only parsed the command line.
    let compositing = unsafe { crate::rendering::choose_compositing() };
    // The engine's TLS setup (a CA bundle parsed) is built beside the window (`engine::tls`).
    engine::tls::warm();
    let app = tauri::Builder::default().plugin(tauri_plugin_dialog::init());
    // Linux shows its notifications without the plugin (`notify.rs`).
    #[cfg(not(target_os = "linux"))]
    let app = app.plugin(tauri_plugin_notification::init());
    let app = app
        .plugin(window_state_plugin())
        .manage(commands::StatusFeeds::default())
        .manage(commands::EngineSlot::default())
        .manage(WindowStateSaver::default())
        .invoke_handler(commands::handler())
        .on_window_event(|window, event| match event {
            tauri::WindowEvent::Destroyed => {
                commands::window_destroyed(window.app_handle(), window.label());
                if window.label() == MAIN_WINDOW {
                    save_window_state(window.app_handle());
                }
            }
            tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_) if window.label() == MAIN_WINDOW => {
                window.app_handle().state::<WindowStateSaver>().schedule(window.app_handle());
            }
            _ => {}
        })
        .setup(move |app| {
            // Telemetry needs the runtime Tauri has just started.
            let telemetry = tauri::async_runtime::block_on(async { engine::telemetry::init("colloquy-desktop") });
            app.manage(TelemetryGuard(std::sync::Mutex::new(Some(telemetry))));
            tracing::info!(?compositing, "web view compositing");
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
                    cannot_start(app.handle(), err.to_string());
                    return Ok(());
                }
            };
            let handle = app.handle().clone();
            single_instance::listen(&data_dir, move || open_main_window(&handle));
            start(app.handle().clone(), data_dir, lock)?;
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
            let live = running_engine(handle).map(|e| e.live_turns()).unwrap_or(0);
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
            if let Some(engine) = running_engine(handle) {
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

/// The engine, if it is open.
fn running_engine(handle: &AppHandle) -> Option<Engine> {
    handle.try_state::<commands::EngineSlot>().and_then(|slot| slot.get())
}

/// Opens the window, and the engine on the data folder this process holds beside it: the
/// page loads while the database is opened (migrations, recovery) and the keychain is
/// probed, and its first calls wait for the engine (`commands::EngineSlot`). A database
/// this version cannot use (damaged, or from a newer version) is not a crash on stderr: a
/// dialog names the file and offers to move it aside and start fresh.
fn start(handle: AppHandle, data_dir: PathBuf, lock: DataFolderLock) -> Result<(), String> {
    let config = EngineConfig::new(data_dir.clone(), "desktop").with_env_overrides();
    let began = std::time::Instant::now();
    open_main_window(&handle);
    tracing::info!(ms = began.elapsed().as_millis() as u64, "window created; opening the engine");
    tauri::async_runtime::spawn(async move {
        match Engine::open_claimed(config, lock).await {
            Ok(engine) => {
                tracing::info!(
                    data_dir = %data_dir.display(),
                    ms = began.elapsed().as_millis() as u64,
                    "engine ready"
                );
                crate::notify::watch(handle.clone(), engine.clone());
                handle.state::<commands::EngineSlot>().fill(engine.clone());
                crate::shortcut::register_stored(&handle, &engine).await;
            }
            Err(err) if matches!(err.code.as_deref(), Some(engine::DATABASE_DAMAGED | engine::DATABASE_NEWER)) => {
                eprintln!("colloquy: {}", err.message);
                offer_fresh_start(handle, data_dir, &err.message);
            }
            Err(err) => cannot_start(&handle, err.message),
        }
    });
    Ok(())
}

/// Says why the app cannot start, where the user looks, then quits.
fn cannot_start(handle: &AppHandle, reason: String) {
    eprintln!("colloquy: {reason}");
    let quit = handle.clone();
    handle
        .dialog()
        .message(reason)
        .title("Colloquy cannot start")
        .kind(MessageDialogKind::Error)
        .show(move |_| quit.exit(1));
}

/// Asks whether to move the unusable database aside (it is kept, renamed, next to where
/// it was) and start with an empty one, or quit.
fn offer_fresh_start(handle: AppHandle, data_dir: PathBuf, reason: &str) {
    let message = format!(
        "{reason}\n\nMove it aside and start with an empty database? The file is kept in the same folder, renamed."
    );
    handle
        .dialog()
        .message(message)
        .title("Colloquy cannot open its database")
        .kind(MessageDialogKind::Error)
        .buttons(MessageDialogButtons::OkCancelCustom("Move it aside and start fresh".into(), "Quit".into()))
        .show({
            let handle = handle.clone();
            move |fresh| {
                if !fresh {
                    handle.exit(1);
                    return;
                }
                let started = engine::move_database_aside(&data_dir)
                    .and_then(|kept| {
                        tracing::info!(kept = %kept.display(), "moved the unusable database aside");
                        engine::instance::claim(&data_dir, "desktop").map_err(|e| ApiError::internal(e.to_string()))
                    })
                    .map_err(|e| e.message)
                    .and_then(|lock| start(handle.clone(), data_dir, lock));
                if let Err(err) = started {
                    cannot_start(&handle, err);
                }
            }
        });
}

/// Shows the main window, creating it if it was closed.
pub(crate) fn open_main_window(handle: &AppHandle) {
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

/// What of the main window is remembered: where it was, its size, maximized or full
/// screen. Not whether it was visible: it always opens shown.
const REMEMBERED: StateFlags = StateFlags::all().difference(StateFlags::VISIBLE);

/// The main window opens where and at the size it was left (`tauri-plugin-window-state`).
/// Other windows open at the default size, so they do not cover the main one exactly.
/// The state file is the plugin's in the config folder, or `window-state.json` in an
/// explicit data folder, so tests and profiles keep their own.
fn window_state_plugin() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    let mut builder = tauri_plugin_window_state::Builder::new()
        .with_state_flags(REMEMBERED)
        .with_filter(|label| label == MAIN_WINDOW);
    if let Some(dir) = explicit_data_dir() {
        // The plugin joins this onto the config folder; an absolute path replaces it.
        builder = builder.with_filename(dir.join("window-state.json").to_string_lossy());
    }
    builder.build()
}

/// Writes the window state now. The plugin writes only at a clean exit; this also
/// covers a crash or a kill after the window was moved, resized or closed.
fn save_window_state(handle: &AppHandle) {
    if let Err(err) = handle.save_window_state(REMEMBERED) {
        tracing::warn!(error = %err, "could not save the window's size and position");
    }
}

/// Saves the window state once the main window has stopped moving or resizing for a
/// moment: one write per gesture, not one per event.
#[derive(Default)]
struct WindowStateSaver(std::sync::Mutex<Option<tauri::async_runtime::JoinHandle<()>>>);

impl WindowStateSaver {
    const QUIET: Duration = Duration::from_millis(400);

    fn schedule(&self, handle: &AppHandle) {
        let handle = handle.clone();
        let save = tauri::async_runtime::spawn(async move {
            tokio::time::sleep(Self::QUIET).await;
            save_window_state(&handle);
        });
        if let Some(previous) = self.0.lock().unwrap_or_else(|e| e.into_inner()).replace(save) {
            previous.abort();
        }
    }
}

/// Exits once no reply is streaming, unless a window has been reopened meanwhile.
async fn exit_when_idle(handle: AppHandle) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if !handle.webview_windows().is_empty() {
            return;
        }
        let live = running_engine(&handle).map(|e| e.live_turns()).unwrap_or(0);
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
