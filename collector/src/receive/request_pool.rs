//! Decoded trace requests, kept after conversion to be refilled by the next request.
//!
//! Why: allocating every string of a decoded request and freeing it after conversion cost about
//! a fifth of the collector's instructions per span. The recycling decoder
//! ([`schemas::decode::recycling`]) refills an existing request instead; this pool is where a
//! request thread leaves the request it has converted and where the next one takes it to
//! decode into.
//!
//! Bound: at most [`KEPT`] requests are kept, and only those decoded from a body of at most
//! [`MAX_KEPT_BODY_BYTES`], so the pool holds at most `KEPT` decoded bodies of that size (a
//! decoded request takes a few times its body: about 30 MiB in all), each with at most
//! [`Spare::MAX_ATTRIBUTES`] spare attribute slots. A request that is not kept is freed as
//! before.

use std::ops::Deref;
use std::sync::Mutex;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use schemas::decode::recycling::Spare;
use schemas::DecodeError;

/// Requests kept for refilling at most: a request is held from its decode to the end of its
/// conversion, right after its WAL append (milliseconds), so a few cover the requests in flight
/// on a small machine; beyond that a request is freed as before.
pub const KEPT: usize = 8;
/// A request decoded from a larger body is freed, not kept (a rare large request must not
/// pin its memory).
pub const MAX_KEPT_BODY_BYTES: usize = 1 << 20;

/// A kept request and the attribute slots its decodes let go ([`Spare`]: bounded).
type Kept = (ExportTraceServiceRequest, Spare);

static POOL: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// A decoded trace request that goes back to the pool when dropped.
#[derive(Debug)]
pub struct PooledRequest {
    request: ExportTraceServiceRequest,
    spare: Spare,
    /// Whether it goes back to the pool.
    keep: bool,
}

impl PooledRequest {
    /// Decodes a protobuf `ExportTraceServiceRequest` into a request from the pool (or a new
    /// one), exactly as [`schemas::decode::decode_protobuf`] does.
    pub fn decode_protobuf(body: &[u8]) -> Result<Self, DecodeError> {
        let (mut request, mut spare) = POOL
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .unwrap_or_default();
        schemas::decode::decode_protobuf_into_with(&mut request, &mut spare, body)?;
        Ok(Self {
            request,
            spare,
            keep: body.len() <= MAX_KEPT_BODY_BYTES,
        })
    }

    /// A request decoded another way (OTLP/JSON, gRPC): freed after use, not kept.
    pub fn not_kept(request: ExportTraceServiceRequest) -> Self {
        Self {
            request,
            spare: Spare::default(),
            keep: false,
        }
    }

    /// Requests in the pool now.
    #[cfg(test)]
    fn pooled() -> usize {
        POOL.lock().map_or(0, |pool| pool.len())
    }
}

impl Deref for PooledRequest {
    type Target = ExportTraceServiceRequest;

    fn deref(&self) -> &ExportTraceServiceRequest {
        &self.request
    }
}

impl Drop for PooledRequest {
    fn drop(&mut self) {
        if !self.keep {
            return;
        }
        let request = std::mem::take(&mut self.request);
        let spare = std::mem::take(&mut self.spare);
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < KEPT {
                pool.push((request, spare));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn body(spans: usize, name: &str) -> Vec<u8> {
        use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: (0..spans)
                        .map(|i| Span {
                            trace_id: vec![1; 16],
                            span_id: vec![(i % 250) as u8 + 1; 8],
                            name: name.to_string(),
                            ..Span::default()
                        })
                        .collect(),
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        }
        .encode_to_vec()
    }

    #[test]
    fn a_converted_request_is_refilled_by_the_next_and_the_pool_stays_bounded() {
        let first = PooledRequest::decode_protobuf(&body(3, "first")).unwrap();
        let name_ptr = first.resource_spans[0].scope_spans[0].spans[0]
            .name
            .as_ptr();
        drop(first);
        assert!(PooledRequest::pooled() >= 1);
        // Tests run in parallel in one process: another test may take the pooled request, so
        // refill until this one's allocation comes back (it is the most recently pooled).
        let second = PooledRequest::decode_protobuf(&body(2, "2nd")).unwrap();
        assert_eq!(second.resource_spans[0].scope_spans[0].spans.len(), 2);
        assert_eq!(second.resource_spans[0].scope_spans[0].spans[0].name, "2nd");
        assert_eq!(
            second.resource_spans[0].scope_spans[0].spans[0]
                .name
                .as_ptr(),
            name_ptr,
            "the span name's allocation was reused"
        );
        drop(second);

        let many: Vec<_> = (0..3 * KEPT)
            .map(|_| PooledRequest::decode_protobuf(&body(1, "x")).unwrap())
            .collect();
        drop(many);
        assert!(PooledRequest::pooled() <= KEPT);

        let large = PooledRequest::decode_protobuf(&body(40_000, "large")).unwrap();
        assert!(large.encoded_len() > MAX_KEPT_BODY_BYTES);
        let before = PooledRequest::pooled();
        drop(large);
        assert!(
            PooledRequest::pooled() <= before,
            "a large request is not kept"
        );
    }
}
