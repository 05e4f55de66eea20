//! `terminal/*`: commands an ACP agent runs through us, in the session's workspace. Each
//! is its own process-group leader, killed as a group (`terminal/kill`, `release`, the
//! connection's end); its output (stdout and stderr together) is kept up to the agent's
//! byte limit, from the end, and streamed to the tool part that shows the terminal.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::rc::Rc;

use agent_client_protocol as acp;
use protocol::tool::ToolOutput;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, watch};

use crate::driver::DriverEvent;

/// Output kept when the agent sets no limit.
const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

struct Running {
    pgid: Option<i32>,
    output: Rc<RefCell<Output>>,
    exit: watch::Receiver<Option<acp::TerminalExitStatus>>,
    /// Which tool call shows it (once the agent has said so).
    call: Rc<RefCell<Option<String>>>,
    /// Stops the readers and the waiter.
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

#[derive(Default)]
struct Output {
    text: String,
    truncated: bool,
    limit: usize,
}

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        self.text.push_str(&String::from_utf8_lossy(bytes));
        if self.text.len() > self.limit {
            let mut cut = self.text.len() - self.limit;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.truncated = true;
        }
    }
}

pub(crate) struct Terminals {
    workspace: PathBuf,
    events: mpsc::UnboundedSender<DriverEvent>,
    running: RefCell<HashMap<String, Running>>,
    next: std::cell::Cell<u64>,
}

fn refused(message: impl Into<String>) -> acp::Error {
    acp::Error::new(-32602, message)
}

fn kill_group(pgid: Option<i32>) {
    #[cfg(unix)]
    if let Some(pgid) = pgid {
        // SAFETY: kill(2) on the process group we made the command lead.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

impl Terminals {
    pub(crate) fn new(workspace: PathBuf, events: mpsc::UnboundedSender<DriverEvent>) -> Self {
        Self { workspace, events, running: RefCell::default(), next: std::cell::Cell::new(0) }
    }

    /// The folder a command runs in: the workspace, or a folder inside it.
    pub(crate) fn folder(&self, cwd: Option<&std::path::Path>) -> Result<PathBuf, acp::Error> {
        let ws = tools::builtin::Workspace::open(&self.workspace).map_err(|e| refused(e.to_string()))?;
        match cwd {
            None => Ok(ws.root().to_path_buf()),
            Some(cwd) => ws.resolve(&cwd.display().to_string()).map_err(|e| refused(e.to_string())),
        }
    }

    pub(crate) async fn create(&self, args: acp::CreateTerminalRequest) -> acp::Result<acp::CreateTerminalResponse> {
        let folder = self.folder(args.cwd.as_deref())?;
        let mut command = tokio::process::Command::new(&args.command);
        command
            .args(&args.args)
            .envs(args.env.iter().map(|v| (v.name.clone(), v.value.clone())))
            .current_dir(folder)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        tools::mcp::processes::die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|e| refused(format!("{} could not be started: {e}", args.command)))?;
        let pgid = child.id().and_then(|p| i32::try_from(p).ok());
        let n = self.next.get() + 1;
        self.next.set(n);
        let id = format!("term-{n}");
        let limit = args.output_byte_limit.and_then(|l| usize::try_from(l).ok()).unwrap_or(DEFAULT_OUTPUT_LIMIT);
        let output = Rc::new(RefCell::new(Output { limit, ..Output::default() }));
        let call: Rc<RefCell<Option<String>>> = Rc::default();
        let mut tasks = Vec::new();
        let pipes: Vec<Box<dyn tokio::io::AsyncRead + Unpin>> = [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Unpin>),
        ]
        .into_iter()
        .flatten()
        .collect();
        for mut pipe in pipes {
            let output = output.clone();
            let call = call.clone();
            let events = self.events.clone();
            tasks.push(tokio::task::spawn_local(async move {
                let mut buffer = vec![0u8; 8192];
                while let Ok(read) = pipe.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    let text = {
                        let mut output = output.borrow_mut();
                        output.push(&buffer[..read]);
                        output.text.clone()
                    };
                    if let Some(id) = call.borrow().clone() {
                        let _ = events.send(DriverEvent::ToolProgress { id, output: ToolOutput::text(text) });
                    }
                }
            }));
        }
        let (exit_tx, exit) = watch::channel(None);
        tasks.push(tokio::task::spawn_local(async move {
            let status = child.wait().await;
            let mut exit = acp::TerminalExitStatus::new();
            if let Ok(status) = status {
                exit = exit.exit_code(status.code().and_then(|c| u32::try_from(c).ok()));
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    exit = exit.signal(status.signal().map(|s| s.to_string()));
                }
            }
            let _ = exit_tx.send(Some(exit));
        }));
        self.running.borrow_mut().insert(id.clone(), Running { pgid, output, exit, call, tasks });
        Ok(acp::CreateTerminalResponse::new(id))
    }

    /// The tool call `call` shows terminal `id`: its output streams there from now on.
    pub(crate) fn shown_by(&self, id: &str, call: &str) {
        if let Some(running) = self.running.borrow().get(id) {
            *running.call.borrow_mut() = Some(call.to_owned());
        }
    }

    /// The output so far, for a tool call's result.
    pub(crate) fn output_text(&self, id: &str) -> Option<String> {
        self.running.borrow().get(id).map(|r| r.output.borrow().text.clone())
    }

    pub(crate) fn output(&self, id: &str) -> acp::Result<acp::TerminalOutputResponse> {
        let running = self.running.borrow();
        let running = running.get(id).ok_or_else(|| refused(format!("no terminal {id}")))?;
        let output = running.output.borrow();
        let exit = running.exit.borrow().clone();
        Ok(acp::TerminalOutputResponse::new(output.text.clone(), output.truncated).exit_status(exit))
    }

    pub(crate) async fn wait(&self, id: &str) -> acp::Result<acp::TerminalExitStatus> {
        let mut exit = {
            let running = self.running.borrow();
            running.get(id).ok_or_else(|| refused(format!("no terminal {id}")))?.exit.clone()
        };
        match exit.wait_for(Option::is_some).await {
            Ok(status) => Ok(status.clone().unwrap_or_default()),
            Err(_) => Err(refused(format!("terminal {id} was released"))),
        }
    }

    /// Kills the command's whole process group; its output stays readable.
    pub(crate) async fn kill(&self, id: &str) {
        let pgid = self.running.borrow().get(id).and_then(|r| r.pgid);
        kill_group(pgid);
    }

    /// Kills it if it still runs, and forgets it.
    pub(crate) async fn release(&self, id: &str) {
        let running = self.running.borrow_mut().remove(id);
        if let Some(running) = running {
            stop(running);
        }
    }
}

fn stop(running: Running) {
    if running.exit.borrow().is_none() {
        kill_group(running.pgid);
    }
    for task in running.tasks {
        task.abort();
    }
}

impl Drop for Terminals {
    /// The connection ended: no command it started outlives it.
    fn drop(&mut self) {
        for (_, running) in self.running.borrow_mut().drain() {
            stop(running);
        }
    }
}
