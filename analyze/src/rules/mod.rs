//! The detection rules: a trait, a static registry, findings and coverage.
//!
//! One rule per file (`tl001_unstructured_tool_result.rs`, ...), each documented for the user
//! (`tripline explain CODE` prints the docs) and registered by one line in [`RULES`]. Every rule
//! reports **coverage** next to its findings: how many candidates it examined and how many lacked
//! the data it needs, with the reason, so silence is never mistaken for health.
//! To add a rule: a new `tlNNN_slug.rs` implementing [`Rule`] with its [`RuleDocs`], one `mod`
//! line and one line in [`RULES`], and a fixture plus its snapshot under `analyze/tests/`
//! (docs/adding-a-rule.md has the steps).
//!
//! A rule run by another command than `check` (TL011 catalog drift, run by `tripline diff` over
//! two stores) is registered in [`OTHER_RULES`]: its identity (code, name, severity, docs) lives
//! in its file like every other rule's, and `tripline rules` / `explain` list it from there.

pub mod finding;
mod groups;
pub mod input;
pub mod partial;
pub mod spill;

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
pub mod tl011_catalog_drift;
mod tl012_ambiguous_decision_scope;
mod tl013_captured_sensitive_content;
mod tl014_runaway_tool_loop;
mod tl015_semconv_violation;
mod tl016_guardrail_not_evaluated;
mod tl017_executed_despite_deny;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use finding::{Coverage, Finding, RuleOutcome};
pub use input::{Catalog, CatalogBuilder, GuardrailFacts, RuleInput, RuleOptions};
pub use partial::Partial;
pub use tl011_catalog_drift::CatalogDrift;
pub(crate) use tl014_runaway_tool_loop::{default_max_calls_per_tool, default_max_model_turns};
pub use tl014_runaway_tool_loop::{DEFAULT_MAX_CALLS_PER_TOOL, DEFAULT_MAX_MODEL_TURNS};

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

/// Which command runs a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunBy {
    /// `tripline check`, over one store.
    Check,
    /// `tripline diff BASELINE CANDIDATE`, over two stores.
    Diff,
}

/// A detection rule. Implementations are unit structs registered in [`RULES`] (or
/// [`OTHER_RULES`] when another command runs them).
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
    /// The command that runs the rule.
    fn run_by(&self) -> RunBy {
        RunBy::Check
    }
    /// One line for `tripline rules`: the first clause of [`RuleDocs::what`].
    fn summary(&self) -> &'static str {
        let what = self.docs().what;
        let cut = [what.find(": "), what.find(". ")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(what.len());
        what[..cut].trim_end_matches('.')
    }
    /// Findings and tallies over what `input` owns ([`RuleInput::owns`]): one window of the
    /// store (the rest of its model is context), or the whole model. Must not panic on any input.
    fn scan(&self, input: &RuleInput) -> Partial;
    /// The outcome from the merged partials of every window ([`Partial::merge`]). `input` gives
    /// the policy, the store's catalog and the options; its model may be empty.
    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome;
    /// Whether [`Rule::finish`] reports the window findings of `partial` (`partial.findings`),
    /// decided before `finish` takes it: a windowed check may have spilled them to disk
    /// ([`spill`]). Rules that drop them on a store-wide fact say so here, and `finish` must
    /// agree.
    fn keeps_window_findings(&self, _partial: &Partial, _input: &RuleInput) -> bool {
        true
    }
    /// Runs the rule over one model, the whole store as one window.
    fn check(&self, input: &RuleInput) -> RuleOutcome {
        self.finish(self.scan(input), input)
    }
}

/// The rules `check` runs, in code order. Adding a rule = one line here.
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
    &tl016_guardrail_not_evaluated::GuardrailNotEvaluated,
    &tl017_executed_despite_deny::ExecutedDespiteDeny,
];

/// Rules that another command runs (see [`Rule::run_by`]), in code order.
pub static OTHER_RULES: &[&dyn Rule] = &[&tl011_catalog_drift::CatalogDrift];

/// Every registered rule, whatever runs it, in code order (`tripline rules`).
pub fn all() -> Vec<&'static dyn Rule> {
    let mut all: Vec<&'static dyn Rule> = RULES.iter().chain(OTHER_RULES).copied().collect();
    all.sort_by_key(|r| r.code());
    all
}

/// Looks a rule up by code (case-insensitive), whatever command runs it.
pub fn find(code: &str) -> Option<&'static dyn Rule> {
    RULES
        .iter()
        .chain(OTHER_RULES)
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

/// The result of a windowed check: the findings in report order, read as they are printed (some
/// may be on disk: [`spill`]), and the coverage of every rule, in rule order.
#[derive(Debug)]
pub struct StreamedReport {
    pub findings: spill::SortedFindings,
    pub coverage: Vec<Coverage>,
}

impl StreamedReport {
    /// Findings at or above `threshold` (known before any finding is read).
    pub fn count_at_or_above(&self, threshold: Severity) -> u64 {
        self.findings.count_at_or_above(threshold)
    }

    /// Every finding in memory: the [`Report`] of the same check.
    pub fn into_report(self) -> Result<Report, spill::SpillError> {
        Ok(Report {
            findings: self.findings.into_vec()?,
            coverage: self.coverage,
        })
    }
}

/// Runs `rules` over `input`, on as many threads as the machine has (rules only read the model), and
/// reports in rule order whatever thread finished first.
pub fn run(rules: &[&dyn Rule], input: &RuleInput) -> Report {
    report(rules, par_map(rules, |r| r.check(input)))
}

/// Each rule's [`Partial`] over one window, in rule order (in parallel, as [`run`]). When
/// `timed` (`TRIPLINE_WINDOW_TRACE`), each rule's time on the window is printed to stderr (what
/// the rules share, computed once on first use, counts for the rule that asked first).
pub fn scan_all(rules: &[&dyn Rule], input: &RuleInput, timed: bool) -> Vec<Partial> {
    if !timed {
        return par_map(rules, |r| r.scan(input));
    }
    let timed = par_map(rules, |r| {
        let started = std::time::Instant::now();
        let partial = r.scan(input);
        (partial, started.elapsed())
    });
    let times: Vec<String> = rules
        .iter()
        .zip(&timed)
        .map(|(r, (_, took))| format!("{} {:.1}", r.code(), took.as_secs_f64() * 1e3))
        .collect();
    eprintln!("rule ms: {}", times.join(" "));
    timed.into_iter().map(|(partial, _)| partial).collect()
}

/// The report of `rules` from their outcomes (in rule order): findings sorted, coverage in rule
/// order.
pub fn report(rules: &[&dyn Rule], outcomes: Vec<RuleOutcome>) -> Report {
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

/// `f` over every rule, in rule order. Workers take the next rule from a shared counter, so a
/// slow rule does not hold back the others.
fn par_map<R: Sync + ?Sized, T: Send>(rules: &[&R], f: impl Fn(&R) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(rules.len());
    if threads <= 1 {
        return rules.iter().map(|r| f(r)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(rule) = rules.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(rule)));
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
