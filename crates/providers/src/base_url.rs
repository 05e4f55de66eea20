//! The check a provider's base URL must pass before it is saved or called.

use url::Url;

/// Parses a user-typed base URL such as `https://api.openai.com/v1/`.
///
/// Accepts `http` and `https` URLs with a host and without query, fragment or
/// credentials; surrounding whitespace and trailing slashes are removed (a bare host keeps
/// the single `/` every URL has). The error is a sentence to show next to the field.
pub fn validate_base_url(input: &str) -> Result<Url, String> {
    let input = input.trim();
    if input.is_empty() {
        return Err("enter a base URL, e.g. https://api.openai.com/v1".to_owned());
    }
    let lower = input.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err("base URL must start with http:// or https://".to_owned());
    }
    let mut url = Url::parse(input).map_err(|err| format!("base URL is not a valid URL ({err})"))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err("base URL must include a host name, e.g. http://localhost:11434/v1".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("base URL must not contain a user name or password — put the API key in its own field".to_owned());
    }
    if url.query().is_some() {
        return Err("base URL must not contain a query (the part after “?”)".to_owned());
    }
    if url.fragment().is_some() {
        return Err("base URL must not contain a fragment (the part after “#”)".to_owned());
    }
    let path = url.path().trim_end_matches('/').to_owned();
    url.set_path(&path);
    Ok(url)
}

/// The base URL with no trailing slash, ready to have `/chat/completions` appended.
pub(crate) fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}/{}", base_url.trim().trim_end_matches('/'), path.trim_start_matches('/'))
}

/// [`endpoint`] with a query string, its values percent-encoded.
pub(crate) fn endpoint_with_query(base_url: &str, path: &str, query: &[(&str, &str)]) -> String {
    let url = endpoint(base_url, path);
    let Ok(mut parsed) = Url::parse(&url) else { return url };
    parsed.query_pairs_mut().extend_pairs(query);
    parsed.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_http_and_https_and_trims_trailing_slashes() {
        let cases = [
            ("https://api.openai.com/v1", "https://api.openai.com/v1"),
            ("  https://api.openai.com/v1/  ", "https://api.openai.com/v1"),
            ("http://localhost:11434/v1//", "http://localhost:11434/v1"),
            ("HTTP://127.0.0.1:1234", "http://127.0.0.1:1234/"),
            ("https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1"),
        ];
        for (input, expected) in cases {
            assert_eq!(validate_base_url(input).map(String::from).as_deref(), Ok(expected), "{input}");
        }
    }

    #[test]
    fn rejects_what_cannot_be_a_base_url_with_a_sentence() {
        let cases = [
            ("", "enter a base URL"),
            ("api.openai.com/v1", "must start with http:// or https://"),
            ("localhost:11434", "must start with http:// or https://"),
            ("ftp://example.com", "must start with http:// or https://"),
            ("http://", "not a valid URL"),
            ("https://example.com/v1?key=abc", "must not contain a query"),
            ("https://example.com/v1#top", "must not contain a fragment"),
            ("https://user:sk-secret@example.com/v1", "must not contain a user name or password"),
        ];
        for (input, expected) in cases {
            let err = validate_base_url(input).expect_err(input);
            assert!(err.contains(expected), "{input}: {err}");
            assert!(!err.contains("sk-secret"), "the error must not echo credentials: {err}");
        }
    }

    #[test]
    fn endpoints_join_with_exactly_one_slash() {
        assert_eq!(endpoint("http://h/v1/", "/models"), "http://h/v1/models");
        assert_eq!(endpoint("http://h/v1", "chat/completions"), "http://h/v1/chat/completions");
        assert_eq!(
            endpoint_with_query("http://h/v1/", "models", &[("after_id", "a b&c")]),
            "http://h/v1/models?after_id=a+b%26c"
        );
    }
}
