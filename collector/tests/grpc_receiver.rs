//! OTLP/gRPC end to end with tonic's generated client: plain and gzip-compressed exports are
//! stored, and the response is a real `ExportTraceServiceResponse`.

mod common;

use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use tonic::codec::CompressionEncoding;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_and_gzip_exports_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let url = format!("http://{}", server.grpc_addr());

    let mut plain = TraceServiceClient::connect(url.clone()).await.unwrap();
    let answer = plain
        .export(request("grpc-plain", tool_call_spans(1, T0)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.partial_success, None);

    let mut gzip = TraceServiceClient::connect(url)
        .await
        .unwrap()
        .send_compressed(CompressionEncoding::Gzip);
    let answer = gzip
        .export(request("grpc-gzip", tool_call_spans(2, T0)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.partial_success, None);

    server.shutdown().await.unwrap();
    assert_eq!(
        stored_services(dir.path()),
        ["grpc-gzip", "grpc-gzip", "grpc-plain", "grpc-plain"]
    );
    let rows = store_rows(dir.path(), &[]);
    assert_eq!(
        strings(&rows, "ingest_source"),
        vec![Some("otlp-grpc".to_string()); 4]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_refuses_without_token_and_when_the_queue_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.auth_token = Some("tok".into());
        config.pipeline.max_queue_batches = 1;
    })
    .await;
    let url = format!("http://{}", server.grpc_addr());
    let mut client = TraceServiceClient::connect(url).await.unwrap();

    let err = client
        .export(request("x", tool_call_spans(1, T0)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);

    server.pipeline().pause_writer(true);
    let authed = |n: u64| {
        let mut r = tonic::Request::new(request("x", tool_call_spans(n, T0)));
        r.metadata_mut()
            .insert("authorization", "Bearer tok".parse().unwrap());
        r
    };
    client.export(authed(2)).await.unwrap();
    let err = client.export(authed(3)).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::ResourceExhausted);
    server.pipeline().pause_writer(false);
    server.shutdown().await.unwrap();
    assert_eq!(
        stored_span_ids(dir.path()).len(),
        2,
        "only the accepted request is stored"
    );
}
