//! Pass 1 of a windowed `check`: what the store holds per trace, read from light columns only.
//!
//! Why: a store larger than memory is checked one window of traces at a time (`crate::window`),
//! and cutting windows needs, for every trace, where it lies in time and how many spans it has,
//! and which traces share a conversation (a conversation is judged whole, so its traces go to one
//! window). One streamed scan of the light columns (trace id, start and end, partition,
//! conversation id, guardrail name, decision and tool) gives all of it: each scan task folds its
//! batches into its own per-trace extents (bounded maps flushed as sorted runs:
//! [`super::extent_runs`]), partition ranges, conversation links and guardrail decisions as they
//! arrive, and the tasks' results are merged (not five DataFusion hash
//! aggregates, one scan each: those held 700+ MiB at 10M spans, pages the allocator then kept
//! for the rest of the run). The state is held in the memory pool (`--memory-limit`); the rows
//! never become `SpanRow`s. The same scan reads the store's MCP tool catalog (`tools/list`
//! results, and the annotated definitions models were shown): the rows with tool definitions
//! (7.5% of the benchmark store's) become `SpanRow`s of the five columns the catalog uses,
//! folded into each task's [`CatalogBuilder`]. The catalog is the whole store's, whichever window
//! a call falls in; so are the guardrails' decisions by tool (which tools a guardrail guards,
//! for TL016). Until session 46 the catalog was a second scan: every file of the store opened
//! and its footer parsed twice, and the ids and start times decoded twice.

use std::hash::BuildHasher;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int32Type, Int64Type};
use datafusion::error::DataFusionError;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{cast as cast_expr, col, lit, Expr, SessionConfig, SessionContext};
use futures::StreamExt;
use schemas::schema::col as c;

use super::extent_runs::{Extent, ExtentRuns, NO_CONVERSATION};
use super::id_col::IdCol;
use super::str_col::StrCol;
use super::{wal_spans_matching, RowReader, ScanFilter, TABLE};
use crate::error::LoadError;
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
///
/// File statistics are not collected up front (`collect_statistics`, unless that variable sets
/// it): no plan here uses them (row groups are still pruned by each file's own footer when it is
/// opened), and collecting them decodes every file's footer into memory the allocator then keeps:
/// at 10M spans (908 files) the process was 700+ MiB resident after pass 1 with them, against
/// half that without (BENCHMARKS.md, session 8).
pub fn session(limit: Option<usize>) -> Result<SessionContext, DataFusionError> {
    let mut rt = RuntimeEnvBuilder::new();
    if let Some(bytes) = limit {
        rt = rt.with_memory_limit(bytes, 1.0);
    }
    let mut config = SessionConfig::from_env()?;
    if std::env::var_os("DATAFUSION_EXECUTION_COLLECT_STATISTICS").is_none() {
        config = config.with_collect_statistics(false);
    }
    Ok(SessionContext::new_with_config_rt(config, rt.build_arc()?))
}

/// [`session`] for the windows of pass 2: filters are evaluated inside the Parquet reader
/// (`pushdown_filters`, cheapest first), so the columns of rows a window does not keep (another
/// trace, another time) are never decoded.
pub fn window_session(limit: Option<usize>) -> Result<SessionContext, DataFusionError> {
    let ctx = session(limit)?;
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        let parquet = &mut state.config_mut().options_mut().execution.parquet;
        parquet.pushdown_filters = true;
        parquet.reorder_filters = true;
    }
    Ok(ctx)
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
    spill_dir: Option<&Path>,
) -> Result<StoreIndex, LoadError> {
    let spill_dir: Option<Arc<Path>> = spill_dir.map(Arc::from);
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
    let done = match index_once(&ctx, snapshot, filter, spill_dir.clone()).await {
        // Out of memory pool is not a damaged file: no point decoding every file to find one.
        Err(e @ LoadError::Scan { .. }) if exhausted(&e).is_none() => {
            if snapshot.skip_undecodable() == 0 {
                return Err(named(e));
            }
            snapshot.require_data()?;
            let ctx = session(limit).map_err(scan_err)?;
            index_once(&ctx, snapshot, filter, spill_dir.clone()).await
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
    spill_dir: Option<Arc<Path>>,
) -> Result<Indexed, LoadError> {
    let scan_err = |cause| LoadError::Scan {
        path: String::new(),
        cause,
    };
    snapshot.register_for_rows(ctx).await?;
    let mut df = ctx.table(TABLE).await.map_err(scan_err)?;
    for e in filter.exprs() {
        df = df.filter(e).map_err(scan_err)?;
    }
    // One scan of the light columns computes what five aggregates did (extents, partitions,
    // conversation links, guardrail decisions): each scan task folds its batches into its own
    // accumulator as they arrive, so only a few batches of Arrow data and the per-trace state are
    // ever alive (DataFusion's hash aggregates held 700+ MiB at 10M spans, and the allocator kept
    // those pages for the rest of the run).
    let light = df
        .select(vec![
            col(c::TRACE_ID),
            col(c::START_TIME_UNIX_NANO),
            col(c::END_TIME_UNIX_NANO),
            col("date"),
            cast_expr(col("hour"), DataType::Int32).alias("hour"),
            col(c::GEN_AI_CONVERSATION_ID),
            col(c::GUARDRAIL_NAME),
            col(c::GUARDRAIL_DECISION).is_not_null().alias("decided"),
            col(c::GEN_AI_TOOL_NAME),
            // the catalog's (`CATALOG_AT`)
            col(c::SPAN_ID),
            col(c::GEN_AI_OPERATION_NAME),
            col(c::TOOL_DEFINITIONS),
        ])
        .map_err(scan_err)?;
    let streams = light.execute_stream_partitioned().await.map_err(scan_err)?;
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            // The per-trace state is held in the memory pool: `--memory-limit` too small for it
            // is the pool's error, as for the scans.
            let reservation =
                MemoryConsumer::new("pass 1 index").register(&ctx.runtime_env().memory_pool);
            let spill_dir = spill_dir.clone();
            tokio::spawn(async move {
                let mut acc = Pass1::new(spill_dir);
                while let Some(batch) = stream.next().await {
                    acc.add(&batch?)?;
                    reservation.try_resize(acc.bytes())?;
                }
                Ok::<_, DataFusionError>(acc)
            })
        })
        .collect();
    let mut acc = Pass1::new(spill_dir);
    for task in tasks {
        let part = task
            .await
            .map_err(|e| scan_err(DataFusionError::External(Box::new(e))))?
            .map_err(scan_err)?;
        acc.merge(part);
    }
    let Pass1 {
        traces,
        partitions,
        guardrails,
        catalog,
        ..
    } = acc;
    if std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some() {
        let (runs, dir) = traces.spilled();
        let dir = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        eprintln!(
            "pass 1: {runs} sorted trace runs spilled to {}",
            dir.display()
        );
    }
    // In trace order (deterministic: the plan ties on it), each trace once.
    let (traces, conversations) = traces
        .finish()
        .map_err(|e| scan_err(DataFusionError::IoError(e)))?;
    let mut partitions: Vec<PartitionRange> = partitions
        .into_iter()
        .map(|((date, hour), (first_ns, last_ns))| PartitionRange {
            date,
            hour,
            first_ns,
            last_ns,
        })
        .collect();
    partitions.sort_unstable_by(|a, b| (&a.date, a.hour).cmp(&(&b.date, b.hour)));
    Ok((
        traces,
        partitions,
        conversations,
        catalog.build(),
        guardrails,
    ))
}

/// Where the columns [`CatalogBuilder::add`] reads of a span (trace and span id, start,
/// operation, tool definitions) are in the light projection of `index_once`.
const CATALOG_AT: [usize; 5] = [0, 9, 1, 10, 11];

/// The hash of a conversation id as pass 1 links traces by it (never [`NO_CONVERSATION`]).
fn conversation_hash(hasher: &impl BuildHasher, id: &str) -> u64 {
    hasher.hash_one(id).max(1)
}

type Fast = foldhash::fast::RandomState;

/// What one scan task of pass 1 has folded so far: per trace its extent (with its
/// conversations, in bounded maps and sorted runs: [`ExtentRuns`]), per partition its start
/// range, and the guardrails' decisions.
#[derive(Default)]
struct Pass1 {
    traces: ExtentRuns,
    partitions: std::collections::HashMap<(String, i32), (i64, i64), Fast>,
    guardrails: GuardrailFacts,
    /// The tool definitions of the spans seen so far (order does not matter: the latest
    /// listing of a tool wins by its place in the store's order).
    catalog: CatalogBuilder,
    /// Turns the rows with tool definitions into `SpanRow`s (its interner shares the strings
    /// a catalog repeats on every model call).
    reader: RowReader,
    /// The rows of the batch being folded, reused.
    listed: Vec<SpanRow>,
}

impl Pass1 {
    /// Empty; full maps of traces go to files in `spill_dir` (`None`: TMPDIR).
    fn new(spill_dir: Option<Arc<Path>>) -> Self {
        Self {
            traces: ExtentRuns::new(spill_dir),
            ..Self::default()
        }
    }

    /// Folds one batch of the light projection (columns in `index_once`'s order).
    fn add(&mut self, batch: &RecordBatch) -> Result<(), DataFusionError> {
        let ids = IdCol::of(batch.column(0))?;
        let start = cast(batch.column(1), &DataType::Int64)?;
        let start = start.as_primitive::<Int64Type>();
        let end = cast(batch.column(2), &DataType::Int64)?;
        let end = end.as_primitive::<Int64Type>();
        let date = cast(batch.column(3), &DataType::Utf8)?;
        let date = date.as_string::<i32>();
        let hour = cast(batch.column(4), &DataType::Int32)?;
        let hour = hour.as_primitive::<Int32Type>();
        let conv = StrCol::of(batch.column(5))?;
        let name = StrCol::of(batch.column(6))?;
        let decided = batch.column(7).as_boolean();
        let tool = StrCol::of(batch.column(8))?;
        let hasher = foldhash::quality::FixedState::with_seed(0);
        // The partition of the previous row: a batch comes from one file, so one partition.
        let mut part: Option<(usize, &mut (i64, i64))> = None;
        for i in 0..batch.num_rows() {
            let s = start.value(i);
            if !date.is_null(i) {
                let same = part.as_ref().is_some_and(|(j, _)| {
                    date.value(*j) == date.value(i) && hour.value(*j) == hour.value(i)
                });
                if !same {
                    let key = (date.value(i).to_string(), hour.value(i));
                    let range = self.partitions.entry(key).or_insert((s, s));
                    part = Some((i, range));
                }
                if let Some((_, r)) = part.as_mut() {
                    r.0 = r.0.min(s);
                    r.1 = r.1.max(s);
                }
            }
            let Some(trace) = TraceId::from_slice(ids.value(i)) else {
                continue;
            };
            let e = Extent {
                first_ns: s,
                last_start_ns: s,
                end_ns: end.value(i),
                conversation: conv
                    .get(i)
                    .map_or(NO_CONVERSATION, |c| conversation_hash(&hasher, c)),
                has_end: !end.is_null(i),
                spans: 1,
            };
            self.traces
                .add(trace, e)
                .map_err(DataFusionError::IoError)?;
            if !name.is_null(i) || decided.value(i) {
                self.guardrails
                    .add(name.get(i), decided.value(i), tool.get(i));
            }
        }
        self.add_listings(batch)
    }

    /// Folds the tool definitions of `batch`'s rows that carry any into the catalog; only
    /// those rows become `SpanRow`s.
    fn add_listings(&mut self, batch: &RecordBatch) -> Result<(), DataFusionError> {
        let defs = batch.column(CATALOG_AT[4]);
        if defs.null_count() == defs.len() {
            return Ok(());
        }
        let mask = arrow::compute::is_not_null(defs)?;
        let listed = arrow::compute::filter_record_batch(&batch.project(&CATALOG_AT)?, &mask)?;
        self.listed.clear();
        self.reader
            .append(&listed, &mut self.listed)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        self.listed.iter().for_each(|s| self.catalog.add(s));
        Ok(())
    }

    /// Bytes held (hash tables at their capacity, runs).
    fn bytes(&self) -> usize {
        self.traces.bytes() + self.partitions.capacity() * 64
    }

    fn merge(&mut self, o: Pass1) {
        self.traces.absorb(o.traces);
        for (k, (a, b)) in o.partitions {
            let r = self.partitions.entry(k).or_insert((a, b));
            r.0 = r.0.min(a);
            r.1 = r.1.max(b);
        }
        self.guardrails.any_decision |= o.guardrails.any_decision;
        self.guardrails.decided_on.extend(o.guardrails.decided_on);
        self.catalog.merge(o.catalog);
    }
}

/// A window's traces to read, shared by the scan's trace filter ([`super::trace_filter::in_traces`]).
pub type SharedTraces = Arc<crate::model::TraceSet>;

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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{BinaryArray, BooleanArray, Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    /// A batch of the light projection: (trace byte, start, end, date, hour, conversation,
    /// guardrail, decided, tool) per row, then the catalog's columns (no definitions).
    #[allow(clippy::type_complexity)]
    fn batch(
        rows: &[(
            u8,
            i64,
            Option<i64>,
            &str,
            i32,
            Option<&str>,
            Option<&str>,
            bool,
            Option<&str>,
        )],
    ) -> RecordBatch {
        let ids: Vec<Vec<u8>> = rows.iter().map(|r| vec![r.0; 16]).collect();
        let f = |n: &str, t: DataType| Field::new(n, t, true);
        let schema = Schema::new(vec![
            f("trace_id", DataType::Binary),
            f("start", DataType::Int64),
            f("end", DataType::Int64),
            f("date", DataType::Utf8),
            f("hour", DataType::Int32),
            f("conv", DataType::Utf8),
            f("guardrail", DataType::Utf8),
            f("decided", DataType::Boolean),
            f("tool", DataType::Utf8),
            f("span_id", DataType::Binary),
            f("op", DataType::Utf8),
            // no row here lists tools: `CatalogBuilder::merge` has its own test
            f("tool_definitions", DataType::Utf8),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(BinaryArray::from_iter_values(ids.iter())),
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
                Arc::new(rows.iter().map(|r| r.2).collect::<Int64Array>()),
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.3))),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.4))),
                Arc::new(rows.iter().map(|r| r.5).collect::<StringArray>()),
                Arc::new(rows.iter().map(|r| r.6).collect::<StringArray>()),
                Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.7)))),
                Arc::new(rows.iter().map(|r| r.8).collect::<StringArray>()),
                Arc::new(BinaryArray::from_iter_values(ids.iter())),
                arrow::array::new_null_array(&DataType::Utf8, rows.len()),
                arrow::array::new_null_array(&DataType::Utf8, rows.len()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn one_scan_folds_extents_partitions_links_and_guardrails_and_merges_across_tasks() {
        let a = batch(&[
            (
                1,
                50,
                Some(70),
                "2026-11-02",
                10,
                Some("c1"),
                None,
                false,
                None,
            ),
            (1, 40, None, "2026-11-02", 10, Some("c1"), None, false, None),
            (
                2,
                90,
                None,
                "2026-11-02",
                11,
                None,
                Some("g"),
                true,
                Some("t"),
            ),
        ]);
        let b = batch(&[
            (
                1,
                95,
                Some(60),
                "2026-11-02",
                11,
                Some("c2"),
                None,
                false,
                None,
            ),
            (2, 80, None, "2026-11-02", 11, None, None, true, None),
        ]);
        let mut one = Pass1::default();
        one.add(&a).unwrap();
        one.add(&b).unwrap();
        let (mut x, mut y) = (Pass1::default(), Pass1::default());
        x.add(&a).unwrap();
        y.add(&b).unwrap();
        x.merge(y);
        for acc in [one, x] {
            let Pass1 {
                traces,
                partitions,
                guardrails,
                ..
            } = acc;
            let (traces, conversations) = traces.finish().unwrap();
            let extent = |id: u8| {
                let t = traces
                    .iter()
                    .find(|t| t.trace == TraceId([id; 16]))
                    .unwrap();
                (t.first_ns, t.last_start_ns, t.end_ns, t.spans)
            };
            assert_eq!(traces.len(), 2);
            // trace 1: first 40, last start 95, latest end 70 (null ends ignored), 3 spans
            assert_eq!(extent(1), (40, 95, 70, 3));
            // trace 2: no end at all: the index uses the last start
            assert_eq!(extent(2), (80, 90, 90, 2));
            let mut parts: Vec<_> = partitions.iter().collect();
            parts.sort();
            assert_eq!(
                parts,
                vec![
                    (&("2026-11-02".to_string(), 10), &(40, 50)),
                    (&("2026-11-02".to_string(), 11), &(80, 95))
                ]
            );
            // (1, c1) and (1, c2), each once; trace 2 has no conversation.
            assert_eq!(conversations.len(), 2, "{conversations:?}");
            assert!(conversations.iter().all(|(t, _)| *t == TraceId([1; 16])));
            assert_ne!(conversations[0].1, conversations[1].1);
            assert!(guardrails.any_decision);
            assert_eq!(
                guardrails.decided_on.iter().collect::<Vec<_>>(),
                vec![&("g".to_string(), "t".to_string())]
            );
        }
    }
}
