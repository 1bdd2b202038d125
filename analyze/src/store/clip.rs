//! Reading only the attribute values the analyzer uses: the key and the `str` field of each
//! entry of `attributes` and `content_attributes`.
//!
//! Why: an attribute map entry is seven Parquet leaves (key, and the value's `type`, `str`,
//! `int`, `double`, `bool`, `bytes`), and decoding them was a fifth of `check`'s instructions
//! (callgrind, 100,000 spans, session 18: `MapArrayReader` 20.7%). The analyzer's rows keep only
//! keys and string values ([`crate::load::rows`]), so five of the seven leaves were decoded and
//! dropped. DataFusion 55 prunes nested leaves for structs and lists but never inside a map
//! (`datafusion-datasource-parquet`'s `nested_schema_pruning`: "maps are opaque"), so the
//! clipping happens one level down, where the Parquet reader learns the file's layout: the
//! footer handed to DataFusion ([`clip_metadata`]) describes each map's value as a struct of
//! `str` alone, and the table the analyzer registers declares the same ([`analysis_schema`]).
//! The column chunks themselves are untouched; the reader simply never fetches the others.
//!
//! Only the analyzer's row scans use this shape ([`AnalysisFormat`]); `tripline query`, the MCP
//! server and every external reader see the full map.

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, MapArray, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
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

/// The attribute maps read as key + `str`.
pub const CLIPPED_MAPS: &[&str] = &[col::ATTRIBUTES, col::CONTENT_ATTRIBUTES];

/// The key under which Arrow writers store their schema in a Parquet footer.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// `schema` with the value struct of every [`CLIPPED_MAPS`] map cut down to its `str` field.
pub fn analysis_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| match clipped_type(f) {
            Some(t) => Arc::new(f.as_ref().clone().with_data_type(t)),
            None => Arc::clone(f),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The clipped type of `field` when it is one of [`CLIPPED_MAPS`] with a clippable value.
fn clipped_type(field: &Field) -> Option<DataType> {
    if !CLIPPED_MAPS.contains(&field.name().as_str()) {
        return None;
    }
    let DataType::Map(entries, sorted) = field.data_type() else {
        return None;
    };
    let DataType::Struct(kv) = entries.data_type() else {
        return None;
    };
    let [key, val] = kv.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let DataType::Struct(value_fields) = val.data_type() else {
        return None;
    };
    let str_field = value_fields.iter().find(|f| f.name() == value::STR)?;
    if value_fields.len() == 1 {
        return None;
    }
    let value = val
        .as_ref()
        .clone()
        .with_data_type(DataType::Struct(Fields::from(vec![Arc::clone(str_field)])));
    let entries = entries
        .as_ref()
        .clone()
        .with_data_type(DataType::Struct(Fields::from(vec![
            Arc::clone(key),
            Arc::new(value),
        ])));
    Some(DataType::Map(Arc::new(entries), *sorted))
}

/// `batch` (of the full span schema) in [`analysis_schema`]'s shape: the same rows, the map
/// values reduced to `str`. For spans the analyzer reads from the WAL tail rather than a file.
pub fn clip_batch(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let schema = analysis_schema(batch.schema().as_ref());
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            if CLIPPED_MAPS.contains(&field.name().as_str())
                && column.data_type() != field.data_type()
            {
                clip_map_array(column, field.data_type())
            } else {
                Ok(Arc::clone(column))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema, columns)
}

fn clip_map_array(column: &ArrayRef, to: &DataType) -> Result<ArrayRef, ArrowError> {
    let not = |what: &str| ArrowError::SchemaError(format!("attribute map column: {what}"));
    let map = column
        .as_any()
        .downcast_ref::<MapArray>()
        .ok_or_else(|| not("not a map"))?;
    let DataType::Map(entries_field, sorted) = to else {
        return Err(not("target is not a map"));
    };
    let DataType::Struct(kv_fields) = entries_field.data_type() else {
        return Err(not("target entries are not a struct"));
    };
    let DataType::Struct(value_fields) = kv_fields[1].data_type() else {
        return Err(not("target value is not a struct"));
    };
    let values = map
        .values()
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| not("value is not a struct"))?;
    let strs = values
        .column_by_name(value::STR)
        .ok_or_else(|| not("value has no `str` field"))?;
    let value = StructArray::try_new(
        value_fields.clone(),
        vec![Arc::clone(strs)],
        values.nulls().cloned(),
    )?;
    let entries = StructArray::try_new(
        kv_fields.clone(),
        vec![Arc::clone(map.keys()), Arc::new(value)],
        map.entries().nulls().cloned(),
    )?;
    Ok(Arc::new(MapArray::try_new(
        Arc::clone(entries_field),
        map.offsets().clone(),
        entries,
        map.nulls().cloned(),
        *sorted,
    )?))
}

/// `meta` describing only the key and `str` leaves of the [`CLIPPED_MAPS`] maps, or `None`
/// when the file has nothing to clip (no such map, or already clipped). Row groups, page
/// indexes and column orders keep the surviving leaves' entries unchanged; the Arrow schema in
/// the key/value metadata is clipped the same way so the reader produces
/// [`analysis_schema`]'s types exactly.
pub fn clip_metadata(meta: &ParquetMetaData) -> ParquetResult<Option<ParquetMetaData>> {
    let file = meta.file_metadata();
    let descr = file.schema_descr();
    let root = descr.root_schema();
    let mut changed = false;
    let mut fields = Vec::with_capacity(root.get_fields().len());
    for f in root.get_fields() {
        match clip_map_group(f)? {
            Some(clipped) => {
                changed = true;
                fields.push(clipped);
            }
            None => fields.push(Arc::clone(f)),
        }
    }
    if !changed {
        return Ok(None);
    }
    let kept: Vec<usize> = descr
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| !is_dropped_leaf(c.path().parts()))
        .map(|(i, _)| i)
        .collect();
    let info = root.get_basic_info();
    let new_root = Type::group_type_builder(info.name())
        .with_fields(fields)
        .with_logical_type(info.logical_type_ref().cloned())
        .with_converted_type(info.converted_type())
        .with_id(info.has_id().then(|| info.id()))
        .build()?;
    let new_descr = Arc::new(SchemaDescriptor::new(Arc::new(new_root)));
    if new_descr.num_columns() != kept.len()
        || new_descr
            .columns()
            .iter()
            .zip(&kept)
            .any(|(c, &i)| c.path() != descr.column(i).path())
    {
        return Err(ParquetError::General(
            "clipping the attribute maps' leaves left the footer inconsistent".into(),
        ));
    }

    let row_groups = meta
        .row_groups()
        .iter()
        .map(|rg| clip_row_group(rg, &new_descr, &kept))
        .collect::<ParquetResult<Vec<_>>>()?;
    let key_value = match file.key_value_metadata() {
        Some(kv) => Some(clip_key_value(kv, descr)?),
        None => None,
    };
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
        Arc::clone(&new_descr),
        column_orders,
    );
    let builder = ParquetMetaDataBuilder::new(new_file)
        .set_row_groups(row_groups)
        .set_column_index(
            meta.column_index()
                .map(|ci| ci.iter().map(|g| keep(g, &kept)).collect()),
        )
        .set_offset_index(
            meta.offset_index()
                .map(|oi| oi.iter().map(|g| keep(g, &kept)).collect()),
        );
    Ok(Some(builder.build()))
}

/// The entries of `per_leaf` at the indexes `kept`.
fn keep<T: Clone>(per_leaf: &[T], kept: &[usize]) -> Vec<T> {
    kept.iter().map(|&i| per_leaf[i].clone()).collect()
}

/// A leaf of a clipped map's value other than `str`: `[map, key_value, value, field]`.
fn is_dropped_leaf(path: &[String]) -> bool {
    match path {
        [map, _, v, field] => {
            CLIPPED_MAPS.contains(&map.as_str()) && v == "value" && field != value::STR
        }
        _ => false,
    }
}

/// The map group `f` with its value group reduced to `str`, if `f` is one of [`CLIPPED_MAPS`]
/// laid out as the writer lays it out (`map { repeated key_value { key; value { ... } } }`).
fn clip_map_group(f: &TypePtr) -> ParquetResult<Option<TypePtr>> {
    if !f.is_group() || !CLIPPED_MAPS.contains(&f.name()) {
        return Ok(None);
    }
    let [kv] = f.get_fields() else {
        return Ok(None);
    };
    let Some([key, val]) = kv
        .is_group()
        .then(|| kv.get_fields())
        .and_then(|c| c.get(..2))
    else {
        return Ok(None);
    };
    if kv.get_fields().len() != 2 || !val.is_group() || val.name() != "value" {
        return Ok(None);
    }
    let Some(str_leaf) = val.get_fields().iter().find(|c| c.name() == value::STR) else {
        return Ok(None);
    };
    if val.get_fields().len() == 1 {
        return Ok(None);
    }
    let value = regroup(val, vec![Arc::clone(str_leaf)])?;
    let kv = regroup(kv, vec![Arc::clone(key), value])?;
    Ok(Some(regroup(f, vec![kv])?))
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

/// The footer's key/value metadata with the Arrow schema clipped like the Parquet schema.
fn clip_key_value(kv: &[KeyValue], full: &SchemaDescriptor) -> ParquetResult<Vec<KeyValue>> {
    let Some(_) = kv.iter().find(|e| e.key == ARROW_SCHEMA_KEY) else {
        return Ok(kv.to_vec());
    };
    let arrow = parquet_to_arrow_schema(full, Some(&kv.to_vec()))?;
    let clipped = encode_arrow_schema(&analysis_schema(&arrow));
    Ok(kv
        .iter()
        .map(|e| {
            if e.key == ARROW_SCHEMA_KEY {
                KeyValue::new(ARROW_SCHEMA_KEY.to_string(), clipped.clone())
            } else {
                e.clone()
            }
        })
        .collect())
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
