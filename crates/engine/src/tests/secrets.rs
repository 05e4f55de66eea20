//! API keys stay in the secret store: never in the database file, never in an
//! operation's answer or a streamed chunk, never in the logs or the spans of a turn (the
//! spans are what OTLP exports) — not even when a provider echoes the key back.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::format::FmtSpan;

use super::*;

/// The key every provider here is saved with; the mock answers only requests that carry it.
const KEY: &str = "sk-colloquy-canary-7f3a9c51e2";

/// Everything a tracing subscriber writes, kept in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Every answer an operation gave, as the JSON a transport would send (errors too).
#[derive(Default)]
struct Answers(Vec<String>);

impl Answers {
    async fn call(&mut self, f: &Fixture, name: &str, request: Value) -> Result<Value, ApiError> {
        let answer = f.engine.call(name, request).await;
        let json = match &answer {
            Ok(value) => value.to_string(),
            Err(error) => serde_json::to_string(error).unwrap(),
        };
        self.0.push(format!("{name}: {json}"));
        answer
    }

    fn stream(&mut self, messages: &[StreamMessage]) {
        self.0.extend(messages.iter().map(|message| serde_json::to_string(message).unwrap()));
    }
}

#[tokio::test]
async fn an_api_key_never_reaches_the_database_an_answer_or_the_logs() {
    // Every event and span (with its fields, opened and closed) at every level, as the
    // console log and the OTLP exporter would see them. The test runs on one thread, so
    // the engine's tasks log here too.
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::FULL)
        .with_ansi(false)
        .with_writer(logs.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);

    let f = fixture().await;
    let server = mock(Some(KEY)).await;
    let mut answers = Answers::default();
    let mut providers = Vec::new();
    for format in [ApiFormat::OpenaiChat, ApiFormat::OpenaiResponses, ApiFormat::Anthropic, ApiFormat::Gemini] {
        let base_url = if format == ApiFormat::Gemini { server.gemini_base_url() } else { server.base_url() };
        let request = json!({ "name": "Keyed", "format": format, "baseUrl": base_url, "apiKey": KEY, "defaultModel": "scripted" });
        let provider: Provider =
            serde_json::from_value(answers.call(&f, "provider_create", request).await.unwrap()).unwrap();
        assert!(provider.has_api_key);
        providers.push(provider);
    }
    // Saving again without a key keeps it; the model list uses the stored one.
    let update = json!({ "id": providers[0].id, "provider": { "name": "Keyed again", "baseUrl": server.base_url(), "defaultModel": "scripted" } });
    answers.call(&f, "provider_update", update).await.unwrap();
    for provider in &providers {
        let list = answers
            .call(&f, "provider_models", json!({ "baseUrl": provider.base_url, "providerId": provider.id }))
            .await;
        assert_eq!(list.unwrap()["models"], json!(["scripted"]), "the stored key was used");
    }

    // A chat in every format (the mock refuses a request without the key), then one whose
    // provider echoes the key back in its error, and one that fails after 200 the same way.
    for provider in &providers {
        let topic = topic_with(&f, provider).await;
        server.push_script(Script::text(["the key ", "worked"]));
        let stream = f.send(&topic, "hello").await;
        assert_eq!(terminal_status(&stream), TerminalStatus::Success, "{}", provider.format.as_str());
        answers.stream(&stream);
        let echo = format!(r#"{{"error":{{"message":"bad header Authorization: Bearer {KEY} (x-api-key: {KEY})"}}}}"#);
        server.push_script(Script::status(400, echo, "application/json"));
        let stream = f.send(&topic, "again").await;
        assert_eq!(terminal_status(&stream), TerminalStatus::Error);
        answers.stream(&stream);
        server.push_script(
            Script::text(["partial"])
                .with_fault(Fault::ErrorFrame { after: 1, message: format!("upstream saw key {KEY}") }),
        );
        answers.stream(&f.send(&topic, "and again").await);
        let rows = answers.call(&f, "messages_list", json!({ "topicId": topic.id })).await.unwrap();
        let shown = rows.to_string();
        assert!(shown.contains("Bearer [API key]"), "the echoed key is blanked out: {shown}");
    }

    // Every operation, asked with an empty request (most refuse it; their errors count too),
    // and the ones that show providers and settings.
    for operation in OPERATIONS.iter().filter(|name| !name.ends_with("_delete")) {
        let _ = answers.call(&f, operation, json!({})).await;
    }
    for operation in ["providers_list", "app_info", "topics_list", "settings_get", "assistants_list"] {
        answers.call(&f, operation, Value::Null).await.unwrap();
    }

    for answer in &answers.0 {
        assert!(!answer.contains(KEY), "an answer carries the API key: {answer}");
    }
    let logged = logs.text();
    assert!(logged.contains("opening") || logged.contains("turn"), "the turn was logged: {logged:.2000}");
    if let Some(at) = logged.find(KEY) {
        panic!(
            "the log carries the API key: …{}…",
            &logged[at.saturating_sub(300)..(at + KEY.len()).min(logged.len())]
        );
    }

    // The database: its file and its write-ahead log, byte for byte, after everything was
    // written (the key lives in the secret store only).
    f.engine.shutdown().await;
    let data_dir = f._dir.path();
    let mut scanned = 0;
    for entry in std::fs::read_dir(data_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("colloquy.db") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "{name} holds the API key");
        scanned += bytes.len();
    }
    assert!(scanned > 0, "the database files were read");
    // And the key is where it belongs.
    let store = store::secrets::open(data_dir);
    assert_eq!(store.get(providers[1].id.as_str()).unwrap().as_deref(), Some(KEY));
}
