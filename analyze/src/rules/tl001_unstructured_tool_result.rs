//! TL001 unstructured-tool-result: a tool result came back without `structuredContent` where
//! structured output was expected.

use super::input::short_list;
use super::partial::{call_key, Pending};
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};

pub struct UnstructuredToolResult;

static DOCS: RuleDocs = RuleDocs {
    what: "A `tools/call` result carries no `structuredContent` although structured output was \
           expected: the tool declares an `outputSchema` (in a `tools/list` result or in \
           `gen_ai.tool.definitions`), or earlier calls of the same tool returned \
           `structuredContent`, or the result is a single text block holding a JSON object \
           (structured data flattened to text, e.g. a Python tool annotated `-> dict`).",
    why: "Hosts and models that rely on typed results silently fall back to parsing text: fields \
          get misread, schema validation is skipped, and nothing errors. The break is invisible \
          in status codes and latency.",
    example: "execute_tool find_contact_by_email whose gen_ai.tool.call.result is \
              {\"content\":[{\"type\":\"text\",\"text\":\"{\\\"ok\\\":true,...}\"}]} with no \
              structuredContent, while the same tool returned structuredContent yesterday.",
    fix: "Return a typed model (or declare an outputSchema) from the tool so the server sets \
          structuredContent; keep the JSON text block for old clients. If the result is not \
          captured at all, enable content capture on the host (gen_ai.tool.call.result) or use \
          an instrumentation that records the full result, otherwise this rule cannot see it.",
};

/// Tool calls examined / without a captured result (and their tools, first seen first) / tools
/// with a structured result, at their first such call.
const CALLS: &str = "calls";
const BLIND: &str = "blind";
const BLIND_TOOLS: &str = "blind tools";
const STRUCTURED: &str = "structured";

impl Rule for UnstructuredToolResult {
    fn code(&self) -> &'static str {
        "TL001"
    }
    fn name(&self) -> &'static str {
        "unstructured-tool-result"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }

    // "although earlier calls of the same tool returned it" depends on every earlier call in the
    // store, so a call without structured content that is not judged by its own facts is
    // [`Pending`] until every window has been read.
    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for call in input.tool_calls().filter(|c| input.owns(c.anchor)) {
            out.add(CALLS, 1);
            let tool = call.tool.as_deref().unwrap_or("?");
            let key = call_key(input, call);
            match call.has_structured_content {
                None => {
                    out.add(BLIND, 1);
                    out.first_seen(BLIND_TOOLS, tool, key);
                }
                Some(true) => out.first_seen(STRUCTURED, tool, key),
                // An error result owes no structured content (MCP: structuredContent is for
                // successful results).
                Some(false) if call.is_error == Some(true) => {}
                Some(false) => {
                    let declared = input
                        .catalog
                        .get(tool)
                        .and_then(|d| d.has_output_schema)
                        .unwrap_or(false)
                        || model_declares_output_schema(input, call, tool);
                    let finding = Finding::for_call(self, model, call, String::new());
                    if declared {
                        out.findings.push(Finding {
                            message: message(tool, "although the tool declares an outputSchema"),
                            ..finding
                        });
                    } else {
                        out.pending.push(Pending {
                            key,
                            label: tool.to_string(),
                            flag: call.text_is_json_object == Some(true),
                            finding,
                        });
                    }
                }
            }
        }
        out
    }

    fn finish(&self, mut partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let structured = partial.firsts.remove(STRUCTURED).unwrap_or_default();
        for p in std::mem::take(&mut partial.pending) {
            let reason = if structured.get(&p.label).is_some_and(|first| *first < p.key) {
                "although earlier calls of the same tool returned it"
            } else if p.flag {
                "but its single text block holds a JSON object (structured data flattened to text)"
            } else {
                continue;
            };
            partial.findings.push(Finding {
                message: message(&p.label, reason),
                ..p.finding
            });
        }
        let (calls, blind) = (partial.count(CALLS), partial.count(BLIND));
        let mut cov = Coverage::new(calls);
        cov.not_observable(
            blind,
            format!(
                "tool result not captured on {blind} of {calls} tool calls ({})",
                short_list(partial.list(BLIND_TOOLS))
            ),
        );
        RuleOutcome::new(partial.findings, cov)
    }
}

fn message(tool: &str, reason: &str) -> String {
    format!("{tool} returned no structuredContent {reason}")
}

/// Whether the model call before `call` listed the tool with an output schema.
fn model_declares_output_schema(input: &RuleInput, call: &crate::model::Call, tool: &str) -> bool {
    input
        .model
        .preceding_model_call(call)
        .and_then(|m| input.model.spans[m].tool_definitions.as_ref())
        .is_some_and(|defs| {
            defs.iter()
                .any(|d| d.name == tool && d.has_output_schema == Some(true))
        })
}
