//! Helpers shared by the collector's integration tests: an in-process collector on port 0 in a
//! temporary store, OTLP requests with GenAI / MCP spans, and a Parquet reader for the store.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use arrow::array::{Array, BinaryArray, StringArray};
use arrow::record_batch::RecordBatch;
use collector::{Server, ServerConfig};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
// Each test binary uses some of these.
#[allow(unused_imports)]
pub use synth::kv::{kv_int, kv_str};
#[allow(unused_imports)]
pub use testkit::http::{export, export_ok, json_answer, post, post_json};
#[allow(unused_imports)]
pub use testkit::store::part_files;

/// 2026-11-30T10:00:00Z in nanoseconds.
pub const T0: u64 = 1_796_032_800_000_000_000;

/// A collector configuration for tests: loopback port 0, small files, fast rolls.
pub fn config(data_dir: &Path) -> ServerConfig {
    let mut c = ServerConfig::new(data_dir);
    c.http = "127.0.0.1:0".parse().expect("literal address");
    c.grpc = "127.0.0.1:0".parse().expect("literal address");
    c.stats_interval = Duration::from_secs(3600);
    c
}

/// A collector on [`config`] changed by `adjust`.
pub async fn start_with(data_dir: &Path, adjust: impl FnOnce(&mut ServerConfig)) -> Server {
    let mut c = config(data_dir);
    adjust(&mut c);
    Server::start(c).await.expect("collector starts")
}

pub async fn start(data_dir: &Path) -> Server {
    Server::start(config(data_dir))
        .await
        .expect("collector starts")
}

/// A deterministic 16-byte trace id / 8-byte span id derived from `n`.
pub fn trace_id(n: u64) -> Vec<u8> {
    let mut v = vec![0xab; 8];
    v.extend_from_slice(&(n + 1).to_be_bytes());
    v
}

pub fn span_id(n: u64) -> Vec<u8> {
    (n + 1).to_be_bytes().to_vec()
}

/// One MCP tool call: an `execute_tool` span and its server child, with GenAI / MCP / skill /
/// guardrail attributes, an event and a link.
pub fn tool_call_spans(n: u64, start: u64) -> Vec<Span> {
    let tid = trace_id(n);
    let parent = span_id(n * 2);
    let child = span_id(n * 2 + 1);
    vec![
        Span {
            trace_id: tid.clone(),
            span_id: parent.clone(),
            trace_state: "vendor=1".into(),
            name: "execute_tool get_ticket".into(),
            kind: span::SpanKind::Internal as i32,
            start_time_unix_nano: start,
            end_time_unix_nano: start + 5_000_123,
            attributes: vec![
                kv_str("gen_ai.operation.name", "execute_tool"),
                kv_str("gen_ai.tool.name", "get_ticket"),
                kv_str("gen_ai.tool.call.id", format!("call-{n}")),
                kv_str("skill.name", "triage"),
                kv_str("guardrail.decision", "allow"),
                kv_int("custom.count", n as i64),
            ],
            events: vec![span::Event {
                time_unix_nano: start + 1,
                name: "checkpoint".into(),
                attributes: vec![kv_int("step", 1)],
                dropped_attributes_count: 0,
            }],
            flags: 0x101,
            ..Default::default()
        },
        Span {
            trace_id: tid,
            span_id: child,
            parent_span_id: parent,
            name: "tools/call get_ticket".into(),
            kind: span::SpanKind::Server as i32,
            start_time_unix_nano: start + 1_000,
            end_time_unix_nano: start + 4_000_000,
            attributes: vec![
                kv_str("mcp.method.name", "tools/call"),
                kv_str("jsonrpc.request.id", n.to_string()),
                kv_str("gen_ai.tool.name", "get_ticket"),
                kv_str("error.type", "tool_error"),
            ],
            status: Some(Status {
                message: "boom".into(),
                code: 2,
            }),
            links: vec![span::Link {
                trace_id: trace_id(n + 1000),
                span_id: span_id(n + 1000),
                ..Default::default()
            }],
            ..Default::default()
        },
    ]
}

/// A request holding `spans` for service `service`.
pub fn request(service: &str, spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    kv_str("service.name", service),
                    kv_str("service.version", "1.2.3"),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "test-scope".into(),
                    version: "0.1".into(),
                    ..Default::default()
                }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// All rows of the store, one batch per file.
pub fn read_store(data_dir: &Path) -> Vec<RecordBatch> {
    part_files(data_dir)
        .iter()
        .flat_map(|p| {
            let f = std::fs::File::open(p).expect("part file opens");
            ParquetRecordBatchReaderBuilder::try_new(f)
                .expect("valid parquet")
                .build()
                .expect("reader")
                .map(|b| b.expect("batch"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// All rows as one batch (canonical schema), sorted by span id, without `columns_to_drop`.
pub fn store_rows(data_dir: &Path, columns_to_drop: &[&str]) -> RecordBatch {
    let batches = read_store(data_dir);
    let schema = batches
        .first()
        .map(|b| b.schema())
        .unwrap_or_else(schemas::span_schema);
    let all = arrow::compute::concat_batches(&schema, &batches).expect("concat");
    let ids = all
        .column_by_name("span_id")
        .expect("span_id column")
        .as_any()
        .downcast_ref::<BinaryArray>()
        .expect("binary span ids")
        .clone();
    let mut order: Vec<u32> = (0..all.num_rows() as u32).collect();
    order.sort_by_key(|i| ids.value(*i as usize).to_vec());
    let sorted = arrow::compute::take_record_batch(&all, &arrow::array::UInt32Array::from(order))
        .expect("take");
    let keep: Vec<usize> = sorted
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| !columns_to_drop.contains(&f.name().as_str()))
        .map(|(i, _)| i)
        .collect();
    sorted.project(&keep).expect("project")
}

/// Span ids in the store as hex, in storage order.
pub fn stored_span_ids(data_dir: &Path) -> Vec<String> {
    read_store(data_dir)
        .iter()
        .flat_map(|b| {
            let ids = b
                .column_by_name("span_id")
                .expect("span_id")
                .as_any()
                .downcast_ref::<BinaryArray>()
                .expect("binary")
                .clone();
            (0..ids.len())
                .map(|i| hex(ids.value(i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The service name of every stored span, sorted.
pub fn stored_services(data_dir: &Path) -> Vec<String> {
    let mut services: Vec<String> = strings(&store_rows(data_dir, &[]), "service_name")
        .into_iter()
        .flatten()
        .collect();
    services.sort();
    services
}

/// The string column `name` of a batch.
pub fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let a = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"))
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap_or_else(|| panic!("{name} is utf8"))
        .clone();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
        .collect()
}

/// An HTTP/1.1 trace upload that declares `declared` body bytes, sends `sent` of them and then
/// waits: it holds `sent` bytes of the in-flight budget once they are charged, until dropped (or
/// refused).
pub async fn hold_budget(
    addr: std::net::SocketAddr,
    declared: usize,
    sent: usize,
) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut holder = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: {declared}\r\n\r\n"
    );
    holder.write_all(head.as_bytes()).await.unwrap();
    holder.write_all(&vec![0u8; sent]).await.unwrap();
    holder
}
