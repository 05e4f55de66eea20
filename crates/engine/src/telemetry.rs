//! Tracing for the binaries: human-readable logs on stderr (`RUST_LOG` filters them), and
//! OpenTelemetry export over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
//!
//! Spans: `turn` → `execution` → `agent` → `step` → `model_call` / `tool_call` (a model call's
//! tokens, time to first token and finish as fields), and `approval_wait` under a continued
//! reply's `resumed` step (from the question to its answer: see `agent::AnsweredWait`). API
//! keys never appear in spans or logs.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Keeps the exporter alive; flushes pending spans when dropped.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs the global subscriber. Call once, early, from a binary.
pub fn init(service: &'static str) -> Telemetry {
    // rmcp logs every notification it receives (progress included) and the whole
    // `initialize` result (instructions included) at INFO: only its warnings are kept;
    // `mcp::client` says at INFO which server connected.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,hyper=warn,reqwest=warn,tao=warn,wry=warn,rmcp=warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_ansi(ansi);
    let provider = std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").and_then(|_| match otlp_provider(service) {
        Ok(provider) => Some(provider),
        Err(err) => {
            eprintln!("OpenTelemetry export disabled: {err}");
            None
        }
    });
    if let Some(provider) = &provider {
        // Spans written with their own times (the agent's approval waits) go through it.
        opentelemetry::global::set_tracer_provider(provider.clone());
    }
    let otel = provider.as_ref().map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer(service)).boxed());
    // `try_init` also turns records of the `log` crate into events of this subscriber
    // (the ACP crate and Tauri log through `log`), filtered the same way.
    let _ = tracing_subscriber::registry().with(filter).with(fmt).with(otel).try_init();
    Telemetry { provider }
}

fn otlp_provider(service: &'static str) -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().build().map_err(|e| e.to_string())?;
    let resource = opentelemetry_sdk::Resource::builder().with_service_name(service).build();
    Ok(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build())
}
