//! The CLI edge of `check --since last` and `check --follow` (docs/incremental.md): where the
//! state file lives, what goes to stdout and stderr, the poll loop and its signals. The checking
//! itself is [`crate::incremental`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use super::{emit, runtime, tell_scanned, CheckArgs, UiArgs};
use crate::error::LoadError;
use crate::incremental::{check_since, CheckState, Increment, DEFAULT_STATE_FILE};
use crate::load::ScanFilter;
use crate::policy::Policy;
use crate::render::{self, Format};
use crate::rules::{Report, Rule};
use crate::store::Scanned;

/// The value of `--since` that means "since the last run recorded in the state file".
pub const SINCE_LAST: &str = "last";

/// `--state FILE`, else `<data>/.tripline-check-state.json` when the data dir is writable by
/// this reader (probed by creating and removing the state's temporary file; `LOCK` is never
/// touched), else an error asking for `--state`.
fn state_path(data_dir: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    if !data_dir.is_dir() {
        return Err(LoadError::MissingDataDir(data_dir.to_path_buf()).into());
    }
    let path = data_dir.join(DEFAULT_STATE_FILE);
    let probe = data_dir.join(format!("{DEFAULT_STATE_FILE}.tmp"));
    match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(path)
        }
        Err(e) => Err(anyhow::anyhow!(
            "cannot keep the check state in {} ({e}); pass --state FILE in a directory you can write",
            data_dir.display()
        )),
    }
}

/// `check` with `--since last` and/or `--follow`.
pub(super) fn run(
    data_dir: &Path,
    args: &CheckArgs,
    ui: &UiArgs,
    policy: &Policy,
    rules: &[&'static dyn Rule],
) -> anyhow::Result<ExitCode> {
    let since_last = args.scan.since.as_deref() == Some(SINCE_LAST);
    let filter = ScanFilter {
        since_ns: None,
        ..super::ScanArgs {
            since: None,
            ..args.scan.clone()
        }
        .filter()?
    };
    let (state_file, state) = if since_last || args.state.is_some() {
        let path = state_path(data_dir, args.state.as_deref())?;
        let state = CheckState::load(&path)?;
        (Some(path), state)
    } else {
        (None, CheckState::default())
    };
    if args.follow {
        follow(data_dir, args, ui, policy, rules, &filter, state_file, state)
    } else {
        once(data_dir, args, ui, policy, rules, &filter, state_file, state)
    }
}

/// One `--since last` run.
#[allow(clippy::too_many_arguments)]
fn once(
    data_dir: &Path,
    args: &CheckArgs,
    ui: &UiArgs,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    filter: &ScanFilter,
    state_file: Option<PathBuf>,
    mut state: CheckState,
) -> anyhow::Result<ExitCode> {
    let result = runtime()?.block_on(check_since(
        data_dir,
        &mut state,
        filter,
        policy,
        rules,
        &mut None,
    ))?;
    let artifact = render::SarifArtifact::DataDir(&data_dir.to_str().unwrap_or_default());
    match result {
        Increment::NothingNew { since } => {
            if !ui.quiet {
                eprintln!(
                    "nothing new since {}",
                    since.as_deref().unwrap_or("the last run")
                );
            }
            if matches!(args.format, Format::Json | Format::Sarif) {
                emit(&render::render_check(
                    &Report::default(),
                    Some(&Scanned::default()),
                    args.format,
                    &ui.style(),
                    ui.quiet,
                    artifact,
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Increment::Checked {
            report,
            scanned,
            new_files,
        } => {
            tell_scanned(ui, &scanned, args.format != Format::Json);
            if !ui.quiet {
                eprintln!(
                    "{new_files} new part file(s) checked, {} new finding(s)",
                    report.findings.len()
                );
            }
            emit(&render::render_check(
                &report,
                Some(&scanned),
                args.format,
                &ui.style(),
                ui.quiet,
                artifact,
            ))?;
            if let Some(path) = &state_file {
                state.save(path)?;
            }
            Ok(if report.count_at_or_above(args.fail_on) > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// `--follow`: poll every `--interval` seconds, print each new finding as a JSON line, until
/// SIGINT or SIGTERM (exit 0).
#[allow(clippy::too_many_arguments)]
fn follow(
    data_dir: &Path,
    args: &CheckArgs,
    ui: &UiArgs,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    filter: &ScanFilter,
    state_file: Option<PathBuf>,
    mut state: CheckState,
) -> anyhow::Result<ExitCode> {
    let interval = Duration::from_secs_f64(args.interval);
    runtime()?.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
        let mut wal_seen = None;
        let mut waiting_said = false;
        loop {
            match check_since(data_dir, &mut state, filter, policy, rules, &mut wal_seen).await {
                Ok(Increment::Checked { report, scanned, .. }) => {
                    eprint!("{}", scanned.warnings());
                    for f in &report.findings {
                        emit(&render::render_finding_line(f))?;
                    }
                    if let Some(path) = &state_file {
                        state.save(path)?;
                    }
                }
                Ok(Increment::NothingNew { .. }) => {}
                Err(e @ (LoadError::NoSpans(_) | LoadError::MissingDataDir(_))) => {
                    if !waiting_said && !ui.quiet {
                        eprintln!("waiting for spans: {e}");
                        waiting_said = true;
                    }
                }
                // A transient failure (a file replaced while read): said, and retried next poll.
                Err(e) => eprintln!("warning: {e}; retrying in {}s", args.interval),
            }
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                _ = term.recv() => break,
                _ = int.recv() => break,
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
