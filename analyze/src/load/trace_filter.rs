//! "Is this row's trace in the window?" as a DataFusion predicate, so the Parquet reader can
//! evaluate it on `trace_id` alone and decode the other columns only for the rows it keeps.
//!
//! Why: a window of a windowed `check` holds its core traces and every trace within the overlap
//! margin of them; its start-time range is wide (a conversation's traces can be hours apart), so
//! most rows in that range belong to other windows. Filtering them after the scan (as a
//! `keep_traces` step once did alone; removed in session 55, when it only repeated this filter)
//! decodes every column of every row in the range first: at 10M spans, several times the rows the
//! window keeps. As a pushed-down predicate
//! (`datafusion.execution.parquet.pushdown_filters`) the heavy columns of those rows are never
//! materialised. A set of hundreds of thousands of ids is no SQL `IN` list, hence a function
//! holding the set.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray};
use arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::{col, Expr};
use schemas::schema::col as c;

use super::id_col::IdCol;
use super::index::SharedTraces;
use crate::model::span::TraceId;

/// The predicate `trace_id ∈ traces`.
pub fn in_traces(traces: &SharedTraces) -> Expr {
    ScalarUDF::new_from_impl(InTraces {
        traces: traces.clone(),
        signature: Signature::any(1, Volatility::Immutable),
    })
    .call(vec![col(c::TRACE_ID)])
}

/// The function behind [`in_traces`]. Two are equal when they hold the same set (pointer).
struct InTraces {
    traces: SharedTraces,
    signature: Signature,
}

impl std::fmt::Debug for InTraces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "in_window_traces({} traces)", self.traces.len())
    }
}

impl PartialEq for InTraces {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.traces, &other.traces)
    }
}

impl Eq for InTraces {}

impl Hash for InTraces {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.traces).hash(state);
    }
}

impl ScalarUDFImpl for InTraces {
    fn name(&self) -> &str {
        "in_window_traces"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ids = args.args[0].to_array(args.number_rows)?;
        Ok(ColumnarValue::Array(Arc::new(member(&ids, &self.traces)?)))
    }
}

/// Per row of `ids`: whether it is a trace id in `traces` (false for a null or malformed id).
pub fn member(ids: &ArrayRef, traces: &SharedTraces) -> Result<BooleanArray> {
    let ids = IdCol::of(ids)?;
    Ok((0..ids.len())
        .map(|i| {
            Some(
                !ids.is_null(i)
                    && TraceId::from_slice(ids.value(i)).is_some_and(|t| traces.contains(&t)),
            )
        })
        .collect())
}
