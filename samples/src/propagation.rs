//! W3C trace context across the MCP boundary in `params._meta` (SEP-414): unprefixed
//! `traceparent` / `tracestate` keys, written by the host's client span and read by the server
//! before it starts its span. The broken-propagation variant simply skips [`inject`].

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), Value::String(value));
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

/// Writes the span context of `cx` into a `_meta` object.
pub fn inject(cx: &Context, meta: &mut Map<String, Value>) {
    TraceContextPropagator::new().inject_context(cx, &mut MetaInjector(meta));
}

/// Reads a remote parent from a `_meta` object (an empty context when there is none).
pub fn extract(meta: &Map<String, Value>) -> Context {
    TraceContextPropagator::new().extract(&MetaExtractor(meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    #[test]
    fn round_trips_traceparent_through_meta() {
        let sc = SpanContext::new(
            TraceId::from(0x0af7651916cd43dd8448eb211c80319c_u128),
            SpanId::from(0x00f067aa0ba902b7_u64),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        );
        let cx = Context::new().with_remote_span_context(sc);
        let mut meta = Map::new();
        inject(&cx, &mut meta);
        assert_eq!(
            meta.get("traceparent").and_then(Value::as_str),
            Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
        );
        let back = extract(&meta);
        assert_eq!(
            back.span().span_context().span_id(),
            SpanId::from(0x00f067aa0ba902b7_u64)
        );
        assert!(back.span().span_context().is_remote());
        assert!(!extract(&Map::new()).span().span_context().is_valid());
    }
}
