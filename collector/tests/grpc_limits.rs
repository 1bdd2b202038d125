//! OTLP/gRPC refusals over a raw HTTP/2 connection (so the test controls every byte): the token
//! is checked before the message is read, malformed messages are INVALID_ARGUMENT, messages
//! over the cap are RESOURCE_EXHAUSTED *without* RetryInfo (OTLP exporters must not resend
//! them), and a full queue is RESOURCE_EXHAUSTED *with* RetryInfo.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::*;
use prost::Message;
use tokio::net::TcpStream;

const PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// What came back: grpc-status, whether RetryInfo details were attached, the message.
#[derive(Debug)]
struct Answer {
    code: i32,
    has_details: bool,
    message: String,
}

/// Open an HTTP/2 stream, send `frames` (ending the stream when `end`), read the gRPC status
/// from the headers (trailers-only answer) or the trailers; within 5 s.
async fn raw_call(
    addr: std::net::SocketAddr,
    token: Option<&str>,
    frames: Vec<Bytes>,
    end: bool,
) -> Answer {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.unwrap();
    let mut builder = http::Request::post(format!("http://{addr}{PATH}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(t) = token {
        builder = builder.header("authorization", format!("Bearer {t}"));
    }
    let (response, mut stream) = client
        .send_request(builder.body(()).unwrap(), false)
        .unwrap();
    let n = frames.len();
    for (i, f) in frames.into_iter().enumerate() {
        stream.reserve_capacity(f.len());
        let _ = stream.send_data(f, end && i + 1 == n);
    }
    let answer = async {
        let response = response.await.unwrap();
        let (parts, mut body) = response.into_parts();
        let headers = if parts.headers.contains_key("grpc-status") {
            parts.headers
        } else {
            while let Some(chunk) = body.data().await {
                let _ = chunk;
            }
            body.trailers().await.unwrap().unwrap_or_default()
        };
        Answer {
            code: headers["grpc-status"].to_str().unwrap().parse().unwrap(),
            has_details: headers.contains_key("grpc-status-details-bin"),
            message: headers
                .get("grpc-message")
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default(),
        }
    };
    tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("answered within 5 s")
}

/// A gRPC length-prefixed message frame header (uncompressed).
fn prefix(len: u32) -> Bytes {
    let mut v = vec![0u8];
    v.extend_from_slice(&len.to_be_bytes());
    Bytes::from(v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_calls_are_refused_before_the_message_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.auth_token = Some("tok".into());
    })
    .await;

    // Announces a 60 MiB message, sends 64 KiB of it and never ends the stream: the answer can
    // only come before the message is read.
    let frames = vec![prefix(60 * 1024 * 1024), Bytes::from(vec![0u8; 64 * 1024])];
    let answer = raw_call(server.grpc_addr(), None, frames.clone(), false).await;
    assert_eq!(
        answer.code,
        tonic::Code::Unauthenticated as i32,
        "{answer:?}"
    );
    let answer = raw_call(server.grpc_addr(), Some("wrong"), frames, false).await;
    assert_eq!(
        answer.code,
        tonic::Code::Unauthenticated as i32,
        "{answer:?}"
    );
    assert_eq!(
        server.stats().requests_by_status().get("grpc:401"),
        Some(&2)
    );

    // With the token, a real export passes.
    let body = request("svc", tool_call_spans(1, T0)).encode_to_vec();
    let frames = vec![prefix(body.len() as u32), Bytes::from(body)];
    let answer = raw_call(server.grpc_addr(), Some("tok"), frames, true).await;
    assert_eq!(answer.code, 0, "{answer:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_is_invalid_argument_and_over_the_cap_is_not_retryable() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_body_bytes = 64 * 1024;
    })
    .await;

    // Not a protobuf ExportTraceServiceRequest.
    let garbage = Bytes::from_static(&[0xff; 32]);
    let answer = raw_call(server.grpc_addr(), None, vec![prefix(32), garbage], true).await;
    assert_eq!(
        answer.code,
        tonic::Code::InvalidArgument as i32,
        "{answer:?}"
    );

    // The stream ends in the middle of a message.
    let answer = raw_call(
        server.grpc_addr(),
        None,
        vec![prefix(100), Bytes::from(vec![0u8; 10])],
        true,
    )
    .await;
    assert_eq!(
        answer.code,
        tonic::Code::InvalidArgument as i32,
        "{answer:?}"
    );

    // A message announced over the cap (tonic's OUT_OF_RANGE, rewritten).
    let answer = raw_call(server.grpc_addr(), None, vec![prefix(1024 * 1024)], false).await;
    assert_eq!(
        answer.code,
        tonic::Code::ResourceExhausted as i32,
        "{answer:?}"
    );
    assert!(!answer.has_details, "no RetryInfo: resending cannot help");

    // Bytes over the cap actually sent (the body cap of the receiver).
    let frames = vec![prefix(100 * 1024), Bytes::from(vec![0u8; 100 * 1024])];
    let answer = raw_call(server.grpc_addr(), None, frames, true).await;
    assert_eq!(
        answer.code,
        tonic::Code::ResourceExhausted as i32,
        "{answer:?}"
    );
    assert!(!answer.has_details, "no RetryInfo: resending cannot help");

    let counts = server.stats().requests_by_status();
    assert_eq!(counts.get("grpc:400"), Some(&2), "{counts:?}");
    assert_eq!(counts.get("grpc:413"), Some(&2), "{counts:?}");

    // Still serving.
    let body = request("svc", tool_call_spans(1, T0)).encode_to_vec();
    let frames = vec![prefix(body.len() as u32), Bytes::from(body)];
    assert_eq!(
        raw_call(server.grpc_addr(), None, frames, true).await.code,
        0
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_bodies_are_charged_to_the_shared_budget() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_inflight_bytes = 256 * 1024;
    })
    .await;

    // An HTTP upload holds 200 KiB of the budget...
    let mut holder = hold_budget(server.http_addr(), 1_000_000, 200 * 1024).await;
    // ... so a gRPC message of 100 KiB no longer fits: RESOURCE_EXHAUSTED with RetryInfo.
    let mut answer = None;
    // Polled up to a deadline, not a count: on a loaded CI machine the HTTP bytes can take a while.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        // The upload's headers may have reached the collector while an earlier gRPC message
        // held part of the budget: then the upload itself was refused (429) and holds nothing.
        // Start it again.
        if answered(&holder) {
            holder = hold_budget(server.http_addr(), 1_000_000, 200 * 1024).await;
        }
        let frames = vec![prefix(100 * 1024), Bytes::from(vec![0u8; 100 * 1024])];
        let a = raw_call(server.grpc_addr(), None, frames, true).await;
        if a.code == tonic::Code::ResourceExhausted as i32 {
            answer = Some(a);
            break;
        }
        // The HTTP bytes may not have arrived yet: the garbage message was refused as malformed.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answer = answer.expect("the gRPC body was refused by the shared budget");
    assert!(
        answer.has_details,
        "RetryInfo: a retry can succeed: {answer:?}"
    );
    assert!(answer.message.contains("overloaded"), "{answer:?}");
    drop(holder);
    server.shutdown().await.unwrap();
}

/// Whether the collector answered the unfinished upload (refused it) or closed it.
fn answered(holder: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    !matches!(holder.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}
