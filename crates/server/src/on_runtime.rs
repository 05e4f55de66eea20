//! Where the server's work runs.
//!
//! `colloquy serve` runs its connections — accepting, HTTP parsing, writing responses,
//! and so polling every event stream — on the engine's stream thread, where the topic
//! actors number each chunk and hand it to their listeners: a chunk reaches an SSE
//! response with a queue push on that thread instead of a wake-up of another one. (On the
//! app's multi-threaded runtime, three open event streams cost about 40 µs of CPU per
//! chunk in wake-ups alone; see docs/benchmarks.md.)
//!
//! The handlers do not run there: [`OnRuntime`] hands each request to the app's runtime
//! and only the response comes back, so a slow operation never holds up a stream.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use tokio::runtime::Handle;
use tokio_util::task::AbortOnDropHandle;
use tower::ServiceExt;

/// A service that runs `router` for each request as a task on `runtime`.
///
/// Dropping the response future (the client went away) aborts that task, as dropping a
/// handler did before. A handler that panics answers 500 with an `internal` [`ApiError`]
/// (as every `/api` error is) instead of resetting the connection.
///
/// [`ApiError`]: protocol::ApiError
#[derive(Clone)]
pub struct OnRuntime {
    router: Router,
    runtime: Handle,
}

impl OnRuntime {
    pub fn new(router: Router, runtime: Handle) -> Self {
        Self { router, runtime }
    }
}

impl tower::Service<Request> for OnRuntime {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let router = self.router.clone();
        let task = AbortOnDropHandle::new(self.runtime.spawn(async move {
            match router.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }));
        Box::pin(async move {
            Ok(match task.await {
                Ok(response) => response,
                Err(err) => {
                    tracing::error!(error = %err, "a request handler failed");
                    crate::routes::error_response(protocol::ApiError::internal(
                        "the request's handler failed (a bug: the server's log has the details)",
                    ))
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;
    use tokio::sync::oneshot;

    use super::*;

    /// A runtime on a thread of its own, like the app's, and a service that sends there.
    fn on_own_runtime(router: Router) -> (OnRuntime, tokio::runtime::Runtime) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("handlers")
            .enable_all()
            .build()
            .unwrap();
        (OnRuntime::new(router, runtime.handle().clone()), runtime)
    }

    fn get_request(path: &str) -> Request {
        Request::builder().uri(path).body(Body::empty()).unwrap()
    }

    #[tokio::test]
    async fn handlers_run_on_the_given_runtime() {
        let router = Router::new().route("/", get(|| async { std::thread::current().name().unwrap_or("").to_owned() }));
        let (service, runtime) = on_own_runtime(router);
        let response = service.oneshot(get_request("/")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], b"handlers");
        runtime.shutdown_background();
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500() {
        let router = Router::new().route(
            "/",
            get(|| async {
                if true {
                    panic!("handler bug");
                }
                "unreachable"
            }),
        );
        let (service, runtime) = on_own_runtime(router);
        let response = service.oneshot(get_request("/")).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 4096).await.unwrap();
        let error: protocol::ApiError = serde_json::from_slice(&body).unwrap();
        assert_eq!(error.kind, protocol::ErrorKind::Internal);
        runtime.shutdown_background();
    }

    #[tokio::test]
    async fn dropping_the_response_future_aborts_the_handler() {
        let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
        let dropped_tx = std::sync::Arc::new(std::sync::Mutex::new(Some(dropped_tx)));
        let router = Router::new().route(
            "/",
            get(move || {
                let dropped_tx = dropped_tx.clone();
                async move {
                    // Tells the test when this future is dropped (aborted), not finished.
                    struct Tell(Option<oneshot::Sender<()>>);
                    impl Drop for Tell {
                        fn drop(&mut self) {
                            if let Some(tx) = self.0.take() {
                                let _ = tx.send(());
                            }
                        }
                    }
                    let _tell = Tell(dropped_tx.lock().unwrap().take());
                    std::future::pending::<()>().await;
                    "never"
                }
            }),
        );
        let (service, runtime) = on_own_runtime(router);
        let call = service.oneshot(get_request("/"));
        assert!(tokio::time::timeout(Duration::from_millis(50), call).await.is_err(), "the handler never answers");
        tokio::time::timeout(Duration::from_secs(5), dropped_rx)
            .await
            .expect("the handler's task was aborted")
            .expect("the handler's future was dropped");
        runtime.shutdown_background();
    }
}
