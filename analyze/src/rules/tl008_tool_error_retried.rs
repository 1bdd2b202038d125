//! TL008 tool-error-retried: a tool call that returned `isError: true` issued again with the same
//! tool and identical arguments.

use std::collections::BTreeMap;

use super::groups::Groups;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, Scope};

pub struct ToolErrorRetried;

static DOCS: RuleDocs = RuleDocs {
    what: "A tool call that returned isError: true is issued again with the same tool and \
           identical arguments (same tool_call_arguments_digest) in the same conversation (else \
           agent run, else trace), by the runtime or by the model after another turn. Where \
           arguments were not captured, only runs of three or more consecutive errors of the same \
           tool count; the other calls are reported as not observable. A tool error is isError: \
           true in the captured result or error.type=tool_error; a JSON-RPC error \
           (rpc.response.status_code, or a numeric error.type) is a protocol error, may be \
           transient, and retrying it is not reported. Calls are grouped by conversation id, \
           then agent run, then trace, never by MCP session (2026-07-28 has none).",
    why: "isError is a business error (unknown id, validation failure): repeating the identical \
          call cannot fix it. It burns tokens, latency and rate limits, and usually means the \
          error text never reached the model or the runtime treats tool errors as transport \
          errors.",
    example:
        "get_ticket({\"ticket_id\":\"T-9999\"}) -> isError \"Unknown ticket id\", then the same \
              call three more times in the same invoke_agent run.",
    fix: "Do not retry isError results automatically; pass the error text to the model so it can \
          correct the arguments, and cap identical calls per run.",
};

/// Tool calls examined / unjudged for lack of arguments / without a captured result.
const CALLS: &str = "calls";
const NO_ARGS_UNJUDGED: &str = "no arguments, unjudged";
const NO_RESULT: &str = "no result";
/// Tool calls with arguments but no error status (isError, status, error.type): not judgeable.
const NO_STATUS_WITH_ARGS: &str = "no status, with arguments";
/// Tool calls that failed with a JSON-RPC error, not isError.
const PROTOCOL: &str = "protocol errors";

impl Rule for ToolErrorRetried {
    fn code(&self) -> &'static str {
        "TL008"
    }
    fn name(&self) -> &'static str {
        "tool-error-retried"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let calls: Vec<&Call> = input.tool_calls().collect();
        let mut out = Partial::default();
        out.add(CALLS, calls.iter().filter(|c| input.owns(c.anchor)).count());
        out.add(
            PROTOCOL,
            calls
                .iter()
                .filter(|c| {
                    input.owns(c.anchor) && c.jsonrpc_error.is_some() && c.is_error != Some(true)
                })
                .count(),
        );
        let mut findings = Vec::new();
        // (scope, tool) -> calls in start order.
        let mut groups: Groups<(Scope, &str), &Call> = Groups::default();
        for call in &calls {
            let tool = call.tool.as_deref().unwrap_or_default();
            groups.push((model.call_scope(call), tool), call);
        }
        let mut no_args_unjudged = 0;
        let mut no_result = 0;
        let mut no_status_with_args = 0;
        // Each finding is on a call of one group, so the groups' order does not reach the report.
        for ((_, tool), seq) in &groups.into_first_seen() {
            // A scope (conversation, agent run, trace) is judged by the window owning its first
            // call: its calls are all in that window.
            if !seq.first().is_some_and(|c| input.owns(c.anchor)) {
                continue;
            }
            no_result += seq.iter().filter(|c| c.is_error.is_none()).count();
            // With arguments but no error status: whether it failed cannot be seen (the calls
            // without arguments are counted below, with the runs they could not be judged in).
            no_status_with_args += seq
                .iter()
                .filter(|c| c.is_error.is_none() && c.arguments_digest.is_some())
                .count();
            // With arguments: group identical calls, fire when an error is followed by a re-call.
            let mut by_args: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
            for c in seq {
                if let Some(d) = c.arguments_digest.as_deref() {
                    by_args.entry(d).or_default().push(c);
                }
            }
            for same in by_args.values() {
                let Some(first_err) = same.iter().position(|c| c.is_error == Some(true)) else {
                    continue;
                };
                let retries = &same[first_err + 1..];
                if retries.is_empty() {
                    continue;
                }
                let errors = same.iter().filter(|c| c.is_error == Some(true)).count();
                let first = same[first_err];
                findings.push(
                    Finding::at(
                        self,
                        model,
                        first.anchor,
                        format!(
                            "{tool} returned isError and was called again {} time(s) with identical arguments ({} calls, {errors} errors)",
                            retries.len(),
                            same.len()
                        ),
                    )
                    .with_tool(Some(tool))
                    .with_related(model, retries.iter().map(|c| c.anchor)),
                );
            }
            // Without arguments: runs of consecutive errors.
            let threshold = input.options.blind_retry_threshold.max(2);
            let mut run: Vec<&Call> = Vec::new();
            let flush = |run: &mut Vec<&Call>,
                         findings: &mut Vec<Finding>,
                         unjudged: &mut usize| {
                if run.len() >= threshold {
                    findings.push(
                        Finding::at(
                            self,
                            model,
                            run[0].anchor,
                            format!(
                                "{tool} returned isError on {} consecutive calls (arguments not captured, so they may differ)",
                                run.len()
                            ),
                        )
                        .with_tool(Some(tool))
                        .with_related(model, run[1..].iter().map(|c| c.anchor)),
                    );
                } else {
                    *unjudged += run.len();
                }
                run.clear();
            };
            for c in seq {
                if c.arguments_digest.is_some() {
                    flush(&mut run, &mut findings, &mut no_args_unjudged);
                    continue;
                }
                if c.is_error == Some(true) {
                    run.push(c);
                } else {
                    flush(&mut run, &mut findings, &mut no_args_unjudged);
                    no_args_unjudged += 1;
                }
            }
            flush(&mut run, &mut findings, &mut no_args_unjudged);
        }
        out.add(NO_ARGS_UNJUDGED, no_args_unjudged);
        out.add(NO_RESULT, no_result);
        out.add(NO_STATUS_WITH_ARGS, no_status_with_args);
        out.findings = findings;
        out
    }

    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome {
        let (calls, no_args_unjudged, no_result) = (
            partial.count(CALLS),
            partial.count(NO_ARGS_UNJUDGED),
            partial.count(NO_RESULT),
        );
        let mut cov = Coverage::new(calls);
        cov.not_observable(
            no_args_unjudged,
            format!(
                "arguments not captured on {no_args_unjudged} of {calls} tool calls (only runs of {}+ consecutive errors judged)",
                input.options.blind_retry_threshold.max(2)
            ),
        );
        let no_status_with_args = partial.count(NO_STATUS_WITH_ARGS);
        cov.not_observable(
            no_status_with_args,
            format!(
                "error status (isError, span status or error.type) not captured on {no_status_with_args} of {calls} tool calls with arguments: whether they failed cannot be seen"
            ),
        );
        let no_result = no_result - no_status_with_args.min(no_result);
        if no_result > 0 {
            cov.note(format!(
                "error status (isError) not captured on {no_result} of {calls} tool calls"
            ));
        }
        let protocol = partial.count(PROTOCOL);
        if protocol > 0 {
            cov.note(format!(
                "{protocol} tool calls failed with a JSON-RPC error (rpc.response.status_code), not isError: protocol errors, retrying them is not reported"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}
