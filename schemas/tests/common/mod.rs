//! Shared helpers for the integration tests: locating the real recordings, loading request bodies,
//! and normalising requests for comparison.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::Status;
use schemas::{decode_json, decode_protobuf, IngestContext};

/// The recorded exports of real agents (see `testkit::recordings`; `TRIPLINE_RECORDINGS`
/// overrides where they are looked for). These tests need them.
pub fn recordings_dir() -> PathBuf {
    testkit::recordings::dir().unwrap_or_else(|| {
        panic!("recordings not found beside the repository; set TRIPLINE_RECORDINGS to shared/recordings")
    })
}

/// Recording name (`mcp2-native/S1-structured-good`) -> span count, from MANIFEST.md's table.
pub fn manifest_span_counts() -> BTreeMap<String, usize> {
    testkit::recordings::manifest_span_counts(&recordings_dir())
}

/// The request body files of one recording, in order.
pub fn request_files(recording: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(recording)
        .expect("recording dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.contains("-traces.")
                && (name.ends_with(".pb") || name.ends_with(".json") || name.ends_with(".pb.gz"))
        })
        .collect();
    files.sort();
    files
}

/// Decodes one recorded request body by its file name.
pub fn decode_file(path: &Path) -> ExportTraceServiceRequest {
    let bytes = std::fs::read(path).expect("read body");
    let name = path.to_string_lossy();
    let result = if name.ends_with(".json") {
        decode_json(&bytes)
    } else if name.ends_with(".pb.gz") {
        use std::io::Read;
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut raw)
            .expect("gunzip");
        decode_protobuf(&raw)
    } else {
        decode_protobuf(&bytes)
    };
    result.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every recording directory (`<library>/<scenario>`), sorted.
pub fn recordings() -> Vec<(String, PathBuf)> {
    let root = recordings_dir();
    let mut out = Vec::new();
    for lib in std::fs::read_dir(&root)
        .expect("recordings")
        .filter_map(Result::ok)
    {
        if !lib.path().is_dir() {
            continue;
        }
        for rec in std::fs::read_dir(lib.path())
            .expect("library dir")
            .filter_map(Result::ok)
        {
            if rec.path().is_dir() {
                let name = format!(
                    "{}/{}",
                    lib.file_name().to_string_lossy(),
                    rec.file_name().to_string_lossy()
                );
                out.push((name, rec.path()));
            }
        }
    }
    out.sort();
    out
}

/// An attribute holding `value`.
pub fn kv(key: &str, value: Value) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

pub fn ctx() -> IngestContext {
    IngestContext {
        received_at_unix_nano: 1_796_000_000_123_456_789,
        source: "test".into(),
        redact_content: false,
    }
}

/// Normalises what OTLP does not distinguish (absent vs empty messages, attribute order, the
/// order of a scope's spans, empty groups) so two requests carrying the same spans compare equal.
/// (The converter groups a scope's spans by shape: `convert::shape_order`.)
pub fn normalize(mut req: ExportTraceServiceRequest) -> ExportTraceServiceRequest {
    fn kvs(list: &mut [opentelemetry_proto::tonic::common::v1::KeyValue]) {
        for kv in list.iter_mut() {
            if kv.value.is_none() {
                kv.value = Some(AnyValue { value: None });
            }
        }
        list.sort_by(|a, b| a.key.cmp(&b.key));
    }
    req.resource_spans
        .retain(|rs| rs.scope_spans.iter().any(|ss| !ss.spans.is_empty()));
    for rs in &mut req.resource_spans {
        let r = rs.resource.get_or_insert_with(Resource::default);
        kvs(&mut r.attributes);
        rs.scope_spans.retain(|ss| !ss.spans.is_empty());
        for ss in &mut rs.scope_spans {
            let scope = ss.scope.get_or_insert_with(Default::default);
            kvs(&mut scope.attributes);
            for span in &mut ss.spans {
                kvs(&mut span.attributes);
                span.status.get_or_insert_with(Status::default);
                for e in &mut span.events {
                    kvs(&mut e.attributes);
                }
                for l in &mut span.links {
                    kvs(&mut l.attributes);
                }
            }
            ss.spans.sort_by_cached_key(prost::Message::encode_to_vec);
        }
    }
    req
}

/// Typed access to a converted batch's cells, for assertions.
pub mod cells {
    use arrow::array::{
        Array, BooleanArray, Int64Array, ListArray, MapArray, StringArray, StructArray,
    };
    use arrow::record_batch::RecordBatch;

    fn column<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
        b.column_by_name(name)
            .unwrap_or_else(|| panic!("column {name}"))
            .as_any()
            .downcast_ref::<T>()
            .unwrap_or_else(|| panic!("column {name} type"))
    }

    pub fn str(b: &RecordBatch, name: &str, row: usize) -> Option<String> {
        let a = column::<StringArray>(b, name);
        (!a.is_null(row)).then(|| a.value(row).to_string())
    }

    pub fn int(b: &RecordBatch, name: &str, row: usize) -> Option<i64> {
        let a = column::<Int64Array>(b, name);
        (!a.is_null(row)).then(|| a.value(row))
    }

    pub fn boolean(b: &RecordBatch, name: &str, row: usize) -> Option<bool> {
        let a = column::<BooleanArray>(b, name);
        (!a.is_null(row)).then(|| a.value(row))
    }

    pub fn str_list(b: &RecordBatch, name: &str, row: usize) -> Option<Vec<String>> {
        let a = column::<ListArray>(b, name);
        if a.is_null(row) {
            return None;
        }
        let v = a.value(row);
        let s = v
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("list of strings");
        Some((0..s.len()).map(|i| s.value(i).to_string()).collect())
    }

    /// Keys of a map column's row (None when the map is null).
    pub fn map_keys(b: &RecordBatch, name: &str, row: usize) -> Option<Vec<String>> {
        let a = column::<MapArray>(b, name);
        if a.is_null(row) {
            return None;
        }
        let entries = a.value(row);
        let keys = entries
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("keys");
        Some((0..keys.len()).map(|i| keys.value(i).to_string()).collect())
    }

    /// `(type, str)` of a map entry.
    pub fn map_str(
        b: &RecordBatch,
        name: &str,
        row: usize,
        key: &str,
    ) -> Option<(String, Option<String>)> {
        let a = column::<MapArray>(b, name);
        if a.is_null(row) {
            return None;
        }
        let entries = a.value(row);
        let keys = entries
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("keys");
        let values = entries
            .column(1)
            .as_any()
            .downcast_ref::<StructArray>()
            .expect("values");
        let ty = values
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("type");
        let s = values
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("str");
        (0..keys.len()).find(|i| keys.value(*i) == key).map(|i| {
            (
                ty.value(i).to_string(),
                (!s.is_null(i)).then(|| s.value(i).to_string()),
            )
        })
    }

    /// (name, has_output_schema, read_only_hint, destructive_hint) of one tool definition.
    pub type ToolDefCells = (Option<String>, Option<bool>, Option<bool>, Option<bool>);

    /// Tool definitions of a row.
    pub fn tool_defs(b: &RecordBatch, row: usize) -> Option<Vec<ToolDefCells>> {
        let a = column::<ListArray>(b, "tool_definitions");
        if a.is_null(row) {
            return None;
        }
        let v = a.value(row);
        let s = v.as_any().downcast_ref::<StructArray>().expect("struct");
        let name = s
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("name");
        let has = s
            .column(2)
            .as_any()
            .downcast_ref::<BooleanArray>()
            .expect("has_output_schema");
        let ro = s
            .column(3)
            .as_any()
            .downcast_ref::<BooleanArray>()
            .expect("read_only");
        let de = s
            .column(4)
            .as_any()
            .downcast_ref::<BooleanArray>()
            .expect("destructive");
        let opt_b = |a: &BooleanArray, i: usize| (!a.is_null(i)).then(|| a.value(i));
        Some(
            (0..s.len())
                .map(|i| {
                    (
                        (!name.is_null(i)).then(|| name.value(i).to_string()),
                        opt_b(has, i),
                        opt_b(ro, i),
                        opt_b(de, i),
                    )
                })
                .collect(),
        )
    }

    /// Row index of the first span with this name (and, if given, this scope).
    pub fn row_named(b: &RecordBatch, span_name: &str, scope: Option<&str>) -> usize {
        (0..b.num_rows())
            .find(|r| {
                str(b, "name", *r).as_deref() == Some(span_name)
                    && scope.is_none_or(|s| str(b, "scope_name", *r).as_deref() == Some(s))
            })
            .unwrap_or_else(|| panic!("no span named {span_name}"))
    }

    /// Rows with this span name.
    pub fn rows_named(b: &RecordBatch, span_name: &str) -> Vec<usize> {
        (0..b.num_rows())
            .filter(|r| str(b, "name", *r).as_deref() == Some(span_name))
            .collect()
    }
}

/// All request files of a recording, converted and concatenated into one batch.
pub fn convert_recording(name: &str) -> arrow::record_batch::RecordBatch {
    convert_dir(&recordings_dir().join(name))
}

/// One of the lab's own recordings (`lab/recordings/<profile>/<variant>`, committed in this
/// repository), converted and concatenated into one batch.
pub fn convert_lab_recording(name: &str) -> arrow::record_batch::RecordBatch {
    convert_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../lab/recordings")
            .join(name),
    )
}

/// The request files of the recording in `dir`, each converted with nothing rejected, in one
/// batch.
fn convert_dir(dir: &Path) -> arrow::record_batch::RecordBatch {
    let batches: Vec<_> = request_files(dir)
        .iter()
        .map(|f| {
            let c = schemas::convert_request(&decode_file(f), &ctx());
            assert_eq!(c.rejected, 0);
            c.batch
        })
        .collect();
    assert!(
        !batches.is_empty(),
        "no request bodies in {}",
        dir.display()
    );
    arrow::compute::concat_batches(&schemas::span_schema(), &batches).expect("concat")
}

/// Converts an OTLP/JSON fixture under tests/fixtures.
pub fn convert_fixture(rel: &str) -> arrow::record_batch::RecordBatch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let req = decode_json(&body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let c = schemas::convert_request(&req, &ctx());
    assert_eq!(c.rejected, 0, "{:?}", c.rejection_reasons);
    c.batch
}
