//! The UI's built files under `/assets`, each compressed once.
//!
//! Vite names every file there after a hash of its content, so a file never changes under
//! its name: its brotli or gzip form can be made on the first request that asks for it
//! and kept for the life of the server. Compressing per response (what the layer in
//! `routes.rs` does for everything else) cost 130–190 ms for the 880 KB main script on
//! every cold load in a debug build, and more when a page asks for six files at once.
//!
//! Only what is worth it is kept: text types between [`MIN_BYTES`] and [`MAX_FILE_BYTES`],
//! up to [`MAX_TOTAL_BYTES`] compressed in all; anything else (a range request, an image,
//! a file too large, a full cache) goes on to the per-response layer as before.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// Smaller files are not worth a compressed copy (the per-response layer skips them too).
const MIN_BYTES: u64 = 1024;
/// A larger file is compressed per response instead of being held in memory.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The compressed copies kept in all; beyond it, files are compressed per response.
const MAX_TOTAL_BYTES: usize = 96 * 1024 * 1024;
/// Brotli's quality 5 and window 22: the per-response layer's level, which compresses the
/// main script in tens of milliseconds; higher qualities take seconds for a few percent.
const BROTLI_QUALITY: u32 = 5;
const BROTLI_WINDOW: u32 = 22;

/// Vite's output under `assets/`, served with a year of caching and compressed once. A
/// missing asset is a 404, not `index.html`.
pub fn router(dir: &Path) -> Router {
    let cache = Arc::new(Cache::default());
    Router::new()
        .fallback_service(ServeDir::new(dir))
        .layer(middleware::from_fn_with_state(cache, compressed_once))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Encoding {
    Brotli,
    Gzip,
}

impl Encoding {
    fn header(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        })
    }

    fn compress(self, raw: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Encoding::Brotli => {
                let mut out = Vec::with_capacity(raw.len() / 3);
                let mut writer = brotli::CompressorWriter::new(&mut out, 64 * 1024, BROTLI_QUALITY, BROTLI_WINDOW);
                writer.write_all(raw)?;
                writer.flush()?;
                drop(writer);
                Ok(out)
            }
            Encoding::Gzip => {
                let mut writer =
                    flate2::write::GzEncoder::new(Vec::with_capacity(raw.len() / 3), flate2::Compression::default());
                writer.write_all(raw)?;
                writer.finish()
            }
        }
    }
}

/// A file's compressed form and the headers that describe it.
struct Compressed {
    body: Bytes,
    content_type: HeaderValue,
    last_modified: Option<HeaderValue>,
}

/// One slot per (path, encoding). `None`: not made yet (or the last try met a passing
/// failure); `Some(None)`: not worth keeping (see the module doc); `Some(Some(_))`: kept.
/// A request that finds the slot being filled waits for it rather than compressing the
/// same file again.
type Slot = Arc<tokio::sync::Mutex<Option<Option<Arc<Compressed>>>>>;

#[derive(Default)]
struct Cache {
    slots: Mutex<HashMap<(String, Encoding), Slot>>,
    kept_bytes: Mutex<usize>,
}

impl Cache {
    fn slot(&self, path: &str, encoding: Encoding) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slots.entry((path.to_owned(), encoding)).or_default().clone()
    }

    fn forget(&self, path: &str, encoding: Encoding) {
        let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slots.remove(&(path.to_owned(), encoding));
    }

    /// Takes `bytes` from the budget; false when it is spent.
    fn reserve(&self, bytes: usize) -> bool {
        let mut kept = self.kept_bytes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if *kept + bytes > MAX_TOTAL_BYTES {
            return false;
        }
        *kept += bytes;
        true
    }
}

async fn compressed_once(State(cache): State<Arc<Cache>>, mut request: Request, next: Next) -> Response {
    let Some(encoding) = accepted(request.headers()) else { return next.run(request).await };
    if request.method() != Method::GET || request.headers().contains_key(header::RANGE) {
        return next.run(request).await;
    }
    let path = request.uri().path().to_owned();
    let slot = cache.slot(&path, encoding);
    let mut state = slot.lock().await;
    match &*state {
        Some(Some(compressed)) => return respond(compressed, encoding),
        Some(None) => {
            drop(state);
            return next.run(request).await;
        }
        None => {}
    }
    // The file as it is: its compressed form is made here, not by the layer around, which
    // still compresses the answer per response when the file is not kept.
    request.headers_mut().insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    match compress(&cache, next.run(request).await, encoding).await {
        Ok(compressed) => {
            let compressed = Arc::new(compressed);
            *state = Some(Some(compressed.clone()));
            respond(&compressed, encoding)
        }
        Err(NotKept { response, for_good }) => {
            if for_good {
                *state = Some(None);
            } else {
                // A missing file (or a passing failure) leaves no slot behind: made-up
                // paths must not grow the map.
                drop(state);
                cache.forget(&path, encoding);
            }
            response
        }
    }
}

/// A response that was not kept, and whether the same file never will be (its type or
/// size, or the budget) rather than this once (a 404, a 304, a failed read).
struct NotKept {
    response: Response,
    for_good: bool,
}

/// The response's body compressed, or the response itself (rebuilt when its body was
/// read) when it is not a file worth keeping.
async fn compress(cache: &Cache, response: Response, encoding: Encoding) -> Result<Compressed, NotKept> {
    if response.status() != StatusCode::OK {
        return Err(NotKept { response, for_good: false });
    }
    let length =
        response.headers().get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
    let worth_it = length.is_some_and(|length| (MIN_BYTES..=MAX_FILE_BYTES).contains(&length))
        && content_type.as_ref().is_some_and(compressible);
    let Some(content_type) = content_type.filter(|_| worth_it) else {
        return Err(NotKept { response, for_good: true });
    };
    let (parts, body) = response.into_parts();
    let raw = match axum::body::to_bytes(body, MAX_FILE_BYTES as usize).await {
        Ok(raw) => raw,
        Err(error) => {
            tracing::warn!(%error, "could not read a UI asset");
            let response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
            return Err(NotKept { response, for_good: false });
        }
    };
    let input = raw.clone();
    let compressed = tokio::task::spawn_blocking(move || encoding.compress(&input)).await;
    let last_modified = parts.headers.get(header::LAST_MODIFIED).cloned();
    let body = match compressed {
        Ok(Ok(body)) if cache.reserve(body.len()) => Bytes::from(body),
        outcome => {
            let for_good = matches!(outcome, Ok(Ok(_)));
            return Err(NotKept { response: Response::from_parts(parts, Body::from(raw)), for_good });
        }
    };
    Ok(Compressed { body, content_type, last_modified })
}

fn respond(compressed: &Compressed, encoding: Encoding) -> Response {
    let mut response = Response::new(Body::from(compressed.body.clone()));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, compressed.content_type.clone());
    headers.insert(header::CONTENT_ENCODING, encoding.header());
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(compressed.body.len()));
    if let Some(last_modified) = &compressed.last_modified {
        headers.insert(header::LAST_MODIFIED, last_modified.clone());
    }
    response
}

/// Text the browser reads: scripts, styles, markup, JSON, SVG, source maps, WebAssembly.
fn compressible(content_type: &HeaderValue) -> bool {
    let Ok(value) = content_type.to_str() else { return false };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || matches!(
            essence.as_str(),
            "application/javascript"
                | "application/json"
                | "application/wasm"
                | "image/svg+xml"
                | "application/xml"
                | "application/manifest+json"
        )
}

/// The encoding to answer with: brotli if the client takes it, else gzip, else none
/// (`Accept-Encoding` tokens with `q=0` are refused ones).
fn accepted(headers: &HeaderMap) -> Option<Encoding> {
    let mut best = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut pieces = item.split(';');
            let name = pieces.next().unwrap_or_default().trim().to_ascii_lowercase();
            let refused = pieces.any(|param| {
                let param = param.trim();
                param.strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            if refused {
                continue;
            }
            match name.as_str() {
                "br" => return Some(Encoding::Brotli),
                "gzip" => best = Some(Encoding::Gzip),
                _ => {}
            }
        }
    }
    best
}
