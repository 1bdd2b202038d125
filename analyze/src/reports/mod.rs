//! `tripline report tools|conversations|guardrails|skills|propagation`: aggregate views over the trace model.
//!
//! Why separate from the rules: rules answer "what is wrong", reports answer "what happened" (how
//! often each tool ran and failed, how long it took, who approved what). Both read the same
//! [`Model`], so a report counts logical calls (host + MCP client + MCP server spans of one call
//! once) exactly like the rules do. Every report carries `notes` that say what could not be
//! observed, so an empty column is never mistaken for zero. The tables and JSON are printed by
//! `render::render_report`.
//!
//! Each report is a sum over calls and spans: its `Totals` count what one model owns ([`Owned`]:
//! all of it, or one window's core traces, never the overlap), merge across windows and are
//! turned into rows once ([`Aggregate`]). So `report` reads the store in windows as `check`
//! does, with the rows one model of the whole store gives.

pub mod conversations;
pub mod guardrails;
pub mod propagation;
pub mod skills;
pub mod tools;

use serde::Serialize;

use crate::model::{Model, TraceSet};

/// Which report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportKind {
    /// Per tool and MCP server: calls, errors, latency, structured results, approvals.
    Tools,
    /// Per conversation: traces, agent runs, model and tool calls, errors, duration.
    Conversations,
    /// Guardrail decisions by guardrail and skill.
    Guardrails,
    /// Per skill: invocations, tool and model calls, errors, guardrail decisions.
    Skills,
    /// Per MCP client → server service pair: requests, how many kept the host's trace and how
    /// (params._meta, HTTP header only, re-rooted by a gateway, none), libraries, the fix.
    Propagation,
}

impl ReportKind {
    /// Columns the report reads beyond the base projection.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Self::Propagation => propagation::COLUMNS,
            _ => &[],
        }
    }
}

/// Which spans of a model a report counts (a call counts with its anchor span): every span of
/// one model of the whole selection, or those of a window's core traces (the overlap is context,
/// counted by the window that owns it).
pub struct Owned {
    /// Per span of the model; `None`: all.
    mask: Option<Vec<bool>>,
}

impl Owned {
    /// Every span.
    pub fn all() -> Self {
        Self { mask: None }
    }

    /// The spans of `model` whose trace is in `core`.
    pub fn core(model: &Model, core: &TraceSet) -> Self {
        Self {
            mask: Some(
                model
                    .spans
                    .iter()
                    .map(|s| core.contains(&s.trace_id))
                    .collect(),
            ),
        }
    }

    /// Whether span `i` is counted here.
    pub fn span(&self, i: usize) -> bool {
        self.mask.as_ref().is_none_or(|m| m[i])
    }
}

/// One report's tallies so far, window after window.
pub enum Aggregate {
    Tools(tools::Totals),
    Conversations(conversations::Totals),
    Guardrails(guardrails::Totals),
    Skills(skills::Totals),
    Propagation(propagation::Totals),
}

/// A finished report of any kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Built {
    Tools(Report<tools::ToolRow>),
    Conversations(Report<conversations::ConversationRow>),
    Guardrails(Report<guardrails::GuardrailRow>),
    Skills(Report<skills::SkillRow>),
    Propagation(Report<propagation::PropagationRow>),
}

impl Aggregate {
    /// Nothing counted yet.
    pub fn new(kind: ReportKind) -> Self {
        match kind {
            ReportKind::Tools => Self::Tools(Default::default()),
            ReportKind::Conversations => Self::Conversations(Default::default()),
            ReportKind::Guardrails => Self::Guardrails(Default::default()),
            ReportKind::Skills => Self::Skills(Default::default()),
            ReportKind::Propagation => Self::Propagation(Default::default()),
        }
    }

    /// Counts what `owned` selects of `model` (one window's core, or the whole model).
    pub fn add(&mut self, model: &Model, owned: &Owned) {
        match self {
            Self::Tools(t) => t.add(model, owned),
            Self::Conversations(t) => t.add(model, owned),
            Self::Guardrails(t) => t.add(model, owned),
            Self::Skills(t) => t.add(model, owned),
            Self::Propagation(t) => t.add(model, owned),
        }
    }

    /// The rows and notes.
    pub fn finish(self) -> Built {
        match self {
            Self::Tools(t) => Built::Tools(t.finish()),
            Self::Conversations(t) => Built::Conversations(t.finish()),
            Self::Guardrails(t) => Built::Guardrails(t.finish()),
            Self::Skills(t) => Built::Skills(t.finish()),
            Self::Propagation(t) => Built::Propagation(t.finish()),
        }
    }
}

/// Report `kind` over one model (every span counted).
pub fn build(kind: ReportKind, model: &Model) -> Built {
    let mut a = Aggregate::new(kind);
    a.add(model, &Owned::all());
    a.finish()
}

/// A report: rows plus notes on what could not be observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report<R> {
    pub rows: Vec<R>,
    pub notes: Vec<String>,
}

/// Nearest-rank percentile (`p` in 0..=100) of sorted values; None when empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// Nanoseconds as milliseconds, rounded to 0.001 ms.
pub fn ms(ns: i64) -> f64 {
    (ns as f64 / 1_000.0).round() / 1_000.0
}

/// The skill a span runs under: its own `skill.name`, else the nearest ancestor's (following
/// stitched edges).
pub fn skill_of(model: &Model, span: usize) -> Option<&str> {
    let mut cur = Some(span);
    let mut steps = 0;
    while let Some(i) = cur {
        if let Some(s) = model.spans[i].skill_name().map(|v| v.as_str()) {
            return Some(s);
        }
        steps += 1;
        if steps > 10_000 {
            break;
        }
        cur = model.effective_parent(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(5.0));
        assert_eq!(percentile(&v, 95.0), Some(10.0));
        assert_eq!(percentile(&v, 99.0), Some(10.0));
        assert_eq!(percentile(&[7.0], 50.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 0.0), Some(1.0));
    }

    #[test]
    fn ms_rounds_to_microseconds() {
        assert_eq!(ms(12_345_678), 12.346);
        assert_eq!(ms(0), 0.0);
    }
}
