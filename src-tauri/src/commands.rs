//! Tauri commands: thin wrappers over the engine. Every command takes one `request`
//! argument (JSON) so the engine, not Tauri, validates it and names a bad field.

use engine::{Engine, ListenerId, Operations};
use protocol::api::{
    AddModelRequest, EditMessageRequest, ReplyRequest, StreamAttachRequest, StreamOpenRequest, TopicRequest,
    WindowOpenRequest,
};
use protocol::archive::{SaveFileRequest, SavedFile};
use protocol::{ApiError, AttachReply, StatusMessage, StreamMessage};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{Manager, State, WebviewWindow};
use tokio_util::sync::CancellationToken;

type Reply<T> = Result<T, ApiError>;

/// The engine, once it is open. The window opens before it (the database, migrations,
/// recovery and the keychain probe are not on the way to a first paint), so a command
/// that arrives earlier waits here for it.
#[derive(Default)]
pub struct EngineSlot(tokio::sync::SetOnce<Engine>);

impl EngineSlot {
    /// The engine, waiting until it is open.
    pub async fn ready(&self) -> Engine {
        self.0.wait().await.clone()
    }

    /// The engine if it is open.
    pub fn get(&self) -> Option<Engine> {
        self.0.get().cloned()
    }

    pub fn fill(&self, engine: Engine) {
        if self.0.set(engine).is_err() {
            tracing::warn!("the engine was opened twice; the first is kept");
        }
    }
}

fn parse<T: DeserializeOwned>(request: Value) -> Reply<T> {
    protocol::parse_body(request)
}

/// A window is one listener per topic: attaching again replaces its previous channel.
fn window_listener(window: &WebviewWindow) -> ListenerId {
    ListenerId(format!("window:{}", window.label()))
}

/// The window's listener: each message goes into `channel` from the task that numbered
/// it. Tauri's channel queues by itself and never blocks, so no forwarding task (and no
/// wake-up of one per chunk) stands in between; the listener is removed once the
/// window's channel is gone.
fn subscribe(window: &WebviewWindow, channel: Channel<StreamMessage>) -> engine::Listener {
    engine::Listener::direct(window_listener(window), move |message| channel.send(message).is_ok())
}

/// Streaming operations that start (or restart) replies: the window becomes the topic's
/// listener on `channel`, then the engine runs the operation.
macro_rules! stream_commands {
    ($($name:ident($request:ty);)*) => {
        $(
            #[tauri::command]
            pub async fn $name(
                engine: State<'_, EngineSlot>,
                window: WebviewWindow,
                request: Value,
                channel: Channel<StreamMessage>,
            ) -> Reply<AttachReply> {
                let request: $request = parse(request)?;
                let engine = engine.ready().await;
                let listener = subscribe(&window, channel);
                engine.$name(request, listener).await
            }
        )*
    };
}

stream_commands! {
    stream_open(StreamOpenRequest);
    stream_interrupt(StreamOpenRequest);
    stream_edit(EditMessageRequest);
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

/// Saves an exported file into the user's Downloads folder (the home folder if there is
/// none), never over an existing file: a save dialog would block a window driven by
/// tauri-driver under Xvfb, and a WebKitGTK `a[download]` of a blob may do nothing.
/// Returns where the file went, for the UI to say.
#[tauri::command]
pub async fn file_save(app: tauri::AppHandle, request: Option<Value>) -> Reply<SavedFile> {
    let request: SaveFileRequest = parse(request.unwrap_or_else(|| Value::Object(Default::default())))?;
    let folder = app
        .path()
        .download_dir()
        .or_else(|_| app.path().home_dir())
        .map_err(|e| ApiError::internal(format!("cannot find the Downloads folder: {e}")))?;
    let path = crate::saving::save_new_file(&folder, &request.file_name, request.content.as_bytes())?;
    Ok(SavedFile { path: path.display().to_string() })
}

/// Sets (or turns off) the "show Colloquy" shortcut: see `shortcut`.
#[tauri::command]
pub async fn show_shortcut_set(
    app: tauri::AppHandle,
    engine: State<'_, EngineSlot>,
    request: Option<Value>,
) -> Reply<protocol::api::AppSettings> {
    let request: protocol::api::ShowShortcutRequest =
        parse(request.unwrap_or_else(|| Value::Object(Default::default())))?;
    let engine = engine.ready().await;
    crate::shortcut::set(&app, &engine, request).await
}

#[tauri::command]
pub async fn stream_attach(
    engine: State<'_, EngineSlot>,
    window: WebviewWindow,
    request: Value,
    channel: Channel<StreamMessage>,
) -> Reply<AttachReply> {
    let request: StreamAttachRequest = parse(request)?;
    let engine = engine.ready().await;
    let listener = subscribe(&window, channel);
    engine.stream_attach(&request.topic_id, request.after, listener).await
}

#[tauri::command]
pub async fn stream_detach(engine: State<'_, EngineSlot>, window: WebviewWindow, request: Value) -> Reply<()> {
    let request: TopicRequest = parse(request)?;
    let engine = engine.ready().await;
    engine.stream_detach(&request.topic_id, &window_listener(&window)).await;
    Ok(())
}

#[tauri::command]
pub async fn stream_abort(engine: State<'_, EngineSlot>, request: Value) -> Reply<()> {
    let request: TopicRequest = parse(request)?;
    let engine = engine.ready().await;
    engine.stream_abort(&request.topic_id).await
}

/// The topic-status feed for this window: every status first, then each change. A
/// window has one feed: subscribing again (after a reload) ends the previous one.
#[tauri::command]
pub async fn status_subscribe(
    engine: State<'_, EngineSlot>,
    feeds: State<'_, StatusFeeds>,
    window: WebviewWindow,
    channel: Channel<StatusMessage>,
) -> Reply<()> {
    let mut feed = engine.ready().await.status_subscribe();
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
    if let Some(engine) = app.try_state::<EngineSlot>().and_then(|slot| slot.get()) {
        let listener = ListenerId(format!("window:{label}"));
        tauri::async_runtime::spawn(async move { engine.detach_everywhere(&listener).await });
    }
}

/// Plain operations, one command each, all answered by the engine
/// ([`Operations::call`]). They come from the operations table
/// (`protocol::for_each_operation!`); `handler()` serves them and the commands above.
macro_rules! plain_commands {
    (
        plain { $( $name:ident $( ( $request:ty ) )? => $response:ty; )* }
        $($rest:tt)*
    ) => {
        $(
            #[tauri::command]
            pub async fn $name(engine: State<'_, EngineSlot>, request: Option<Value>) -> Reply<Value> {
                engine.ready().await.call(stringify!($name), request.unwrap_or(Value::Null)).await
            }
        )*
        invoke_handler!(
            [$($name),*]
            stream_open,
            stream_interrupt,
            window_open,
            file_save,
            show_shortcut_set,
            stream_edit,
            stream_retry,
            stream_continue,
            stream_add_model,
            stream_attach,
            status_subscribe,
            stream_detach,
            stream_abort,
        );
    };
}

macro_rules! invoke_handler {
    ([$($plain:ident),*] $($other:ident),* $(,)?) => {
        /// The names of every command, checked against the operations table.
        #[cfg(test)]
        const COMMANDS: &[&str] = &[$(stringify!($plain),)* $(stringify!($other),)*];

        pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($plain,)* $($other,)*]
        }
    };
}

protocol::for_each_operation!(plain_commands);

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::ErrorKind;
    use serde_json::json;

    #[test]
    fn every_operation_of_the_table_is_a_command() {
        let table = protocol::OPERATIONS
            .iter()
            .chain(protocol::operations::STREAMING_OPERATIONS)
            .chain(protocol::operations::LISTENER_OPERATIONS);
        for operation in table {
            assert!(COMMANDS.contains(operation), "no Tauri command for `{operation}`");
        }
        let mut names = COMMANDS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len(), "a command is listed twice");
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
