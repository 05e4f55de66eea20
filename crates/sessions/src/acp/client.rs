//! Our side of an ACP connection: what the agent may ask of the client. Runs on the
//! connection's own thread (`acp.rs`), so it is `!Send` and keeps its state in cells.
//!
//! - `session/update` → [`DriverEvent`]s through the [`UpdateMapper`] (dropped while a
//!   `session/load` replays history Colloquy already has).
//! - `session/request_permission` → a [`DriverEvent::PermissionRequest`] the turn answers
//!   through Colloquy's gate; the answer picks the agent's own option of that kind. After
//!   `session/cancel`, every waiting request and any new one is answered `cancelled`.
//! - `fs/read_text_file`: read inside the workspace with the file tools' checks.
//! - `fs/write_text_file`: asked like a tool call (`write_text_file`, with a diff), unless
//!   the user just allowed the agent's own tool call that is making this write; then
//!   written inside the workspace with the file tools' checks.
//! - `terminal/*`: see `terminal.rs`.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use agent_client_protocol as acp;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::mapper::{self, UpdateMapper};
use super::terminal::Terminals;
use crate::driver::{DriverEvent, PermissionAnswer};

/// What a waiting request gets: the user's answer, or nothing (cancelled).
type Waiting = oneshot::Sender<PermissionAnswer>;

pub(crate) struct AcpClient {
    events: mpsc::UnboundedSender<DriverEvent>,
    mapper: RefCell<UpdateMapper>,
    waiting: RefCell<HashMap<String, Waiting>>,
    next_request: Cell<u64>,
    /// Between `session/cancel` and the end of the prompt it cancelled.
    cancelled: Cell<bool>,
    /// While `session/load` replays the conversation.
    replaying: Cell<bool>,
    /// Tool calls the user allowed in this turn that have not finished: a file write one
    /// of them makes is not asked again.
    allowed_calls: RefCell<HashSet<String>>,
    workspace: PathBuf,
    pub(crate) terminals: Terminals,
    /// Session updates handled so far (replayed ones too), and a wake-up for each.
    handled: Cell<u64>,
    handled_more: tokio::sync::Notify,
}

impl AcpClient {
    pub(crate) fn new(events: mpsc::UnboundedSender<DriverEvent>, workspace: PathBuf) -> Self {
        let terminals = Terminals::new(workspace.clone(), events.clone());
        Self {
            events,
            mapper: RefCell::default(),
            waiting: RefCell::default(),
            next_request: Cell::new(0),
            cancelled: Cell::new(false),
            replaying: Cell::new(false),
            allowed_calls: RefCell::default(),
            workspace,
            terminals,
            handled: Cell::new(0),
            handled_more: tokio::sync::Notify::new(),
        }
    }

    pub(crate) fn emit(&self, event: DriverEvent) {
        let _ = self.events.send(event);
    }

    /// Waits until `count` session updates have been handled.
    pub(crate) async fn handled_up_to(&self, count: u64) {
        loop {
            let more = self.handled_more.notified();
            if self.handled.get() >= count {
                return;
            }
            more.await;
        }
    }

    pub(crate) fn set_replaying(&self, replaying: bool) {
        self.replaying.set(replaying);
    }

    /// A prompt is sent: nothing of the last one's cancel is left.
    pub(crate) fn turn_started(&self) {
        self.cancelled.set(false);
        self.allowed_calls.borrow_mut().clear();
    }

    /// Stop: every waiting request is answered `cancelled` (its sender dropped), and the
    /// turn is told it need not answer them.
    pub(crate) fn cancel_all(&self) {
        self.cancelled.set(true);
        let waiting: Vec<String> = self.waiting.borrow_mut().drain().map(|(id, _)| id).collect();
        for request_id in waiting {
            self.emit(DriverEvent::PermissionCancelled { request_id });
        }
    }

    /// The turn's answer to a request.
    pub(crate) fn answer(&self, request_id: &str, answer: PermissionAnswer) {
        if let Some(waiting) = self.waiting.borrow_mut().remove(request_id) {
            let _ = waiting.send(answer);
        }
    }

    /// Asks the turn; `None` when the prompt was cancelled meanwhile.
    async fn ask(
        &self,
        tool_use_id: String,
        tool_name: String,
        input: Value,
        preview: Option<String>,
    ) -> Option<PermissionAnswer> {
        if self.cancelled.get() {
            return None;
        }
        let n = self.next_request.get() + 1;
        self.next_request.set(n);
        let request_id = format!("acp-permission-{n}");
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().insert(request_id.clone(), tx);
        self.emit(DriverEvent::PermissionRequest {
            request_id,
            tool_use_id: Some(tool_use_id),
            tool_name,
            input,
            preview,
        });
        rx.await.ok()
    }

    fn workspace(&self) -> Result<tools::builtin::Workspace, acp::Error> {
        tools::builtin::Workspace::open(&self.workspace).map_err(|e| refused(e.to_string()))
    }
}

/// The agent's option of the kind the answer is, or `None` when it offers none.
fn option_for(options: &[acp::PermissionOption], answer: &PermissionAnswer) -> Option<acp::PermissionOptionId> {
    let kinds: &[acp::PermissionOptionKind] = match answer {
        PermissionAnswer::Allow { always: Some(_), .. } => {
            &[acp::PermissionOptionKind::AllowAlways, acp::PermissionOptionKind::AllowOnce]
        }
        PermissionAnswer::Allow { always: None, .. } => &[acp::PermissionOptionKind::AllowOnce],
        PermissionAnswer::Deny { .. } => {
            &[acp::PermissionOptionKind::RejectOnce, acp::PermissionOptionKind::RejectAlways]
        }
    };
    kinds.iter().find_map(|kind| options.iter().find(|o| o.kind == *kind).map(|o| o.option_id.clone()))
}

/// What the approval card says besides the input: the agent's diffs and its options.
fn preview(call: Option<&acp::ToolCall>, options: &[acp::PermissionOption]) -> Option<String> {
    let diff = call.map(|c| mapper::content_text(&c.content, &|_| None)).filter(|d| !d.is_empty());
    if diff.is_some() {
        // A diff alone, so the card shows it as one.
        return diff;
    }
    let offered: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
    (!offered.is_empty()).then(|| format!("The agent offers: {}", offered.join(" · ")))
}

fn internal(message: impl Into<String>) -> acp::Error {
    acp::Error::new(-32603, message)
}

/// What the agent is told when we refuse what it asked (a path outside the workspace, a
/// denied write): our words, in the error's message.
fn refused(message: impl Into<String>) -> acp::Error {
    acp::Error::new(-32602, message)
}

#[async_trait::async_trait(?Send)]
impl acp::Client for AcpClient {
    async fn request_permission(
        &self,
        args: acp::RequestPermissionRequest,
    ) -> acp::Result<acp::RequestPermissionResponse> {
        let id = args.tool_call.tool_call_id.to_string();
        // The call as the agent announced it, with this request's changes.
        let call = {
            let mapper = self.mapper.borrow();
            let mut call = mapper
                .call(&id)
                .cloned()
                .unwrap_or_else(|| acp::ToolCall::new(args.tool_call.tool_call_id.clone(), "tool call".to_owned()));
            call.update(args.tool_call.fields.clone());
            call
        };
        let name = mapper::kind_name(call.kind).to_owned();
        let shown = preview(Some(&call), &args.options);
        let answer = self.ask(id.clone(), name, mapper::call_input(&call), shown).await;
        let outcome = match answer.as_ref().and_then(|a| option_for(&args.options, a).map(|o| (a, o))) {
            Some((answer, option)) => {
                if matches!(answer, PermissionAnswer::Allow { .. }) {
                    self.allowed_calls.borrow_mut().insert(id);
                }
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(option))
            }
            None => acp::RequestPermissionOutcome::Cancelled,
        };
        Ok(acp::RequestPermissionResponse::new(outcome))
    }

    async fn session_notification(&self, args: acp::SessionNotification) -> acp::Result<()> {
        self.handled.set(self.handled.get() + 1);
        self.handled_more.notify_waiters();
        if self.replaying.get() {
            return Ok(());
        }
        if let acp::SessionUpdate::ToolCallUpdate(update) = &args.update
            && matches!(update.fields.status, Some(acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed))
        {
            self.allowed_calls.borrow_mut().remove(&update.tool_call_id.to_string());
        }
        if let acp::SessionUpdate::ToolCall(acp::ToolCall { tool_call_id, content, .. })
        | acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate {
            tool_call_id,
            fields: acp::ToolCallUpdateFields { content: Some(content), .. },
            ..
        }) = &args.update
        {
            for item in content {
                if let acp::ToolCallContent::Terminal(t) = item {
                    self.terminals.shown_by(&t.terminal_id.to_string(), &tool_call_id.to_string());
                }
            }
        }
        let terminals = &self.terminals;
        let events = self.mapper.borrow_mut().map(args.update, &|id| terminals.output_text(id));
        for event in events {
            self.emit(event);
        }
        Ok(())
    }

    async fn read_text_file(&self, args: acp::ReadTextFileRequest) -> acp::Result<acp::ReadTextFileResponse> {
        let ws = self.workspace()?;
        let path = args.path.display().to_string();
        let line = args.line.map(|l| l as usize);
        let limit = args.limit.map(|l| l as usize);
        let read = tokio::task::spawn_blocking(move || tools::builtin::read_text(&ws, &path, line, limit))
            .await
            .map_err(|e| internal(e.to_string()))?;
        match read {
            Ok(text) => Ok(acp::ReadTextFileResponse::new(text)),
            Err(err) => Err(refused(err.to_string())),
        }
    }

    async fn write_text_file(&self, args: acp::WriteTextFileRequest) -> acp::Result<acp::WriteTextFileResponse> {
        let ws = self.workspace()?;
        let path = args.path.display().to_string();
        // Refused before anyone is asked: a path outside the workspace.
        ws.resolve(&path).map_err(|e| refused(e.to_string()))?;
        let covered = !self.allowed_calls.borrow().is_empty();
        if !covered {
            let input = json!({ "path": path, "content": args.content });
            let context = tools::ToolContext::detached(Some(self.workspace.clone()));
            let shown = tools::Tool::preview(&tools::builtin::WriteFile::new(), &input, &context).await;
            let n = self.next_request.get() + 1;
            let call_id = format!("acp-write-{n}");
            match self.ask(call_id.clone(), "write_text_file".to_owned(), input, shown).await {
                Some(PermissionAnswer::Allow { .. }) => {
                    let result = write(ws, path, args.content).await;
                    let output = match &result {
                        Ok(said) => protocol::tool::ToolOutput::text(said.clone()),
                        Err(err) => {
                            let mut output = protocol::tool::ToolOutput::text(err.clone());
                            output.is_error = true;
                            output
                        }
                    };
                    self.emit(DriverEvent::ToolResult { id: call_id, output });
                    return result.map(|_| acp::WriteTextFileResponse::new()).map_err(refused);
                }
                Some(PermissionAnswer::Deny { message }) => {
                    self.emit(DriverEvent::ToolResult {
                        id: call_id,
                        output: protocol::tool::ToolOutput::text(message.clone()),
                    });
                    return Err(refused(message));
                }
                None => return Err(refused("the turn was cancelled")),
            }
        }
        write(ws, path, args.content).await.map(|_| acp::WriteTextFileResponse::new()).map_err(refused)
    }

    /// Runs without asking when the user just allowed the agent's own call that runs it;
    /// otherwise asked like a tool call (`terminal`).
    async fn create_terminal(&self, args: acp::CreateTerminalRequest) -> acp::Result<acp::CreateTerminalResponse> {
        let folder = self.terminals.folder(args.cwd.as_deref())?;
        let covered = !self.allowed_calls.borrow().is_empty();
        if !covered {
            let input = json!({ "command": args.command, "args": args.args, "cwd": folder.display().to_string() });
            let n = self.next_request.get() + 1;
            let call_id = format!("acp-terminal-{n}");
            match self.ask(call_id.clone(), "terminal".to_owned(), input, None).await {
                Some(PermissionAnswer::Allow { .. }) => {
                    let output = protocol::tool::ToolOutput::text("started");
                    self.emit(DriverEvent::ToolResult { id: call_id, output });
                }
                Some(PermissionAnswer::Deny { message }) => {
                    self.emit(DriverEvent::ToolResult {
                        id: call_id,
                        output: protocol::tool::ToolOutput::text(message.clone()),
                    });
                    return Err(refused(message));
                }
                None => return Err(refused("the turn was cancelled")),
            }
        }
        self.terminals.create(args).await
    }

    async fn terminal_output(&self, args: acp::TerminalOutputRequest) -> acp::Result<acp::TerminalOutputResponse> {
        self.terminals.output(&args.terminal_id.to_string())
    }

    async fn release_terminal(&self, args: acp::ReleaseTerminalRequest) -> acp::Result<acp::ReleaseTerminalResponse> {
        self.terminals.release(&args.terminal_id.to_string()).await;
        Ok(acp::ReleaseTerminalResponse::new())
    }

    async fn wait_for_terminal_exit(
        &self,
        args: acp::WaitForTerminalExitRequest,
    ) -> acp::Result<acp::WaitForTerminalExitResponse> {
        self.terminals.wait(&args.terminal_id.to_string()).await.map(acp::WaitForTerminalExitResponse::new)
    }

    async fn kill_terminal(&self, args: acp::KillTerminalRequest) -> acp::Result<acp::KillTerminalResponse> {
        self.terminals.kill(&args.terminal_id.to_string()).await;
        Ok(acp::KillTerminalResponse::new())
    }

    async fn ext_method(&self, _args: acp::ExtRequest) -> acp::Result<acp::ExtResponse> {
        Err(acp::Error::method_not_found())
    }

    async fn ext_notification(&self, _args: acp::ExtNotification) -> acp::Result<()> {
        Ok(())
    }
}

async fn write(ws: tools::builtin::Workspace, path: String, content: String) -> Result<String, String> {
    tokio::task::spawn_blocking(move || tools::builtin::write_text(&ws, &path, &content).map_err(|e| e.to_string()))
        .await
        .map_err(|e| e.to_string())?
}
