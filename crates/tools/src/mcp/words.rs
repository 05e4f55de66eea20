//! MCP failures in words: what the SDK's errors say, without the Rust type names its
//! wrappers print (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`),
//! which tell a user nothing.

use rmcp::ServiceError;
use rmcp::transport::DynamicTransportError;

/// `error` and its causes, outermost first (see `client::causes`), each in words and each
/// once, joined with `: `.
pub(crate) fn chain<'a>(causes: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for error in causes {
        let Some(text) = own_words(error) else { continue };
        let text = scrub(&text);
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    if parts.is_empty() { "the connection failed".to_owned() } else { parts.join(": ") }
}

/// What one error in a chain adds, or `None` for a wrapper whose cause says it all.
fn own_words(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    if error.is::<DynamicTransportError>() {
        // "Transport [<type name>] error: <cause>": the cause follows.
        return None;
    }
    if let Some(error) = error.downcast_ref::<ServiceError>() {
        return Some(service_error(error));
    }
    Some(error.to_string())
}

/// A request's failure, in words (its causes are walked separately).
pub(crate) fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!("the server answered with error {}: {}", data.code.0, data.message),
        ServiceError::TransportSend(_) => "the message could not be sent".to_owned(),
        ServiceError::TransportClosed => "the connection is closed".to_owned(),
        ServiceError::UnexpectedResponse => "the server answered with something else than was asked".to_owned(),
        ServiceError::Cancelled { reason } => match reason {
            Some(reason) => format!("the request was cancelled ({reason})"),
            None => "the request was cancelled".to_owned(),
        },
        ServiceError::Timeout { timeout } => format!("no answer within {} s", timeout.as_secs()),
        other => scrub(&other.to_string()),
    }
}

/// `text` without Rust type paths (`rmcp::…`, `tokio::…<…>`) and the SDK's wrappers
/// around them: the last guard before an error is shown.
pub fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // "Transport [X] error: " and "Transport [X]" wrappers.
    while let Some(at) = rest.find("Transport [") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "Transport [".len()..];
        match closing_bracket(after) {
            Some(end) => {
                rest = &after[end + 1..];
                rest = rest.strip_prefix(" error: ").or_else(|| rest.strip_prefix(" error")).unwrap_or(rest);
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    // Any word left that is a type path.
    let words: Vec<&str> = out.split(' ').filter(|word| !is_type_path(word)).collect();
    words.join(" ").trim().to_owned()
}

/// Where the `]` closing an opened `[` is, counting nested brackets.
fn closing_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => return Some(at),
            ']' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `word` looks like `crate::module::Type<…>` (and not a URL, which also has `:`).
fn is_type_path(word: &str) -> bool {
    let word = word.trim_matches(|c: char| matches!(c, ',' | ';' | '(' | ')' | '[' | ']' | '`' | '\'' | '"'));
    word.contains("::")
        && !word.contains("://")
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '<' | '>' | ',' | '&' | '\''))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_and_their_wrappers_are_taken_out() {
        let raw = "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::\
                   streamable_http_client::StreamableHttpClientWorker<colloquy_tools::mcp::http::SessionAwareClient>>] \
                   error: Transport channel closed";
        assert_eq!(scrub(raw), "Transport send error: Transport channel closed");
        assert_eq!(scrub("see http://a.b/c::d and std::io::Error here"), "see http://a.b/c::d and here");
        assert_eq!(scrub("Transport [broken"), "");
    }
}
