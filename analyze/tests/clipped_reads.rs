//! The analyzer reads `attributes` as its keys, `content_attributes` as key + `str` and events
//! as their names (`analyze::store::clip`): a footer clipped that way must read back exactly the
//! keys, the content attributes' string values and the event names of the full read, with the
//! other leaves left on disk, and a WAL-tail batch clipped in memory must equal the same spans
//! read from a clipped file.

mod common;

use std::fs::File;
use std::sync::Arc;

use analyze::store::clip::{analysis_schema, clip_batch, clip_metadata, empty_columns, CLIPS};
use arrow::array::{Array, AsArray, ListArray, MapArray, RecordBatch};
use arrow::compute::concat_batches;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::WriterVersion;

/// Every rule fixture's spans in one batch: attribute maps of every value type.
fn fixture_batch() -> RecordBatch {
    let dir = common::fixtures_dir();
    let mut batches = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            batches.push(common::batch_from_json(&path));
        }
    }
    assert!(batches.len() >= 10, "fixtures in {}", dir.display());
    concat_batches(&schemas::span_schema(), &batches).unwrap()
}

/// `batch` written with the store's settings, in data pages of `version` (the store writes v2
/// since session 27; files written before hold v1 pages and stay in stores).
fn write(batch: &RecordBatch, version: WriterVersion) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("part.parquet");
    let props = schemas::writer_properties()
        .into_builder()
        .set_writer_version(version)
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    (dir, path)
}

/// One row of a map: (key, str) of each entry; `None` for a null map.
type Entries = Option<Vec<(String, Option<String>)>>;

/// The entries of every row of map column `name` (the `str` values only when `with_str`).
fn entries(batch: &RecordBatch, name: &str, with_str: bool) -> Vec<Entries> {
    let map: &MapArray = batch.column_by_name(name).unwrap().as_map();
    let keys = map.keys().as_string::<i32>();
    let strs = with_str.then(|| {
        map.values()
            .as_struct()
            .column_by_name("str")
            .unwrap()
            .as_string::<i32>()
            .clone()
    });
    (0..map.len())
        .map(|row| {
            map.is_valid(row).then(|| {
                let offsets = map.value_offsets();
                (offsets[row] as usize..offsets[row + 1] as usize)
                    .map(|j| {
                        (
                            keys.value(j).to_string(),
                            strs.as_ref()
                                .filter(|s| s.is_valid(j))
                                .map(|s| s.value(j).to_string()),
                        )
                    })
                    .collect()
            })
        })
        .collect()
}

/// The event names of every row (`None` for a null list).
fn event_names(batch: &RecordBatch) -> Vec<Option<Vec<Option<String>>>> {
    let list: &ListArray = batch.column_by_name("events").unwrap().as_list();
    let names = list
        .values()
        .as_struct()
        .column_by_name("name")
        .unwrap()
        .as_string::<i32>()
        .clone();
    (0..list.len())
        .map(|row| {
            list.is_valid(row).then(|| {
                let offsets = list.value_offsets();
                (offsets[row] as usize..offsets[row + 1] as usize)
                    .map(|j| names.is_valid(j).then(|| names.value(j).to_string()))
                    .collect()
            })
        })
        .collect()
}

/// The maps, and whether the analyzer reads their string values.
const MAPS: [(&str, bool); 2] = [("attributes", false), ("content_attributes", true)];

#[test]
fn a_clipped_footer_reads_the_same_keys_strings_and_event_names() {
    clipped_reads_equal_full_reads(WriterVersion::PARQUET_2_0);
}

#[test]
fn a_clipped_footer_reads_data_page_v1_files_alike() {
    clipped_reads_equal_full_reads(WriterVersion::PARQUET_1_0);
}

fn clipped_reads_equal_full_reads(version: WriterVersion) {
    let batch = fixture_batch();
    let (_dir, path) = write(&batch, version);
    let file = File::open(&path).unwrap();
    let full_meta = ParquetMetaDataReader::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional)
        .parse_and_finish(&file)
        .unwrap();
    let clipped = clip_metadata(&full_meta).unwrap().expect("maps to clip");

    // Five leaves of each map (`attributes`: type, str, int, double, bytes; `content_attributes`:
    // type, int, double, bool, bytes) and nine of an event (all but its name: time, the seven of
    // its attribute map, the dropped count) are gone.
    // The top-level columns no fixture span sets (and whose statistics say so) are left out
    // too.
    assert_eq!(CLIPS.len(), 3);
    let descr = full_meta.file_metadata().schema_descr();
    let empty: Vec<String> = empty_columns(&full_meta)
        .into_iter()
        .map(|i| descr.column(i).name().to_string())
        .collect();
    assert!(
        empty
            .iter()
            .any(|c| c == schemas::schema::col::SKILL_INVOCATION_SOURCE),
        "empty columns: {empty:?}"
    );
    // Exactly the top-level leaves with statistics and no value: a column written without
    // statistics is read whatever it holds.
    let mut without_stats = 0;
    for i in 0..descr.num_columns() {
        let c = descr.column(i);
        if c.path().parts().len() != 1 || c.max_def_level() != 1 {
            continue;
        }
        let has_stats = full_meta.row_group(0).column(i).statistics().is_some();
        let values = batch.column_by_name(c.name()).unwrap();
        let all_null = values.null_count() == values.len();
        without_stats += usize::from(all_null && !has_stats);
        assert_eq!(
            empty.iter().any(|e| e == c.name()),
            has_stats && all_null,
            "{}",
            c.name()
        );
    }
    assert!(
        without_stats > 0,
        "no empty column without statistics to tell apart"
    );
    let full_leaves = full_meta.file_metadata().schema_descr().num_columns();
    let clipped_leaves = clipped.file_metadata().schema_descr().num_columns();
    assert_eq!(full_leaves - clipped_leaves, 5 + 5 + 9 + empty.len());
    assert_eq!(clipped.row_groups()[0].columns().len(), clipped_leaves);
    // Already clipped: nothing more to do.
    assert!(clip_metadata(&clipped).unwrap().is_none());

    let full: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(file.try_clone().unwrap())
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let full = concat_batches(&full[0].schema(), &full).unwrap();
    assert_eq!(
        full.columns(),
        batch.columns(),
        "{version:?} pages read back"
    );
    let reader_meta =
        ArrowReaderMetadata::try_new(Arc::new(clipped), ArrowReaderOptions::new()).unwrap();
    let read: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::new_with_metadata(file, reader_meta)
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let read = concat_batches(&read[0].schema(), &read).unwrap();

    // The reader produces the analysis schema's types exactly (no cast needed downstream),
    // less the empty columns.
    let is_empty = |name: &str| empty.iter().any(|e| e == name);
    let without_empty = |fields: &arrow::datatypes::Fields| -> Vec<arrow::datatypes::FieldRef> {
        fields
            .iter()
            .filter(|f| !is_empty(f.name()))
            .cloned()
            .collect()
    };
    assert_eq!(
        read.schema().fields().to_vec(),
        without_empty(analysis_schema(&schemas::span_schema()).fields())
    );
    assert_eq!(read.num_rows(), batch.num_rows());
    let mut with_entries = 0;
    for (name, with_str) in MAPS {
        let want = entries(&full, name, with_str);
        assert_eq!(entries(&read, name, with_str), want, "{name}");
        with_entries += want.iter().flatten().filter(|e| !e.is_empty()).count();
    }
    // Since schema 2 the registry attributes the typed columns hold whole are not in the maps:
    // the samples' other attributes (and content attributes) fill these rows.
    assert!(
        with_entries >= 5,
        "only {with_entries} rows with attributes"
    );
    let names = event_names(&full);
    assert_eq!(event_names(&read), names);
    let with_events = names.iter().flatten().filter(|e| !e.is_empty()).count();
    assert!(with_events > 0, "no fixture span has events");
    // Every other column reads back unchanged: the same type, or text as views of the same
    // values.
    let mut views = 0;
    for field in schemas::span_schema().fields() {
        if is_empty(field.name()) {
            // Read as nulls by the scan (DataFusion fills a column a file lacks): only right
            // when the file holds no value in it.
            let want = full.column_by_name(field.name()).unwrap();
            assert_eq!(want.null_count(), want.len(), "{} is empty", field.name());
            assert!(read.column_by_name(field.name()).is_none());
        } else if !CLIPS.iter().any(|c| c.column == field.name()) {
            let want = full.column_by_name(field.name()).unwrap();
            let got = read.column_by_name(field.name()).unwrap();
            if field.data_type() == &arrow::datatypes::DataType::Utf8 {
                assert_eq!(got.data_type(), &arrow::datatypes::DataType::Utf8View);
                views += 1;
            }
            let got = arrow::compute::cast(got, want.data_type()).unwrap();
            assert_eq!(&got, want, "{}", field.name());
        }
    }
    assert!(views > 20, "only {views} text columns");

    // The WAL tail's batches are clipped in memory to the same arrays.
    let in_memory = clip_batch(&batch).unwrap();
    assert_eq!(
        without_empty(in_memory.schema().fields()),
        read.schema().fields().to_vec()
    );
    for clip in CLIPS {
        let name = clip.column;
        assert_eq!(
            in_memory.column_by_name(name).unwrap(),
            read.column_by_name(name).unwrap(),
            "{name}"
        );
    }
}
