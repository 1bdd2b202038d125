//! The page's data window by window, in memory bounded whatever the store's size: the same
//! windows as `check` and `report tools` ([`crate::window`]), so `report html` never holds one
//! model of the whole store.
//!
//! Two passes over the windows, because what the page lists is only known once every finding is:
//!
//! 1. the rules (exactly `check`'s windowed run, findings spilled past its bound) with the tools
//!    and conversations reports' tallies (conversation rows finished as the windows go, the
//!    first [`PageLimits::runs`] kept with the windows owning their agent runs, the others only
//!    counted; the agent runs under no conversation counted, the first of them remembered with
//!    their window); then the findings are read once in report order and tallied
//!    ([`FindingTally`]): counts per rule, the first N of each rule kept, the span of each
//!    remembered as an 8-byte hash;
//! 2. only the windows that own a listed finding's trace or a listed agent run, without rules and
//!    without the content columns: the waterfall of each listed finding is built from the
//!    window that owns its trace (whose model holds every trace stitched to it, as `check`'s
//!    windows do), and the agent runs of the listed conversations are counted there, trimmed to
//!    the first [`PageLimits::runs`] after each window.
//!
//! What is held beyond one window's model: the listed findings and their views (at most
//! [`MAX_PAGE_SPANS`] spans), the listed runs and conversations, the conversation rows still
//! counting (about a window's worth, [`conversations::Totals::settle`]), the tool rows, and the
//! findings' span hashes (8 bytes each, at most [`MAX_FINDING_KEYS`]). On a store one window
//! holds, the document is the one [`super::data::build`] makes from one model
//! (analyze/tests/report_windows.rs compares them).
//!
//! [`MAX_FINDING_KEYS`]: super::data::MAX_FINDING_KEYS

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use super::data::{
    agent_runs, capped_notes, conversation_ranks, page_findings, rule_docs, Document, FindingTally,
    PageContext, PageLimits, PageRows, RunList,
};
use super::waterfall::{assemble, build_view, group_size, orphans_of, TraceView, MAX_PAGE_SPANS};
use crate::check::projection_for;
use crate::load::{Projection, ScanFilter};
use crate::model::stitch::StitchedGraph;
use crate::model::{SpanId, TraceId};
use crate::policy::Policy;
use crate::reports::{conversations, tools, Owned};
use crate::rules::spill::SpillOptions;
use crate::rules::{StreamedReport, RULES};
use crate::window::{
    check_windows_with, each_window_where, WindowError, WindowOptions, WindowStats,
};

/// The windows of both passes: pass 2 reads only those owning what the page lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassStats {
    pub first: WindowStats,
    pub second: WindowStats,
}

/// A view built in pass 2 for a finding's trace: its stitched group, the group's spans in the
/// window's model, the view (None once [`MAX_PAGE_SPANS`] spans were built: no waterfall).
struct Prebuilt {
    group: BTreeSet<TraceId>,
    size: usize,
    view: Option<TraceView>,
}

/// The page of `check` over the store in `data_dir` (every rule, `policy`), window by window
/// (see the module docs). A scan that reads no span is an error, as for `check`.
pub async fn build_windowed<'a>(
    data_dir: &Path,
    filter: &ScanFilter,
    policy: &Policy,
    options: &WindowOptions,
    spill: SpillOptions,
    limits: &PageLimits,
    context: &'a PageContext,
) -> Result<(Document<'a>, PassStats), WindowError> {
    let projection = projection_for(RULES);
    // Pass 1: the rules, the tools and conversations tallies (the conversation rows finished as
    // the windows go: the first `limits.runs` kept, the others counted), and the agent runs
    // under no conversation (counted; the first `limits.runs` remembered with their window).
    let mut tool_totals = tools::Totals::default();
    let mut conv_totals = conversations::Totals::default();
    let mut page_rows = PageRows::new(limits);
    let mut loose = LooseRuns::new(limits.runs);
    let (streamed, scanned, stats) = check_windows_with(
        data_dir,
        filter,
        policy,
        RULES,
        &projection,
        options,
        spill,
        |model, core, place| {
            let owned = Owned::core(model, core);
            tool_totals.add(model, &owned);
            conv_totals.add_at(model, &owned, place);
            conv_totals.settle(place, &mut page_rows);
            for (i, s) in model.spans.iter().enumerate() {
                if s.is_agent_run() && model.conversation[i].is_none() && owned.span(i) {
                    loose.add((s.start_ns, s.trace_id, s.span_id), place.number);
                }
            }
        },
    )
    .await?;
    conv_totals.finish_into(&mut page_rows);
    let StreamedReport { findings, coverage } = streamed;
    let mut tally = FindingTally::new(limits);
    for f in findings {
        tally.add(f?);
    }
    let (counts, listed, keys) = tally.finish();
    let ranks = conversation_ranks(&page_rows.listed, limits);

    // Pass 2: the listed findings' waterfalls and the listed conversations' agent runs, from
    // the windows that own them only. The runs under no conversation follow every run of a
    // listed conversation on the page: their windows are read only for the places left.
    let wanted: HashSet<TraceId> = listed.iter().map(|f| f.trace_id).collect();
    let runs_listed: usize = page_rows.listed.iter().map(|r| r.agent_runs).sum();
    let mut run_windows = std::mem::take(&mut page_rows.run_windows);
    run_windows.extend(loose.windows(limits.runs.saturating_sub(runs_listed)));
    let loose_total = loose.total;
    let mut prebuilt: Vec<Prebuilt> = Vec::new();
    let mut slot_of: HashMap<TraceId, usize> = HashMap::new();
    let mut built_spans = 0usize;
    let mut runs = RunList::new(limits);
    // Without the content columns (prompts, messages, content attributes) some rules read: the
    // page never shows them, and they are most of what a scan decodes. What a waterfall shows
    // beyond the rules' columns (attribute keys, events, model, ...) is added.
    let light = Projection::base().with(super::waterfall::COLUMNS);
    let (_, pass2, _) = each_window_where(
        data_dir,
        filter,
        &light,
        options,
        |number, w| run_windows.contains(&number) || w.core.iter().any(|t| wanted.contains(t)),
        |model, core, _, _| {
            let owned = |i: usize| core.contains(&model.spans[i].trace_id);
            let findings_on = |i: usize| {
                let s = &model.spans[i];
                // A span id held twice in a trace is one span of the model (as `index_of`).
                if model.index_of(s.trace_id, s.span_id) != Some(i) {
                    return Some(0);
                }
                keys.as_ref().map(|k| k.on(s.trace_id, s.span_id))
            };
            runs.add(agent_runs(model, &owned, &ranks, &findings_on));
            let here: Vec<TraceId> = core
                .iter()
                .filter(|t| wanted.contains(t) && !slot_of.contains_key(t))
                .copied()
                .collect();
            if here.is_empty() {
                return;
            }
            let graph = StitchedGraph::of(model);
            let orphans = orphans_of(model);
            for t in here {
                if slot_of.contains_key(&t) {
                    continue;
                }
                let group = graph.component(t);
                let size = group_size(model, &group);
                let view = (size > 0 && built_spans < MAX_PAGE_SPANS).then(|| {
                    let v = build_view(model, &group, &graph.children, &orphans);
                    built_spans += v.spans.len();
                    v
                });
                for g in &group {
                    if wanted.contains(g) {
                        slot_of.entry(*g).or_insert(prebuilt.len());
                    }
                }
                prebuilt.push(Prebuilt { group, size, view });
            }
        },
    )
    .await?;
    if std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some() {
        eprintln!(
            "report html: pass 2 read {} of {} windows",
            pass2.windows, stats.windows
        );
    }
    let stats = PassStats {
        first: stats,
        second: pass2,
    };
    // The views apart from their groups: `assemble` reads the groups and takes the views.
    let (groups, mut built): (Vec<_>, Vec<_>) = prebuilt
        .into_iter()
        .map(|p| ((p.group, p.size, p.view.is_some()), p.view))
        .unzip();
    let (views, view_of_trace, view_notes) = assemble(
        &listed,
        |t| {
            let (group, size, has_view) = &groups[*slot_of.get(&t)?];
            // A view not built (the pass-2 budget) is like one too large for the page.
            let size = if *has_view { *size } else { MAX_PAGE_SPANS + 1 };
            Some((group.clone(), size))
        },
        |t, _| {
            built[slot_of[&t]]
                .take()
                .expect("assemble builds a group once")
        },
    );
    let findings = page_findings(listed, &view_of_trace);
    let (conversations, loose_runs, runs_note) =
        runs.finish(page_rows.listed, &page_rows.counts, loose_total);
    let doc = Document {
        context,
        scanned_summary: Some(scanned.summary()),
        scanned: Some(scanned),
        limits: *limits,
        rules: rule_docs(&coverage, &counts),
        capped: capped_notes(&counts, runs_note),
        counts,
        findings,
        coverage,
        tools: tool_totals.finish(),
        conversations_total: conversations.1,
        conversations: conversations.0,
        loose_runs,
        loose_runs_total: loose_total,
        views,
        view_notes,
    };
    Ok((doc, stats))
}

/// The agent runs under no conversation, counted, and the first `limit` in page order (start,
/// trace, span) remembered with the window that owns each: pass 2 reads those windows only.
struct LooseRuns {
    limit: usize,
    kept: Vec<((i64, TraceId, SpanId), u32)>,
    total: usize,
}

impl LooseRuns {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            kept: Vec::new(),
            total: 0,
        }
    }

    fn add(&mut self, key: (i64, TraceId, SpanId), window: u32) {
        self.total += 1;
        self.kept.push((key, window));
        // Trimmed in batches: sorting at every run would cost a sort per run.
        if self.kept.len() >= self.limit.max(1024).saturating_mul(2) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.kept.sort_unstable();
        self.kept.truncate(self.limit);
    }

    /// The windows owning the first `n` runs.
    fn windows(&mut self, n: usize) -> Vec<u32> {
        self.trim();
        self.kept.iter().take(n).map(|&(_, w)| w).collect()
    }
}
