//! "Approval needed" as an OS notification, once per waiting reply, when no Colloquy
//! window has focus (a focused window shows the card itself). The backend sends it, not
//! the windows, so several open windows still make one notification.

use engine::Engine;
use protocol::tool::Approval;
use protocol::{StatusMessage, TopicStatus};
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;

/// Follows the status feed for the life of the app.
pub fn watch(app: AppHandle, engine: Engine) {
    tauri::async_runtime::spawn(async move {
        let mut feed = engine.status_subscribe();
        while let Some(message) = feed.recv().await {
            let StatusMessage::Changed(event) = message else { continue };
            if event.status != TopicStatus::AwaitingApproval || any_window_focused(&app) {
                continue;
            }
            let pending = engine.call("approvals_list", serde_json::json!({ "topicId": event.topic_id })).await;
            let Some(first) = pending
                .ok()
                .and_then(|v| serde_json::from_value::<Vec<Approval>>(v).ok())
                .and_then(|mut a| (!a.is_empty()).then(|| a.remove(0)))
            else {
                continue;
            };
            let shown = app
                .notification()
                .builder()
                .title("Approval needed")
                .body(format!("{} in “{}” is waiting for your approval.", first.tool_name, first.topic_title))
                .show();
            // Without a notification service (a bare X server) there is nobody to tell.
            if let Err(err) = shown {
                tracing::debug!(error = %err, "could not show a notification");
            }
        }
    });
}

fn any_window_focused(app: &AppHandle) -> bool {
    app.webview_windows().values().any(|w| w.is_focused().unwrap_or(false))
}
