//! `--endpoint` mode: the host and the MCP server process each export through their own SDK
//! pipeline over OTLP/HTTP protobuf to a receiver (here the crate's sink on a loopback port), and
//! the server's `tools/call` span is a child of the host's client span (context crossed `_meta`).

use std::process::Command;

use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
use opentelemetry_proto::tonic::trace::v1::Span;

fn service(rs: &opentelemetry_proto::tonic::trace::v1::ResourceSpans) -> String {
    rs.resource
        .as_ref()
        .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| match &v.value {
            Some(V::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_mode_exports_from_both_processes_with_stitched_context() {
    let sink = samples::sink::Sink::start().await.expect("sink");
    let url = sink.endpoint();
    let status = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tripline-samples"))
            .args(["--only", "support-masked-error", "--endpoint", &url])
            .status()
    })
    .await
    .expect("join")
    .expect("run tripline-samples");
    assert!(status.success());
    let merged = samples::sink::merge(sink.take());
    let services: Vec<String> = merged.resource_spans.iter().map(service).collect();
    assert_eq!(services, ["acme-support-mcp", "support-assistant-host"]);
    let spans = |i: usize| -> Vec<&Span> {
        merged.resource_spans[i]
            .scope_spans
            .iter()
            .flat_map(|ss| &ss.spans)
            .collect()
    };
    let server_call = spans(0)
        .into_iter()
        .find(|s| s.name == "tools/call get_order_summary")
        .expect("server tools/call span");
    let client_call = spans(1)
        .into_iter()
        .find(|s| s.name == "tools/call get_order_summary")
        .expect("client tools/call span");
    assert_eq!(server_call.trace_id, client_call.trace_id);
    assert_eq!(server_call.parent_span_id, client_call.span_id);
    assert!(server_call.start_time_unix_nano >= client_call.start_time_unix_nano);
    assert!(server_call.end_time_unix_nano <= client_call.end_time_unix_nano);
    // masked error: the server span carries no error.type and no ERROR status
    assert!(!server_call
        .attributes
        .iter()
        .any(|kv| kv.key == "error.type"));
    assert_ne!(server_call.status.as_ref().map(|s| s.code), Some(2));
}
