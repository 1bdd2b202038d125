//! Command-line entry points of the analyzer (`check`, `rules`, `explain`, `query`, `trace`,
//! `verify`, ...).
//!
//! This is the CLI edge: `anyhow` errors (mapped to exit 2 by `main`), stdout for reports,
//! stderr for diagnostics, a progress spinner only when stdout is a terminal, and a closed pipe
//! (`tripline check | head`) treated as success.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use crate::load::ScanFilter;
use crate::output::{render, render_rule_list, Format};
use crate::policy::Policy;
use crate::rules::{self, Rule, Severity, RULES};

/// Flags shared by every command that scans the store.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ScanArgs {
    /// Only spans that started at or after this time (RFC 3339, or relative: 30m, 24h, 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// Only spans that started at or before this time (RFC 3339, or relative).
    #[arg(long)]
    pub until: Option<String>,
    /// Only spans of this service.name.
    #[arg(long)]
    pub service: Option<String>,
    /// Only spans of this trace (32 hex digits).
    #[arg(long)]
    pub trace: Option<String>,
}

impl ScanArgs {
    fn filter(&self) -> anyhow::Result<ScanFilter> {
        Ok(ScanFilter::parse(
            self.since.as_deref(),
            self.until.as_deref(),
            self.service.as_deref(),
            self.trace.as_deref(),
            chrono::Utc::now(),
        )?)
    }
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Host tool registry (TOML): tool policies, tags, agent allowlists, task scopes.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity: critical, error, warning, info.
    #[arg(long, default_value = "error", value_parser = parse_severity)]
    pub fail_on: Severity,
    /// Run only these rules (repeatable, e.g. --rule TL002 --rule TL004).
    #[arg(long = "rule")]
    pub rules: Vec<String>,
    /// TL014: flag an agent run that calls one tool more than N times (overrides the policy
    /// file's [limits]; default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls_per_tool: Option<u32>,
    /// TL014: flag an agent run with more than N model turns (overrides [limits]; default 25).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_model_turns: Option<u32>,
    #[command(flatten)]
    pub scan: ScanArgs,
}

fn parse_severity(s: &str) -> Result<Severity, String> {
    Severity::parse(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown severity {s:?}; use critical, error, warning or info"))
}

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// Rule code, e.g. TL004.
    pub code: String,
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Which report: tools, conversations, guardrails or skills.
    #[arg(value_enum)]
    pub kind: crate::reports::ReportKind,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::reports::ReportFormat,
    #[command(flatten)]
    pub scan: ScanArgs,
}

/// Output formats of `tripline query`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryFormat {
    Table,
    Json,
    Csv,
}

#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// SQL over the table `spans` (DataFusion dialect).
    pub sql: String,
    #[arg(long, value_enum, default_value = "table")]
    pub format: QueryFormat,
}

#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    /// Trace id (32 hex digits).
    pub id: String,
    /// Policy file, used to mark findings on the tree.
    #[arg(long)]
    pub policy: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// Data dir of the baseline run (a store written by `tripline collect` / `ingest`).
    pub baseline: PathBuf,
    /// Data dir of the candidate run.
    pub candidate: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::diff::DiffFormat,
    /// Exit 1 when a finding is at or above this severity: critical, error, warning, info.
    /// Catalog drift is a warning, so the default fails on any drift.
    #[arg(long, default_value = "warning", value_parser = parse_severity)]
    pub fail_on: Severity,
}

/// Flags of `tripline verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: crate::output::VerifyFormat,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Writes `s` to stdout; a closed pipe is not an error.
fn emit(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

/// Unreadable files as warnings on stderr, always; the scan summary too when `summary` (formats
/// whose document does not carry it).
fn tell_scanned(scanned: &crate::store::Scanned, summary: bool) {
    eprint!("{}", scanned.warnings());
    if summary {
        eprintln!("{}", scanned.summary());
    }
}

/// A spinner on stderr while scanning, only when stdout is a terminal.
fn spinner(msg: &str) -> Option<indicatif::ProgressBar> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    Some(pb)
}

fn load_policy(path: Option<&Path>) -> anyhow::Result<Policy> {
    match path {
        Some(p) => Ok(Policy::load(p)?),
        None => Ok(Policy::default()),
    }
}

fn select_rules(codes: &[String]) -> anyhow::Result<Vec<&'static dyn Rule>> {
    if codes.is_empty() {
        return Ok(RULES.to_vec());
    }
    codes
        .iter()
        .map(|c| rules::find(c).ok_or_else(|| unknown_rule(c)))
        .collect()
}

fn unknown_rule(code: &str) -> anyhow::Error {
    let mut codes: Vec<&str> = RULES.iter().map(|r| r.code()).collect();
    if code.trim().eq_ignore_ascii_case(crate::diff::CODE) {
        return anyhow::anyhow!(
            "{} compares two runs: use `tripline diff BASELINE CANDIDATE` (see `tripline explain {}`)",
            crate::diff::CODE,
            crate::diff::CODE
        );
    }
    codes.push(crate::diff::CODE);
    codes.sort_unstable();
    anyhow::anyhow!(
        "unknown rule {code:?}; known rules: {} (see `tripline rules`)",
        codes.join(", ")
    )
}

pub fn check(data_dir: &Path, args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut policy = load_policy(args.policy.as_deref())?;
    // Flags win over the policy file's [limits].
    if let Some(n) = args.max_calls_per_tool {
        policy.limits.max_calls_per_tool = Some(n as usize);
    }
    if let Some(n) = args.max_model_turns {
        policy.limits.max_model_turns = Some(n as usize);
    }
    let selected = select_rules(&args.rules)?;
    let filter = args.scan.filter()?;
    let pb = spinner("scanning spans");
    let scan = runtime()?.block_on(crate::check::check_store(
        data_dir, &filter, &policy, &selected,
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let (model, report, scanned) = scan?;
    // The process ends right after: freeing millions of rows one by one would only add time.
    std::mem::forget(model);
    tell_scanned(&scanned, args.format != Format::Json);
    emit(&render(&report, Some(&scanned), args.format))?;
    Ok(if report.count_at_or_above(args.fail_on) > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn rules() -> anyhow::Result<ExitCode> {
    emit(&render_rule_list())?;
    Ok(ExitCode::SUCCESS)
}

/// The docs of one rule as `tripline explain` prints them.
pub fn explain_text(rule: &dyn Rule) -> String {
    docs_text(rule.code(), rule.name(), rule.severity(), rule.docs())
}

fn docs_text(code: &str, name: &str, severity: Severity, d: &rules::RuleDocs) -> String {
    format!(
        "{code} {name} ({severity})\n\nWhat it detects\n  {}\n\nWhy it matters\n  {}\n\nExample\n  {}\n\nHow to fix\n  {}\n",
        d.what, d.why, d.example, d.fix
    )
}

/// `tripline explain TL011`: catalog drift is run by `tripline diff`, not by `check`.
pub fn explain_diff_text() -> String {
    let mut text = docs_text(
        crate::diff::CODE,
        crate::diff::NAME,
        crate::diff::SEVERITY,
        &crate::diff::DOCS,
    );
    text.push_str("\nRun it with\n  tripline diff BASELINE_DATA_DIR CANDIDATE_DATA_DIR\n");
    text
}

pub fn explain(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    if args.code.trim().eq_ignore_ascii_case(crate::diff::CODE) {
        emit(&explain_diff_text())?;
        return Ok(ExitCode::SUCCESS);
    }
    let rule = rules::find(&args.code).ok_or_else(|| unknown_rule(&args.code))?;
    emit(&explain_text(rule))?;
    Ok(ExitCode::SUCCESS)
}

pub fn report(data_dir: &Path, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let filter = args.scan.filter()?;
    let pb = spinner("scanning spans");
    let scan = runtime()?.block_on(crate::load::scan_store(
        data_dir,
        &filter,
        &crate::load::Projection::base(),
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let scan = scan?;
    let model = crate::model::Model::from_parts(scan.parts);
    let json = args.format == crate::reports::ReportFormat::Json;
    tell_scanned(&scan.scanned, !json);
    emit(&crate::reports::render_scanned(
        args.kind,
        &model,
        args.format,
        Some(&scan.scanned),
    )?)?;
    // As in `check`: the process ends here, the allocator need not walk the model.
    std::mem::forget(model);
    Ok(ExitCode::SUCCESS)
}

pub fn query(data_dir: &Path, args: QueryArgs) -> anyhow::Result<ExitCode> {
    let (out, scanned) =
        runtime()?.block_on(crate::query::run_query(data_dir, &args.sql, args.format))?;
    // The JSON output is the array of rows: the summary goes to stderr in every format.
    tell_scanned(&scanned, true);
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

pub fn trace(data_dir: &Path, args: TraceArgs) -> anyhow::Result<ExitCode> {
    let policy = load_policy(args.policy.as_deref())?;
    let (out, scanned) = runtime()?.block_on(crate::trace_view::render_trace_from_store(
        data_dir, &args.id, &policy,
    ))?;
    tell_scanned(&scanned, true);
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `tripline verify`: 0 healthy, 1 problems found, 2 could not run (no such dir, not a store).
pub fn verify(data_dir: &Path, args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let report = collector::store::verify::verify(data_dir)?;
    emit(&crate::output::render_verify(&report, args.format))?;
    Ok(if report.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `tripline diff BASELINE CANDIDATE`: TL011 catalog-drift. The global `--data-dir` is ignored.
pub fn diff(_data_dir: &Path, args: DiffArgs) -> anyhow::Result<ExitCode> {
    let pb = spinner("comparing tool catalogs");
    let report = runtime()?.block_on(crate::diff::diff_stores(&args.baseline, &args.candidate));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let report = report?;
    for (side, cat) in [
        ("baseline", &report.baseline),
        ("candidate", &report.candidate),
    ] {
        if let Some(scanned) = &cat.scanned {
            eprint!("{}", scanned.warnings());
            if args.format == crate::diff::DiffFormat::Table {
                eprintln!("{side}: {}", scanned.summary());
            }
        }
    }
    emit(&crate::diff::render(&report, args.format))?;
    Ok(ExitCode::from(crate::diff::exit_code(
        &report,
        args.fail_on,
    )))
}
