//! OTLP protobuf bodies from the network: decoding and conversion must never panic, whatever the
//! bytes; a body that decodes is converted as the receiver would convert it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemas::convert::{convert_request, IngestContext};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = schemas::decode::decode_protobuf(data) {
        let ctx = IngestContext {
            received_at_unix_nano: 1_700_000_000_000_000_000,
            source: "fuzz".to_string(),
            redact_content: false,
        };
        let converted = convert_request(&request, &ctx);
        assert_eq!(converted.batch.num_rows(), converted.accepted);
        // The collector answers with the validation and converts after the answer (ADR 0003):
        // the two must agree on every request conversion accepts.
        if converted.rejection_reasons.iter().all(|r| !r.contains("--max-converted-bytes")) {
            let validated = schemas::convert::validate_request(&request);
            assert_eq!(validated.accepted, converted.accepted);
            assert_eq!(validated.rejected, converted.rejected);
            assert_eq!(validated.rejection_reasons, converted.rejection_reasons);
        }
    }
});
