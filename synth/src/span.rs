//! The one span constructor of the synthetic data: ids, parent, name, kind, times and attributes,
//! every other field at its OTLP default. The builders add what their shape needs (flags,
//! status, events) on top, so a span built for the load generator and one built for the samples'
//! scale mode start from the same fields.

use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;

/// A span of `kind` named `name` from `start` to `end` (ns since the epoch); `parent` empty for a
/// root.
pub fn span(
    trace_id: &[u8],
    span_id: &[u8],
    parent: &[u8],
    name: impl Into<String>,
    kind: SpanKind,
    (start, end): (u64, u64),
    attributes: Vec<KeyValue>,
) -> Span {
    Span {
        trace_id: trace_id.to_vec(),
        span_id: span_id.to_vec(),
        parent_span_id: parent.to_vec(),
        name: name.into(),
        kind: kind as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: end,
        attributes,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_land_where_otlp_puts_them_and_the_rest_is_default() {
        let s = span(
            &[1; 16],
            &[2; 8],
            &[],
            "chat m",
            SpanKind::Client,
            (10, 20),
            Vec::new(),
        );
        assert_eq!(s.trace_id, vec![1; 16]);
        assert_eq!(s.span_id, vec![2; 8]);
        assert!(s.parent_span_id.is_empty());
        assert_eq!(s.name, "chat m");
        assert_eq!(s.kind, SpanKind::Client as i32);
        assert_eq!((s.start_time_unix_nano, s.end_time_unix_nano), (10, 20));
        assert_eq!((s.flags, s.status.clone()), (0, None));
    }
}
