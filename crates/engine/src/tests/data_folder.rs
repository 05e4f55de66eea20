//! The data folder: one process holds it at a time, and it is private to the user.

use super::*;

#[tokio::test]
async fn audit_07_a_second_process_on_the_same_folder_is_refused_and_the_first_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "desktop");
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    server.push_script(Script::text(["one ", "two ", "three"]).with_token_delay(Duration::from_millis(50)));
    let (listener, mut rx) = f.engine.listener(ListenerId::unique(), &topic.id);
    f.engine.stream_open(open_request(topic.id.clone(), "count"), listener).await.unwrap();

    // `colloquy serve` on the desktop app's folder, while a reply streams there.
    let err = Engine::open(EngineConfig::new(dir.path().to_path_buf(), "server")).await.err().unwrap();
    let pid = std::process::id();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(err.message.contains(&format!("is in use by the desktop app, pid {pid}")), "{}", err.message);

    // The first process's reply was left alone: not "recovered", not cut.
    assert_eq!(terminal_status(&drain(&mut rx).await), TerminalStatus::Success);
    assert_eq!(f.messages(&topic).await[1].message.text(), "one two three");

    // Once it has shut down, the folder is free.
    f.engine.shutdown().await;
    let again = Engine::open(EngineConfig::new(dir.path().to_path_buf(), "server")).await.unwrap();
    again.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn audit_15_the_data_folder_and_the_database_are_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("colloquy");
    let config = EngineConfig::new(dir.clone(), "test");

    // A new folder.
    let engine = Engine::open(config.clone()).await.unwrap();
    engine.call("topic_create", json!({ "title": "private" })).await.unwrap();
    assert_eq!(mode(&dir), 0o700);
    let files = ["colloquy.db", "colloquy.db-wal", "colloquy.db-shm", "colloquy.lock", "mcp-processes.json"];
    for name in files {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    engine.shutdown().await;

    // A folder an older version left readable by everyone is tightened at start.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["colloquy.db", "colloquy.lock", "mcp-processes.json"] {
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let engine = Engine::open(config).await.unwrap();
    assert_eq!(mode(&dir), 0o700);
    for name in ["colloquy.db", "colloquy.lock", "mcp-processes.json"] {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    let topics =
        serde_json::from_value::<protocol::api::TopicList>(engine.call("topics_list", json!({})).await.unwrap())
            .unwrap()
            .topics;
    assert_eq!(topics[0].title, "private", "nothing stored was lost");
    engine.shutdown().await;
}

#[tokio::test]
async fn audit_18_a_damaged_database_stops_the_start_naming_the_file_and_can_be_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "server");
    let database = crate::database_path(dir.path());
    std::fs::write(&database, b"not a database at all ".repeat(500)).unwrap();

    let err = Engine::open(config.clone()).await.err().unwrap();
    assert_eq!(err.code.as_deref(), Some(crate::DATABASE_DAMAGED));
    assert!(err.message.contains(&format!("the database {} is damaged", database.display())), "{}", err.message);

    let kept = crate::move_database_aside(dir.path()).unwrap();
    assert_eq!(std::fs::read(&kept).unwrap(), b"not a database at all ".repeat(500), "kept as it was");
    let engine = Engine::open(config).await.unwrap();
    let topics = engine.call("topics_list", json!({})).await.unwrap();
    assert_eq!(topics["topics"], json!([]), "a fresh start");
    engine.shutdown().await;
}
