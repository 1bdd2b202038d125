//! Ceiling of the ingest path's last stage: canonical Arrow batch -> zstd Parquet with
//! tripline's `writer_properties()` (an `ArrowWriter` into a `Vec`), in spans/s.
//!
//! Why: with the decode ceiling (decode_convert.rs) this bounds what the collector can do per
//! core before the WAL and the network; the compressed size per span is printed once so the
//! bytes-per-span figure of the end-to-end run can be read against it.

use std::hint::black_box;

use arrow::compute::concat_batches;
use arrow::record_batch::RecordBatch;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use parquet::arrow::ArrowWriter;
use schemas::convert::{convert_request, IngestContext};
use schemas::parquet_props::writer_properties;
use synth::{RequestBuilder, SpanMix};

const NOW: u64 = 1_800_000_000_000_000_000;

/// `rows` spans as one canonical batch, converted in requests of 4096 spans.
fn batch(rows: usize, content_share: f64) -> RecordBatch {
    let ctx = IngestContext {
        received_at_unix_nano: NOW as i64,
        source: "otlp-http".to_string(),
        redact_content: false,
    };
    let mix = SpanMix {
        content_share,
        ..SpanMix::default()
    };
    let mut builder = RequestBuilder::new(1, mix).with_fixed_clock(NOW);
    let mut parts = Vec::new();
    let mut left = rows;
    while left > 0 {
        let n = left.min(4096);
        parts.push(convert_request(&builder.build(n), &ctx).batch);
        left -= n;
    }
    let schema = schemas::span_schema();
    match concat_batches(&schema, &parts) {
        Ok(b) => b,
        Err(e) => panic!("canonical batches must concatenate: {e}"),
    }
}

fn encode(batch: &RecordBatch) -> Vec<u8> {
    let mut writer =
        match ArrowWriter::try_new(Vec::new(), batch.schema(), Some(writer_properties())) {
            Ok(w) => w,
            Err(e) => panic!("writer over the canonical schema: {e}"),
        };
    if let Err(e) = writer.write(batch) {
        panic!("write: {e}");
    }
    match writer.into_inner() {
        Ok(buf) => buf,
        Err(e) => panic!("close: {e}"),
    }
}

fn parquet_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("arrow_to_zstd_parquet");
    group.sample_size(20);
    for (rows, content) in [(65_536usize, 0.3f64), (65_536, 0.0), (8_192, 0.3)] {
        let b = batch(rows, content);
        let bytes = encode(&b).len();
        eprintln!(
            "arrow_to_zstd_parquet/{rows}rows_content{content}: {bytes} bytes, {:.1} bytes/span",
            bytes as f64 / rows as f64
        );
        group.throughput(Throughput::Elements(rows as u64));
        group.bench_with_input(
            BenchmarkId::new("encode", format!("{rows}rows_content{content}")),
            &b,
            |bencher, b| bencher.iter(|| encode(black_box(b)).len()),
        );
    }
    group.finish();
}

criterion_group!(benches, parquet_encode);
criterion_main!(benches);
