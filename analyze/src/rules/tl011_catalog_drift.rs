//! TL011 catalog-drift: the tool catalog offered to models changed between two runs (run by
//! `tripline diff BASELINE CANDIDATE`; loading both stores is `check::diff_stores`, printing is
//! `render::diff`).
//!
//! Why a diff and not a rule over one store: adding a tool or rewording a description is
//! backward compatible for an API client, but the model picks tools from names, descriptions and
//! schemas, so every catalog change can change behaviour without any call failing. Only two runs
//! side by side show it. The catalog compared is what the *model* was offered (the derived
//! `tool_definitions` on model-call spans), grouped by decision scope (the agent whose run the
//! model call belongs to), because a tool that only a new agent sees is a different risk from a
//! tool every agent now sees.
//!
//! A run whose model calls captured no tool definitions cannot be compared: that is an error, not
//! "no drift", so silence is never mistaken for stability.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use super::{
    Coverage, Finding, Partial, Report, Rule, RuleDocs, RuleInput, RuleOutcome, RunBy, Severity,
};
use crate::model::{Model, SpanId, SpanRow, ToolDef, TraceId};
use crate::store::Scanned;

/// TL011: registered in [`super::OTHER_RULES`], run by `tripline diff`.
pub struct CatalogDrift;

impl Rule for CatalogDrift {
    fn code(&self) -> &'static str {
        "TL011"
    }
    fn name(&self) -> &'static str {
        "catalog-drift"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }
    fn run_by(&self) -> RunBy {
        RunBy::Diff
    }
    fn summary(&self) -> &'static str {
        "Tool catalog changed between two runs"
    }
    /// One store has no baseline to compare with: `check` never selects this rule (its CLI
    /// points at `tripline diff`), and a direct call finds nothing.
    fn scan(&self, _input: &RuleInput) -> Partial {
        Partial::default()
    }
    fn finish(&self, _partial: Partial, _input: &RuleInput) -> RuleOutcome {
        RuleOutcome::default()
    }
}

static DOCS: RuleDocs = RuleDocs {
    what: "Between a baseline run and a candidate run (two stores, `tripline diff BASELINE \
           CANDIDATE`), the tool catalog a model was offered changed: a tool was added or \
           removed, or its description, input schema, output schema or annotations \
           (readOnly/destructive/idempotent/openWorld hints) differ, or a tool moved between \
           agents. Catalogs are read from the tool definitions captured on model-call spans and \
           grouped by the agent whose run the model call belongs to.",
    why: "Models choose tools from names, descriptions and schemas. A reworded description or a \
          new near-duplicate tool changes which tool is called and with what arguments, while \
          every call still succeeds: the change is backward compatible for code and not for the \
          model.",
    example: "baseline: swcraft-modeller offered 6 tools; candidate: 7, add_cs_interface added \
              (its description overlaps add_interface).",
    fix: "Review every catalog change like an API change: run the agent's evaluation set against \
          the candidate, keep descriptions of similar tools clearly apart, and pin the catalog \
          (or its version) per deployment so a server upgrade cannot change it silently.",
};

/// Scope label of model calls with neither an agent nor a service name.
const UNKNOWN_SCOPE: &str = "(unknown agent)";
/// Longest description quoted in a message.
const MAX_QUOTED: usize = 80;

/// Where a definition was seen: the model-call span and its conversation.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    def: ToolDef,
    trace_id: TraceId,
    span_id: SpanId,
    conversation_id: Option<String>,
    /// The span's start: with the ids, its place in the model's order (start, trace, span).
    start_ns: i64,
}

/// The tool catalog one run exposed to its models, per decision scope.
#[derive(Debug, Default)]
pub struct RunCatalog {
    /// (scope, tool) -> the last definition a model call in that scope was offered.
    pub(crate) tools: BTreeMap<(String, String), Seen>,
    /// Model calls in the run.
    pub model_calls: usize,
    /// Model calls that carried tool definitions.
    pub with_definitions: usize,
    /// Spans in the run.
    pub spans: usize,
    /// What the store scan read (None for catalogs built from spans in memory).
    pub scanned: Option<Scanned>,
}

impl RunCatalog {
    /// Collects the catalog from a run's spans.
    pub fn collect(spans: Vec<SpanRow>) -> Self {
        let mut cat = Self::default();
        cat.add(&Model::build(spans), &|_| true);
        cat
    }

    /// Adds the spans of `model` that `owned` selects (all of one model, or one window's core
    /// traces: `diff` reads a store in windows). Definitions are kept by the model's order
    /// (start, trace, span), later over earlier, whichever window came first: the catalog is the
    /// one in force at the end of the run.
    pub fn add(&mut self, model: &Model, owned: &dyn Fn(usize) -> bool) {
        for (i, s) in model.spans.iter().enumerate() {
            if !owned(i) {
                continue;
            }
            self.spans += 1;
            if !s.is_model_call() {
                continue;
            }
            self.model_calls += 1;
            let Some(defs) = &s.tool_definitions else {
                continue;
            };
            self.with_definitions += 1;
            let scope = scope_of(model, i);
            let at = (s.start_ns, s.trace_id, s.span_id);
            for d in defs.iter().filter(|d| !d.name.is_empty()) {
                let seen = Seen {
                    def: d.clone(),
                    trace_id: s.trace_id,
                    span_id: s.span_id,
                    conversation_id: model.conversation[i].as_deref().map(str::to_string),
                    start_ns: s.start_ns,
                };
                match self.tools.entry((scope.clone(), d.name.to_string())) {
                    Entry::Vacant(v) => {
                        v.insert(seen);
                    }
                    Entry::Occupied(mut o) => {
                        let old = o.get();
                        if at >= (old.start_ns, old.trace_id, old.span_id) {
                            o.insert(seen);
                        }
                    }
                }
            }
        }
    }

    /// Tool names of the catalog, sorted.
    pub fn tool_names(&self) -> BTreeSet<&str> {
        self.tools.keys().map(|(_, t)| t.as_str()).collect()
    }

    /// Decision scopes that saw `tool`, sorted.
    pub fn scopes_of(&self, tool: &str) -> BTreeSet<&str> {
        self.tools
            .keys()
            .filter(|(_, t)| t == tool)
            .map(|(s, _)| s.as_str())
            .collect()
    }

    fn get(&self, scope: &str, tool: &str) -> Option<&Seen> {
        self.tools.get(&(scope.to_string(), tool.to_string()))
    }
}

/// The decision scope of model call `i`: the agent of its agent run, else its own agent name,
/// else its service.
fn scope_of(model: &Model, i: usize) -> String {
    let s = &model.spans[i];
    model.agent_run[i]
        .and_then(|r| model.spans[r].agent_name.as_deref().map(str::to_string))
        .or_else(|| s.agent_name.as_deref().map(str::to_string))
        .or_else(|| s.service_name.as_ref().map(|n| format!("service {n}")))
        .unwrap_or_else(|| UNKNOWN_SCOPE.to_string())
}

/// What changed about one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftKind {
    Added,
    Removed,
    Changed,
}

impl DriftKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Changed => "changed",
        }
    }
}

/// The outcome of a diff: findings in the `check` JSON shape, plus what each side held.
#[derive(Debug)]
pub struct DiffReport {
    /// One per drifted tool, sorted by tool name; coverage holds one TL011 entry.
    pub report: Report,
    /// The kind of each finding, same order as `report.findings`.
    pub kinds: Vec<DriftKind>,
    pub baseline: RunCatalog,
    pub candidate: RunCatalog,
}

/// Compares two catalogs: one finding per tool added, removed, or changed (definition or the
/// decision scopes that see it).
pub fn diff_catalogs(baseline: RunCatalog, candidate: RunCatalog) -> DiffReport {
    let mut findings = Vec::new();
    let mut kinds = Vec::new();
    let names: BTreeSet<String> = baseline
        .tool_names()
        .union(&candidate.tool_names())
        .map(|s| s.to_string())
        .collect();
    for tool in &names {
        let (bs, cs) = (baseline.scopes_of(tool), candidate.scopes_of(tool));
        let drift = if bs.is_empty() {
            cs.first().and_then(|s| candidate.get(s, tool)).map(|seen| {
                let msg = format!("tool {tool} added; now seen by {}", join(&cs));
                (DriftKind::Added, seen, msg)
            })
        } else if cs.is_empty() {
            bs.first().and_then(|s| baseline.get(s, tool)).map(|seen| {
                let msg = format!("tool {tool} removed; was seen by {}", join(&bs));
                (DriftKind::Removed, seen, msg)
            })
        } else {
            changed(tool, &baseline, &candidate, &bs, &cs)
        };
        if let Some((kind, seen, message)) = drift {
            kinds.push(kind);
            findings.push(finding(tool, seen, message));
        }
    }
    let mut cov = Coverage::new(baseline.model_calls + candidate.model_calls);
    cov.rule = CatalogDrift.code();
    let blind = |c: &RunCatalog| c.model_calls - c.with_definitions;
    cov.not_observable(
        blind(&baseline) + blind(&candidate),
        format!(
            "gen_ai.tool.definitions not captured on {} of {} baseline and {} of {} candidate model calls",
            blind(&baseline),
            baseline.model_calls,
            blind(&candidate),
            candidate.model_calls
        ),
    );
    cov.note(format!(
        "baseline: {} tools in {} decision scopes; candidate: {} tools in {} decision scopes",
        baseline.tool_names().len(),
        scope_count(&baseline),
        candidate.tool_names().len(),
        scope_count(&candidate)
    ));
    DiffReport {
        report: Report {
            findings,
            coverage: vec![cov],
        },
        kinds,
        baseline,
        candidate,
    }
}

fn scope_count(c: &RunCatalog) -> usize {
    c.tools
        .keys()
        .map(|(s, _)| s.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// A tool present on both sides: definition changes in the scopes both saw it in, and scopes
/// that gained or lost it.
fn changed<'a>(
    tool: &str,
    baseline: &RunCatalog,
    candidate: &'a RunCatalog,
    bs: &BTreeSet<&str>,
    cs: &BTreeSet<&str>,
) -> Option<(DriftKind, &'a Seen, String)> {
    let mut parts: Vec<String> = Vec::new();
    let mut changed_in: BTreeSet<&str> = BTreeSet::new();
    let mut evidence: Option<&Seen> = None;
    for scope in bs.intersection(cs) {
        let (Some(old), Some(new)) = (baseline.get(scope, tool), candidate.get(scope, tool)) else {
            continue;
        };
        let diffs = def_changes(&old.def, &new.def);
        if diffs.is_empty() {
            continue;
        }
        changed_in.insert(scope);
        evidence.get_or_insert(new);
        for d in diffs {
            if !parts.contains(&d) {
                parts.push(d);
            }
        }
    }
    let mut message = String::new();
    if !parts.is_empty() {
        message = format!("tool {tool} changed: {}", parts.join("; "));
        message.push_str(&format!("; seen by {}", join(cs)));
    }
    let gained: BTreeSet<&str> = cs.difference(bs).copied().collect();
    let lost: BTreeSet<&str> = bs.difference(cs).copied().collect();
    if !gained.is_empty() || !lost.is_empty() {
        if message.is_empty() {
            message = format!("tool {tool} changed scope");
        }
        if !gained.is_empty() {
            message.push_str(&format!("; now also seen by {}", join(&gained)));
            let first = gained.first().and_then(|s| candidate.get(s, tool));
            evidence = evidence.or(first);
        }
        if !lost.is_empty() {
            message.push_str(&format!("; no longer seen by {}", join(&lost)));
        }
    }
    if message.is_empty() {
        return None;
    }
    let evidence = evidence.or_else(|| cs.first().and_then(|s| candidate.get(s, tool)))?;
    Some((DriftKind::Changed, evidence, message))
}

/// Human-readable differences between two definitions of one tool.
fn def_changes(old: &ToolDef, new: &ToolDef) -> Vec<String> {
    let mut out = Vec::new();
    if old.description != new.description {
        out.push(format!(
            "description {} -> {}",
            quote(old.description.as_deref()),
            quote(new.description.as_deref())
        ));
    }
    if old.input_schema_digest != new.input_schema_digest {
        out.push(format!(
            "input schema digest {} -> {}",
            opt(old.input_schema_digest.as_deref()),
            opt(new.input_schema_digest.as_deref())
        ));
    }
    if old.output_schema_digest != new.output_schema_digest
        || old.has_output_schema != new.has_output_schema
    {
        out.push(format!(
            "output schema digest {} -> {}",
            opt(old.output_schema_digest.as_deref()),
            opt(new.output_schema_digest.as_deref())
        ));
    }
    let hints = [
        ("readOnlyHint", old.read_only_hint, new.read_only_hint),
        (
            "destructiveHint",
            old.destructive_hint,
            new.destructive_hint,
        ),
        ("idempotentHint", old.idempotent_hint, new.idempotent_hint),
        ("openWorldHint", old.open_world_hint, new.open_world_hint),
    ];
    for (name, a, b) in hints {
        if a != b {
            out.push(format!("annotation {name} {} -> {}", hint(a), hint(b)));
        }
    }
    out
}

fn finding(tool: &str, seen: &Seen, message: String) -> Finding {
    Finding {
        rule: CatalogDrift.code(),
        name: CatalogDrift.name(),
        severity: CatalogDrift.severity(),
        trace_id: seen.trace_id,
        span_id: seen.span_id,
        conversation_id: seen.conversation_id.clone(),
        tool: Some(tool.to_string()),
        message,
        related: Vec::new(),
    }
}

pub(crate) fn join(scopes: &BTreeSet<&str>) -> String {
    scopes.iter().copied().collect::<Vec<_>>().join(", ")
}

fn quote(s: Option<&str>) -> String {
    match s {
        None => "(none)".to_string(),
        Some(s) if s.chars().count() > MAX_QUOTED => {
            let cut: String = s.chars().take(MAX_QUOTED).collect();
            format!("{:?}", format!("{cut}…"))
        }
        Some(s) => format!("{s:?}"),
    }
}

fn opt(s: Option<&str>) -> &str {
    s.unwrap_or("(none)")
}

fn hint(h: Option<bool>) -> &'static str {
    match h {
        Some(true) => "true",
        Some(false) => "false",
        None => "(unset)",
    }
}

/// Exit code of a diff: 1 when a finding is at or above `fail_on`, else 0.
pub fn exit_code(report: &DiffReport, fail_on: Severity) -> u8 {
    u8::from(report.report.count_at_or_above(fail_on) > 0)
}
