//! The synthetic load both measuring examples share (`request_path`, `parquet_settings`): the same
//! `synth` requests, and the same conversion of them into the batches the batcher writes, so the
//! two price the same rows.

use arrow::record_batch::RecordBatch;
use prost::Message;
use synth::{RequestBuilder, SpanMix};

/// The fixed clock of every generated span (so two runs build byte-identical bodies).
pub const NOW: u64 = 1_800_000_000_000_000_000;

/// `requests` protobuf bodies of `spans` spans each, after one warm-up body (index 0).
pub fn bodies(requests: usize, spans: usize) -> Vec<Vec<u8>> {
    let mut builder = RequestBuilder::new(1, SpanMix::default()).with_fixed_clock(NOW);
    (0..=requests)
        .map(|_| builder.build(spans).encode_to_vec())
        .collect()
}

/// `bodies` decoded and converted as the collector converts them (source `otlp-http`, content
/// kept), one batch per body.
#[allow(dead_code)] // parquet_settings uses it; request_path converts in its measured step
pub fn converted_batches(bodies: &[Vec<u8>]) -> Result<Vec<RecordBatch>, schemas::DecodeError> {
    let ingest = schemas::convert::IngestContext {
        received_at_unix_nano: NOW as i64,
        source: "otlp-http".to_string(),
        redact_content: false,
    };
    bodies
        .iter()
        .map(|body| {
            let request = schemas::decode::decode_protobuf(body)?;
            // As the collector hands them to its writer (origin columns as dictionaries).
            let converted =
                schemas::convert::convert_request_for_store(&request, &ingest, u64::MAX)
                    .expect("a synthetic request converts");
            Ok(converted.batch)
        })
        .collect()
}
