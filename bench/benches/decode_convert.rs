//! Ceiling of the ingest path's first stage: OTLP protobuf bytes -> canonical Arrow batch
//! (`schemas::decode::decode_protobuf` + `schemas::convert::convert_request`), in spans/s.
//!
//! Why: the collector's end-to-end figure (BENCHMARKS.md) can only be read against the limit of
//! each stage; this is the CPU cost per span before any WAL or Parquet work.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use prost::Message;
use schemas::convert::{convert_request, IngestContext};
use schemas::decode::decode_protobuf;
use synth::{RequestBuilder, SpanMix};

const NOW: u64 = 1_800_000_000_000_000_000;

fn body(spans: usize, content_share: f64) -> Vec<u8> {
    let mix = SpanMix {
        content_share,
        ..SpanMix::default()
    };
    RequestBuilder::new(1, mix)
        .with_fixed_clock(NOW)
        .build(spans)
        .encode_to_vec()
}

fn decode_convert(c: &mut Criterion) {
    let ctx = IngestContext {
        received_at_unix_nano: NOW as i64,
        source: "otlp-http".to_string(),
        redact_content: false,
    };
    let mut group = c.benchmark_group("otlp_protobuf_to_arrow");
    for (spans, content) in [(512usize, 0.3f64), (4096, 0.3), (512, 0.0), (512, 1.0)] {
        let bytes = body(spans, content);
        let label = format!("{spans}spans_content{content}");
        group.throughput(Throughput::Elements(spans as u64));
        group.bench_with_input(BenchmarkId::new("decode", &label), &bytes, |b, bytes| {
            b.iter(|| match decode_protobuf(black_box(bytes)) {
                Ok(req) => req.resource_spans.len(),
                Err(e) => panic!("generated request must decode: {e}"),
            })
        });
        group.bench_with_input(
            BenchmarkId::new("decode+convert", &label),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let req = match decode_protobuf(black_box(bytes)) {
                        Ok(req) => req,
                        Err(e) => panic!("generated request must decode: {e}"),
                    };
                    let converted = convert_request(&req, &ctx);
                    assert_eq!(converted.accepted, spans);
                    converted.batch.num_rows()
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, decode_convert);
criterion_main!(benches);
