//! "Approval needed" as an OS notification, once per reply that starts waiting, when no
//! Colloquy window has focus (a focused window shows the card itself). The backend sends
//! it, not the windows, so several open windows still make one notification. Approvals
//! left waiting by the last run are announced once at start-up.
//!
//! [`ApprovalNotices`] decides (plain data in, a notice out); [`watch`] feeds it from the
//! status feed and shows what it decides: on Linux with one D-Bus call of our own
//! ([`freedesktop`]), elsewhere through Tauri's notification plugin.

use std::collections::HashSet;

use engine::{Engine, Operations};
use protocol::tool::Approval;
use protocol::{StatusMessage, TopicStatus};
use tauri::{AppHandle, Manager};

/// Follows the status feed for the life of the app.
pub fn watch(app: AppHandle, engine: Engine) {
    tauri::async_runtime::spawn(async move {
        let mut feed = engine.status_subscribe();
        let mut notices = ApprovalNotices::default();
        while let Some(message) = feed.recv().await {
            let look = match &message {
                // At start-up: what the last run left waiting.
                StatusMessage::Snapshot(_) => true,
                // A reply began to wait, or one that waited moved on (so a later wait of
                // the same reply is news again).
                StatusMessage::Changed(event) => {
                    event.status == TopicStatus::AwaitingApproval || notices.is_waiting_in(&event.topic_id)
                }
                // Versions switched or deleted, a list changed: no approval changes with that.
                StatusMessage::PathChanged(_) | StatusMessage::ListChanged(_) => false,
            };
            if !look {
                continue;
            }
            let listed = engine.call("approvals_list", serde_json::json!({})).await;
            // A list that cannot be read says nothing about what waits: what was told stays told.
            let pending = match listed.map(serde_json::from_value::<Vec<Approval>>) {
                Ok(Ok(pending)) => pending,
                Ok(Err(err)) => {
                    tracing::warn!(error = %err, "could not read the waiting approvals");
                    continue;
                }
                Err(err) => {
                    tracing::debug!(error = %err.message, "could not list the waiting approvals");
                    continue;
                }
            };
            let Some(notice) = notices.next(&pending, any_window_focused(&app)) else { continue };
            show(&app, notice);
        }
    });
}

/// Linux: the notification server is asked on a blocking thread (the call waits for its
/// answer). The notification plugin made the same call through two copies of zbus (its own
/// 5 and notify-rust's 6), 1.7 MB of the release binary (docs/benchmarks.md, "The binary
/// under 25 MB"); libdbus is linked for the keychain anyway.
#[cfg(target_os = "linux")]
fn show(_app: &AppHandle, notice: Notice) {
    tauri::async_runtime::spawn_blocking(move || {
        // Without a notification service (a bare X server) there is nobody to tell.
        if let Err(err) = freedesktop::notify(&notice) {
            tracing::debug!(error = %err, "could not show a notification");
        }
    });
}

#[cfg(not(target_os = "linux"))]
fn show(app: &AppHandle, notice: Notice) {
    use tauri_plugin_notification::NotificationExt;
    let shown = app.notification().builder().title(&notice.title).body(&notice.body).show();
    if let Err(err) = shown {
        tracing::debug!(error = %err, "could not show a notification");
    }
}

/// The Desktop Notifications Specification's one call, as notify-rust made it for the
/// plugin: the executable's name as the application and its icon, no actions, no hints,
/// the server's own timeout.
#[cfg(target_os = "linux")]
mod freedesktop {
    use std::time::Duration;

    use dbus::Message;
    use dbus::arg::PropMap;
    use dbus::blocking::Connection;

    use super::Notice;

    const SERVER: &str = "org.freedesktop.Notifications";
    const PATH: &str = "/org/freedesktop/Notifications";
    /// The D-Bus default; a server that has not answered by then is not showing it.
    const TIMEOUT: Duration = Duration::from_secs(25);

    /// Shows `notice` on the session bus's notification server; returns the server's id
    /// for it.
    pub(super) fn notify(notice: &Notice) -> Result<u32, dbus::Error> {
        let connection = Connection::new_session()?;
        let reply = connection.channel().send_with_reply_and_block(message(notice, &app_name()), TIMEOUT)?;
        Ok(reply.read1()?)
    }

    /// `Notify(app_name, replaces_id, app_icon, summary, body, actions, hints,
    /// expire_timeout)`, signature `susssasa{sv}i`.
    pub(super) fn message(notice: &Notice, app: &str) -> Message {
        let mut message = Message::method_call(&SERVER.into(), &PATH.into(), &SERVER.into(), &"Notify".into());
        let (replaces_id, actions, expire_timeout) = (0u32, Vec::<&str>::new(), -1i32);
        message.append_all((
            app,
            replaces_id,
            app,
            notice.title.as_str(),
            notice.body.as_str(),
            actions,
            PropMap::new(),
            expire_timeout,
        ));
        message
    }

    fn app_name() -> String {
        std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.file_name()?.to_str()?.to_owned()))
            .unwrap_or_else(|| "colloquy".to_owned())
    }
}

fn any_window_focused(app: &AppHandle) -> bool {
    app.webview_windows().values().any(|w| w.is_focused().unwrap_or(false))
}

/// What to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// Which waiting replies the user has been told about (or had in sight).
#[derive(Default)]
pub struct ApprovalNotices {
    /// Reply (message) ids, with the topic each waits in.
    told: HashSet<(String, protocol::TopicId)>,
}

impl ApprovalNotices {
    /// Given every approval waiting now: the notice for the replies that started waiting
    /// since the last look, if any — one notice however many there are. While a window has
    /// focus there is none, and those replies count as seen. A reply that no longer waits
    /// is forgotten, so its next wait is news again.
    pub fn next(&mut self, pending: &[Approval], focused: bool) -> Option<Notice> {
        let waiting: HashSet<(String, protocol::TopicId)> =
            pending.iter().map(|a| (a.message_id.clone(), a.topic_id.clone())).collect();
        self.told.retain(|reply| waiting.contains(reply));
        let fresh: Vec<&Approval> =
            pending.iter().filter(|a| !self.told.contains(&(a.message_id.clone(), a.topic_id.clone()))).collect();
        self.told.extend(waiting);
        if fresh.is_empty() || focused {
            return None;
        }
        let topics: HashSet<&protocol::TopicId> = fresh.iter().map(|a| &a.topic_id).collect();
        let body = match (fresh.as_slice(), topics.len()) {
            ([one], _) => format!("{} in “{}” is waiting for your approval.", one.tool_name, one.topic_title),
            (many, 1) => {
                format!("{} tool calls in “{}” are waiting for your approval.", many.len(), many[0].topic_title)
            }
            (many, topics) => format!("{} tool calls in {topics} topics are waiting for your approval.", many.len()),
        };
        Some(Notice { title: "Approval needed".to_owned(), body })
    }

    /// Whether a reply in `topic` waits as far as the last look saw.
    pub fn is_waiting_in(&self, topic: &protocol::TopicId) -> bool {
        self.told.iter().any(|(_, t)| t == topic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::TopicId;
    use protocol::tool::ApprovalState;

    fn approval(id: &str, message: &str, topic: &str) -> Approval {
        Approval {
            id: id.into(),
            topic_id: TopicId::from(topic.to_owned()),
            topic_title: format!("Topic {topic}"),
            message_id: message.into(),
            tool_call_id: format!("call-{id}"),
            tool_name: "write_file".into(),
            input: serde_json::json!({}),
            preview: None,
            state: ApprovalState::Pending,
            reason: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            decided_at: None,
        }
    }

    #[test]
    fn a_reply_that_starts_waiting_is_announced_once() {
        let mut notices = ApprovalNotices::default();
        let first = approval("ap1", "m1", "t1");
        assert_eq!(
            notices.next(std::slice::from_ref(&first), false),
            Some(Notice {
                title: "Approval needed".into(),
                body: "write_file in “Topic t1” is waiting for your approval.".into()
            })
        );
        // The same wait seen again (another status event), or with a second call of the
        // same reply: nothing new.
        assert_eq!(notices.next(std::slice::from_ref(&first), false), None);
        assert_eq!(notices.next(&[first.clone(), approval("ap2", "m1", "t1")], false), None);
        // Answered, then the reply waits again in a later step: news again.
        assert_eq!(notices.next(&[], false), None);
        assert!(notices.next(&[approval("ap3", "m1", "t1")], false).is_some());
    }

    #[test]
    fn nothing_is_shown_while_a_window_has_focus_and_those_replies_count_as_seen() {
        let mut notices = ApprovalNotices::default();
        let waiting = [approval("ap1", "m1", "t1")];
        assert_eq!(notices.next(&waiting, true), None);
        assert_eq!(notices.next(&waiting, false), None, "the user had it in sight");
        assert!(notices.is_waiting_in(&TopicId::from("t1".to_owned())));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_notification_server_is_asked_as_the_plugin_asked_it() {
        let notice = Notice { title: "Approval needed".into(), body: "write_file is waiting.".into() };
        let message = super::freedesktop::message(&notice, "colloquy");
        assert_eq!(message.destination().as_deref(), Some("org.freedesktop.Notifications"));
        assert_eq!(message.path().as_deref(), Some("/org/freedesktop/Notifications"));
        assert_eq!(message.interface().as_deref(), Some("org.freedesktop.Notifications"));
        assert_eq!(message.member().as_deref(), Some("Notify"));
        type Args = (String, u32, String, String, String, Vec<String>, dbus::arg::PropMap, i32);
        let (app, replaces_id, icon, summary, body, actions, hints, expire_timeout): Args = message.read_all().unwrap();
        assert_eq!((app.as_str(), replaces_id, icon.as_str()), ("colloquy", 0, "colloquy"));
        assert_eq!((summary.as_str(), body.as_str()), ("Approval needed", "write_file is waiting."));
        assert!(actions.is_empty() && hints.is_empty());
        assert_eq!(expire_timeout, -1, "the server's own timeout");
    }

    #[test]
    fn approvals_left_by_the_last_run_make_one_notice_at_start_up() {
        let mut notices = ApprovalNotices::default();
        let left = [approval("ap1", "m1", "t1"), approval("ap2", "m1", "t1"), approval("ap3", "m2", "t2")];
        let notice = notices.next(&left, false).unwrap();
        assert_eq!(notice.body, "3 tool calls in 2 topics are waiting for your approval.");
        assert_eq!(notices.next(&left, false), None);
        let mut one_topic = ApprovalNotices::default();
        let body = one_topic.next(&left[..2], false).unwrap().body;
        assert_eq!(body, "2 tool calls in “Topic t1” are waiting for your approval.");
    }
}
