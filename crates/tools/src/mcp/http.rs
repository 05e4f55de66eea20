//! The HTTP client under rmcp's streamable HTTP transport: reqwest's, taught one more way
//! a server says it no longer knows our session.
//!
//! A server that restarts forgets its sessions. The spec has it answer a request in an
//! unknown session with 404, and rmcp then starts a new session (a fresh `initialize`)
//! and sends the request again, once. Many servers built on the TypeScript SDK's samples
//! (`server-everything` among them) answer HTTP 400 with a JSON-RPC error that has no id
//! instead ("Bad Request: No valid session ID provided"): rmcp passes that error on, no
//! request claims it, and every call waited for its timeout. Here such an answer counts
//! as the session having expired, so rmcp recovers the same way.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

type PostAnswer = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// reqwest's streamable HTTP client, which also reads a 400 "no valid session" answer as
/// an expired session.
#[derive(Clone)]
pub(crate) struct SessionAwareClient(pub(crate) reqwest::Client);

impl StreamableHttpClient for SessionAwareClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostAnswer {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostAnswer {
        let in_session = session_id.is_some();
        let is_request = matches!(message, JsonRpcMessage::Request(_));
        let answer = self
            .0
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        if in_session && is_request && forgot_session(&answer) {
            tracing::info!("the MCP server no longer knows this session: starting a new one");
            return Err(StreamableHttpError::SessionExpired);
        }
        answer
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// Whether the answer to a request sent in a session says the server does not know it:
/// a JSON-RPC error that answers no request (the server could not take ours in at all),
/// or a 400/404 whose text speaks of the session.
fn forgot_session(answer: &PostAnswer) -> bool {
    match answer {
        Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _)) => error.id.is_none(),
        Err(StreamableHttpError::UnexpectedServerResponse(text)) => {
            let text = text.to_ascii_lowercase();
            (text.starts_with("http 400") || text.starts_with("http 404")) && text.contains("session")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, NumberOrString, ServerJsonRpcMessage};

    use super::*;

    fn error(id: Option<NumberOrString>) -> PostAnswer {
        let data = ErrorData::new(ErrorCode(-32000), "Bad Request: No valid session ID provided", None);
        Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(JsonRpcError::new(id, data)), None))
    }

    #[test]
    fn audit_09_an_error_answering_no_request_or_a_400_about_the_session_means_it_is_gone() {
        assert!(forgot_session(&error(None)));
        assert!(!forgot_session(&error(Some(NumberOrString::Number(3)))), "an error that answers our request");
        let text = |t: &'static str| Err(StreamableHttpError::UnexpectedServerResponse(t.into()));
        assert!(forgot_session(&text("HTTP 400 Bad Request: Bad Request: No valid session ID provided")));
        assert!(!forgot_session(&text("HTTP 400 Bad Request: the arguments are wrong")));
        assert!(!forgot_session(&text("HTTP 500 Internal Server Error: session store down")));
        assert!(!forgot_session(&Ok(StreamableHttpPostResponse::Accepted)));
    }
}
