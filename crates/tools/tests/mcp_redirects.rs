//! An MCP server over streamable HTTP gets its configured headers (often credentials) on
//! every request: a redirect to another origin must not take them along.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use colloquy_tools::mcp::{CatalogSink, HubOptions, McpEndpoint, McpHttp, McpHub, McpServerConfig, McpToolSpec};
use protocol::mcp::McpState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SECRET: &str = "mcp-secret-0123456789";

struct NoSink;

#[async_trait]
impl CatalogSink for NoSink {
    async fn save(&self, _server_id: &str, _tools: &[McpToolSpec]) {}
}

/// A server on 127.0.0.1 answering every request with `response`; it records the head of
/// every request it gets (method, path and headers).
async fn serve(response: impl Fn(&str) -> String + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let response = Arc::new(response);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (seen, response) = (seen.clone(), response.clone());
            tokio::spawn(async move {
                let Some(head) = read_request(&mut socket).await else { return };
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                seen.lock().unwrap().push(head);
                let _ = socket.write_all(response(&path).as_bytes()).await;
            });
        }
    });
    (base, heads)
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
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = socket.read(&mut piece).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&piece[..n]);
            }
            return Some(head);
        }
    }
}

#[tokio::test]
async fn audit_06_mcp_over_http_does_not_follow_a_redirect_to_another_origin_with_its_headers() {
    // Another port on 127.0.0.1 is another origin.
    let (elsewhere, seen_elsewhere) =
        serve(|_| "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned())
            .await;
    let target = elsewhere.clone();
    let (server, seen_by_server) = serve(move |path| {
        format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    })
    .await;

    let dir = tempfile::tempdir().unwrap();
    let hub = McpHub::new(HubOptions {
        processes_file: dir.path().join("mcp-processes.json"),
        connect_timeout: Duration::from_secs(20),
        ping_interval: Duration::from_secs(30),
        http: McpHttp::new().unwrap(),
        sink: Arc::new(NoSink),
    });
    let headers = BTreeMap::from([
        ("Authorization".to_owned(), format!("Bearer {SECRET}")),
        ("X-Api-Key".to_owned(), SECRET.to_owned()),
    ]);
    let config = McpServerConfig {
        id: "r".into(),
        name: "Redirects".into(),
        namespace: "redirects".into(),
        endpoint: McpEndpoint::Http { url: format!("{server}/mcp"), headers },
        timeout: Duration::from_secs(20),
        trust_read_only: false,
        sampling_allowed: false,
        blocked: None,
    };
    let mut changes = hub.changes();
    hub.upsert(config, true, Vec::new());

    // Read again at each change the hub announces; the timeout is only a safety net.
    let mut status = None;
    let failed = async {
        loop {
            status = hub.status("r");
            if status.as_ref().is_some_and(|s| s.state == McpState::Error) {
                break;
            }
            changes.changed().await.expect("the hub is alive");
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(180), failed).await;
    let status = status.unwrap();
    assert_eq!(status.state, McpState::Error, "{status:?}");
    let message = status.message.unwrap_or_default();
    assert!(message.contains(&server) && message.contains(&elsewhere), "names both origins: {message}");
    assert!(message.contains("headers were not sent"), "{message}");

    let by_server = seen_by_server.lock().unwrap().clone();
    assert!(by_server.iter().any(|head| head.contains(SECRET)), "the server itself got its headers: {by_server:?}");
    let elsewhere_heads = seen_elsewhere.lock().unwrap().clone();
    assert!(
        elsewhere_heads.iter().all(|head| !head.contains(SECRET)),
        "the other origin got a secret: {elsewhere_heads:?}"
    );
    assert!(elsewhere_heads.is_empty(), "the redirect was not followed at all: {elsewhere_heads:?}");
    hub.shutdown().await;
}
