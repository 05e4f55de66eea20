//! What a provider's server can send that Colloquy must not follow or keep: a redirect to
//! another origin (the API key would go along), and answers that never end.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use colloquy_providers::sse::FRAME_LIMIT;
use colloquy_providers::{
    ChatMessage, CompletionEvent, CompletionRequest, MODEL_LIST_LIMIT, ProviderConfig, ProviderError,
    ProviderErrorKind, ProviderHttp, WHOLE_ANSWER_LIMIT, list_models_for, model_for,
};
use futures::StreamExt;
use protocol::api::ApiFormat;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PATIENCE: Duration = Duration::from_secs(30);
const KEY: &str = "sk-test-key-0123456789";

/// How a test server answers one request.
enum Answer {
    /// A complete response, as bytes.
    Whole(String),
    /// These headers, then `head_of_body` followed by `x`s until the client hangs up.
    Endless { headers: &'static str, head_of_body: &'static str },
}

/// A server on 127.0.0.1 answering each request with `answer(path)`; it records the head
/// of every request it gets (method, path and headers).
async fn serve(answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (seen, answer) = (seen.clone(), answer.clone());
            tokio::spawn(async move { reply(socket, &seen, answer.as_ref()).await });
        }
    });
    (base, heads)
}

async fn reply(mut socket: TcpStream, seen: &Mutex<Vec<String>>, answer: &(dyn Fn(&str) -> Answer + Send + Sync)) {
    let Some(head) = read_request(&mut socket).await else { return };
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    seen.lock().unwrap().push(head);
    match answer(&path) {
        Answer::Whole(response) => {
            let _ = socket.write_all(response.as_bytes()).await;
        }
        Answer::Endless { headers, head_of_body } => {
            let start = format!("HTTP/1.1 200 OK\r\n{headers}\r\nConnection: close\r\n\r\n{head_of_body}");
            if socket.write_all(start.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![b'x'; 64 * 1024];
            // At most 64 MiB more: the client hangs up long before.
            for _ in 0..1024 {
                if socket.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Reads one request (head and `Content-Length` body); gives its head.
async fn read_request(socket: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 8192];
    loop {
        let n = socket.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let length = head
                .lines()
                .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = socket.read(&mut piece).await.ok()?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&piece[..n]);
            }
            return Some(head);
        }
    }
}

fn redirect(location: String) -> Answer {
    Answer::Whole(format!(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    ))
}

fn request() -> CompletionRequest {
    CompletionRequest {
        model: "a-model".into(),
        messages: vec![ChatMessage::user("hi")],
        ..CompletionRequest::default()
    }
}

async fn first_error(format: ApiFormat, base_url: &str) -> ProviderError {
    let config = ProviderConfig::new("Mock", base_url, Some(KEY.to_owned()), ProviderHttp::new().unwrap());
    let mut stream = model_for(format, config).stream(request());
    loop {
        match tokio::time::timeout(PATIENCE, stream.next()).await.expect("the stream answers in time") {
            Some(Ok(CompletionEvent::Retrying { .. })) => continue,
            Some(Ok(event)) => panic!("{format}: expected an error, got {event:?}"),
            Some(Err(err)) => return err,
            None => panic!("{format}: the stream ended without an error"),
        }
    }
}

#[tokio::test]
async fn audit_06_no_format_follows_a_redirect_to_another_origin_with_the_key() {
    let (elsewhere, reached) = serve(|_| Answer::Whole("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".into())).await;
    let target = elsewhere.clone();
    let (base, _) = serve(move |path| redirect(format!("{target}{path}"))).await;
    for format in ApiFormat::ALL {
        let err = first_error(format, &format!("{base}/v1")).await;
        assert_eq!(err.kind, ProviderErrorKind::InvalidRequest, "{format}: {err:?}");
        assert!(!err.retryable, "{format}");
        assert!(
            err.message.contains(&format!("redirected the request from {base} to {elsewhere}"))
                && err.message.contains("API key is not sent there"),
            "{format}: {}",
            err.message
        );
        let http = ProviderHttp::new().unwrap();
        let err = list_models_for(format, &http, &format!("{base}/v1"), Some(KEY)).await.unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::InvalidRequest, "{format}: {err:?}");
        assert!(err.message.contains(&elsewhere), "{format}: {}", err.message);
    }
    assert_eq!(reached.lock().unwrap().len(), 0, "nothing, so no key, reached the other origin");
}

#[tokio::test]
async fn audit_06_a_redirect_within_the_origin_is_followed() {
    let list = r#"{"object":"list","data":[{"id":"moved-model"}]}"#;
    let (base, heads) = serve(move |path| {
        if path.starts_with("/moved/") {
            Answer::Whole(format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{list}",
                list.len()
            ))
        } else {
            redirect(format!("/moved{path}"))
        }
    })
    .await;
    let http = ProviderHttp::new().unwrap();
    let models = list_models_for(ApiFormat::OpenaiChat, &http, &format!("{base}/v1"), Some(KEY)).await;
    assert_eq!(models, Ok(vec!["moved-model".to_owned()]));
    assert!(heads.lock().unwrap()[1].to_ascii_lowercase().contains(&format!("authorization: bearer {KEY}")));
}

fn assert_too_large(err: &ProviderError, what: &str, limit: usize) {
    assert_eq!(err.kind, ProviderErrorKind::BadResponse, "{err:?}");
    let expected = format!("Mock sent {what} larger than {} MiB", limit / (1024 * 1024));
    assert!(err.message.starts_with(&expected), "{}", err.message);
}

#[tokio::test]
async fn audit_14_an_endless_answer_fails_at_its_limit() {
    // A whole JSON answer (a server that does not stream).
    let (base, _) = serve(|_| Answer::Endless { headers: "Content-Type: application/json", head_of_body: "" }).await;
    let err = first_error(ApiFormat::OpenaiChat, &format!("{base}/v1")).await;
    assert_too_large(&err, "an answer", WHOLE_ANSWER_LIMIT);

    // An event stream whose line never ends.
    let (base, _) =
        serve(|_| Answer::Endless { headers: "Content-Type: text/event-stream", head_of_body: "data: " }).await;
    for format in ApiFormat::ALL {
        let err = first_error(format, &format!("{base}/v1")).await;
        assert_too_large(&err, "a stream event", FRAME_LIMIT);
    }
}

#[tokio::test]
async fn audit_14_an_endless_model_list_fails_at_its_limit() {
    let (base, _) = serve(|_| Answer::Endless { headers: "Content-Type: application/json", head_of_body: "" }).await;
    let http = ProviderHttp::new().unwrap();
    let err = list_models_for(ApiFormat::Anthropic, &http, &format!("{base}/v1"), None).await.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::BadResponse, "{err:?}");
    let expected = format!("larger than {} MiB", MODEL_LIST_LIMIT / (1024 * 1024));
    assert!(err.message.contains("a model list") && err.message.contains(&expected), "{}", err.message);
}
