//! The Parquet write of `request_path`'s batches (same synthetic requests, converted the same
//! way, one file, one write per request as the batcher does) with writer settings changed from
//! the environment: prices a setting under callgrind before anyone changes
//! `schemas::parquet_props` (BENCHMARKS.md, "Collector instructions per span, session 10").
//! `TT_KEEP=<path>` keeps the file, so readers can check they read the same rows from it.
//!
//! ```sh
//! TT_CODEC=snappy valgrind --tool=callgrind --toggle-collect='*parquet_settings::measured*' \
//!   target/bench-dev/examples/parquet_settings 20 1000
//! ```
//!
//! - `TT_CODEC=zstd|snappy|lz4raw|none`: codec of every column;
//! - `TT_CONTENT_CODEC=...`: codec of the content payload columns only (after `TT_CODEC`);
//! - `TT_V1=1`: data page v1, the store's layout before session 27 (the shipped settings write
//!   v2 pages);
//! - `TT_DICT_MAPS=1`: dictionary encoding on the `key`, `type` and `str` leaves of the
//!   top-level attribute maps;
//! - `TT_DICT_COLS=a,b`: the same, on these attribute-map columns only (e.g.
//!   `resource_attributes,scope_attributes`, whose values repeat on every row of a batch);
//! - `TT_NULL_COLS=a,b`: these columns written as all-null (what a column costs per row);
//! - `TT_CONCAT=n`: n batches joined (inside the measurement) before each write;
//! - `TT_PLAIN_COLS=a,b`: no dictionary on these columns (PLAIN values, zstd finds the repeats);
//! - `TT_DROP_ALL_NULL=1`: the columns that are null in every row of every batch left out of
//!   the file (its schema is the rest): what writing those columns costs per row (session 38);
//! - `TT_COLUMN_CODEC=codec` with `TT_CODEC_COLS=a,b`: that codec on every Parquet leaf of these
//!   columns (what each column's compression costs and saves, session 39);
//! - `TT_DELTA_COLS=a,b`: DELTA_BINARY_PACKED values on these integer columns (session 39);
//! - `TT_DBA_COLS=a,b` / `TT_DLBA_COLS=a,b`: DELTA_BYTE_ARRAY / DELTA_LENGTH_BYTE_ARRAY values on
//!   these byte-array columns (session 43);
//! - `TT_PAGE_BYTES=n`: the data page size limit (parquet-rs default 1 MiB; session 43).

use std::sync::Arc;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterVersion;
use parquet::schema::types::ColumnPath;

#[path = "synthetic/mod.rs"]
mod synthetic;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn codec(name: &str) -> Result<Compression, String> {
    Ok(match name {
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(1).map_err(|e| e.to_string())?),
        "snappy" => Compression::SNAPPY,
        "lz4raw" => Compression::LZ4_RAW,
        "none" => Compression::UNCOMPRESSED,
        other => {
            return Err(format!(
                "unknown codec {other:?}: use zstd, snappy, lz4raw or none"
            ))
        }
    })
}

/// The comma-separated column names in environment variable `var`, if it is set.
fn column_names(var: &str) -> Option<Vec<String>> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let requests: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    let spans: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    collector::allocator::configure();
    let bodies = synthetic::bodies(requests, spans);
    let null_cols = column_names("TT_NULL_COLS").unwrap_or_default();
    let batches = synthetic::converted_batches(&bodies[1..])?
        .into_iter()
        .map(|batch| {
            if null_cols.is_empty() {
                return Ok(batch);
            }
            let schema = batch.schema();
            let columns = schema
                .fields()
                .iter()
                .zip(batch.columns())
                .map(|(f, c)| {
                    if null_cols.iter().any(|n| n == f.name()) {
                        arrow::array::new_null_array(f.data_type(), batch.num_rows())
                    } else {
                        Arc::clone(c)
                    }
                })
                .collect();
            Ok(arrow::record_batch::RecordBatch::try_new(schema, columns)?)
        })
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
    let batches = if std::env::var("TT_DROP_ALL_NULL").is_ok() {
        without_all_null_columns(batches)?
    } else {
        batches
    };

    let mut b = schemas::parquet_props::writer_properties().into_builder();
    if let Ok(c) = std::env::var("TT_CODEC") {
        b = b.set_compression(codec(&c)?);
    }
    if let Ok(c) = std::env::var("TT_CONTENT_CODEC") {
        for (_, column) in schemas::columns::CONTENT_COLUMNS {
            b = b.set_column_compression(ColumnPath::from(*column), codec(&c)?);
        }
    }
    let dict_cols = column_names("TT_DICT_COLS");
    if std::env::var("TT_DICT_MAPS").is_ok() || dict_cols.is_some() {
        let maps = schemas::columns::COLUMNS.iter().filter(|c| {
            c.ty == schemas::columns::ColumnType::AttributeMap
                && dict_cols
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| n == c.name))
        });
        for c in maps {
            for leaf in [&["key"][..], &["value", "type"], &["value", "str"]] {
                let mut path = vec![c.name.to_string(), "key_value".to_string()];
                path.extend(leaf.iter().map(|p| p.to_string()));
                b = b.set_column_dictionary_enabled(ColumnPath::new(path), true);
            }
        }
    }
    for c in column_names("TT_PLAIN_COLS").unwrap_or_default() {
        b = b.set_column_dictionary_enabled(ColumnPath::from(c), false);
    }
    if let (Ok(c), Some(names)) = (
        std::env::var("TT_COLUMN_CODEC"),
        column_names("TT_CODEC_COLS"),
    ) {
        let parquet = parquet::arrow::ArrowSchemaConverter::new()
            .with_coerce_types(true)
            .convert(&schemas::schema::span_schema())?;
        for leaf in parquet.columns() {
            let path = leaf.path();
            if names.iter().any(|n| *n == path.parts()[0]) {
                b = b.set_column_compression(path.clone(), codec(&c)?);
            }
        }
    }
    for c in column_names("TT_DELTA_COLS").unwrap_or_default() {
        b = b.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
    }
    for c in column_names("TT_DBA_COLS").unwrap_or_default() {
        b = b.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BYTE_ARRAY);
    }
    for c in column_names("TT_DLBA_COLS").unwrap_or_default() {
        b = b.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_LENGTH_BYTE_ARRAY);
    }
    if let Ok(n) = std::env::var("TT_PAGE_BYTES") {
        b = b.set_data_page_size_limit(n.parse()?);
    }
    if std::env::var("TT_V1").is_ok() {
        b = b.set_writer_version(WriterVersion::PARQUET_1_0);
    }
    let props = b.build();
    let out = tempfile::tempdir()?;
    let path = out.path().join("x.parquet");
    let bytes = measured(&path, &batches, props)?;
    println!("parquet: {bytes} bytes");
    if let Ok(keep) = std::env::var("TT_KEEP") {
        std::fs::copy(&path, keep)?;
    }
    Ok(())
}

/// `batches` without the columns that are null in every row of every batch (named on stderr).
fn without_all_null_columns(
    batches: Vec<arrow::record_batch::RecordBatch>,
) -> Result<Vec<arrow::record_batch::RecordBatch>, Box<dyn std::error::Error>> {
    let Some(first) = batches.first() else {
        return Ok(batches);
    };
    let schema = first.schema();
    let (kept, dropped): (Vec<usize>, Vec<usize>) = (0..schema.fields().len()).partition(|&i| {
        batches
            .iter()
            .any(|b| b.column(i).null_count() < b.num_rows())
    });
    let names: Vec<&str> = dropped
        .iter()
        .map(|&i| schema.field(i).name().as_str())
        .collect();
    eprintln!(
        "TT_DROP_ALL_NULL: {} of {} columns left out: {}",
        dropped.len(),
        schema.fields().len(),
        names.join(",")
    );
    Ok(batches
        .iter()
        .map(|b| b.project(&kept))
        .collect::<Result<Vec<_>, _>>()?)
}

/// One file, one write per batch, as the batcher does (callgrind `--toggle-collect` target).
#[inline(never)]
fn measured(
    path: &std::path::Path,
    batches: &[arrow::record_batch::RecordBatch],
    props: parquet::file::properties::WriterProperties,
) -> Result<u64, Box<dyn std::error::Error>> {
    let file = std::fs::File::create(path)?;
    // The batches' own schema is the converter's (origin columns as dictionaries); the file's is
    // the canonical one, as the collector's part files are (unless TT_DROP_ALL_NULL left
    // columns out).
    let schema = batches
        .first()
        .map_or_else(schemas::span_schema, |b| b.schema());
    let file_schema = if schema.fields().len() == schemas::span_schema().fields().len() {
        schemas::span_schema()
    } else {
        Arc::clone(&schema)
    };
    let mut w = ArrowWriter::try_new(file, file_schema, Some(props))?;
    let concat: usize = std::env::var("TT_CONCAT").map_or(Ok(1), |c| c.parse())?;
    for group in batches.chunks(concat) {
        let joined;
        let batch = if group.len() == 1 {
            &group[0]
        } else {
            joined = arrow::compute::concat_batches(&schema, group)?;
            &joined
        };
        w.write(batch)?;
        if w.in_progress_rows() >= schemas::parquet_props::DEFAULT_ROW_GROUP_ROWS
            || w.in_progress_size() >= schemas::parquet_props::MAX_ROW_GROUP_BYTES
        {
            w.flush()?;
        }
    }
    let f = w.into_inner()?;
    f.sync_all()?;
    Ok(std::fs::metadata(path)?.len())
}
