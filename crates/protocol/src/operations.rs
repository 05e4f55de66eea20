//! The operations table: every operation a client can call, with its request and
//! response types, declared once in [`for_each_operation!`].
//!
//! Everything else is derived from the table: the [`Operations`] trait the engine
//! implements (one method per operation), [`OPERATIONS`], the generic [`dispatch`] that
//! parses a JSON request and calls the method, the desktop shell's Tauri commands (its
//! `plain_commands!` is a callback of the table) and the TypeScript `Operations` map in
//! `ui/src/operations.gen.ts` ([`typescript`]).
//!
//! Adding an operation is one line in the table and one method in the engine's
//! `impl Operations`.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use ts_rs::{Config, TS};

use crate::error::{ApiError, parse_body};

/// Calls `$callback! { plain {..} desktop {..} streaming {..} listener {..} }` with the
/// table. An entry is `name(Request) => Response;`, or `name => Response;` for an
/// operation without a request (its body, if any, is ignored).
///
/// - `plain`: answered by the engine on every transport (one Tauri command each, and
///   `POST /api/<name>`).
/// - `desktop`: answered by the desktop shell itself; over HTTP the engine answers them
///   without reading the request (with an error saying what to do instead).
/// - `streaming`: they make the caller a listener of the topic and stream its events;
///   each transport serves them itself (a Tauri channel, an SSE response).
/// - `listener`: they act on the caller's listener; each transport serves them itself.
#[macro_export]
macro_rules! for_each_operation {
    ($callback:ident) => {
        $callback! {
            plain {
                app_info => $crate::api::AppInfo;
                settings_get => $crate::api::AppSettings;
                settings_update($crate::api::UpdateAppSettings) => $crate::api::AppSettings;
                topics_list => $crate::api::TopicList;
                topic_create($crate::api::CreateTopic) => $crate::api::Topic;
                topic_update($crate::api::UpdateTopic) => $crate::api::Topic;
                topic_delete($crate::api::TopicRequest) => ();
                topic_delete_if_empty($crate::api::TopicRequest) => $crate::api::TopicDeletedIfEmpty;
                topic_mark_seen($crate::api::TopicRequest) => ();
                inbox_list($crate::api::TopicRequest) => Vec<$crate::api::InboxItem>;
                inbox_add($crate::api::InboxAddRequest) => $crate::api::InboxItem;
                inbox_update($crate::api::InboxUpdateRequest) => $crate::api::InboxItem;
                inbox_move($crate::api::InboxMoveRequest) => Vec<$crate::api::InboxItem>;
                inbox_cancel($crate::api::InboxItemRequest) => ();
                inbox_release($crate::api::InboxItemRequest) => $crate::api::InboxItem;
                messages_list($crate::api::TopicRequest) => Vec<$crate::api::StoredMessage>;
                messages_page($crate::api::MessagesPageRequest) => $crate::api::MessagesPage;
                reply_stop($crate::api::ReplyRequest) => ();
                message_select($crate::api::MessageRequest) => ();
                messages_search($crate::search::SearchRequest) => $crate::search::SearchResults;
                message_delete($crate::api::MessageRequest) => ();
                topic_fork($crate::api::MessageRequest) => $crate::api::Topic;
                image_fetch($crate::api::ImageFetchRequest) => $crate::api::FetchedImage;
                providers_list => Vec<$crate::api::Provider>;
                provider_create($crate::api::ProviderInput) => $crate::api::Provider;
                provider_update($crate::api::UpdateProvider) => $crate::api::Provider;
                provider_delete($crate::api::ProviderRequest) => ();
                provider_models($crate::api::ListModelsRequest) => $crate::api::ModelList;
                provider_demo => $crate::api::Provider;
                provider_presets => Vec<$crate::api::ProviderPresetInfo>;
                tools_list => Vec<$crate::tool::ToolInfo>;
                tool_set_enabled($crate::api::ToolEnableRequest) => ();
                tool_approval_respond($crate::api::ToolApprovalRespond) => $crate::tool::Approval;
                approvals_list($crate::api::ApprovalsListRequest) => Vec<$crate::tool::Approval>;
                tool_rules_list => Vec<$crate::tool::PolicyRule>;
                tool_rule_create($crate::api::ToolRuleInput) => $crate::tool::PolicyRule;
                tool_rule_update($crate::api::UpdateToolRule) => $crate::tool::PolicyRule;
                tool_rule_delete($crate::api::IdRequest) => ();
                tool_audit_list($crate::api::AuditListRequest) => Vec<$crate::tool::AuditEntry>;
                assistants_list => Vec<$crate::api::Assistant>;
                assistant_create($crate::api::AssistantInput) => $crate::api::Assistant;
                assistant_update($crate::api::UpdateAssistant) => $crate::api::Assistant;
                assistant_delete($crate::api::IdRequest) => ();
                assistant_features_list => Vec<$crate::api::FeatureInfo>;
                mcp_servers_list => Vec<$crate::mcp::McpServer>;
                mcp_server_create($crate::mcp::McpServerInput) => $crate::mcp::McpServer;
                mcp_server_update($crate::mcp::UpdateMcpServer) => $crate::mcp::McpServer;
                mcp_server_delete($crate::api::IdRequest) => ();
                mcp_server_refresh($crate::api::IdRequest) => ();
                mcp_server_log($crate::api::IdRequest) => $crate::mcp::McpServerLog;
                mcp_server_log_level($crate::mcp::McpLogLevelRequest) => $crate::mcp::McpServerLog;
                mcp_roots_list => Vec<String>;
                mcp_elicitation_respond($crate::elicitation::ElicitationRespond) => ();
                mcp_sampling_respond($crate::sampling::SamplingRespond) => ();
                mcp_resources_list => $crate::mcp_content::McpResourceCatalog;
                mcp_resource_read($crate::mcp_content::McpResourceRef) => $crate::mcp_content::ResourceAttachment;
                mcp_prompts_list => $crate::mcp_content::McpPromptCatalog;
                mcp_prompt_get($crate::mcp_content::McpPromptGetRequest) => $crate::mcp_content::McpPromptExpansion;
                mcp_prompt_complete($crate::mcp_content::McpCompleteRequest) => $crate::mcp_content::McpCompletion;
                acp_agents_list => Vec<$crate::acp::AcpAgent>;
                acp_agent_presets => Vec<$crate::acp::AcpAgentInput>;
                acp_agent_create($crate::acp::AcpAgentInput) => $crate::acp::AcpAgent;
                acp_agent_update($crate::acp::UpdateAcpAgent) => $crate::acp::AcpAgent;
                acp_agent_delete($crate::api::IdRequest) => ();
                agent_sessions_list => $crate::api::AgentSessionList;
                agent_session_create($crate::api::AgentSessionInput) => $crate::api::AgentSession;
                agent_session_update($crate::api::UpdateAgentSession) => $crate::api::AgentSession;
                agent_session_delete($crate::api::IdRequest) => ();
                agent_session_reset($crate::api::IdRequest) => $crate::api::AgentSession;
                agent_session_set_mode($crate::api::AgentModeRequest) => $crate::api::AgentModeChange;
                usage_reply($crate::api::MessageRequest) => $crate::usage::ReplyDetails;
                usage_topic($crate::api::TopicRequest) => $crate::usage::TopicUsage;
                usage_report($crate::usage::UsageReportRequest) => $crate::usage::UsageReport;
                usage_prices => Vec<$crate::usage::ModelPrice>;
                usage_price_set($crate::usage::ModelPriceInput) => Vec<$crate::usage::ModelPrice>;
                usage_price_reset($crate::usage::ModelPriceRequest) => Vec<$crate::usage::ModelPrice>;
                topic_export($crate::archive::ExportRequest) => $crate::archive::ExportedFile;
                topics_import($crate::archive::ImportRequest) => $crate::archive::ImportReport;
                backup_create => $crate::archive::BackupInfo;
                backups_list => Vec<$crate::archive::BackupInfo>;
                backup_restore($crate::archive::RestoreRequest) => $crate::archive::RestorePlan;
            }
            desktop {
                window_open($crate::api::WindowOpenRequest) => ();
                file_save($crate::archive::SaveFileRequest) => $crate::archive::SavedFile;
                show_shortcut_set($crate::api::ShowShortcutRequest) => $crate::api::AppSettings;
            }
            streaming {
                stream_open($crate::api::StreamOpenRequest) => $crate::envelope::AttachReply;
                stream_interrupt($crate::api::StreamOpenRequest) => $crate::envelope::AttachReply;
                stream_edit($crate::api::EditMessageRequest) => $crate::envelope::AttachReply;
                stream_retry($crate::api::ReplyRequest) => $crate::envelope::AttachReply;
                stream_continue($crate::api::ReplyRequest) => $crate::envelope::AttachReply;
                stream_add_model($crate::api::AddModelRequest) => $crate::envelope::AttachReply;
                stream_attach($crate::api::StreamAttachRequest) => $crate::envelope::AttachReply;
            }
            listener {
                stream_detach($crate::api::TopicRequest) => ();
                stream_abort($crate::api::TopicRequest) => ();
            }
        }
    };
}

/// The TypeScript name of a request type; `void` for an operation without one.
macro_rules! request_ts {
    ($cfg:expr) => {
        String::from("void")
    };
    ($cfg:expr, $request:ty) => {
        <$request as TS>::name($cfg)
    };
}

macro_rules! define_operations {
    (
        plain { $( $name:ident $( ( $request:ty ) )? => $response:ty; )* }
        desktop { $( $desktop:ident ( $desktop_request:ty ) => $desktop_response:ty; )* }
        streaming { $( $streaming:ident ( $streaming_request:ty ) => $streaming_response:ty; )* }
        listener { $( $listener:ident ( $listener_request:ty ) => $listener_response:ty; )* }
    ) => {
        /// The operations the engine answers, one method each (named as the operation).
        /// A method's future is `Send`: Tauri commands and axum handlers need that.
        pub trait Operations {
            $(
                fn $name(&self $(, request: $request)?)
                    -> impl Future<Output = Result<$response, ApiError>> + Send;
            )*
            // The engine's answer where there is no desktop shell: it reads no request.
            $(
                fn $desktop(&self) -> impl Future<Output = Result<$desktop_response, ApiError>> + Send;
            )*

            /// Runs the named operation on a JSON request: see [`dispatch`].
            fn call(&self, name: &str, request: Value) -> impl Future<Output = Result<Value, ApiError>> + Send
            where
                Self: Sync,
            {
                dispatch(self, name, request)
            }
        }

        /// The names [`dispatch`] answers to (transports check they expose every one).
        pub const OPERATIONS: &[&str] = &[$(stringify!($name),)* $(stringify!($desktop),)*];

        /// The operations that stream a topic's events to the caller; each transport
        /// serves them itself.
        pub const STREAMING_OPERATIONS: &[&str] = &[$(stringify!($streaming),)*];

        /// The operations on the caller's listener; each transport serves them itself.
        pub const LISTENER_OPERATIONS: &[&str] = &[$(stringify!($listener),)*];

        /// Runs the named operation on a JSON request. Unknown names and malformed
        /// requests are `bad_request` errors naming what was wrong; nothing changes then.
        pub async fn dispatch<O: Operations + Sync + ?Sized>(
            operations: &O,
            name: &str,
            request: Value,
        ) -> Result<Value, ApiError> {
            match name {
                $(
                    stringify!($name) => respond(operations.$name($(parse::<$request>(request)?)?).await?),
                )*
                $(
                    stringify!($desktop) => respond(operations.$desktop().await?),
                )*
                other => Err(ApiError::bad_request("operation", format!("unknown operation `{other}`"))),
            }
        }

        /// `ui/src/operations.gen.ts`: the `Operations` map (what `Backend.call` takes and
        /// answers) and the `StreamOperations` map (what `Backend.subscribe` takes).
        pub fn typescript() -> String {
            let cfg = &Config::default();
            let callable: Vec<(&str, String, String)> = vec![
                $( (stringify!($name), request_ts!(cfg $(, $request)?), <$response as TS>::name(cfg)), )*
                $( (stringify!($desktop), request_ts!(cfg, $desktop_request), <$desktop_response as TS>::name(cfg)), )*
                $( (stringify!($listener), request_ts!(cfg, $listener_request), <$listener_response as TS>::name(cfg)), )*
            ];
            let streaming: Vec<(&str, String, String)> = vec![
                $( (stringify!($streaming), request_ts!(cfg, $streaming_request), <$streaming_response as TS>::name(cfg)), )*
            ];
            typescript_file(&callable, &streaming)
        }
    };
}

crate::for_each_operation!(define_operations);

/// Operations without fields accept `null` as well as `{}`.
fn parse<T: DeserializeOwned>(request: Value) -> Result<T, ApiError> {
    let request = if request.is_null() { Value::Object(Default::default()) } else { request };
    parse_body(request)
}

fn respond(value: impl Serialize) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::internal(e.to_string()))
}

/// The generated file's text, from `(name, request, response)` TypeScript names.
fn typescript_file(callable: &[(&str, String, String)], streaming: &[(&str, String, String)]) -> String {
    // Every protocol type the maps name, imported from `protocol.gen.ts`.
    let mut imports: Vec<&str> = callable
        .iter()
        .chain(streaming)
        .flat_map(|(_, request, response)| [request.as_str(), response.as_str()])
        .flat_map(|ts| ts.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|word| word.starts_with(|c: char| c.is_ascii_uppercase()) && *word != "Array")
        .collect();
    imports.sort_unstable();
    imports.dedup();
    let mut out =
        String::from("// Generated from crates/protocol/src/operations.rs by `cargo xtask gen`. Do not edit.\n\n");
    out.push_str("import type {\n");
    for name in imports {
        out.push_str(&format!("  {name},\n"));
    }
    out.push_str("} from './protocol.gen';\n\n");
    let map = |out: &mut String, doc: &str, name: &str, entries: &[(&str, String, String)]| {
        out.push_str(&format!("/** {doc} */\nexport interface {name} {{\n"));
        for (operation, request, response) in entries {
            out.push_str(&format!("  {operation}: {{ request: {request}; response: {response} }};\n"));
        }
        out.push_str("}\n");
    };
    map(
        &mut out,
        "The operations `Backend.call` runs: name, request body (`void`: none) and answer.",
        "Operations",
        callable,
    );
    out.push('\n');
    map(
        &mut out,
        "The operations `Backend.subscribe` starts: they make the caller a listener of a topic.",
        "StreamOperations",
        streaming,
    );
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::ErrorKind;

    #[test]
    fn generated_typescript_is_up_to_date() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/operations.gen.ts");
        let expected = typescript();
        if std::env::var_os("COLLOQUY_UPDATE_GENERATED").is_some() {
            std::fs::write(&path, &expected).expect("write operations.gen.ts");
            return;
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(actual == expected, "ui/src/operations.gen.ts is stale: run `cargo xtask gen`");
    }

    #[test]
    fn operation_names_are_unique() {
        let mut names: Vec<&str> =
            OPERATIONS.iter().chain(STREAMING_OPERATIONS).chain(LISTENER_OPERATIONS).copied().collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn the_typescript_map_names_every_callable_operation() {
        let text = typescript();
        for name in OPERATIONS.iter().chain(LISTENER_OPERATIONS).chain(STREAMING_OPERATIONS) {
            assert!(text.contains(&format!("  {name}: {{ request: ")), "{name} is missing");
        }
        assert!(text.contains("  topics_list: { request: void; response: TopicList };"));
        assert!(text.contains("  topic_delete: { request: TopicRequest; response: null };"));
    }

    /// Answers every operation with an error naming it, so dispatch can be watched.
    struct Refusing;

    macro_rules! refusing {
        (
            plain { $( $name:ident $( ( $request:ty ) )? => $response:ty; )* }
            desktop { $( $desktop:ident ( $desktop_request:ty ) => $desktop_response:ty; )* }
            $($rest:tt)*
        ) => {
            impl Operations for Refusing {
                $(
                    async fn $name(&self $(, _: $request)?) -> Result<$response, ApiError> {
                        Err(ApiError::internal(stringify!($name)))
                    }
                )*
                $(
                    async fn $desktop(&self) -> Result<$desktop_response, ApiError> {
                        Err(ApiError::internal(stringify!($desktop)))
                    }
                )*
            }
        };
    }
    crate::for_each_operation!(refusing);

    /// Runs `Refusing`'s dispatch, which never waits.
    fn call(name: &str, request: Value) -> ApiError {
        let mut future = std::pin::pin!(Refusing.call(name, request));
        match future.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
            std::task::Poll::Ready(result) => result.expect_err("Refusing refuses"),
            std::task::Poll::Pending => panic!("{name} waited"),
        }
    }

    #[test]
    fn dispatch_parses_the_body_then_calls_the_named_operation() {
        let err = call("nope", json!({}));
        assert_eq!(err.kind, ErrorKind::BadRequest);
        assert_eq!(err.message, "operation: unknown operation `nope`");
        // A bad body stops before the handler; a field-less operation ignores its body.
        let err = call("topic_delete", json!({ "topicId": 5 }));
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("topicId")));
        let err = call("topics_list", json!([1, 2]));
        assert_eq!((err.kind, err.message.as_str()), (ErrorKind::Internal, "topics_list"));
        // The engine answers a desktop operation whatever its body.
        let err = call("window_open", json!({ "topicId": 5 }));
        assert_eq!((err.kind, err.message.as_str()), (ErrorKind::Internal, "window_open"));
        // `null` is `{}`.
        let err = call("approvals_list", Value::Null);
        assert_eq!((err.kind, err.message.as_str()), (ErrorKind::Internal, "approvals_list"));
        for name in OPERATIONS {
            let err = call(name, Value::Null);
            assert!(err.kind == ErrorKind::BadRequest || err.message == *name, "{name}: {err:?}");
        }
    }
}
