//! Every wire format against the real testkit server over HTTP: the same script streamed
//! in each format, each format's request shape, every scripted fault classified the same
//! way, and retries only before the first byte.

use std::time::Duration;

use colloquy_providers::{
    ChatMessage, CompletionEvent, CompletionRequest, CompletionStream, ProviderConfig, ProviderError,
    ProviderErrorKind, ProviderHttp, RetryPolicy, StopReason, TokenUsage, list_models_for, model_for,
};
use futures::StreamExt;
use protocol::api::ApiFormat;
use serde_json::{Value, json};
use testkit::{Fault, Framing, MockConfig, MockServer, Script};

const PATIENCE: Duration = Duration::from_secs(10);

type Item = Result<CompletionEvent, ProviderError>;

async fn mock(config: MockConfig) -> MockServer {
    MockServer::start(MockConfig { token_delay: Duration::from_millis(1), ..config }).await.expect("start the mock")
}

/// Gemini is tested on its real `/v1beta` path; the others on `/v1`.
fn base_url(server: &MockServer, format: ApiFormat) -> String {
    match format {
        ApiFormat::Gemini => server.gemini_base_url(),
        _ => server.base_url(),
    }
}

/// Quick retries, so tests stay fast.
fn quick_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        ..RetryPolicy::default()
    }
}

thread_local! {
    /// One client per test thread: building one (TLS setup) costs more than a whole case.
    static HTTP: ProviderHttp = ProviderHttp::new().expect("an HTTP client");
}

fn config(server: &MockServer, format: ApiFormat, api_key: Option<&str>, retry: RetryPolicy) -> ProviderConfig {
    let http = HTTP.with(ProviderHttp::clone);
    ProviderConfig { retry, ..ProviderConfig::new("Mock", base_url(server, format), api_key.map(str::to_owned), http) }
}

fn ask(prompt: &str) -> CompletionRequest {
    CompletionRequest {
        model: "scripted".into(),
        messages: vec![ChatMessage::system("Be helpful."), ChatMessage::user(prompt)],
        temperature: Some(0.2),
        max_tokens: Some(256),
        ..CompletionRequest::default()
    }
}

async fn collect(stream: CompletionStream) -> Vec<Item> {
    tokio::time::timeout(PATIENCE, stream.collect::<Vec<_>>()).await.expect("the stream ends in time")
}

async fn run(server: &MockServer, format: ApiFormat, retry: RetryPolicy) -> Vec<Item> {
    collect(model_for(format, config(server, format, None, retry)).stream(ask("hi"))).await
}

fn text(items: &[Item]) -> String {
    items
        .iter()
        .filter_map(|item| match item {
            Ok(CompletionEvent::TextDelta(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The stream's single error, which must be its last item.
fn final_error(format: ApiFormat, items: &[Item]) -> ProviderError {
    let errors: Vec<_> = items.iter().filter_map(|item| item.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{format}: exactly one error: {items:?}");
    assert!(items.last().is_some_and(Result::is_err), "{format}: the error ends the stream: {items:?}");
    errors[0].clone()
}

fn retries(items: &[Item]) -> Vec<(u32, u64, String)> {
    items
        .iter()
        .filter_map(|item| match item {
            Ok(CompletionEvent::Retrying { attempt, delay_ms, reason }) => Some((*attempt, *delay_ms, reason.clone())),
            _ => None,
        })
        .collect()
}

/// One line per item, as in the transcript snapshots.
fn render(items: &[Item]) -> String {
    items
        .iter()
        .map(|item| match item {
            Ok(event) => format!("{event:?}"),
            Err(err) => format!("Err({} retryable={}: {})", err.kind.as_str(), err.retryable, err.message),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn one_script_streams_the_same_reply_in_every_format() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(
            Script::text(["Hel", "lo ", "wörld 🎉"])
                .with_reasoning(["Let me ", "think."])
                .with_tool_call("weather", r#"{"city":"Paris","days":[1,2,3]}"#)
                .with_usage(12, 5),
        );
        let items = run(&server, format, RetryPolicy::none()).await;
        insta::assert_snapshot!(format!("stream__{format}"), render(&items));

        assert_eq!(text(&items), "Hello wörld 🎉", "{format}");
        let arguments: String = items
            .iter()
            .filter_map(|item| match item {
                Ok(CompletionEvent::ToolCallDelta { index: 0, arguments }) => Some(arguments.as_str()),
                _ => None,
            })
            .collect();
        let arguments: Value = serde_json::from_str(&arguments).unwrap_or_else(|err| panic!("{format}: {err}"));
        assert_eq!(arguments, json!({"city": "Paris", "days": [1, 2, 3]}), "{format}");
        assert_eq!(
            items[items.len() - 2..],
            [
                Ok(CompletionEvent::Usage(TokenUsage::new(12, 5))),
                Ok(CompletionEvent::Finish { reason: StopReason::ToolCalls })
            ],
            "{format}"
        );
    }
}

#[tokio::test]
async fn reasoning_and_cached_token_counts_are_read_in_every_format() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::text(["Hi"]).with_reasoning(["hmm"]).with_usage_details(40, 9, 6, 32));
        let items = run(&server, format, RetryPolicy::none()).await;
        let usage = items.iter().find_map(|item| match item {
            Ok(CompletionEvent::Usage(usage)) => Some(*usage),
            _ => None,
        });
        // Anthropic has no separate count of thinking tokens: they are in the output.
        let reasoning = if format == ApiFormat::Anthropic { 0 } else { 6 };
        let expected =
            TokenUsage { input_tokens: 40, output_tokens: 9, reasoning_tokens: reasoning, cached_tokens: 32 };
        assert_eq!(usage, Some(expected), "{format}");
    }
}

#[tokio::test]
async fn every_legal_way_of_writing_the_stream_reads_the_same_in_every_format() {
    let script = || {
        Script::text(["Grüße ", "aus Zürich ✓", " 🎉"])
            .with_reasoning(["Denke ", "nach…"])
            .with_tool_call("weather", r#"{"city":"Zürich"}"#)
            .with_usage(3, 4)
    };
    let framings = [
        ("crlf", Framing { crlf: true, ..Framing::default() }),
        ("comments", Framing { comments: true, ..Framing::default() }),
        ("multi-line data", Framing { multi_line_data: true, ..Framing::default() }),
        ("unknown events", Framing { unknown_events: true, ..Framing::default() }),
        ("one byte at a time", Framing { chunk_bytes: Some(1), ..Framing::default() }),
        (
            "all at once",
            Framing { crlf: true, comments: true, multi_line_data: true, unknown_events: true, chunk_bytes: Some(3) },
        ),
    ];
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(script());
        let plain = run(&server, format, RetryPolicy::none()).await;
        assert!(plain.iter().all(Result::is_ok), "{format}: {plain:?}");
        // Call ids and signatures are made per reply; compare everything else.
        let normal = |items: Vec<Item>| -> Vec<String> {
            items
                .into_iter()
                .map(|item| match item {
                    Ok(CompletionEvent::ToolCallStart { index, name, .. }) => format!("start {index} {name}"),
                    Ok(CompletionEvent::ReasoningSignature { .. }) => "signature".to_owned(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        let plain = normal(plain);
        for (name, framing) in &framings {
            server.push_script(script().with_framing(framing.clone()));
            let items = run(&server, format, RetryPolicy::none()).await;
            assert_eq!(normal(items), plain, "{format}, {name}");
        }
    }
}

#[tokio::test]
async fn each_format_sends_its_own_request_shape_and_key() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig { api_key: Some("sk-test".into()), ..MockConfig::default() }).await;
        server.push_script(Script::text(["ok"]));
        let model = model_for(format, config(&server, format, Some("sk-test"), RetryPolicy::none()));
        let items = collect(model.stream(ask("hello there"))).await;
        assert_eq!(text(&items), "ok", "{format}: {items:?}");

        let request = &server.requests()[0];
        let headers: serde_json::Map<String, Value> =
            ["authorization", "x-api-key", "x-goog-api-key", "anthropic-version", "accept", "content-type"]
                .into_iter()
                .filter_map(|name| Some((name.to_owned(), json!(request.header(name)?))))
                .collect();
        insta::assert_json_snapshot!(
            format!("request__{format}"),
            json!({ "method": request.method, "path": request.path, "headers": headers, "body": request.body })
        );
    }
}

#[tokio::test]
async fn a_wrong_or_missing_key_says_to_check_the_key_in_every_format() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig { api_key: Some("sk-right".into()), ..MockConfig::default() }).await;
        for key in [None, Some("sk-wrong")] {
            let model = model_for(format, config(&server, format, key, quick_retries(3)));
            let items = collect(model.stream(ask("hi"))).await;
            let err = final_error(format, &items);
            assert_eq!(
                (err.kind, err.retryable),
                (ProviderErrorKind::Auth, false),
                "{format} {key:?}: {}",
                err.message
            );
            assert_eq!(err.message, "authentication failed — check the API key for Mock");
        }
        assert_eq!(server.requests().len(), 2, "{format}: auth failures are not retried");
    }
}

/// `(script, expected kind, expected text before the error)` for each scripted fault.
fn faults() -> Vec<(&'static str, Script, ProviderErrorKind, &'static str)> {
    let html = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
    vec![
        ("429", Script::refusal(429, None), ProviderErrorKind::RateLimit, ""),
        ("529", Script::refusal(529, None), ProviderErrorKind::Overloaded, ""),
        ("503", Script::refusal(503, None), ProviderErrorKind::Overloaded, ""),
        ("500", Script::refusal(500, None), ProviderErrorKind::Server, ""),
        ("404", Script::refusal(404, None), ProviderErrorKind::InvalidRequest, ""),
        ("html 502", Script::status(502, html, "text/html"), ProviderErrorKind::BadResponse, ""),
        (
            "malformed frame",
            Script::text(["kept ", "also kept", "lost"]).with_fault(Fault::MalformedFrame { after: 2 }),
            ProviderErrorKind::BadResponse,
            "kept also kept",
        ),
        (
            "reset",
            Script::text(["one ", "two ", "three"]).with_fault(Fault::Reset { after: 2 }),
            ProviderErrorKind::Network,
            "one two ",
        ),
        (
            "error frame",
            Script::text(["partial", "lost"])
                .with_fault(Fault::ErrorFrame { after: 1, message: "upstream model crashed".into() }),
            ProviderErrorKind::Server,
            "partial",
        ),
    ]
}

#[tokio::test]
async fn every_scripted_fault_is_classified_the_same_in_every_format() {
    for format in ApiFormat::ALL {
        for (name, script, kind, kept) in faults() {
            let server = mock(MockConfig::default()).await;
            server.push_script(script);
            let items = run(&server, format, RetryPolicy::none()).await;
            let err = final_error(format, &items);
            assert_eq!(err.kind, kind, "{format} {name}: {}", err.message);
            assert_eq!(text(&items), kept, "{format} {name}: the text before the fault is kept");
            assert!(err.message.contains(" — "), "{format} {name}: says what to do: {}", err.message);
            if name == "error frame" {
                assert!(err.message.contains("upstream model crashed"), "{format}: {}", err.message);
            }
        }
    }
}

#[tokio::test]
async fn error_events_after_200_carry_their_type_in_every_format() {
    let cases = [
        (ApiFormat::OpenaiChat, "rate_limit_exceeded", ProviderErrorKind::RateLimit),
        (ApiFormat::OpenaiResponses, "context_length_exceeded", ProviderErrorKind::ContextTooLong),
        (ApiFormat::Anthropic, "overloaded_error", ProviderErrorKind::Overloaded),
        (ApiFormat::Gemini, "RESOURCE_EXHAUSTED", ProviderErrorKind::RateLimit),
    ];
    for (format, code, kind) in cases {
        let server = mock(MockConfig::default()).await;
        server.push_script(
            Script::text(["a", "b"])
                .with_fault(Fault::ErrorFrame { after: 1, message: "scripted".into() })
                .with_error_code(code),
        );
        server.push_script(Script::text(["never sent"]));
        let items = run(&server, format, quick_retries(3)).await;
        assert_eq!(final_error(format, &items).kind, kind, "{format}");
        assert!(retries(&items).is_empty() && server.requests().len() == 1, "{format}: no retry after the first byte");
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_with_the_clients_timeout_in_every_format() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::text(["a", "b"]).with_fault(Fault::Stall { after: 1 }));
        let http = ProviderHttp::from_builder(reqwest::Client::builder().timeout(Duration::from_millis(250))).unwrap();
        let config = ProviderConfig { http, ..config(&server, format, None, quick_retries(3)) };
        let items = collect(model_for(format, config).stream(ask("hi"))).await;
        assert_eq!(text(&items), "a", "{format}");
        assert_eq!(final_error(format, &items).kind, ProviderErrorKind::Timeout, "{format}");
    }
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request_upstream_in_every_format() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::text(["first", "second"]).with_fault(Fault::Stall { after: 1 }));
        let mut stream = model_for(format, config(&server, format, None, RetryPolicy::none())).stream(ask("hi"));
        let first = tokio::time::timeout(PATIENCE, stream.next()).await.expect("the first chunk in time");
        assert_eq!(first.and_then(Result::ok), Some(CompletionEvent::TextDelta("first".into())), "{format}");
        assert_eq!(server.open_streams(), 1);
        drop(stream);
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while server.open_streams() != 0 {
            assert!(tokio::time::Instant::now() < deadline, "{format}: the server never saw the client leave");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[tokio::test]
async fn a_refusal_then_success_is_retried_with_backoff_in_every_format() {
    for format in ApiFormat::ALL {
        for status in [429, 529] {
            let server = mock(MockConfig::default()).await;
            server.push_script(Script::refusal(status, None));
            server.push_script(Script::text(["after ", "retry"]));
            let items = run(&server, format, quick_retries(3)).await;
            let reason = if status == 429 { "rate limited (HTTP 429)" } else { "overloaded (HTTP 529)" };
            assert_eq!(retries(&items), [(2, 1, reason.to_owned())], "{format} {status}");
            assert!(matches!(items[0], Ok(CompletionEvent::Retrying { .. })), "retrying comes first");
            assert_eq!(text(&items), "after retry", "{format} {status}");
            assert_eq!(items.last(), Some(&Ok(CompletionEvent::Finish { reason: StopReason::Stop })));
            assert_eq!(server.requests().len(), 2, "{format} {status}: two attempts");
        }
    }
}

/// On tokio's paused clock, so the 7 s wait costs no real time.
#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured() {
    for (format, status) in [(ApiFormat::Anthropic, 529), (ApiFormat::OpenaiChat, 429)] {
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::refusal(status, Some("7")));
        server.push_script(Script::text(["ok"]));
        let started = tokio::time::Instant::now();
        // No patience timer here: with the clock paused, tokio would fire it while the
        // (real) socket is busy.
        let model = model_for(format, config(&server, format, None, quick_retries(3)));
        let items: Vec<Item> = model.stream(ask("hi")).collect().await;
        assert_eq!(retries(&items).iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 7000)], "{format}");
        assert!(started.elapsed() >= Duration::from_secs(7), "{format}: waited as asked");
        assert_eq!(text(&items), "ok");
    }
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_goes_to_the_user() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::refusal(429, Some("3600")));
    let items = run(&server, ApiFormat::Gemini, quick_retries(3)).await;
    let err = final_error(ApiFormat::Gemini, &items);
    assert_eq!(err.kind, ProviderErrorKind::RateLimit);
    assert!(err.message.ends_with("(it asks to wait 3600 s)"), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retries_stop_after_the_last_attempt() {
    let server = mock(MockConfig::default()).await;
    for _ in 0..3 {
        server.push_script(Script::refusal(503, None));
    }
    server.push_script(Script::text(["too late"]));
    let items = run(&server, ApiFormat::OpenaiResponses, quick_retries(3)).await;
    assert_eq!(retries(&items).iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(), [(2, 1), (3, 2)], "doubling backoff");
    let err = final_error(ApiFormat::OpenaiResponses, &items);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Overloaded, true));
    assert!(err.message.ends_with("(gave up after 3 attempts)"), "{}", err.message);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn what_waiting_cannot_fix_is_not_retried() {
    let quota = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    let bad_request =
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 99999 > 64000"}}"#;
    for (format, script) in [
        (ApiFormat::OpenaiChat, Script::status(429, quota, "application/json")),
        (ApiFormat::Anthropic, Script::status(400, bad_request, "application/json")),
    ] {
        let server = mock(MockConfig::default()).await;
        server.push_script(script);
        server.push_script(Script::text(["never"]));
        let items = run(&server, format, quick_retries(3)).await;
        assert!(final_error(format, &items).message.contains(" — "));
        assert_eq!((retries(&items).len(), server.requests().len()), (0, 1), "{format}");
    }
}

#[tokio::test]
async fn nothing_is_retried_after_the_first_byte() {
    for format in ApiFormat::ALL {
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::text(["one ", "two"]).with_fault(Fault::Reset { after: 1 }));
        server.push_script(Script::text(["a second answer"]));
        let items = run(&server, format, quick_retries(4)).await;
        assert_eq!(text(&items), "one ", "{format}");
        assert_eq!(final_error(format, &items).kind, ProviderErrorKind::Network, "{format}");
        assert_eq!((retries(&items).len(), server.requests().len()), (0, 1), "{format}");
    }
}

#[tokio::test]
async fn stopping_while_waiting_to_retry_sends_nothing_more() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::refusal(429, Some("30")));
    server.push_script(Script::text(["never"]));
    let mut stream = model_for(ApiFormat::Anthropic, config(&server, ApiFormat::Anthropic, None, quick_retries(3)))
        .stream(ask("hi"));
    let first = tokio::time::timeout(PATIENCE, stream.next()).await.expect("in time");
    assert!(matches!(first, Some(Ok(CompletionEvent::Retrying { attempt: 2, delay_ms: 30_000, .. }))), "{first:?}");
    drop(stream);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn lists_models_in_every_format() {
    let models = vec!["zeta".to_owned(), "alpha".to_owned(), "zeta".to_owned()];
    for format in ApiFormat::ALL {
        let server =
            mock(MockConfig { api_key: Some("sk-list".into()), models: models.clone(), ..MockConfig::default() }).await;
        let http = HTTP.with(ProviderHttp::clone);
        let base_url = format!("{}/", base_url(&server, format));
        assert_eq!(
            list_models_for(format, &http, &base_url, Some("sk-list")).await,
            Ok(vec!["alpha".to_owned(), "zeta".to_owned()]),
            "{format}"
        );
        let path = &server.requests()[0].path;
        assert!(
            path == "/v1/models" || path.starts_with("/v1/models?") || path.starts_with("/v1beta/models?"),
            "{path}"
        );

        let err = list_models_for(format, &http, &base_url, Some("sk-wrong")).await.unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::Auth, "{format}: {}", err.message);
    }
}

#[tokio::test]
async fn gemini_is_also_served_under_v1_and_answers_without_alt_sse() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["via ", "v1"]));
    let config = ProviderConfig::new("Mock", server.base_url(), None, HTTP.with(ProviderHttp::clone));
    let items = collect(model_for(ApiFormat::Gemini, config).stream(ask("hi"))).await;
    assert_eq!(text(&items), "via v1");
    assert_eq!(server.requests()[0].path, "/v1/models/scripted:streamGenerateContent?alt=sse");
}

/// Images, PDFs and text files attached to a message reach each format's endpoint in that
/// format's own shape.
#[tokio::test]
async fn attachments_travel_in_each_formats_own_shape() {
    use colloquy_providers::{ChatRole, ContentPart, Media, MediaSource};
    let file = |media_type: &str, data: &str, filename: &str| {
        ContentPart::Media(Media {
            media_type: media_type.into(),
            source: MediaSource::Base64(data.into()),
            filename: Some(filename.into()),
        })
    };
    let request = CompletionRequest {
        model: "scripted".into(),
        messages: vec![ChatMessage::new(
            ChatRole::User,
            vec![
                ContentPart::text("What do these say?"),
                file("image/png", "iVBORw0K", "chart.png"),
                file("application/pdf", "JVBERi0x", "report.pdf"),
                file("text/plain", "aGVsbG8=", "notes.txt"),
            ],
        )],
        ..CompletionRequest::default()
    };
    let notes = "<file name=\"notes.txt\">\nhello\n</file>";
    for format in ApiFormat::ALL {
        let (content, expected) = match format {
            ApiFormat::OpenaiChat => (
                "/messages/0/content",
                json!([
                    {"type": "text", "text": "What do these say?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                    {"type": "file", "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}},
                    {"type": "text", "text": notes}
                ]),
            ),
            ApiFormat::OpenaiResponses => (
                "/input/0/content",
                json!([
                    {"type": "input_text", "text": "What do these say?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"},
                    {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
                    {"type": "input_text", "text": notes}
                ]),
            ),
            ApiFormat::Anthropic => (
                "/messages/0/content",
                json!([
                    {"type": "text", "text": "What do these say?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
                    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}},
                    {"type": "text", "text": notes}
                ]),
            ),
            ApiFormat::Gemini => (
                "/contents/0/parts",
                json!([
                    {"text": "What do these say?"},
                    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}},
                    {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
                    {"text": notes}
                ]),
            ),
        };
        let server = mock(MockConfig::default()).await;
        server.push_script(Script::text(["seen"]));
        let model = model_for(format, config(&server, format, None, RetryPolicy::none()));
        let items = collect(model.stream(request.clone())).await;
        assert_eq!(text(&items), "seen", "{format}: {items:?}");
        let body = &server.requests()[0].body;
        assert_eq!(body.pointer(content), Some(&expected), "{format}: {body}");
    }
}
