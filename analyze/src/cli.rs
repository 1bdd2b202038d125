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
use crate::policy::Policy;
use crate::render::{
    self, Format, Style, CHECK_FORMATS, DATA_FORMATS, QUERY_FORMATS, REPORT_FORMATS,
};
use crate::rules::{self, Rule, RunBy, Severity, RULES};

mod incremental;

/// When to colour output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// When stdout (stderr for logs) is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (`tty`) or is not a terminal.
    pub fn enabled(self, tty: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// How every command prints: flags global to all subcommands.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UiArgs {
    /// Print only the result and set the exit code: no scan summary, no progress spinner, no
    /// coverage table.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Colour: auto (when a terminal and NO_COLOR is unset), always or never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
    /// Show long table cells whole, tables as wide as their content (default: cut with `…` to
    /// the terminal's width, COLUMNS, or 100 when not a terminal).
    #[arg(long, global = true)]
    pub wide: bool,
}

impl UiArgs {
    /// The table style for stdout.
    pub fn style(&self) -> Style {
        Style::for_stdout(
            self.wide,
            self.color.enabled(std::io::stdout().is_terminal()),
        )
    }
}

/// Flags shared by every command that scans the store.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ScanArgs {
    /// Only spans that started at or after this time (RFC 3339, or relative: 30m, 24h, 7d).
    /// `check` also takes `last`: what was committed since the last such run (docs/incremental.md).
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
    /// The filters as flags (`--since 24h`), for a report's header.
    fn describe(&self) -> Vec<String> {
        [
            ("--since", &self.since),
            ("--until", &self.until),
            ("--service", &self.service),
            ("--trace", &self.trace),
        ]
        .into_iter()
        .filter_map(|(flag, v)| v.as_ref().map(|v| format!("{flag} {v}")))
        .collect()
    }

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
    #[arg(long, default_value = "table", value_parser = Format::parser(CHECK_FORMATS))]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity: critical, error, warning, info.
    #[arg(long, default_value = "error", value_parser = parse_severity)]
    pub fail_on: Severity,
    /// Run only these rules (repeatable, e.g. --rule TL002 --rule TL004).
    #[arg(long = "rule")]
    pub rules: Vec<String>,
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        help = concat!(
            "TL014: flag an agent run that calls one tool more than N times (overrides the \
             policy file's [limits]; default ",
            rules::default_max_calls_per_tool!(),
            ")"
        )
    )]
    pub max_calls_per_tool: Option<u32>,
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        help = concat!(
            "TL014: flag an agent run with more than N model turns (overrides [limits]; default ",
            rules::default_max_model_turns!(),
            ")"
        )
    )]
    pub max_model_turns: Option<u32>,
    /// Memory for the scans and each window's model (DataFusion's memory pool), e.g. 1GiB or
    /// 512MiB; a window that cannot fit is an error naming it, before it is read.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<usize>,
    /// Spans per window when every selected rule runs in windows (small values make many window
    /// boundaries; the findings do not change).
    #[arg(long, value_name = "N", default_value_t = crate::window::DEFAULT_WINDOW_SPANS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub window_spans: u64,
    /// Where findings wait on disk once more than 100,000 are held (sorted runs in a temporary
    /// directory, removed on exit; TRIPLINE_SPILL_FINDINGS sets the number), where the first
    /// pass writes its sorted runs of traces on a large store (about 60 bytes per trace, in
    /// unlinked files), and, with `--since last`, the new spans' ids past 2,000,000
    /// (TRIPLINE_SPILL_IDS). Default: the system temp dir (TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
    #[command(flatten)]
    pub scan: ScanArgs,
    /// `--since last`: the state file (what was checked and reported; docs/incremental.md).
    /// Default: one file per data dir under $XDG_STATE_HOME/tripline/check/.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Keep checking each newly committed part file and print each new finding as a JSON line,
    /// until SIGINT/SIGTERM (with `--since last`: resuming from the state file).
    #[arg(long)]
    pub follow: bool,
    /// `--follow`: seconds between two looks at the store.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_interval)]
    pub interval: f64,
    /// `--since last` / `--follow`: check a part file only once it was committed this long ago
    /// (90s, 2m, 0), so late spans of its traces arrive first. Default 90s while a writer holds
    /// the store, 0 otherwise.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub settle: Option<Duration>,
    /// `--since last` / `--follow`: start the rules' scan this long before the new spans (the
    /// context of traces, conversations and stitched calls that began earlier).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub lookback: Duration,
}

fn parse_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "invalid interval {s:?}; give seconds between 0 and 86400, e.g. 2 or 0.5"
        )),
    }
}

/// `90s`, `2m`, `1h`, `1d`, or plain seconds (`0`, `30`).
fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit_secs = match unit {
        "" | "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3600),
        "d" => Some(86_400),
        _ => None,
    };
    match (num.parse::<u64>(), unit_secs) {
        (Ok(n), Some(u)) => n
            .checked_mul(u)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("duration {s:?} is too long")),
        _ => Err(format!(
            "invalid duration {s:?}; give a number with s, m, h or d, e.g. 90s, 5m, 1h"
        )),
    }
}

/// `1GiB`, `512MiB`, `64KiB`, `1G`, `2000000` (bytes).
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: usize = num
        .parse()
        .map_err(|_| format!("invalid size {s:?}; use e.g. 1GiB, 512MiB or a number of bytes"))?;
    let mult: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size {s:?}; use e.g. 1GiB, 512MiB or a number of bytes"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} is too large"))
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
    /// Which report: tools, conversations, guardrails, skills, propagation, or html (one
    /// self-contained page of the check: findings with a waterfall each, coverage, tools,
    /// conversations; needs --output).
    #[arg(value_parser = report_target_parser())]
    pub kind: ReportTarget,
    /// Output format (html writes a page to --output instead).
    #[arg(long, default_value = "table", value_parser = Format::parser(REPORT_FORMATS))]
    pub format: Format,
    /// html: the file to write the page to.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// html: host tool registry (TOML) the rules judge calls against, as for `check`.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Memory for the scans and each window's model, as for `check`.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<usize>,
    /// Spans per window, as for `check` (the rows and findings do not change).
    #[arg(long, value_name = "N", default_value_t = crate::window::DEFAULT_WINDOW_SPANS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub window_spans: u64,
    /// html: findings listed per rule, each with its waterfall (the counts include every
    /// finding; the page says how many it leaves out; `check --format json` lists them all).
    /// Default 50.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_findings_per_rule: Option<u64>,
    /// html: conversations listed, and agent runs listed over all of them. Default 500.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: Option<u64>,
    /// Where the first pass writes its sorted runs of traces on a large store (about 60 bytes
    /// per trace, in unlinked files), and for html where findings wait on disk once more than
    /// 100,000 are held, as for `check`. Default: the system temp dir (TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
    /// conversations as a table: rows shown, the first by start (the table says how many it
    /// leaves out; `--format json` and `--format markdown` list every one). Default 1000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_rows: Option<u64>,
    #[command(flatten)]
    pub scan: ScanArgs,
}

/// What `tripline report` makes: a data report (printed) or the HTML page (written to a file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportTarget {
    Data(crate::reports::ReportKind),
    Html,
}

/// The report kinds (from [`crate::reports::ReportKind`], so help lists them once) plus `html`.
fn report_target_parser() -> impl clap::builder::TypedValueParser<Value = ReportTarget> {
    use clap::builder::{PossibleValue, TypedValueParser as _};
    use clap::ValueEnum as _;
    let mut names: Vec<PossibleValue> = crate::reports::ReportKind::value_variants()
        .iter()
        .filter_map(|k| k.to_possible_value())
        .collect();
    names.push(PossibleValue::new("html").help(
        "One self-contained HTML page of the check (same filters and --policy): findings by \
         severity and rule with a trace waterfall each, coverage, tools, conversations",
    ));
    clap::builder::PossibleValuesParser::new(names).map(|s| {
        crate::reports::ReportKind::from_str(&s, true)
            .map_or(ReportTarget::Html, ReportTarget::Data)
    })
}

#[derive(clap::Args, Debug)]
pub struct QueryArgs {
    /// SQL over the table `spans` (DataFusion dialect).
    pub sql: String,
    /// Output format (a table cuts long cells: `--wide` or json / csv show them whole).
    #[arg(long, default_value = "table", value_parser = Format::parser(QUERY_FORMATS))]
    pub format: Format,
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
    /// Data dir of the baseline run (a store written by `tripline collect` / `ingest`, not a
    /// recording file: ingest one first).
    #[arg(value_name = "BASELINE_DATA_DIR")]
    pub baseline: PathBuf,
    /// Data dir of the candidate run.
    #[arg(value_name = "CANDIDATE_DATA_DIR")]
    pub candidate: PathBuf,
    /// Output format.
    #[arg(long, default_value = "table", value_parser = Format::parser(DATA_FORMATS))]
    pub format: Format,
    /// Exit 1 when a finding is at or above this severity: critical, error, warning, info.
    /// Catalog drift is a warning, so the default fails on any drift.
    #[arg(long, default_value = "warning", value_parser = parse_severity)]
    pub fail_on: Severity,
}

/// Flags of `tripline verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// Output format.
    #[arg(long, default_value = "table", value_parser = Format::parser(DATA_FORMATS))]
    pub format: Format,
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
/// whose document does not carry it) and not `--quiet`.
fn tell_scanned(ui: &UiArgs, scanned: &crate::store::Scanned, summary: bool) {
    eprint!("{}", scanned.warnings());
    if summary && !ui.quiet {
        eprintln!("{}", scanned.summary());
    }
}

/// A spinner on stderr while scanning, only when stdout is a terminal and not `--quiet`.
fn spinner(ui: &UiArgs, msg: &str) -> Option<indicatif::ProgressBar> {
    if ui.quiet || !std::io::stdout().is_terminal() {
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
        .map(|c| match rules::find(c) {
            Some(r) if r.run_by() == RunBy::Diff => Err(anyhow::anyhow!(
                "{} compares two runs: use `tripline diff BASELINE CANDIDATE` (see `tripline explain {}`)",
                r.code(),
                r.code()
            )),
            Some(r) => Ok(r),
            None => Err(unknown_rule(c)),
        })
        .collect()
}

fn unknown_rule(code: &str) -> anyhow::Error {
    let codes: Vec<&str> = rules::all().iter().map(|r| r.code()).collect();
    anyhow::anyhow!(
        "unknown rule {code:?}; known rules: {} (see `tripline rules`)",
        codes.join(", ")
    )
}

pub fn check(data_dir: &Path, args: CheckArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let mut policy = load_policy(args.policy.as_deref())?;
    // Flags win over the policy file's [limits].
    if let Some(n) = args.max_calls_per_tool {
        policy.limits.max_calls_per_tool = Some(n as usize);
    }
    if let Some(n) = args.max_model_turns {
        policy.limits.max_model_turns = Some(n as usize);
    }
    let selected = select_rules(&args.rules)?;
    if args.follow || args.scan.since.as_deref() == Some(incremental::SINCE_LAST) {
        return incremental::run(data_dir, &args, ui, &policy, &selected);
    }
    let filter = args.scan.filter()?;
    let pb = spinner(ui, "scanning spans");
    let options = crate::window::WindowOptions {
        window_spans: args.window_spans,
        memory_limit: args.memory_limit,
        spill_dir: args.spill_dir.clone(),
    };
    let spill = spill_options(args.spill_dir.as_deref())?;
    let scan = runtime()?.block_on(crate::check::check_store_streamed(
        data_dir, &filter, &policy, &selected, &options, spill,
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let (streamed, scanned, _windows) = scan?;
    tell_scanned(ui, &scanned, args.format != Format::Json);
    let failing = streamed.count_at_or_above(args.fail_on) > 0;
    let (policy_path, data_path) = (
        args.policy.as_ref().map(|p| p.display().to_string()),
        data_dir.display().to_string(),
    );
    let artifact = match &policy_path {
        Some(p) => render::SarifArtifact::Policy(p),
        None => render::SarifArtifact::DataDir(&data_path),
    };
    // Every format straight to stdout, the findings merged from memory and disk as they are
    // written (the table tallies one row per rule): never every finding in memory.
    let crate::rules::StreamedReport { findings, coverage } = streamed;
    // Merged on a thread of its own while this one writes (crate::read_ahead).
    let mut findings = crate::read_ahead::ReadAhead::spawn(findings, 1024, 4);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = render::write_check_streamed(
        &mut out,
        &mut findings,
        &coverage,
        Some(&scanned),
        args.format,
        &ui.style(),
        ui.quiet,
        artifact,
    )
    .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.context("cannot write the findings to stdout")?,
    }
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `tripline rules`: every registered rule.
pub fn rules(ui: &UiArgs) -> anyhow::Result<ExitCode> {
    emit(&render::render_rule_list(&ui.style()))?;
    Ok(ExitCode::SUCCESS)
}

/// `tripline explain CODE`.
pub fn explain(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let rule = rules::find(&args.code).ok_or_else(|| unknown_rule(&args.code))?;
    emit(&render::explain_text(rule))?;
    Ok(ExitCode::SUCCESS)
}

pub fn report(data_dir: &Path, args: ReportArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let kind = match args.kind {
        ReportTarget::Html => return report_html(data_dir, args, ui),
        ReportTarget::Data(kind) => kind,
    };
    if args.output.is_some()
        || args.policy.is_some()
        || args.max_findings_per_rule.is_some()
        || args.max_runs.is_some()
    {
        anyhow::bail!(
            "--output, --policy, --max-findings-per-rule and --max-runs apply to `tripline report html` only; the other reports print to stdout (redirect it to keep one)"
        );
    }
    // Checked before the scan, as for `check`: a typo fails in a second.
    spill_options(args.spill_dir.as_deref())?;
    if args.max_rows.is_some()
        && (kind != crate::reports::ReportKind::Conversations || args.format != Format::Table)
    {
        anyhow::bail!(
            "--max-rows applies to the table of `tripline report conversations` only (its JSON and Markdown list every row)"
        );
    }
    if kind == crate::reports::ReportKind::Conversations {
        return report_conversations(data_dir, &args, ui);
    }
    let filter = args.scan.filter()?;
    let pb = spinner(ui, "scanning spans");
    let options = crate::window::WindowOptions {
        window_spans: args.window_spans,
        memory_limit: args.memory_limit,
        spill_dir: args.spill_dir.clone(),
    };
    let scan = runtime()?.block_on(crate::check::report_store_bounded(
        data_dir, &filter, kind, &options,
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let (built, scanned, _windows) = scan?;
    tell_scanned(ui, &scanned, args.format != Format::Json);
    emit(&render::render_built(
        &built,
        args.format,
        &ui.style(),
        Some(&scanned),
    )?)?;
    Ok(ExitCode::SUCCESS)
}

/// `tripline report conversations`: the rows written as the windows finish them (JSON and
/// Markdown whole, the table capped at `--max-rows`), never every row in memory. An error after
/// some rows were written leaves a partial document on stdout (and exits 2, as any error).
fn report_conversations(
    data_dir: &Path,
    args: &ReportArgs,
    ui: &UiArgs,
) -> anyhow::Result<ExitCode> {
    let filter = args.scan.filter()?;
    let pb = spinner(ui, "scanning spans");
    let options = crate::window::WindowOptions {
        window_spans: args.window_spans,
        memory_limit: args.memory_limit,
        spill_dir: args.spill_dir.clone(),
    };
    let style = ui.style();
    let max_rows = args.max_rows.map_or(render::DEFAULT_TABLE_ROWS, |n| {
        usize::try_from(n).unwrap_or(usize::MAX)
    });
    let stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut out = render::ConversationsOut::new(stdout, args.format, &style, max_rows);
    let scan = runtime()?.block_on(crate::check::conversations_store_streamed(
        data_dir, &filter, &options, &mut out,
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let (notes, scanned, _windows) = scan?;
    tell_scanned(ui, &scanned, args.format != Format::Json);
    let written = out
        .finish(notes, Some(&scanned))
        .and_then(|mut w| w.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.context("cannot write the report to stdout")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Where findings past the in-memory bound spill (`--spill-dir`, else TMPDIR); a directory given
/// explicitly is checked before the scan, so a typo fails in a second, not after the rules ran.
fn spill_options(dir: Option<&Path>) -> anyhow::Result<crate::rules::spill::SpillOptions> {
    let spill = crate::rules::spill::SpillOptions {
        dir: dir.map(Path::to_path_buf),
        ..Default::default()
    };
    if dir.is_some() {
        spill.check_writable()?;
    }
    Ok(spill)
}

/// `tripline report html --output FILE`: the check (same filters, `--policy`, every rule) as
/// one self-contained page, written atomically; its path is printed on stdout. Exit 0 whatever
/// the findings: this is a report, `check` is the gate.
fn report_html(data_dir: &Path, args: ReportArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let output = args.output.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "`tripline report html` needs --output FILE, e.g. --output tripline-report.html"
        )
    })?;
    if args.format != Format::Table {
        anyhow::bail!("--format does not apply to `tripline report html`: it writes one HTML page to --output");
    }
    let policy = load_policy(args.policy.as_deref())?;
    let filter = args.scan.filter()?;
    let options = crate::window::WindowOptions {
        window_spans: args.window_spans,
        memory_limit: args.memory_limit,
        spill_dir: args.spill_dir.clone(),
    };
    let spill = spill_options(args.spill_dir.as_deref())?;
    let limits = render::html::PageLimits {
        findings_per_rule: args
            .max_findings_per_rule
            .map_or(render::html::data::DEFAULT_FINDINGS_PER_RULE, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
        runs: args.max_runs.map_or(render::html::data::DEFAULT_RUNS, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
    };
    let context = render::html::PageContext {
        generated: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        data_dir: data_dir.display().to_string(),
        policy: args.policy.as_ref().map(|p| p.display().to_string()),
        filters: args.scan.describe(),
    };
    let pb = spinner(ui, "scanning spans");
    let built = runtime()?.block_on(render::html::windows::build_windowed(
        data_dir, &filter, &policy, &options, spill, &limits, &context,
    ));
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let (doc, _windows) = built?;
    if let Some(scanned) = &doc.scanned {
        tell_scanned(ui, scanned, true);
    }
    let page = render::html::render_document(&doc)?;
    write_file_atomically(&output, page.as_bytes())?;
    if !ui.quiet {
        let total: u64 = doc.counts.iter().map(|c| c.findings).sum();
        eprintln!(
            "tripline report html: {} findings ({} listed), {} KiB written to {}",
            total,
            doc.findings.len(),
            page.len().div_ceil(1024),
            output.display()
        );
    }
    emit(&format!("{}\n", output.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a reader (a
/// browser, a CI upload) never sees half a page.
fn write_file_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        anyhow::anyhow!(
            "--output {} names a directory; give a file name, e.g. report.html",
            path.display()
        )
    })?;
    let mut tmp = name.to_os_string();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp);
    std::fs::write(&tmp, bytes).with_context(|| {
        format!(
            "cannot write {}; check that the directory exists and is writable",
            tmp.display()
        )
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::Error::from(e).context(format!(
            "cannot move the page into place at {}",
            path.display()
        ))
    })
}

pub fn query(data_dir: &Path, args: QueryArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let (batches, scanned) = runtime()?.block_on(crate::query::run_query(data_dir, &args.sql))?;
    // The JSON output is the array of rows: the summary goes to stderr in every format.
    tell_scanned(ui, &scanned, true);
    emit(&render::render_batches(&batches, args.format, &ui.style())?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn trace(data_dir: &Path, args: TraceArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let policy = load_policy(args.policy.as_deref())?;
    let (trace, model, report, scanned) =
        runtime()?.block_on(crate::check::check_trace(data_dir, &args.id, &policy))?;
    tell_scanned(ui, &scanned, true);
    emit(&render::render_trace(&model, &report, trace))?;
    Ok(ExitCode::SUCCESS)
}

/// `tripline verify`: 0 healthy, 1 problems found, 2 could not run (no such dir, not a store).
pub fn verify(data_dir: &Path, args: VerifyArgs) -> anyhow::Result<ExitCode> {
    if collector::store::remote::RemoteLocation::of(data_dir).is_some() {
        anyhow::bail!(
            "verify checks a local store (WAL, checkpoint, part files); {} is on object storage: run it on a collector's --wal-dir, and `tripline query --data-dir {}` reads the bucket (unreadable objects are named)",
            data_dir.display(),
            data_dir.display()
        );
    }
    let report = collector::store::verify::verify(data_dir)?;
    emit(&render::render_verify(&report, args.format))?;
    Ok(if report.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `tripline diff BASELINE CANDIDATE`: TL011 catalog-drift. The global `--data-dir` is ignored.
pub fn diff(args: DiffArgs, ui: &UiArgs) -> anyhow::Result<ExitCode> {
    let pb = spinner(ui, "comparing tool catalogs");
    let report = runtime()?.block_on(crate::check::diff_stores(&args.baseline, &args.candidate));
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
            if args.format == Format::Table && !ui.quiet {
                eprintln!("{side}: {}", scanned.summary());
            }
        }
    }
    emit(&render::render_diff(&report, args.format, &ui.style()))?;
    Ok(ExitCode::from(
        crate::rules::tl011_catalog_drift::exit_code(&report, args.fail_on),
    ))
}
