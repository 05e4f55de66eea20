//! The data folder: one process holds it at a time.

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
