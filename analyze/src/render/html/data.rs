//! The document the HTML page is drawn from: the check report (findings, coverage, the rules'
//! `explain` text), the tools report, conversations with their agent runs, and one trace view per
//! stitched group of traces that holds a finding.
//!
//! Why a data document and not HTML built here: the page draws itself from this JSON (inline,
//! escaped once by [`super::script_json`]), so every value that comes from a span reaches the DOM
//! through `textContent` and never as markup, and the waterfalls are built only when a finding is
//! opened (a 10k-span trace costs nothing until then).
//!
//! The lists are capped ([`PageLimits`]), the counts are not: a store of millions of spans
//! holds hundreds of thousands of findings and agent runs, and a page listing them all is one
//! no browser opens. Every cap the page hits is said on it ([`Document::capped`]), with where
//! the full list is. The pieces here (the finding tally, the run list) are shared by the page of
//! one model ([`build`]) and the page made window by window (`super::windows`), so the two agree.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::waterfall::{self, TraceView};
use crate::model::{Model, SpanId, TraceId};
use crate::reports::conversations::{self, ConversationRow};
use crate::reports::tools::{self, ToolRow};
use crate::reports::{ms, Report as DataReport};
use crate::rules::{self, Coverage, Finding, Report};
use crate::store::Scanned;

/// What the page was made from, shown in its header.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PageContext {
    /// When the page was written (RFC 3339).
    pub generated: String,
    /// The data dir that was scanned.
    pub data_dir: String,
    /// The policy file, when one was given.
    pub policy: Option<String>,
    /// The scan filters as the user typed them (`--since 24h`, ...).
    pub filters: Vec<String>,
}

/// How much of a check the page lists. The totals (findings per rule and severity, coverage,
/// tools, conversation rows) always count everything; the lists stop at these numbers, and the
/// page says so where they do. Why a cap: at 10M spans a check holds ~240,000 findings, and a page
/// that lists each with its waterfall is hundreds of MB that no browser opens; the full list is
/// `tripline check --format json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PageLimits {
    /// Findings listed per rule, each with its waterfall: the rule's first in report order.
    pub findings_per_rule: usize,
    /// Conversations listed, and agent runs listed over all of them and the runs outside any
    /// conversation (the first in page order: conversations by start, runs by start).
    pub runs: usize,
}

/// `--max-findings-per-rule` by default: enough examples of each rule to act on.
pub const DEFAULT_FINDINGS_PER_RULE: usize = 50;
/// `--max-runs` by default.
pub const DEFAULT_RUNS: usize = 500;

impl Default for PageLimits {
    fn default() -> Self {
        Self {
            findings_per_rule: DEFAULT_FINDINGS_PER_RULE,
            runs: DEFAULT_RUNS,
        }
    }
}

/// The whole page's data.
#[derive(Serialize)]
pub struct Document<'a> {
    pub context: &'a PageContext,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanned: Option<Scanned>,
    /// The `scanned` summary line (`scanned 3 files, 278 spans ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanned_summary: Option<String>,
    pub limits: PageLimits,
    /// Every rule that ran or fired, with its `explain` text.
    pub rules: Vec<RuleDoc>,
    /// Every finding of the check, counted per rule (in report order), listed or not.
    pub counts: Vec<RuleCount>,
    /// The findings listed: per rule the first [`PageLimits::findings_per_rule`], report order.
    pub findings: Vec<PageFinding>,
    pub coverage: Vec<Coverage>,
    pub tools: DataReport<ToolRow>,
    /// The first [`PageLimits::runs`] conversations, with their agent runs.
    pub conversations: Vec<Conversation>,
    /// Conversations in the scan (listed or not).
    pub conversations_total: usize,
    /// Agent runs under no conversation id, in start order.
    pub loose_runs: Vec<AgentRun>,
    /// Agent runs under no conversation id in the scan (listed or not).
    pub loose_runs_total: usize,
    /// Trace views (stitched groups of traces), indexed by [`PageFinding::view`].
    pub views: Vec<TraceView>,
    /// Why some findings have no waterfall (size caps), empty when all do.
    pub view_notes: Vec<String>,
    /// What the lists leave out, one sentence each; empty when the page lists everything.
    pub capped: Vec<String>,
}

/// One rule's identity and docs.
#[derive(Serialize)]
pub struct RuleDoc {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: rules::Severity,
    pub explain: String,
}

/// How many findings a rule has, and how many the page lists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    pub rule: &'static str,
    pub severity: rules::Severity,
    pub findings: u64,
    pub listed: usize,
    /// "showing 50 of 18,034 TL004 findings; ...", when not all are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A finding (the JSON contract's fields) plus where its waterfall is.
#[derive(Serialize)]
pub struct PageFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// Index into [`Document::views`]; None when the trace was too large to embed.
    pub view: Option<usize>,
}

/// The listed findings, each with the index of its trace's waterfall (if one was embedded).
pub(crate) fn page_findings(
    listed: Vec<Finding>,
    view_of_trace: &HashMap<TraceId, usize>,
) -> Vec<PageFinding> {
    listed
        .into_iter()
        .map(|f| PageFinding {
            view: view_of_trace.get(&f.trace_id).copied(),
            finding: f,
        })
        .collect()
}

/// One conversation: the `report conversations` row and its agent runs in start order.
#[derive(Serialize)]
pub struct Conversation {
    #[serde(flatten)]
    pub row: ConversationRow,
    pub runs: Vec<AgentRun>,
}

/// One `invoke_agent` span and what ran under it.
#[derive(Clone, Debug, Serialize)]
pub struct AgentRun {
    pub agent: String,
    pub trace_id: String,
    pub span_id: String,
    /// Start, RFC 3339 (UTC).
    pub started: String,
    pub duration_ms: f64,
    pub model_calls: usize,
    pub tool_calls: usize,
    pub tool_errors: usize,
    /// Findings on spans of this run; None when not counted (more findings than
    /// [`FindingTally`] keeps the spans of).
    pub findings: Option<usize>,
}

/// The findings of a check read once, in report order: counted per rule, the first
/// [`PageLimits::findings_per_rule`] of each kept, and the span of every finding remembered as a
/// 64-bit hash (8 bytes a finding, up to [`MAX_FINDING_KEYS`]) for the agent runs' counts.
pub struct FindingTally {
    limit: usize,
    counts: Vec<RuleCount>,
    listed: Vec<Finding>,
    keys: Option<Vec<u64>>,
}

/// Spans of findings [`FindingTally`] remembers for the agent runs' counts (32 MiB); past it the
/// runs say their findings were not counted.
pub const MAX_FINDING_KEYS: usize = 4 << 20;

impl FindingTally {
    pub fn new(limits: &PageLimits) -> Self {
        Self {
            limit: limits.findings_per_rule,
            counts: Vec::new(),
            listed: Vec::new(),
            keys: Some(Vec::new()),
        }
    }

    /// The next finding in report order (severity, rule, trace, span).
    pub fn add(&mut self, f: Finding) {
        if let Some(keys) = &mut self.keys {
            if keys.len() < MAX_FINDING_KEYS {
                keys.push(span_key(f.trace_id, f.span_id));
            } else {
                self.keys = None;
            }
        }
        let c = match self.counts.last_mut() {
            Some(c) if c.rule == f.rule => c,
            _ => {
                self.counts.push(RuleCount {
                    rule: f.rule,
                    severity: f.severity,
                    findings: 0,
                    listed: 0,
                    note: None,
                });
                self.counts.last_mut().expect("just pushed")
            }
        };
        c.findings += 1;
        if c.listed < self.limit {
            c.listed += 1;
            self.listed.push(f);
        }
    }

    /// The counts (with a note on each rule not listed whole), the listed findings and the
    /// sorted span keys (None past [`MAX_FINDING_KEYS`]).
    pub fn finish(mut self) -> (Vec<RuleCount>, Vec<Finding>, Option<FindingKeys>) {
        for c in &mut self.counts {
            if (c.listed as u64) < c.findings {
                c.note = Some(format!(
                    "showing {} of {} {} findings (--max-findings-per-rule); the full list: `tripline check --format json`",
                    thousands(c.listed as u64),
                    thousands(c.findings),
                    c.rule
                ));
            }
        }
        let keys = self.keys.map(|mut k| {
            k.sort_unstable();
            FindingKeys(k)
        });
        (self.counts, self.listed, keys)
    }
}

/// The spans of a check's findings (hashed, sorted): how many findings a span has.
pub struct FindingKeys(Vec<u64>);

impl FindingKeys {
    /// Findings on span `span` of trace `trace`.
    pub fn on(&self, trace: TraceId, span: SpanId) -> usize {
        let k = span_key(trace, span);
        let lo = self.0.partition_point(|&x| x < k);
        self.0[lo..].iter().take_while(|&&x| x == k).count()
    }
}

/// A fixed 64-bit hash of a span's ids (the same in every run: no random seed).
fn span_key(trace: TraceId, span: SpanId) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    trace.hash(&mut h);
    span.hash(&mut h);
    h.finish()
}

/// `18034` as `18,034`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Builds the document from one model of the whole check (model, report, scan): what the
/// windowed page ([`super::windows`]) must equal on a store small enough for one model.
pub fn build<'a>(
    model: &Model,
    report: &Report,
    scanned: Option<&Scanned>,
    context: &'a PageContext,
    limits: &PageLimits,
) -> Document<'a> {
    let mut tally = FindingTally::new(limits);
    for f in &report.findings {
        tally.add(f.clone());
    }
    let (counts, listed, _) = tally.finish();
    let (views, view_of_trace, view_notes) = waterfall::views_for(model, &listed);
    let findings = page_findings(listed, &view_of_trace);
    // Findings per span, exact (the windowed page counts hashed keys).
    let mut on_span: HashMap<usize, usize> = HashMap::new();
    for f in &report.findings {
        if let Some(i) = model.index_of(f.trace_id, f.span_id) {
            *on_span.entry(i).or_default() += 1;
        }
    }
    let rows = conversations::build(model).rows;
    let ranks = conversation_ranks(&rows, limits);
    let mut runs = RunList::new(limits);
    runs.add(agent_runs(model, &|_| true, &ranks, &|i| {
        Some(on_span.get(&i).copied().unwrap_or(0))
    }));
    let loose_total = model
        .spans
        .iter()
        .enumerate()
        .filter(|(i, s)| s.is_agent_run() && model.conversation[*i].is_none())
        .count();
    let row_counts = RowCounts::of(&rows);
    let (conversations, loose_runs, capped) = runs.finish(rows, &row_counts, loose_total);
    Document {
        context,
        scanned: scanned.cloned(),
        scanned_summary: scanned.map(Scanned::summary),
        limits: *limits,
        rules: rule_docs(&report.coverage, &counts),
        capped: capped_notes(&counts, capped),
        counts,
        findings,
        coverage: report.coverage.clone(),
        tools: tools::build(model),
        conversations_total: conversations.1,
        conversations: conversations.0,
        loose_runs,
        loose_runs_total: loose_total,
        views,
        view_notes,
    }
}

/// The page's sentences on what its lists leave out: the findings per rule, then the runs.
pub fn capped_notes(counts: &[RuleCount], runs: Option<String>) -> Vec<String> {
    let mut notes: Vec<String> = counts.iter().filter_map(|c| c.note.clone()).collect();
    notes.extend(runs);
    notes
}

/// The rules that ran (coverage) or fired, in code order, with their `explain` text.
pub fn rule_docs(coverage: &[Coverage], counts: &[RuleCount]) -> Vec<RuleDoc> {
    let mut codes: Vec<&str> = coverage.iter().map(|c| c.rule).collect();
    codes.extend(counts.iter().map(|c| c.rule));
    codes.sort_unstable();
    codes.dedup();
    codes
        .into_iter()
        .filter_map(rules::find)
        .map(|r| RuleDoc {
            code: r.code(),
            name: r.name(),
            severity: r.severity(),
            explain: super::super::explain_text(r),
        })
        .collect()
}

/// Rank of each listed conversation (the first [`PageLimits::runs`] rows, by start).
pub fn conversation_ranks(rows: &[ConversationRow], limits: &PageLimits) -> HashMap<String, usize> {
    rows.iter()
        .take(limits.runs)
        .enumerate()
        .map(|(k, r)| (r.conversation_id.clone(), k))
        .collect()
}

/// An agent run the page may list, with where it goes in page order: the rank of its
/// conversation (`usize::MAX`: none, listed after every conversation), its start and ids.
pub struct RunCandidate {
    key: (usize, i64, TraceId, SpanId),
    run: AgentRun,
}

/// The agent runs of `model` that `owned` selects (by span index) and that the page may list:
/// runs of a listed conversation (`ranks`) or of none; each with its counts over the whole model
/// and `findings_on(span)` summed over its spans.
pub fn agent_runs(
    model: &Model,
    owned: &dyn Fn(usize) -> bool,
    ranks: &HashMap<String, usize>,
    findings_on: &dyn Fn(usize) -> Option<usize>,
) -> Vec<RunCandidate> {
    let mut runs: HashMap<usize, RunCandidate> = HashMap::new();
    for (i, s) in model.spans.iter().enumerate() {
        if !s.is_agent_run() || !owned(i) {
            continue;
        }
        let rank = match model.conversation[i].as_deref() {
            Some(c) => match ranks.get(c) {
                Some(&k) => k,
                None => continue,
            },
            None => usize::MAX,
        };
        let agent = s
            .agent_name
            .as_deref()
            .unwrap_or(if s.name.is_empty() {
                "?"
            } else {
                s.name.as_str()
            })
            .to_string();
        runs.insert(
            i,
            RunCandidate {
                key: (rank, s.start_ns, s.trace_id, s.span_id),
                run: AgentRun {
                    agent,
                    trace_id: s.trace_id.to_string(),
                    span_id: s.span_id.to_string(),
                    started: rfc3339(s.start_ns),
                    duration_ms: ms(s.duration_ns()),
                    model_calls: 0,
                    tool_calls: 0,
                    tool_errors: 0,
                    findings: Some(0),
                },
            },
        );
    }
    if runs.is_empty() {
        return Vec::new();
    }
    for (i, run) in model.agent_run.iter().enumerate() {
        let Some(r) = run.and_then(|r| runs.get_mut(&r)) else {
            continue;
        };
        if model.spans[i].is_model_call() {
            r.run.model_calls += 1;
        }
        r.run.findings = match (r.run.findings, findings_on(i)) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
    for call in model.calls.iter().filter(|c| c.is_tool()) {
        if let Some(r) = model.call_agent_run(call).and_then(|r| runs.get_mut(&r)) {
            r.run.tool_calls += 1;
            if call.is_error == Some(true) {
                r.run.tool_errors += 1;
            }
        }
    }
    runs.into_values().collect()
}

/// The agent runs the page lists: the first [`PageLimits::runs`] in page order of the
/// candidates added so far (trimmed as they come, so at most that many are held).
pub struct RunList {
    limit: usize,
    kept: Vec<RunCandidate>,
}

impl RunList {
    pub fn new(limits: &PageLimits) -> Self {
        Self {
            limit: limits.runs,
            kept: Vec::new(),
        }
    }

    pub fn add(&mut self, candidates: Vec<RunCandidate>) {
        self.kept.extend(candidates);
        self.kept.sort_unstable_by_key(|c| c.key);
        self.kept.truncate(self.limit);
    }

    /// The listed conversations (each with its listed runs) and how many there are in all, the
    /// listed runs under no conversation, and a sentence on what is left out (None: nothing).
    /// `rows` are the conversations in page order (at least the first [`PageLimits::runs`]).
    #[allow(clippy::type_complexity)]
    pub fn finish(
        self,
        rows: Vec<ConversationRow>,
        counted: &RowCounts,
        loose_total: usize,
    ) -> ((Vec<Conversation>, usize), Vec<AgentRun>, Option<String>) {
        let total_convs = counted.conversations;
        let runs_total = counted.agent_runs + loose_total;
        let listed_runs = self.kept.len();
        let mut by_rank: BTreeMap<usize, Vec<AgentRun>> = BTreeMap::new();
        for c in self.kept {
            by_rank.entry(c.key.0).or_default().push(c.run);
        }
        let loose = by_rank.remove(&usize::MAX).unwrap_or_default();
        let convs: Vec<Conversation> = rows
            .into_iter()
            .take(self.limit)
            .enumerate()
            .map(|(k, row)| Conversation {
                runs: by_rank.remove(&k).unwrap_or_default(),
                row,
            })
            .collect();
        let note = (convs.len() < total_convs || listed_runs < runs_total).then(|| {
            format!(
                "showing {} of {} conversations and {} of {} agent runs (--max-runs {}); raise --max-runs to list more, or see them with `tripline report conversations`",
                thousands(convs.len() as u64),
                thousands(total_convs as u64),
                thousands(listed_runs as u64),
                thousands(runs_total as u64),
                self.limit
            )
        });
        ((convs, total_convs), loose, note)
    }
}

/// How many conversations there are and how many agent runs they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCounts {
    pub conversations: usize,
    pub agent_runs: usize,
}

impl RowCounts {
    /// The counts of all of `rows`.
    pub fn of(rows: &[ConversationRow]) -> Self {
        Self {
            conversations: rows.len(),
            agent_runs: rows.iter().map(|r| r.agent_runs).sum(),
        }
    }
}

/// The conversation rows the page lists, as the windowed tally finishes them in page order:
/// the first [`PageLimits::runs`], the windows that own their agent runs, and the counts of
/// every row (the rows themselves are not kept).
pub struct PageRows {
    limit: usize,
    pub listed: Vec<ConversationRow>,
    /// Windows (numbers) owning an agent run of a listed conversation.
    pub run_windows: std::collections::BTreeSet<u32>,
    pub counts: RowCounts,
}

impl PageRows {
    pub fn new(limits: &PageLimits) -> Self {
        Self {
            limit: limits.runs,
            listed: Vec::new(),
            run_windows: Default::default(),
            counts: RowCounts::default(),
        }
    }
}

impl conversations::RowSink for PageRows {
    fn row(&mut self, row: ConversationRow, run_windows: &[u32]) {
        self.counts.conversations += 1;
        self.counts.agent_runs += row.agent_runs;
        if self.listed.len() < self.limit {
            self.run_windows.extend(run_windows);
            self.listed.push(row);
        }
    }
}

/// Nanoseconds since the epoch as RFC 3339 (UTC, milliseconds).
pub fn rfc3339(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
