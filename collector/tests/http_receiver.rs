//! OTLP/HTTP end to end over a real socket: protobuf and JSON bodies of the same spans give
//! identical Parquet rows; gzip and zstd bodies are accepted; the answer is a real
//! `ExportTraceServiceResponse` in the request's encoding.

mod common;

use std::io::Write;

use arrow::array::{Array, BinaryArray, Int64Array};
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message;

fn sample() -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
    let mut spans = tool_call_spans(1, T0);
    spans.extend(tool_call_spans(2, T0 + 3_600_000_000_000 * 5)); // another hour partition
    request("parity-svc", spans)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_and_json_bodies_store_identical_rows() {
    let pb_dir = tempfile::tempdir().unwrap();
    let js_dir = tempfile::tempdir().unwrap();
    let req = sample();

    let pb_server = start(pb_dir.path()).await;
    let resp = export_ok(pb_server.http_addr(), &req).await;
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/x-protobuf"
    );
    let body = resp.bytes().await.unwrap();
    let answer = ExportTraceServiceResponse::decode(&body[..]).unwrap();
    assert_eq!(answer.partial_success, None, "nothing rejected");
    pb_server.shutdown().await.unwrap();

    let js_server = start(js_dir.path()).await;
    let json = serde_json::to_vec(&req).unwrap();
    let resp = post_json(js_server.http_addr(), json).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    assert_eq!(resp.text().await.unwrap(), "{}");
    js_server.shutdown().await.unwrap();

    let pb_rows = store_rows(pb_dir.path(), &["received_at"]);
    let js_rows = store_rows(js_dir.path(), &["received_at"]);
    assert_eq!(pb_rows.num_rows(), 4);
    assert_eq!(pb_rows, js_rows, "protobuf and JSON give the same rows");

    // And the rows hold what was sent.
    let ids = pb_rows
        .column_by_name("span_id")
        .unwrap()
        .as_any()
        .downcast_ref::<BinaryArray>()
        .unwrap();
    assert_eq!(ids.value(0), span_id(2).as_slice());
    let parents = pb_rows
        .column_by_name("parent_span_id")
        .unwrap()
        .as_any()
        .downcast_ref::<BinaryArray>()
        .unwrap();
    assert!(parents.is_null(0), "a root has no parent");
    assert_eq!(parents.value(1), span_id(2).as_slice());
    assert_eq!(
        strings(&pb_rows, "name"),
        vec![
            Some("execute_tool get_ticket".to_string()),
            Some("tools/call get_ticket".to_string()),
            Some("execute_tool get_ticket".to_string()),
            Some("tools/call get_ticket".to_string()),
        ]
    );
    assert_eq!(
        strings(&pb_rows, "service_name"),
        vec![Some("parity-svc".to_string()); 4]
    );
    assert_eq!(
        strings(&pb_rows, "mcp_method_name")[1].as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        strings(&pb_rows, "gen_ai_tool_name")[0].as_deref(),
        Some("get_ticket")
    );
    assert_eq!(
        strings(&pb_rows, "ingest_source")[0].as_deref(),
        Some("otlp-http")
    );
    let start = pb_rows
        .column_by_name("start_time_unix_nano")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(start.value(0), T0 as i64);

    // Hive layout: two hour partitions, hour not zero-padded.
    let dirs = testkit::store::partition_dirs(pb_dir.path());
    assert_eq!(
        dirs,
        vec![
            "spans/date=2026-11-30/hour=10",
            "spans/date=2026-11-30/hour=15"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_and_zstd_bodies_are_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;

    let gz_req = request("gzip-svc", tool_call_spans(10, T0));
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&gz_req.encode_to_vec()).unwrap();
    let resp = post(
        server.http_addr(),
        enc.finish().unwrap(),
        "application/x-protobuf",
        Some("gzip"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);

    let zs_req = request("zstd-svc", tool_call_spans(11, T0));
    let json = serde_json::to_vec(&zs_req).unwrap();
    let resp = post(
        server.http_addr(),
        zstd::encode_all(&json[..], 3).unwrap(),
        "application/json",
        Some("zstd"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "{}");

    server.shutdown().await.unwrap();
    assert_eq!(
        stored_services(dir.path()),
        ["gzip-svc", "gzip-svc", "zstd-svc", "zstd-svc"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_carries_the_schema_version_and_wal_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    export_ok(
        server.http_addr(),
        &request("meta-svc", tool_call_spans(1, T0)),
    )
    .await;
    server.shutdown().await.unwrap();
    let files = part_files(dir.path());
    assert_eq!(files.len(), 1);
    let reader =
        parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&files[0]).unwrap())
            .unwrap();
    use parquet::file::reader::FileReader;
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .clone();
    let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
    assert_eq!(
        get(schemas::SCHEMA_VERSION_KEY).as_deref(),
        Some(schemas::SCHEMA_VERSION)
    );
    assert_eq!(get("tripline.wal.first_seq").as_deref(), Some("0"));
    assert_eq!(get("tripline.wal.last_seq").as_deref(), Some("0"));
    // Every column of the canonical schema is present.
    let rows = store_rows(dir.path(), &[]);
    assert_eq!(
        rows.schema().fields().len(),
        schemas::span_schema().fields().len()
    );
}

/// Bytes of every file under `dir` (WAL segments, part files, checkpoint), concatenated.
fn all_bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            out.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    out
}

/// A trace request whose tool call carries `secret` in its arguments.
fn request_with_content(
    secret: &str,
) -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
    let mut spans = tool_call_spans(7, T0);
    spans[0].attributes.push(synth::kv::kv_str(
        "gen_ai.tool.call.arguments",
        format!("{{\"note\":\"{secret}\"}}"),
    ));
    request("redact-svc", spans)
}

/// Requests are written to the WAL as received and converted after the append, except under
/// `--redact-content`: then they are converted (and redacted) first, so unredacted content never
/// reaches the disk, neither the WAL nor Parquet. The same check without redaction finds the
/// secret in the WAL, so it can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redaction_no_content_reaches_the_disk() {
    for redact in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let server = start_with(dir.path(), |c| c.redact_content = redact).await;
        let secret = "sk-tripline-secret-4242";
        let resp = export(server.http_addr(), &request_with_content(secret)).await;
        assert_eq!(resp.status(), 200);
        // Acknowledged: in the WAL, not yet in a committed part file.
        let before = all_bytes_under(dir.path());
        let found = before.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert_eq!(found, !redact, "secret in the WAL with redact={redact}");
        server.shutdown().await.unwrap();
        let after = all_bytes_under(dir.path());
        if redact {
            assert!(!after.windows(secret.len()).any(|w| w == secret.as_bytes()));
        }
        assert_eq!(stored_span_ids(dir.path()).len(), 2);
    }
}
