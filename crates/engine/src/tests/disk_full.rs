//! Fault suite: the disk fills up during a reply and during an approval. The user is
//! told "the disk is full" in words, nothing already stored is lost, and once there is
//! space again everything works without a restart.
//!
//! The disk "fills" through `Store::simulate_full_disk`: SQLite's `max_page_count` caps
//! the database at its size, so a write that needs room fails with SQLite's own
//! `SQLITE_FULL`, as on a full disk. Writes here are made large enough to need room.

use protocol::tool::ApprovalState;

use super::tools::{ToolFixture, call, tool_fixture};
use super::*;

/// Text that needs fresh pages in the database wherever it goes (about 360 KB).
fn bulky(label: &str) -> String {
    format!("{label} {}", "lorem ipsum ".repeat(30_000))
}

fn is_disk_full(err: &protocol::ApiError) -> bool {
    err.kind == ErrorKind::Internal
        && err.retryable
        && err.code.as_deref() == Some("disk_full")
        && err.message.starts_with("the disk is full")
}

#[tokio::test]
async fn audit_02_a_full_disk_during_a_reply_is_told_in_words_and_passes_once_space_is_back() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(Script::text(["kept"]));
    assert_eq!(terminal_status(&f.send(&topic, "before").await), TerminalStatus::Success);

    // A long reply is streaming when the disk fills.
    let chunks: Vec<String> = (0..20).map(|i| format!("chunk {i} {}", "lorem ipsum ".repeat(3_000))).collect();
    server.push_script(Script::text(chunks).with_token_delay(Duration::from_millis(20)));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "write a lot"), listener).await.unwrap();
    f.engine.inner.store.simulate_full_disk(true).await.unwrap();
    drain(&mut rx).await;

    // Writing now fails, and says why.
    for _ in 0..3 {
        let (listener, _rx) = f.engine.listener(ListenerId::unique(), &topic.id);
        let err = f.engine.stream_open(open_request(topic.id.clone(), &bulky("while full")), listener).await;
        let err = err.unwrap_err();
        assert!(is_disk_full(&err), "{err:?}");
    }

    // Space is back: every turn works again, no restart.
    f.engine.inner.store.simulate_full_disk(false).await.unwrap();
    for i in 0..6 {
        server.push_script(Script::text([format!("answer {i}")]));
        assert_eq!(terminal_status(&f.send(&topic, &format!("after {i}")).await), TerminalStatus::Success, "turn {i}");
    }
    let rows = f.messages(&topic).await;
    let texts: Vec<String> = rows.iter().map(|m| m.message.text()).collect();
    assert_eq!(&texts[..2], ["before", "kept"], "what was stored before is intact");
    assert_eq!(texts.last().map(String::as_str), Some("answer 5"));
    assert!(!texts.iter().any(|t| t.starts_with("while full")), "a refused turn left nothing half-written");
}

#[tokio::test]
async fn audit_02_a_full_disk_while_an_approval_waits_keeps_it_answerable() {
    let t: ToolFixture = tool_fixture().await;
    t.server.push_script(call("write_file", json!({ "path": "notes.md", "content": "short" })));
    t.server.push_script(Script::text(["Wrote notes.md."]));
    t.f.send(&t.topic, "write notes").await;
    let pending = t.pending().await;
    assert_eq!(pending.len(), 1);
    let approval = &pending[0];

    // The user edits the content to something long and approves: the disk is full.
    t.f.engine.inner.store.simulate_full_disk(true).await.unwrap();
    let edited = json!({ "path": "notes.md", "content": bulky("edited") });
    let answer = json!({ "approvalId": approval.id, "decision": "approve", "updatedInput": edited });
    let err = t.respond(answer.clone()).await.unwrap_err();
    assert!(is_disk_full(&err), "{err:?}");
    // Nothing was decided behind the user's back: the question still waits, nothing ran.
    let still = t.pending().await;
    assert_eq!((still.len(), still[0].state), (1, ApprovalState::Pending));
    assert!(!t.workspace.path().join("notes.md").exists());

    // Space is back: the same answer goes through and the reply goes on.
    t.f.engine.inner.store.simulate_full_disk(false).await.unwrap();
    assert_eq!(t.respond(answer).await.unwrap().state, ApprovalState::Approved);
    let rows = t.settled().await;
    assert_eq!(rows[1].status, MessageStatus::Success);
    assert_eq!(rows[1].message.text(), "Wrote notes.md.");
    let written = std::fs::read_to_string(t.workspace.path().join("notes.md")).unwrap();
    assert!(written.starts_with("edited lorem ipsum"));
}
