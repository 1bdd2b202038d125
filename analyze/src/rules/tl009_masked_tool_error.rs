//! TL009 masked-tool-error: a tool result says `isError: true` but the span reports success.
//!
//! Why a rule: MCP tool errors are results, not exceptions. An instrumentation (or a host) that
//! records the result but leaves the span status OK/unset and sets no `error.type` makes the
//! failure invisible to every error-rate dashboard and alert built on span status.

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::StatusCode;

pub struct MaskedToolError;

/// The call a span below a call's span belongs to as its transport (a span of no call of its
/// own whose facts the call absorbed, such as OpenLIT's `mcp transport/request` under the client
/// span): the nearest in-trace ancestor's call.
fn transport_call(model: &crate::model::Model, i: usize) -> Option<usize> {
    let mut cur = model.parent[i];
    for _ in 0..64 {
        let p = cur?;
        if let Some(c) = model.call_of_span[p] {
            return Some(c);
        }
        cur = model.parent[p];
    }
    None
}

static DOCS: RuleDocs = RuleDocs {
    what: "A span carries a tool result with isError: true (derived from the captured result) \
           while its status is OK or unset and it has no error.type, and no other span of the same \
           call (client, server, execute_tool) reports the error. One finding per call. \
           Candidates are tool calls; a call whose spans carry neither the result nor an error \
           classification is not observable. error.type=tool_error is the conventions' mark of an \
           isError result (a tool error, shown); a JSON-RPC error (rpc.response.status_code) \
           has no result, so no isError to mask.",
    why: "Error rates, SLOs and alerts count spans with status ERROR (or an error.type). A tool \
          that fails with isError: true on a span that says OK is counted as a success: the \
          failure is only visible to someone reading payloads.",
    example: "execute_tool create_support_case, status UNSET, gen_ai.tool.call.result \
              {\"content\":[{\"type\":\"text\",\"text\":\"order not found\"}],\"isError\":true}.",
    fix: "When a tool result has isError: true, set span status ERROR and error.type=tool_error \
          (the MCP semantic conventions' value) on the span that records the result.",
};

/// Tool calls examined / with neither result nor error type captured / shown as errors elsewhere.
const CALLS: &str = "calls";
const BLIND: &str = "blind";
const SEEN_ELSEWHERE: &str = "seen elsewhere";

impl Rule for MaskedToolError {
    fn code(&self) -> &'static str {
        "TL009"
    }
    fn name(&self) -> &'static str {
        "masked-tool-error"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for call in input.tool_calls().filter(|c| input.owns(c.anchor)) {
            out.add(CALLS, 1);
            out.add(BLIND, usize::from(call.is_error.is_none()));
        }
        // Judged per call: when the client and the server span of one call both carry the
        // masked result, the user sees one masked error, so one finding (at the first span).
        let mut reported_calls = std::collections::HashSet::new();
        for (i, s) in model.spans.iter().enumerate() {
            if s.result_is_error != Some(true)
                || s.status() == StatusCode::Error
                || s.error_type.is_some()
            {
                continue;
            }
            let call_index = model.call_of_span[i].or_else(|| transport_call(model, i));
            let call = call_index.and_then(|c| model.calls.get(c));
            // Another span of the same call that does report the error: dashboards see it.
            let visible = call.is_some_and(|c| {
                c.members.iter().any(|&m| {
                    model.spans[m].status() == StatusCode::Error
                        || model.spans[m].error_type.is_some()
                })
            });
            if visible {
                let first = call_index.is_some_and(|c| reported_calls.insert(c));
                out.add(SEEN_ELSEWHERE, usize::from(first && input.owns(i)));
                continue;
            }
            if let Some(c) = call_index {
                if !reported_calls.insert(c) {
                    continue;
                }
            }
            if !input.owns(i) {
                continue;
            }
            let tool = call.and_then(|c| c.tool.as_deref());
            let message = format!(
                "tool result has isError: true but the span status is {} and there is no error.type: \
                 error-rate dashboards count it as a success",
                s.status().as_str()
            );
            out.findings
                .push(Finding::at(self, model, i, message).with_tool(tool));
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (calls, blind) = (partial.count(CALLS), partial.count(BLIND));
        let mut cov = Coverage::new(calls);
        cov.not_observable(
            blind,
            format!(
                "neither the tool result (isError) nor error.type captured on {blind} of {calls} tool calls"
            ),
        );
        let seen_elsewhere = partial.count(SEEN_ELSEWHERE);
        if seen_elsewhere > 0 {
            cov.note(format!(
                "{seen_elsewhere} tool calls with isError: true on a span reporting success are shown as errors by another span of the same call (not masked)"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::span::{SpanKindField, StatusField};
    use crate::model::{Model, SpanId, SpanKind, SpanRow, TraceId};
    use crate::policy::Policy;

    fn span(id: u8, parent: Option<u8>, kind: SpanKind, status: StatusCode) -> SpanRow {
        SpanRow {
            trace_id: TraceId([1; 16]),
            span_id: SpanId([id; 8]),
            parent_span_id: parent.map(|p| SpanId([p; 8])),
            start_ns: i64::from(id),
            end_ns: 100,
            kind: SpanKindField(kind),
            status: StatusField(status),
            mcp_method: Some("tools/call".into()),
            tool_name: Some("lookup".into()),
            result_is_error: Some(true),
            ..SpanRow::default()
        }
    }

    fn findings(spans: Vec<SpanRow>) -> (usize, Vec<String>) {
        let model = Model::build(spans);
        let policy = Policy::default();
        let out = MaskedToolError.check(&RuleInput::new(&model, &policy));
        (out.findings.len(), out.coverage.reasons)
    }

    #[test]
    fn one_finding_per_call_and_none_when_another_span_shows_the_error() {
        // client and server span of one call both carry the masked result: one finding
        let (n, _) = findings(vec![
            span(1, None, SpanKind::Client, StatusCode::Unset),
            span(2, Some(1), SpanKind::Server, StatusCode::Unset),
        ]);
        assert_eq!(n, 1);
        // the server span reports the error: dashboards see it, not masked
        let (n, reasons) = findings(vec![
            span(1, None, SpanKind::Client, StatusCode::Unset),
            span(2, Some(1), SpanKind::Server, StatusCode::Error),
        ]);
        assert_eq!(n, 0);
        assert!(reasons
            .iter()
            .any(|r| r.contains("another span of the same call")));
    }
}
