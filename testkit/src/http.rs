//! OTLP/HTTP requests to a running collector's `/v1/traces` (or `/v1/logs`), over a real socket.

use std::net::SocketAddr;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

/// Protobuf, the OTLP/HTTP default encoding.
pub const PROTOBUF: &str = "application/x-protobuf";

/// POST `body` to `http://{addr}/v1/traces` with its content type, an optional
/// `Content-Encoding` and an optional bearer token; whatever the collector answers.
pub async fn post(
    addr: SocketAddr,
    body: Vec<u8>,
    content_type: &str,
    encoding: Option<&str>,
    token: Option<&str>,
) -> reqwest::Response {
    post_to(addr, "/v1/traces", body, content_type, encoding, token).await
}

/// [`post`] to another path of the collector (`/v1/logs`).
pub async fn post_to(
    addr: SocketAddr,
    path: &str,
    body: Vec<u8>,
    content_type: &str,
    encoding: Option<&str>,
    token: Option<&str>,
) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .header("content-type", content_type)
        .body(body);
    if let Some(e) = encoding {
        req = req.header("content-encoding", e);
    }
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    req.send().await.expect("request reaches the collector")
}

/// POST a JSON body (OTLP/JSON), uncompressed, without a token.
pub async fn post_json(addr: SocketAddr, body: Vec<u8>) -> reqwest::Response {
    post(addr, body, "application/json", None, None).await
}

/// The body of an answer parsed as JSON (an OTLP/JSON answer or `google.rpc.Status`).
pub async fn json_answer(resp: reqwest::Response) -> serde_json::Value {
    let body = resp.bytes().await.expect("read the answer");
    serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "the answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    })
}

/// POST `request` as protobuf, uncompressed, without a token.
pub async fn export(addr: SocketAddr, request: &ExportTraceServiceRequest) -> reqwest::Response {
    post(addr, request.encode_to_vec(), PROTOBUF, None, None).await
}

/// POST `request` as protobuf and expect it acknowledged (200); the response, for its headers
/// and body. A refusal fails the test with the collector's status and answer.
pub async fn export_ok(addr: SocketAddr, request: &ExportTraceServiceRequest) -> reqwest::Response {
    let resp = export(addr, request).await;
    assert_ok(resp).await
}

/// `resp` if it is 200, else fail the test with its status and body.
pub async fn assert_ok(resp: reqwest::Response) -> reqwest::Response {
    if resp.status() != 200 {
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        panic!(
            "expected 200, got {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    resp
}
