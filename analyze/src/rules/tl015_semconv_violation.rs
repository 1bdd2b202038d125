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

use schemas::schema::col;

use super::partial::{span_key, ByAddr, Sampler};
use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::list_memo::ListMemo;
use crate::model::span::Sym;
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
        let mut groups = Sampler::new(MAX_RELATED + 1);
        let mut facts = ListMemo::default();
        let mut examined = 0;
        for (i, s) in model.spans.iter().enumerate() {
            if !input.owns(i) {
                continue;
            }
            let keys = *facts.get(&s.attribute_keys, |k| KeyFacts::of(k));
            let mut candidate = false;
            let mut problems = [None, None];
            if let Some((label, missing)) = missing_required(s, keys) {
                candidate = true;
                if missing.len > 0 {
                    problems[0] = Some(Problem::Lack { label, missing });
                }
            }
            if keys.error_type {
                candidate = true;
                if s.status() != StatusCode::Error {
                    problems[1] = Some(Problem::ErrorType(s.status()));
                }
            }
            examined += usize::from(candidate);
            for problem in problems.into_iter().flatten() {
                let group = Group {
                    service: s.service_name.as_deref().map(ByAddr),
                    scope: s.scope_name.as_deref().map(ByAddr),
                    problem,
                };
                groups.add(group, span_key(input, i), i);
            }
        }
        let mut out = Partial::default();
        out.add(EXAMINED, examined);
        out.add_samples(groups, Group::key, |i| {
            Finding::at(self, model, i, String::new())
        });
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

/// What a span's attribute keys say, worked out once per distinct key list ([`ListMemo`]).
#[derive(Clone, Copy, Default)]
struct KeyFacts {
    method: bool,
    tool: bool,
    operation: bool,
    error_type: bool,
    /// One of [`GENAI_IDENTITY`].
    genai_identity: bool,
}

impl KeyFacts {
    fn of(keys: &[Sym]) -> Self {
        let mut f = Self::default();
        for k in keys {
            match &**k {
                METHOD => f.method = true,
                TOOL => f.tool = true,
                OPERATION => f.operation = true,
                ERROR_TYPE => f.error_type = true,
                k if GENAI_IDENTITY.contains(&k) => f.genai_identity = true,
                _ => {}
            }
        }
        f
    }
}

/// A span's kind as the finding names it (names compared by address: [`ByAddr`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Label<'a> {
    Mcp(ByAddr<'a>),
    Operation(ByAddr<'a>),
    GenAi,
}

/// The required names a span did not send, in the order the message lists them (the rule's
/// constants, compared by address: [`ByAddr`]).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Missing {
    names: [ByAddr<'static>; 3],
    len: usize,
}

impl Missing {
    fn push(&mut self, name: &'static str) {
        self.names[self.len] = ByAddr(name);
        self.len += 1;
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Problem<'a> {
    Lack { label: Label<'a>, missing: Missing },
    ErrorType(StatusCode),
}

/// One finding's group: service, scope and problem, names compared by address ([`ByAddr`]).
#[derive(PartialEq, Eq, Hash)]
struct Group<'a> {
    service: Option<ByAddr<'a>>,
    scope: Option<ByAddr<'a>>,
    problem: Problem<'a>,
}

impl Group<'_> {
    /// The group's key in the merged partial: service, scope and the problem as the message says
    /// it.
    fn key(&self) -> Vec<String> {
        let what = match self.problem {
            Problem::Lack { label, missing } => {
                let label = match label {
                    Label::Mcp(method) => format!("MCP {}", method.0),
                    Label::Operation(op) => op.0.to_string(),
                    Label::GenAi => "GenAI".to_string(),
                };
                format!(
                    "{label} span(s) lack {}",
                    missing.names[..missing.len]
                        .iter()
                        .map(|n| n.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            Problem::ErrorType(status) => {
                format!("span(s) set error.type but status {}", status.as_str())
            }
        };
        vec![
            self.service.map_or("?", |s| s.0).to_string(),
            self.scope.map_or("", |s| s.0).to_string(),
            what,
        ]
    }
}

/// The span's kind label and the required semconv names it did not send; None when the span is
/// neither an MCP nor a GenAI span (nothing required).
fn missing_required(s: &SpanRow, keys: KeyFacts) -> Option<(Label<'_>, Missing)> {
    let mut missing = Missing::default();
    if let Some(method) = s.mcp_method.as_deref() {
        if !keys.method {
            missing.push(METHOD);
        }
        if method == "tools/call" {
            if !keys.tool {
                missing.push(TOOL);
            }
            if !keys.operation {
                missing.push(OPERATION);
            }
        }
        return Some((Label::Mcp(ByAddr(method)), missing));
    }
    let genai = s.operation_name.is_some() || keys.genai_identity;
    if !genai {
        return None;
    }
    if !keys.operation {
        missing.push(OPERATION);
    }
    let op = s.operation_name.as_deref();
    if op == Some("execute_tool") && !keys.tool {
        missing.push(TOOL);
    }
    Some((
        op.map_or(Label::GenAi, |op| Label::Operation(ByAddr(op))),
        missing,
    ))
}
