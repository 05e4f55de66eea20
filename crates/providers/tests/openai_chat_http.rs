//! The OpenAI Chat Completions adapter against the real testkit server over HTTP: what a
//! user would see for good streams, and for every scripted way a provider fails.

use std::time::Duration;

use colloquy_providers::{
    ChatMessage, CompletionEvent, CompletionRequest, CompletionStream, LanguageModel, OpenAiChat, OpenAiChatConfig,
    ProviderError, ProviderErrorKind, ProviderHttp, StopReason, TokenUsage, list_models,
};
use futures::StreamExt;
use serde_json::json;
use testkit::{Fault, MockConfig, MockServer, Script, default_reply_text};

const PATIENCE: Duration = Duration::from_secs(10);

async fn mock(config: MockConfig) -> MockServer {
    MockServer::start(MockConfig { token_delay: Duration::from_millis(1), ..config }).await.expect("start the mock")
}

fn model(server: &MockServer, api_key: Option<&str>) -> OpenAiChat {
    model_with(server.base_url(), api_key, ProviderHttp::new().unwrap())
}

fn model_with(base_url: String, api_key: Option<&str>, http: ProviderHttp) -> OpenAiChat {
    OpenAiChat::new(OpenAiChatConfig {
        provider_name: "Mock".into(),
        base_url,
        api_key: api_key.map(str::to_owned),
        http,
    })
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

/// Every item of the stream, up to its end.
async fn collect(stream: CompletionStream) -> Vec<Result<CompletionEvent, ProviderError>> {
    tokio::time::timeout(PATIENCE, stream.collect::<Vec<_>>()).await.expect("the stream ends in time")
}

fn text(items: &[Result<CompletionEvent, ProviderError>]) -> String {
    items
        .iter()
        .filter_map(|item| match item {
            Ok(CompletionEvent::TextDelta(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The stream's single error, which must be its last item.
fn final_error(items: &[Result<CompletionEvent, ProviderError>]) -> ProviderError {
    let errors: Vec<_> = items.iter().filter_map(|item| item.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "exactly one error: {items:?}");
    assert!(items.last().is_some_and(Result::is_err), "the error ends the stream: {items:?}");
    errors[0].clone()
}

#[tokio::test]
async fn streams_text_then_usage_then_finish() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["Hel", "lo", " wörld 🎉"]).with_usage(12, 3));
    let items = collect(model(&server, None).stream(ask("hi"))).await;
    assert_eq!(
        items,
        vec![
            Ok(CompletionEvent::TextDelta("Hel".into())),
            Ok(CompletionEvent::TextDelta("lo".into())),
            Ok(CompletionEvent::TextDelta(" wörld 🎉".into())),
            Ok(CompletionEvent::Usage(TokenUsage::new(12, 3))),
            Ok(CompletionEvent::Finish { reason: StopReason::Stop }),
        ]
    );
}

#[tokio::test]
async fn sends_an_openai_streaming_request_with_the_key() {
    let server = mock(MockConfig { api_key: Some("sk-test".into()), ..MockConfig::default() }).await;
    server.push_script(Script::text(["ok"]));
    let items = collect(model(&server, Some("sk-test")).stream(ask("hello there"))).await;
    assert_eq!(text(&items), "ok");

    let request = &server.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(
        request.body,
        json!({
            "model": "scripted",
            "messages": [{"role": "system", "content": "Be helpful."}, {"role": "user", "content": "hello there"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.2,
            "max_tokens": 256
        })
    );
}

#[tokio::test]
async fn the_demo_reply_arrives_whole_and_in_order() {
    let server = mock(MockConfig::default()).await;
    let prompt = "How do I read a file line by line in Rust?";
    let items = collect(model(&server, None).stream(ask(prompt))).await;
    assert_eq!(text(&items), default_reply_text(prompt));
    assert!(items.len() > 80, "streamed token by token");
    assert!(matches!(&items[items.len() - 2], Ok(CompletionEvent::Usage(_))));
    assert_eq!(items.last(), Some(&Ok(CompletionEvent::Finish { reason: StopReason::Stop })));
}

#[tokio::test]
async fn reasoning_streams_before_the_answer() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["42"]).with_reasoning(["Let me ", "think."]));
    let items = collect(model(&server, None).stream(ask("meaning of life?"))).await;
    assert_eq!(
        items[..3],
        [
            Ok(CompletionEvent::ReasoningDelta("Let me ".into())),
            Ok(CompletionEvent::ReasoningDelta("think.".into())),
            Ok(CompletionEvent::TextDelta("42".into())),
        ]
    );
}

#[tokio::test]
async fn a_wrong_key_says_to_check_the_key() {
    let server = mock(MockConfig { api_key: Some("sk-right".into()), ..MockConfig::default() }).await;
    for key in [None, Some("sk-wrong")] {
        let items = collect(model(&server, key).stream(ask("hi"))).await;
        assert_eq!(items.len(), 1, "{items:?}");
        let err = final_error(&items);
        assert_eq!((err.kind, err.status, err.retryable), (ProviderErrorKind::Auth, Some(401), false));
        assert_eq!(err.message, "authentication failed — check the API key for Mock");
    }
}

#[tokio::test]
async fn an_html_error_page_is_summarised_by_its_title() {
    let server = mock(MockConfig::default()).await;
    let page = "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Oops</h1><p>nginx</p></body></html>";
    server.push_script(Script::status(500, page, "text/html; charset=utf-8"));
    let err = final_error(&collect(model(&server, None).stream(ask("hi"))).await);
    assert_eq!((err.kind, err.status, err.retryable), (ProviderErrorKind::BadResponse, Some(500), true));
    assert!(err.message.contains("HTTP 500"), "{}", err.message);
    assert!(err.message.contains("“500 Internal Server Error”"), "{}", err.message);
    assert!(!err.message.contains("<h1>"), "{}", err.message);
}

#[tokio::test]
async fn json_error_bodies_are_classified_and_quoted() {
    let server = mock(MockConfig::default()).await;
    let rate =
        r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#;
    server.push_script(Script::status(429, rate, "application/json"));
    server.push_script(Script::status(503, r#"{"error":{"message":"Engine is overloaded"}}"#, "application/json"));
    server.push_script(Script::status(
        404,
        r#"{"error":{"message":"The model `nope` does not exist"}}"#,
        "application/json",
    ));

    let model = model(&server, None);
    let err = final_error(&collect(model.stream(ask("hi"))).await);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::RateLimit, true));
    assert!(err.message.contains("Rate limit reached for requests"), "{}", err.message);

    let err = final_error(&collect(model.stream(ask("hi"))).await);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Overloaded, true));

    let err = final_error(&collect(model.stream(ask("hi"))).await);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::InvalidRequest, false));
    assert!(err.message.contains("The model `nope` does not exist"), "{}", err.message);
}

#[tokio::test]
async fn a_malformed_frame_keeps_the_text_before_it_and_ends_the_stream() {
    let server = mock(MockConfig::default()).await;
    server
        .push_script(Script::text(["kept ", "also kept", "never seen"]).with_fault(Fault::MalformedFrame { after: 2 }));
    let items = collect(model(&server, None).stream(ask("hi"))).await;
    assert_eq!(text(&items), "kept also kept");
    let err = final_error(&items);
    assert_eq!(err.kind, ProviderErrorKind::BadResponse);
    assert!(err.message.starts_with("the provider sent a malformed stream frame: "), "{}", err.message);
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_a_retryable_network_error() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["one ", "two ", "three"]).with_fault(Fault::Reset { after: 2 }));
    let items = collect(model(&server, None).stream(ask("hi"))).await;
    assert_eq!(text(&items), "one two ");
    let err = final_error(&items);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Network, true));
    assert!(err.message.starts_with("connection to Mock lost mid-stream: "), "{}", err.message);
}

#[tokio::test]
async fn an_error_frame_mid_stream_carries_the_providers_message() {
    let server = mock(MockConfig::default()).await;
    server.push_script(
        Script::text(["partial", "lost"])
            .with_fault(Fault::ErrorFrame { after: 1, message: "upstream model crashed".into() }),
    );
    let items = collect(model(&server, None).stream(ask("hi"))).await;
    assert_eq!(text(&items), "partial");
    let err = final_error(&items);
    assert_eq!((err.kind, err.status, err.retryable), (ProviderErrorKind::Server, None, true));
    assert!(err.message.contains("upstream model crashed"), "{}", err.message);
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request_upstream() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["first", "second"]).with_fault(Fault::Stall { after: 1 }));
    let mut stream = model(&server, None).stream(ask("hi"));
    let first = tokio::time::timeout(PATIENCE, stream.next()).await.expect("the first chunk in time");
    assert_eq!(first.and_then(Result::ok), Some(CompletionEvent::TextDelta("first".into())));
    assert_eq!(server.open_streams(), 1);
    drop(stream);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while server.open_streams() != 0 {
        assert!(tokio::time::Instant::now() < deadline, "the server never saw the client leave");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_with_the_clients_timeout() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::text(["a", "b"]).with_fault(Fault::Stall { after: 1 }));
    let http = ProviderHttp::from_builder(reqwest::Client::builder().timeout(Duration::from_millis(300))).unwrap();
    let items = collect(model_with(server.base_url(), None, http).stream(ask("hi"))).await;
    assert_eq!(text(&items), "a");
    let err = final_error(&items);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Timeout, true), "{}", err.message);
}

#[tokio::test]
async fn an_unreachable_server_says_to_check_the_url() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let items = collect(
        model_with(format!("http://127.0.0.1:{port}/v1"), Some("sk-secret"), ProviderHttp::new().unwrap())
            .stream(ask("hi")),
    )
    .await;
    let err = final_error(&items);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::Network, true));
    assert!(err.message.starts_with("could not connect to Mock: "), "{}", err.message);
    assert!(err.message.contains("check the base URL"), "{}", err.message);
    assert!(!err.message.contains("sk-secret"));
}

#[tokio::test]
async fn lists_models_sorted_and_deduplicated() {
    let models = vec!["zeta".to_owned(), "alpha".to_owned(), "zeta".to_owned()];
    let server = mock(MockConfig { api_key: Some("sk-list".into()), models, ..MockConfig::default() }).await;
    let http = ProviderHttp::new().unwrap();
    let base_url = format!("{}/", server.base_url());

    assert_eq!(list_models(&http, &base_url, Some("sk-list")).await, Ok(vec!["alpha".to_owned(), "zeta".to_owned()]));
    assert_eq!(server.requests()[0].path, "/v1/models");

    let err = list_models(&http, &base_url, Some("sk-wrong")).await.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::Auth);
    assert_eq!(err.message, "authentication failed — check the API key for 127.0.0.1");

    let err = list_models(&http, "localhost:1234/v1", None).await.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::InvalidRequest);
    assert_eq!(err.message, "base URL must start with http:// or https://");
}

#[tokio::test]
async fn a_base_url_without_v1_gets_a_hint() {
    let server = mock(MockConfig::default()).await;
    let root = server.base_url().trim_end_matches("/v1").to_owned();
    let err = list_models(&ProviderHttp::new().unwrap(), &root, None).await.unwrap_err();
    assert_eq!((err.kind, err.status), (ProviderErrorKind::InvalidRequest, Some(404)));
    assert!(err.message.contains("check the base URL"), "{}", err.message);
}

#[tokio::test]
async fn servers_that_ignore_stream_true_or_mislabel_the_stream_still_work() {
    let server = mock(MockConfig::default()).await;
    let whole = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"length"}],
                    "usage":{"prompt_tokens":1,"completion_tokens":1}}"#;
    server.push_script(Script::status(200, whole, "application/json"));
    let mislabelled =
        "data: {\"choices\":[{\"delta\":{\"content\":\"sse\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    server.push_script(Script::status(200, mislabelled, "application/json"));
    let model = model(&server, None);

    let items = collect(model.stream(ask("hi"))).await;
    assert_eq!(text(&items), "whole");
    assert_eq!(items.last(), Some(&Ok(CompletionEvent::Finish { reason: StopReason::Length })));

    let items = collect(model.stream(ask("hi"))).await;
    assert_eq!(
        items,
        vec![Ok(CompletionEvent::TextDelta("sse".into())), Ok(CompletionEvent::Finish { reason: StopReason::Stop })]
    );
}

#[tokio::test]
async fn a_web_page_instead_of_an_api_points_at_the_base_url() {
    let server = mock(MockConfig::default()).await;
    server.push_script(Script::status(
        200,
        "<html><head><title>Open WebUI</title></head><body></body></html>",
        "text/html",
    ));
    let err = final_error(&collect(model(&server, None).stream(ask("hi"))).await);
    assert_eq!((err.kind, err.retryable), (ProviderErrorKind::BadResponse, false));
    assert!(err.message.contains("“Open WebUI”") && err.message.contains("/v1"), "{}", err.message);
}
