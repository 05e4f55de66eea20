//! App settings over the engine's operations: the stream idle timeout chosen in Settings,
//! validated, kept across restarts, and given to each turn as it starts.

use protocol::api::AppSettings;

use super::*;

/// The idle timeout the stream manager will give the next turn's reply.
async fn next_turn_idle_timeout(f: &Fixture, topic: &Topic) -> Option<Duration> {
    let turn = f.engine.prepare_turn(open_request(topic.id.clone(), "hi")).await.unwrap();
    turn.executions[0].idle_timeout
}

#[tokio::test]
async fn the_idle_timeout_is_a_setting_that_is_checked_kept_and_read_when_a_turn_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    // As if started with COLLOQUY_IDLE_TIMEOUT_SECONDS=90: the default, not an override.
    config.streams.idle_timeout = Duration::from_secs(90);
    let f = Fixture { engine: Engine::open(config.clone()).await.unwrap(), _dir: tempfile::tempdir().unwrap() };
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;

    let defaults = AppSettings {
        idle_timeout_seconds: None,
        default_idle_timeout_seconds: 90,
        min_idle_timeout_seconds: 10,
        max_idle_timeout_seconds: 3600,
        theme: None,
        show_shortcut: None,
    };
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await, defaults);
    assert_eq!(next_turn_idle_timeout(&f, &topic).await, Some(Duration::from_secs(90)));

    // Out of bounds or not a whole number of seconds: an error naming the field, nothing kept.
    for bad in [json!(0), json!(9), json!(3601), json!(-5), json!(1.5), json!("30")] {
        let err = f.engine.call("settings_update", json!({ "idleTimeoutSeconds": bad })).await.unwrap_err();
        assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("idleTimeoutSeconds")), "{bad}");
    }
    let err = f.engine.call("settings_update", json!({ "idleTimeoutSeconds": 5 })).await.unwrap_err();
    assert_eq!(err.message, "idleTimeoutSeconds: must be between 10 and 3600 seconds (was 5)");
    let err = f.engine.call("settings_update", json!({ "idleTimeout": 30 })).await.unwrap_err();
    assert_eq!(err.field.as_deref(), Some("idleTimeout"));
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await, defaults);

    let saved: AppSettings = f.call("settings_update", json!({ "idleTimeoutSeconds": 30 })).await;
    assert_eq!(saved, AppSettings { idle_timeout_seconds: Some(30), ..defaults.clone() });
    assert_eq!(next_turn_idle_timeout(&f, &topic).await, Some(Duration::from_secs(30)));

    // Kept across a restart, still winning over the default.
    f.engine.shutdown().await;
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await.idle_timeout_seconds, Some(30));
    assert_eq!(next_turn_idle_timeout(&f, &topic).await, Some(Duration::from_secs(30)));

    // Back to the default.
    let reset: AppSettings = f.call("settings_update", json!({ "idleTimeoutSeconds": null })).await;
    assert_eq!(reset, defaults);
    assert_eq!(next_turn_idle_timeout(&f, &topic).await, Some(Duration::from_secs(90)));
}

/// A stored value a user could not have chosen (a damaged or newer database) does not
/// stop turns: the default applies.
#[tokio::test]
async fn an_unusable_stored_idle_timeout_falls_back_to_the_default() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    f.engine.inner.store.set_setting("idle_timeout_seconds", Some(&json!("soon"))).await.unwrap();
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await.idle_timeout_seconds, None);
    assert_eq!(next_turn_idle_timeout(&f, &topic).await, Some(StreamConfig::default().idle_timeout));
}

#[tokio::test]
async fn the_theme_is_kept_and_a_value_this_build_does_not_know_reads_as_the_system_one() {
    let f = fixture().await;
    let saved: AppSettings = f.call("settings_update", json!({ "theme": "dark", "idleTimeoutSeconds": 30 })).await;
    assert_eq!((saved.theme, saved.idle_timeout_seconds), (Some(protocol::api::Theme::Dark), Some(30)));
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await.theme, Some(protocol::api::Theme::Dark));
    let err = f.engine.call("settings_update", json!({ "theme": "sepia" })).await.unwrap_err();
    assert!(err.message.contains("sepia"), "{}", err.message);
    assert_eq!(
        f.call::<AppSettings>("settings_get", Value::Null).await.theme,
        Some(protocol::api::Theme::Dark),
        "a refused change keeps it"
    );
    // Every setting is sent each time: leaving the theme out goes back to the system's.
    let saved: AppSettings = f.call("settings_update", json!({ "idleTimeoutSeconds": 30 })).await;
    assert_eq!(saved.theme, None);
    f.engine.inner.store.set_setting("theme", Some(&json!("sepia"))).await.unwrap();
    assert_eq!(f.call::<AppSettings>("settings_get", Value::Null).await.theme, None);
}

#[tokio::test]
async fn the_show_shortcut_is_stored_by_the_desktop_kept_by_settings_updates_and_refused_over_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::new(dir.path().to_path_buf(), "test");
    let engine = Engine::open(config.clone()).await.unwrap();

    // Without a desktop shell the operation is refused in words, whatever its body.
    let err = engine.call("show_shortcut_set", json!({ "shortcut": "Ctrl+Shift+Space" })).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert!(err.message.contains("only the desktop app"), "{}", err.message);

    // What the shell stores after registering it; text that cannot be an accelerator is refused.
    let too_long = format!("{}K", "Shift+".repeat(20));
    for bad in ["", "Ctrl++K", "Ctrl+", too_long.as_str(), "Ctrl+\nK"] {
        let err = engine.store_show_shortcut(Some(bad)).await.unwrap_err();
        assert_eq!(err.field.as_deref(), Some("shortcut"), "{bad:?}");
    }
    assert_eq!(engine.call("settings_get", Value::Null).await.unwrap()["showShortcut"], Value::Null);
    let saved = engine.store_show_shortcut(Some("CommandOrControl+Shift+Space")).await.unwrap();
    assert_eq!(saved.show_shortcut.as_deref(), Some("CommandOrControl+Shift+Space"));

    // The General settings form does not carry it, so saving that form keeps it.
    let updated: AppSettings =
        serde_json::from_value(engine.call("settings_update", json!({ "theme": "dark" })).await.unwrap()).unwrap();
    assert_eq!(updated.show_shortcut.as_deref(), Some("CommandOrControl+Shift+Space"));

    // Kept across a restart; `None` turns it off.
    engine.shutdown().await;
    let engine = Engine::open(config).await.unwrap();
    assert_eq!(engine.call("settings_get", Value::Null).await.unwrap()["showShortcut"], "CommandOrControl+Shift+Space");
    assert_eq!(engine.store_show_shortcut(None).await.unwrap().show_shortcut, None);
}
