//! TL004 broken-trace-propagation: the MCP server's span of a tool call is not in the trace of the
//! host's call.

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{CallKind, McpRole};

pub struct BrokenTracePropagation;

static DOCS: RuleDocs = RuleDocs {
    what: "The MCP server's span of a `tools/call` request is a root, or names a parent that is \
           absent from the store, while the host's side of that call exists in another trace: \
           its MCP client span of the same request (same method, tool and jsonrpc.request.id, \
           overlapping time, same session where known) or its execute_tool span. Trace context \
           did not cross the MCP boundary. Where no host span of the request exists at all \
           (client not instrumented or not exporting) the rule reports it with its own message. \
           Notifications carry no context by design and are never candidates; session set-up \
           requests (initialize, tools/list) run outside agent traces and are not judged.",
    why: "Every server-side view of the call (latency, errors, the server's own tool spans) is \
          cut off from the agent run that caused it: per-conversation debugging, cost and error \
          attribution silently stop at the process boundary.",
    example: "host trace 800540dd...: execute_tool search_tickets > MCP send tools/call \
              search_tickets (jsonrpc.request.id 2); server trace bc0be6fd...: tools/call \
              search_tickets (jsonrpc.request.id 2) with no parent.",
    fix: "Propagate W3C trace context in params._meta (traceparent/tracestate) on every request: \
          keep a propagator configured (OTEL_PROPAGATORS must not be `none`), use a client \
          transport your instrumentation wraps, and extract the context on the server.",
};

/// Tool calls examined / of those, with a client span and no server span / with no MCP span at
/// all (a host's execute_tool alone: nothing says whether context crossed).
const EXAMINED: &str = "examined";
const HOST_WITHOUT_SERVER: &str = "host without server";
const NO_MCP_SPAN: &str = "no mcp span";
/// Parentless server spans of requests other than tools/call, per method.
const OTHER_METHODS: &str = "other methods";

impl Rule for BrokenTracePropagation {
    fn code(&self) -> &'static str {
        "TL004"
    }
    fn name(&self) -> &'static str {
        "broken-trace-propagation"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for call in input.tool_calls().filter(|c| input.owns(c.anchor)) {
            let has_server = call
                .members
                .iter()
                .any(|&m| model.roles[m] == Some(McpRole::Server));
            let has_client = call
                .members
                .iter()
                .any(|&m| model.roles[m] == Some(McpRole::Client));
            out.add(EXAMINED, 1);
            if !has_server && has_client {
                out.add(HOST_WITHOUT_SERVER, 1);
            } else if !has_server {
                out.add(NO_MCP_SPAN, 1);
            }
        }
        for o in model.orphans.iter().filter(|o| input.owns(o.span)) {
            let s = &model.spans[o.span];
            let kind = model.call_of_span[o.span].map(|c| &model.calls[c].kind);
            if kind != Some(&CallKind::Tool) {
                let m = s.mcp_method.as_deref().unwrap_or("?");
                out.add_keyed(OTHER_METHODS, m, 1);
                continue;
            }
            let tool = model.call_of_span[o.span]
                .and_then(|c| model.calls[c].tool.as_deref())
                .or(s.tool_name.as_deref());
            let label = tool.unwrap_or("?");
            let place = if let Some(session) = o.under_session {
                let sess = &model.spans[session];
                format!(
                    "runs under `{}` ({}), a span of the server's own trace {} that no host span is above",
                    sess.name, sess.span_id, s.trace_id
                )
            } else if o.parent_absent {
                format!(
                    "names parent {} which is absent from the store",
                    fmt_parent(s)
                )
            } else {
                format!("is the root of trace {}", s.trace_id)
            };
            let finding = match &o.matched {
                Some(m) => {
                    let host = m.host_span().map(|h| &model.spans[h]);
                    let what = if m.client_span.is_some() {
                        "client span"
                    } else {
                        "execute_tool span"
                    };
                    let host_desc = host.map_or(String::new(), |h| {
                        format!(" {} in trace {}", h.span_id, h.trace_id)
                    });
                    Finding::at(
                        self,
                        model,
                        o.span,
                        format!(
                            "server span of tools/call {label} {place}, although the host's {what}{host_desc} made the request: trace context did not cross the MCP boundary"
                        ),
                    )
                    .with_related(
                        model,
                        m.client_span.into_iter().chain(m.execute_span),
                    )
                }
                None => Finding::at(
                    self,
                    model,
                    o.span,
                    format!(
                        "server span of tools/call {label} {place} and no host span of this request is in the store: the client is not instrumented, not exporting, or not propagating context"
                    ),
                ),
            };
            out.findings.push(finding.with_tool(tool));
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (examined, host_without_server, no_mcp) = (
            partial.count(EXAMINED),
            partial.count(HOST_WITHOUT_SERVER),
            partial.count(NO_MCP_SPAN),
        );
        let mut cov = Coverage::new(examined);
        cov.not_observable(
            host_without_server,
            format!(
                "server side not exported for {host_without_server} of {examined} tool calls: propagation cannot be checked"
            ),
        );
        cov.not_observable(
            no_mcp,
            format!(
                "no MCP client or server span for {no_mcp} of {examined} tool calls (only the host's execute_tool): propagation cannot be checked"
            ),
        );
        if let Some(other_methods) = partial.keyed.get(OTHER_METHODS) {
            let list: Vec<String> = other_methods
                .iter()
                .map(|(m, n)| format!("{m} x{n}"))
                .collect();
            cov.note(format!(
                "parentless server spans of other requests not judged (session set-up runs outside agent traces): {}",
                list.join(", ")
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

fn fmt_parent(s: &crate::model::SpanRow) -> String {
    s.parent_span_id.map_or_else(String::new, |p| p.to_string())
}
