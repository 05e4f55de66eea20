//! `fetch_url`: an HTTP GET that returns text, cut at a size cap.
//!
//! The tool is read-only, so by default it runs without asking — but a model can be talked
//! into fetching what only this computer can reach (a router's admin page, a local service,
//! a cloud metadata address) and repeating it somewhere else. So a destination on this
//! computer or the local network ([`is_private`]) needs the user's say:
//! - before the call, [`Tool::caution`] resolves the host; a private address makes the call
//!   ask (unless a rule of the user's decides it);
//! - every call runs on a client whose DNS resolver refuses private addresses, and follows
//!   redirects itself, checking each hop, so neither a redirect nor a name that resolves
//!   differently the second time gets through. Such a refusal names the refused URL and
//!   tells the model to fetch it itself, which asks the user;
//! - a call the user allowed (on its card, or by a rule of theirs) is excepted for the host
//!   it names, and only that host: a redirect from there to another private place is
//!   refused like any other. An "Always" answer saves a rule on that host
//!   ([`Tool::always_conditions`]; rules see the URL's host as `host`, [`Tool::rule_input`]);
//! - the client never uses a proxy (`HTTP_PROXY` and the like are ignored): a proxy
//!   resolves names itself, out of the resolver's sight, so it would carry any request to
//!   a private address unchecked.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use protocol::tool::{MatchOp, RuleCondition, ToolAnnotations, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext, ToolDefinition, ToolError};

const DEFAULT_MAX_BYTES: usize = 200_000;
const MAX_BYTES: usize = 2_000_000;
const MAX_REDIRECTS: usize = 10;
/// How long deciding a call may wait for DNS.
const CAUTION_LOOKUP: Duration = Duration::from_secs(5);

/// Which addresses count as private: this computer or the local network.
type Classifier = fn(IpAddr) -> bool;

pub struct FetchUrl {
    definition: ToolDefinition,
    private: Classifier,
    /// The client for calls only the default allowed (built on first use).
    guarded: Arc<OnceLock<reqwest::Client>>,
}

impl FetchUrl {
    pub fn new() -> Self {
        // A tool catalog is built per turn; its `fetch_url`s share one guarded client (a
        // client sets up a TLS context and a connection pool).
        static GUARDED: OnceLock<Arc<OnceLock<reqwest::Client>>> = OnceLock::new();
        Self { guarded: GUARDED.get_or_init(Arc::default).clone(), ..Self::with_classifier(is_private) }
    }

    fn with_classifier(private: Classifier) -> Self {
        Self {
            definition: ToolDefinition {
                name: "fetch_url".into(),
                title: None,
                description: "Fetch a web page or file over HTTP(S) with GET and return its text (HTML is \
                              returned as is). At most `max_bytes` bytes are read (default 200000). \
                              Addresses on the user's computer or local network need their approval."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "An http:// or https:// URL"},
                        "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_BYTES}
                    },
                    "required": ["url"],
                    "additionalProperties": false
                }),
                annotations: ToolAnnotations {
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: true,
                },
            },
            private,
            guarded: Arc::default(),
        }
    }

    /// The client that never reaches a private address, except at the host named
    /// `excepted` (the user allowed a call there).
    fn guarded_client(&self, excepted: Option<&url::Host<String>>) -> Result<reqwest::Client, ToolError> {
        let private = self.private;
        match excepted {
            // A name: its own client, whose resolver lets that one name through. A call the
            // user allowed is rare enough that it may set up its own connection.
            Some(url::Host::Domain(name)) => guarded_client(PublicOnly { private, excepted: Some(name.clone()) }),
            // An address, or nothing excepted: the shared client (the resolver never sees an
            // address written in the URL; `fetch_guarded` checks those itself).
            _ => {
                if let Some(client) = self.guarded.get() {
                    return Ok(client.clone());
                }
                let client = guarded_client(PublicOnly { private, excepted: None })?;
                Ok(self.guarded.get_or_init(|| client).clone())
            }
        }
    }
}

/// A client resolving through `resolver`, following no redirect and using no proxy.
fn guarded_client(resolver: PublicOnly) -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(resolver))
        // Redirects are followed by hand (`fetch_guarded`), each hop checked and named.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, out of the resolver's sight.
        .no_proxy()
        .connect_timeout(Duration::from_secs(15))
        .user_agent(concat!("Colloquy/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ToolError::Failed(format!("cannot start the HTTP client: {e}")))
}

impl FetchUrl {
    /// GETs `url` with the guarded client, following redirects hop by hop: a hop to a
    /// private address (written as one, or a name that resolves to one) is refused, and
    /// the refusal names that hop's URL so the model can ask for it. Hops to the host
    /// `excepted` (one the user allowed) may reach a private address.
    pub(crate) async fn fetch_guarded(
        &self,
        url: &url::Url,
        excepted: Option<&url::Host<String>>,
    ) -> Result<reqwest::Response, ToolError> {
        let client = self.guarded_client(excepted)?;
        let mut current = url.clone();
        for hop in 0..=MAX_REDIRECTS {
            let refused = |ip| {
                ToolError::Refused(PrivateDestination { url: current.to_string(), ip, redirected: hop > 0 }.to_string())
            };
            let at_excepted = excepted.is_some_and(|host| current.host().is_some_and(|h| h.to_owned() == *host));
            if let Some(ip) = literal_ip(&current).filter(|ip| (self.private)(*ip) && !at_excepted) {
                return Err(refused(ip));
            }
            let response = get(&client, &current).await.map_err(|e| match refused_ip(&e) {
                Some(ip) => refused(ip),
                None => ToolError::Failed(format!("could not fetch {current}: {e}")),
            })?;
            let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
            let next = match location {
                Some(location) if response.status().is_redirection() => current
                    .join(location)
                    .map_err(|e| ToolError::Failed(format!("{current} redirected to an invalid URL: {e}")))?,
                _ => return Ok(response),
            };
            parse_url(next.as_str())
                .map_err(|_| ToolError::Failed(format!("{current} redirected to {next}, which cannot be fetched")))?;
            current = next;
        }
        Err(ToolError::Failed(format!("{url}: more than {MAX_REDIRECTS} redirects")))
    }
}

async fn get(client: &reqwest::Client, url: &url::Url) -> reqwest::Result<reqwest::Response> {
    client.get(url.clone()).timeout(Duration::from_secs(30)).send().await
}

/// A destination the guarded client refused; the message goes to the model.
#[derive(Debug)]
struct PrivateDestination {
    url: String,
    ip: IpAddr,
    redirected: bool,
}

impl std::fmt::Display for PrivateDestination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (url, ip) = (&self.url, self.ip);
        if self.redirected {
            write!(f, "the page redirected to {url}, which leads to {ip}")?;
        } else {
            write!(f, "{url} leads to {ip}")?;
        }
        write!(
            f,
            ", an address on the user's computer or local network; fetch_url reaches those only with \
             the user's approval. Call fetch_url with that URL itself so the user is asked."
        )
    }
}

impl std::error::Error for PrivateDestination {}

/// A resolver that fails for a name with any private address among its addresses, but
/// the name `excepted`.
struct PublicOnly {
    private: Classifier,
    excepted: Option<String>,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let private = self.private;
        let host = name.as_str().to_owned();
        let excepted = self.excepted.as_deref() == Some(host.as_str());
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(addr) = addrs.iter().find(|addr| !excepted && private(addr.ip())) {
                let error = PrivateDestination { url: host, ip: addr.ip(), redirected: false };
                return Err(Box::new(error) as Box<dyn std::error::Error + Send + Sync>);
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The host of `url` when it is written as an address.
fn literal_ip(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

/// Whether `ip` is on this computer or a local network (loopback, private, link-local,
/// unique-local, shared/CGNAT, unspecified, broadcast, multicast, reserved, documentation
/// or set aside for special use), IPv4 inside IPv6 included (mapped, compatible, 6to4,
/// NAT64 by the IPv4 it carries, local-use NAT64 and Teredo always).
pub(crate) fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => private_v4(ip),
        IpAddr::V6(ip) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return private_v4(v4);
            }
            let segments = ip.segments();
            // IPv4-compatible `::a.b.c.d` (deprecated; `::` and `::1` are in it too): no
            // public site is reached that way, and a system may route it to the IPv4 address.
            if segments[..6] == [0; 6] {
                return true;
            }
            // 6to4 (2002::/16) carries an IPv4 address, and a site's own 6to4 prefix is its
            // local network; the public relays are retired (RFC 7526), so none is lost.
            if segments[0] == 0x2002 {
                return true;
            }
            // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [.., a, b] = segments;
                return private_v4(Ipv4Addr::from((u32::from(a) << 16) | u32::from(b)));
            }
            // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) translates only inside a site's own
            // network; Teredo (2001::/32) tunnels to an IPv4 host named inside the address
            // (its client part obfuscated) and no public site is reached that way.
            if segments[..3] == [0x64, 0xff9b, 1] || segments[..2] == [0x2001, 0] {
                return true;
            }
            // Documentation 2001:db8::/32 (RFC 3849): never a real host, so a name resolving
            // there is a trick or a lab network.
            if segments[..2] == [0x2001, 0xdb8] {
                return true;
            }
            ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_multicast()
                || (segments[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (segments[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (segments[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
        }
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || a == 0 // "this network", 0.0.0.0 included
        || a >= 240 // reserved 240/4, the broadcast address included
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT) 100.64/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18/15, often a lab network
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments 192.0.0/24
        // documentation TEST-NET-1/2/3 (RFC 5737): never a real host, so a lab network
        || (a == 192 && b == 0 && c == 2)
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
}

/// The first private address `url` leads to, looked up now; `None` when it is public or
/// cannot be looked up (the fetch will then fail or be checked again as it runs).
async fn private_address(url: &url::Url, private: Classifier) -> Option<IpAddr> {
    if let Some(ip) = literal_ip(url) {
        return private(ip).then_some(ip);
    }
    let host = url.host_str()?.to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let lookup = tokio::time::timeout(CAUTION_LOOKUP, tokio::net::lookup_host((host.as_str(), port))).await;
    let addrs: Vec<SocketAddr> = lookup.ok()?.ok()?.collect();
    addrs.into_iter().map(|addr| addr.ip()).find(|ip| private(*ip))
}

/// The private address a guarded request was refused for, found anywhere in its causes.
fn refused_ip(error: &reqwest::Error) -> Option<IpAddr> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(private) = current.downcast_ref::<PrivateDestination>() {
            return Some(private.ip);
        }
        cause = current.source();
    }
    None
}

fn parse_url(text: &str) -> Result<url::Url, ToolError> {
    let url = url::Url::parse(text.trim()).map_err(|e| ToolError::InvalidInput(format!("not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::InvalidInput(format!("only http and https URLs can be fetched, not {}:", url.scheme())));
    }
    Ok(url)
}

/// The host `input`'s URL names, as rules see it (`host` in [`Tool::rule_input`]).
fn host_of(input: &Value) -> Option<String> {
    let url = parse_url(input.get("url")?.as_str()?).ok()?;
    url.host_str().map(str::to_owned)
}

#[derive(Deserialize)]
struct FetchInput {
    url: String,
    max_bytes: Option<usize>,
}

#[async_trait]
impl Tool for FetchUrl {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The arguments with the URL's host added as `host` (as the URL parser reads it:
    /// lowercased, `user@` and port left out), so a rule can name a host exactly.
    fn rule_input(&self, input: &Value, _ctx: &ToolContext) -> Value {
        let mut input = input.clone();
        if let (Some(host), Some(object)) = (host_of(&input), input.as_object_mut()) {
            object.insert("host".into(), Value::String(host));
        }
        input
    }

    /// "Always" covers the host asked for (a URL without a host: that URL only).
    fn always_conditions(&self, input: &Value) -> Vec<RuleCondition> {
        let condition = match host_of(input) {
            Some(host) => RuleCondition { pointer: "/host".into(), op: MatchOp::Equals, value: Value::String(host) },
            None => RuleCondition {
                pointer: "/url".into(),
                op: MatchOp::Equals,
                value: input.get("url").cloned().unwrap_or(Value::Null),
            },
        };
        vec![condition]
    }

    async fn caution(&self, input: &Value, _ctx: &ToolContext) -> Option<String> {
        let url = parse_url(input.get("url")?.as_str()?).ok()?;
        let ip = private_address(&url, self.private).await?;
        Some(format!("{} leads to {ip}, an address on this computer or the local network", url.host_str()?))
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: FetchInput = serde_json::from_value(input).map_err(|e| ToolError::InvalidInput(e.to_string()))?;
        let url = parse_url(&input.url)?;
        let cap = input.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).min(MAX_BYTES);
        // The user allowed this very call (or a rule of theirs did): its host may be a
        // private address. No other step of it may reach one.
        let excepted = if ctx.allowed_by_user { url.host().map(|host| host.to_owned()) } else { None };
        let response = self.fetch_guarded(&url, excepted.as_ref()).await?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        let mut truncated = false;
        while let Some(chunk) = stream.next().await {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            let chunk = chunk.map_err(|e| ToolError::Failed(format!("reading {url} failed: {e}")))?;
            let room = cap - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        if body.iter().take(8192).any(|b| *b == 0) {
            return Err(ToolError::Failed(format!(
                "{url} returned binary content ({content_type}); only text can be read"
            )));
        }
        let mut text = format!("HTTP {} {}\n\n", status.as_u16(), content_type);
        text.push_str(&String::from_utf8_lossy(&body));
        if truncated {
            text.push_str(&format!("\n[cut at {cap} bytes]"));
        }
        let mut output = ToolOutput::text(text);
        output.is_error = !status.is_success();
        Ok(output)
    }

    /// A fetched page is bulky and rarely needed for long.
    fn context_rounds(&self) -> Option<u32> {
        Some(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn allowed() -> ToolContext {
        ToolContext { allowed_by_user: true, ..ToolContext::detached(None) }
    }

    #[tokio::test]
    async fn fetches_text_with_a_cap_and_refuses_other_schemes() {
        let server = testkit::MockServer::start(testkit::MockConfig::default()).await.unwrap();
        let url = format!("{}/models", server.base_url());
        let out = FetchUrl::new().execute(json!({"url": url, "max_bytes": 20}), &allowed()).await.unwrap();
        let text = out.text_content();
        assert!(text.starts_with("HTTP 200 application/json"), "{text}");
        assert!(text.ends_with("[cut at 20 bytes]"), "{text}");
        let err = FetchUrl::new().execute(json!({"url": "file:///etc/passwd"}), &allowed()).await.unwrap_err();
        assert!(matches!(err, ToolError::InvalidInput(_)));
        server.shutdown().await;
    }

    #[tokio::test]
    async fn this_computer_needs_the_users_say() {
        let server = testkit::MockServer::start(testkit::MockConfig::default()).await.unwrap();
        let fetch = FetchUrl::new();
        let ctx = ToolContext::detached(None);
        let port = url::Url::parse(&server.base_url()).unwrap().port().unwrap();
        for url in [format!("{}/models", server.base_url()), format!("http://localhost:{port}/v1/models")] {
            let input = json!({ "url": url });
            let caution = fetch.caution(&input, &ctx).await;
            assert!(
                caution.as_deref().is_some_and(|c| c.contains("127.0.0.1") || c.contains("::1")),
                "{url}: {caution:?}"
            );
            // Run on the default's say alone, it is refused (after DNS, for a name).
            let err = fetch.execute(input, &ctx).await.unwrap_err();
            let ToolError::Refused(message) = err else { panic!("{url}: {err:?}") };
            assert!(
                message.contains("user's computer or local network") && message.contains("Call fetch_url"),
                "{message}"
            );
        }
        let public = json!({ "url": "http://93.184.216.34/" });
        assert_eq!(fetch.caution(&public, &ctx).await, None, "a public address is not a concern");
        server.shutdown().await;
    }

    /// An HTTP server on `ip` answering every request with a redirect to `location(port)`;
    /// gives the URL of its `/start`.
    async fn redirecting(ip: &str, location: impl Fn(u16) -> String + Send + 'static) -> String {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    location(address.port())
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        format!("http://{address}/start")
    }

    async fn redirecting_to(location: &'static str) -> String {
        redirecting("127.0.0.1", |_| location.to_owned()).await
    }

    #[tokio::test]
    async fn a_redirect_to_a_private_address_is_refused() {
        // Here 127.0.0.1 stands for a public site (the test cannot leave the machine).
        let fetch = FetchUrl::with_classifier(|ip| !ip.is_loopback() && is_private(ip));
        let start = redirecting_to("http://10.255.255.1/admin").await;
        let err = fetch.execute(json!({ "url": start }), &ToolContext::detached(None)).await.unwrap_err();
        let ToolError::Refused(message) = err else { panic!("{err:?}") };
        assert!(
            message.starts_with("the page redirected to http://10.255.255.1/admin, which leads to 10.255.255.1"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_redirect_to_a_name_with_a_private_address_says_where_it_led() {
        // Here 127.0.0.2 stands for a public site and 127.0.0.1 (`localhost`) for a private one.
        let fetch = FetchUrl::with_classifier(|ip| ip == IpAddr::from([127, 0, 0, 1]));
        let start = redirecting("127.0.0.2", |port| format!("http://localhost:{port}/admin")).await;
        let port = url::Url::parse(&start).unwrap().port().unwrap();
        let err = fetch.execute(json!({ "url": start }), &ToolContext::detached(None)).await.unwrap_err();
        let ToolError::Refused(message) = err else { panic!("{err:?}") };
        let expected = format!("the page redirected to http://localhost:{port}/admin, which leads to 127.0.0.1");
        assert!(message.starts_with(&expected), "{message}");

        // Hops to public places are followed, up to a limit.
        let fetch = FetchUrl::with_classifier(|_| false);
        let start = redirecting("127.0.0.1", |port| format!("http://127.0.0.1:{port}/again")).await;
        let err = fetch.execute(json!({ "url": start }), &ToolContext::detached(None)).await.unwrap_err();
        let ToolError::Failed(message) = err else { panic!("{err:?}") };
        assert!(message.contains(&format!("more than {MAX_REDIRECTS} redirects")), "{message}");
    }

    #[tokio::test]
    async fn audit_05_an_allowed_fetch_reaches_the_allowed_host_and_no_other_private_one() {
        // Here all of 127/8 stands for private addresses: 127.0.0.2 is the host the user
        // allowed, `localhost` (127.0.0.1) another one on their network.
        let fetch = FetchUrl::with_classifier(|ip| ip.is_loopback());
        let start = redirecting("127.0.0.2", |port| format!("http://localhost:{port}/admin")).await;
        let port = url::Url::parse(&start).unwrap().port().unwrap();
        let err = fetch.execute(json!({ "url": start }), &allowed()).await.unwrap_err();
        let ToolError::Refused(message) = err else { panic!("{err:?}") };
        let expected = format!("the page redirected to http://localhost:{port}/admin, which leads to 127.0.0.1");
        assert!(message.starts_with(&expected), "{message}");

        // The allowed host itself is reached, named or written as an address.
        let server = testkit::MockServer::start(testkit::MockConfig::default()).await.unwrap();
        let port = url::Url::parse(&server.base_url()).unwrap().port().unwrap();
        for url in [format!("{}/models", server.base_url()), format!("http://localhost:{port}/v1/models")] {
            let out = fetch.execute(json!({ "url": url }), &allowed()).await.unwrap();
            assert!(out.text_content().starts_with("HTTP 200"), "{url}: {}", out.text_content());
        }
        server.shutdown().await;
    }

    #[test]
    fn audit_05_always_covers_the_host_the_call_names() {
        let fetch = FetchUrl::new();
        let ctx = ToolContext::detached(None);
        let input = json!({ "url": "http://user@Router.LAN:8080/admin?x=1" });
        assert_eq!(fetch.rule_input(&input, &ctx)["host"], "router.lan");
        let conditions = fetch.always_conditions(&input);
        assert_eq!(
            conditions,
            vec![RuleCondition { pointer: "/host".into(), op: MatchOp::Equals, value: json!("router.lan") }]
        );
        // The rule it makes opens that host, not another one nor one hidden in the URL.
        let rule = protocol::tool::PolicyRule {
            id: "r".into(),
            tool: "fetch_url".into(),
            conditions,
            decision: protocol::tool::PolicyDecision::Allow,
            scope: protocol::tool::RuleScope::Global,
            expires_at: None,
            created_at: "2026-01-01T00:00:00Z".into(),
        };
        let policy = crate::policy::Policy::new(&[rule]);
        let topic = protocol::TopicId::from("t".to_owned());
        let decide = |url: &str| {
            let input = fetch.rule_input(&json!({ "url": url }), &ctx);
            policy.decide(
                "fetch_url",
                &input,
                &topic,
                protocol::tool::PolicyDecision::Ask,
                time::OffsetDateTime::now_utc(),
            )
        };
        assert_eq!(decide("https://router.lan/other").decision, protocol::tool::PolicyDecision::Allow);
        for other in ["http://192.168.1.1/", "http://router.lan@192.168.1.1/", "http://router.lan.evil.example/"] {
            assert_eq!(decide(other).decision, protocol::tool::PolicyDecision::Ask, "{other}");
        }
    }

    #[test]
    fn audit_05_special_use_ranges_and_ipv4_inside_ipv6_are_private() {
        for ip in [
            "::192.168.0.1",
            "::8.8.8.8",
            "2002:c0a8:0101::1",
            "2002:5db8:d822::1",
            "240.0.0.1",
            "250.1.2.3",
            "198.18.0.1",
            "198.19.255.254",
            "192.0.0.8",
            // documentation ranges
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.254",
            "2001:db8::1",
            "2001:db8:ffff::1",
            // Teredo, whatever IPv4 it names
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            // NAT64: well-known prefix carrying a private IPv4, and the local-use prefix
            "64:ff9b::c0a8:1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::808:808",
            "64:ff9b:1:ffff::1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} is private");
        }
        for ip in [
            "198.17.255.255",
            "198.20.0.1",
            "192.0.1.1",
            "2001:db9::1",
            "192.0.3.1",
            "198.51.101.1",
            "203.0.114.1",
            "2001:4860:4860::8888",
            // NAT64 well-known prefix carrying a public IPv4 (8.8.8.8) reaches that public host
            "64:ff9b::808:808",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[test]
    fn private_addresses_are_told_apart_from_public_ones() {
        let private = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:192.168.0.1",
            "64:ff9b::a00:1",
        ];
        for ip in private {
            assert!(is_private(ip.parse().unwrap()), "{ip} is private");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
    }
}
