//! A small request that expands enormously once converted (resource and scope attributes are
//! copied into every span's row) is refused whole with 413 before any row is built, and the
//! collector keeps serving. Before the bound, 60 KB of gzip panicked the Arrow builder
//! ("byte array offset overflow") and was answered 503, so exporters resent it forever.

mod common;

use std::io::Write;

use common::*;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// One 1 MiB resource attribute shared by 2,100 tiny spans: 60 KB of gzip, gigabytes of rows.
fn amplifying_request() -> Vec<u8> {
    let spans: Vec<Span> = (0..2100u64)
        .map(|i| Span {
            trace_id: trace_id(i),
            span_id: span_id(i),
            name: "tiny".into(),
            start_time_unix_nano: T0,
            end_time_unix_nano: T0 + 1,
            ..Default::default()
        })
        .collect();
    let mut req = request("amplifier", spans);
    req.resource_spans[0]
        .resource
        .as_mut()
        .unwrap()
        .attributes
        .push(kv_str("big", "x".repeat(1 << 20)));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&req.encode_to_vec()).unwrap();
    gz.finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_would_expand_past_the_limit_is_413_and_the_server_lives() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let body = amplifying_request();
    assert!(
        body.len() < 100_000,
        "the request is small: {} bytes",
        body.len()
    );

    let resp = post(
        server.http_addr(),
        body,
        "application/x-protobuf",
        Some("gzip"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 413);
    assert!(resp.headers().get("retry-after").is_none(), "not retryable");
    let status =
        collector::receive::otlp_wire::RpcStatus::decode(resp.bytes().await.unwrap()).unwrap();
    assert_eq!(
        status.code,
        collector::receive::otlp_wire::code::RESOURCE_EXHAUSTED
    );
    assert!(
        status.message.contains("--max-converted-bytes"),
        "{}",
        status.message
    );

    // Still serving: a normal export is stored.
    let ok = request("after", tool_call_spans(1, T0));
    export_ok(server.http_addr(), &ok).await;
    assert_eq!(
        server.stats().requests_by_status().get("http:413"),
        Some(&1)
    );
    server.shutdown().await.unwrap();
    assert_eq!(
        read_store(dir.path())
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_converted_size_limit_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_converted_bytes = 1024;
    })
    .await;
    let req = request("svc", tool_call_spans(1, T0));
    let resp = export(server.http_addr(), &req).await;
    assert_eq!(resp.status(), 413);
    assert!(resp
        .text()
        .await
        .unwrap()
        .contains("over the limit of 1024 bytes"));
    server.shutdown().await.unwrap();
}
