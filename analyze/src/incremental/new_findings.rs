//! What an increment prints: of the check's findings (streamed in report order, spilled to disk
//! past a bound, as `check` does), those that touch the new part files and that no run reported
//! before, one at a time.
//!
//! Why an iterator: the findings of a first run over a large store do not fit in memory, and
//! neither do their keys. The check's [`SortedFindings`] merge gives them in report order; each
//! is kept or counted (outside the new data, already reported) as the output asks for the next
//! one, and its key goes into the rule's key file on the way ([`KeyMerge`]). The summary's
//! counts are final once the iterator is drained, so formats that write it (JSON) write it after
//! the findings.

use super::id_set::{conversation_key, IdSet, IdSetError};
use super::reported::{KeyMerge, KeyUpdate, ReportedKeys};
use super::state::{CheckState, StateError};
use super::{NewData, Summary};
use crate::rules::spill::{SortedFindings, SpillError};
use crate::rules::{Finding, Severity};

/// Reading a finding failed: a spilled run, or a key file.
#[derive(Debug, thiserror::Error)]
pub enum FindingsError {
    #[error(transparent)]
    Spill(#[from] SpillError),
    #[error(transparent)]
    Keys(#[from] StateError),
    /// A new span's id could not be looked up in its spilled set.
    #[error(transparent)]
    Ids(#[from] IdSetError),
    /// An earlier error stopped the findings: the run records nothing.
    #[error("the findings of this run could not all be read; nothing was recorded, the next run checks the same part files again")]
    Incomplete,
}

/// Which findings concern the new part files.
#[derive(Debug)]
pub(super) struct Touch {
    /// A first run: everything is new.
    pub all: bool,
    pub fresh: NewData,
    /// Conversations the new spans belong to (inherited ids included, as the model resolves
    /// them), by [`conversation_key`].
    pub conversations: IdSet<16>,
}

impl Touch {
    fn touches(&self, f: &Finding) -> Result<bool, IdSetError> {
        if self.all {
            return Ok(true);
        }
        if let Some(c) = f.conversation_id.as_deref() {
            if self.conversations.contains(&conversation_key(c))? {
                return Ok(true);
            }
        }
        if self.fresh.has_trace(&f.trace_id)? || self.fresh.has_span(&f.span_id)? {
            return Ok(true);
        }
        for s in &f.related {
            if self.fresh.has_span(s)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The check's findings before they are sifted (see [`super::Increment::new_findings`]).
#[derive(Debug)]
pub(super) struct Candidates {
    pub findings: SortedFindings,
    pub touch: Touch,
}

/// The new findings of an increment, in report order (see the module docs).
pub struct NewFindings<'k> {
    candidates: Option<Candidates>,
    merge: KeyMerge<'k>,
    summary: Summary,
    first_run: bool,
    /// New findings by severity, in [`SEVERITIES`] order.
    counts: [u64; 4],
    failed: bool,
}

/// Severities in the order of their `as usize` values.
const SEVERITIES: [Severity; 4] = [
    Severity::Info,
    Severity::Warning,
    Severity::Error,
    Severity::Critical,
];

impl<'k> NewFindings<'k> {
    pub(super) fn new(
        candidates: Option<Candidates>,
        keys: &'k ReportedKeys,
        first_run: bool,
        summary: Summary,
    ) -> Self {
        Self {
            candidates,
            merge: keys.merge(first_run),
            summary,
            first_run,
            counts: [0; 4],
            failed: false,
        }
    }

    /// The increment's summary, its counts as far as the findings were read (final once they
    /// all were).
    pub fn summary(&self) -> Summary {
        self.summary.clone()
    }

    /// New findings at or above `threshold`, as far as they were read.
    pub fn count_at_or_above(&self, threshold: Severity) -> u64 {
        SEVERITIES
            .iter()
            .zip(&self.counts)
            .filter(|(s, _)| **s >= threshold)
            .map(|(_, n)| n)
            .sum()
    }

    /// Reads what the output left unread (a closed pipe), so every key is recorded and the
    /// counts are final.
    pub fn drain(&mut self) -> Result<(), FindingsError> {
        for f in self.by_ref() {
            f?;
        }
        Ok(())
    }

    /// Ends the merge (reading what is left, see [`Self::drain`]): the key files to put in place
    /// once the findings were printed, and the state's count of reported findings.
    pub fn finish(mut self, state: &mut CheckState) -> Result<KeyUpdate, FindingsError> {
        self.drain()?;
        if self.failed {
            return Err(FindingsError::Incomplete);
        }
        let update = self.merge.finish()?;
        state.reported_keys = if self.first_run {
            update.added()
        } else {
            state.reported_keys + update.added()
        };
        Ok(update)
    }
}

impl Iterator for NewFindings<'_> {
    type Item = Result<Finding, FindingsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let c = self.candidates.as_mut()?;
        loop {
            let f = match c.findings.next()? {
                Ok(f) => f,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.into()));
                }
            };
            match c.touch.touches(&f) {
                Ok(true) => {}
                Ok(false) => {
                    self.summary.outside_new_data += 1;
                    continue;
                }
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.into()));
                }
            }
            match self.merge.insert(&f) {
                Ok(true) => {
                    self.summary.new_findings += 1;
                    self.counts[f.severity as usize] += 1;
                    return Some(Ok(f));
                }
                Ok(false) => self.summary.already_reported += 1,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.into()));
                }
            }
        }
    }
}
