//! The detection rules: a trait, a static registry, findings and coverage.
//!
//! One rule per file (`tl001_unstructured_tool_result.rs`, ...), each documented for the user
//! (`tripline explain CODE` prints the docs) and registered by one line in [`RULES`]. Every rule
//! reports **coverage** next to its findings: how many candidates it examined and how many lacked
//! the data it needs, with the reason, so silence is never mistaken for health.
//! To add a rule: a new `tlNNN_slug.rs` implementing [`Rule`] with its [`RuleDocs`], one line in
//! [`RULES`], and fixtures plus a snapshot under `analyze/tests/`.

pub mod approvals;
pub mod context;
pub mod finding;

mod tl001_unstructured_tool_result;
mod tl002_unconfirmed_write;
mod tl003_prohibited_tool_executed;
mod tl004_broken_trace_propagation;
mod tl005_hidden_tool_called;
mod tl006_annotation_policy_mismatch;
mod tl007_deprecated_attribute;
mod tl008_tool_error_retried;
mod tl009_masked_tool_error;
mod tl010_lethal_trifecta;
mod tl012_ambiguous_decision_scope;
mod tl013_captured_sensitive_content;
mod tl014_runaway_tool_loop;
mod tl015_semconv_violation;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use context::{Catalog, Context, RuleOptions};
pub use finding::{Coverage, Finding, RuleOutcome};

/// How bad a finding is. Ordered: `Info < Warning < Error < Critical`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 4] = [Self::Critical, Self::Error, Self::Warning, Self::Info];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
        }
    }
    /// Parses `critical|error|warning|info`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule's documentation, printed by `tripline explain CODE`.
#[derive(Debug)]
pub struct RuleDocs {
    /// What it detects (one paragraph).
    pub what: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// A concrete example of spans that fire.
    pub example: &'static str,
    /// How to fix it.
    pub fix: &'static str,
}

/// A detection rule. Implementations are unit structs registered in [`RULES`].
pub trait Rule: Sync {
    /// `TL001`...
    fn code(&self) -> &'static str;
    /// Kebab-case, saying what is wrong (`unstructured-tool-result`).
    fn name(&self) -> &'static str;
    fn severity(&self) -> Severity;
    fn docs(&self) -> &'static RuleDocs;
    /// Columns beyond [`crate::load::BASE_COLUMNS`] the rule reads (e.g. content columns).
    fn columns(&self) -> &'static [&'static str] {
        &[]
    }
    /// Runs the rule. Must not panic on any input.
    fn check(&self, ctx: &Context) -> RuleOutcome;
}

/// Every rule, in code order. Adding a rule = one line here.
pub static RULES: &[&dyn Rule] = &[
    &tl001_unstructured_tool_result::UnstructuredToolResult,
    &tl002_unconfirmed_write::UnconfirmedWrite,
    &tl003_prohibited_tool_executed::ProhibitedToolExecuted,
    &tl004_broken_trace_propagation::BrokenTracePropagation,
    &tl005_hidden_tool_called::HiddenToolCalled,
    &tl006_annotation_policy_mismatch::AnnotationPolicyMismatch,
    &tl007_deprecated_attribute::DeprecatedAttribute,
    &tl008_tool_error_retried::ToolErrorRetried,
    &tl009_masked_tool_error::MaskedToolError,
    &tl010_lethal_trifecta::LethalTrifecta,
    &tl012_ambiguous_decision_scope::AmbiguousDecisionScope,
    &tl013_captured_sensitive_content::CapturedSensitiveContent,
    &tl014_runaway_tool_loop::RunawayToolLoop,
    &tl015_semconv_violation::SemconvViolation,
];

/// Looks a rule up by code (case-insensitive).
pub fn find(code: &str) -> Option<&'static dyn Rule> {
    RULES
        .iter()
        .copied()
        .find(|r| r.code().eq_ignore_ascii_case(code.trim()))
}

/// The result of running a set of rules.
#[derive(Debug, Default)]
pub struct Report {
    /// Sorted by severity (worst first), rule code, trace id, span id.
    pub findings: Vec<Finding>,
    /// One entry per rule run, in rule order.
    pub coverage: Vec<Coverage>,
}

impl Report {
    /// Findings at or above `threshold`.
    pub fn count_at_or_above(&self, threshold: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity >= threshold)
            .count()
    }
}

/// Runs `rules` over `ctx`, on as many threads as the machine has (rules only read the model), and
/// reports in rule order whatever thread finished first.
pub fn run(rules: &[&dyn Rule], ctx: &Context) -> Report {
    let outcomes = run_parallel(rules, ctx);
    let mut report = Report::default();
    for (rule, outcome) in rules.iter().zip(outcomes) {
        report.findings.extend(outcome.findings);
        let mut cov = outcome.coverage;
        cov.rule = rule.code();
        report.coverage.push(cov);
    }
    report.findings.sort_by(|a, b| {
        (b.severity, a.rule, a.trace_id, a.span_id)
            .cmp(&(a.severity, b.rule, b.trace_id, b.span_id))
    });
    report
}

/// One outcome per rule, in rule order. Workers take the next rule from a shared counter, so a slow
/// rule does not hold back the others.
fn run_parallel(rules: &[&dyn Rule], ctx: &Context) -> Vec<RuleOutcome> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(rules.len());
    if threads <= 1 {
        return rules.iter().map(|r| r.check(ctx)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, RuleOutcome)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(rule) = rules.get(i) else {
                            return mine;
                        };
                        mine.push((i, rule.check(ctx)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(v) => v,
                // A rule must not panic; if one did, re-raise it on this thread.
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, o)| o).collect()
}
