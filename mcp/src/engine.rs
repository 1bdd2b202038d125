//! Every call into the `analyze` crate, in one file: the MCP tools reach the store, the rules and
//! the reports only through the functions here.
//!
//! Why one file: the analyzer's internals move (load → model → rules → render), and the tools
//! must keep answering the same JSON. Each function takes plain values and returns the JSON the
//! tool sends (`serde_json::Value`) or a [`ToolError`], so adapting to a new analyzer API touches
//! this file only. Where the analyzer has a stable document, it is used as is: `check` returns
//! exactly what `tripline check --format json` prints (docs/json-output.md), `report` what
//! `tripline report KIND --format json` prints, `query` the rows of `tripline query --format
//! json`, `explain` the text of `tripline explain`. The one structure built here is the trace
//! tree as JSON nodes, from the same model and walk as `tripline trace`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use analyze::model::stitch::StitchedGraph;
use analyze::model::{Model, SpanRow, TraceId};
use analyze::policy::Policy;
use analyze::render::{Format, SarifArtifact, Style};
use analyze::rules::{Finding, Report, Rule, RunBy};
use analyze::store::{Scanned, Snapshot};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use serde_json::{json, Map, Value};

use crate::error::ToolError;

/// Filters shared by `check` and `report`, as the CLI flags spell them.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub since: Option<String>,
    pub until: Option<String>,
    pub service: Option<String>,
    pub trace: Option<String>,
}

/// Arguments of `check`, checked for shape by the tool layer.
#[derive(Clone, Debug, Default)]
pub struct CheckRequest {
    pub rules: Vec<String>,
    pub filter: Filter,
    /// Already vetted against the server's policy roots.
    pub policy: Option<PathBuf>,
    pub max_calls_per_tool: Option<u32>,
    pub max_model_turns: Option<u32>,
    /// Most findings in the answer (the first, in report order).
    pub max_findings: usize,
}

/// What one `query` may cost.
#[derive(Clone, Copy, Debug)]
pub struct QueryLimits {
    pub rows: usize,
    pub timeout: Duration,
    /// DataFusion memory pool: a query that needs more (a huge sort or join) fails instead of
    /// taking the machine's memory.
    pub memory_bytes: usize,
    /// Most bytes of JSON rows in one answer; rows past it are cut and `truncated` set.
    pub response_bytes: usize,
}

fn store_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::Store(e.to_string())
}

fn filter_of(f: &Filter) -> Result<analyze::load::ScanFilter, ToolError> {
    analyze::load::ScanFilter::parse(
        f.since.as_deref(),
        f.until.as_deref(),
        f.service.as_deref(),
        f.trace.as_deref(),
        chrono::Utc::now(),
    )
    .map_err(|e| ToolError::BadArgument(e.to_string()))
}

fn load_policy(path: Option<&Path>) -> Result<Policy, ToolError> {
    match path {
        Some(p) => Policy::load(p).map_err(|e| ToolError::BadArgument(e.to_string())),
        None => Ok(Policy::default()),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::Internal(format!("cannot serialise: {e}")))
}

/// The style of a non-tty, colourless render; the JSON renderers used here ignore it.
fn plain_style() -> Style {
    Style::for_stdout(false, false)
}

fn parse_document(text: &str, what: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text)
        .map_err(|e| ToolError::Internal(format!("the {what} JSON does not parse: {e}")))
}

/// Every rule code `check` runs, in code order, plus the one `diff` runs.
pub fn rule_codes() -> Vec<&'static str> {
    let mut codes: Vec<&str> = analyze::rules::all().iter().map(|r| r.code()).collect();
    codes.sort_unstable();
    codes
}

fn unknown_rule(code: &str) -> ToolError {
    if let Some(rule) = analyze::rules::find(code.trim()) {
        if rule.run_by() == RunBy::Diff {
            return ToolError::BadArgument(format!(
                "{} compares the tool catalogs of two runs and is run by `tripline diff BASELINE CANDIDATE`, not by check; leave it out of `rules`",
                rule.code()
            ));
        }
    }
    ToolError::NotFound(format!(
        "unknown rule {code:?}; known rules: {} (the explain tool documents each)",
        rule_codes().join(", ")
    ))
}

fn select_rules(codes: &[String]) -> Result<Vec<&'static dyn Rule>, ToolError> {
    if codes.is_empty() {
        return Ok(analyze::rules::RULES.to_vec());
    }
    codes
        .iter()
        .map(|c| {
            analyze::rules::find(c)
                .filter(|r| r.run_by() == RunBy::Check)
                .ok_or_else(|| unknown_rule(c))
        })
        .collect()
}

/// `check`: the findings document of `tripline check --format json`, with at most
/// `max_findings` findings (the first, in report order), plus `truncated` and `total_findings`.
///
/// Checked as the CLI checks, window by window with the findings spilled to disk past a bound
/// (`analyze::window`, `analyze::rules::spill`), never as one model of the store; only the
/// findings the answer holds are read back.
pub async fn check(data_dir: &Path, req: &CheckRequest) -> Result<Value, ToolError> {
    let mut policy = load_policy(req.policy.as_deref())?;
    if let Some(n) = req.max_calls_per_tool {
        policy.limits.max_calls_per_tool = Some(n as usize);
    }
    if let Some(n) = req.max_model_turns {
        policy.limits.max_model_turns = Some(n as usize);
    }
    let selected = select_rules(&req.rules)?;
    let filter = filter_of(&req.filter)?;
    let (streamed, scanned, _) = analyze::check::check_store_streamed(
        data_dir,
        &filter,
        &policy,
        &selected,
        &analyze::window::WindowOptions::default(),
        analyze::rules::spill::SpillOptions::default(),
    )
    .await
    .map_err(store_error)?;
    let total = streamed.findings.len();
    let findings = streamed
        .findings
        .take(req.max_findings)
        .collect::<Result<Vec<_>, _>>()
        .map_err(store_error)?;
    let report = Report {
        findings,
        coverage: streamed.coverage,
    };
    let text = analyze::render::render_check(
        &report,
        Some(&scanned),
        Format::Json,
        &plain_style(),
        false,
        SarifArtifact::DataDir(""),
    );
    let mut doc = parse_document(&text, "check")?;
    if let Some(o) = doc.as_object_mut() {
        o.insert(
            "truncated".into(),
            Value::Bool(total > req.max_findings as u64),
        );
        o.insert("total_findings".into(), json!(total));
    }
    Ok(doc)
}

/// `report KIND`: the document of `tripline report KIND --format json` with at most `max_rows`
/// rows (the first, in report order), plus `kind`, `truncated` and `total_rows`.
///
/// Built as the CLI builds it, window by window in bounded memory (`analyze::window`), never as
/// one model of the store: the tool answers over a store of any size. `conversations` has a row
/// per conversation, as many as the store holds: its rows stream out of the windows in report
/// order and only the first `max_rows` are kept (the others counted), as `tripline report
/// conversations` caps its table with `--max-rows`. The other reports have a row per tool,
/// guardrail, skill or service pair.
pub async fn report(
    data_dir: &Path,
    kind: &str,
    filter: &Filter,
    max_rows: usize,
) -> Result<Value, ToolError> {
    use analyze::reports::{Built, ReportKind};
    let analyzer_kind = match kind {
        "tools" => ReportKind::Tools,
        "conversations" => ReportKind::Conversations,
        "guardrails" => ReportKind::Guardrails,
        "skills" => ReportKind::Skills,
        "propagation" => ReportKind::Propagation,
        other => {
            return Err(ToolError::BadArgument(format!(
                "unknown report kind {other:?}; use one of {}",
                crate::schema::REPORT_KINDS.join(", ")
            )))
        }
    };
    let filter = filter_of(filter)?;
    let options = analyze::window::WindowOptions::default();
    let (built, scanned, total) = if analyzer_kind == ReportKind::Conversations {
        let mut first = FirstRows {
            max: max_rows,
            ..FirstRows::default()
        };
        let (notes, scanned, _) =
            analyze::check::conversations_store_streamed(data_dir, &filter, &options, &mut first)
                .await
                .map_err(store_error)?;
        let report = analyze::reports::Report {
            rows: first.rows,
            notes,
        };
        (Built::Conversations(report), scanned, first.total)
    } else {
        let (built, scanned, _) =
            analyze::check::report_store_bounded(data_dir, &filter, analyzer_kind, &options)
                .await
                .map_err(store_error)?;
        (built, scanned, 0)
    };
    let text = analyze::render::render_built(&built, Format::Json, &plain_style(), Some(&scanned))
        .map_err(|e| ToolError::Internal(e.to_string()))?;
    drop(built);
    let mut doc = parse_document(&text, "report")?;
    let Some(o) = doc.as_object_mut() else {
        return Err(ToolError::Internal(
            "the report JSON is not an object".into(),
        ));
    };
    let rows = o.get_mut("rows").and_then(Value::as_array_mut);
    let kept = rows.as_ref().map_or(0, |r| r.len());
    let total = total.max(kept);
    if let Some(rows) = rows {
        rows.truncate(max_rows);
    }
    let truncated = total > max_rows;
    if truncated {
        let note = format!(
            "showing the first {max_rows} of {total} rows (max_rows); narrow with since/until/service/trace, or raise max_rows (at most {}), to see the others",
            crate::schema::REPORT_MAX_ROWS
        );
        if let Some(notes) = o.get_mut("notes").and_then(Value::as_array_mut) {
            notes.insert(0, Value::String(note));
        }
    }
    o.insert("kind".into(), Value::String(kind.to_string()));
    o.insert("truncated".into(), Value::Bool(truncated));
    o.insert("total_rows".into(), json!(total));
    Ok(doc)
}

/// The first `max` conversation rows of a streamed report; the others only counted.
#[derive(Default)]
struct FirstRows {
    max: usize,
    rows: Vec<analyze::reports::conversations::ConversationRow>,
    total: usize,
}

impl analyze::reports::conversations::RowSink for FirstRows {
    fn row(&mut self, row: analyze::reports::conversations::ConversationRow, _: &[u32]) {
        self.total += 1;
        if self.rows.len() < self.max {
            self.rows.push(row);
        }
    }
}

/// `explain CODE`: a rule's documentation, as fields and as `tripline explain` prints it.
pub fn explain(code: &str) -> Result<Value, ToolError> {
    let rule = analyze::rules::find(code).ok_or_else(|| unknown_rule(code))?;
    let d = rule.docs();
    Ok(json!({
        "code": rule.code(),
        "name": rule.name(),
        "severity": rule.severity().as_str(),
        "run_by": match rule.run_by() {
            RunBy::Check => "check",
            RunBy::Diff => "diff",
        },
        "what": d.what, "why": d.why, "example": d.example, "fix": d.fix,
        "text": analyze::render::explain_text(rule),
    }))
}

/// `query SQL`: the rows (at most `limits.rows`), the columns and what table `spans` held.
/// `sql` must already have passed [`crate::sql_guard::check_read_only`]; the plan is checked
/// again here with DataFusion's own options (no DDL, DML or statements).
pub async fn query(data_dir: &Path, sql: &str, limits: QueryLimits) -> Result<Value, ToolError> {
    let started = Instant::now();
    let mut snapshot = Snapshot::take(data_dir).await.map_err(store_error)?;
    snapshot.require_data().map_err(store_error)?;
    // Enforced inside the plan (see `crate::deadline`); the outer timeout covers planning and
    // the listing of files, which run outside it.
    let deadline = started + limits.timeout;
    let run = run_limited(&snapshot, sql, limits, deadline);
    let (columns, batches) = match tokio::time::timeout(limits.timeout, run).await {
        Err(_) => return Err(timeout("the query", limits.timeout)),
        Ok(Err(QueryFailure::Read(e))) if snapshot.skip_undecodable() > 0 => {
            // Data behind a valid footer that cannot be decoded: name and skip that file (it is
            // listed in `scanned.unreadable_files`), run once more on what is left.
            tracing::warn!(error = %e, "a part file could not be decoded; retrying without it");
            snapshot.require_data().map_err(store_error)?;
            let left = limits.timeout.saturating_sub(started.elapsed());
            match tokio::time::timeout(left, run_limited(&snapshot, sql, limits, deadline)).await {
                Err(_) => return Err(timeout("the query", limits.timeout)),
                Ok(r) => r.map_err(QueryFailure::into_tool_error)?,
            }
        }
        Ok(r) => r.map_err(QueryFailure::into_tool_error)?,
    };
    let rows_text = analyze::render::render_batches(&batches, Format::Json, &plain_style())
        .map_err(|e| ToolError::Query(e.to_string()))?;
    let mut rows: Vec<Value> = match parse_document(&rows_text, "query")? {
        Value::Array(rows) => rows,
        other => {
            return Err(ToolError::Internal(format!(
                "query rows are not a JSON array but {other}"
            )))
        }
    };
    let mut truncated_reason = None;
    if rows.len() > limits.rows {
        rows.truncate(limits.rows);
        truncated_reason = Some(format!(
            "more than {} row(s) matched; raise `limit` (at most {}) or narrow the query",
            limits.rows,
            crate::schema::QUERY_MAX_ROWS
        ));
    }
    let mut bytes = 0usize;
    if let Some(cut) = rows.iter().position(|r| {
        bytes += r.to_string().len() + 1;
        bytes > limits.response_bytes
    }) {
        rows.truncate(cut);
        truncated_reason = Some(format!(
            "the rows past {cut} would exceed the response cap of {} bytes; select fewer columns (content and attribute maps are large) or fewer rows",
            limits.response_bytes
        ));
    }
    let scanned = Scanned {
        files: snapshot.files.len(),
        spans: snapshot.total_spans(),
        wal_spans: snapshot.wal_spans(),
        unreadable_files: snapshot.all_unreadable(),
        ..Scanned::default()
    };
    Ok(json!({
        "columns": columns,
        "row_count": rows.len(),
        "rows": rows,
        "truncated": truncated_reason.is_some(),
        "truncated_reason": truncated_reason,
        "limit": limits.rows,
        "elapsed_ms": started.elapsed().as_secs_f64() * 1000.0,
        "scanned": to_value(&scanned)?,
    }))
}

fn timeout(what: &'static str, limit: Duration) -> ToolError {
    ToolError::Timeout {
        what,
        limit_secs: limit.as_secs().max(1),
    }
}

/// Why a query failed: a damaged file (worth a retry without it) or anything else.
enum QueryFailure {
    Read(String),
    Other(ToolError),
}

impl QueryFailure {
    fn into_tool_error(self) -> ToolError {
        match self {
            Self::Read(e) => ToolError::Query(format!(
                "query failed: {e}; run `tripline verify` to find a damaged file"
            )),
            Self::Other(e) => e,
        }
    }
}

/// Plans `sql` over the snapshot in a memory-bounded session, checks the plan is read-only, and
/// collects at most `limits.rows + 1` rows (one more, to know whether there were more), failing
/// once `deadline` has passed.
async fn run_limited(
    snapshot: &Snapshot,
    sql: &str,
    limits: QueryLimits,
    deadline: Instant,
) -> Result<(Vec<Value>, Vec<arrow::record_batch::RecordBatch>), QueryFailure> {
    use datafusion::error::DataFusionError as E;
    let sql_error = |e: E| {
        QueryFailure::Other(ToolError::Query(format!(
            "query failed: {e}; the table is `spans`, run `DESCRIBE spans` for its columns"
        )))
    };
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_limit(limits.memory_bytes, 1.0)
        .build_arc()
        .map_err(|e| QueryFailure::Other(ToolError::Internal(e.to_string())))?;
    let ctx = SessionContext::new_with_config_rt(SessionConfig::new(), runtime);
    snapshot
        .register(&ctx)
        .await
        .map_err(|e| QueryFailure::Other(store_error(e)))?;
    let plan = ctx
        .state()
        .create_logical_plan(sql)
        .await
        .map_err(sql_error)?;
    datafusion::execution::context::SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
        .verify_plan(&plan)
        .map_err(|e| {
            QueryFailure::Other(ToolError::NotReadOnly(format!(
                "{}; this tool is read-only and accepts {}",
                e.strip_backtrace(),
                crate::sql_guard::ACCEPTED
            )))
        })?;
    let df = ctx.execute_logical_plan(plan).await.map_err(sql_error)?;
    let columns: Vec<Value> = df
        .schema()
        .fields()
        .iter()
        .map(|f| json!({"name": f.name(), "type": f.data_type().to_string()}))
        .collect();
    let df = df
        .limit(0, Some(limits.rows.saturating_add(1)))
        .map_err(sql_error)?;
    let physical = df.create_physical_plan().await.map_err(sql_error)?;
    let physical = crate::deadline::with_deadline(physical, deadline)
        .map_err(|e| QueryFailure::Other(ToolError::Internal(e.to_string())))?;
    match datafusion::physical_plan::collect(physical, ctx.task_ctx()).await {
        Ok(batches) => Ok((columns, batches)),
        Err(_) if Instant::now() >= deadline => {
            Err(QueryFailure::Other(timeout("the query", limits.timeout)))
        }
        Err(e) => {
            let damaged = matches!(
                e.find_root(),
                E::ParquetError(_) | E::ArrowError(..) | E::IoError(_) | E::ObjectStore(_)
            );
            if damaged {
                Err(QueryFailure::Read(e.strip_backtrace()))
            } else {
                Err(sql_error(e))
            }
        }
    }
}

/// Arguments of `trace`.
#[derive(Clone, Debug)]
pub struct TraceRequest {
    pub trace_id: String,
    pub policy: Option<PathBuf>,
    pub max_spans: usize,
}

/// Deepest tree level returned as nested nodes; deeper children are counted, not listed (a
/// client's JSON parser has a nesting limit too).
const MAX_TREE_DEPTH: usize = 64;

/// `trace ID`: the stitched tree (as `tripline trace` builds it) as JSON nodes with children,
/// the findings on its spans, and the text rendering.
pub async fn trace(data_dir: &Path, req: &TraceRequest) -> Result<Value, ToolError> {
    use analyze::check::TraceError;
    use analyze::error::LoadError;
    let id = req.trace_id.trim();
    let policy = load_policy(req.policy.as_deref())?;
    let (trace, model, report, scanned) = analyze::check::check_trace(data_dir, id, &policy)
        .await
        .map_err(|e| match e {
            TraceError::Load(LoadError::BadTraceId(_)) => ToolError::BadArgument(format!(
                "invalid trace id {id:?}: expected 32 hex digits (findings carry it as trace_id)"
            )),
            TraceError::Load(LoadError::NoSpans(
                analyze::store::NoSpans::FilterMatchedNothing { total, .. },
            )) => not_found(id, total),
            TraceError::NotFound(_) => not_found(id, 0),
            TraceError::Load(other) => store_error(other),
        })?;
    let text = analyze::render::render_trace(&model, &report, trace);
    let tree = Tree::build(&model, &report, trace, req.max_spans);
    Ok(json!({
        "trace_id": trace.to_string(),
        "stitched_traces": tree.component.iter().filter(|t| **t != trace).map(ToString::to_string).collect::<Vec<_>>(),
        "span_count": tree.span_count,
        "shown_spans": tree.shown,
        "truncated": tree.shown < tree.span_count,
        "roots": tree.roots,
        "findings": to_value(&tree.findings)?,
        "text": cut_lines(&text, req.max_spans + 1),
        "scanned": to_value(&scanned)?,
    }))
}

fn not_found(id: &str, total: u64) -> ToolError {
    ToolError::NotFound(format!(
        "trace {id} is not in the store (it holds {total} span(s)); list trace ids with the query tool: SELECT DISTINCT encode(trace_id, 'hex') AS trace_id FROM spans"
    ))
}

/// The first `n` lines of `text`, with a note when lines were cut.
fn cut_lines(text: &str, n: usize) -> String {
    let total = text.lines().count();
    if total <= n {
        return text.to_string();
    }
    let mut out: String = text.lines().take(n).flat_map(|l| [l, "\n"]).collect();
    out.push_str(&format!(
        "… {} more line(s); raise max_spans to see them\n",
        total - n
    ));
    out
}

/// The tree of one trace and the traces stitched to it, as JSON nodes.
struct Tree<'a> {
    component: BTreeSet<TraceId>,
    span_count: usize,
    shown: usize,
    roots: Vec<Value>,
    findings: Vec<&'a Finding>,
}

impl<'a> Tree<'a> {
    /// Same traversal as `analyze::render::render_trace`: the traces joined to `trace`
    /// through stitched edges, their roots, children in start order, stitched children marked.
    fn build(model: &Model, report: &'a Report, trace: TraceId, max_spans: usize) -> Self {
        let graph = StitchedGraph::of(model);
        let component = graph.component(trace);
        let stitched_children = graph.children;
        let findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| component.contains(&f.trace_id))
            .collect();
        let mut codes: HashMap<(TraceId, analyze::model::SpanId), Vec<&str>> = HashMap::new();
        for f in &findings {
            codes
                .entry((f.trace_id, f.span_id))
                .or_default()
                .push(f.rule);
        }
        let members: Vec<usize> = component
            .iter()
            .flat_map(|t| model.traces.get(t).into_iter().flatten().copied())
            .collect();
        let roots: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| model.effective_parent(i).is_none())
            .collect();
        let mut walk = Walk {
            model,
            stitched_children: &stitched_children,
            codes: &codes,
            budget: max_spans,
            shown: 0,
        };
        let roots: Vec<Value> = roots
            .into_iter()
            .filter_map(|r| walk.node(r, false, 0))
            .collect();
        Tree {
            span_count: members.len(),
            shown: walk.shown,
            component,
            roots,
            findings,
        }
    }
}

struct Walk<'m> {
    model: &'m Model,
    stitched_children: &'m HashMap<usize, Vec<usize>>,
    codes: &'m HashMap<(TraceId, analyze::model::SpanId), Vec<&'m str>>,
    budget: usize,
    shown: usize,
}

impl Walk<'_> {
    /// Node `i` and its subtree, children in start order; `None` once the span budget is spent.
    fn node(&mut self, i: usize, stitched: bool, depth: usize) -> Option<Value> {
        if self.shown >= self.budget {
            return None;
        }
        self.shown += 1;
        let m = self.model;
        let s = &m.spans[i];
        let mut kids: Vec<(usize, bool)> = m.children[i].iter().map(|&c| (c, false)).collect();
        kids.extend(
            self.stitched_children
                .get(&i)
                .into_iter()
                .flatten()
                .map(|&c| (c, true)),
        );
        kids.sort_by_key(|&(c, _)| (m.spans[c].start_ns, c));
        let mut children = Vec::new();
        let mut omitted = 0usize;
        for (c, st) in kids {
            let child = if depth + 1 < MAX_TREE_DEPTH {
                self.node(c, st, depth + 1)
            } else {
                None
            };
            match child {
                Some(v) => children.push(v),
                None => omitted += 1,
            }
        }
        let mut node = Map::new();
        node.insert("span_id".into(), json!(s.span_id.to_string()));
        node.insert("trace_id".into(), json!(s.trace_id.to_string()));
        node.insert(
            "parent_span_id".into(),
            json!(s.parent_span_id.map(|p| p.to_string())),
        );
        node.insert("name".into(), json!(s.name.as_str()));
        node.insert("service".into(), json!(s.service_name.as_deref()));
        node.insert("kind".into(), json!(s.kind().as_str()));
        node.insert("status".into(), json!(s.status().as_str()));
        node.insert(
            "start_time".into(),
            json!(
                chrono::DateTime::<chrono::Utc>::from_timestamp_nanos(s.start_ns)
                    .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
            ),
        );
        node.insert(
            "duration_ms".into(),
            json!(s.duration_ns() as f64 / 1_000_000.0),
        );
        node.insert("stitched".into(), json!(stitched));
        node.insert("attributes".into(), Value::Object(attributes(s)));
        node.insert(
            "findings".into(),
            json!(self
                .codes
                .get(&(s.trace_id, s.span_id))
                .cloned()
                .unwrap_or_default()),
        );
        node.insert("children".into(), Value::Array(children));
        if omitted > 0 {
            node.insert("omitted_children".into(), json!(omitted));
        }
        Some(Value::Object(node))
    }
}

/// The facts `tripline trace` prints on a span line, under their semantic-convention names.
fn attributes(s: &SpanRow) -> Map<String, Value> {
    let mut a = Map::new();
    let mut put = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            a.insert(k.to_string(), Value::String(v.to_string()));
        }
    };
    put("gen_ai.operation.name", s.operation_name.as_deref());
    put("gen_ai.tool.name", s.tool_name.as_deref());
    put("mcp.method.name", s.mcp_method.as_deref());
    put("jsonrpc.request.id", s.jsonrpc_request_id.as_deref());
    put("gen_ai.conversation.id", s.conversation_id.as_deref());
    put("gen_ai.agent.name", s.agent_name.as_deref());
    put("skill.name", s.skill_name().map(|v| v.as_str()));
    put("guardrail.decision", s.guardrail_decision.as_deref());
    put("error.type", s.error_type.as_deref());
    if let Some(e) = s.result_is_error {
        a.insert("result.is_error".into(), Value::Bool(e));
    }
    a
}

/// Shared across calls so a caller's typo costs nothing: the rule catalogue as `code - name`.
pub fn rule_catalogue() -> Arc<str> {
    let lines: Vec<String> = analyze::rules::all()
        .iter()
        .map(|r| match r.run_by() {
            RunBy::Check => format!("{} {} ({})", r.code(), r.name(), r.severity().as_str()),
            RunBy::Diff => format!(
                "{} {} ({}, run by `tripline diff`)",
                r.code(),
                r.name(),
                r.severity().as_str()
            ),
        })
        .collect();
    Arc::from(lines.join("; "))
}
