//! OTLP/JSON bodies and JSON lines from the network and from recorded files: decoding and
//! conversion must never panic; errors are values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemas::convert::{convert_request, IngestContext};

fuzz_target!(|data: &[u8]| {
    let ctx = IngestContext {
        received_at_unix_nano: 1_700_000_000_000_000_000,
        source: "fuzz".to_string(),
        redact_content: true,
    };
    if let Ok(request) = schemas::decode::decode_json(data) {
        let converted = convert_request(&request, &ctx);
        assert_eq!(converted.batch.num_rows(), converted.accepted);
    }
    let _ = schemas::decode::decode_json_lines(data);
});
