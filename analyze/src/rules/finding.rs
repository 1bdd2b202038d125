//! Findings and coverage: what a rule reports, in the shape `check --format json` promises.

use std::collections::HashSet;

use serde::Serialize;

use super::{Rule, Severity};
use crate::model::{Call, Model, SpanId, TraceId};

/// One finding. Serialised exactly as docs/json-output.md's contract: `rule`, `name`, `severity`,
/// `trace_id` / `span_id` (lowercase hex), `conversation_id`, `tool`, `message`, `related`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    #[serde(serialize_with = "ser_display")]
    pub trace_id: TraceId,
    #[serde(serialize_with = "ser_display")]
    pub span_id: SpanId,
    pub conversation_id: Option<String>,
    pub tool: Option<String>,
    pub message: String,
    /// Other spans that are part of the evidence (lowercase hex span ids).
    #[serde(serialize_with = "ser_display_vec")]
    pub related: Vec<SpanId>,
}

fn ser_display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn ser_display_vec<T: std::fmt::Display, S: serde::Serializer>(
    v: &[T],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(Displayed))
}

/// A value serialised as its `Display` text, written straight to the serializer (no `String`
/// per value).
struct Displayed<'a, T>(&'a T);

impl<T: std::fmt::Display> Serialize for Displayed<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self.0)
    }
}

impl Finding {
    /// A finding of `rule` on span `span` of `model`; the conversation is the span's (inherited).
    pub fn at(rule: &dyn Rule, model: &Model, span: usize, message: impl Into<String>) -> Self {
        let s = &model.spans[span];
        Self {
            rule: rule.code(),
            name: rule.name(),
            severity: rule.severity(),
            trace_id: s.trace_id,
            span_id: s.span_id,
            conversation_id: model
                .conversation
                .get(span)
                .and_then(|c| c.as_deref())
                .map(str::to_string),
            tool: s.tool_name.as_deref().map(str::to_string),
            message: message.into(),
            related: Vec::new(),
        }
    }

    /// A finding on a logical call: at its anchor span, naming its tool, with every member span
    /// (execute_tool, MCP client, MCP server) as related.
    pub fn for_call(
        rule: &dyn Rule,
        model: &Model,
        call: &Call,
        message: impl Into<String>,
    ) -> Self {
        Self::at(rule, model, call.anchor, message)
            .with_tool(call.tool.as_deref())
            .with_related(model, call.members.iter().copied())
    }

    pub fn with_tool(mut self, tool: Option<&str>) -> Self {
        if let Some(t) = tool {
            self.tool = Some(t.to_string());
        }
        self
    }

    /// Adds related spans (deduplicated, never the finding's own span), in the order given.
    /// The ids already listed are kept in a set while adding: a finding about a long agent run
    /// relates tens of thousands of spans, and a scan of the list per span made that quadratic.
    pub fn with_related(mut self, model: &Model, spans: impl IntoIterator<Item = usize>) -> Self {
        let mut listed: HashSet<SpanId, foldhash::fast::RandomState> =
            self.related.iter().copied().collect();
        listed.insert(self.span_id);
        for i in spans {
            let id = model.spans[i].span_id;
            if listed.insert(id) {
                self.related.push(id);
            }
        }
        self
    }
}

/// How much of the data a rule needed was there.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Coverage {
    pub rule: &'static str,
    /// Candidates examined (spans, calls, conversations: the rule's docs say which).
    pub examined: usize,
    /// Candidates that lacked the data the rule needs.
    pub not_observable: usize,
    /// Why, e.g. "tool result not captured on 14 of 14 tools/call calls".
    pub reasons: Vec<String>,
}

impl Coverage {
    pub fn new(examined: usize) -> Self {
        Self {
            examined,
            ..Self::default()
        }
    }

    /// Records `count` candidates that lacked data, with the reason (skipped when `count == 0`).
    pub fn not_observable(&mut self, count: usize, reason: impl Into<String>) {
        if count > 0 {
            self.not_observable += count;
            self.reasons.push(reason.into());
        }
    }

    /// A note that does not change the counts (e.g. "no policy file: annotations used").
    pub fn note(&mut self, reason: impl Into<String>) {
        self.reasons.push(reason.into());
    }
}

/// What one rule returns.
#[derive(Clone, Debug, Default)]
pub struct RuleOutcome {
    pub findings: Vec<Finding>,
    pub coverage: Coverage,
}

impl RuleOutcome {
    pub fn new(findings: Vec<Finding>, coverage: Coverage) -> Self {
        Self { findings, coverage }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SpanRow;

    #[test]
    fn related_spans_keep_their_order_once_each_and_never_the_finding_itself() {
        let spans: Vec<SpanRow> = (0..6u8)
            .map(|n| SpanRow {
                trace_id: TraceId([1; 16]),
                span_id: SpanId([n; 8]),
                start_ns: i64::from(n),
                name: "s".into(),
                ..SpanRow::default()
            })
            .collect();
        let model = Model::build(spans);
        let at = |n: u8| {
            model
                .spans
                .iter()
                .position(|s| s.span_id == SpanId([n; 8]))
                .unwrap()
        };
        let finding = Finding {
            rule: "TL000",
            name: "test",
            severity: Severity::Info,
            trace_id: TraceId([1; 16]),
            span_id: SpanId([0; 8]),
            conversation_id: None,
            tool: None,
            message: String::new(),
            related: vec![SpanId([4; 8])],
        };
        let f = finding.with_related(&model, [at(3), at(0), at(4), at(1), at(3), at(5), at(1)]);
        let ids: Vec<u8> = f.related.iter().map(|s| s.0[0]).collect();
        assert_eq!(ids, [4, 3, 1, 5]);
        // Tens of thousands of related spans, each once (quadratic while each addition scanned
        // the list).
        let many: Vec<SpanRow> = (0..60_000u32)
            .map(|n| SpanRow {
                trace_id: TraceId([2; 16]),
                span_id: SpanId((u64::from(n) + 1).to_be_bytes()),
                start_ns: i64::from(n),
                name: "s".into(),
                ..SpanRow::default()
            })
            .collect();
        let model = Model::build(many);
        let f = Finding {
            related: Vec::new(),
            ..f
        }
        .with_related(&model, (0..60_000).chain(0..60_000));
        assert_eq!(f.related.len(), 60_000);
    }
}
