//! tripline's own telemetry as an MCP server: one `SERVER` span per MCP request, following the
//! OpenTelemetry MCP semantic conventions, exported over OTLP/HTTP when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and not at all
//! otherwise.
//!
//! Span shape (as `samples/src/server.rs`, which tripline's rules accept): name
//! `{mcp.method.name} {target}`, kind SERVER, `mcp.method.name`, `jsonrpc.request.id`,
//! `mcp.protocol.version`, `network.transport` (`pipe` for stdio, `tcp` for HTTP); for
//! `tools/call` also `gen_ai.operation.name = execute_tool` and `gen_ai.tool.name`; an `isError`
//! result sets `error.type = tool_error` and status ERROR, a JSON-RPC error sets `error.type` and
//! `rpc.response.status_code` to its code. The parent is the W3C trace context the client put in
//! `params._meta` (`traceparent` / `tracestate`), so the agent's trace continues into tripline.
//!
//! The SDK is scoped to this server (no global provider): spans are built with the OpenTelemetry
//! API directly, so the process's `tracing` logs never become spans.

use std::time::Duration;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _, TracerProvider as _};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use serde_json::{Map, Value};

/// `service.name` of the spans unless `OTEL_SERVICE_NAME` says otherwise.
pub const SERVICE_NAME: &str = "tripline-mcp";

/// The telemetry pipeline could not be built from the environment.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL={0:?} is not supported by `tripline mcp`; use http/protobuf (the collector's OTLP/HTTP port, 4318 by default)")]
    Protocol(String),
    #[error("cannot build the OTLP exporter: {0}; check OTEL_EXPORTER_OTLP_ENDPOINT")]
    Exporter(String),
}

/// The pipeline of the server process, when the environment asks for one.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Telemetry {
    /// Builds the pipeline from the standard OTLP environment variables; `None` when no
    /// endpoint is set (then no span is made at all).
    pub fn from_env() -> Result<Option<Self>, TelemetryError> {
        if env("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
            && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
        {
            return Ok(None);
        }
        let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|| "http/protobuf".to_string());
        if protocol != "http/protobuf" {
            return Err(TelemetryError::Protocol(protocol));
        }
        // No endpoint given here: the exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
        // OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, and OTEL_EXPORTER_OTLP_HEADERS.
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        let mut resource = Resource::builder();
        if env("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(SERVICE_NAME);
        }
        let resource = resource
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_span_processor(BatchSpanProcessor::builder(exporter).build())
            .build();
        let scope = InstrumentationScope::builder("tripline-mcp")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let tracer = provider.tracer_with_scope(scope);
        Ok(Some(Self { provider, tracer }))
    }

    /// Starts the SERVER span of one request. `meta` is the request's `params._meta`.
    pub fn request(&self, req: &RequestFacts<'_>, meta: &Map<String, Value>) -> RequestSpan {
        let parent = TraceContextPropagator::new().extract(&MetaExtractor(meta));
        let name = match req.target {
            Some(t) => format!("{} {t}", req.method),
            None => req.method.to_string(),
        };
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", req.method.to_string()),
            KeyValue::new("jsonrpc.request.id", req.request_id.to_string()),
            KeyValue::new("network.transport", req.transport),
        ];
        if let Some(v) = req.protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", v.to_string()));
        }
        if let Some(s) = req.session_id {
            attributes.push(KeyValue::new("mcp.session.id", s.to_string()));
        }
        if req.method == "tools/call" {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            if let Some(tool) = req.target {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
            }
        }
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        RequestSpan { span: Some(span) }
    }

    /// Exports what is buffered and stops. Blocking (the HTTP exporter is): call it from a
    /// blocking context.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.force_flush() {
            tracing::warn!(error = %e, "could not flush tripline's own spans");
        }
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "could not shut the span exporter down");
        }
    }
}

/// What a request span records about the request.
pub struct RequestFacts<'a> {
    pub method: &'a str,
    /// The tool name of a `tools/call`.
    pub target: Option<&'a str>,
    pub request_id: &'a str,
    pub transport: &'static str,
    pub protocol_version: Option<&'a str>,
    pub session_id: Option<&'a str>,
}

/// The span of one request (a no-op when telemetry is off); ends when dropped.
#[derive(Default)]
pub struct RequestSpan {
    span: Option<opentelemetry_sdk::trace::Span>,
}

impl RequestSpan {
    /// The tool ran and returned `isError: true`.
    pub fn tool_error(&mut self, kind: &'static str) {
        if let Some(span) = &mut self.span {
            span.set_attribute(KeyValue::new("error.type", "tool_error"));
            span.set_attribute(KeyValue::new("tripline.mcp.error_kind", kind));
            span.set_status(Status::error(kind));
        }
    }

    /// The request failed with a JSON-RPC error.
    pub fn rpc_error(&mut self, code: i32, message: &str) {
        if let Some(span) = &mut self.span {
            span.set_attribute(KeyValue::new("error.type", code.to_string()));
            span.set_attribute(KeyValue::new("rpc.response.status_code", code.to_string()));
            span.set_status(Status::error(message.to_string()));
        }
    }
}

impl Drop for RequestSpan {
    fn drop(&mut self) {
        if let Some(mut span) = self.span.take() {
            span.end();
        }
    }
}

struct MetaExtractor<'a>(&'a Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TraceContextExt;

    #[test]
    fn parent_comes_from_meta_traceparent() {
        let mut meta = Map::new();
        meta.insert(
            "traceparent".into(),
            Value::String("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into()),
        );
        let cx = TraceContextPropagator::new().extract(&MetaExtractor(&meta));
        let sc = cx.span().span_context().clone();
        assert!(sc.is_remote());
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
        let none = TraceContextPropagator::new().extract(&MetaExtractor(&Map::new()));
        assert!(!none.span().span_context().is_valid());
    }
}
