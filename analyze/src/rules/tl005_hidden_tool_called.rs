//! TL005 hidden-tool-called: a tool executed that the model could not see, or that the agent's
//! allowlist excludes.

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::McpRole;
use crate::policy::tool_part;

pub struct HiddenToolCalled;

static DOCS: RuleDocs = RuleDocs {
    what: "A tool executed that the model could not see: it is absent from \
           gen_ai.tool.definitions of the preceding model call in the same agent run (or, when \
           no model call records them, from the tools of the agent run span); or the \
           policy file's allowlist for the agent ([agents.<name>] allow = [...]) excludes it.",
    why: "The host dispatched a call outside the catalog it showed the model (a stale tool list, \
          a prompt-injected tool name the host resolved anyway, or a host bug). Allowlists and \
          task-scoped catalogs only protect anything if the host enforces them at dispatch.",
    example: "chat span lists find_contact_by_email and get_order_summary; the next execute_tool \
              in the same invoke_agent run is create_support_case.",
    fix: "Validate every tool call against the definitions sent to the model (and the agent's \
          allowlist) before dispatching it; reject and log calls to anything else.",
};

/// Tool calls examined / without a host span / without a preceding model call with definitions.
const CALLS: &str = "calls";
const NO_HOST: &str = "no host";
const NO_DEFS: &str = "no definitions";

impl Rule for HiddenToolCalled {
    fn code(&self) -> &'static str {
        "TL005"
    }
    fn name(&self) -> &'static str {
        "hidden-tool-called"
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
            out.add(CALLS, 1);
            let host_side = call.members.iter().any(|&m| {
                model.spans[m].is_execute_tool() || model.roles[m] == Some(McpRole::Client)
            });
            if !host_side {
                out.add(NO_HOST, 1);
                continue;
            }
            let tool = call.tool.as_deref().unwrap_or("?");
            let mut reasons = Vec::new();
            let mut related = Vec::new();
            let run = model.call_agent_run(call);
            // The tools the model could see: those of the preceding model call, else (a library
            // that records them only on the agent span, as Strands does) those of the run.
            let shown = model
                .preceding_model_call(call)
                .into_iter()
                .chain(run)
                .find_map(|m| Some((m, model.spans[m].tool_definitions.as_ref()?)));
            match shown {
                Some((m, defs)) => {
                    let visible = defs
                        .iter()
                        .any(|d| d.name == tool || tool_part(&d.name) == tool_part(tool));
                    if !visible {
                        let what = if model.spans[m].is_model_call() {
                            "gen_ai.tool.definitions of the preceding model call"
                        } else {
                            "the tools of its agent run"
                        };
                        reasons.push(format!("absent from {what} {}", model.spans[m].span_id));
                        related.push(m);
                    }
                }
                None => out.add(NO_DEFS, 1),
            }
            let run = model.call_agent_run(call);
            if let Some(agent) = run.and_then(|r| model.spans[r].agent_name.as_deref()) {
                if let Some(allow) = input.policy.agent_allowlist(agent) {
                    let allowed = allow
                        .iter()
                        .any(|a| a == tool || tool_part(a) == tool_part(tool));
                    if !allowed {
                        reasons.push(format!("not in the allowlist of agent {agent}"));
                        related.extend(run);
                    }
                }
            }
            if !reasons.is_empty() {
                out.findings.push(
                    Finding::at(
                        self,
                        model,
                        call.anchor,
                        format!("{tool} executed but is {}", reasons.join(" and ")),
                    )
                    .with_tool(call.tool.as_deref())
                    .with_related(model, related),
                );
            }
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (no_host, no_defs) = (partial.count(NO_HOST), partial.count(NO_DEFS));
        let mut cov = Coverage::new(partial.count(CALLS));
        cov.not_observable(
            no_host,
            format!("{no_host} tool calls have no host span (only the server's side was exported)"),
        );
        cov.not_observable(
            no_defs,
            format!(
                "no preceding model call or agent run with tool definitions for {no_defs} tool calls: visibility not checked"
            ),
        );
        RuleOutcome::new(partial.findings, cov)
    }
}
