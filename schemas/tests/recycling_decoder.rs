//! The recycling protobuf decoder (`schemas::decode::recycling`) decodes exactly what prost
//! decodes: on every real recording, on a request that sets every field, refilling requests of
//! other shapes, on hand-made non-canonical encodings, and on many thousands of damaged bodies
//! (where it must either agree with prost or hand the body to prost).

mod common;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value, AnyValue, ArrayValue, EntityRef, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use prost::Message;
use schemas::decode::recycling::{count_spans, decode_into, decode_into_with, Spare, Unsupported};
use schemas::decode::{decode_protobuf, decode_protobuf_into, decode_protobuf_with_prost};

use common::{decode_file, kv, recordings, request_files};

fn text(s: &str) -> Value {
    Value::StringValue(s.to_string())
}

/// A request that sets every field the decoder knows, with `spans` spans.
fn full(spans: usize, tag: &str) -> ExportTraceServiceRequest {
    let nested = Value::KvlistValue(KeyValueList {
        values: vec![
            kv(
                "inner",
                Value::ArrayValue(ArrayValue {
                    values: vec![
                        AnyValue {
                            value: Some(text("a")),
                        },
                        AnyValue {
                            value: Some(Value::IntValue(-7)),
                        },
                        AnyValue { value: None },
                    ],
                }),
            ),
            kv("bytes", Value::BytesValue(vec![0, 1, 2, 255])),
        ],
    });
    let attrs = vec![
        kv("gen_ai.tool.name", text(&format!("lookup-{tag}"))),
        kv("flag", Value::BoolValue(true)),
        kv("count", Value::IntValue(i64::MIN)),
        kv("ratio", Value::DoubleValue(-0.25)),
        kv("nested", nested),
        kv("strindex", Value::StringValueStrindex(-3)),
        KeyValue {
            key: "no value".into(),
            value: None,
            key_strindex: 9,
        },
        KeyValue {
            key: "empty value".into(),
            value: Some(AnyValue { value: None }),
            key_strindex: 0,
        },
    ];
    let span = |i: usize| Span {
        trace_id: vec![i as u8 + 1; 16],
        span_id: vec![i as u8 + 2; 8],
        trace_state: format!("k=v{i}"),
        parent_span_id: vec![i as u8 + 3; 8],
        flags: 0x301,
        name: format!("span {i} {tag}"),
        kind: 3,
        start_time_unix_nano: 1_700_000_000_000_000_000 + i as u64,
        end_time_unix_nano: u64::MAX,
        attributes: attrs.clone(),
        dropped_attributes_count: 4,
        events: vec![Event {
            time_unix_nano: 5,
            name: "gen_ai.choice".into(),
            attributes: attrs[..2].to_vec(),
            dropped_attributes_count: 1,
        }],
        dropped_events_count: 2,
        links: vec![Link {
            trace_id: vec![9; 16],
            span_id: vec![8; 8],
            trace_state: "x=y".into(),
            attributes: attrs[2..4].to_vec(),
            dropped_attributes_count: 6,
            flags: 0x100,
        }],
        dropped_links_count: 3,
        status: Some(Status {
            message: format!("failed {tag}"),
            code: 2,
        }),
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![kv("service.name", text(&format!("svc-{tag}")))],
                dropped_attributes_count: 1,
                entity_refs: vec![EntityRef {
                    schema_url: "https://e".into(),
                    r#type: "service".into(),
                    id_keys: vec!["service.name".into(), "service.namespace".into()],
                    description_keys: vec!["d".into()],
                }],
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "scope".into(),
                    version: "1.2".into(),
                    attributes: attrs[..1].to_vec(),
                    dropped_attributes_count: 2,
                }),
                spans: (0..spans).map(span).collect(),
                schema_url: "https://s".into(),
            }],
            schema_url: "https://r".into(),
        }],
    }
}

/// A sparse request: few fields, different counts, values of other types in the same slots.
fn sparse(spans: usize) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![
            ResourceSpans {
                resource: None,
                scope_spans: vec![ScopeSpans {
                    scope: None,
                    spans: (0..spans)
                        .map(|i| Span {
                            trace_id: vec![7; 16],
                            span_id: vec![i as u8 + 1; 8],
                            attributes: vec![
                                kv("gen_ai.tool.name", Value::IntValue(i as i64)),
                                kv("flag", text("now a string")),
                            ],
                            ..Span::default()
                        })
                        .collect(),
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            },
            ResourceSpans::default(),
        ],
    }
}

/// Decodes `body` with the recycling decoder into `into` (refilling whatever it held, with the
/// attribute slots earlier decodes left in `spare`) and with prost; when the recycling decoder
/// accepts, prost must accept the same request.
fn agree(
    into: &mut ExportTraceServiceRequest,
    spare: &mut Spare,
    body: &[u8],
) -> Result<(), Unsupported> {
    let ours = decode_into_with(into, spare, body);
    assert!(spare.attributes() <= Spare::MAX_ATTRIBUTES);
    let prost = ExportTraceServiceRequest::decode(body);
    if ours.is_ok() {
        let prost = prost.unwrap_or_else(|e| panic!("prost refused what we accepted: {e}"));
        assert_eq!(
            into.encode_to_vec(),
            prost.encode_to_vec(),
            "the recycling decoder's request differs from prost's"
        );
        assert_eq!(format!("{into:?}"), format!("{prost:?}"));
    }
    ours
}

#[test]
fn every_recording_decodes_as_prost_decodes_it() {
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    let mut bodies = 0;
    for (_, dir) in recordings() {
        for file in request_files(&dir) {
            let body = decode_file(&file).encode_to_vec();
            agree(&mut reused, &mut spare, &body).expect("a canonical body decodes without prost");
            let mut fresh = ExportTraceServiceRequest::default();
            agree(&mut fresh, &mut Spare::default(), &body).expect("fresh");
            bodies += 1;
        }
    }
    assert!(bodies >= 40, "only {bodies} recorded bodies");
}

#[test]
fn refilling_a_request_of_another_shape_gives_the_new_request_only() {
    let shapes = [
        full(3, "a"),
        sparse(5),
        full(1, "b"),
        sparse(0),
        full(4, "c"),
    ];
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    for _ in 0..2 {
        for shape in &shapes {
            let body = shape.encode_to_vec();
            agree(&mut reused, &mut spare, &body).expect("canonical");
            assert_eq!(&reused, shape);
        }
    }
}

/// A request whose i-th span has `spans[i]` string attributes, each key and value `len` bytes
/// long.
fn with_attributes(spans: &[usize], len: usize) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: spans
                    .iter()
                    .enumerate()
                    .map(|(i, &attrs)| Span {
                        trace_id: vec![3; 16],
                        span_id: vec![i as u8 + 1; 8],
                        attributes: (0..attrs)
                            .map(|a| kv(&format!("{a:0len$}"), text(&"v".repeat(len))))
                            .collect(),
                        ..Span::default()
                    })
                    .collect(),
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

/// Refills `reused` with [`with_attributes`]`(spans, len)`, checked against prost; the slots
/// kept in `spare` afterwards.
fn refill(
    reused: &mut ExportTraceServiceRequest,
    spare: &mut Spare,
    spans: &[usize],
    len: usize,
) -> usize {
    let body = with_attributes(spans, len).encode_to_vec();
    agree(reused, spare, &body).expect("canonical");
    spare.attributes()
}

/// The addresses of the keys of span `i`'s attributes.
fn key_addresses(req: &ExportTraceServiceRequest, i: usize) -> Vec<*const u8> {
    let span = &req.resource_spans[0].scope_spans[0].spans[i];
    span.attributes.iter().map(|a| a.key.as_ptr()).collect()
}

#[test]
fn attribute_slots_a_span_lets_go_refill_a_later_span_and_stay_bounded() {
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    // The first span has three attributes, the second none.
    assert_eq!(refill(&mut reused, &mut spare, &[3, 0], 8), 0);
    let keys = key_addresses(&reused, 0);
    // Now the first has none and the second three: the first's slots move to the second, with
    // their strings' allocations, and nothing is left over.
    assert_eq!(refill(&mut reused, &mut spare, &[0, 3], 8), 0);
    assert!(key_addresses(&reused, 0).is_empty());
    let mut moved = key_addresses(&reused, 1);
    moved.reverse(); // taken back last-in, first-out
    assert_eq!(moved, keys, "the second span reuses the first span's slots");
    // Slots left over at the end of a request wait in `spare` for the next request.
    assert_eq!(refill(&mut reused, &mut spare, &[0, 1], 8), 2);
    assert_eq!(refill(&mut reused, &mut spare, &[2, 1], 8), 0);
    // More slots than the bound are let go: the spare keeps the bound and frees the rest.
    let many = Spare::MAX_ATTRIBUTES + 100;
    refill(&mut reused, &mut spare, &[many], 1);
    assert_eq!(
        refill(&mut reused, &mut spare, &[0], 1),
        Spare::MAX_ATTRIBUTES
    );
    // A longer value in a recycled slot still decodes whole (`agree` compares with prost).
    let left = refill(&mut reused, &mut spare, &[5], 300);
    assert_eq!(left, Spare::MAX_ATTRIBUTES - 5);
    // Slots holding more than MAX_SLOT_BYTES (a content payload) are freed, not kept.
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    refill(&mut reused, &mut spare, &[3], Spare::MAX_SLOT_BYTES);
    assert_eq!(refill(&mut reused, &mut spare, &[0], 1), 0);
    refill(&mut reused, &mut spare, &[3], 100);
    assert_eq!(refill(&mut reused, &mut spare, &[0], 1), 3);
}

#[test]
fn non_canonical_encodings_decode_as_prost_decodes_them() {
    let base = full(1, "x").encode_to_vec();
    // Unknown fields of every wire type at the end of the request.
    let mut unknown = base.clone();
    unknown.extend_from_slice(&[0x10, 0x96, 0x01]); // field 2 varint
    unknown.extend_from_slice(&[0x19, 1, 2, 3, 4, 5, 6, 7, 8]); // field 3 fixed64
    unknown.extend_from_slice(&[0x22, 2, b'h', b'i']); // field 4 length-delimited
    unknown.extend_from_slice(&[0x2d, 1, 2, 3, 4]); // field 5 fixed32
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    agree(&mut reused, &mut spare, &unknown).expect("unknown fields are skipped");

    // A span whose scalar fields come twice (the last wins), a default value sent explicitly,
    // a padded varint, and an attribute value that changes type inside one AnyValue.
    let mut span = Span {
        trace_id: vec![1; 16],
        span_id: vec![2; 8],
        ..Span::default()
    }
    .encode_to_vec();
    span.extend_from_slice(&[0x2a, 1, b'a', 0x2a, 2, b'b', b'c']); // name "a" then "bc"
    span.extend_from_slice(&[0x30, 0x80, 0x00]); // kind 0, padded varint
    let value = [0x0a, 1, b's', 0x18, 5]; // string "s" then int 5
    let attribute = [&[0x0a, 1, b'k', 0x12, value.len() as u8][..], &value].concat();
    span.extend_from_slice(&[0x4a, attribute.len() as u8]);
    span.extend_from_slice(&attribute);
    let scope_spans = [&[0x12, span.len() as u8][..], &span].concat();
    let resource_spans = [&[0x12, scope_spans.len() as u8][..], &scope_spans].concat();
    let body = [&[0x0a, resource_spans.len() as u8][..], &resource_spans].concat();
    agree(&mut reused, &mut spare, &body).expect("handled without prost");
    let attribute = &reused.resource_spans[0].scope_spans[0].spans[0];
    assert_eq!(attribute.name, "bc");
    assert_eq!(
        attribute.attributes[0].value,
        Some(AnyValue {
            value: Some(Value::IntValue(5))
        })
    );
}

#[test]
fn what_the_decoder_leaves_to_prost_still_decodes_exactly() {
    // A resource sent twice (prost merges the two) and a group: the recycling decoder gives up,
    // decode_protobuf_into falls back to prost.
    let resource = Resource {
        attributes: vec![kv("a", text("1"))],
        ..Resource::default()
    }
    .encode_to_vec();
    let twice = [
        &[0x0a, resource.len() as u8][..],
        &resource,
        &[0x0a, resource.len() as u8],
        &resource,
    ]
    .concat();
    let body = [&[0x0a, twice.len() as u8][..], &twice].concat();
    let mut reused = full(2, "old");
    assert_eq!(decode_into(&mut reused, &body), Err(Unsupported));
    decode_protobuf_into(&mut reused, &body).expect("prost decodes it");
    assert_eq!(
        reused,
        ExportTraceServiceRequest::decode(&body[..]).unwrap()
    );
    assert_eq!(
        reused.resource_spans[0]
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .len(),
        2,
        "merged as prost merges"
    );

    let group = [0x0b, 0x08, 0x01, 0x0c]; // field 1 start group, field 1 varint, end group
    assert_eq!(
        decode_into(&mut ExportTraceServiceRequest::default(), &group),
        Err(Unsupported)
    );
}

#[test]
fn malformed_bodies_get_prosts_error_and_leave_the_request_empty() {
    let body = full(2, "x").encode_to_vec();
    for cut in [1, 7, body.len() / 2, body.len() - 1] {
        let truncated = &body[..cut];
        let mut reused = full(1, "old");
        let ours = decode_protobuf_into(&mut reused, truncated);
        let prost = decode_protobuf_with_prost(truncated);
        match (ours, prost) {
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                assert!(reused.resource_spans.is_empty());
            }
            (a, b) => panic!("cut {cut}: ours {a:?}, prost {b:?}"),
        }
    }
    let mut invalid_utf8 = full(1, "x");
    invalid_utf8.resource_spans[0].scope_spans[0].spans[0].name = "\u{e9}".into();
    let mut bytes = invalid_utf8.encode_to_vec();
    let at = bytes.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    bytes[at] = 0xff;
    assert!(decode_protobuf(&bytes).is_err());
    assert!(decode_protobuf_with_prost(&bytes).is_err());
    // Values of 64 bytes and more are validated with SIMD: a bad byte in the first chunk, in a
    // later one, in the tail after the last whole chunk, and a sequence cut at a chunk's end.
    let long = format!("{}\u{e9}{}", "a".repeat(150), "b".repeat(60));
    let e9 = 150;
    for (at, bad) in [
        (3, &[0xffu8][..]),
        (70, &[0xc3]),
        (205, &[0x80]),
        (63, &[0xe2, 0x82]),
    ] {
        let mut req = full(1, "x");
        req.resource_spans[0].scope_spans[0].spans[0].name = long.clone();
        let mut bytes = req.encode_to_vec();
        let start = bytes
            .windows(long.len())
            .position(|w| w == long.as_bytes())
            .unwrap();
        bytes[start + at..start + at + bad.len()].copy_from_slice(bad);
        let mut reused = full(1, "old");
        let ours = decode_protobuf_into(&mut reused, &bytes);
        let prost = decode_protobuf_with_prost(&bytes);
        assert!(prost.is_err(), "byte {at}");
        assert_eq!(
            ours.map_err(|e| e.to_string()).err(),
            prost.map_err(|e| e.to_string()).err(),
            "byte {at}"
        );
    }
    // The same long value, intact, decodes.
    let mut req = full(1, "x");
    req.resource_spans[0].scope_spans[0].spans[0].name = long.clone();
    let mut reused = full(1, "old");
    decode_protobuf_into(&mut reused, &req.encode_to_vec()).unwrap();
    assert_eq!(reused.resource_spans[0].scope_spans[0].spans[0].name, long);
    assert_eq!(long.as_bytes()[e9], 0xc3);
}

/// xorshift64*: a fixed sequence, so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn damaged_bodies_are_decoded_as_prost_decodes_them_or_left_to_prost() {
    let seeds = [
        full(2, "a").encode_to_vec(),
        sparse(3).encode_to_vec(),
        full(1, "b").encode_to_vec(),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut reused = ExportTraceServiceRequest::default();
    let mut spare = Spare::default();
    let (mut accepted, mut left) = (0, 0);
    for round in 0..30_000 {
        let mut body = seeds[round % seeds.len()].clone();
        for _ in 0..=rng.below(3) {
            let at = rng.below(body.len());
            match rng.below(5) {
                0 => body[at] = rng.next() as u8,
                1 => body[at] ^= 1 << rng.below(8),
                2 => body.insert(at, rng.next() as u8),
                3 => {
                    body.remove(at);
                }
                _ => body.truncate(at),
            }
            if body.is_empty() {
                break;
            }
        }
        match agree(&mut reused, &mut spare, &body) {
            Ok(()) => accepted += 1,
            Err(Unsupported) => {
                left += 1;
                // decode_protobuf (recycling first, prost second) answers exactly as prost does.
                let ours = decode_protobuf(&body).map_err(|e| e.to_string());
                let prost = decode_protobuf_with_prost(&body).map_err(|e| e.to_string());
                assert_eq!(ours, prost, "round {round}");
            }
        }
    }
    assert!(
        accepted > 1_000 && left > 1_000,
        "accepted {accepted}, left to prost {left}"
    );
}

fn span_count(req: &ExportTraceServiceRequest) -> u64 {
    req.resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .map(|ss| ss.spans.len() as u64)
        .sum()
}

/// `count_spans` reads the span count from the framing alone: on every body prost decodes, it is
/// the decoded request's span count (the collector's queue charge floor relies on it).
#[test]
fn count_spans_is_the_decoded_span_count() {
    let mut bodies = vec![
        full(3, "a").encode_to_vec(),
        sparse(5).encode_to_vec(),
        Vec::new(),
    ];
    for (_, dir) in recordings() {
        for file in request_files(&dir) {
            bodies.push(decode_file(&file).encode_to_vec());
        }
    }
    for body in &bodies {
        let req = ExportTraceServiceRequest::decode(&body[..]).unwrap();
        assert_eq!(count_spans(body), Ok(span_count(&req)));
    }
    assert!(bodies.iter().map(|b| count_spans(b).unwrap()).sum::<u64>() > 100);
    // Damaged bodies: wherever prost decodes one, the count agrees.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut decoded, mut refused) = (0, 0);
    for round in 0..20_000 {
        let mut body = bodies[round % 2].clone();
        let at = rng.below(body.len());
        match rng.below(3) {
            0 => body[at] ^= 1 << rng.below(8),
            1 => body.truncate(at),
            _ => {
                body.remove(at);
            }
        }
        match ExportTraceServiceRequest::decode(&body[..]) {
            Ok(req) => {
                decoded += 1;
                assert_eq!(count_spans(&body), Ok(span_count(&req)), "round {round}");
            }
            Err(_) => refused += 1,
        }
    }
    assert!(decoded > 1_000 && refused > 1_000, "{decoded} / {refused}");
}

/// Strings under 64 bytes take an ASCII shortcut, and a recycled attribute keeps its old key
/// until the new one arrives: a short non-ASCII key decodes as prost decodes it, a damaged one
/// is refused as prost refuses it, and an attribute sent without a key, decoded into a slot that
/// held one, ends with the empty key prost gives it.
#[test]
fn short_keys_are_validated_and_a_missing_key_replaces_the_recycled_one() {
    let mut req = full(1, "x");
    req.resource_spans[0].scope_spans[0].spans[0].attributes[1].key = "caf\u{e9}.flag".into();
    let body = req.encode_to_vec();
    let mut reused = full(1, "old");
    let mut spare = Spare::default();
    agree(&mut reused, &mut spare, &body).expect("a valid non-ASCII key decodes");
    assert_eq!(
        reused.resource_spans[0].scope_spans[0].spans[0].attributes[1].key,
        "caf\u{e9}.flag"
    );

    let mut bad = body.clone();
    let at = bad.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    bad[at + 1] = 0x28; // a lead byte followed by ASCII: not UTF-8
    let mut reused = full(1, "old");
    assert!(decode_protobuf_into(&mut reused, &bad).is_err());
    assert!(decode_protobuf_with_prost(&bad).is_err());

    // An empty key is not encoded at all (proto3 default): the slot's old key must go.
    let mut no_key = full(1, "x");
    no_key.resource_spans[0].scope_spans[0].spans[0].attributes[1].key = String::new();
    let mut reused = full(1, "x");
    let mut spare = Spare::default();
    agree(&mut reused, &mut spare, &no_key.encode_to_vec()).expect("a key-less attribute decodes");
    assert_eq!(
        reused.resource_spans[0].scope_spans[0].spans[0].attributes[1].key,
        ""
    );
}
