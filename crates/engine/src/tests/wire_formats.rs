//! Every wire format: chats in its own format, and every fault persisted with its kind.

use super::*;

#[tokio::test]
async fn anthropic_and_gemini_providers_chat_through_their_own_wire_formats() {
    let f = fixture().await;
    let server = mock(Some("k")).await;
    let presets: Vec<protocol::api::ProviderPresetInfo> = f.call("provider_presets", Value::Null).await;
    assert!(presets.iter().any(|p| p.format == protocol::api::ApiFormat::Gemini));
    let anthropic: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Claude", "format": "anthropic", "baseUrl": server.base_url(), "apiKey": "k", "defaultModel": "scripted" }),
        )
        .await;
    assert_eq!(anthropic.format, protocol::api::ApiFormat::Anthropic);
    let gemini: Provider = f
        .call(
            "provider_create",
            json!({ "name": "Gemini", "format": "gemini", "baseUrl": server.gemini_base_url(), "apiKey": "k", "defaultModel": "scripted" }),
        )
        .await;
    for (provider, path) in [(&anthropic, "/v1/messages"), (&gemini, ":streamGenerateContent")] {
        let topic: Topic =
            f.call("topic_create", json!({ "model": { "providerId": provider.id, "model": "scripted" } })).await;
        server.push_script(Script { chunks: Some(vec![format!("hello from {}", provider.name)]), ..Script::default() });
        assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Success);
        assert_eq!(f.messages(&topic).await[1].message.text(), format!("hello from {}", provider.name));
        assert!(server.requests().last().unwrap().path.contains(path), "{:?}", server.requests().last().unwrap().path);
    }
    let models: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "k", "format": "anthropic" })).await;
    assert_eq!(models.models, vec!["scripted"]);
}

#[tokio::test]
async fn a_malformed_frame_or_an_error_frame_keeps_the_text_and_ends_with_an_error_part() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    for fault in [
        json!({ "kind": "malformedFrame", "after": 2 }),
        json!({ "kind": "errorFrame", "after": 2, "message": "model crashed" }),
    ] {
        let topic = f.topic().await;
        server.push_script(
            serde_json::from_value(json!({ "chunks": ["one ", "two ", "three"], "fault": fault })).unwrap(),
        );
        assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Error);
        let rows = f.messages(&topic).await;
        assert_eq!(rows[1].status, MessageStatus::Error);
        assert_eq!(rows[1].message.text(), "one two ", "text before the fault is kept ({fault})");
        assert!(
            error_part(&rows[1]).is_some_and(|e| !e.message.is_empty()),
            "an error part says what happened ({fault})"
        );
    }
}

/// How a stored reply must look after a scripted ending.
struct Expected<'a> {
    status: MessageStatus,
    /// The row's `status_reason` (for an error: the error's kind, also its `code`).
    reason: Option<&'a str>,
    /// For an error: words the stored message must contain, saying what to do.
    hint: Option<&'a str>,
    /// The text the reply keeps.
    text: &'a str,
}

/// Asserts `reply` is stored as `expected` says: status, reason, kept text, and for an
/// error a `data-error` part whose message says what happened and what to do.
fn assert_stored(case: &str, reply: &StoredMessage, expected: &Expected<'_>) {
    assert_eq!((reply.status, reply.status_reason.as_deref()), (expected.status, expected.reason), "{case}");
    assert_eq!(reply.message.text(), expected.text, "{case}: the text received before the end is kept");
    match expected.hint {
        Some(hint) => {
            let error = error_part(reply).unwrap_or_else(|| panic!("{case}: an error part"));
            assert_eq!(error.code.as_deref(), expected.reason, "{case}");
            // What happened, then a dash, then what to do about it.
            let (what, advice) = error
                .message
                .split_once(" — ")
                .unwrap_or_else(|| panic!("{case}: the message says what to do: {}", error.message));
            assert!(!what.trim().is_empty() && !advice.trim().is_empty(), "{case}: {}", error.message);
            assert!(advice.to_lowercase().contains(hint), "{case}: “{hint}” in the advice of: {}", error.message);
        }
        None => assert!(error_part(reply).is_none(), "{case}: no error part"),
    }
}

/// Every way a reply can go wrong (or be cut short), over real HTTP and in every wire
/// format, ends as a stored reply with the right status, reason (the error's kind), the
/// text received before it, and a message that says what to do.
#[tokio::test]
async fn every_fault_is_persisted_with_its_kind_in_every_format() {
    let f = fixture().await;
    let server = mock(None).await;
    let providers = provider_per_format(&f, &server, "").await;
    let status = |status: u16, body: &str| Script::status(status, body, "application/json");
    let error =
        |reason, hint, text| Expected { status: MessageStatus::Error, reason: Some(reason), hint: Some(hint), text };
    let cases: Vec<(&str, Script, Expected<'_>)> = vec![
        ("rate limit", Script::refusal(429, None), error("rate_limit", "wait a moment", "")),
        ("overloaded", Script::refusal(529, None), error("overloaded", "try again in a moment", "")),
        ("server", Script::refusal(500, None), error("server", "try again later", "")),
        ("request timeout", Script::refusal(408, None), error("timeout", "try again", "")),
        ("too early", Script::refusal(425, None), error("server", "try again in a moment", "")),
        (
            "html error page",
            Script::status(502, "<html><head><title>Bad Gateway</title></head><body>nginx</body></html>", "text/html"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "plain-text error",
            Script::status(500, "upstream connect error or disconnect/reset before headers", "text/plain"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "plain-text success",
            Script::status(200, "Welcome to nginx! The web server is installed and working.", "text/plain"),
            error("bad_response", "check the base url", ""),
        ),
        (
            "context",
            status(
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#,
            ),
            error("context_too_long", "start a new topic", ""),
        ),
        (
            "filtered request",
            status(400, r#"{"error":{"message":"blocked","code":"content_filter"}}"#),
            error("content_filtered", "rephrase", ""),
        ),
        (
            "bad model",
            status(404, r#"{"error":{"message":"The model `nope` does not exist"}}"#),
            error("invalid_request", "check the base url and the model name", ""),
        ),
        (
            "reset mid-stream",
            Script::text(["kept", " lost?"]).with_fault(Fault::Reset { after: 1 }),
            error("network", "try again", "kept"),
        ),
        (
            "malformed frame",
            Script::text(["kept", " lost"]).with_fault(Fault::MalformedFrame { after: 1 }),
            error("bad_response", "check the base url", "kept"),
        ),
        (
            // Chat Completions `{"error"}` frame, Responses `error` event, Anthropic `error`
            // event, Gemini `{"error"}` frame.
            "error after 200",
            Script::text(["kept", " lost"]).with_fault(Fault::ErrorFrame { after: 1, message: "exploded".into() }),
            error("server", "try again", "kept"),
        ),
        (
            // Responses `response.failed`; the other formats have only their error frame.
            "failed after 200",
            Script::text(["kept", " lost"]).with_fault(Fault::Failed { after: 1, message: "gave up".into() }),
            error("server", "try again", "kept"),
        ),
        (
            "overloaded after 200",
            Script::text(["kept", " lost"])
                .with_fault(Fault::ErrorFrame { after: 1, message: "Overloaded".into() })
                .with_error_code("overloaded_error"),
            error("overloaded", "try again in a moment", "kept"),
        ),
        (
            // Chat Completions `content_filter`, Responses incomplete (`content_filter`),
            // Anthropic `refusal`, Gemini `SAFETY`: not a success, the text stays.
            "filtered reply",
            Script::text(["Here is how ", "you"]).with_finish(Finish::ContentFilter),
            error("content_filtered", "rephrase", "Here is how you"),
        ),
        (
            // Chat Completions `length`, Responses incomplete (`max_output_tokens`),
            // Anthropic `max_tokens`, Gemini `MAX_TOKENS`: done as far as it went, and marked.
            "cut at the length limit",
            Script::text(["The first ", "half"]).with_finish(Finish::Length),
            Expected { status: MessageStatus::Success, reason: Some("length"), hint: None, text: "The first half" },
        ),
    ];
    for (format, provider) in &providers {
        for (name, script, expected) in &cases {
            let case = format!("{} / {name}", format.as_str());
            server.push_script(script.clone());
            let topic = topic_with(&f, provider).await;
            let stream = f.send(&topic, name).await;
            let terminal =
                if expected.status == MessageStatus::Success { TerminalStatus::Success } else { TerminalStatus::Error };
            assert_eq!(terminal_status(&stream), terminal, "{case}");
            assert_stored(&case, &f.messages(&topic).await[1], expected);
        }
    }

    // Nothing listening: the request fails before any byte, in every format.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    for format in [ApiFormat::OpenaiChat, ApiFormat::OpenaiResponses, ApiFormat::Anthropic, ApiFormat::Gemini] {
        let provider: Provider = f
            .call(
                "provider_create",
                json!({ "name": "Gone", "format": format, "baseUrl": base_url, "defaultModel": "scripted" }),
            )
            .await;
        let topic = topic_with(&f, &provider).await;
        let stream = f.send(&topic, "anyone there?").await;
        let case = format!("{} / connection refused", format.as_str());
        assert_eq!(terminal_status(&stream), TerminalStatus::Error, "{case}");
        let reply = &f.messages(&topic).await[1];
        assert_stored(&case, reply, &error("network", "check the base url and that the server is running", ""));
        assert!(error_part(reply).unwrap().retryable, "{case}: a network failure may be retried");
    }
}

/// A refusal the provider lifts (429, then an answer) is retried before the first byte and
/// stored as a plain success: no error, no reason, and nothing of the "retrying" notice.
#[tokio::test]
async fn a_refusal_then_an_answer_is_stored_as_a_success_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::new(dir.path().to_path_buf(), "test");
    config.retry = providers::RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        ..providers::RetryPolicy::default()
    };
    let f = Fixture { engine: Engine::open(config).await.unwrap(), _dir: dir };
    let server = mock(None).await;
    for (format, provider) in provider_per_format(&f, &server, "").await {
        server.push_script(Script::refusal(429, None));
        server.push_script(Script::text(["after ", "a retry"]));
        let before = server.requests().len();
        let topic = topic_with(&f, &provider).await;
        let stream = f.send(&topic, "hi").await;
        let case = format.as_str();
        assert_eq!(terminal_status(&stream), TerminalStatus::Success, "{case}");
        let announced = stream.iter().any(|m| {
            matches!(m, StreamMessage::Chunk(e) if matches!(&e.chunk, protocol::UiChunk::Data(d) if d.kind == "data-retrying"))
        });
        assert!(announced, "{case}: the wait was announced while it lasted");
        let reply = &f.messages(&topic).await[1];
        assert_stored(
            case,
            reply,
            &Expected { status: MessageStatus::Success, reason: None, hint: None, text: "after a retry" },
        );
        assert!(
            reply.message.parts.iter().all(|p| !matches!(p, UiPart::Data(d) if d.kind == "data-retrying")),
            "{case}: the notice is not stored"
        );
        assert_eq!(server.requests().len() - before, 2, "{case}: one refusal, one answer");
    }
}
