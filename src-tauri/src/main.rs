//! The `colloquy` binary: the desktop app, or `colloquy serve` for the browser UI.

// No console window on Windows release builds.
#![cfg_attr(all(not(debug_assertions), target_os = "windows"), windows_subsystem = "windows")]

mod commands;
mod desktop;
mod notify;
mod rendering;
mod saving;
mod shortcut;
mod single_instance;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "colloquy", version, about = "A desktop AI chat app whose backend owns every stream")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the UI and every operation over HTTP/SSE instead of opening a window.
    Serve(server::ServeArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Serve(args)) => {
            engine::tls::warm();
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(err) => {
                    eprintln!("colloquy: cannot start the async runtime: {err}");
                    return std::process::ExitCode::FAILURE;
                }
            };
            let result = runtime.block_on(async {
                let _telemetry = engine::telemetry::init("colloquy-server");
                server::serve(args).await
            });
            match result {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("colloquy serve: {err:#}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
        None => desktop::run(),
    }
}
