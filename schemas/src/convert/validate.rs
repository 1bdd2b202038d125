//! Span validation: what makes a span unusable, with a reason the sender can act on.
//!
//! Only identity and time are checked; everything else is accepted as sent. A rejected span is
//! counted and explained (the collector reports it as a partial success), never silently dropped.

use opentelemetry_proto::tonic::trace::v1::Span;

/// Why `span` must be rejected, or `None` when it is acceptable.
pub fn rejection_reason(span: &Span) -> Option<String> {
    if span.trace_id.len() != 16 {
        return Some(format!(
            "trace_id is {} bytes, expected 16",
            span.trace_id.len()
        ));
    }
    if span.trace_id.iter().all(|b| *b == 0) {
        return Some("trace_id is all zeros, which W3C trace context forbids".to_string());
    }
    if span.span_id.len() != 8 {
        return Some(format!(
            "span_id is {} bytes, expected 8",
            span.span_id.len()
        ));
    }
    if span.span_id.iter().all(|b| *b == 0) {
        return Some("span_id is all zeros, which W3C trace context forbids".to_string());
    }
    match span.parent_span_id.len() {
        0 => {}
        8 if span.parent_span_id.iter().all(|b| *b == 0) => {
            return Some(
                "parent_span_id is all zeros; send an empty parent_span_id for a root span"
                    .to_string(),
            )
        }
        8 => {}
        n => {
            return Some(format!(
                "parent_span_id is {n} bytes, expected 8 (or empty for a root span)"
            ))
        }
    }
    for (what, value) in [
        ("start_time_unix_nano", span.start_time_unix_nano),
        ("end_time_unix_nano", span.end_time_unix_nano),
    ] {
        if value > i64::MAX as u64 {
            return Some(format!(
                "{what} {value} is beyond year 2262 (exceeds int64 nanoseconds)"
            ));
        }
    }
    for (i, event) in span.events.iter().enumerate() {
        if event.time_unix_nano > i64::MAX as u64 {
            return Some(format!(
                "event {i} time_unix_nano {} is beyond year 2262 (exceeds int64 nanoseconds)",
                event.time_unix_nano
            ));
        }
    }
    None
}
