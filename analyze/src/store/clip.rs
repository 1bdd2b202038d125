//! Reading only what the analyzer's rows keep of the nested columns: the key of each entry of
//! `attributes` (the rows keep the keys alone; a map needs a value, so the cheapest leaf, `bool`,
//! stands in for it), the key and the `str` field of each entry of `content_attributes`, and the
//! name of each event.
//!
//! Why: an attribute map entry is seven Parquet leaves (key, and the value's `type`, `str`,
//! `int`, `double`, `bool`, `bytes`), and decoding them was a fifth of `check`'s instructions
//! (callgrind, 100,000 spans, session 18: `MapArrayReader` 20.7%); an event is ten. The rows
//! keep only keys, string values and event names ([`crate::load::rows`]), so most leaves were
//! decoded and dropped. DataFusion 55 prunes nested leaves for structs and lists but never
//! inside a map (`datafusion-datasource-parquet`'s `nested_schema_pruning`: "maps are opaque"),
//! so the clipping happens one level down, where the Parquet reader learns the file's layout:
//! the footer handed to DataFusion ([`clip_metadata`]) describes each [`Clip`] column narrowed,
//! and the table the analyzer registers declares the same ([`analysis_schema`]), so no cast is
//! needed. The column chunks themselves are untouched; the reader never fetches the others.
//!
//! The same footer also leaves out a file's top-level columns that hold no value at all
//! ([`empty_columns`]: every row group's statistics count as many nulls as rows). DataFusion
//! reads a column a file lacks as nulls, which is what the rows would have held, and the reader
//! then neither decodes those pages nor creates their decompressor: parquet-rs makes a zstd
//! compressor and decompressor for every column chunk it opens, and on a virtual machine each
//! costs tens of microseconds of trapped `cpuid` (BENCHMARKS.md, session 41). Most stores have
//! many such columns: the typed columns of conventions an instrumentation does not use.
//!
//! Only the analyzer's row scans use this shape ([`AnalysisFormat`]); `tripline query`, the MCP
//! server, the log join (which rebuilds whole spans) and every external reader see the full
//! columns.

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray};
use arrow::datatypes::{DataType, FieldRef, Fields, Schema, SchemaRef};
use arrow::error::ArrowError;
use async_trait::async_trait;
use bytes::Bytes;
use datafusion::catalog::Session;
use datafusion::common::{Result as DfResult, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{
    FileScanConfig, FileScanConfigBuilder, FileSource, ParquetFileReaderFactory, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::DataFusionError;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::arrow::{encode_arrow_schema, parquet_to_arrow_schema};
use datafusion::parquet::basic::{ConvertedType, LogicalType};
use datafusion::parquet::errors::{ParquetError, Result as ParquetResult};
use datafusion::parquet::file::metadata::{
    FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder, RowGroupMetaData,
};
use datafusion::parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use futures::future::BoxFuture;
use futures::FutureExt;
use schemas::schema::{col, value};

use super::clip_memo::{ClippedSchema, SCHEMAS};

/// One narrowing: in column `column`, the struct reached through `via` (struct field names;
/// map entries and list elements are stepped into on the way) keeps only the fields `keep`.
#[derive(Debug, Clone, Copy)]
pub struct Clip {
    pub column: &'static str,
    pub via: &'static [&'static str],
    pub keep: &'static [&'static str],
}

/// What the analyzer's rows read of the nested columns: `attributes` as its keys (with `bool`, a
/// leaf mostly null, as the value a map must have: the string values were 40% of the map's
/// bytes, and nothing in the rows reads them), `content_attributes` as key + `str`, events as
/// their names.
pub const CLIPS: &[Clip] = &[
    Clip {
        column: col::ATTRIBUTES,
        via: &["value"],
        keep: &[value::BOOL],
    },
    Clip {
        column: col::CONTENT_ATTRIBUTES,
        via: &["value"],
        keep: &[value::STR],
    },
    Clip {
        column: col::EVENTS,
        via: &[],
        keep: &["name"],
    },
];

/// The key under which Arrow writers store their schema in a Parquet footer.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

fn clip_of(column: &str) -> Option<&'static Clip> {
    CLIPS.iter().find(|c| c.column == column)
}

/// `schema` with every [`CLIPS`] column narrowed and every top-level `Utf8` span column declared
/// `Utf8View` (`Binary`, the ids: `BinaryView`): DataFusion then has the Parquet reader make each
/// text value or id a view into the page (or dictionary) it decoded, not a copy
/// ([`crate::load::str_col`], [`crate::load::id_col`]). Nested text (map keys, list items) stays
/// `Utf8`: DataFusion coerces only top-level columns to views.
pub fn analysis_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| {
            let narrowed =
                clip_of(f.name()).and_then(|c| narrow_type(f.data_type(), c.via, c.keep));
            match (narrowed, f.data_type()) {
                (Some(t), _) => Arc::new(f.as_ref().clone().with_data_type(t)),
                // Span columns only: a partition column (`date`) keeps the type the listing
                // table gives it.
                (None, DataType::Utf8) if schemas::columns::column(f.name()).is_some() => {
                    Arc::new(f.as_ref().clone().with_data_type(DataType::Utf8View))
                }
                (None, DataType::Binary) if schemas::columns::column(f.name()).is_some() => {
                    Arc::new(f.as_ref().clone().with_data_type(DataType::BinaryView))
                }
                (None, _) => Arc::clone(f),
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `dt` narrowed, `None` when there is nothing to narrow (already narrow, or another shape).
fn narrow_type(dt: &DataType, via: &[&str], keep: &[&str]) -> Option<DataType> {
    match dt {
        DataType::Map(entries, sorted) => {
            let t = narrow_type(entries.data_type(), via, keep)?;
            Some(DataType::Map(
                Arc::new(entries.as_ref().clone().with_data_type(t)),
                *sorted,
            ))
        }
        DataType::List(element) => {
            let t = narrow_type(element.data_type(), via, keep)?;
            Some(DataType::List(Arc::new(
                element.as_ref().clone().with_data_type(t),
            )))
        }
        DataType::Struct(fields) => {
            let fields = narrow_fields(fields, via, keep)?;
            Some(DataType::Struct(fields))
        }
        _ => None,
    }
}

fn narrow_fields(fields: &Fields, via: &[&str], keep: &[&str]) -> Option<Fields> {
    match via {
        [] => {
            let kept: Vec<FieldRef> = fields
                .iter()
                .filter(|f| keep.contains(&f.name().as_str()))
                .cloned()
                .collect();
            (!kept.is_empty() && kept.len() < fields.len()).then(|| Fields::from(kept))
        }
        [next, rest @ ..] => {
            let i = fields.iter().position(|f| f.name() == next)?;
            let t = narrow_type(fields[i].data_type(), rest, keep)?;
            let mut out: Vec<FieldRef> = fields.iter().cloned().collect();
            out[i] = Arc::new(fields[i].as_ref().clone().with_data_type(t));
            Some(Fields::from(out))
        }
    }
}

/// `batch` in [`analysis_schema`]'s shape: the same rows, the [`CLIPS`] columns narrowed, text
/// columns as views. For
/// spans the analyzer reads from the WAL tail rather than a file.
pub fn clip_batch(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let schema = analysis_schema(batch.schema().as_ref());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| match clip_of(field.name()) {
            Some(c) if column.data_type() != field.data_type() => {
                narrow_array(column, field.data_type(), c.via)
            }
            None if column.data_type() != field.data_type() => {
                arrow::compute::cast(column, field.data_type())
            }
            _ => Ok(Arc::clone(column)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema, columns)
}

/// `array` as type `to` (a narrowing of its own type along `via`).
fn narrow_array(array: &ArrayRef, to: &DataType, via: &[&str]) -> Result<ArrayRef, ArrowError> {
    let shape = |what: &str| ArrowError::SchemaError(format!("narrowing a nested column: {what}"));
    match to {
        DataType::Map(entries_field, sorted) => {
            let map = array
                .as_any()
                .downcast_ref::<MapArray>()
                .ok_or_else(|| shape("not a map"))?;
            let entries: ArrayRef = Arc::new(map.entries().clone());
            let entries = narrow_array(&entries, entries_field.data_type(), via)?;
            let entries = entries
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| shape("map entries are not a struct"))?
                .clone();
            Ok(Arc::new(MapArray::try_new(
                Arc::clone(entries_field),
                map.offsets().clone(),
                entries,
                map.nulls().cloned(),
                *sorted,
            )?))
        }
        DataType::List(element) => {
            let list = array
                .as_any()
                .downcast_ref::<ListArray>()
                .ok_or_else(|| shape("not a list"))?;
            let values = narrow_array(list.values(), element.data_type(), via)?;
            Ok(Arc::new(ListArray::try_new(
                Arc::clone(element),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?))
        }
        DataType::Struct(fields) => {
            let s = array
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| shape("not a struct"))?;
            let columns = fields
                .iter()
                .map(|f| {
                    let child = s
                        .column_by_name(f.name())
                        .ok_or_else(|| shape(&format!("no field `{}`", f.name())))?;
                    match via {
                        [next, rest @ ..] if f.name() == next => {
                            narrow_array(child, f.data_type(), rest)
                        }
                        _ => Ok(Arc::clone(child)),
                    }
                })
                .collect::<Result<Vec<_>, ArrowError>>()?;
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        _ => Err(shape("not a nested type")),
    }
}

/// `meta` describing only the leaves the [`CLIPS`] keep, without the file's
/// [`empty_columns`], or `None` when the file has nothing to clip (no such column, or already
/// clipped). Row groups, page indexes and column orders keep the surviving leaves' entries
/// unchanged; the Arrow schema in the key/value metadata is clipped the same way so the reader
/// produces [`analysis_schema`]'s types exactly (less the columns left out).
pub fn clip_metadata(meta: &ParquetMetaData) -> ParquetResult<Option<ParquetMetaData>> {
    let file = meta.file_metadata();
    let descr = file.schema_descr();
    // The stored Arrow schema as the memo tells files apart: an entry without a value is not
    // the same as no entry (the first is still rewritten below).
    let stored_arrow = file
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|e| e.key == ARROW_SCHEMA_KEY))
        .map(|e| e.value.as_deref().unwrap_or_default());
    let empty = empty_columns(meta);
    // The schema's part is the same for every file of one schema and the same empty columns:
    // worked out once.
    let Some(clipped) =
        SCHEMAS.clipped_schema(&descr.root_schema_ptr(), stored_arrow, &empty, || {
            clip_schema(descr, file.key_value_metadata(), &empty)
        })?
    else {
        return Ok(None);
    };
    let ClippedSchema {
        descr: new_descr,
        kept,
        arrow,
    } = &*clipped;
    let row_groups = meta
        .row_groups()
        .iter()
        .map(|rg| clip_row_group(rg, new_descr, kept))
        .collect::<ParquetResult<Vec<_>>>()?;
    let key_value = file.key_value_metadata().map(|kv| {
        kv.iter()
            .map(|e| match arrow {
                Some(clipped) if e.key == ARROW_SCHEMA_KEY => {
                    KeyValue::new(ARROW_SCHEMA_KEY.to_string(), clipped.clone())
                }
                _ => e.clone(),
            })
            .collect()
    });
    let column_orders = file.column_orders().map(|orders| {
        kept.iter()
            .filter_map(|&i| orders.get(i).copied())
            .collect()
    });
    let new_file = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        key_value,
        Arc::clone(new_descr),
        column_orders,
    );
    let builder = ParquetMetaDataBuilder::new(new_file)
        .set_row_groups(row_groups)
        .set_column_index(
            meta.column_index()
                .map(|ci| ci.iter().map(|g| keep(g, kept)).collect()),
        )
        .set_offset_index(
            meta.offset_index()
                .map(|oi| oi.iter().map(|g| keep(g, kept)).collect()),
        );
    Ok(Some(builder.build()))
}

/// The top-level columns of the file behind `meta` that hold no value, by their indexes among
/// its leaves: a leaf at the root (neither nested nor repeated) whose statistics, in every row
/// group, count as many nulls as the row group has rows. A column written without statistics
/// (the store writes none for ids and digests, [`schemas::parquet_props`]) is never judged
/// empty, nor is any column of a file without row groups.
pub fn empty_columns(meta: &ParquetMetaData) -> Vec<usize> {
    let descr = meta.file_metadata().schema_descr();
    if meta.num_row_groups() == 0 {
        return Vec::new();
    }
    (0..descr.num_columns())
        .filter(|&i| {
            let c = descr.column(i);
            c.path().parts().len() == 1
                && c.max_rep_level() == 0
                && c.max_def_level() == 1
                && meta.row_groups().iter().all(|rg| {
                    rg.column(i)
                        .statistics()
                        .and_then(|s| s.null_count_opt())
                        .is_some_and(|nulls| i64::try_from(nulls) == Ok(rg.num_rows()))
                })
        })
        .collect()
}

/// What clipping makes of the schema `descr` (with the key/value metadata `kv`, whose Arrow
/// schema is narrowed alike), without the leaves `empty` ([`empty_columns`]): `None` when the
/// file has nothing to clip.
fn clip_schema(
    descr: &SchemaDescriptor,
    kv: Option<&Vec<KeyValue>>,
    empty: &[usize],
) -> ParquetResult<Option<ClippedSchema>> {
    let root = descr.root_schema();
    let empty_names: Vec<String> = empty
        .iter()
        .map(|&i| descr.column(i).name().to_string())
        .collect();
    let mut changed = false;
    let mut fields = Vec::with_capacity(root.get_fields().len());
    for f in root.get_fields() {
        if !f.is_group() && empty_names.iter().any(|e| e == f.name()) {
            changed = true;
            continue;
        }
        match clip_of(f.name()).and_then(|c| narrow_group(f, c.via, c.keep).transpose()) {
            Some(clipped) => {
                changed = true;
                fields.push(clipped?);
            }
            None => fields.push(Arc::clone(f)),
        }
    }
    if !changed {
        return Ok(None);
    }
    let info = root.get_basic_info();
    let new_root = Type::group_type_builder(info.name())
        .with_fields(fields)
        .with_logical_type(info.logical_type_ref().cloned())
        .with_converted_type(info.converted_type())
        .with_id(info.has_id().then(|| info.id()))
        .build()?;
    let new_descr = Arc::new(SchemaDescriptor::new(Arc::new(new_root)));
    // The surviving leaves, in order: clipping only removes subtrees.
    let mut kept = Vec::with_capacity(new_descr.num_columns());
    let mut next = 0;
    for (i, c) in descr.columns().iter().enumerate() {
        if next < new_descr.num_columns() && new_descr.column(next).path() == c.path() {
            kept.push(i);
            next += 1;
        }
    }
    if kept.len() != new_descr.num_columns() {
        return Err(ParquetError::General(
            "clipping nested columns left the footer inconsistent".into(),
        ));
    }
    let arrow = match kv {
        Some(kv) if kv.iter().any(|e| e.key == ARROW_SCHEMA_KEY) => {
            let arrow = parquet_to_arrow_schema(descr, Some(kv))?;
            let analysis = analysis_schema(&arrow);
            let kept: Vec<FieldRef> = analysis
                .fields()
                .iter()
                .filter(|f| !empty_names.contains(f.name()))
                .cloned()
                .collect();
            let kept = Schema::new_with_metadata(kept, analysis.metadata().clone());
            Some(encode_arrow_schema(&kept))
        }
        _ => None,
    };
    Ok(Some(ClippedSchema {
        descr: new_descr,
        kept,
        arrow,
    }))
}

/// The entries of `per_leaf` at the indexes `kept`.
fn keep<T: Clone>(per_leaf: &[T], kept: &[usize]) -> Vec<T> {
    kept.iter().map(|&i| per_leaf[i].clone()).collect()
}

/// Group `t` narrowed along `via` to `keep` (the Parquet side of [`narrow_type`]): a MAP
/// group is stepped into through its repeated `key_value` group, a LIST group through its
/// repeated group's single `element`. `None` when there is nothing to narrow.
fn narrow_group(t: &TypePtr, via: &[&str], keep: &[&str]) -> ParquetResult<Option<TypePtr>> {
    if !t.is_group() {
        return Ok(None);
    }
    let info = t.get_basic_info();
    let wrapper = matches!(
        info.logical_type_ref(),
        Some(LogicalType::Map | LogicalType::List)
    ) || matches!(
        info.converted_type(),
        ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE | ConvertedType::LIST
    );
    if wrapper {
        // MAP: `repeated group key_value { key; value }` is the entries struct itself.
        // LIST: `repeated group list { element }` wraps the element.
        let [repeated] = t.get_fields() else {
            return Ok(None);
        };
        if !repeated.is_group() {
            return Ok(None);
        }
        let is_list = matches!(info.logical_type_ref(), Some(LogicalType::List))
            || info.converted_type() == ConvertedType::LIST;
        let inner = if is_list {
            let [element] = repeated.get_fields() else {
                return Ok(None);
            };
            match narrow_group(element, via, keep)? {
                Some(e) => regroup(repeated, vec![e])?,
                None => return Ok(None),
            }
        } else {
            match narrow_group(repeated, via, keep)? {
                Some(kv) => kv,
                None => return Ok(None),
            }
        };
        return Ok(Some(regroup(t, vec![inner])?));
    }
    let children = t.get_fields();
    match via {
        [] => {
            let kept: Vec<TypePtr> = children
                .iter()
                .filter(|c| keep.contains(&c.name()))
                .cloned()
                .collect();
            if kept.is_empty() || kept.len() == children.len() {
                return Ok(None);
            }
            Ok(Some(regroup(t, kept)?))
        }
        [next, rest @ ..] => {
            let Some(i) = children.iter().position(|c| c.name() == *next) else {
                return Ok(None);
            };
            let Some(child) = narrow_group(&children[i], rest, keep)? else {
                return Ok(None);
            };
            let mut out = children.to_vec();
            out[i] = child;
            Ok(Some(regroup(t, out)?))
        }
    }
}

/// Group `g` with the children `fields` instead of its own.
fn regroup(g: &TypePtr, fields: Vec<TypePtr>) -> ParquetResult<TypePtr> {
    let info = g.get_basic_info();
    let mut b = Type::group_type_builder(info.name())
        .with_fields(fields)
        .with_logical_type(info.logical_type_ref().cloned())
        .with_converted_type(info.converted_type())
        .with_id(info.has_id().then(|| info.id()));
    if info.has_repetition() {
        b = b.with_repetition(info.repetition());
    }
    Ok(Arc::new(b.build()?))
}

fn clip_row_group(
    rg: &RowGroupMetaData,
    descr: &Arc<SchemaDescriptor>,
    kept: &[usize],
) -> ParquetResult<RowGroupMetaData> {
    let mut b = RowGroupMetaData::builder(Arc::clone(descr))
        .set_num_rows(rg.num_rows())
        .set_total_byte_size(rg.total_byte_size())
        .set_sorting_columns(rg.sorting_columns().cloned())
        .set_column_metadata(kept.iter().map(|&i| rg.column(i).clone()).collect());
    if let Some(o) = rg.ordinal() {
        b = b.set_ordinal(o);
    }
    if let Some(o) = rg.file_offset() {
        b = b.set_file_offset(o);
    }
    b.build()
}

/// A Parquet reader whose footer is [clipped](clip_metadata); data ranges pass through.
struct ClippingReader {
    inner: Box<dyn AsyncFileReader + Send>,
}

impl AsyncFileReader for ClippingReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ParquetResult<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ParquetResult<Vec<Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ParquetResult<Arc<ParquetMetaData>>> {
        async move {
            let meta = self.inner.get_metadata(options).await?;
            Ok(match clip_metadata(&meta)? {
                Some(clipped) => Arc::new(clipped),
                None => meta,
            })
        }
        .boxed()
    }
}

/// DataFusion's caching reader factory, with [`ClippingReader`] around each reader.
#[derive(Debug)]
struct ClippingReaderFactory {
    inner: CachedParquetFileReaderFactory,
}

impl ParquetFileReaderFactory for ClippingReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: datafusion::datasource::listing::PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> DfResult<Box<dyn AsyncFileReader + Send>> {
        let inner = self.inner.create_reader(
            partition_index,
            partitioned_file,
            metadata_size_hint,
            metrics,
        )?;
        Ok(Box::new(ClippingReader { inner }))
    }
}

/// Parquet as DataFusion reads it, through [`ClippingReaderFactory`]: the file format of the
/// tables the analyzer's row scans register (declared with [`analysis_schema`]).
#[derive(Debug, Default)]
pub struct AnalysisFormat {
    inner: ParquetFormat,
}

#[async_trait]
impl FileFormat for AnalysisFormat {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(&self, c: &FileCompressionType) -> DfResult<String> {
        self.inner.get_ext_with_compression(c)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> DfResult<SchemaRef> {
        let full = self.inner.infer_schema(state, store, objects).await?;
        Ok(analysis_schema(&full))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DfResult<Statistics> {
        self.inner
            .infer_stats(state, store, table_schema, object)
            .await
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        // As `ParquetFormat::create_physical_plan`, with the clipping reader factory.
        let mut source = conf
            .file_source()
            .downcast_ref::<ParquetSource>()
            .cloned()
            .ok_or_else(|| DataFusionError::Internal("expected a ParquetSource".into()))?
            .with_table_parquet_options(self.inner.options().clone());
        let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let store = state
            .runtime_env()
            .object_store(conf.object_store_url.clone())?;
        source = source.with_parquet_file_reader_factory(Arc::new(ClippingReaderFactory {
            inner: CachedParquetFileReaderFactory::new(store, cache),
        }));
        if let Some(hint) = self.inner.metadata_size_hint() {
            source = source.with_metadata_size_hint(hint);
        }
        let conf = FileScanConfigBuilder::from(conf)
            .with_source(Arc::new(source))
            .build();
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::StringArray;
    use arrow::datatypes::Field;

    use super::*;

    /// The WAL tail's batches carry the `date` partition column beside the span columns: the
    /// span text and id columns become views, the partition column keeps the listing table's
    /// type (a view there failed every scan of a store with a WAL tail: "Mismatch between schema
    /// and batches").
    #[test]
    fn span_text_columns_become_views_and_a_partition_column_does_not() {
        let schema = Arc::new(Schema::new(vec![
            Field::new(col::NAME, DataType::Utf8, true),
            Field::new(schemas::layout::DATE_KEY, DataType::Utf8, true),
            Field::new(col::TRACE_ID, DataType::Binary, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["tools/call lookup_order"])),
                Arc::new(StringArray::from(vec!["2026-12-04"])),
                Arc::new(arrow::array::BinaryArray::from(vec![&[7u8; 16][..]])),
            ],
        )
        .unwrap();
        let clipped = clip_batch(&batch).unwrap();
        let types: Vec<&DataType> = clipped
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.data_type())
            .collect();
        assert_eq!(
            types,
            [&DataType::Utf8View, &DataType::Utf8, &DataType::BinaryView]
        );
        assert_eq!(
            arrow::array::AsArray::as_binary_view(clipped.column(2)).value(0),
            &[7u8; 16][..]
        );
        assert_eq!(
            clipped
                .column(0)
                .as_any()
                .downcast_ref::<arrow::array::StringViewArray>()
                .unwrap()
                .value(0),
            "tools/call lookup_order"
        );
    }
}
