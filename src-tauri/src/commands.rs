//! Tauri commands: thin wrappers over the engine. Every command takes one `request`
//! argument (JSON) so the engine, not Tauri, validates it and names a bad field.

use engine::{Engine, ListenerId};
use protocol::api::{
    AddModelRequest, ReplyRequest, StreamAttachRequest, StreamOpenRequest, TopicRequest, WindowOpenRequest,
};
use protocol::{ApiError, AttachReply, StatusMessage, StreamMessage, TopicId};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{Manager, State, WebviewWindow};
use tokio_util::sync::CancellationToken;

type Reply<T> = Result<T, ApiError>;

fn parse<T: DeserializeOwned>(request: Value) -> Reply<T> {
    protocol::parse_body(request)
}

/// Plain operations, one command each, all answered by [`Engine::call`]. The list is
/// written once: the macro also defines `handler_with!`, which builds the invoke handler
/// from these commands plus the others it is given. (`$d` is a `$` passed in, so the
/// inner macro can have repetitions of its own.)
macro_rules! plain_commands {
    ($d:tt $($name:ident),* $(,)?) => {
        /// The names of the plain commands, checked against the engine's operations.
        #[cfg(test)]
        const PLAIN_COMMANDS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[tauri::command]
            pub async fn $name(engine: State<'_, Engine>, request: Option<Value>) -> Reply<Value> {
                engine.call(stringify!($name), request.unwrap_or(Value::Null)).await
            }
        )*
        macro_rules! handler_with {
            ($d($d other:ident),* $d(,)?) => {
                tauri::generate_handler![$($name,)* $d($d other),*]
            };
        }
    };
}

plain_commands!($
    app_info,
    settings_get,
    settings_update,
    topics_list,
    topic_create,
    topic_update,
    topic_delete,
    topic_mark_seen,
    messages_list,
    image_fetch,
    inbox_list,
    inbox_add,
    inbox_update,
    inbox_move,
    inbox_cancel,
    inbox_release,
    providers_list,
    provider_create,
    provider_update,
    provider_delete,
    provider_models,
    provider_demo,
    provider_presets,
    tools_list,
    tool_set_enabled,
    tool_approval_respond,
    approvals_list,
    tool_rules_list,
    tool_rule_create,
    tool_rule_update,
    tool_rule_delete,
    tool_audit_list,
    assistants_list,
    assistant_create,
    assistant_update,
    assistant_delete,
    mcp_servers_list,
    mcp_server_create,
    mcp_server_update,
    mcp_server_delete,
    mcp_server_refresh,
    agent_sessions_list,
    agent_session_create,
    agent_session_update,
    agent_session_delete,
    agent_session_reset,
);

/// A window is one listener per topic: attaching again replaces its previous channel.
fn window_listener(window: &WebviewWindow) -> ListenerId {
    ListenerId(format!("window:{}", window.label()))
}

/// Subscribes `channel` to the topic and forwards messages until the listener is
/// replaced, detached or dropped (a lagged notice is forwarded last).
fn subscribe(
    engine: &Engine,
    window: &WebviewWindow,
    topic_id: &TopicId,
    channel: Channel<StreamMessage>,
) -> engine::Listener {
    let (listener, mut subscription) = engine.listener(window_listener(window), topic_id);
    tauri::async_runtime::spawn(async move {
        while let Some(message) = subscription.recv().await {
            if channel.send(message).is_err() {
                break;
            }
        }
    });
    listener
}

/// Streaming operations that start (or restart) replies: the window becomes the topic's
/// listener on `channel`, then the engine runs the operation.
macro_rules! stream_commands {
    ($($name:ident($request:ty);)*) => {
        $(
            #[tauri::command]
            pub async fn $name(
                engine: State<'_, Engine>,
                window: WebviewWindow,
                request: Value,
                channel: Channel<StreamMessage>,
            ) -> Reply<AttachReply> {
                let request: $request = parse(request)?;
                let listener = subscribe(&engine, &window, &request.topic_id, channel);
                engine.$name(request, listener).await
            }
        )*
    };
}

stream_commands! {
    stream_open(StreamOpenRequest);
    stream_interrupt(StreamOpenRequest);
    stream_retry(ReplyRequest);
    stream_continue(ReplyRequest);
    stream_add_model(AddModelRequest);
}

/// Opens another window, on a topic if one is given (its URL carries `#topic=<id>`).
#[tauri::command]
pub async fn window_open(app: tauri::AppHandle, request: Option<Value>) -> Reply<()> {
    let request: WindowOpenRequest = parse(request.unwrap_or_else(|| Value::Object(Default::default())))?;
    crate::desktop::open_window(&app, request.topic_id.as_ref())
        .map_err(|e| ApiError::internal(format!("could not open a window: {e}")))
}

#[tauri::command]
pub async fn stream_attach(
    engine: State<'_, Engine>,
    window: WebviewWindow,
    request: Value,
    channel: Channel<StreamMessage>,
) -> Reply<AttachReply> {
    let request: StreamAttachRequest = parse(request)?;
    let listener = subscribe(&engine, &window, &request.topic_id, channel);
    engine.stream_attach(&request.topic_id, request.after, listener).await
}

#[tauri::command]
pub async fn stream_detach(engine: State<'_, Engine>, window: WebviewWindow, request: Value) -> Reply<()> {
    let request: TopicRequest = parse(request)?;
    engine.stream_detach(&request.topic_id, &window_listener(&window)).await;
    Ok(())
}

#[tauri::command]
pub async fn stream_abort(engine: State<'_, Engine>, request: Value) -> Reply<()> {
    let request: TopicRequest = parse(request)?;
    engine.stream_abort(&request.topic_id).await
}

/// The topic-status feed for this window: every status first, then each change. A
/// window has one feed: subscribing again (after a reload) ends the previous one.
#[tauri::command]
pub async fn status_subscribe(
    engine: State<'_, Engine>,
    feeds: State<'_, StatusFeeds>,
    window: WebviewWindow,
    channel: Channel<StatusMessage>,
) -> Reply<()> {
    let mut feed = engine.status_subscribe();
    let stop = feeds.replace(window.label());
    tauri::async_runtime::spawn(async move {
        loop {
            let message = tokio::select! {
                _ = stop.cancelled() => return,
                message = feed.recv() => message,
            };
            let Some(message) = message else { return };
            if channel.send(message).is_err() {
                return;
            }
        }
    });
    Ok(())
}

/// The live status-feed forwarder of each window.
#[derive(Default)]
pub struct StatusFeeds(Mutex<HashMap<String, CancellationToken>>);

impl StatusFeeds {
    /// A token for the window's new forwarder; the previous one is cancelled.
    fn replace(&self, label: &str) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut feeds) = self.0.lock()
            && let Some(old) = feeds.insert(label.to_owned(), token.clone())
        {
            old.cancel();
        }
        token
    }

    /// The window is gone: end its forwarder.
    pub fn remove(&self, label: &str) {
        if let Some(old) = self.0.lock().ok().and_then(|mut feeds| feeds.remove(label)) {
            old.cancel();
        }
    }
}

/// A window closed: end its status feed and detach it from every topic.
pub fn window_destroyed(app: &tauri::AppHandle, label: &str) {
    if let Some(feeds) = app.try_state::<StatusFeeds>() {
        feeds.remove(label);
    }
    if let Some(engine) = app.try_state::<Engine>() {
        let engine = engine.inner().clone();
        let listener = ListenerId(format!("window:{label}"));
        tauri::async_runtime::spawn(async move { engine.detach_everywhere(&listener).await });
    }
}

pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
    handler_with![
        stream_open,
        stream_interrupt,
        window_open,
        stream_retry,
        stream_continue,
        stream_add_model,
        stream_attach,
        status_subscribe,
        stream_detach,
        stream_abort,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::ErrorKind;
    use serde_json::json;

    #[test]
    fn every_engine_operation_is_a_command() {
        for operation in engine::OPERATIONS {
            // window_open has its own command: only the shell can open windows.
            if *operation != "window_open" {
                assert!(PLAIN_COMMANDS.contains(operation), "no Tauri command for `{operation}`");
            }
        }
    }

    #[test]
    fn a_malformed_ipc_request_names_the_bad_field() {
        let err = parse::<StreamOpenRequest>(json!({ "topicId": "t" })).unwrap_err();
        assert_eq!(err.kind, ErrorKind::BadRequest);
        assert_eq!(err.field.as_deref(), Some("text"));
        let err = parse::<TopicRequest>(json!({ "topicId": "t", "extra": true })).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("extra"));
    }
}
