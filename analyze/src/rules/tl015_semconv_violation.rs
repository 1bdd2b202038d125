//! TL015 semconv-violation: a span lacks an attribute the semantic conventions require for its
//! kind, or sets `error.type` without status ERROR.
//!
//! Why a rule: the dialect registry lets tripline read every instrumentation, but every other
//! tool (dashboards, vendors, the next engineer's query) only understands the semantic
//! conventions. This rule says which spans would be invisible or mis-classified there.
//!
//! The span's kind comes from canonical facts (any dialect may have recognised it as an MCP or a
//! GenAI span); the check is whether the *semantic-convention attribute itself* was sent, i.e.
//! its key is in the span's attribute map. The attribute names are the registry's
//! ([`schemas::registry::attribute`]). Findings are grouped by service, instrumentation scope,
//! span kind and the set of missing names (one finding per group, the other spans related), so a
//! library that never sets a name yields one finding, not one per call.

use std::collections::HashSet;

/// Attribute keys of one span; one set reused across spans (a million spans, a handful of keys).
type Keys<'a> = HashSet<&'a str, foldhash::fast::RandomState>;

use schemas::schema::col;

use super::partial::span_key;
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::{SpanRow, StatusCode};

pub struct SemconvViolation;

const OPERATION: &str = "gen_ai.operation.name";
const TOOL: &str = "gen_ai.tool.name";
const METHOD: &str = "mcp.method.name";
const ERROR_TYPE: &str = "error.type";

/// Attributes that make a span a GenAI operation span (so it must say which operation).
const GENAI_IDENTITY: &[&str] = &[
    "gen_ai.provider.name",
    "gen_ai.system",
    "gen_ai.request.model",
    "gen_ai.agent.name",
    "gen_ai.tool.call.id",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
];

/// Most related spans listed on one grouped finding.
const MAX_RELATED: usize = 20;

static DOCS: RuleDocs = RuleDocs {
    what: "A span lacks an attribute the semantic conventions require for its kind: \
           gen_ai.operation.name on GenAI spans (spans with a model, provider, agent or tool call \
           id), gen_ai.tool.name on execute_tool spans, mcp.method.name on MCP spans, and on MCP \
           tools/call spans gen_ai.tool.name (conditionally required) and gen_ai.operation.name \
           (execute_tool); or it sets error.type while its status is not ERROR. The kind comes \
           from canonical facts (any dialect), the check from the attribute keys actually sent. \
           One finding per service, scope, span kind and set of missing names.",
    why: "Tools other than tripline only read the conventions: a tools/call span without \
          gen_ai.tool.name cannot be grouped per tool, a GenAI span without \
          gen_ai.operation.name is not recognised as one, and error.type on a span that is not \
          ERROR is counted as a success by error-rate panels. Usually library behaviour, so \
          severity info: fix it upstream or in a collector processor.",
    example: "MCP send tools/call get_ticket (scope mcp-python-sdk): mcp.method.name and \
              jsonrpc.request.id only, no gen_ai.tool.name and no gen_ai.operation.name.",
    fix: "Upgrade or configure the instrumentation to emit the semantic-convention names, or add \
          them in an OpenTelemetry Collector transform processor; set status ERROR whenever \
          error.type is set.",
};

/// MCP / GenAI spans examined.
const EXAMINED: &str = "examined";

impl Rule for SemconvViolation {
    fn code(&self) -> &'static str {
        "TL015"
    }
    fn name(&self) -> &'static str {
        "semconv-violation"
    }
    fn severity(&self) -> Severity {
        Severity::Info
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }
    fn columns(&self) -> &'static [&'static str] {
        &[col::ATTRIBUTES]
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        // Groups (service, scope, what) span the store: each keeps its count and earliest spans.
        let mut out = Partial::default();
        let mut keys = Keys::default();
        for (i, s) in model.spans.iter().enumerate() {
            if !input.owns(i) {
                continue;
            }
            keys.clear();
            keys.extend(s.attribute_keys.iter().map(AsRef::as_ref));
            let mut problems: Vec<String> = Vec::new();
            let mut candidate = false;
            if let Some((label, missing)) = missing_required(s, &keys) {
                candidate = true;
                if !missing.is_empty() {
                    problems.push(format!("{label} span(s) lack {}", missing.join(", ")));
                }
            }
            if keys.contains(ERROR_TYPE) {
                candidate = true;
                if s.status() != StatusCode::Error {
                    problems.push(format!(
                        "span(s) set error.type but status {}",
                        s.status().as_str()
                    ));
                }
            }
            out.add(EXAMINED, usize::from(candidate));
            for p in problems {
                let key = vec![
                    s.service_name.as_deref().unwrap_or("?").to_string(),
                    s.scope_name.as_deref().unwrap_or_default().to_string(),
                    p,
                ];
                out.sample(key, span_key(input, i), MAX_RELATED + 1, || {
                    Finding::at(self, model, i, String::new())
                });
            }
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let mut cov = Coverage::new(partial.count(EXAMINED));
        cov.note("grouped: one finding per service, scope, span kind and missing names");
        let findings = partial
            .samples
            .into_iter()
            .filter_map(|(key, group)| {
                let [service, scope, what] = <[String; 3]>::try_from(key).ok()?;
                let mut spans = group.first.into_iter().map(|(_, f)| f);
                let first = spans.next()?;
                let scope = if scope.is_empty() {
                    "(unnamed scope)".to_string()
                } else {
                    format!("scope {scope}")
                };
                let mut finding = Finding {
                    message: format!("{} {what} ({scope}, service {service})", group.count),
                    ..first
                };
                for f in spans {
                    if f.span_id != finding.span_id && !finding.related.contains(&f.span_id) {
                        finding.related.push(f.span_id);
                    }
                }
                Some(finding)
            })
            .collect();
        RuleOutcome::new(findings, cov)
    }
}

/// The span's kind label and the required semconv names it did not send; None when the span is
/// neither an MCP nor a GenAI span (nothing required).
fn missing_required(s: &SpanRow, keys: &Keys) -> Option<(String, Vec<&'static str>)> {
    let mut missing = Vec::new();
    if let Some(method) = s.mcp_method.as_deref() {
        if !keys.contains(METHOD) {
            missing.push(METHOD);
        }
        if method == "tools/call" {
            if !keys.contains(TOOL) {
                missing.push(TOOL);
            }
            if !keys.contains(OPERATION) {
                missing.push(OPERATION);
            }
        }
        return Some((format!("MCP {method}"), missing));
    }
    let genai = s.operation_name.is_some() || GENAI_IDENTITY.iter().any(|k| keys.contains(k));
    if !genai {
        return None;
    }
    if !keys.contains(OPERATION) {
        missing.push(OPERATION);
    }
    let op = s.operation_name.as_deref();
    if op == Some("execute_tool") && !keys.contains(TOOL) {
        missing.push(TOOL);
    }
    Some((op.unwrap_or("GenAI").to_string(), missing))
}
