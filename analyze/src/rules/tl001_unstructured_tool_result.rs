//! TL001 unstructured-tool-result: a tool result came back without `structuredContent` where
//! structured output was expected.

use std::collections::HashSet;

use super::input::short_list;
use super::{Coverage, Finding, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};

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

    fn check(&self, input: &RuleInput) -> RuleOutcome {
        let model = input.model;
        let calls: Vec<_> = input.tool_calls().collect();
        let mut cov = Coverage::new(calls.len());
        let mut findings = Vec::new();
        let mut structured_before: HashSet<&str> = HashSet::new();
        let mut blind = 0;
        let mut blind_tools: Vec<&str> = Vec::new();
        for call in &calls {
            let tool = call.tool.as_deref().unwrap_or("?");
            match call.has_structured_content {
                None => {
                    blind += 1;
                    if !blind_tools.contains(&tool) {
                        blind_tools.push(tool);
                    }
                }
                Some(true) => {
                    structured_before.insert(tool);
                }
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
                    let reason = if declared {
                        Some("although the tool declares an outputSchema")
                    } else if structured_before.contains(tool) {
                        Some("although earlier calls of the same tool returned it")
                    } else if call.text_is_json_object == Some(true) {
                        Some("but its single text block holds a JSON object (structured data flattened to text)")
                    } else {
                        None
                    };
                    if let Some(reason) = reason {
                        findings.push(Finding::for_call(
                            self,
                            model,
                            call,
                            format!("{tool} returned no structuredContent {reason}"),
                        ));
                    }
                }
            }
        }
        cov.not_observable(
            blind,
            format!(
                "tool result not captured on {blind} of {} tool calls ({})",
                calls.len(),
                short_list(blind_tools)
            ),
        );
        RuleOutcome::new(findings, cov)
    }
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
