//! Export, import and backup through the operations: the JSON round trip keeps every
//! version and branch, ChatGPT and Claude.ai exports become our tree, damaged files are
//! reported, and a backup holds the data.

use protocol::archive::{BackupInfo, ExportDocument, ExportedFile, ImportReport, ImportSource, RestorePlan};

use super::*;

const CHATGPT: &str = include_str!("../../tests/fixtures/chatgpt-conversations.json");
const CLAUDE: &str = include_str!("../../tests/fixtures/claude-conversations.json");

async fn import(f: &Fixture, content: &str) -> ImportReport {
    f.call("topics_import", json!({ "content": content })).await
}

async fn export(f: &Fixture, topic: Option<&protocol::TopicId>, format: &str) -> ExportedFile {
    match topic {
        Some(id) => f.call("topic_export", json!({ "topicId": id, "format": format })).await,
        None => f.call("topic_export", json!({ "format": format })).await,
    }
}

fn topic_ref(id: &protocol::TopicId) -> Topic {
    Topic {
        id: id.clone(),
        title: String::new(),
        model: None,
        workspace: None,
        assistant_id: None,
        forked_from: None,
        system_prompt: None,
        params: Default::default(),
        created_at: String::new(),
        updated_at: String::new(),
    }
}

fn texts(rows: &[StoredMessage]) -> Vec<String> {
    rows.iter().map(|m| m.message.text()).collect()
}

/// The document with every id replaced by its place of first appearance, and the topic's
/// `updatedAt` (the import time) and `exportedAt` blanked: what must survive a round trip.
fn without_ids(document: &ExportDocument) -> Value {
    let mut text = serde_json::to_string(document).unwrap();
    let mut ids: Vec<String> = Vec::new();
    for topic in &document.topics {
        let candidates = std::iter::once(topic.id.clone())
            .chain(topic.messages.iter().flat_map(|m| std::iter::once(m.id.clone()).chain(m.turn_id.clone())));
        for id in candidates {
            if !id.is_empty() && !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let mut by_length: Vec<(usize, &String)> = ids.iter().enumerate().collect();
    by_length.sort_by_key(|(_, id)| std::cmp::Reverse(id.len()));
    for (position, id) in by_length {
        text = text.replace(id.as_str(), &format!("<id {position}>"));
    }
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["exportedAt"] = json!("");
    for topic in value["topics"].as_array_mut().unwrap() {
        topic["updatedAt"] = json!("");
    }
    value
}

#[tokio::test]
async fn export_then_import_then_export_is_the_same_tree_with_new_ids() {
    let f = fixture().await;
    let server = mock(Some("sk")).await;
    f.provider(&server, "sk").await;
    // A real turn (usage, turn ids, metadata) and a branchy tree from a ChatGPT import.
    let topic = f.topic().await;
    let _: Topic = f
        .call(
            "topic_update",
            json!({ "id": topic.id, "systemPrompt": "Be brief.", "params": { "temperature": 0.5, "reasoningEffort": "off" } }),
        )
        .await;
    server.push_script(Script { chunks: Some(vec!["Hello".into(), " there".into()]), ..Script::default() });
    f.send(&topic, "Say <b>hello</b> & more").await;
    let branchy = import(&f, CHATGPT).await.imported[0].topic_id.clone();

    for id in [&topic.id, &branchy] {
        let first = export(&f, Some(id), "json").await;
        assert_eq!(first.media_type, "application/json");
        let document: ExportDocument = serde_json::from_str(&first.content).unwrap();
        assert_eq!((document.format.as_str(), document.version), ("colloquy-export", 1));
        if id == &topic.id {
            assert_eq!(document.topics[0].system_prompt.as_deref(), Some("Be brief."));
            assert_eq!(document.topics[0].params.temperature, Some(0.5));
        }

        let report = import(&f, &first.content).await;
        assert_eq!(report.source, ImportSource::Colloquy);
        assert!(report.skipped.is_empty(), "{:?}", report.skipped);
        let copy = &report.imported[0].topic_id;
        assert_ne!(copy, id);
        let second: ExportDocument = serde_json::from_str(&export(&f, Some(copy), "json").await.content).unwrap();
        assert_eq!(without_ids(&second), without_ids(&document));
        assert_eq!(texts(&f.messages(&topic_ref(copy)).await), texts(&f.messages(&topic_ref(id)).await));
    }
    // The originals are untouched, and the copies are listed first.
    let topics = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    assert_eq!(topics.len(), 5);
    assert!(topics.iter().any(|t| t.id == topic.id) && topics.iter().any(|t| t.id == branchy));
}

#[tokio::test]
async fn a_chatgpt_export_becomes_our_tree_with_its_shown_branch() {
    let f = fixture().await;
    let report = import(&f, CHATGPT).await;
    assert_eq!(report.source, ImportSource::Chatgpt);
    assert_eq!(report.imported.len(), 2, "{report:?}");
    let rust = &report.imported[0];
    assert_eq!((rust.title.as_str(), rust.messages), ("Rust questions", 7));

    let shown = f.messages(&topic_ref(&rust.topic_id)).await;
    assert_eq!(
        texts(&shown),
        vec![
            "What is Rust?",
            "Rust is a systems language.",
            "[image not included in the export: file-abc123]\n\nIs it safe?",
            "Yes, memory safe."
        ]
    );
    // The regenerated answer is a version of the first; the reasoning is folded in.
    assert_eq!(shown[1].versions.len(), 2);
    assert!(
        matches!(&shown[3].message.parts[0], UiPart::Reasoning { text, .. } if text == "Think about the borrow checker.")
    );
    assert_eq!(shown[3].model.as_ref().map(|m| m.model.as_str()), Some("o3"));
    assert_eq!(shown[0].created_at, "2023-11-14T22:13:21.250Z");

    // The other branch (an edit of the second question) is kept and can be shown; the
    // code, its run (a tool message, skipped) and the answer after it are one reply.
    let all = f.engine.inner.store.list_messages(&rust.topic_id).await.unwrap();
    let fast = all.iter().find(|m| m.message.text() == "Is it fast?").unwrap();
    f.call::<Value>("message_select", json!({ "topicId": rust.topic_id, "messageId": fast.id })).await;
    let other = f.messages(&topic_ref(&rust.topic_id)).await;
    assert_eq!(other[3].message.text(), "```python\nprint(1 + 1)\n```Yes, very fast.");

    let reasons: Vec<(String, Option<String>, String)> =
        report.skipped.iter().map(|s| (s.conversation.clone(), s.message.clone(), s.reason.clone())).collect();
    assert!(reasons.contains(&(
        "Rust questions".into(),
        Some("t2".into()),
        "tool output (browsing, code runs, images) is not imported".into()
    )));
    assert!(reasons.contains(&("No mapping here".into(), None, "it has no message mapping".into())));
    assert!(reasons.contains(&(
        "Starts with a reply".into(),
        Some("a".into()),
        "a reply before any user message".into()
    )));
}

#[tokio::test]
async fn a_claude_export_imports_turns_reasoning_and_attachments() {
    let f = fixture().await;
    let report = import(&f, CLAUDE).await;
    assert_eq!(report.source, ImportSource::Claude);
    assert_eq!(report.imported.len(), 1);
    let shown = f.messages(&topic_ref(&report.imported[0].topic_id)).await;
    assert_eq!(shown.len(), 4);
    assert_eq!(shown[0].message.text(), "Hello, here are my notes[file not included in the export: photo.png]");
    assert!(shown[0].message.parts.iter().any(
        |p| matches!(p, UiPart::File { filename: Some(name), url, .. } if name == "notes.txt" && url.starts_with("data:text/plain;base64,"))
    ));
    assert!(matches!(&shown[1].message.parts[0], UiPart::Reasoning { text, .. } if text == "The user greets me."));
    assert_eq!(texts(&shown[1..]), vec!["Hi there", "Thanks", "You're welcome"]);
    assert_eq!(shown[0].created_at, "2024-05-01T09:00:01.000Z");
    let skipped: Vec<_> = report.skipped.iter().map(|s| (s.message.as_deref(), s.reason.as_str())).collect();
    assert!(skipped.contains(&(Some("m5"), "the message has no text")));
    assert!(skipped.contains(&(None, "it has no chat_messages list")));
}

#[tokio::test]
async fn malformed_files_are_refused_or_reported_and_nothing_is_half_written() {
    let f = fixture().await;
    for (content, says) in [
        ("not json at all", "not valid JSON"),
        ("{\"hello\": 1}", "not a file Colloquy can import"),
        ("[]", "no conversations"),
        ("{\"format\": \"colloquy-export\", \"version\": 99, \"topics\": []}", "newer Colloquy"),
    ] {
        let err = f.engine.call("topics_import", json!({ "content": content })).await.unwrap_err();
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("content")), "{content}");
        assert!(err.message.contains(says), "{}", err.message);
    }
    // One good topic, one whose message list is not a list, one with a reply under a
    // missing parent and one with an unreadable message.
    let document = json!({
        "format": "colloquy-export", "version": 1, "exportedAt": "x", "app": "colloquy",
        "topics": [
            { "id": "t1", "title": "Good", "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z",
              "messages": [
                { "id": "u", "role": "user", "status": "success", "parts": [{ "type": "text", "text": "hi" }],
                  "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z" },
                { "id": "r", "parentId": "u", "role": "assistant", "status": "streaming", "parts": [{ "type": "text", "text": "hel", "state": "streaming" }],
                  "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z" },
                { "id": "orphan", "parentId": "gone", "role": "assistant", "status": "success", "parts": [],
                  "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z" },
                { "id": "bad", "role": "wizard", "status": "success", "parts": [], "createdAt": "x", "updatedAt": "x" }
              ] },
            { "id": "t2", "title": "No list", "createdAt": "x", "updatedAt": "x", "messages": 5 },
            { "id": "t3", "title": "Hot", "systemPrompt": 7, "params": { "temperature": 9 }, "createdAt": "x", "updatedAt": "x",
              "messages": [{ "id": "h", "role": "user", "status": "success", "parts": [{ "type": "text", "text": "hot?" }],
                             "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z" }] }
        ]
    });
    let report = import(&f, &document.to_string()).await;
    assert_eq!(report.imported.len(), 2);
    assert_eq!(report.imported[0].messages, 2);
    // Bad settings are left out and said so; the conversation comes in without them.
    let settings: Vec<_> = report
        .skipped
        .iter()
        .filter(|s| s.conversation == "Hot")
        .map(|s| (s.message.as_deref(), s.setting.as_deref(), s.reason.as_str()))
        .collect();
    assert_eq!(
        settings,
        [
            (None, Some("systemPrompt"), "the system prompt is not text"),
            (None, Some("params"), "params.temperature: must be between 0 and 2 (was 9)")
        ]
    );
    let hot = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    let hot = hot.iter().find(|t| t.title == "Hot").unwrap();
    assert_eq!((hot.system_prompt.as_deref(), hot.params), (None, protocol::api::ModelParams::default()));
    let skipped: Vec<_> = report.skipped.iter().map(|s| (s.conversation.as_str(), s.message.as_deref())).collect();
    assert!(skipped.contains(&("Good", Some("orphan"))), "{:?}", report.skipped);
    assert!(skipped.contains(&("Good", Some("bad"))));
    assert!(skipped.contains(&("No list", None)));
    assert!(report.skipped.iter().any(|s| s.reason.contains("parent gone is not in the file")));
    // A reply that was streaming when exported comes in paused, not live.
    let shown = f.messages(&topic_ref(&report.imported[0].topic_id)).await;
    assert_eq!(shown[1].status, MessageStatus::Paused);
    let topics = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    assert_eq!(topics.len(), 2);
}

#[tokio::test]
async fn markdown_and_html_exports_read_well_and_escape_what_they_show() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "sk").await;
    let topic = f.topic().await;
    server.push_script(Script { chunks: Some(vec!["**bold** answer".into()]), ..Script::default() });
    f.send(&topic, "Say <script>alert(1)</script>").await;
    import(&f, CLAUDE).await;

    let markdown = export(&f, Some(&topic.id), "markdown").await;
    assert!(
        markdown.file_name.ends_with(".md") && markdown.file_name.starts_with("say-script"),
        "{}",
        markdown.file_name
    );
    assert!(markdown.content.starts_with("# Say <script>"), "{}", markdown.content);
    assert!(markdown.content.contains("## You · "));
    assert!(markdown.content.contains("## Assistant (scripted)"));
    assert!(markdown.content.contains("**bold** answer"));

    let html = export(&f, Some(&topic.id), "html").await;
    assert_eq!(html.media_type, "text/html");
    assert!(html.content.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.content.contains("<script"));
    assert!(!html.content.contains("http://") && !html.content.contains("https://"), "no remote resource");

    // Everything: both topics; the Claude one with reasoning folded and the file named.
    let all = export(&f, None, "markdown").await;
    assert!(all.file_name.starts_with("colloquy-export-"));
    assert!(all.content.contains("<details>\n<summary>Reasoning</summary>\n\nThe user greets me."));
    assert!(all.content.contains("📎 *Attachment: notes.txt (text/plain, 10 bytes)*"), "{}", all.content);
    assert!(!all.content.contains("base64"));
    let err = f.engine.call("topic_export", json!({ "topicId": "nope", "format": "html" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn a_backup_holds_the_data_and_a_restore_waits_for_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = || EngineConfig::new(dir.path().to_path_buf(), "test");
    let engine = Engine::open(config()).await.unwrap();
    let kept: Topic =
        serde_json::from_value(engine.call("topic_create", json!({ "title": "Kept" })).await.unwrap()).unwrap();
    let backup: BackupInfo = serde_json::from_value(engine.call("backup_create", Value::Null).await.unwrap()).unwrap();
    assert!(backup.bytes > 0);
    let store = store::Store::open(std::path::Path::new(&backup.path)).await.unwrap();
    assert_eq!(store.get_topic(&kept.id).await.unwrap().title, "Kept");
    drop(store);

    engine.call("topic_delete", json!({ "topicId": kept.id })).await.unwrap();
    let later: Topic =
        serde_json::from_value(engine.call("topic_create", json!({ "title": "Later" })).await.unwrap()).unwrap();
    let listed: Vec<BackupInfo> =
        serde_json::from_value(engine.call("backups_list", Value::Null).await.unwrap()).unwrap();
    // (Opening the copy above touched it: compare where it is.)
    assert_eq!(listed.iter().map(|b| b.path.as_str()).collect::<Vec<_>>(), vec![backup.path.as_str()]);
    let name = std::path::Path::new(&backup.path).file_name().unwrap().to_str().unwrap().to_owned();
    for bad in ["../colloquy.db", "", "missing.db"] {
        assert!(engine.call("backup_restore", json!({ "fileName": bad })).await.is_err(), "{bad}");
    }
    let plan: RestorePlan =
        serde_json::from_value(engine.call("backup_restore", json!({ "fileName": name })).await.unwrap()).unwrap();
    assert!(plan.message.contains("enter them again"), "{}", plan.message);
    // Nothing changes until the restart.
    let topics =
        serde_json::from_value::<protocol::api::TopicList>(engine.call("topics_list", Value::Null).await.unwrap())
            .unwrap()
            .topics;
    assert_eq!(topics.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), vec!["Later"]);
    engine.shutdown().await;
    drop(engine);

    let engine = Engine::open(config()).await.unwrap();
    let topics =
        serde_json::from_value::<protocol::api::TopicList>(engine.call("topics_list", Value::Null).await.unwrap())
            .unwrap()
            .topics;
    assert_eq!(topics.iter().map(|t| t.id.clone()).collect::<Vec<_>>(), vec![kept.id.clone()]);
    // The database it replaced is kept beside it.
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("colloquy.db.before-restore-"))
        .map(|e| e.path())
        .filter(|p| !p.to_string_lossy().ends_with("-wal") && !p.to_string_lossy().ends_with("-shm"))
        .collect();
    assert_eq!(aside.len(), 1);
    let old = store::Store::open(&aside[0]).await.unwrap();
    assert_eq!(old.get_topic(&later.id).await.unwrap().title, "Later");
}

/// An imported topic keeps its workspace folder, and MCP servers are offered it as a root.
#[tokio::test]
async fn an_imported_workspace_is_offered_to_mcp_servers_as_a_root() {
    let f = fixture().await;
    let folder = tempfile::tempdir().unwrap();
    assert!(f.engine.inner.mcp.hub().roots().is_empty());
    let document = json!({
        "format": "colloquy-export", "version": 1, "exportedAt": "x", "app": "colloquy",
        "topics": [{ "id": "t1", "title": "Work", "workspace": folder.path().to_str().unwrap(),
                     "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z",
                     "messages": [{ "id": "u", "role": "user", "status": "success", "parts": [{ "type": "text", "text": "hi" }],
                                    "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "2024-01-01T00:00:00.000Z" }] }]
    });
    let report = import(&f, &document.to_string()).await;
    assert_eq!(report.imported.len(), 1, "{report:?}");
    assert_eq!(f.engine.inner.mcp.hub().roots(), [folder.path().to_path_buf()]);
}
