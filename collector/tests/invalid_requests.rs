//! Negative fixtures (documented in `fixtures/invalid/README.md`): each bad request gets the
//! answer the OTLP specification prescribes, and the collector keeps serving afterwards.

mod common;

use std::io::Write;
use std::path::PathBuf;

use collector::receive::otlp_wire::RpcStatus;
use common::*;
use prost::Message;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/invalid")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

async fn assert_still_serving(server: &collector::Server, token: Option<&str>) {
    let resp = post(
        server.http_addr(),
        fixture("valid.json"),
        "application/json",
        None,
        token,
    )
    .await;
    assert_eq!(
        resp.status(),
        200,
        "a good request after a bad one is stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_protobuf_is_400_with_a_protobuf_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let resp = post(
        server.http_addr(),
        fixture("truncated.pb"),
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.headers()["content-type"], "application/x-protobuf");
    let status = RpcStatus::decode(&resp.bytes().await.unwrap()[..]).unwrap();
    assert_eq!(status.code, 3);
    assert!(
        status.message.starts_with("invalid OTLP protobuf body: "),
        "{}",
        status.message
    );
    assert_still_serving(&server, None).await;
    server.shutdown().await.unwrap();
    assert_eq!(
        stored_span_ids(dir.path()),
        vec!["eee19b7ec3c1b174".to_string()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_with_wrong_types_is_400_with_a_json_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let resp = post_json(server.http_addr(), fixture("wrong-types.json")).await;
    assert_eq!(resp.status(), 400);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let status = json_answer(resp).await;
    assert_eq!(status["code"], 3);
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains("resourceSpans[0].scopeSpans[0].spans"),
        "message names the bad field: {message}"
    );
    assert_still_serving(&server, None).await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ids_are_a_partial_success() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let resp = post_json(server.http_addr(), fixture("bad-ids.json")).await;
    assert_eq!(resp.status(), 200);
    let answer = json_answer(resp).await;
    assert_eq!(answer["partialSuccess"]["rejectedSpans"], "2");
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(!message.is_empty());
    server.shutdown().await.unwrap();
    assert_eq!(
        stored_span_ids(dir.path()),
        vec!["1111111111111111".to_string()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_content_type_and_encoding_are_415() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let resp = post(
        server.http_addr(),
        fixture("valid.json"),
        "text/plain",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 415);
    let status = json_answer(resp).await;
    assert_eq!(
        status["message"],
        "unsupported content type `text/plain`; send application/x-protobuf or application/json"
    );
    let resp = post(
        server.http_addr(),
        fixture("valid.json"),
        "application/json",
        Some("br"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 415);
    assert_still_serving(&server, None).await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_cap_and_gzip_bombs_are_413() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_body_bytes = 64 * 1024;
    })
    .await;

    let resp = post(
        server.http_addr(),
        vec![0x0a; 96 * 1024],
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 413);

    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![0u8; 16 * 1024 * 1024]).unwrap();
    let bomb = enc.finish().unwrap();
    assert!(
        bomb.len() < 64 * 1024,
        "the compressed bomb is under the cap: {}",
        bomb.len()
    );
    let resp = post(
        server.http_addr(),
        bomb,
        "application/x-protobuf",
        Some("gzip"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 413);
    let status = RpcStatus::decode(&resp.bytes().await.unwrap()[..]).unwrap();
    assert_eq!(
        status.message,
        "request body exceeds the limit of 65536 bytes after decompression; send smaller batches (or raise --max-body-bytes)"
    );
    assert_still_serving(&server, None).await;
    server.shutdown().await.unwrap();
    assert_eq!(stored_span_ids(dir.path()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_or_wrong_token_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.auth_token = Some("s3cret".into());
    })
    .await;
    let resp = post_json(server.http_addr(), fixture("valid.json")).await;
    assert_eq!(resp.status(), 401);
    let resp = post(
        server.http_addr(),
        fixture("valid.json"),
        "application/json",
        None,
        Some("nope"),
    )
    .await;
    assert_eq!(resp.status(), 401);
    assert_still_serving(&server, Some("s3cret")).await;
    server.shutdown().await.unwrap();
    assert_eq!(
        stored_span_ids(dir.path()).len(),
        1,
        "only the authorised request is stored"
    );
}

/// A collector whose queue holds one batch, with its writer paused and one accepted request
/// queued: the next request finds the queue full.
async fn full_queue_server(dir: &std::path::Path) -> collector::Server {
    let server = start_with(dir, |config| {
        config.pipeline.max_queue_batches = 1;
    })
    .await;
    server.pipeline().pause_writer(true);
    let first = post_json(server.http_addr(), fixture("valid.json")).await;
    assert_eq!(first.status(), 200);
    server
}

/// The refused requests wrote nothing: the store holds the span of `valid.json` twice (the two
/// accepted copies), and no other.
fn assert_two_valid_requests_stored(dir: &std::path::Path) {
    assert_eq!(
        stored_span_ids(dir),
        vec![
            "eee19b7ec3c1b174".to_string(),
            "eee19b7ec3c1b174".to_string()
        ],
        "only the two accepted requests are stored"
    );
}

/// Resumes the writer of a [`full_queue_server`], waits until the queue is empty and checks a new
/// request is accepted.
async fn drain_and_check_still_serving(server: &collector::Server) {
    server.pipeline().pause_writer(false);
    while server.pipeline().queued_batches() > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_still_serving(server, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_queue_is_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = full_queue_server(dir.path()).await;
    let refused = post_json(server.http_addr(), fixture("bad-ids.json")).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(
        server.stats().requests_by_status().get("http:429"),
        Some(&1)
    );
    drain_and_check_still_serving(&server).await;
    server.shutdown().await.unwrap();
    assert_two_valid_requests_stored(dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_queue_refuses_before_the_body_is_decoded() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let server = full_queue_server(dir.path()).await;
    let decoded = || server.stats().requests_decoded.load(Ordering::Relaxed);
    assert_eq!(decoded(), 1);
    // A body that would be a 400 if it were decoded: refused at admission it is a 429.
    let refused = post(
        server.http_addr(),
        fixture("truncated.pb"),
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    let status = RpcStatus::decode(&refused.bytes().await.unwrap()[..]).unwrap();
    assert_eq!(status.code, 8, "RESOURCE_EXHAUSTED");
    assert!(
        status
            .message
            .starts_with("the collector is overloaded (1 batches waiting to be written)"),
        "{}",
        status.message
    );
    assert_eq!(decoded(), 1, "the refused body was never decoded");
    assert_eq!(
        server.stats().requests_by_status().get("http:400"),
        None,
        "nothing was parsed, so nothing was found invalid"
    );
    drain_and_check_still_serving(&server).await;
    assert_eq!(decoded(), 2);
    server.shutdown().await.unwrap();
}

/// A request the writer queue has no room for is refused before it is decoded, although the
/// queue is not full (a small request still gets in): before its body is read when it is plain
/// protobuf of a declared length, after decompression when it is gzip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_queue_has_no_room_for_is_refused_before_its_decode() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.pipeline.max_queue_batches = 16;
        config.pipeline.max_queue_bytes = 64 * 1024;
    })
    .await;
    server.pipeline().pause_writer(true);
    let first = post_json(server.http_addr(), fixture("valid.json")).await;
    assert_eq!(first.status(), 200);
    let decoded = || server.stats().requests_decoded.load(Ordering::Relaxed);
    assert_eq!(decoded(), 1);
    assert!(!server.pipeline().is_full(), "one small batch is queued");
    // 200 spans: at least 512 bytes of row each, over the 64 KiB the queue holds.
    let spans: Vec<_> = (0..100).flat_map(|i| tool_call_spans(i, T0)).collect();
    let big = request("big", spans).encode_to_vec();
    let spans = schemas::decode::recycling::count_spans(&big).unwrap();
    assert!(spans * 512 > 64 * 1024, "{spans} spans");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&big).unwrap();
    let gzipped = gz.finish().unwrap();
    for (body, encoding) in [(big, None), (gzipped, Some("gzip"))] {
        let refused = post(
            server.http_addr(),
            body,
            "application/x-protobuf",
            encoding,
            None,
        )
        .await;
        assert_eq!(refused.status(), 429, "{encoding:?}");
        assert_eq!(refused.headers()["retry-after"], "1");
        let status = RpcStatus::decode(&refused.bytes().await.unwrap()[..]).unwrap();
        assert_eq!(status.code, 8, "RESOURCE_EXHAUSTED");
        assert!(
            status.message.starts_with("the collector is overloaded"),
            "{}",
            status.message
        );
        assert_eq!(decoded(), 1, "{encoding:?}: refused without a decode");
    }
    // The plain body was refused before it was read (its spans unknown), the gzip one after
    // its decompression, with its spans counted from the framing.
    assert_eq!(
        server.stats().spans_refused.load(Ordering::Relaxed),
        spans,
        "the gzip body's spans are counted as refused"
    );
    // The queue is not full: a small request is still accepted.
    let small = post_json(server.http_addr(), fixture("valid.json")).await;
    assert_eq!(small.status(), 200);
    assert_eq!(decoded(), 2);
    server.pipeline().pause_writer(false);
    server.shutdown().await.unwrap();
    assert_two_valid_requests_stored(dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_request_larger_than_the_inflight_budget_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    let body = fixture("valid.json");
    config.max_inflight_bytes = body.len() / 2;
    let server = collector::Server::start(config).await.unwrap();
    let resp = post_json(server.http_addr(), body).await;
    assert_eq!(resp.status(), 200);
    server.shutdown().await.unwrap();
    assert_eq!(
        stored_span_ids(dir.path()),
        vec!["eee19b7ec3c1b174".to_string()]
    );
}
