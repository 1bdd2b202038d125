//! One process's OpenTelemetry pipeline: `tracing` spans → `tracing-opentelemetry` → the SDK
//! (`opentelemetry_sdk` batch processor, optionally behind the logical clock) → the OTLP/HTTP
//! protobuf exporter of `opentelemetry-otlp`.
//!
//! Why scoped and not global: the generator runs many scenarios in one host process, each into
//! its own file, and `tripline demo` runs inside a binary that already installed a global
//! subscriber. So every scenario gets a fresh provider and a [`Dispatch`] that the code attaches
//! explicitly (`WithSubscriber`), and a target filter keeps library events (rmcp, hyper) out of the
//! spans: only this crate's spans are exported.

use std::time::{Duration, SystemTime};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing::Dispatch;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Layer;

use crate::clock::{LogicalClock, LogicalClockProcessor};
use crate::error::SamplesError;
use crate::ids::SeededIds;

/// Fixed ids and logical time (see [`crate::clock`] and [`crate::ids`]).
#[derive(Debug, Clone, Copy)]
pub struct Determinism {
    pub seed: u64,
    /// Unix nanoseconds of logical tick 0.
    pub base_unix_nanos: u64,
}

/// What one process needs to build its pipeline.
#[derive(Debug, Clone)]
pub struct TelemetryConfig {
    pub service_name: String,
    /// Instrumentation scope name of the spans.
    pub scope: &'static str,
    /// Role of the process, recorded as resource attribute `tripline.samples.role`.
    pub role: &'static str,
    /// Full OTLP/HTTP traces URL, e.g. `http://127.0.0.1:4318/v1/traces`.
    pub traces_url: String,
    pub determinism: Option<Determinism>,
}

/// A running pipeline: attach [`Telemetry::dispatch`] to futures, then [`Telemetry::shutdown`].
pub struct Telemetry {
    provider: SdkTracerProvider,
    pub dispatch: Dispatch,
    pub clock: Option<LogicalClock>,
}

/// Turns a collector base URL (`http://host:4318`) or a full traces URL into the traces URL.
pub fn traces_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim_end_matches('/');
    if trimmed.ends_with("/v1/traces") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/v1/traces")
    }
}

impl Telemetry {
    pub fn start(config: &TelemetryConfig) -> Result<Self, SamplesError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(config.traces_url.clone())
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| SamplesError::Exporter(config.traces_url.clone(), e.to_string()))?;
        let batch = BatchSpanProcessor::builder(exporter).build();
        let resource = Resource::builder_empty()
            .with_attributes([
                KeyValue::new("service.name", config.service_name.clone()),
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
                KeyValue::new("tripline.samples.role", config.role),
                KeyValue::new("telemetry.sdk.name", "opentelemetry"),
                KeyValue::new("telemetry.sdk.language", "rust"),
            ])
            .build();
        let builder = SdkTracerProvider::builder().with_resource(resource);
        let (provider, clock) = match config.determinism {
            Some(d) => {
                let clock = LogicalClock::new(
                    SystemTime::UNIX_EPOCH + Duration::from_nanos(d.base_unix_nanos),
                );
                let provider = builder
                    .with_id_generator(SeededIds::new(d.seed))
                    .with_span_processor(LogicalClockProcessor::new(clock.clone(), batch))
                    .build();
                (provider, Some(clock))
            }
            None => (builder.with_span_processor(batch).build(), None),
        };
        let scope = opentelemetry::InstrumentationScope::builder(config.scope)
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let tracer = provider.tracer_with_scope(scope);
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_level(false)
            .with_tracked_inactivity(false)
            .with_filter(Targets::new().with_target("samples", LevelFilter::TRACE));
        let dispatch = Dispatch::new(tracing_subscriber::registry().with(layer));
        Ok(Self {
            provider,
            dispatch,
            clock,
        })
    }

    /// Exports everything still buffered and stops the pipeline. Blocking: call it from a
    /// blocking context (`spawn_blocking`) inside a runtime, because the HTTP exporter is blocking.
    pub fn shutdown(self) -> Result<(), SamplesError> {
        self.provider
            .force_flush()
            .map_err(|e| SamplesError::Flush(e.to_string()))?;
        self.provider
            .shutdown()
            .map_err(|e| SamplesError::Flush(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_url_appends_the_path_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://127.0.0.1:4318/v1/traces/"),
            "http://127.0.0.1:4318/v1/traces"
        );
    }
}
