//! `check` over a store larger than memory: one window of traces at a time, with the same findings
//! and coverage as one model of the whole store.
//!
//! Why windows of traces: most rules judge a call, a trace, an agent run or a conversation; the
//! joins across traces (an orphaned server span stitched to its host call, a client call split
//! from its `execute_tool`) only look [`SKEW_NS`] around a host span. So:
//!
//! 1. pass 1 ([`crate::load::index`]) reads light columns: each trace's extent and span count,
//!    which traces share a conversation, and the store's tool catalog;
//! 2. traces are grouped (a conversation's traces are one group, judged whole), ordered by first
//!    start and cut into windows of about [`WindowOptions::window_spans`] spans (the *core*); a
//!    window's model also holds every trace that comes within [`MARGIN_NS`] of a core trace
//!    (the *overlap*), whole, so the cross-trace joins see what one whole-store model would;
//! 3. pass 2 reads one window at a time (time range pushed to the scan, rows of other traces
//!    dropped before they become `SpanRow`s), builds its model and runs the rules, each judging
//!    only what the core owns ([`RuleInput::owns`]); the rules' [`Partial`]s merge across windows
//!    and each rule formats its outcome once. The rows of traces the next window reads too are
//!    kept from this window's model ([`Window::carried`]) instead of decoded again, and the next
//!    window's scan runs while this one is judged (not under `--memory-limit`).
//!
//! Every rule runs this way ([`Rule::scan`] / [`Rule::finish`]); what each needs from the
//! whole store is explicit: the tool catalog and the guardrails' decisions by tool (pass 1),
//! first-seen orders and store-wide groups (in the [`Partial`]). Peak memory is one window's
//! model plus what pass 1 leaves resident, the plan and the findings (docs/read-path.md, "The
//! bound"); with `--memory-limit`, a window whose estimate does not fit is an error naming it,
//! checked before it is read.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::prelude::{col, lit};
use schemas::schema::col as c;

use crate::error::LoadError;
use crate::load::index::{self, SharedTraces, TraceExtent};
use crate::load::{log_join, scan_window, Projection, ScanFilter};
use crate::model::stitch::SKEW_NS;
use crate::model::{Model, SpanRow, TraceId, TraceSet};
use crate::policy::Policy;
use crate::rules::spill::{FindingSpill, SpillError, SpillOptions};
use crate::rules::{Catalog, GuardrailFacts, Partial, Rule, RuleInput, StreamedReport};
use crate::store::Scanned;

/// How far around a window's core other traces are read as context: five times the stitching
/// tolerance on each side. One tolerance puts every host call a core server span can be matched
/// to in the model; the rest covers the orphans competing for those host calls and their own
/// candidates (matching is greedy, in start order), so a chain of competing matches would have to
/// run over more than 10 s of dense traffic to reach past the overlap.
pub const MARGIN_NS: i64 = 5 * SKEW_NS;

/// Spans per window core by default. A window also reads its overlap: in the 10M-span benchmark
/// store as session 8 built it (whose ten seeds shared conversation ids, so a "conversation" was
/// ten unrelated runs over up to three hours; fixed in session 9) windows of 250,000 core spans
/// held up to 549,936 spans, and `check` peaked at 1,163–1,255 MiB (1,059 MiB at 150,000, with
/// 27% more CPU time: BENCHMARKS.md, session 8).
pub const DEFAULT_WINDOW_SPANS: u64 = 250_000;

/// Estimated resident bytes per span of a window (rows, model, Arrow buffers while scanning):
/// the whole-store check's peak RSS at 1M `tripline-samples` spans (1.7–1.8 GB, BENCHMARKS.md).
/// What `--memory-limit` is checked against.
pub const BYTES_PER_SPAN: u64 = 1_800;

/// Rows per part when kept rows enter the next window's model: the model frees a part once its
/// last row has moved, so the kept rows are not held twice while it is built.
const CARRY_CHUNK: usize = 8_192;

/// How `check` cuts the store.
#[derive(Clone, Debug)]
pub struct WindowOptions {
    /// Spans per window core (a group of traces is never split, so a window can hold more).
    pub window_spans: u64,
    /// Memory pool of the scans and the windows' models (`--memory-limit`), bytes.
    pub memory_limit: Option<usize>,
    /// Where pass 1 writes its sorted trace runs (`--spill-dir`; `None`: TMPDIR).
    pub spill_dir: Option<std::path::PathBuf>,
}

impl Default for WindowOptions {
    fn default() -> Self {
        Self {
            window_spans: DEFAULT_WINDOW_SPANS,
            memory_limit: None,
            spill_dir: None,
        }
    }
}

/// A windowed check could not run.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error(transparent)]
    Load(LoadError),
    /// The findings could not be spilled to (or read back from) the temporary directory.
    #[error(transparent)]
    Spill(#[from] SpillError),
    /// A scan needed more than the memory pool holds.
    #[error("--memory-limit {} is too small to {stage}: {cause}; raise --memory-limit", human(.limit))]
    ScanTooLarge {
        stage: &'static str,
        limit: u64,
        cause: String,
    },
    /// A window's estimated memory does not fit in `--memory-limit`.
    #[error("window {number} of {windows} (spans starting {from} to {to}: {spans} spans in {traces} traces, a window never splits a trace or a conversation) needs about {}, more than --memory-limit {} allows; raise --memory-limit, or narrow the scan with --since/--until/--service", human(.needs), human(.limit))]
    TooLarge {
        number: usize,
        windows: usize,
        from: String,
        to: String,
        spans: u64,
        traces: usize,
        needs: u64,
        limit: u64,
    },
}

impl WindowError {
    /// `e` from `stage`, named as running out of `--memory-limit` when it did.
    fn load(e: LoadError, stage: &'static str, limit: Option<usize>) -> Self {
        match (index::exhausted(&e), limit) {
            (Some(cause), Some(limit)) => Self::ScanTooLarge {
                stage,
                limit: limit as u64,
                cause,
            },
            _ => Self::Load(e),
        }
    }
}

impl From<LoadError> for WindowError {
    fn from(e: LoadError) -> Self {
        Self::Load(e)
    }
}

/// What a windowed check did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowStats {
    pub windows: usize,
    /// Spans in the largest window (core and overlap).
    pub largest_window_spans: u64,
}

/// One window: the traces it judges (core: whole groups) and reads as context (overlap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub core: Vec<TraceId>,
    pub overlap: Vec<TraceId>,
    /// Start-time range of the spans to read.
    pub from_ns: i64,
    pub to_ns: i64,
    pub spans: u64,
    /// The traces of this window (core or overlap) that the previous window read too: a
    /// windowed `check` keeps their rows from there instead of reading them again.
    pub carried: Vec<TraceId>,
    /// Start-time range of the spans of the other traces (`from_ns..=to_ns` when none is
    /// carried; empty, `1..=0`, when all are).
    pub fresh_from_ns: i64,
    pub fresh_to_ns: i64,
    /// Earliest start of a core trace: no span a later window owns starts before the next
    /// window's (groups are cut in order of first start).
    pub core_from_ns: i64,
    /// The number (1-based) of the last window that reads a trace of a group in this core, as
    /// core or overlap: the last window whose model holds one of this core's conversations, so
    /// the last that can add to their tallies.
    pub settled_by: u32,
}

/// Where a window stands in the plan, for a tally that finishes its rows as the windows go by
/// (`report conversations`, [`crate::reports::conversations`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// 1-based.
    pub number: u32,
    /// [`Window::settled_by`].
    pub settled_by: u32,
    /// No span a later window owns starts before this ([`Window::core_from_ns`] of the next
    /// window; `i64::MAX` after the last).
    pub later_from_ns: i64,
}

impl Place {
    /// The whole selection as one window (one model of everything).
    pub fn whole() -> Self {
        Self {
            number: 1,
            settled_by: 1,
            later_from_ns: i64::MAX,
        }
    }
}

/// What a pass-2 scan reads: the window's rows, as decoded (a part per batch), how many rows
/// the scan handed over (past its filters, before rows with malformed ids are skipped), and how
/// long the scan took.
type Scan = (Vec<Vec<Option<SpanRow>>>, u64, std::time::Duration);

impl Window {
    /// The traces to read for this window and their start-time range: all of them, or (`carry`)
    /// those the previous window did not read.
    fn to_read(&self, carry: bool) -> (Vec<TraceId>, i64, i64) {
        let all = self.core.iter().chain(&self.overlap).copied();
        if !carry || self.carried.is_empty() {
            return (all.collect(), self.from_ns, self.to_ns);
        }
        let carried: TraceSet = self.carried.iter().copied().collect();
        let fresh = all.filter(|t| !carried.contains(t)).collect();
        (fresh, self.fresh_from_ns, self.fresh_to_ns)
    }
}

/// Cuts `traces` into windows of about `window_spans` core spans; `conversations` joins traces
/// into groups that are never split. A window's overlap is every other trace that comes within
/// [`MARGIN_NS`] of one of its core traces, whole: the cross-trace joins are between traces
/// close in time, and a conversation shares no trace with another group, so the overlap is read
/// by trace, not by group (a conversation spanning hours would otherwise drag hours of other
/// traffic into every window near it).
pub fn plan(
    traces: &[TraceExtent],
    conversations: &[(TraceId, u64)],
    window_spans: u64,
) -> Vec<Window> {
    let Groups { order, groups } = groups(traces, conversations);
    let end_of = |t: &TraceExtent| t.end_ns.max(t.last_start_ns);
    // Traces ordered by first start; `active` holds the traces a window may overlap: added once
    // their first start is close enough, dropped once they end before a core's margin.
    let by_first = sorted_by(traces, |t| (traces[t as usize].first_ns, t));
    let mut in_core = vec![false; traces.len()];
    // The window (number + 1) that last read each trace, 0 for none.
    let mut read_by = vec![0u32; traces.len()];
    let mut windows = Vec::new();
    let mut next = 0;
    let mut active: Vec<usize> = Vec::new();
    let mut start = 0;
    // Per window, its groups (start..end in `groups`).
    let mut cut: Vec<(usize, usize)> = Vec::new();
    while start < groups.len() {
        let mut end = start;
        let mut spans = 0;
        while end < groups.len() && (end == start || spans + groups[end].1 <= window_spans) {
            spans += groups[end].1;
            end += 1;
        }
        let from = if start == 0 { 0 } else { groups[start - 1].0 };
        let core: Vec<usize> = order[from as usize..groups[end - 1].0 as usize]
            .iter()
            .map(|&t| t as usize)
            .collect();
        // The core's traces widened by the margin, merged into disjoint intervals.
        let mut reach: Vec<(i64, i64)> = core
            .iter()
            .map(|&t| {
                (
                    traces[t].first_ns.saturating_sub(MARGIN_NS),
                    end_of(&traces[t]).saturating_add(MARGIN_NS),
                )
            })
            .collect();
        reach.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(reach.len());
        for (a, b) in reach {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let lo = merged.first().map_or(i64::MIN, |r| r.0);
        let hi = merged.iter().map(|r| r.1).max().unwrap_or(i64::MIN);
        while next < by_first.len() && traces[by_first[next] as usize].first_ns <= hi {
            active.push(by_first[next] as usize);
            next += 1;
        }
        active.retain(|&t| end_of(&traces[t]) >= lo);
        for &t in &core {
            in_core[t] = true;
        }
        // A trace overlaps when its extent meets one of the intervals.
        let meets = |t: &TraceExtent| {
            let i = merged.partition_point(|r| r.1 < t.first_ns);
            merged.get(i).is_some_and(|r| r.0 <= end_of(t))
        };
        let overlap: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&t| !in_core[t] && meets(&traces[t]))
            .collect();
        for &t in &core {
            in_core[t] = false;
        }
        let all = || core.iter().chain(&overlap).map(|&t| &traces[t]);
        let number = windows.len() as u32 + 1;
        let (carried, fresh): (Vec<usize>, Vec<usize>) = core
            .iter()
            .chain(&overlap)
            .partition(|&&t| read_by[t] + 1 == number && number > 1);
        for &t in core.iter().chain(&overlap) {
            read_by[t] = number;
        }
        windows.push(Window {
            core: core.iter().map(|&t| traces[t].trace).collect(),
            overlap: overlap.iter().map(|&t| traces[t].trace).collect(),
            from_ns: all().map(|t| t.first_ns).min().unwrap_or(0),
            to_ns: all().map(|t| t.last_start_ns).max().unwrap_or(0),
            spans: all().map(|t| t.spans).sum(),
            carried: carried.iter().map(|&t| traces[t].trace).collect(),
            fresh_from_ns: fresh.iter().map(|&t| traces[t].first_ns).min().unwrap_or(1),
            fresh_to_ns: fresh
                .iter()
                .map(|&t| traces[t].last_start_ns)
                .max()
                .unwrap_or(0),
            core_from_ns: core.iter().map(|&t| traces[t].first_ns).min().unwrap_or(0),
            settled_by: number,
        });
        cut.push((start, end));
        start = end;
    }
    // `read_by` now holds the last window reading each trace: a core's `settled_by` is the
    // latest over its groups' traces.
    for (w, &(a, b)) in windows.iter_mut().zip(&cut) {
        let from = if a == 0 { 0 } else { groups[a - 1].0 as usize };
        let to = groups[b - 1].0 as usize;
        w.settled_by = order[from..to]
            .iter()
            .map(|&t| read_by[t as usize])
            .max()
            .unwrap_or(w.settled_by)
            .max(w.settled_by);
    }
    windows
}

/// Traces joined into groups by shared conversations, in the order windows take them.
struct Groups {
    /// Trace indices, group after group; within a group in index order.
    order: Vec<u32>,
    /// Per group: where it ends in `order`, and its spans.
    groups: Vec<(u32, u64)>,
}

/// Traces joined by shared conversation (union-find over the links sorted by conversation), the
/// groups ordered by first start (then by the trace id of their first trace in `traces`). Flat
/// arrays of a few bytes per trace, no map: the pass-1 index is the part of `check`'s memory
/// that grows with the store.
fn groups(traces: &[TraceExtent], conversations: &[(TraceId, u64)]) -> Groups {
    let n = traces.len();
    assert!(u32::try_from(n).is_ok(), "more than 2^32 traces");
    let mut parent: Vec<u32> = (0..n as u32).collect();
    // Path halving keeps parent[i] <= i, and a union hangs the larger root under the smaller:
    // a group's root is its smallest trace index.
    fn root(parent: &mut [u32], mut i: usize) -> usize {
        while parent[i] as usize != i {
            parent[i] = parent[parent[i] as usize];
            i = parent[i] as usize;
        }
        i
    }
    {
        let mut links = conversation_links(traces, conversations);
        links.sort_unstable();
        for pair in links.windows(2) {
            if pair[0].0 == pair[1].0 {
                let (a, b) = (
                    root(&mut parent, pair[0].1 as usize),
                    root(&mut parent, pair[1].1 as usize),
                );
                if a != b {
                    parent[a.max(b)] = a.min(b) as u32;
                }
            }
        }
    }
    // Every parent is now a root (parent[i] < i is resolved before i).
    for i in 0..n {
        let p = parent[i] as usize;
        parent[i] = parent[p];
    }
    let mut first = vec![i64::MAX; n];
    for (i, t) in traces.iter().enumerate() {
        let r = parent[i] as usize;
        first[r] = first[r].min(t.first_ns);
    }
    let order = sorted_by(traces, |i| {
        let r = parent[i as usize];
        (first[r as usize], r)
    });
    drop(first);
    let mut groups: Vec<(u32, u64)> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let spans = traces[i as usize].spans;
        match (k > 0).then(|| parent[order[k - 1] as usize]) {
            Some(prev) if prev == parent[i as usize] => {
                let g = groups.last_mut().expect("a group before");
                g.0 += 1;
                g.1 += spans;
            }
            _ => groups.push((k as u32 + 1, spans)),
        }
    }
    Groups { order, groups }
}

/// The indices of `traces` ordered by `key(i)` = (time, tie), then by the trace id of `tie`,
/// then by index: the tie is the trace itself (`plan`) or its group's root (`groups`). When
/// `traces` is in trace id order, as pass 1 gives it, trace indices order as trace ids, so the
/// keys are built once as (time, tie << 32 | index), 16 bytes each, and sorted as integers. A
/// comparison sort that looked the keys up through the indices (a cache miss or three per
/// comparison, ids compared as bytes) was a third of a second of planning's single-threaded half
/// second at 10M spans (perf, session 52). Other orders of `traces` sort on the ids themselves.
fn sorted_by(traces: &[TraceExtent], key: impl Fn(u32) -> (i64, u32)) -> Vec<u32> {
    let n = traces.len() as u32;
    if traces.is_sorted_by_key(|t| t.trace) {
        let mut keyed: Vec<(i64, u64)> = (0..n)
            .map(|i| {
                let (time, tie) = key(i);
                (time, (u64::from(tie) << 32) | u64::from(i))
            })
            .collect();
        keyed.sort_unstable();
        return keyed.into_iter().map(|(_, k)| k as u32).collect();
    }
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_unstable_by_key(|&i| {
        let (time, tie) = key(i);
        (time, traces[tie as usize].trace, i)
    });
    order
}

/// Each link of `conversations` as (conversation hash, index of its trace in `traces`); links of
/// traces `traces` lacks are left out. Pass 1 gives both lists in trace order, and then one walk
/// along both finds every trace, with no index of the traces sorted by id and no search per
/// link (15% of planning's instructions at 1M spans, callgrind, session 49); any other order is
/// searched.
fn conversation_links(traces: &[TraceExtent], conversations: &[(TraceId, u64)]) -> Vec<(u64, u32)> {
    if traces.is_sorted_by_key(|t| t.trace) && conversations.is_sorted_by_key(|c| c.0) {
        let mut at = 0;
        return conversations
            .iter()
            .filter_map(|(trace, conv)| {
                while traces.get(at).is_some_and(|t| t.trace < *trace) {
                    at += 1;
                }
                (traces.get(at)?.trace == *trace).then_some((*conv, at as u32))
            })
            .collect();
    }
    let mut by_id: Vec<u32> = (0..traces.len() as u32).collect();
    by_id.sort_unstable_by_key(|&i| traces[i as usize].trace);
    conversations
        .iter()
        .filter_map(|(trace, conv)| {
            let k = by_id
                .binary_search_by_key(trace, |&i| traces[i as usize].trace)
                .ok()?;
            Some((*conv, by_id[k]))
        })
        .collect()
}

/// Runs `rules` over the store window by window (see the module docs). The findings of each
/// window go to a [`FindingSpill`] as soon as it is judged: held up to `spill`'s bound, then
/// written out as sorted runs, and read back in report order from the [`StreamedReport`].
pub async fn check_windows(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    projection: &Projection,
    options: &WindowOptions,
    spill: SpillOptions,
) -> Result<(StreamedReport, Scanned, WindowStats), WindowError> {
    check_windows_with(
        data_dir,
        filter,
        policy,
        rules,
        projection,
        options,
        spill,
        |_, _, _| {},
    )
    .await
}

/// [`check_windows`], also calling `also` with each window's model and core once its rules have
/// run: `report html` counts its aggregates in the same pass.
#[allow(clippy::too_many_arguments)]
pub async fn check_windows_with(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    projection: &Projection,
    options: &WindowOptions,
    spill: SpillOptions,
    mut also: impl FnMut(&Model, &TraceSet, Place),
) -> Result<(StreamedReport, Scanned, WindowStats), WindowError> {
    let mut merged: Vec<Partial> = rules.iter().map(|_| Partial::default()).collect();
    let mut spilled = FindingSpill::new(rules, spill);
    let mut failed: Option<SpillError> = None;
    let trace = std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some();
    let (scanned, stats, facts) = each_window(
        data_dir,
        filter,
        projection,
        options,
        |model, core, facts, place| {
            let input = RuleInput::window(model, policy, facts.clone(), core);
            for (i, (acc, mut part)) in merged
                .iter_mut()
                .zip(crate::rules::scan_all(rules, &input, trace))
                .enumerate()
            {
                // Window findings leave the partial in window order: the order the rule would
                // report them in from the merged partial.
                let findings = std::mem::take(&mut part.findings);
                acc.merge(part);
                if failed.is_none() {
                    if let Err(e) = spilled.push(i, findings) {
                        failed = Some(e);
                    }
                }
            }
            also(model, core, place);
        },
    )
    .await?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let (empty, no_core) = (Model::default(), TraceSet::default());
    let input = RuleInput::window(&empty, policy, facts, &no_core);
    let mut keep = Vec::with_capacity(rules.len());
    let mut coverage = Vec::with_capacity(rules.len());
    for (i, (r, p)) in rules.iter().zip(merged).enumerate() {
        keep.push(r.keeps_window_findings(&p, &input));
        let outcome = r.finish(p, &input);
        let mut cov = outcome.coverage;
        cov.rule = r.code();
        coverage.push(cov);
        spilled.push(i, outcome.findings)?;
    }
    let findings = spilled.finish(keep)?;
    if trace {
        eprintln!(
            "findings: {}, {} sorted runs spilled{}",
            findings.len(),
            findings.spilled_runs(),
            findings
                .spill_dir()
                .map(|d| format!(" to {}", d.display()))
                .unwrap_or_default()
        );
    }
    Ok((StreamedReport { findings, coverage }, scanned, stats))
}

/// The store-wide facts of pass 1 every window's rules read: the tool catalog and the
/// guardrails' decisions by tool.
pub type StoreFacts = (Catalog, GuardrailFacts);

/// Reads the store window by window (pass 1, planning, pass 2: see the module docs) and calls
/// `visit` with each window's model, the traces it owns (its core: every trace is in exactly
/// one window's core), pass 1's store-wide facts and the window's [`Place`]; `check` runs the
/// rules there, `report` and `diff` their aggregates. Returns what was scanned, the windows'
/// shape and the facts.
pub async fn each_window(
    data_dir: &Path,
    filter: &ScanFilter,
    projection: &Projection,
    options: &WindowOptions,
    visit: impl FnMut(&Model, &TraceSet, &StoreFacts, Place),
) -> Result<(Scanned, WindowStats, StoreFacts), WindowError> {
    each_window_where(data_dir, filter, projection, options, |_, _| true, visit).await
}

/// [`each_window`], reading only the windows `select` (given each window's number, 1-based, and
/// plan before any is read) keeps: `report html`'s second pass reads only the windows that own
/// what the page lists. [`WindowStats`] counts the windows read.
pub async fn each_window_where(
    data_dir: &Path,
    filter: &ScanFilter,
    projection: &Projection,
    options: &WindowOptions,
    mut select: impl FnMut(u32, &Window) -> bool,
    mut visit: impl FnMut(&Model, &TraceSet, &StoreFacts, Place),
) -> Result<(Scanned, WindowStats, StoreFacts), WindowError> {
    let started = std::time::Instant::now();
    let mut snapshot = index::snapshot(data_dir).await?;
    if std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some() {
        eprintln!("snapshot: {:?}, {}", started.elapsed(), memory());
    }
    let idx = index::index_store(
        &mut snapshot,
        data_dir,
        filter,
        options.memory_limit,
        options.spill_dir.as_deref(),
    )
    .await
    .map_err(|e| WindowError::load(e, "index the store (pass 1)", options.memory_limit))?;
    let facts = (idx.catalog, idx.guardrails);
    // A window (core and overlap) gets at most half the memory limit: the rest is the scan's
    // Arrow buffers, the pass-1 index and the findings so far.
    let window_spans = options.memory_limit.map_or(options.window_spans, |limit| {
        options
            .window_spans
            .min((limit as u64 / 2 / BYTES_PER_SPAN).max(1))
    });
    let trace = std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some();
    if trace {
        eprintln!(
            "pass 1: {} traces, {} conversation links, {:?}, {}",
            idx.traces.len(),
            idx.conversations.len(),
            started.elapsed(),
            memory()
        );
    }
    let windows = plan(&idx.traces, &idx.conversations, window_spans);
    drop(idx.traces);
    drop(idx.conversations);
    // What pass 1 freed goes back to the OS; what the windows free is kept for the next one.
    crate::phase::pass_one_done();
    if trace {
        eprintln!("planned {} windows, {}", windows.len(), memory());
    }
    let mut largest = 0;
    let has_logs = snapshot.total_log_records() > 0;
    let (mut log_records, mut event_spans) = (0, 0);
    let path = data_dir.join("spans").display().to_string();
    let scan_err = |cause| LoadError::Scan {
        path: path.clone(),
        cause,
    };
    // One session for every window: its runtime caches the Parquet footers across windows.
    let ctx = index::window_session(options.memory_limit).map_err(scan_err)?;
    crate::load::register_once(&ctx, &snapshot).await?;
    // Rows of the traces the next window reads too, kept from this one's model instead of
    // decoded again (consecutive windows share most of their overlap). Not with log records:
    // a window joins them to its core's rows only, so a kept row would differ from a fresh one.
    let carry = !has_logs;
    // The next window's rows are read while this one is judged (the scan's tasks on the
    // runtime's threads, the model and the rules on this one), except under --memory-limit,
    // where one window at a time is what the limit is checked against.
    let ahead = options.memory_limit.is_none();
    let chosen: Vec<bool> = windows
        .iter()
        .enumerate()
        .map(|(k, w)| select(k as u32 + 1, w))
        .collect();
    // Window `k` reads the rows kept from the previous window when that one was read too.
    let carries = |k: usize| carry && k > 0 && chosen[k - 1];
    let next_chosen = |k: usize| (k + 1..windows.len()).find(|&j| chosen[j]);
    let read = |k: usize| -> tokio::task::JoinHandle<Result<Scan, LoadError>> {
        let w = &windows[k];
        let (fresh, from_ns, to_ns) = w.to_read(carries(k));
        let ctx = ctx.clone();
        let data_dir = data_dir.to_path_buf();
        let projection = projection.clone();
        let mut filters = filter.exprs();
        if !fresh.is_empty() {
            // The user's filter, the start-time range of the traces to read (row group
            // statistics prune by it) and the partitions holding spans of that range.
            filters.push(col(c::START_TIME_UNIX_NANO).between(lit(from_ns), lit(to_ns)));
            filters.extend(index::partitions_holding(&idx.partitions, from_ns, to_ns));
        }
        tokio::spawn(async move {
            let t0 = std::time::Instant::now();
            if fresh.is_empty() {
                return Ok((Vec::new(), 0, t0.elapsed()));
            }
            // Rows of other traces are dropped by the Parquet reader on `trace_id` alone,
            // before their other columns are decoded (`scan_window`).
            let keep: SharedTraces = Arc::new(fresh.into_iter().collect());
            let (parts, decoded) = scan_window(ctx, data_dir, filters, projection, keep).await?;
            Ok((parts, decoded, t0.elapsed()))
        })
    };
    let joined = |r: Result<Result<Scan, LoadError>, tokio::task::JoinError>| {
        r.map_err(|e| LoadError::Scan {
            path: path.clone(),
            cause: datafusion::error::DataFusionError::External(Box::new(e)),
        })?
        .map_err(|e| WindowError::load(e, "read a window", options.memory_limit))
    };
    let mut held: Vec<Vec<Option<SpanRow>>> = Vec::new();
    let mut pending = None;
    let mut read_windows = 0;
    for (number, w) in windows.iter().enumerate() {
        if !chosen[number] {
            continue;
        }
        read_windows += 1;
        largest = largest.max(w.spans);
        // Held while the window is read and judged: DataFusion's operators share the rest.
        let _reservation = index::reserve(
            &ctx,
            "window",
            usize::try_from(w.spans * BYTES_PER_SPAN).unwrap_or(usize::MAX),
        )
        .map_err(|_| {
            too_large(
                number,
                windows.len(),
                w,
                options.memory_limit.unwrap_or_default(),
            )
        })?;
        let t0 = std::time::Instant::now();
        let task = pending.take().unwrap_or_else(|| read(number));
        let (mut parts, decoded, scan_time) = joined(task.await)?;
        let waited = t0.elapsed();
        if ahead {
            pending = next_chosen(number).map(&read);
        }
        let fresh_rows: usize = parts.iter().map(Vec::len).sum();
        // The kept rows first (in chunks, so the model frees them as they move, see
        // `Model::from_parts`), then the fresh ones.
        let mut kept = std::mem::take(&mut held);
        kept.append(&mut parts);
        let mut parts = kept;
        let core: TraceSet = w.core.iter().copied().collect();
        if has_logs {
            // GenAI events sent as log records, joined to this window's spans. The logs table
            // is read once per window: log records are few next to spans (one per model call
            // or tool payload), and a window holds only its own spans' rows.
            let joined =
                log_join::join_logs(&ctx, filter, projection, &mut parts, &|t| core.contains(t))
                    .await
                    .map_err(|e| {
                        WindowError::load(e, "join log records to a window", options.memory_limit)
                    })?;
            log_records = joined.log_records;
            event_spans += joined.spans;
        }
        let t1 = t0.elapsed();
        let rows: usize = parts.iter().map(Vec::len).sum();
        let model = Model::from_parts(parts);
        let t2 = t0.elapsed();
        let place = Place {
            number: number as u32 + 1,
            settled_by: w.settled_by,
            later_from_ns: windows.get(number + 1).map_or(i64::MAX, |n| n.core_from_ns),
        };
        visit(&model, &core, &facts, place);
        let t3 = t0.elapsed();
        let in_model = model.spans.len();
        if carry && chosen.get(number + 1) == Some(&true) {
            if let Some(next) = windows.get(number + 1).filter(|n| !n.carried.is_empty()) {
                let next: TraceSet = next.carried.iter().copied().collect();
                // Only the kept rows move out; the others are dropped where they lie. Moving
                // every row out to test its trace was 1.6% of a 10M-span `check`'s CPU, on the
                // thread that builds the models and runs the rules (perf, session 49).
                let mut rows = model.into_rows();
                held = chunks(
                    rows.iter_mut()
                        .filter(|s| next.contains(&s.trace_id))
                        .map(std::mem::take),
                );
            }
        }
        if trace {
            eprintln!(
                "window {number}: core {} overlap {} traces, {} spans planned, {decoded} rows decoded, {fresh_rows} kept, {} carried, {} in model, range {:.0} s, scan {scan_time:?} (waited {waited:?}) model {:?} rules {:?}, {}",
                w.core.len(),
                w.overlap.len(),
                w.spans,
                rows - fresh_rows,
                in_model,
                (w.to_ns - w.from_ns) as f64 / 1e9,
                t2 - t1,
                t3 - t2,
                memory()
            );
        }
    }
    let stats = WindowStats {
        windows: read_windows,
        largest_window_spans: largest,
    };
    let mut scanned = idx.scanned;
    scanned.log_records = log_records;
    scanned.spans_with_event_content = event_spans;
    Ok((scanned, stats, facts))
}

/// `rows` in parts of [`CARRY_CHUNK`], the shape a scan gives the model: each part is freed
/// once its rows have moved, and no buffer of a whole window's rows is held beside the model.
fn chunks(rows: impl Iterator<Item = SpanRow>) -> Vec<Vec<Option<SpanRow>>> {
    let mut out: Vec<Vec<Option<SpanRow>>> = Vec::new();
    for row in rows {
        match out.last_mut() {
            Some(last) if last.len() < CARRY_CHUNK => last.push(Some(row)),
            _ => {
                let mut part = Vec::with_capacity(CARRY_CHUNK);
                part.push(Some(row));
                out.push(part);
            }
        }
    }
    out
}

/// The process's resident and peak resident memory (Linux `/proc/self/status`), for
/// `TRIPLINE_WINDOW_TRACE`.
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or_else(|| "?".to_string(), |kb| format!("{} MiB", kb / 1024))
    };
    format!("rss {} peak {}", field("VmRSS:"), field("VmHWM:"))
}

/// The error for window `number` (0-based) of `windows` not fitting in `limit` bytes.
fn too_large(number: usize, windows: usize, w: &Window, limit: usize) -> WindowError {
    let time = |ns: i64| DateTime::<Utc>::from_timestamp_nanos(ns).to_rfc3339();
    WindowError::TooLarge {
        number: number + 1,
        windows,
        from: time(w.from_ns),
        to: time(w.to_ns),
        spans: w.spans,
        traces: w.core.len() + w.overlap.len(),
        needs: w.spans * BYTES_PER_SPAN,
        limit: limit as u64,
    }
}

/// `512 B`, `1.0 KiB`, `250.0 MiB`, `1.5 GiB`.
fn human(bytes: &u64) -> String {
    let (bytes, b) = (*bytes, *bytes as f64);
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", b / 1_048_576.0),
        _ => format!("{:.1} GiB", b / 1_073_741_824.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn t(id: u8, first: i64, end: i64, spans: u64) -> TraceExtent {
        TraceExtent {
            trace: TraceId([id; 16]),
            first_ns: first,
            last_start_ns: first,
            end_ns: end,
            spans,
        }
    }

    /// The orders `plan` and `groups` sort by, looked up through the indices and compared on
    /// trace ids: what [`sorted_by`] must give whichever order `traces` is in.
    fn by_lookup(traces: &[TraceExtent], root: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let n = traces.len() as u32;
        let mut by_first: Vec<u32> = (0..n).collect();
        by_first.sort_by_key(|&t| (traces[t as usize].first_ns, traces[t as usize].trace));
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&i| {
            let r = root[i as usize] as usize;
            (traces[r].first_ns, traces[r].trace, i)
        });
        (by_first, order)
    }

    #[test]
    fn keyed_sorts_give_the_orders_of_sorting_through_the_ids() {
        // Many ties on time (a tenth of the distinct starts), groups of up to four traces.
        let mut g = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g % m
        };
        let mut traces: Vec<TraceExtent> = (0..2_000u32)
            .map(|i| {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&next(u64::MAX).to_be_bytes());
                id[12..].copy_from_slice(&i.to_be_bytes());
                let first = next(200) as i64;
                TraceExtent {
                    trace: TraceId(id),
                    first_ns: first,
                    last_start_ns: first,
                    end_ns: first + 1,
                    spans: 1,
                }
            })
            .collect();
        for sorted in [true, false] {
            if sorted {
                traces.sort_by_key(|t| t.trace);
            } else {
                traces.reverse();
            }
            assert_eq!(traces.is_sorted_by_key(|t| t.trace), sorted);
            // A group's root is its smallest index.
            let root: Vec<u32> = (0..traces.len() as u32)
                .map(|i| i - (i % 4).min(next(4) as u32))
                .collect();
            let (by_first, order) = by_lookup(&traces, &root);
            assert_eq!(
                sorted_by(&traces, |t| (traces[t as usize].first_ns, t)),
                by_first,
                "by first start, traces sorted: {sorted}"
            );
            let keyed = sorted_by(&traces, |i| {
                let r = root[i as usize];
                (traces[r as usize].first_ns, r)
            });
            assert_eq!(keyed, order, "groups' order, traces sorted: {sorted}");
        }
    }

    #[test]
    fn every_trace_is_core_in_exactly_one_window_and_neighbours_are_overlap() {
        // Ten traces far apart (three margins), 4 spans each, windows of 8 spans: two per core.
        let gap = 3 * MARGIN_NS;
        let traces: Vec<_> = (0..10u8)
            .map(|i| t(i, i64::from(i) * gap, i64::from(i) * gap + S, 4))
            .collect();
        let windows = plan(&traces, &[], 8);
        assert_eq!(windows.len(), 5);
        let mut cores: Vec<TraceId> = windows.iter().flat_map(|w| w.core.clone()).collect();
        cores.sort();
        assert_eq!(cores, traces.iter().map(|t| t.trace).collect::<Vec<_>>());
        assert!(windows.iter().all(|w| w.overlap.is_empty()), "{windows:?}");
        assert_eq!(windows[0].spans, 8);
        // Within the margin: the neighbours are read as overlap, on both sides.
        let close: Vec<_> = (0..4u8)
            .map(|i| t(i, i64::from(i) * 3 * S, i64::from(i) * 3 * S + S, 4))
            .collect();
        let windows = plan(&close, &[], 8);
        let ids = |v: &[u8]| v.iter().map(|&i| TraceId([i; 16])).collect::<Vec<_>>();
        assert_eq!(windows[0].core, ids(&[0, 1]));
        assert_eq!(windows[0].overlap, ids(&[2, 3]));
        assert_eq!(windows[1].overlap, ids(&[0, 1]));
        assert_eq!((windows[1].from_ns, windows[1].to_ns), (0, 9 * S));
        assert_eq!(windows[1].spans, 16);
        // The second window reads nothing the first did not: all four are carried over.
        assert!(windows[0].carried.is_empty());
        assert_eq!(windows[1].carried, ids(&[2, 3, 0, 1]));
        assert!(windows[1].fresh_from_ns > windows[1].fresh_to_ns);
        // Far apart: nothing is carried, the fresh range is the window's.
        let far = plan(&traces, &[], 8);
        assert!(far.iter().all(|w| w.carried.is_empty()));
        assert!(far
            .iter()
            .all(|w| (w.fresh_from_ns, w.fresh_to_ns) == (w.from_ns, w.to_ns)));
    }

    #[test]
    fn a_window_too_large_for_the_limit_is_named() {
        let w = Window {
            core: vec![TraceId([1; 16])],
            overlap: vec![TraceId([2; 16])],
            from_ns: 0,
            to_ns: 3_600 * S,
            spans: 700_000,
            carried: Vec::new(),
            fresh_from_ns: 0,
            fresh_to_ns: 3_600 * S,
            core_from_ns: 0,
            settled_by: 1,
        };
        assert_eq!(
            too_large(2, 41, &w, 1 << 30).to_string(),
            "window 3 of 41 (spans starting 1970-01-01T00:00:00+00:00 to 1970-01-01T01:00:00+00:00: \
             700000 spans in 2 traces, a window never splits a trace or a conversation) needs \
             about 1.2 GiB, more than --memory-limit 1.0 GiB allows; raise --memory-limit, or \
             narrow the scan with --since/--until/--service"
        );
    }

    #[test]
    fn window_sizes_at_the_edges() {
        // Far apart (no overlap), 3 spans each, trace 3 before trace 1 in time.
        let gap = 3 * MARGIN_NS;
        let traces = vec![
            t(1, 2 * gap, 2 * gap + S, 3),
            t(2, 3 * gap, 3 * gap + S, 3),
            t(3, gap, gap + S, 3),
        ];
        let ids = |v: &[u8]| v.iter().map(|&i| TraceId([i; 16])).collect::<Vec<_>>();
        // 0 or 1 span: one group per window all the same, in start order.
        for size in [0, 1] {
            let windows = plan(&traces, &[], size);
            let cores: Vec<_> = windows.iter().map(|w| w.core.clone()).collect();
            assert_eq!(cores, vec![ids(&[3]), ids(&[1]), ids(&[2])], "size {size}");
        }
        // Exactly a window's worth, and more than the store: never an empty window.
        assert_eq!(plan(&traces, &[], 6).len(), 2);
        let one = plan(&traces, &[], u64::MAX);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].core, ids(&[3, 1, 2]));
        assert_eq!(
            (one[0].spans, one[0].from_ns, one[0].to_ns),
            (9, gap, 3 * gap)
        );
        assert!(plan(&[], &[], 10).is_empty());
    }

    #[test]
    fn conversations_join_transitively_and_unknown_traces_are_ignored() {
        // 1 and 2 share conversation 10, 2 and 3 share 11: one group of three, judged in one
        // window even at one span per window; 4 is alone; a link to a trace outside the index
        // (9) changes nothing.
        let gap = 3 * MARGIN_NS;
        let traces: Vec<_> = (1..=4u8)
            .map(|i| t(i, i64::from(i) * gap, i64::from(i) * gap + S, 2))
            .collect();
        let conv = vec![
            (TraceId([3; 16]), 11),
            (TraceId([1; 16]), 10),
            (TraceId([9; 16]), 10),
            (TraceId([2; 16]), 11),
            (TraceId([2; 16]), 10),
        ];
        let windows = plan(&traces, &conv, 1);
        let ids = |v: &[u8]| v.iter().map(|&i| TraceId([i; 16])).collect::<Vec<_>>();
        let cores: Vec<_> = windows.iter().map(|w| w.core.clone()).collect();
        assert_eq!(cores, vec![ids(&[1, 2, 3]), ids(&[4])]);
        assert_eq!(windows[0].spans, 6);
    }

    #[test]
    fn conversation_links_are_the_same_walked_or_searched() {
        // In trace order (as pass 1 gives them) the links are found by one walk; the traces
        // reversed, by a search. Links to traces the index lacks (3, 8) are left out.
        let traces: Vec<_> = [1u8, 2, 4, 5, 7].iter().map(|&i| t(i, 0, S, 1)).collect();
        let id = |i: u8| TraceId([i; 16]);
        let conv = vec![
            (id(1), 10),
            (id(2), 11),
            (id(3), 12),
            (id(4), 10),
            (id(4), 13),
            (id(8), 14),
        ];
        let named = |traces: &[TraceExtent], links: Vec<(u64, u32)>| {
            let mut v: Vec<(u64, TraceId)> = links
                .into_iter()
                .map(|(c, i)| (c, traces[i as usize].trace))
                .collect();
            v.sort_unstable();
            v
        };
        let walked = named(&traces, conversation_links(&traces, &conv));
        let mut reversed = traces.clone();
        reversed.reverse();
        let searched = named(&reversed, conversation_links(&reversed, &conv));
        assert_eq!(walked, searched);
        assert_eq!(
            walked,
            vec![(10, id(1)), (10, id(4)), (11, id(2)), (13, id(4))]
        );
    }

    #[test]
    fn a_conversation_is_never_split_and_a_long_trace_is_overlap_everywhere() {
        let traces = vec![
            t(1, 0, S, 4),
            t(2, 100 * S, 101 * S, 4),
            t(3, 50 * S, 51 * S, 4),
            // a session trace over the whole store
            t(4, 10 * S, 200 * S, 1),
        ];
        let conv = vec![(TraceId([1; 16]), 7), (TraceId([2; 16]), 7)];
        let windows = plan(&traces, &conv, 4);
        let w1 = windows
            .iter()
            .find(|w| w.core.contains(&TraceId([1; 16])))
            .unwrap();
        assert!(w1.core.contains(&TraceId([2; 16])), "{windows:?}");
        assert!(w1.overlap.contains(&TraceId([4; 16])));
        let w3 = windows
            .iter()
            .find(|w| w.core.contains(&TraceId([3; 16])))
            .unwrap();
        assert!(w3.overlap.contains(&TraceId([4; 16])), "{windows:?}");
    }

    #[test]
    fn a_core_is_settled_by_the_last_window_that_reads_its_groups() {
        // Conversation 7 joins traces 1 (0 s) and 2 (100 s) into the first core; trace 4 runs
        // from 10 s to 200 s, so the windows around it read it, and it reads trace 2.
        let traces = vec![
            t(1, 0, S, 4),
            t(2, 100 * S, 101 * S, 4),
            t(3, 50 * S, 51 * S, 4),
            t(4, 10 * S, 200 * S, 1),
        ];
        let conv = vec![(TraceId([1; 16]), 7), (TraceId([2; 16]), 7)];
        let windows = plan(&traces, &conv, 4);
        let ids = |v: &[u8]| v.iter().map(|&i| TraceId([i; 16])).collect::<Vec<_>>();
        let cores: Vec<_> = windows.iter().map(|w| w.core.clone()).collect();
        assert_eq!(cores, vec![ids(&[1, 2]), ids(&[4]), ids(&[3])]);
        // Trace 2 is read again by window 2 (trace 4's overlap); trace 4 by window 3.
        let settled: Vec<u32> = windows.iter().map(|w| w.settled_by).collect();
        assert_eq!(settled, vec![2, 3, 3]);
        let from: Vec<i64> = windows.iter().map(|w| w.core_from_ns).collect();
        assert_eq!(from, vec![0, 10 * S, 50 * S]);
    }
}
