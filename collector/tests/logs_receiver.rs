//! OTLP logs end to end over real sockets: `POST /v1/logs` (protobuf and JSON, gzip) and the gRPC
//! LogsService on the collector's one gRPC port store the records in `logs/` (Hive partitions by
//! the record's time, the log schema), next to spans; bad bodies get 400, oversize ones 413, a
//! missing token 401; records with bad ids are answered with `partial_success`; redaction covers
//! bodies and content attributes.

mod common;

use std::io::Write;

use arrow::array::{Array, BinaryArray, BooleanArray, Int64Array};
use arrow::record_batch::RecordBatch;
use common::*;
use opentelemetry_proto::tonic::collector::logs::v1::logs_service_client::LogsServiceClient;
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use prost::Message;
use schemas::logs::schema::col;
use tonic::codec::CompressionEncoding;

fn text(s: &str) -> Option<AnyValue> {
    Some(AnyValue {
        value: Some(any_value::Value::StringValue(s.to_string())),
    })
}

/// A GenAI event of span `n` at `time`.
fn record(n: u64, time: u64, event: &str, body: &str) -> LogRecord {
    LogRecord {
        time_unix_nano: time,
        observed_time_unix_nano: time + 5,
        severity_number: 9,
        severity_text: "INFO".into(),
        body: text(body),
        attributes: vec![
            kv_str("gen_ai.provider.name", "openai"),
            kv_str("gen_ai.tool.call.result", "{\"content\":[]}"),
        ],
        trace_id: trace_id(n),
        span_id: span_id(n),
        event_name: event.into(),
        ..Default::default()
    }
}

fn logs_request(service: &str, records: Vec<LogRecord>) -> ExportLogsServiceRequest {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource {
                attributes: vec![kv_str("service.name", service)],
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: "genai.events".into(),
                    version: "0.9.0".into(),
                    ..Default::default()
                }),
                log_records: records,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// POST `body` to the collector's `/v1/logs`.
async fn post_logs(
    addr: std::net::SocketAddr,
    body: Vec<u8>,
    content_type: &str,
    encoding: Option<&str>,
    token: Option<&str>,
) -> reqwest::Response {
    testkit::http::post_to(addr, "/v1/logs", body, content_type, encoding, token).await
}

/// Every row of `<data>/logs`, one batch, sorted by time.
fn log_rows(data_dir: &std::path::Path) -> RecordBatch {
    let files: Vec<_> = walkdir::WalkDir::new(schemas::layout::logs_dir(data_dir))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| schemas::layout::is_part_file(&e.file_name().to_string_lossy()))
        .map(|e| e.into_path())
        .collect();
    let mut batches = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(data_dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            rel.starts_with("logs/date=") && rel.contains("/hour="),
            "{rel}"
        );
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(f).unwrap())
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(|b| b.unwrap()));
    }
    let all = arrow::compute::concat_batches(&schemas::logs::log_schema(), &batches).unwrap();
    let times = all
        .column_by_name(col::TIME_UNIX_NANO)
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .clone();
    let mut order: Vec<u32> = (0..all.num_rows() as u32).collect();
    order.sort_by_key(|i| times.value(*i as usize));
    arrow::compute::take_record_batch(&all, &arrow::array::UInt32Array::from(order)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_protobuf_json_gzip_and_grpc_logs_are_stored_in_logs() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let hour = 3_600_000_000_000u64;

    // protobuf, with a span in the same request stream
    export_ok(
        server.http_addr(),
        &request("logs-svc", tool_call_spans(1, T0)),
    )
    .await;
    let pb = logs_request(
        "logs-svc",
        vec![record(1, T0 + 10, "gen_ai.user.message", "hi")],
    );
    let resp = post_logs(
        server.http_addr(),
        pb.encode_to_vec(),
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/x-protobuf"
    );
    let answer = ExportLogsServiceResponse::decode(&resp.bytes().await.unwrap()[..]).unwrap();
    assert_eq!(answer.partial_success, None);

    // OTLP/JSON, in another hour, with enum names and string numbers
    let json = format!(
        r#"{{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"logs-svc"}}}}]}},
        "scopeLogs":[{{"scope":{{"name":"genai.events"}},"logRecords":[{{"timeUnixNano":"{}","severityNumber":"SEVERITY_NUMBER_WARN",
        "traceId":"{}","spanId":"{}","eventName":"gen_ai.choice",
        "body":{{"kvlistValue":{{"values":[{{"key":"index","value":{{"intValue":"0"}}}},{{"key":"message","value":{{"kvlistValue":{{"values":[{{"key":"content","value":{{"stringValue":"done"}}}}]}}}}}}]}}}}}}]}}]}}]}}"#,
        T0 + 2 * hour,
        hex(&trace_id(2)),
        hex(&span_id(2))
    );
    let resp = post_logs(
        server.http_addr(),
        json.into_bytes(),
        "application/json",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "{}");

    // gzip protobuf
    let gz = logs_request(
        "logs-svc",
        vec![record(3, T0 + 20, "gen_ai.tool.message", "r")],
    );
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&gz.encode_to_vec()).unwrap();
    let resp = post_logs(
        server.http_addr(),
        enc.finish().unwrap(),
        "application/x-protobuf",
        Some("gzip"),
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);

    // gRPC LogsService on the gRPC port, gzip
    let mut client = LogsServiceClient::connect(format!("http://{}", server.grpc_addr()))
        .await
        .unwrap()
        .send_compressed(CompressionEncoding::Gzip);
    let answer = client
        .export(logs_request(
            "logs-svc",
            vec![record(4, T0 + 30, "gen_ai.assistant.message", "a")],
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.partial_success, None);

    server.shutdown().await.unwrap();

    // Spans where they always were, log records in logs/.
    assert_eq!(stored_span_ids(dir.path()).len(), 2);
    let rows = log_rows(dir.path());
    assert_eq!(
        strings(&rows, col::EVENT_NAME),
        [
            "gen_ai.user.message",
            "gen_ai.tool.message",
            "gen_ai.assistant.message",
            "gen_ai.choice"
        ]
        .map(|s| Some(s.to_string()))
    );
    assert_eq!(
        strings(&rows, col::INGEST_SOURCE),
        ["otlp-http", "otlp-http", "otlp-grpc", "otlp-http"].map(|s| Some(s.to_string()))
    );
    let spans = rows
        .column_by_name(col::SPAN_ID)
        .unwrap()
        .as_any()
        .downcast_ref::<BinaryArray>()
        .unwrap();
    assert_eq!(spans.value(0), span_id(1).as_slice());
    assert_eq!(spans.value(3), span_id(2).as_slice());
    let bodies = strings(&rows, col::BODY);
    assert_eq!(bodies[0].as_deref(), Some("\"hi\""));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(bodies[3].as_deref().unwrap()).unwrap(),
        serde_json::json!({"index": 0, "message": {"content": "done"}})
    );
    let attrs: serde_json::Value =
        serde_json::from_str(strings(&rows, col::ATTRIBUTES)[0].as_deref().unwrap()).unwrap();
    assert_eq!(attrs["gen_ai.provider.name"], "openai");
    let severity = rows
        .column_by_name(col::SEVERITY_NUMBER)
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!((severity.value(0), severity.value(3)), (9, 13));
    assert_eq!(
        strings(&rows, col::SERVICE_NAME),
        vec![Some("logs-svc".to_string()); 4]
    );
    assert_eq!(
        strings(&rows, col::SCOPE_NAME)[0].as_deref(),
        Some("genai.events")
    );
    assert!(schemas::layout::logs_dir(dir.path())
        .join(schemas::layout::Partition::of_unix_nanos((T0 + 2 * hour) as i64).relative_dir())
        .is_dir());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_logs_requests_get_the_same_answers_as_traces() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |c| {
        c.auth_token = Some("tok".into());
        c.max_body_bytes = 4096;
    })
    .await;
    let addr = server.http_addr();
    let ok = logs_request("x", vec![record(1, T0, "e", "b")]).encode_to_vec();

    let resp = post_logs(addr, ok.clone(), "application/x-protobuf", None, None).await;
    assert_eq!(resp.status(), 401);

    let resp = post_logs(
        addr,
        b"\xff\xff".to_vec(),
        "application/x-protobuf",
        None,
        Some("tok"),
    )
    .await;
    assert_eq!(resp.status(), 400);
    let status = json_or_pb_message(resp).await;
    assert!(status.contains("ExportLogsServiceRequest"), "{status}");

    let resp = post_logs(
        addr,
        b"{\"resourceLogs\": 7}".to_vec(),
        "application/json",
        None,
        Some("tok"),
    )
    .await;
    assert_eq!(resp.status(), 400);
    let answer = json_answer(resp).await;
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.contains("resourceLogs") && message.contains("ExportLogsServiceRequest"),
        "{message}"
    );

    let resp = post_logs(
        addr,
        vec![b' '; 5000],
        "application/json",
        None,
        Some("tok"),
    )
    .await;
    assert_eq!(resp.status(), 413);

    // One record with a 3-byte span id: rejected, the other stored, partial success in JSON.
    let body = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"timeUnixNano": T0.to_string(), "traceId": hex(&trace_id(3)), "spanId": hex(&span_id(3)), "body": {"stringValue": "kept"}},
        {"timeUnixNano": T0.to_string(), "traceId": hex(&trace_id(3)), "spanId": "010203", "body": {"stringValue": "dropped"}}
    ]}]}]});
    let resp = post_logs(
        addr,
        serde_json::to_vec(&body).unwrap(),
        "application/json",
        None,
        Some("tok"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let answer = json_answer(resp).await;
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], "1");
    assert!(answer["partialSuccess"]["errorMessage"]
        .as_str()
        .unwrap()
        .contains("span_id has 3 bytes"));
    server.shutdown().await.unwrap();
    let rows = log_rows(dir.path());
    assert_eq!(
        strings(&rows, col::BODY),
        vec![Some("\"kept\"".to_string())]
    );
}

async fn json_or_pb_message(resp: reqwest::Response) -> String {
    #[derive(Clone, PartialEq, prost::Message)]
    struct Status {
        #[prost(int32, tag = "1")]
        code: i32,
        #[prost(string, tag = "2")]
        message: String,
    }
    Status::decode(&resp.bytes().await.unwrap()[..])
        .unwrap()
        .message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redaction_covers_log_bodies_and_content_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |c| c.redact_content = true).await;
    let req = logs_request(
        "x",
        vec![record(1, T0, "gen_ai.user.message", "secret prompt")],
    );
    let resp = post_logs(
        server.http_addr(),
        req.encode_to_vec(),
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 200);
    server.shutdown().await.unwrap();
    let rows = log_rows(dir.path());
    assert_eq!(
        strings(&rows, col::BODY),
        vec![Some("\"[redacted]\"".to_string())]
    );
    let attrs: serde_json::Value =
        serde_json::from_str(strings(&rows, col::ATTRIBUTES)[0].as_deref().unwrap()).unwrap();
    assert_eq!(attrs["gen_ai.tool.call.result"], "[redacted]");
    assert_eq!(
        attrs["gen_ai.provider.name"], "openai",
        "non-content attributes are kept"
    );
    let redacted = rows
        .column_by_name(col::CONTENT_REDACTED)
        .unwrap()
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap();
    assert!(redacted.value(0));
}
