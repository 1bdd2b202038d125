//! Running the rules as library calls: load (store or spans) -> model -> rules -> report, for
//! `check`, for `trace` (the same path over the trace's time window) and for `diff` (TL011 over
//! two stores); and `report`'s aggregates over a store in windows.
//!
//! Kept apart from the CLI so tests, the benchmark and the demo run exactly what the commands run.

use std::path::{Path, PathBuf};

use crate::error::LoadError;
use crate::load::{load_store, scan_store, Projection, ScanFilter};
use crate::model::stitch::SKEW_NS;
use crate::model::{Model, SpanRow, TraceId};
use crate::policy::Policy;
use crate::reports::{conversations, Aggregate, Built, Owned, ReportKind};
use crate::rules::spill::SpillOptions;
use crate::rules::tl011_catalog_drift::{diff_catalogs, DiffReport, RunCatalog};
use crate::rules::{run, Report, Rule, RuleInput, StreamedReport, RULES};
use crate::store::Scanned;
use crate::window::{check_windows, each_window, WindowError, WindowOptions, WindowStats};

/// The columns `rules` need on top of the base projection.
pub fn projection_for(rules: &[&dyn Rule]) -> Projection {
    rules
        .iter()
        .fold(Projection::base(), |p, r| p.with(r.columns()))
}

/// Runs `rules` over already-loaded spans.
pub fn check_spans(spans: Vec<SpanRow>, policy: &Policy, rules: &[&dyn Rule]) -> (Model, Report) {
    check_model(Model::build(spans), policy, rules)
}

/// Runs `rules` over a built model.
fn check_model(model: Model, policy: &Policy, rules: &[&dyn Rule]) -> (Model, Report) {
    let report = {
        let input = RuleInput::new(&model, policy);
        run(rules, &input)
    };
    (model, report)
}

/// Runs `rules` over the store in `data_dir`; also says what was scanned. A scan that reads no
/// span is an error ([`LoadError::NoSpans`]), never a clean report.
pub async fn check_store(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&dyn Rule],
) -> Result<(Model, Report, Scanned), LoadError> {
    check_store_with(data_dir, filter, policy, rules, &[]).await
}

/// [`check_store`], the spans also carrying `extra` columns no rule reads (what an HTML page's
/// waterfalls show: [`crate::render::html::waterfall::COLUMNS`]).
pub async fn check_store_with(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&dyn Rule],
    extra: &[&'static str],
) -> Result<(Model, Report, Scanned), LoadError> {
    let scan = scan_store(data_dir, filter, &projection_for(rules).with(extra)).await?;
    let (model, report) = check_model(Model::from_parts(scan.parts), policy, rules);
    Ok((model, report, scan.scanned))
}

/// `check`: the rules over the store window by window ([`crate::window`]), with the findings and
/// coverage of one model of the whole store, every finding in memory. A scan that reads no span
/// is an error.
pub async fn check_store_bounded(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    options: &WindowOptions,
) -> Result<(Report, Scanned, WindowStats), WindowError> {
    let (streamed, scanned, stats) = check_store_streamed(
        data_dir,
        filter,
        policy,
        rules,
        options,
        SpillOptions::in_memory(),
    )
    .await?;
    Ok((streamed.into_report()?, scanned, stats))
}

/// [`check_store_bounded`] in bounded memory: findings beyond `spill`'s bound wait on disk
/// (sorted runs, merged in report order as they are read from the [`StreamedReport`]).
pub async fn check_store_streamed(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    options: &WindowOptions,
    spill: SpillOptions,
) -> Result<(StreamedReport, Scanned, WindowStats), WindowError> {
    check_windows(
        data_dir,
        filter,
        policy,
        rules,
        &projection_for(rules),
        options,
        spill,
    )
    .await
}

/// `report KIND`: the report over the store window by window ([`crate::window`]), each window
/// counting the calls and spans of its core traces ([`Owned`]), in bounded memory, with the rows
/// of one model of the whole store. A scan that reads no span is an error.
pub async fn report_store_bounded(
    data_dir: &Path,
    filter: &ScanFilter,
    kind: ReportKind,
    options: &WindowOptions,
) -> Result<(Built, Scanned, WindowStats), WindowError> {
    let projection = Projection::base().with(kind.columns());
    let mut totals = Aggregate::new(kind);
    let (scanned, stats, _) = each_window(
        data_dir,
        filter,
        &projection,
        options,
        |model, core, _, _| {
            totals.add(model, &Owned::core(model, core));
        },
    )
    .await?;
    Ok((totals.finish(), scanned, stats))
}

/// `report conversations` in memory bounded whatever the store's size: as
/// [`report_store_bounded`], each row passed to `sink` (in report order) as soon as no later
/// window can change it or come before it ([`conversations::Totals::settle`]). Returns the
/// report's notes (after the last row).
pub async fn conversations_store_streamed(
    data_dir: &Path,
    filter: &ScanFilter,
    options: &WindowOptions,
    sink: &mut impl conversations::RowSink,
) -> Result<(Vec<String>, Scanned, WindowStats), WindowError> {
    let projection = Projection::base().with(ReportKind::Conversations.columns());
    let mut totals = conversations::Totals::default();
    let (scanned, stats, _) = each_window(
        data_dir,
        filter,
        &projection,
        options,
        |model, core, _, place| {
            totals.add_at(model, &Owned::core(model, core), place);
            totals.settle(place, sink);
        },
    )
    .await?;
    Ok((totals.finish_into(sink), scanned, stats))
}

/// `tripline trace ID` could not run.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("trace {0} is not in the store; list traces with `tripline query \"SELECT DISTINCT encode(trace_id, 'hex') FROM spans\"`")]
    NotFound(String),
}

/// `check` over the time window of trace `id` (plus the stitching tolerance, so the server's
/// orphaned half of a call, which is another trace, is in the model too): the model and report
/// the tree is printed from. A trace that is not in the store is an error.
pub async fn check_trace(
    data_dir: &Path,
    id: &str,
    policy: &Policy,
) -> Result<(TraceId, Model, Report, Scanned), TraceError> {
    let trace = TraceId::parse_hex(id).ok_or_else(|| LoadError::BadTraceId(id.to_string()))?;
    let own = load_store(
        data_dir,
        &ScanFilter {
            trace: Some(trace),
            ..ScanFilter::default()
        },
        &Projection::base(),
    )
    .await?;
    let (Some(lo), Some(hi)) = (
        own.iter().map(|s| s.start_ns).min(),
        own.iter().map(|s| s.end_ns.max(s.start_ns)).max(),
    ) else {
        return Err(TraceError::NotFound(id.to_string()));
    };
    let window = ScanFilter {
        since_ns: Some(lo.saturating_sub(SKEW_NS)),
        until_ns: Some(hi.saturating_add(SKEW_NS)),
        ..ScanFilter::default()
    };
    let (model, report, scanned) = check_store(data_dir, &window, policy, RULES).await?;
    Ok((trace, model, report, scanned))
}

/// Why a diff could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A data dir given to `tripline diff` does not exist.
    #[error("{side} data dir {path} does not exist; pass a directory written by `tripline collect` or `tripline ingest`")]
    MissingDir { side: &'static str, path: PathBuf },
    /// A path given to `tripline diff` is a file, not a store.
    #[error("{side} {path} is a file; `tripline diff` compares two data dirs (stores written by `tripline collect` or `tripline ingest`): ingest each recording first, e.g. `tripline ingest --data-dir base-run FILE`")]
    NotADir { side: &'static str, path: PathBuf },
    /// A store has no model call with tool definitions: its catalog is unknown.
    #[error("{side} data dir {path} has no model call with gen_ai.tool.definitions ({model_calls} model calls, {spans} spans); capture tool definitions on chat spans, or check that the directory holds the run you meant")]
    NoCatalog {
        side: &'static str,
        path: PathBuf,
        model_calls: usize,
        spans: usize,
    },
    /// Loading a store failed.
    #[error("{side} data dir {path}: {source}")]
    Load {
        side: &'static str,
        path: PathBuf,
        #[source]
        source: LoadError,
    },
    /// A window of a store did not fit in memory (only with a memory limit).
    #[error("{side} data dir {path}: {source}")]
    Window {
        side: &'static str,
        path: PathBuf,
        #[source]
        source: Box<WindowError>,
    },
}

/// Reads both stores (in windows, in bounded memory) and runs TL011 over their catalogs.
pub async fn diff_stores(baseline: &Path, candidate: &Path) -> Result<DiffReport, DiffError> {
    diff_stores_with(baseline, candidate, &WindowOptions::default()).await
}

/// [`diff_stores`] with windows of `options`.
pub async fn diff_stores_with(
    baseline: &Path,
    candidate: &Path,
    options: &WindowOptions,
) -> Result<DiffReport, DiffError> {
    let b = load_side("baseline", baseline, options).await?;
    let c = load_side("candidate", candidate, options).await?;
    Ok(diff_catalogs(b, c))
}

async fn load_side(
    side: &'static str,
    path: &Path,
    options: &WindowOptions,
) -> Result<RunCatalog, DiffError> {
    if path.is_file() {
        return Err(DiffError::NotADir {
            side,
            path: path.to_path_buf(),
        });
    }
    if !path.is_dir() {
        return Err(DiffError::MissingDir {
            side,
            path: path.to_path_buf(),
        });
    }
    // In windows, as `check`: each window's core traces add their model calls' definitions.
    let mut cat = RunCatalog::default();
    let (scanned, _, _) = each_window(
        path,
        &ScanFilter::default(),
        &Projection::base(),
        options,
        |model, core, _, _| cat.add(model, &|i| core.contains(&model.spans[i].trace_id)),
    )
    .await
    .map_err(|e| match e {
        WindowError::Load(source) => DiffError::Load {
            side,
            path: path.to_path_buf(),
            source,
        },
        e => DiffError::Window {
            side,
            path: path.to_path_buf(),
            source: Box::new(e),
        },
    })?;
    cat.scanned = Some(scanned);
    if cat.with_definitions == 0 {
        return Err(DiffError::NoCatalog {
            side,
            path: path.to_path_buf(),
            model_calls: cat.model_calls,
            spans: cat.spans,
        });
    }
    Ok(cat)
}
