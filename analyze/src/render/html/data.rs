//! The document the HTML page is drawn from: the check report (findings, coverage, the rules'
//! `explain` text), the tools report, conversations with their agent runs, and one trace view per
//! stitched group of traces that holds a finding.
//!
//! Why a data document and not HTML built here: the page draws itself from this JSON (inline,
//! escaped once by [`super::script_json`]), so every value that comes from a span reaches the DOM
//! through `textContent` and never as markup, and the waterfalls are built only when a finding is
//! opened (a 10k-span trace costs nothing until then).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::waterfall::{self, TraceView};
use crate::model::Model;
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

/// The whole page's data.
#[derive(Serialize)]
pub struct Document<'a> {
    pub context: &'a PageContext,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanned: Option<&'a Scanned>,
    /// The `scanned` summary line (`scanned 3 files, 278 spans ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scanned_summary: Option<String>,
    /// Every rule that ran or fired, with its `explain` text.
    pub rules: Vec<RuleDoc>,
    pub findings: Vec<PageFinding<'a>>,
    pub coverage: &'a [Coverage],
    pub tools: DataReport<ToolRow>,
    pub conversations: Vec<Conversation>,
    /// Agent runs under no conversation id, in start order.
    pub loose_runs: Vec<AgentRun>,
    /// Trace views (stitched groups of traces), indexed by [`PageFinding::view`].
    pub views: Vec<TraceView>,
    /// Why some findings have no waterfall (size caps), empty when all do.
    pub view_notes: Vec<String>,
}

/// One rule's identity and docs.
#[derive(Serialize)]
pub struct RuleDoc {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: rules::Severity,
    pub explain: String,
}

/// A finding (the JSON contract's fields) plus where its waterfall is.
#[derive(Serialize)]
pub struct PageFinding<'a> {
    #[serde(flatten)]
    pub finding: &'a Finding,
    /// Index into [`Document::views`]; None when the trace was too large to embed.
    pub view: Option<usize>,
}

/// One conversation: the `report conversations` row and its agent runs in start order.
#[derive(Serialize)]
pub struct Conversation {
    #[serde(flatten)]
    pub row: ConversationRow,
    pub runs: Vec<AgentRun>,
}

/// One `invoke_agent` span and what ran under it.
#[derive(Clone, Serialize)]
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
    /// Findings on spans of this run.
    pub findings: usize,
}

/// Builds the document from what `check` computed (model, report, scan).
pub fn build<'a>(
    model: &Model,
    report: &'a Report,
    scanned: Option<&'a Scanned>,
    context: &'a PageContext,
) -> Document<'a> {
    let (views, view_of_trace, view_notes) = waterfall::views_for(model, report);
    let findings = report
        .findings
        .iter()
        .map(|f| PageFinding {
            finding: f,
            view: view_of_trace.get(&f.trace_id).copied(),
        })
        .collect();
    let (conversations, loose_runs) = conversations_with_runs(model, report);
    Document {
        context,
        scanned,
        scanned_summary: scanned.map(Scanned::summary),
        rules: rule_docs(report),
        findings,
        coverage: &report.coverage,
        tools: tools::build(model),
        conversations,
        loose_runs,
        views,
        view_notes,
    }
}

/// The rules that ran (coverage) or fired, in code order, with their `explain` text.
fn rule_docs(report: &Report) -> Vec<RuleDoc> {
    let mut codes: Vec<&str> = report.coverage.iter().map(|c| c.rule).collect();
    codes.extend(report.findings.iter().map(|f| f.rule));
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

/// `report conversations` rows, each with its agent runs in start order, and the runs that
/// belong to no conversation.
fn conversations_with_runs(model: &Model, report: &Report) -> (Vec<Conversation>, Vec<AgentRun>) {
    let mut runs: HashMap<usize, AgentRun> = HashMap::new();
    let mut order: Vec<usize> = Vec::new();
    for (i, s) in model.spans.iter().enumerate() {
        if !s.is_agent_run() {
            continue;
        }
        order.push(i);
        runs.insert(
            i,
            AgentRun {
                agent: s
                    .agent_name
                    .as_deref()
                    .unwrap_or_else(|| {
                        if s.name.is_empty() {
                            "?"
                        } else {
                            s.name.as_str()
                        }
                    })
                    .to_string(),
                trace_id: s.trace_id.to_string(),
                span_id: s.span_id.to_string(),
                started: rfc3339(s.start_ns),
                duration_ms: ms(s.duration_ns()),
                model_calls: 0,
                tool_calls: 0,
                tool_errors: 0,
                findings: 0,
            },
        );
    }
    for (i, s) in model.spans.iter().enumerate() {
        if s.is_model_call() {
            if let Some(r) = model.agent_run[i].and_then(|r| runs.get_mut(&r)) {
                r.model_calls += 1;
            }
        }
    }
    for call in model.calls.iter().filter(|c| c.is_tool()) {
        if let Some(r) = model.call_agent_run(call).and_then(|r| runs.get_mut(&r)) {
            r.tool_calls += 1;
            if call.is_error == Some(true) {
                r.tool_errors += 1;
            }
        }
    }
    for f in &report.findings {
        let run = model
            .index_of(f.trace_id, f.span_id)
            .and_then(|i| model.agent_run[i]);
        if let Some(r) = run.and_then(|r| runs.get_mut(&r)) {
            r.findings += 1;
        }
    }
    // Spans are in start order, so `order` is too.
    let mut by_conv: BTreeMap<&str, Vec<AgentRun>> = BTreeMap::new();
    let mut loose = Vec::new();
    for i in order {
        let Some(run) = runs.remove(&i) else { continue };
        match model.conversation[i].as_deref() {
            Some(c) => by_conv.entry(c).or_default().push(run),
            None => loose.push(run),
        }
    }
    let convs = conversations::build(model)
        .rows
        .into_iter()
        .map(|row| Conversation {
            runs: by_conv
                .remove(row.conversation_id.as_str())
                .unwrap_or_default(),
            row,
        })
        .collect();
    (convs, loose)
}

/// Nanoseconds since the epoch as RFC 3339 (UTC, milliseconds).
pub fn rfc3339(ns: i64) -> String {
    chrono::DateTime::from_timestamp_nanos(ns).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
