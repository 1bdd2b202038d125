//! Writes generated export requests as `.pb` files that `tripline ingest` (and any OTLP file
//! reader) accepts: one serialised `ExportTraceServiceRequest` per file.
//!
//! Why: the analyzer benchmark needs millions of spans in a store, and feeding them through
//! `tripline ingest` exercises the same convert -> WAL -> Parquet path as the collector without
//! sockets, when the samples generator's scale mode is not at hand.

use std::fs;
use std::io;
use std::path::Path;

use prost::Message;

use synth::{RequestBuilder, SpanMix};

/// Writes `total_spans` spans as files of `batch_spans` spans each (the last may be smaller)
/// named `bench-{seed}-{index:06}.pb` under `dir`; returns the number of files.
pub fn write_request_files(
    dir: &Path,
    total_spans: u64,
    batch_spans: usize,
    mix: SpanMix,
    seed: u64,
) -> io::Result<u64> {
    if batch_spans == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "batch of 0 spans; pass --batch 1 or more",
        ));
    }
    fs::create_dir_all(dir)?;
    let mut builder = RequestBuilder::new(seed.wrapping_mul(1000), mix);
    let mut left = total_spans;
    let mut files = 0u64;
    let mut buf = Vec::new();
    while left > 0 {
        let n = left.min(batch_spans as u64) as usize;
        buf.clear();
        builder
            .build(n)
            .encode(&mut buf)
            .map_err(|e| io::Error::other(format!("encoding request {files}: {e}")))?;
        fs::write(dir.join(format!("bench-{seed}-{files:06}.pb")), &buf)?;
        left -= n as u64;
        files += 1;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;

    use super::*;
    use synth::span_count;

    #[test]
    fn writes_exactly_the_asked_spans() {
        let dir = std::env::temp_dir().join(format!("tripline-bench-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let files = write_request_files(&dir, 250, 100, SpanMix::default(), 9).unwrap();
        assert_eq!(files, 3);
        let mut spans = 0;
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in &names {
            let req = ExportTraceServiceRequest::decode(fs::read(p).unwrap().as_slice()).unwrap();
            spans += span_count(&req);
        }
        assert_eq!(spans, 250);
        assert_eq!(names[2].file_name().unwrap(), "bench-9-000002.pb");
        fs::remove_dir_all(&dir).unwrap();
    }
}
