//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set, turn spans are exported over OTLP/HTTP.
//! (Its own test binary: telemetry installs a process-global subscriber.)

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn spans_are_exported_when_an_endpoint_is_configured() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = vec![0u8; 64 * 1024];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or_default().to_owned();
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let _ = tx.send(head);
        }
    });
    // SAFETY: set before any other thread of this test binary reads the environment.
    unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")) };
    let telemetry = colloquy_engine::telemetry::init("colloquy-test");
    tracing::info_span!("turn", topic_id = "t").in_scope(|| tracing::info!("hello"));
    drop(telemetry); // flushes
    let first = rx.recv_timeout(Duration::from_secs(20)).expect("the exporter posted to the endpoint");
    assert!(first.starts_with("POST /v1/traces"), "unexpected request line: {first}");
}
