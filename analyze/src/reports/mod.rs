//! `tripline report tools|conversations|guardrails|skills|propagation`: aggregate views over the trace model.
//!
//! Why separate from the rules: rules answer "what is wrong", reports answer "what happened" (how
//! often each tool ran and failed, how long it took, who approved what). Both read the same
//! [`Model`], so a report counts logical calls (host + MCP client + MCP server spans of one call
//! once) exactly like the rules do. Every report carries `notes` that say what could not be
//! observed, so an empty column is never mistaken for zero. The tables and JSON are printed by
//! `render::render_report`.

pub mod conversations;
pub mod guardrails;
pub mod propagation;
pub mod skills;
pub mod tools;

use serde::Serialize;

use crate::model::Model;

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
        if let Some(s) = model.spans[i].skill_name.as_deref() {
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
