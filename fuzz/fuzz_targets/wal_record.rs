//! WAL record payloads (ADR 0003): a request record is an OTLP body as received behind a small
//! header, converted when the WAL is replayed, retried, verified or read by the analyzer.
//! Whatever the bytes (the frame's CRC passed, but the header or body may still be damaged or
//! written by another version), reading one never panics: it gives rows or an error. A record
//! that parses encodes back to the same bytes.
#![no_main]

use collector::store::wal::record::{self, RequestRecord};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(parsed)) = RequestRecord::parse(data) {
        assert_eq!(parsed.encode(), data, "a parsed record encodes to the same bytes");
    }
    if let Ok(Some(rows)) = record::decode_one(data) {
        assert_eq!(rows.schema().fields().len(), rows.num_columns());
    }
});
