//! The driver against small fake `claude` programs (tests/agent-cli/fakes): what the user
//! is told when the program is not Claude Code, fails at start, or exits mid-turn.

use std::path::PathBuf;
use std::time::Duration;

use super::*;

fn fake(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent-cli/fakes").join(name)
}

fn driver(program: PathBuf, start_timeout: Duration) -> ClaudeCode {
    ClaudeCode::new(ClaudeCodeConfig { program, env: Vec::new(), start_timeout })
}

fn spec(workspace: &std::path::Path) -> SessionSpec {
    SessionSpec {
        session_id: "s1".into(),
        runtime: String::new(),
        workspace: workspace.to_path_buf(),
        model: "claude-sonnet-4-5".into(),
        permission_mode: PermissionMode::Default,
        env: Vec::new(),
    }
}

/// Connects to `program`, which must fail to start; the message the user gets.
async fn start_failure(program: PathBuf, start_timeout: Duration) -> String {
    let workspace = tempfile::tempdir().unwrap();
    match driver(program, start_timeout).connect(&spec(workspace.path()), None).await {
        Err(DriverError::Failed(message)) => message,
        Err(other) => panic!("failed otherwise: {other:?}"),
        Ok(_) => panic!("it started"),
    }
}

fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} is missing from:\n{message}");
    }
}

#[tokio::test]
async fn a_program_that_prints_text_instead_of_stream_json_is_named_with_what_it_printed() {
    let program = fake("not-claude.sh");
    let message = start_failure(program.clone(), Duration::from_secs(60)).await;
    assert_says(
        &message,
        &[
            &format!(
                "Claude Code ({}) did not start: it printed text where Claude Code writes only stream-json",
                program.display()
            ),
            "It exited with exit code 0.",
            "It printed:\n  NotClaude 1.0 - a friendly file viewer\n  usage: notclaude [options] FILE",
            "COLLOQUY_CLAUDE_PATH",
            "npm install -g @anthropic-ai/claude-code",
        ],
    );
}

#[tokio::test]
async fn a_program_that_prints_text_and_never_answers_is_named_when_the_start_times_out() {
    let message = start_failure(fake("prints-and-waits.sh"), Duration::from_secs(2)).await;
    assert_says(
        &message,
        &["it did not answer within 2 s", "It printed:\n  Press any key to continue", "COLLOQUY_CLAUDE_PATH"],
    );
    assert!(!message.contains("It exited"), "it was still running: {message}");
}

#[tokio::test]
async fn a_cli_that_fails_at_start_says_how_it_exited_and_what_it_wrote() {
    let message = start_failure(fake("crashes-at-start.sh"), Duration::from_secs(60)).await;
    assert_says(
        &message,
        &[
            "did not start: it exited before answering.",
            "It exited with exit code 1.",
            "Its error output ended with:\n  Error: Cannot find module",
            "COLLOQUY_CLAUDE_PATH",
        ],
    );
    assert!(!message.contains("It printed"), "{message}");
}

/// A `claude` stand-in running `script` (sh).
fn script(dir: &std::path::Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let program = dir.join("claude");
    std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    program
}

#[tokio::test]
async fn audit_14_an_endless_error_line_is_cut_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let program =
        script(dir.path(), "head -c 100000 /dev/zero | tr '\\0' e >&2\necho >&2\necho 'Error: boom' >&2\nexit 1");
    let message = start_failure(program, Duration::from_secs(60)).await;
    assert_says(&message, &["[cut: 95904 more bytes]", "Error: boom", "It exited with exit code 1."]);
    assert!(message.len() < 10_000, "the line is not kept whole ({} bytes)", message.len());
}

#[tokio::test]
async fn audit_14_a_message_over_the_cap_ends_the_connection_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // Output without end and without a newline: read only up to the cap.
    let program = script(dir.path(), "exec cat /dev/zero");
    let message = start_failure(program, Duration::from_secs(60)).await;
    assert_says(&message, &["Colloquy stopped reading it", "over the 16 MiB Colloquy reads"]);
    assert!(message.len() < 10_000, "{} bytes", message.len());
}

#[tokio::test]
async fn a_program_that_cannot_be_run_is_not_installed() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("claude");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let result = driver(program, Duration::from_secs(60)).connect(&spec(workspace.path()), None).await;
    assert!(
        matches!(&result, Err(DriverError::NotInstalled(m)) if m.contains("permission denied")),
        "{:?}",
        result.err()
    );
}

#[tokio::test]
async fn a_cli_that_exits_mid_turn_leaves_its_exit_and_error_output_for_the_message() {
    let workspace = tempfile::tempdir().unwrap();
    let driver = driver(fake("exits-mid-turn.sh"), Duration::from_secs(60));
    let mut connection = driver.connect(&spec(workspace.path()), None).await.expect("the fake answers initialize");
    connection.send("hi").await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(60), connection.next_event()).await.unwrap() {
        events.push(event);
    }
    assert_eq!(
        events,
        [DriverEvent::ModelCallStarted, DriverEvent::TextDelta { block: 0, text: "Half an ans".into() }]
    );
    assert!(connection.is_closed());
    let said = connection.diagnostics().await.unwrap();
    assert_says(
        &said,
        &["It exited with exit code 7.", "Its error output ended with:\n  fatal: the agent ran out of memory"],
    );
    connection.close().await;
}
