//! The ACP driver, through the host and its turns, against the scripted fake agent
//! (`tests/agent-cli/fakes/acp-agent.mjs`, run by Node): replies, permission prompts with
//! the agent's options, files and terminals served in the workspace, Stop, and the
//! protocol's edge cases (malformed lines, an unknown update kind, an agent that exits
//! mid-turn, a permission request after cancel, a replay on resume).

use std::path::{Path, PathBuf};

use super::*;
use crate::acp::{AcpAgentConfig, AcpDriver};

fn fake_agent() -> AcpAgentConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent-cli/fakes/acp-agent.mjs");
    AcpAgentConfig {
        name: "Fake ACP agent".into(),
        command: "node".into(),
        args: vec![script.display().to_string()],
        env: Vec::new(),
        mcp_servers: Vec::new(),
        start_timeout: Duration::from_secs(60),
    }
}

struct Acp {
    host: SessionHost,
    gate: Arc<AskingGate>,
    tokens: Arc<Tokens>,
    workspace: tempfile::TempDir,
}

fn acp() -> Acp {
    let driver = Arc::new(AcpDriver::new(fake_agent()));
    Acp {
        host: SessionHost::new(driver, IDLE),
        gate: Arc::default(),
        tokens: Tokens::new(usize::MAX >> 4),
        workspace: tempfile::tempdir().unwrap(),
    }
}

impl Acp {
    fn spec(&self) -> SessionSpec {
        SessionSpec {
            session_id: "s1".into(),
            runtime: "acp:fake".into(),
            workspace: self.workspace.path().to_path_buf(),
            model: String::new(),
            permission_mode: PermissionMode::Default,
            env: Vec::new(),
        }
    }

    fn start(&self, prompt: &str) -> Running {
        self.start_resuming(prompt, None)
    }

    fn start_resuming(&self, prompt: &str, token: Option<&str>) -> Running {
        let turn = self.host.session_turn(
            self.spec(),
            prompt.to_owned(),
            token.map(str::to_owned),
            self.gate.clone(),
            self.tokens.clone(),
        );
        let cancel = CancellationToken::new();
        let context = RunContext {
            cancel: cancel.clone(),
            steer: CancellationToken::new(),
            part_offset: 0,
            idle_timeout: Duration::from_secs(120),
        };
        let (tx, chunks) = mpsc::unbounded_channel();
        let outcome = tokio::spawn(async move { turn.run_with(context, &mut Chunks(tx)).await });
        Running { chunks, cancel, outcome }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.workspace.path().join(name)
    }

    fn answer(&self, approval: &str, approved: bool, reason: Option<&str>) {
        let decision = Decision { approved, input: json!({}), reason: reason.map(str::to_owned), always: false };
        assert!(self.host.decide(approval, decision), "nobody waited for {approval}");
    }
}

fn text_of(chunks: &[UiChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn success() -> TurnOutcome {
    TurnOutcome::Finished { reason: protocol::FinishReason::Stop }
}

async fn reply(acp: &Acp, prompt: &str) -> (TurnOutcome, Vec<UiChunk>) {
    acp.start(prompt).outcome().await
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn a_reply_streams_its_thought_and_text_and_the_session_id_is_kept_as_the_resume_token() {
    let acp = acp();
    let (outcome, chunks) = reply(&acp, "hello").await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Hello from the fake agent.");
    assert!(chunks.iter().any(|c| matches!(c, UiChunk::ReasoningDelta { delta, .. } if delta == "Thinking.")));
    let usage = chunks.iter().find_map(|c| match c {
        UiChunk::MessageMetadata { message_metadata } => message_metadata.get("usage").cloned(),
        _ => None,
    });
    assert_eq!(usage, Some(json!({ "inputTokens": 10, "outputTokens": 2 })), "the turn's usage the agent reported");
    let saved = acp.tokens.saved();
    assert_eq!(saved.len(), 1);
    assert!(saved[0].starts_with("fake-"), "{saved:?}");
    // The warm connection takes the next turn.
    let (outcome, chunks) = reply(&acp, "again").await;
    assert_eq!((outcome, text_of(&chunks)), (success(), "You said: again".to_owned()));
    assert_eq!(acp.tokens.saved().len(), 1, "the same agent session");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn an_allowed_write_is_asked_once_with_the_agents_diff_and_written_once() {
    let acp = acp();
    let mut turn = acp.start("write notes.txt first draft");
    let approval = turn.approval_request().await;
    assert_eq!(approval, "approval-call-write");
    acp.answer(&approval, true, None);
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(read(&acp.path("notes.txt")), "first draft\n");
    assert_eq!(*acp.gate.asked.lock().unwrap(), ["call-write"], "the write it made was not asked again");
    assert!(text_of(&chunks).contains("Wrote notes.txt."));
    assert!(
        chunks
            .iter()
            .any(|c| matches!(c, UiChunk::ToolOutputAvailable { tool_call_id, .. } if tool_call_id == "call-write"))
    );
    acp.host.shutdown().await;
}

#[tokio::test]
async fn a_denied_write_picks_the_agents_reject_option_and_nothing_is_written() {
    let acp = acp();
    let mut turn = acp.start("write notes.txt nope");
    let approval = turn.approval_request().await;
    acp.answer(&approval, false, Some("not now"));
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(!acp.path("notes.txt").exists());
    assert!(text_of(&chunks).contains("I did not write it."));
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::ToolOutputDenied { tool_call_id } if tool_call_id == "call-write"))
    );
    acp.host.shutdown().await;
}

#[tokio::test]
async fn a_write_the_agent_did_not_ask_about_gets_its_own_card_and_never_leaves_the_workspace() {
    let acp = acp();
    let mut turn = acp.start("fswrite sub/plain.txt hello there");
    let approval = turn.approval_request().await;
    assert!(approval.starts_with("approval-acp-write-"), "{approval}");
    acp.answer(&approval, true, None);
    let (outcome, _) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(read(&acp.path("sub/plain.txt")), "hello there\n");

    let outside = acp.workspace.path().parent().unwrap().join("colloquy-acp-outside.txt");
    let (outcome, chunks) = reply(&acp, &format!("fswrite {} escaped", outside.display())).await;
    assert_eq!(outcome, success());
    assert!(!outside.exists());
    assert!(text_of(&chunks).contains("outside the workspace"), "{}", text_of(&chunks));
    assert_eq!(acp.gate.asked.lock().unwrap().len(), 1, "a path outside is refused before anyone is asked");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn files_are_read_inside_the_workspace_only() {
    let acp = acp();
    std::fs::write(acp.path("a.txt"), "alpha").unwrap();
    let (_, chunks) = reply(&acp, "read a.txt").await;
    assert_eq!(text_of(&chunks), "It says: alpha");
    let (_, chunks) = reply(&acp, "read /etc/hostname").await;
    assert!(text_of(&chunks).contains("outside the workspace"), "{}", text_of(&chunks));
    acp.host.shutdown().await;
}

#[tokio::test]
async fn plan_commands_and_mode_reach_the_reply() {
    let acp = acp();
    let (outcome, chunks) = reply(&acp, "plan").await;
    assert_eq!(outcome, success());
    let plan = chunks.iter().find_map(|c| match c {
        UiChunk::Data(d) if d.kind == "data-plan" => Some(d.data.clone()),
        _ => None,
    });
    assert_eq!(plan.unwrap()["entries"][1]["content"], "Fix it");
    let metadata: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::MessageMetadata { message_metadata } => Some(message_metadata),
            _ => None,
        })
        .collect();
    assert!(metadata.iter().any(|m| m["agentCommands"][0]["name"] == "review"), "{metadata:?}");
    assert!(metadata.iter().any(|m| m["agentMode"] == "architect"), "{metadata:?}");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn malformed_lines_and_unknown_update_kinds_are_passed_over() {
    let acp = acp();
    let (outcome, chunks) = reply(&acp, "malformed").await;
    assert_eq!((outcome, text_of(&chunks)), (success(), "Still here.".to_owned()));
    let (outcome, chunks) = reply(&acp, "unknown").await;
    assert_eq!((outcome, text_of(&chunks)), (success(), "After the unknown update.".to_owned()));
    acp.host.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_exits_mid_turn_fails_the_turn_saying_what_it_wrote() {
    let acp = acp();
    let (outcome, chunks) = reply(&acp, "exit").await;
    let TurnOutcome::Failed { error } = outcome else { panic!("{outcome:?}") };
    assert!(error.message.contains("Fake ACP agent stopped unexpectedly"), "{}", error.message);
    assert!(error.message.contains("exiting mid-turn on purpose"), "{}", error.message);
    assert!(text_of(&chunks).contains("Going away"));
    // The next turn starts it again.
    let (outcome, _) = reply(&acp, "hello").await;
    assert_eq!(outcome, success());
    acp.host.shutdown().await;
}

#[tokio::test]
async fn stop_cancels_the_turn_and_a_permission_request_after_it_is_answered_cancelled() {
    let acp = acp();
    let mut turn = acp.start("wait");
    turn.chunk_until("the first text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    turn.cancel.cancel();
    let (outcome, _) = turn.outcome().await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: protocol::StatusReason::UserStop });
    assert_eq!(read(&acp.path("after-cancel.txt")), "cancelled");
    assert!(acp.gate.asked.lock().unwrap().is_empty(), "nobody was asked after Stop");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn after_stop_the_next_turn_starts_the_agent_again_and_loads_its_session() {
    let acp = acp();
    let (_, first) = reply(&acp, "whoami").await;
    let mut turn = acp.start("wait");
    turn.chunk_until("the first text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    turn.cancel.cancel();
    assert_eq!(turn.outcome().await.0, TurnOutcome::Paused { reason: protocol::StatusReason::UserStop });
    let (outcome, second) = reply(&acp, "whoami").await;
    assert_eq!(outcome, success());
    assert!(text_of(&second).starts_with("process "), "{}", text_of(&second));
    assert_ne!(text_of(&first), text_of(&second), "a new process took the turn after Stop");
    assert_eq!(acp.tokens.saved().len(), 1, "it loaded the same agent session");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn a_terminal_runs_in_the_workspace_with_its_output_on_the_tool_part() {
    let acp = acp();
    let mut turn = acp.start("terminal pwd; echo out; echo err >&2");
    let approval = turn.approval_request().await;
    assert_eq!(approval, "approval-call-terminal");
    acp.answer(&approval, true, None);
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    let workspace = std::fs::canonicalize(acp.workspace.path()).unwrap();
    let said = text_of(&chunks);
    assert!(said.starts_with("Exit 0; output"), "{said}");
    assert!(said.contains(&workspace.display().to_string()) && said.contains("out") && said.contains("err"), "{said}");
    let result = chunks.iter().rev().find_map(|c| match c {
        UiChunk::ToolOutputAvailable { tool_call_id, output, preliminary: None, .. }
            if tool_call_id == "call-terminal" =>
        {
            Some(output.to_string())
        }
        _ => None,
    });
    assert!(result.unwrap().contains("out"), "the terminal's output is the call's result");
    assert_eq!(acp.gate.asked.lock().unwrap().len(), 1, "the terminal of an allowed call is not asked again");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn resuming_loads_the_agents_session_without_showing_its_replay() {
    let acp = acp();
    let (outcome, chunks) = acp.start_resuming("hello", Some("fake-old-1")).outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(text_of(&chunks), "Hello from the fake agent.", "the replayed history is not shown again");
    assert_eq!(acp.tokens.saved(), ["fake-old-1"]);
    acp.host.shutdown().await;
}

#[tokio::test]
async fn a_steer_during_a_turn_is_queued_and_sent_as_the_next_prompt_and_the_reply_says_so() {
    let acp = acp();
    let mut turn = acp.start("write notes.txt draft");
    let approval = turn.approval_request().await;
    // The agent has no tool boundary to take it at: it waits for the turn's end.
    acp.host.steer("s1", "and add a title".into());
    acp.answer(&approval, true, None);
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert!(text_of(&chunks).contains("Wrote notes.txt."), "the turn ran to its end");
    assert_eq!(steer_markers(&chunks), ["queued"]);

    // The inbox sends it as the next prompt, once.
    let (outcome, chunks) = reply(&acp, "and add a title").await;
    assert_eq!((outcome, text_of(&chunks)), (success(), "You said: and add a title".to_owned()));
    assert!(steer_markers(&chunks).is_empty());
    let (_, chunks) = reply(&acp, "later").await;
    assert_eq!(text_of(&chunks), "You said: later", "nothing else was left waiting");
    acp.host.shutdown().await;
}

#[tokio::test]
async fn interrupt_cancels_the_turn_marks_the_reply_interrupted_and_the_message_goes_next() {
    let acp = acp();
    let mut turn = acp.start("wait");
    turn.chunk_until("the first text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    acp.host.interrupting("s1");
    turn.cancel.cancel();
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: protocol::StatusReason::UserStop });
    assert_eq!(steer_markers(&chunks), ["interrupted"]);
    assert_eq!(read(&acp.path("after-cancel.txt")), "cancelled", "the agent's turn was cancelled");

    let (outcome, chunks) = reply(&acp, "do this instead").await;
    assert_eq!((outcome, text_of(&chunks)), (success(), "You said: do this instead".to_owned()));

    // A plain Stop later is only a stop.
    let mut turn = acp.start("wait");
    turn.chunk_until("the first text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    turn.cancel.cancel();
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: protocol::StatusReason::UserStop });
    assert!(steer_markers(&chunks).is_empty(), "{:?}", steer_markers(&chunks));
    acp.host.shutdown().await;
}

fn metadata_of(chunks: &[UiChunk]) -> Vec<Value> {
    chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::MessageMetadata { message_metadata } => Some(message_metadata.clone()),
            _ => None,
        })
        .collect()
}

/// The agent's mode as the reply's metadata last said it.
fn mode_of(chunks: &[UiChunk]) -> Option<String> {
    metadata_of(chunks).iter().rev().find_map(|m| m["agentMode"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn the_agents_modes_and_commands_are_offered_and_a_mode_switch_applies_now_or_when_it_next_starts() {
    use crate::{ModeSwitch, SetModeError};
    let acp = acp();
    let (outcome, chunks) = reply(&acp, "hello").await;
    assert_eq!(outcome, success());
    let metadata = metadata_of(&chunks);
    let modes = metadata.iter().find_map(|m| m.get("agentModes")).expect("the modes offered");
    assert_eq!(modes["currentModeId"], "code");
    assert_eq!(modes["availableModes"][1]["id"], "architect");
    assert_eq!(modes["availableModes"][1]["description"], "Plans without changing files");
    let commands = metadata.iter().find_map(|m| m.get("agentCommands")).expect("the commands offered at the start");
    assert_eq!(commands[1]["name"], "test");
    assert_eq!(commands[1]["input"]["hint"], "which tests to run");

    // Between turns, on the warm connection: now; the next reply carries the new mode.
    assert_eq!(acp.host.set_agent_mode("s1", "architect").await, Ok(ModeSwitch::Now));
    let (_, chunks) = reply(&acp, "mode").await;
    assert_eq!(text_of(&chunks), "Mode: architect");
    assert_eq!(mode_of(&chunks).as_deref(), Some("architect"));

    let refused = acp.host.set_agent_mode("s1", "yolo").await;
    assert_eq!(
        refused,
        Err(SetModeError::NotOffered { mode: "yolo".into(), offered: vec!["code".into(), "architect".into()] })
    );
    assert!(refused.unwrap_err().to_string().contains("it offers: code, architect"));

    // Mid-turn: the agent answers beside the prompt in flight.
    let mut turn = acp.start("slow");
    turn.chunk_until("the first text", |c| matches!(c, UiChunk::TextDelta { .. })).await;
    assert_eq!(acp.host.set_agent_mode("s1", "code").await, Ok(ModeSwitch::Now));
    std::fs::write(acp.path("release"), "").unwrap();
    let (outcome, chunks) = turn.outcome().await;
    assert_eq!(outcome, success());
    assert_eq!(mode_of(&chunks).as_deref(), Some("code"), "the live reply shows the switch");
    std::fs::remove_file(acp.path("release")).unwrap();

    // No live connection (a fresh agent session next): the switch waits for its start.
    acp.host.reset("s1").await;
    assert_eq!(acp.host.set_agent_mode("s1", "architect").await, Ok(ModeSwitch::AtNextStart));
    let (_, chunks) = reply(&acp, "mode").await;
    assert_eq!(text_of(&chunks), "Mode: architect", "switched before the prompt");
    assert_eq!(mode_of(&chunks).as_deref(), Some("architect"));
    acp.host.shutdown().await;
}

fn file(media_type: &str, filename: &str, contents: &[u8]) -> crate::PromptFile {
    use base64::Engine as _;
    crate::PromptFile {
        media_type: media_type.into(),
        filename: filename.into(),
        data: base64::engine::general_purpose::STANDARD.encode(contents),
    }
}

#[tokio::test]
async fn files_go_into_the_prompt_as_the_blocks_the_agent_takes() {
    let acp = acp();
    let driver: Arc<dyn crate::Driver> = Arc::new(AcpDriver::new(fake_agent()));
    let offered = acp.host.prompt_capabilities(driver, &acp.spec(), None).await.unwrap();
    let offered = offered.expect("an ACP agent says what it takes");
    assert_eq!(offered, crate::PromptCapabilities { image: true, embedded_context: true });
    let mut turn = acp.host.session_turn(acp.spec(), "look".into(), None, acp.gate.clone(), acp.tokens.clone());
    turn.files = vec![file("image/png", "cat.png", b"\x89PNG"), file("text/markdown", "notes.md", b"# hi")];
    let (tx, mut rx) = mpsc::unbounded_channel();
    let context = RunContext {
        cancel: CancellationToken::new(),
        steer: CancellationToken::new(),
        part_offset: 0,
        idle_timeout: Duration::from_secs(120),
    };
    let outcome = turn.run_with(context, &mut Chunks(tx)).await;
    assert_eq!(outcome, success());
    let mut chunks = Vec::new();
    while let Ok(chunk) = rx.try_recv() {
        chunks.push(chunk);
    }
    assert_eq!(text_of(&chunks), "Got image image/png 8; resource attachment:///notes.md # hi");
    assert_eq!(acp.tokens.saved().len(), 1, "the turn went on on the connection the check started");
    acp.host.shutdown().await;
}

#[test]
fn an_agent_without_prompt_capabilities_takes_text_files_only_and_says_which_file_it_cannot_take() {
    let none = crate::PromptCapabilities::default();
    let said = none.refusal("Qwen Code", &file("image/png", "cat.png", b"x")).unwrap();
    assert_eq!(said, "Qwen Code does not take images, so cat.png cannot be sent to it");
    assert!(none.refusal("Qwen Code", &file("text/plain", "a.txt", b"x")).is_none());
    assert!(none.refusal("Qwen Code", &file("application/pdf", "r.pdf", b"x")).unwrap().contains("r.pdf"));
    let all = crate::PromptCapabilities { image: true, embedded_context: true };
    assert!(all.refusal("Qwen Code", &file("application/pdf", "r.pdf", b"x")).is_none());
}

#[test]
fn a_text_file_goes_as_a_link_to_its_contents_when_the_agent_takes_no_embedded_context() {
    let blocks = crate::acp::prompt_blocks(
        "read this".into(),
        &[file("text/plain", "a.txt", b"hello")],
        crate::PromptCapabilities::default(),
    );
    let blocks = serde_json::to_value(&blocks).unwrap();
    assert_eq!(blocks[0], json!({ "type": "text", "text": "read this" }));
    assert_eq!(blocks[1]["type"], "resource_link");
    assert_eq!(blocks[1]["name"], "a.txt");
    assert_eq!(blocks[1]["uri"], "data:text/plain;base64,aGVsbG8=");
    let embedded = crate::acp::prompt_blocks(
        "read this".into(),
        &[file("text/plain", "a.txt", b"hello"), file("application/pdf", "r.pdf", b"%PDF")],
        crate::PromptCapabilities { image: false, embedded_context: true },
    );
    let embedded = serde_json::to_value(&embedded).unwrap();
    assert_eq!(embedded[1]["resource"]["text"], "hello");
    assert_eq!(embedded[2]["resource"]["blob"], "JVBERg==");
}
