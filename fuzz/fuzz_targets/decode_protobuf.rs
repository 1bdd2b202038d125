//! OTLP protobuf bodies from the network: decoding and conversion must never panic, whatever the
//! bytes; a body that decodes is converted as the receiver would convert it. The collector's
//! recycling decoder must decode exactly what prost decodes (or leave the body to prost), also
//! when it refills a request decoded before.
#![no_main]

use libfuzzer_sys::fuzz_target;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use schemas::convert::{convert_request, IngestContext};
use schemas::decode::recycling;

fn same_as_prost(data: &[u8]) {
    use std::cell::RefCell;
    thread_local! {
        static REUSED: RefCell<ExportTraceServiceRequest> = RefCell::default();
    }
    let prost = schemas::decode::decode_protobuf_with_prost(data);
    REUSED.with(|reused| {
        let mut reused = reused.borrow_mut();
        if recycling::decode_into(&mut reused, data).is_ok() {
            let prost = prost.as_ref().expect("prost accepts what the recycling decoder accepts");
            assert_eq!(reused.encode_to_vec(), prost.encode_to_vec());
            assert_eq!(format!("{:?}", *reused), format!("{prost:?}"));
        }
    });
    let ours = schemas::decode::decode_protobuf(data).map_err(|e| e.to_string());
    assert_eq!(ours.is_ok(), prost.is_ok());
    if let (Err(a), Err(b)) = (&ours, &prost) {
        assert_eq!(a, &b.to_string());
    }
}

fuzz_target!(|data: &[u8]| {
    same_as_prost(data);
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
