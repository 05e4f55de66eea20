//! `image_fetch`: a remote image in a reply, fetched by the backend on the user's click.
//!
//! The page's CSP lets it show images only from the app or from `data:`/`blob:` URLs,
//! so a reply cannot make it contact another host (a URL can carry data out). When the
//! user asks to see one, the backend fetches it with `fetch_url`'s guard (never a
//! private address, every redirect hop checked) and answers with a `data:` URL.

use base64::Engine as _;
use protocol::ApiError;
use protocol::api::{FetchedImage, ImageFetchRequest};
use tools::ToolError;

/// The largest image shown.
const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// Raster formats only: an SVG can carry scripts and references of its own.
const IMAGE_TYPES: &[&str] =
    &["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/x-icon"];

pub(crate) async fn fetch_image(request: ImageFetchRequest) -> Result<FetchedImage, ApiError> {
    let url =
        url::Url::parse(request.url.trim()).map_err(|e| ApiError::bad_request("url", format!("not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ApiError::bad_request("url", "only http:// and https:// images can be loaded"));
    }
    let host = url.host_str().unwrap_or_default().to_owned();
    let mut response = tools::builtin::get_public(&url).await.map_err(|err| match err {
        ToolError::Refused(why) => ApiError::bad_request("url", why),
        err => ApiError { retryable: true, ..ApiError::bad_request("url", err.to_string()) },
    })?;
    if !response.status().is_success() {
        return Err(ApiError::bad_request("url", format!("{host} answered {}", response.status())));
    }
    let media_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !IMAGE_TYPES.contains(&media_type.as_str()) {
        let what = if media_type.is_empty() { "no content type".to_owned() } else { media_type };
        return Err(ApiError::bad_request("url", format!("{host} sent {what}, not an image that can be shown")));
    }
    let too_large = || ApiError::bad_request("url", format!("the image is larger than {} MB", MAX_IMAGE_BYTES >> 20));
    if response.content_length().is_some_and(|length| length > MAX_IMAGE_BYTES as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| ApiError {
        retryable: true,
        ..ApiError::bad_request("url", format!("could not read the image: {e}"))
    })? {
        if bytes.len() + chunk.len() > MAX_IMAGE_BYTES {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(FetchedImage { data_url: format!("data:{media_type};base64,{data}"), media_type })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> ImageFetchRequest {
        ImageFetchRequest { url: url.to_owned() }
    }

    #[tokio::test]
    async fn audit_03_image_fetch_takes_only_web_urls_and_never_a_private_address() {
        let err = fetch_image(request("file:///etc/passwd")).await.unwrap_err();
        assert_eq!(err.field.as_deref(), Some("url"));
        let err = fetch_image(request("not a url")).await.unwrap_err();
        assert_eq!(err.field.as_deref(), Some("url"));
        // A reply cannot have the backend reach this computer or the local network
        // either: the guard of `fetch_url` applies.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/p.png?d=secret", listener.local_addr().unwrap());
        let err = fetch_image(request(&url)).await.unwrap_err();
        assert_eq!(err.field.as_deref(), Some("url"));
        assert!(err.message.contains("127.0.0.1"), "{}", err.message);
    }
}
