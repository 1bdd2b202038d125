//! The CLI edge of `check --since last` and `check --follow` (docs/incremental.md): where the
//! state file lives, what goes to stdout and stderr, the exit codes, the poll loop and its
//! signals. The checking itself is [`crate::incremental`].

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use super::{runtime, tell_scanned, CheckArgs, UiArgs};
use crate::error::LoadError;
use crate::incremental::{
    check_increment, default_state_path, CheckState, Increment, IncrementError, NewFindings,
    Options, ReportedKeys, Scope, DEFAULT_SETTLE,
};
use crate::load::ScanFilter;
use crate::policy::Policy;
use crate::render::{self, Format};
use crate::rules::Rule;
use collector::store::remote::RemoteLocation;

/// The value of `--since` that means "since the last run recorded in the state file".
pub const SINCE_LAST: &str = "last";

/// `check` with `--since last` and/or `--follow`.
pub(super) fn run(
    data_dir: &Path,
    args: &CheckArgs,
    ui: &UiArgs,
    policy: &Policy,
    rules: &[&'static dyn Rule],
) -> anyhow::Result<ExitCode> {
    let since_last = args.scan.since.as_deref() == Some(SINCE_LAST);
    if args.state.is_some() && !since_last {
        anyhow::bail!("--state goes with --since last (the state records what earlier runs checked); add --since last");
    }
    if args.follow && !matches!(args.format, Format::Json) && args.format != Format::Table {
        anyhow::bail!("--follow prints JSON lines; leave --format out (or give --format json)");
    }
    let scan = super::ScanArgs {
        since: args.scan.since.clone().filter(|_| !since_last),
        ..args.scan.clone()
    };
    let filter = scan.filter()?;
    let options = Options {
        settle: args.settle.unwrap_or(DEFAULT_SETTLE),
        settle_always: args.settle.is_some(),
        lookback: args.lookback,
        window: crate::window::WindowOptions {
            window_spans: args.window_spans,
            memory_limit: args.memory_limit,
            spill_dir: args.spill_dir.clone(),
        },
        spill: super::spill_options(args.spill_dir.as_deref())?,
    };
    let (state_file, state) = if since_last {
        // A store on object storage is named by its URL; a local one by its canonical path.
        let canonical = if RemoteLocation::of(data_dir).is_some() {
            data_dir.to_path_buf()
        } else {
            if !data_dir.is_dir() {
                return Err(LoadError::MissingDataDir(data_dir.to_path_buf()).into());
            }
            data_dir
                .canonicalize()
                .with_context(|| format!("cannot resolve the data dir {}", data_dir.display()))?
        };
        let path = match &args.state {
            Some(p) => p.clone(),
            None => default_state_path(&canonical)?,
        };
        let scope = Scope {
            data_dir: canonical.display().to_string(),
            rules: rules.iter().map(|r| r.code().to_string()).collect(),
            filters: options_flags(args),
        };
        let state = CheckState::load(&path, scope)?;
        (Some(path), state)
    } else {
        (None, CheckState::default())
    };
    // The keys of the findings reported: beside the state file, or for as long as `--follow`
    // runs when the state is kept in memory.
    let keys = match &state_file {
        Some(path) => ReportedKeys::beside(path),
        None => ReportedKeys::temporary()?,
    };
    let ctx = Ctx {
        keys,
        data_dir,
        args,
        ui,
        policy,
        rules,
        filter: &filter,
        options,
        state_file: state_file.as_deref(),
    };
    if args.follow {
        follow(&ctx, state)
    } else {
        once(&ctx, state)
    }
}

/// Everything a run needs besides the state.
struct Ctx<'a> {
    keys: ReportedKeys,
    data_dir: &'a Path,
    args: &'a CheckArgs,
    ui: &'a UiArgs,
    policy: &'a Policy,
    rules: &'a [&'static dyn Rule],
    filter: &'a ScanFilter,
    options: Options,
    state_file: Option<&'a Path>,
}

/// The flags besides `--since` that change what a check finds, as the state's scope records them.
fn options_flags(args: &CheckArgs) -> String {
    let mut parts = args.scan.describe();
    parts.retain(|p| !p.starts_with("--since"));
    if let Some(p) = &args.policy {
        parts.push(format!("--policy {}", p.display()));
    }
    if let Some(n) = args.max_calls_per_tool {
        parts.push(format!("--max-calls-per-tool {n}"));
    }
    if let Some(n) = args.max_model_turns {
        parts.push(format!("--max-model-turns {n}"));
    }
    parts.join(" ")
}

impl Ctx<'_> {
    async fn increment(&self, state: &mut CheckState) -> Result<Increment, IncrementError> {
        check_increment(
            self.data_dir,
            state,
            self.filter,
            self.policy,
            self.rules,
            &self.options,
            SystemTime::now(),
        )
        .await
    }

    fn save(&self, state: &CheckState) -> anyhow::Result<()> {
        if let Some(path) = self.state_file {
            state.save(path)?;
        }
        Ok(())
    }
}

/// Why nothing was checked, for stderr.
fn nothing_new(inc: &Increment, settle: Duration) -> String {
    let s = &inc.summary;
    let waiting = format!(
        "{} part file(s) committed less than {}s ago wait for the next run (--settle)",
        s.waiting_files,
        settle.as_secs()
    );
    match (&s.previous_run, s.waiting_files) {
        (Some(t), 0) => format!("nothing new since {t}: no part file was committed since"),
        (Some(t), _) => format!("nothing new since {t}: {waiting}"),
        (None, 0) => "nothing checked yet: no part file is committed (acknowledged spans still in the WAL are checked once committed)".to_string(),
        (None, _) => format!("nothing checked yet: {waiting}"),
    }
}

/// One `warning:` line per file that could not be read, for an increment that checked nothing.
fn unreadable_warnings(inc: &Increment) -> String {
    crate::store::Scanned {
        unreadable_files: inc.unreadable.clone(),
        ..Default::default()
    }
    .warnings()
}

/// One `--since last` run. Exit 0 when nothing is new (said on stderr), else as `check`: 1 when
/// a new finding is at or above `--fail-on`. The findings are written as they are sifted (never
/// all in memory), their keys committed once they were all written, then the state is saved.
fn once(ctx: &Ctx, mut state: CheckState) -> anyhow::Result<ExitCode> {
    let before = state.clone();
    let mut inc = runtime()?.block_on(ctx.increment(&mut state))?;
    let (args, ui) = (ctx.args, ctx.ui);
    let data = ctx.data_dir.display().to_string();
    let artifact = render::SarifArtifact::DataDir(&data);
    if let Some(scanned) = &inc.scanned {
        tell_scanned(ui, scanned, args.format != Format::Json);
    } else {
        eprint!("{}", unreadable_warnings(&inc));
        if !ui.quiet {
            eprintln!("{}", nothing_new(&inc, ctx.options.settle));
        }
    }
    let mut findings = inc.new_findings(&ctx.keys);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = match args.format {
        Format::Json => render::write_json_incremental_streamed(
            &mut out,
            &mut findings,
            &inc.coverage,
            inc.scanned.as_ref(),
            |f: &NewFindings| serde_json::to_value(f.summary()).ok(),
        ),
        Format::Table | Format::Markdown | Format::Csv if inc.scanned.is_none() => Ok(()),
        f => render::write_check_streamed(
            &mut out,
            &mut findings,
            &inc.coverage,
            inc.scanned.as_ref(),
            f,
            &ui.style(),
            ui.quiet,
            artifact,
        ),
    }
    .and_then(|()| out.flush());
    drop(out);
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.context("cannot write the findings to stdout")?,
    }
    // What a closed pipe left unread is recorded too (it was judged, as with `check`).
    findings.drain()?;
    let failing = findings.count_at_or_above(args.fail_on) > 0;
    let s = findings.summary();
    let update = findings.finish(&mut state)?;
    if inc.checked() {
        if !ui.quiet {
            eprintln!(
                "{} new part file(s) checked ({} span(s)), {} new finding(s), {} already reported{}",
                s.new_files,
                s.new_spans,
                s.new_findings,
                s.already_reported,
                if s.waiting_files > 0 {
                    format!(
                        "; {} part file(s) younger than --settle wait for the next run",
                        s.waiting_files
                    )
                } else {
                    String::new()
                }
            );
        }
        update.commit()?;
    }
    if state != before {
        ctx.save(&state)?;
    }
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--follow`: look at the store every `--interval` seconds; print each new finding as a JSON
/// line and one batch line per checked batch; save the state (with `--since last`) after each
/// batch; exit 0 on SIGINT or SIGTERM. A signal during a check abandons that batch: nothing of
/// it was printed or saved, so the next run checks it again.
fn follow(ctx: &Ctx, mut state: CheckState) -> anyhow::Result<ExitCode> {
    let interval = Duration::from_secs_f64(ctx.args.interval);
    let quiet = ctx.ui.quiet;
    runtime()?.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
        let mut said_waiting = false;
        let mut warned = std::collections::HashSet::new();
        if !quiet {
            eprintln!(
                "following {} every {}s (Ctrl-C to stop)",
                ctx.data_dir.display(),
                ctx.args.interval
            );
        }
        loop {
            let mut work = state.clone();
            let result = tokio::select! {
                r = ctx.increment(&mut work) => r,
                _ = term.recv() => break,
                _ = int.recv() => break,
            };
            match result {
                Ok(mut inc) => {
                    state = work;
                    // Each unreadable file once, not at every poll.
                    for u in &inc.unreadable {
                        if warned.insert(u.path.clone()) {
                            eprintln!("warning: skipped {}: {}", u.path, u.error);
                        }
                    }
                    if inc.checked() {
                        batch(ctx, &mut inc, &mut state)?;
                        said_waiting = false;
                    }
                }
                Err(IncrementError::Load(
                    e @ (LoadError::NoSpans(_) | LoadError::MissingDataDir(_)),
                )) => {
                    if !said_waiting && !quiet {
                        eprintln!("waiting for spans: {e}");
                    }
                    said_waiting = true;
                }
                // A transient failure (a file replaced while read): said, retried next time.
                Err(e) => eprintln!("warning: {e}; retrying in {}s", ctx.args.interval),
            }
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                _ = term.recv() => break,
                _ = int.recv() => break,
            }
        }
        if !quiet {
            eprintln!("stopped following {}", ctx.data_dir.display());
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `--follow`: one checked batch's finding lines, written as they are sifted, and its batch line;
/// then its keys are committed and the state saved.
fn batch(ctx: &Ctx, inc: &mut Increment, state: &mut CheckState) -> anyhow::Result<()> {
    let Some(scanned) = inc.scanned.clone() else {
        return Ok(());
    };
    eprint!("{}", scanned.warnings());
    let mut findings = inc.new_findings(&ctx.keys);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut write = |line: String| match out.write_all(line.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::from(e).context("cannot write to stdout"))
        }
        _ => Ok(()),
    };
    for f in findings.by_ref() {
        write(render::render_finding_line(&f?))?;
    }
    write(render::render_batch_line(
        state.checked_at.as_deref().unwrap_or_default(),
        &findings.summary(),
        &scanned,
        &inc.coverage,
    ))?;
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(anyhow::Error::from(e).context("cannot write to stdout"))
        }
        _ => {}
    }
    drop(out);
    findings.finish(state)?.commit()?;
    ctx.save(state)
}
