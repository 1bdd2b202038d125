//! Pass 1 of a windowed `check`: what the store holds per trace, read from light columns only.
//!
//! Why: a store larger than memory is checked one window of traces at a time (`crate::window`),
//! and cutting windows needs, for every trace, where it lies in time and how many spans it has,
//! and which traces share a conversation (a conversation is judged whole, so its traces go to one
//! window). DataFusion computes both as aggregates over `trace_id`, the start and end times and
//! the conversation id (its hash aggregate spills to disk under the memory pool); the rows never
//! become `SpanRow`s. The store's MCP tool catalog (`tools/list` results, a few spans) is read
//! here too: it is the whole store's, whichever window a call falls in; so are the guardrails'
//! decisions by tool (which tools a guardrail guards, for TL016), an aggregate of a few rows.

use std::hash::BuildHasher;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, AsArray, BinaryArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int32Type, Int64Type};
use datafusion::error::DataFusionError;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::functions_aggregate::expr_fn::{count, max, min};
use datafusion::prelude::{cast as cast_expr, col, lit, Expr, SessionConfig, SessionContext};
use futures::StreamExt;
use schemas::schema::col as c;

use super::{wal_spans_matching, Projection, RowReader, ScanFilter, TABLE};
use crate::error::LoadError;
use crate::model::span::MODEL_OPERATIONS;
use crate::model::span::{SpanRow, TraceId};
use crate::rules::{Catalog, CatalogBuilder, GuardrailFacts};
use crate::store::{Scanned, Snapshot};

/// Where one trace lies in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceExtent {
    pub trace: TraceId,
    /// Earliest span start.
    pub first_ns: i64,
    /// Latest span start (a window reads spans by start time up to here).
    pub last_start_ns: i64,
    /// Latest span end.
    pub end_ns: i64,
    /// Spans read (before de-duplication of re-exported spans).
    pub spans: u64,
}

/// The start times of the spans filed under one `date=` / `hour=` partition. A span is filed by
/// its start hour, except one claiming to start more than a day after it was received (filed
/// under the hour of receipt): so windows select partitions by what they hold, not by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRange {
    pub date: String,
    pub hour: i32,
    pub first_ns: i64,
    pub last_ns: i64,
}

/// The pass-1 index of a store under a filter.
#[derive(Debug)]
pub struct StoreIndex {
    /// One per partition holding matching spans.
    pub partitions: Vec<PartitionRange>,
    /// One per trace, in no particular order.
    pub traces: Vec<TraceExtent>,
    /// (trace, hash of a conversation id) pairs, each once. A hash, not the id: 24 bytes a
    /// pair whatever the id's length. Two ids with one hash would only join their traces into
    /// one group, judged in one window: the findings are the same.
    pub conversations: Vec<(TraceId, u64)>,
    /// The store's MCP tool catalog (the latest listing of each tool).
    pub catalog: Catalog,
    /// Which tools guardrails decided on, store-wide (TL016).
    pub guardrails: GuardrailFacts,
    pub scanned: Scanned,
}

/// A DataFusion session whose memory pool holds `limit` bytes (unbounded when `None`). DataFusion's
/// own `DATAFUSION_*` environment variables (e.g. `DATAFUSION_EXECUTION_TARGET_PARTITIONS`) apply.
pub fn session(limit: Option<usize>) -> Result<SessionContext, DataFusionError> {
    let mut rt = RuntimeEnvBuilder::new();
    if let Some(bytes) = limit {
        rt = rt.with_memory_limit(bytes, 1.0);
    }
    Ok(SessionContext::new_with_config_rt(
        SessionConfig::from_env()?,
        rt.build_arc()?,
    ))
}

/// Reserves `bytes` of `ctx`'s memory pool for `what` (a window's rows and model, which live
/// outside DataFusion's operators); fails when the pool cannot hold them.
pub fn reserve(
    ctx: &SessionContext,
    what: &str,
    bytes: usize,
) -> Result<MemoryReservation, DataFusionError> {
    let r = MemoryConsumer::new(what).register(&ctx.runtime_env().memory_pool);
    r.try_grow(bytes)?;
    Ok(r)
}

/// The memory pool's message when `e` is a scan that ran out of it (`--memory-limit`).
pub fn exhausted(e: &LoadError) -> Option<String> {
    match e {
        LoadError::Scan { cause, .. } => match cause.find_root() {
            DataFusionError::ResourcesExhausted(m) => Some(m.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Takes a snapshot of the store with data in it.
pub async fn snapshot(data_dir: &Path) -> Result<Snapshot, LoadError> {
    let snapshot = Snapshot::take(data_dir).await?;
    snapshot.require_data()?;
    Ok(snapshot)
}

/// Indexes the store (pass 1). A file that cannot be decoded is named, skipped and left out of
/// `snapshot`, so pass 2 reads exactly what was indexed. A scan that reads no span is
/// [`LoadError::NoSpans`].
pub async fn index_store(
    snapshot: &mut Snapshot,
    data_dir: &Path,
    filter: &ScanFilter,
    limit: Option<usize>,
) -> Result<StoreIndex, LoadError> {
    let path = data_dir.join("spans").display().to_string();
    let scan_err = |cause| LoadError::Scan {
        path: path.clone(),
        cause,
    };
    // Errors of the aggregates name the store.
    let named = |e| match e {
        LoadError::Scan { cause, .. } => scan_err(cause),
        e => e,
    };
    let ctx = session(limit).map_err(scan_err)?;
    let done = match index_once(&ctx, snapshot, filter).await {
        // Out of memory pool is not a damaged file: no point decoding every file to find one.
        Err(e @ LoadError::Scan { .. }) if exhausted(&e).is_none() => {
            if snapshot.skip_undecodable() == 0 {
                return Err(named(e));
            }
            snapshot.require_data()?;
            let ctx = session(limit).map_err(scan_err)?;
            index_once(&ctx, snapshot, filter).await
        }
        other => other,
    };
    let (traces, partitions, conversations, catalog, guardrails) = done.map_err(named)?;
    let spans: u64 = traces.iter().map(|t| t.spans).sum();
    if spans == 0 {
        return Err(LoadError::NoSpans(snapshot.diagnose(filter)));
    }
    let wal_spans = wal_spans_matching(&ctx, snapshot, filter)
        .await
        .map_err(scan_err)?;
    Ok(StoreIndex {
        partitions,
        traces,
        conversations,
        catalog,
        guardrails,
        scanned: Scanned {
            files: snapshot.files_selected(filter),
            spans,
            wal_spans,
            unreadable_files: snapshot.all_unreadable(),
            // set by the windows, which join the log records
            log_records: 0,
            spans_with_event_content: 0,
        },
    })
}

type Indexed = (
    Vec<TraceExtent>,
    Vec<PartitionRange>,
    Vec<(TraceId, u64)>,
    Catalog,
    GuardrailFacts,
);

async fn index_once(
    ctx: &SessionContext,
    snapshot: &Snapshot,
    filter: &ScanFilter,
) -> Result<Indexed, LoadError> {
    let scan_err = |cause| LoadError::Scan {
        path: String::new(),
        cause,
    };
    snapshot.register(ctx).await?;
    let mut df = ctx.table(TABLE).await.map_err(scan_err)?;
    for e in filter.exprs() {
        df = df.filter(e).map_err(scan_err)?;
    }
    let extents = df
        .clone()
        .aggregate(
            vec![col(c::TRACE_ID)],
            vec![
                min(col(c::START_TIME_UNIX_NANO)).alias("first"),
                max(col(c::START_TIME_UNIX_NANO)).alias("last_start"),
                max(col(c::END_TIME_UNIX_NANO)).alias("end"),
                count(lit(1)).alias("spans"),
            ],
        )
        .map_err(scan_err)?;
    let mut traces = Vec::new();
    let mut stream = extents.execute_stream().await.map_err(scan_err)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(scan_err)?;
        let ids = binary(&batch, 0)?;
        let (first, last, end, n) = (
            int64(&batch, 1)?,
            int64(&batch, 2)?,
            int64(&batch, 3)?,
            int64(&batch, 4)?,
        );
        for i in 0..batch.num_rows() {
            let Some(trace) = TraceId::from_slice(ids.value(i)) else {
                continue;
            };
            traces.push(TraceExtent {
                trace,
                first_ns: first.value(i),
                last_start_ns: last.value(i),
                end_ns: if end.is_null(i) {
                    last.value(i)
                } else {
                    end.value(i)
                },
                spans: u64::try_from(n.value(i)).unwrap_or(0),
            });
        }
    }
    let by_partition = df
        .clone()
        .aggregate(
            vec![
                col("date"),
                cast_expr(col("hour"), DataType::Int32).alias("hour"),
            ],
            vec![
                min(col(c::START_TIME_UNIX_NANO)).alias("first"),
                max(col(c::START_TIME_UNIX_NANO)).alias("last"),
            ],
        )
        .map_err(scan_err)?;
    let mut partitions = Vec::new();
    let mut stream = by_partition.execute_stream().await.map_err(scan_err)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(scan_err)?;
        let date = cast(batch.column(0), &DataType::Utf8).map_err(|e| scan_err(e.into()))?;
        let date = date.as_string::<i32>();
        let hour = cast(batch.column(1), &DataType::Int32).map_err(|e| scan_err(e.into()))?;
        let hour = hour.as_primitive::<Int32Type>();
        let (first, last) = (int64(&batch, 2)?, int64(&batch, 3)?);
        for i in 0..batch.num_rows() {
            partitions.push(PartitionRange {
                date: date.value(i).to_string(),
                hour: hour.value(i),
                first_ns: first.value(i),
                last_ns: last.value(i),
            });
        }
    }
    let links = df
        .clone()
        .filter(col(c::GEN_AI_CONVERSATION_ID).is_not_null())
        .and_then(|d| {
            d.aggregate(
                vec![col(c::TRACE_ID), col(c::GEN_AI_CONVERSATION_ID)],
                vec![],
            )
        })
        .map_err(scan_err)?;
    let mut conversations = Vec::new();
    let hasher = foldhash::quality::FixedState::with_seed(0);
    let mut stream = links.execute_stream().await.map_err(scan_err)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(scan_err)?;
        let ids = binary(&batch, 0)?;
        let conv = cast(batch.column(1), &DataType::Utf8).map_err(|e| scan_err(e.into()))?;
        let conv = conv.as_string::<i32>();
        for i in 0..batch.num_rows() {
            if let Some(trace) = TraceId::from_slice(ids.value(i)) {
                conversations.push((trace, hasher.hash_one(conv.value(i))));
            }
        }
    }
    let decided = df
        .clone()
        .filter(
            col(c::GUARDRAIL_NAME)
                .is_not_null()
                .or(col(c::GUARDRAIL_DECISION).is_not_null()),
        )
        .and_then(|d| {
            d.aggregate(
                vec![
                    col(c::GUARDRAIL_NAME),
                    col(c::GUARDRAIL_DECISION).is_not_null().alias("decided"),
                    col(c::GEN_AI_TOOL_NAME),
                ],
                vec![],
            )
        })
        .map_err(scan_err)?;
    let mut guardrails = GuardrailFacts::default();
    let mut stream = decided.execute_stream().await.map_err(scan_err)?;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(scan_err)?;
        let name = cast(batch.column(0), &DataType::Utf8).map_err(|e| scan_err(e.into()))?;
        let name = name.as_string::<i32>();
        let decided = batch.column(1).as_boolean();
        let tool = cast(batch.column(2), &DataType::Utf8).map_err(|e| scan_err(e.into()))?;
        let tool = tool.as_string::<i32>();
        for i in 0..batch.num_rows() {
            guardrails.add(
                (!name.is_null(i)).then(|| name.value(i)),
                decided.value(i),
                (!tool.is_null(i)).then(|| tool.value(i)),
            );
        }
    }
    // Listings only: model calls carry the definitions shown to the model (heavy, and not the
    // servers' catalog), so they are dropped before their rows are decoded.
    let op = || col(c::GEN_AI_OPERATION_NAME);
    let models: Vec<Expr> = MODEL_OPERATIONS.iter().map(|o| lit(*o)).collect();
    let defs = df
        .filter(
            col(c::TOOL_DEFINITIONS)
                .is_not_null()
                .and(op().is_null().or(op().in_list(models, true))),
        )
        .and_then(|d| d.select_columns(&Projection::base().columns()))
        .map_err(scan_err)?;
    let mut catalog = CatalogBuilder::default();
    let mut reader = RowReader::default();
    let mut stream = defs.execute_stream().await.map_err(scan_err)?;
    let mut rows: Vec<SpanRow> = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.clear();
        reader.append(&batch.map_err(scan_err)?, &mut rows)?;
        rows.iter().for_each(|s| catalog.add(s));
    }
    Ok((
        traces,
        partitions,
        conversations,
        catalog.build(),
        guardrails,
    ))
}

fn binary(batch: &RecordBatch, i: usize) -> Result<BinaryArray, LoadError> {
    let a = cast(batch.column(i), &DataType::Binary).map_err(|e| LoadError::Scan {
        path: String::new(),
        cause: e.into(),
    })?;
    Ok(a.as_binary::<i32>().clone())
}

fn int64(batch: &RecordBatch, i: usize) -> Result<arrow::array::Int64Array, LoadError> {
    let a = cast(batch.column(i), &DataType::Int64).map_err(|e| LoadError::Scan {
        path: String::new(),
        cause: e.into(),
    })?;
    Ok(a.as_primitive::<Int64Type>().clone())
}

/// Keeps the rows of `batch` whose trace is in `keep`.
pub fn keep_traces(
    batch: &RecordBatch,
    keep: &std::collections::HashSet<TraceId, foldhash::fast::RandomState>,
) -> Result<RecordBatch, DataFusionError> {
    let idx = batch.schema().index_of(c::TRACE_ID)?;
    let ids = cast(batch.column(idx), &DataType::Binary)?;
    let ids = ids.as_binary::<i32>();
    let mask: arrow::array::BooleanArray = (0..ids.len())
        .map(|i| Some(TraceId::from_slice(ids.value(i)).is_some_and(|t| keep.contains(&t))))
        .collect();
    Ok(arrow::compute::filter_record_batch(batch, &mask)?)
}

/// Shared so each scan task can filter its batches.
pub type TraceSet = Arc<std::collections::HashSet<TraceId, foldhash::fast::RandomState>>;

/// The filter selecting the partitions of `partitions` that hold spans starting in
/// `[from_ns, to_ns]` (DataFusion prunes the others by directory name); `None` when none does.
pub fn partitions_holding(partitions: &[PartitionRange], from_ns: i64, to_ns: i64) -> Option<Expr> {
    let mut by_date: std::collections::BTreeMap<&str, Vec<i32>> = std::collections::BTreeMap::new();
    for p in partitions {
        if p.last_ns >= from_ns && p.first_ns <= to_ns {
            by_date.entry(p.date.as_str()).or_default().push(p.hour);
        }
    }
    by_date
        .into_iter()
        .map(|(date, hours)| {
            let hours = hours.into_iter().map(lit).collect();
            col("date")
                .eq(lit(date.to_string()))
                .and(cast_expr(col("hour"), DataType::Int32).in_list(hours, false))
        })
        .reduce(Expr::or)
}
