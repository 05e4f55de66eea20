//! `fetch_url` uses no proxy, even one the environment names: a proxy resolves names
//! itself, out of the private-address guard's sight. (Its own test binary: it sets
//! process-wide environment variables.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use colloquy_tools::{ToolContext, builtin};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn audit_05_fetch_url_ignores_a_proxy_from_the_environment() {
    // A "proxy" that answers everything itself and counts what it was asked.
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let proxied = Arc::new(AtomicUsize::new(0));
    let count = proxied.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = proxy.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let body = "answered by the proxy";
            let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = socket.write_all(reply.as_bytes()).await;
        }
    });
    for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        // SAFETY: set before anything in this test binary builds an HTTP client or reads
        // the environment on another thread.
        unsafe { std::env::set_var(name, &proxy_url) };
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var("NO_PROXY") };
    unsafe { std::env::remove_var("no_proxy") };

    let server = testkit::MockServer::start(testkit::MockConfig::default()).await.unwrap();
    let fetch = builtin::all().into_iter().find(|tool| tool.definition().name == "fetch_url").unwrap();
    // Allowed by the user, so this computer may be reached: directly, not through the proxy.
    let ctx = ToolContext { allowed_by_user: true, ..ToolContext::detached(None) };
    let out = fetch.execute(json!({ "url": format!("{}/models", server.base_url()) }), &ctx).await.unwrap();
    let text = out.text_content();
    assert!(text.starts_with("HTTP 200 application/json"), "{text}");
    assert_eq!(proxied.load(Ordering::SeqCst), 0, "nothing went through the proxy");
    server.shutdown().await;
}
