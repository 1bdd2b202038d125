//! Incremental checking: `check --since last` and `check --follow` (docs/incremental.md).
//!
//! Why a separate path: a cron job, CI or an alerting pipeline that follows a running collector
//! wants each problem once, and wants a run to cost what was committed since the last one, not
//! the whole store. One increment:
//!
//! 1. takes a snapshot and picks the committed part files the state ([`CheckState`]) has not
//!    checked and that are *settled*: committed at least `settle` ago, so the other half of a
//!    trace that the exporters and the collector are still delivering has time to arrive
//!    (applied while a writer holds the store's lock, or always when asked for);
//! 2. reads what those files touch ([`NewData`]: traces, span ids, earliest start);
//! 3. runs the rules over the store from that start time minus `lookback` on (the context a
//!    late span needs: the host call a late server span is stitched to, the earlier spans of its
//!    trace and conversation), the WAL tail and not yet settled files included as context;
//! 4. keeps the findings that touch the new files (their trace, span, related spans or
//!    conversation): the others were judged by an earlier run, and a trace cut by the window's
//!    lower edge must not be judged on half its spans; and of those only the ones whose
//!    [`finding_key`] no earlier run reported.
//!
//! Every run checks in windows ([`crate::window`]) and streams its findings like `check`: they
//! spill to disk past a bound, and the ones already reported are told apart by merging them
//! with sorted key files ([`reported`]), so neither the findings nor their keys are ever all in
//! memory, whatever the store's size (a first run reads the whole store).
//!
//! The WAL tail is context, never new data: its spans are judged once committed. A store on
//! object storage (`s3://bucket/prefix`) is listed with a LIST, its new objects read with ranged
//! GETs, and its fresh objects always settle (their writers' locks are on other machines).

mod id_set;
mod new_findings;
mod new_parts;
pub mod reported;
mod state;

pub use new_findings::{FindingsError, NewFindings};
pub use new_parts::{NewData, NewPartError};
pub use reported::{KeyUpdate, ReportedKeys};
pub use state::{default_state_path, finding_key, CheckState, Scope, StateError, STATE_VERSION};

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::check::projection_for;
use crate::error::LoadError;
use crate::load::ScanFilter;
use crate::policy::Policy;
use crate::rules::spill::SpillOptions;
use crate::rules::{Coverage, Rule};
use crate::store::object_listing::RemoteSource;
use crate::store::{Scanned, Snapshot, Unreadable};
use crate::window::{check_windows_with, WindowError, WindowOptions};
use collector::store::remote::RemoteLocation;
use id_set::{conversation_key, IdSet};
use new_findings::{Candidates, Touch};

/// Default of `--lookback`: how far before the new spans the scan starts.
pub const DEFAULT_LOOKBACK: Duration = Duration::from_secs(3600);
/// Default of `--settle`: longer than the collector's default `--max-file-age-secs` (60) plus an
/// OpenTelemetry SDK's default export delay (5 s), so both halves of a call that reached the
/// collector within that time are judged together.
pub const DEFAULT_SETTLE: Duration = Duration::from_secs(90);

/// How an increment picks and widens its data.
#[derive(Clone, Debug)]
pub struct Options {
    /// Check a part file only once it was committed this long ago.
    pub settle: Duration,
    /// Apply `settle` even when no writer holds the store's lock (default: only while one does;
    /// a store nobody writes receives no late span).
    pub settle_always: bool,
    /// How far before the new spans' earliest start the rules' scan begins.
    pub lookback: Duration,
    /// How the rules' scan is cut into windows (bounded memory, as `check`).
    pub window: WindowOptions,
    /// When and where the findings spill to disk (as `check`).
    pub spill: SpillOptions,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            settle: DEFAULT_SETTLE,
            settle_always: false,
            lookback: DEFAULT_LOOKBACK,
            window: WindowOptions::default(),
            spill: SpillOptions::default(),
        }
    }
}

/// What one increment did (`"incremental"` in `check --since last --format json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// When the previous run saved the state (RFC 3339), `null` on a first run.
    pub previous_run: Option<String>,
    /// Part files checked as new by this run.
    pub new_files: usize,
    /// Spans in those files.
    pub new_spans: u64,
    /// Part files committed less than `--settle` ago, left for the next run.
    pub waiting_files: usize,
    /// Lower bound of the rules' scan (RFC 3339), `null` for the whole store.
    pub window_since: Option<String>,
    /// New findings (reported by this run).
    pub new_findings: usize,
    /// Findings on the new data that an earlier run already reported (not repeated).
    pub already_reported: usize,
    /// Findings in the window on data that is not new (judged by earlier runs; not reported).
    pub outside_new_data: usize,
}

/// The result of one increment: its findings are read from [`Increment::new_findings`].
#[derive(Debug)]
pub struct Increment {
    /// The check's findings, not yet sifted; `None` when nothing was checked.
    candidates: Option<Candidates>,
    first_run: bool,
    /// Coverage of the rules' scan (empty when nothing was checked).
    pub coverage: Vec<Coverage>,
    /// What the rules' scan read; `None` when there was nothing new to check.
    pub scanned: Option<Scanned>,
    /// What the increment did; the counts of findings are filled by [`NewFindings`].
    pub summary: Summary,
    /// When nothing was checked: part files (and WAL damage) that could not be read, so "nothing
    /// new" is never said of a file that was not read. (A checked increment has them in
    /// `scanned`.)
    pub unreadable: Vec<Unreadable>,
}

impl Increment {
    /// Whether the increment checked anything.
    pub fn checked(&self) -> bool {
        self.scanned.is_some()
    }

    /// Nothing checked.
    fn nothing(summary: Summary, unreadable: Vec<Unreadable>) -> Self {
        Self {
            candidates: None,
            first_run: false,
            coverage: Vec::new(),
            scanned: None,
            summary,
            unreadable,
        }
    }

    /// The findings no earlier run reported that touch the new data, in report order, read one
    /// at a time (call once). Their keys go to `keys` as they are read: commit the
    /// [`NewFindings::finish`] update once they were printed, then save the state.
    pub fn new_findings<'k>(&mut self, keys: &'k ReportedKeys) -> NewFindings<'k> {
        NewFindings::new(
            self.candidates.take(),
            keys,
            self.first_run,
            self.summary.clone(),
        )
    }
}

/// Why an increment could not run.
#[derive(Debug, thiserror::Error)]
pub enum IncrementError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    NewPart(#[from] NewPartError),
    #[error(transparent)]
    State(#[from] StateError),
    /// A first run's windowed check failed (other than loading: that is [`Self::Load`]).
    #[error(transparent)]
    Window(WindowError),
}

impl From<WindowError> for IncrementError {
    fn from(e: WindowError) -> Self {
        match e {
            WindowError::Load(e) => IncrementError::Load(e),
            e => IncrementError::Window(e),
        }
    }
}

fn rfc3339_ns(ns: i64) -> String {
    DateTime::<Utc>::from_timestamp_nanos(ns).to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A part file's path relative to the data dir, as the state records it (an object's whole key
/// on object storage).
fn relative(data_dir: &Path, path: &Path) -> String {
    path.strip_prefix(data_dir)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Checks what was committed (and settled) since `state`, updates `state` with the files
/// checked, and returns the check's findings to be sifted ([`Increment::new_findings`]). `now` is
/// the wall clock the files' ages are measured against. The caller prints the new findings,
/// commits their keys and then saves the state.
pub async fn check_increment(
    data_dir: &Path,
    state: &mut CheckState,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&'static dyn Rule],
    options: &Options,
    now: SystemTime,
) -> Result<Increment, IncrementError> {
    let first_run = state.is_first_run();
    // An idle poll costs one listing (a directory walk, or a LIST on object storage): the
    // snapshot (footers, WAL tail) is taken only when a part file is not in the state.
    let remote = match RemoteLocation::of(data_dir) {
        Some(location) => Some(RemoteSource::connect(
            location.map_err(|e| LoadError::Remote(Box::new(e)))?,
        )?),
        None => None,
    };
    let listed: HashSet<String> = match &remote {
        Some(source) => source
            .part_objects()
            .await?
            .iter()
            .map(|m| m.location.to_string())
            .collect(),
        None => {
            if !data_dir.is_dir() {
                return Err(LoadError::MissingDataDir(data_dir.to_path_buf()).into());
            }
            collector::store::verify::part_files(data_dir)
                .map_err(|e| LoadError::List {
                    path: schemas::layout::spans_dir(data_dir),
                    source: e,
                })?
                .iter()
                .map(|p| relative(data_dir, p))
                .collect()
        }
    };
    // Files removed from the store (retention) need no record any more.
    state.checked_files.retain(|f| listed.contains(f));
    if !first_run && listed.iter().all(|f| state.checked_files.contains(f)) {
        return Ok(Increment::nothing(
            Summary {
                previous_run: state.checked_at.clone(),
                ..Summary::default()
            },
            Vec::new(),
        ));
    }
    let snapshot = Snapshot::take(data_dir).await?;
    if first_run && snapshot.files.is_empty() {
        // Nothing committed and never checked: the usual "scanned 0 spans" error, with its cause.
        snapshot.require_data()?;
    }
    // On object storage the writers are other machines, whose locks are not visible: always
    // let fresh objects settle.
    let settling = options.settle_always
        || remote.is_some()
        || collector::store::lock::is_held(data_dir).unwrap_or(true);
    let mut new = Vec::new();
    let mut waiting = 0;
    for f in &snapshot.files {
        let rel = relative(data_dir, &f.path);
        if state.checked_files.contains(&rel) {
            continue;
        }
        let committed = match &f.object {
            Some(object) => Some(object.last_modified.into()),
            None => std::fs::metadata(&f.path).and_then(|m| m.modified()).ok(),
        };
        let age = committed
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or(Duration::ZERO);
        if settling && age < options.settle {
            waiting += 1;
        } else {
            new.push((rel, f));
        }
    }
    let mut summary = Summary {
        previous_run: state.checked_at.clone(),
        waiting_files: waiting,
        ..Summary::default()
    };
    if new.is_empty() {
        return Ok(Increment::nothing(summary, snapshot.all_unreadable()));
    }
    // A first run judges everything: the new spans' ids (every span of the store) are not kept.
    let ids = !first_run;
    let fresh = match &snapshot.remote {
        Some(source) => {
            NewData::read_remote(
                source,
                new.iter().filter_map(|(_, f)| f.object.as_ref()),
                ids,
                options.spill.dir.as_deref(),
            )
            .await?
        }
        None => NewData::read(
            new.iter().map(|(_, f)| f.path.as_path()),
            ids,
            options.spill.dir.as_deref(),
        )?,
    };
    summary.new_files = new.len();
    summary.new_spans = fresh.rows;
    if ids && std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some() {
        eprintln!(
            "new ids: {} + {} sorted runs spilled (at most {} held)",
            fresh.traces.spilled_runs(),
            fresh.spans.spilled_runs(),
            fresh.spans.max_held()
        );
    }
    let mut window = filter.clone();
    if !first_run {
        if let Some(lo) = fresh.min_start_ns {
            let back = i64::try_from(options.lookback.as_nanos()).unwrap_or(i64::MAX);
            let lo = lo.saturating_sub(back);
            window.since_ns = Some(window.since_ns.map_or(lo, |s| s.max(lo)));
            summary.window_since = Some(rfc3339_ns(lo));
        }
    }
    // Window by window, as `check` (a first run over the whole store, a later one over the new
    // data and its look-back); each window's core notes the conversations of the new spans, in
    // an id set as bounded as the new spans' ids (by a 128-bit hash of each conversation id).
    let mut conversations =
        IdSet::<16>::new(id_set::max_held_from_env(), options.spill.dir.as_deref());
    let mut lookup_failed = None;
    let (streamed, scanned, _) = check_windows_with(
        data_dir,
        &window,
        policy,
        rules,
        &projection_for(rules),
        &options.window,
        options.spill.clone(),
        |model, core, _| {
            if first_run || lookup_failed.is_some() {
                return;
            }
            // One lookup per trace of the window: a spilled id set reads a block per lookup.
            let mut is_new = HashMap::new();
            let mut in_window = HashSet::new();
            for (s, c) in model.spans.iter().zip(&model.conversation) {
                let Some(c) = c else { continue };
                if !core.contains(&s.trace_id) {
                    continue;
                }
                let new = match is_new.entry(s.trace_id) {
                    Entry::Occupied(e) => *e.get(),
                    Entry::Vacant(e) => match fresh.has_trace(&s.trace_id) {
                        Ok(new) => *e.insert(new),
                        Err(err) => {
                            lookup_failed = Some(err);
                            return;
                        }
                    },
                };
                if new {
                    in_window.insert(&**c);
                }
            }
            for c in in_window {
                if let Err(err) = conversations.insert(conversation_key(c)) {
                    lookup_failed = Some(err);
                    return;
                }
            }
        },
    )
    .await?;
    if let Some(e) = lookup_failed {
        return Err(NewPartError::Ids(e).into());
    }
    conversations.finish().map_err(NewPartError::Ids)?;
    if ids && std::env::var_os("TRIPLINE_WINDOW_TRACE").is_some() {
        eprintln!(
            "new conversations: {} sorted runs spilled (at most {} held)",
            conversations.spilled_runs(),
            conversations.max_held()
        );
    }
    state
        .checked_files
        .extend(new.into_iter().map(|(rel, _)| rel));
    state.version = STATE_VERSION;
    state.checked_at = Some(DateTime::<Utc>::from(now).to_rfc3339_opts(SecondsFormat::Secs, true));
    Ok(Increment {
        candidates: Some(Candidates {
            findings: streamed.findings,
            touch: Touch {
                all: first_run,
                fresh,
                conversations,
            },
        }),
        first_run,
        coverage: streamed.coverage,
        scanned: Some(scanned),
        summary,
        unreadable: Vec::new(),
    })
}
