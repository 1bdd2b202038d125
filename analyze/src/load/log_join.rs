//! Joining OTLP log records (GenAI events) to their span, so event-borne content feeds the same
//! derived facts as span attributes.
//!
//! Why at load time, and through the converter: every content fact a rule reads (tool result
//! shape and error flag, arguments digest, tool definitions, the content columns themselves) is
//! derived by `schemas::convert` from the span content attributes. A span whose content came as
//! events is read back whole, its events are turned into those attributes
//! (`schemas::logs::events`), the attributes the span lacks are added (attributes on the span
//! win), and the span is converted again. Derived facts the span already had are kept (the span
//! wins there too); only missing ones are filled. The rows then replace the scanned ones, so the
//! model and the rules see one span, never a second code path.
//!
//! Only spans that the scan selected and that have at least one content-bearing event are read
//! again; a store without `logs/` costs one empty table.

use std::collections::{HashMap, HashSet};

use arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use datafusion::prelude::{col, lit, Expr, SessionContext};
use datafusion::scalar::ScalarValue;
use schemas::columns::{Fill, COLUMNS};
use schemas::convert::{convert_request, IngestContext};
use schemas::logs::events::{
    add_content_attributes, content_attributes, ContentBySpan, EventRecord, SpanKey,
};
use schemas::logs::schema::col as lc;
use schemas::schema::col as c;

use super::{Projection, RowReader, ScanFilter, TABLE};
use crate::error::LoadError;
use crate::model::span::{SpanId, SpanRow, TraceId};
use crate::store::{FULL_TABLE, LOGS_TABLE};

/// What the join did (reported in `scanned`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Joined {
    /// Log records with a span id that were read.
    pub log_records: u64,
    /// Scanned spans that got content from their events.
    pub spans: u64,
}

type Key = (TraceId, SpanId);

/// Joins the log records of the snapshot registered in `ctx` to the scanned rows in `parts`,
/// replacing the rows of spans whose events carry content they lack. `counted` says which
/// traces' spans count in [`Joined::spans`].
pub async fn join_logs(
    ctx: &SessionContext,
    filter: &ScanFilter,
    projection: &Projection,
    parts: &mut [Vec<Option<SpanRow>>],
    counted: &(dyn Fn(&TraceId) -> bool + Sync),
) -> Result<Joined, LoadError> {
    let scan_err = |cause| LoadError::Scan {
        path: LOGS_TABLE.to_string(),
        cause,
    };
    let mut df = ctx
        .table(LOGS_TABLE)
        .await
        .map_err(scan_err)?
        .filter(
            col(lc::SPAN_ID)
                .is_not_null()
                .and(col(lc::TRACE_ID).is_not_null()),
        )
        .map_err(scan_err)?;
    if let Some(t) = filter.trace {
        df = df
            .filter(col(lc::TRACE_ID).eq(lit(ScalarValue::Binary(Some(t.0.to_vec())))))
            .map_err(scan_err)?;
    }
    let batches = df
        .select_columns(&[
            lc::TRACE_ID,
            lc::SPAN_ID,
            lc::TIME_UNIX_NANO,
            lc::OBSERVED_TIME_UNIX_NANO,
            lc::EVENT_NAME,
            lc::BODY,
            lc::ATTRIBUTES,
        ])
        .map_err(scan_err)?
        .collect()
        .await
        .map_err(scan_err)?;
    let mut joined = Joined::default();
    let mut events: HashMap<Key, Vec<EventRecord>> = HashMap::new();
    for b in &batches {
        joined.log_records += b.num_rows() as u64;
        read_events(b, &mut events);
    }
    let content: HashMap<Key, Vec<(&'static str, String)>> = events
        .into_iter()
        .filter_map(|(k, evs)| {
            let attrs = content_attributes(&evs);
            (!attrs.is_empty()).then_some((k, attrs))
        })
        .collect();
    if content.is_empty() {
        return Ok(joined);
    }
    let present: HashSet<Key> = parts
        .iter()
        .flatten()
        .flatten()
        .map(|r| (r.trace_id, r.span_id))
        .filter(|k| content.contains_key(k))
        .collect();
    if present.is_empty() {
        return Ok(joined);
    }
    let spans_err = |cause| LoadError::Scan {
        path: TABLE.to_string(),
        cause,
    };
    let ids: Vec<Expr> = present
        .iter()
        .map(|(_, s)| lit(ScalarValue::Binary(Some(s.0.to_vec()))))
        .collect();
    let columns: Vec<&str> = COLUMNS.iter().map(|d| d.name).collect();
    // Whole rows: the analyzer's own table clips the attribute maps (`store::clip`).
    let table = if ctx.table_exist(FULL_TABLE).unwrap_or(false) {
        FULL_TABLE
    } else {
        TABLE
    };
    let full = ctx
        .table(table)
        .await
        .map_err(spans_err)?
        .filter(col(c::SPAN_ID).in_list(ids, false))
        .map_err(spans_err)?
        .select_columns(&columns)
        .map_err(spans_err)?
        .collect()
        .await
        .map_err(spans_err)?;
    let mut reader = RowReader::default();
    let mut replaced: HashMap<Key, SpanRow> = HashMap::new();
    for batch in &full {
        let Some((rebuilt, changed)) = enrich(batch, &content)? else {
            continue;
        };
        let projected = project(&rebuilt, projection)?;
        let mut rows: Vec<SpanRow> = Vec::new();
        reader.append(&projected, &mut rows)?;
        for r in rows {
            let key = (r.trace_id, r.span_id);
            // Only spans that got content from their events (a span whose own attributes
            // already had it all is left as it was scanned).
            if present.contains(&key) && changed.contains(&(key.0 .0, key.1 .0)) {
                replaced.insert(key, r);
            }
        }
    }
    for row in parts.iter_mut().flatten().flatten() {
        if let Some(new) = replaced.get(&(row.trace_id, row.span_id)) {
            *row = new.clone();
        }
    }
    // A windowed check joins the overlap of a window too: only the spans it owns count.
    joined.spans = replaced.keys().filter(|(t, _)| counted(t)).count() as u64;
    Ok(joined)
}

fn opt_str(a: Option<&StringArray>, i: usize) -> Option<&str> {
    a.filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

fn opt_int(a: Option<&Int64Array>, i: usize) -> Option<i64> {
    a.filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

fn read_events(batch: &RecordBatch, out: &mut HashMap<Key, Vec<EventRecord>>) {
    let bin = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
    };
    let int = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
    };
    let text = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    };
    let (Some(trace), Some(span)) = (bin(lc::TRACE_ID), bin(lc::SPAN_ID)) else {
        return;
    };
    let (time, observed) = (int(lc::TIME_UNIX_NANO), int(lc::OBSERVED_TIME_UNIX_NANO));
    let (name, body, attrs) = (text(lc::EVENT_NAME), text(lc::BODY), text(lc::ATTRIBUTES));
    for i in 0..batch.num_rows() {
        let (Ok(t), Ok(s)) = (
            <[u8; 16]>::try_from(trace.value(i)),
            <[u8; 8]>::try_from(span.value(i)),
        ) else {
            continue;
        };
        let when = opt_int(time, i)
            .or(opt_int(observed, i))
            .unwrap_or_default();
        out.entry((TraceId(t), SpanId(s)))
            .or_default()
            .push(EventRecord::from_stored(
                when,
                opt_str(name, i),
                opt_str(body, i),
                opt_str(attrs, i),
            ));
    }
}

/// The full canonical rows of `batch` with the content attributes their events carry added
/// (where the span lacks them) and converted again, and the spans that got any; derived facts
/// the span already had are kept. `None` when no row of `batch` gets anything.
fn enrich(
    batch: &RecordBatch,
    content: &HashMap<Key, Vec<(&'static str, String)>>,
) -> Result<Option<(RecordBatch, HashSet<SpanKey>)>, LoadError> {
    let mut request =
        schemas::batch_to_request(batch).map_err(|e| LoadError::LogJoin(e.to_string()))?;
    let by_bytes: ContentBySpan = content
        .iter()
        .map(|((t, s), v)| ((t.0, s.0), v.clone()))
        .collect();
    let changed: HashSet<SpanKey> = add_content_attributes(&mut request, &by_bytes)
        .into_iter()
        .collect();
    if changed.is_empty() {
        return Ok(None);
    }
    let converted = convert_request(
        &request,
        &IngestContext {
            received_at_unix_nano: 0,
            source: String::new(),
            redact_content: false,
        },
    );
    let new = converted.batch;
    if new.num_rows() != batch.num_rows() {
        // A span the converter accepted once and refuses now: keep what was stored.
        return Ok(None);
    }
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(new.num_columns());
    for (i, def) in COLUMNS.iter().enumerate() {
        let fresh = new.column(i).clone();
        let old = batch.column(i);
        // The stored column as the converter types it (the scan may name nested fields
        // differently); `None` when it cannot be, then the fresh one is taken.
        let old = if old.data_type() == fresh.data_type() {
            Some(old.clone())
        } else {
            arrow::compute::cast(old, fresh.data_type()).ok()
        };
        let column = match (def.fill, old) {
            // The span's own derived facts win; events only fill what is missing.
            (Fill::Derived, Some(old)) => arrow::compute::is_not_null(old.as_ref())
                .and_then(|has| arrow::compute::kernels::zip::zip(&has, &old, &fresh))
                .unwrap_or(fresh),
            (_, Some(old)) if def.name == c::RECEIVED_AT || def.name == c::INGEST_SOURCE => old,
            _ => fresh,
        };
        columns.push(column);
    }
    RecordBatch::try_new(new.schema(), columns)
        .map(|b| Some((b, changed)))
        .map_err(|e| LoadError::LogJoin(e.to_string()))
}

/// `batch` (canonical schema) narrowed to the scan's projection.
fn project(batch: &RecordBatch, projection: &Projection) -> Result<RecordBatch, LoadError> {
    let schema = batch.schema();
    let indices: Vec<usize> = projection
        .columns()
        .iter()
        .filter_map(|name| schema.index_of(name).ok())
        .collect();
    batch
        .project(&indices)
        .map_err(|e| LoadError::LogJoin(e.to_string()))
}
