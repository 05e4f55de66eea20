//! The desktop shell: one engine per process, windows as subscribers.

use std::path::PathBuf;

use engine::{Engine, EngineConfig};
use tauri::Manager;

use crate::commands;

pub fn run() -> std::process::ExitCode {
    let app = tauri::Builder::default()
        .invoke_handler(commands::handler())
        .setup(|app| {
            // Telemetry needs the runtime Tauri has just started.
            let telemetry = tauri::async_runtime::block_on(async { engine::telemetry::init("colloquy-desktop") });
            app.manage(TelemetryGuard(std::sync::Mutex::new(Some(telemetry))));
            let data_dir = data_dir(app)?;
            let engine = tauri::async_runtime::block_on(Engine::open(EngineConfig::new(data_dir.clone(), "desktop")))
                .map_err(|e| e.message)?;
            tracing::info!(data_dir = %data_dir.display(), "engine ready");
            app.manage(engine);
            tauri::WebviewWindowBuilder::new(app, "main", tauri::WebviewUrl::App("index.html".into()))
                .title("Colloquy")
                .inner_size(1120.0, 780.0)
                .min_inner_size(480.0, 400.0)
                .build()?;
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
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Live replies are stopped and persisted (as interrupted) before the process ends.
            if let Some(engine) = handle.try_state::<Engine>() {
                let engine = engine.inner().clone();
                tauri::async_runtime::block_on(engine.shutdown());
            }
            if let Some(guard) = handle.try_state::<TelemetryGuard>() {
                guard.0.lock().ok().and_then(|mut g| g.take());
            }
        }
    });
    std::process::ExitCode::SUCCESS
}

struct TelemetryGuard(std::sync::Mutex<Option<engine::telemetry::Telemetry>>);

fn data_dir(app: &tauri::App) -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(dir) = std::env::var_os("COLLOQUY_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    Ok(app.path().app_data_dir()?)
}
