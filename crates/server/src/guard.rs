//! What a browser may do with our answers: which `Host` names are served (DNS
//! rebinding), and the headers that keep pages from framing the app or loading from
//! other origins.

use std::net::IpAddr;
use std::str::FromStr;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use protocol::ApiError;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::routes::error_response;

/// The page's Content Security Policy, sent with every answer. Images come only from
/// the app itself or from `data:`/`blob:` URLs the app made (a remote image in a reply
/// is fetched by the backend on the user's click), so a reply cannot make the page
/// contact another host; requests go only to this server; nothing may frame the app.
/// The desktop app's CSP in `tauri.conf.json` has the same directives, with Tauri's
/// IPC origins added to `connect-src` (a test checks they agree).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self'; \
     object-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'none'; frame-ancestors 'none'";

/// Which `Host` headers the server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowedHosts {
    /// Bound to loopback: only `localhost` (and `*.localhost`) and loopback addresses,
    /// so a page on another name that resolves to 127.0.0.1 (DNS rebinding) gets nothing.
    Loopback,
    /// Bound to another address on purpose: any name the network uses for it.
    Any,
}

impl AllowedHosts {
    /// The policy for a server bound to `ip`.
    pub fn for_bind_address(ip: IpAddr) -> Self {
        if ip.is_loopback() { Self::Loopback } else { Self::Any }
    }

    /// Whether a request with this `Host` header (name or address, optional port) is
    /// answered.
    pub fn allows(self, host: Option<&str>) -> bool {
        match self {
            Self::Any => true,
            Self::Loopback => {
                host.and_then(|h| Authority::from_str(h).ok()).is_some_and(|a| is_loopback_name(a.host()))
            }
        }
    }
}

fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(&host);
    IpAddr::from_str(literal).is_ok_and(|ip| ip.is_loopback())
}

/// Wraps every route: requests for a `Host` the server does not answer are refused, and
/// every answer carries the security headers.
pub(crate) fn protect(router: Router, hosts: AllowedHosts) -> Router {
    let headers = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    let router = router.layer(middleware::from_fn_with_state(hosts, check_host));
    headers.into_iter().fold(router, |router, (name, value): (HeaderName, &'static str)| {
        router.layer(SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value)))
    })
}

async fn check_host(State(hosts): State<AllowedHosts>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
    if hosts.allows(host) {
        next.run(request).await
    } else {
        error_response(ApiError::bad_request(
            "host",
            format!(
                "this server answers only to localhost (it was asked for {}); use http://localhost:<port>/ or \
                 http://127.0.0.1:<port>/, or bind another address with --host",
                host.unwrap_or("no Host header")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_are_told_from_the_rest() {
        let hosts = AllowedHosts::for_bind_address(IpAddr::from([127, 0, 0, 1]));
        for ok in
            ["localhost", "localhost:8787", "LOCALHOST.", "app.localhost:1", "127.0.0.1:8787", "127.1.2.3", "[::1]:80"]
        {
            assert!(hosts.allows(Some(ok)), "{ok}");
        }
        for refused in
            ["evil.example", "evil.example:8787", "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.1", ""]
        {
            assert!(!hosts.allows(Some(refused)), "{refused}");
        }
        assert!(!hosts.allows(None));
        let open = AllowedHosts::for_bind_address(IpAddr::from([0, 0, 0, 0]));
        assert!(open.allows(Some("my-laptop.lan:8787")));
    }
}
