//! Every real recording decodes, converts with zero rejected spans, matches MANIFEST.md's span
//! count, and survives spans -> RecordBatch -> Parquet -> OTLP unchanged.

mod common;

use std::fs::File;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use schemas::{batch_to_request, convert_request, span_schema, writer_properties};

use common::{ctx, decode_file, manifest_span_counts, normalize, recordings, request_files};

#[test]
fn every_recording_converts_without_rejections_and_matches_the_manifest() {
    let manifest = manifest_span_counts();
    assert!(
        manifest.len() >= 40,
        "manifest table parsed {} rows",
        manifest.len()
    );
    let recs = recordings();
    assert_eq!(
        recs.len(),
        manifest.len(),
        "recording dirs vs manifest rows"
    );
    let mut files = 0;
    for (name, dir) in recs {
        let mut accepted = 0;
        for file in request_files(&dir) {
            files += 1;
            let req = decode_file(&file);
            let converted = convert_request(&req, &ctx());
            assert_eq!(
                converted.rejected,
                0,
                "{}: {:?}",
                file.display(),
                converted.rejection_reasons
            );
            assert!(converted.rejection_reasons.is_empty());
            assert_eq!(converted.batch.schema(), span_schema());
            assert_eq!(converted.batch.num_rows(), converted.accepted);
            accepted += converted.accepted;
        }
        let expected = manifest
            .get(&name)
            .unwrap_or_else(|| panic!("{name} not in MANIFEST.md"));
        assert_eq!(
            accepted, *expected,
            "{name}: spans converted vs MANIFEST.md"
        );
    }
    assert!(files >= 100, "only {files} request files found");
}

/// OTLP/JSON written by opentelemetry-proto's serde (the spec's encoding) of each protobuf
/// recording decodes to the same request and the same batch.
#[test]
fn protobuf_and_json_of_the_same_spans_give_identical_batches() {
    let mut compared = 0;
    for (_, dir) in recordings() {
        for file in request_files(&dir) {
            if file.extension().is_some_and(|e| e == "json") {
                continue;
            }
            let from_pb = decode_file(&file);
            let json = serde_json::to_vec(&from_pb).expect("serialize OTLP/JSON");
            let from_json = schemas::decode_json(&json).expect("decode our JSON");
            assert_eq!(
                normalize(from_json.clone()),
                normalize(from_pb.clone()),
                "{}",
                file.display()
            );
            let a = convert_request(&from_pb, &ctx());
            let b = convert_request(&from_json, &ctx());
            assert_eq!(a.batch, b.batch, "{}", file.display());
            compared += 1;
        }
    }
    assert!(compared >= 100, "{compared}");
}

#[test]
fn round_trip_through_parquet_equals_the_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut checked = 0;
    for (name, rec) in recordings() {
        for file in request_files(&rec) {
            let req = decode_file(&file);
            let converted = convert_request(&req, &ctx());
            let path = dir.path().join(format!("{}.parquet", checked));
            {
                let out = File::create(&path).expect("create parquet");
                let mut writer =
                    ArrowWriter::try_new(out, span_schema(), Some(writer_properties()))
                        .expect("writer");
                writer.write(&converted.batch).expect("write");
                writer.close().expect("close");
            }
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).expect("open"))
                .expect("reader")
                .build()
                .expect("build");
            let batches: Vec<_> = reader.collect::<Result<_, _>>().expect("read batches");
            assert_eq!(batches.len(), 1, "{name}");
            assert_eq!(
                batches[0].schema().fields(),
                span_schema().fields(),
                "{name}"
            );
            assert_eq!(
                batches[0].columns(),
                converted.batch.columns(),
                "{name}: parquet changed values"
            );
            let back = batch_to_request(&batches[0]).expect("batch_to_request");
            assert_eq!(normalize(back), normalize(req), "{}", file.display());
            assert_pages_v2_plain_but_the_times(&path);
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked}");
}

/// The store's pages are data page v2 (levels uncompressed, so the writer neither joins levels
/// and values into one buffer nor compresses the levels) and values PLAIN where no dictionary is
/// used: with v2, parquet-rs would otherwise switch to DELTA encodings, slower to write and read
/// (docs/adr/0001-parquet-layout.md). The times are the exception the column table asks for:
/// DELTA_BINARY_PACKED, uncompressed. Each column chunk has the codec its leaf is declared with
/// (zstd, or none where zstd finds nothing: `parquet_props::leaf_compression`).
fn assert_pages_v2_plain_but_the_times(path: &std::path::Path) {
    let reader = SerializedFileReader::new(File::open(path).expect("open")).expect("footer");
    let mut data_pages = 0;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).expect("row group");
        for c in 0..group.num_columns() {
            let chunk = group.metadata().column(c);
            let name = chunk.column_path().string();
            let root = &chunk.column_path().parts()[0];
            let def = schemas::columns::column(root).expect("a declared column");
            let delta = def.delta;
            if delta {
                assert_eq!(chunk.compression(), Compression::UNCOMPRESSED, "{name}");
            }
            assert_eq!(
                chunk.compression(),
                schemas::parquet_props::leaf_compression(def, chunk.column_descr()),
                "{name}"
            );
            for e in chunk.encodings() {
                assert!(
                    matches!(
                        e,
                        Encoding::PLAIN | Encoding::RLE | Encoding::RLE_DICTIONARY
                    ) || (delta && e == Encoding::DELTA_BINARY_PACKED),
                    "{}: {:?} in {}",
                    path.display(),
                    e,
                    chunk.column_path()
                );
            }
            let pages = group.get_column_page_reader(c).expect("pages");
            for page in pages {
                let page = page.expect("page");
                assert_ne!(
                    page.page_type(),
                    PageType::DATA_PAGE,
                    "{}",
                    chunk.column_path()
                );
                data_pages += usize::from(page.page_type() == PageType::DATA_PAGE_V2);
            }
        }
    }
    assert!(data_pages > 0, "{}: no data page", path.display());
}
