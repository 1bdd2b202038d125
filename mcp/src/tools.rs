//! The tool registry: each tool's name, description and schemas in one static table, the parsing
//! of its arguments, the call into [`crate::engine`], and the short text block that goes with its
//! `structuredContent`.
//!
//! Every tool only reads: `annotations.readOnlyHint: true`, `openWorldHint: false` (the store is
//! the whole world it touches). Arguments are parsed strictly (unknown fields are refused), and
//! every failure is a [`ToolError`], which the server turns into an `isError` result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Tool;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::engine::{self, CheckRequest, Filter, QueryLimits, TraceRequest};
use crate::error::ToolError;
use crate::schema;

/// Where the tools read from and what one call may cost; fixed when the server starts.
#[derive(Clone, Debug)]
pub struct Settings {
    pub data_dir: PathBuf,
    /// Policy used when a call names none (`--policy`).
    pub policy: Option<PathBuf>,
    /// Canonical directories a caller's policy path must lie under.
    pub policy_roots: Vec<PathBuf>,
    pub query_timeout: Duration,
    pub query_memory_bytes: usize,
    pub response_bytes: usize,
}

/// One tool: its identity and schemas.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
}

/// Every tool, in the order `tools/list` shows them.
pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "check",
        title: "Run tripline's detection rules",
        description: "Runs the detection rules over the span store (as `tripline check --format json`) and returns the findings (what broke, on which trace and span, which tool, what to do) with each rule's coverage (how many candidates it examined and how many it could not observe) and what the scan read. Filter by time, service or trace; pick rules; pass a policy file for the policy rules. A rule with examined 0 saw nothing to judge: no finding from it is not evidence of health.",
        input: schema::check_input,
        output: schema::check_output,
    },
    ToolSpec {
        name: "query",
        title: "Read-only SQL over the spans",
        description: "Runs one read-only SQL statement (DataFusion dialect) over the table `spans`, one row per span: trace_id/span_id/parent_span_id (binary: use encode(x, 'hex')), name, kind, start_time, service_name, gen_ai_* and mcp_* columns, error_type, result_is_error, … (`DESCRIBE spans` lists them). Returns at most `limit` rows (default 200, at most 10000) as objects, stopped after the server's time limit; writes, DDL and COPY are refused.",
        input: schema::query_input,
        output: schema::query_output,
    },
    ToolSpec {
        name: "trace",
        title: "One trace as a tree",
        description: "Returns one trace as a tree of spans (stitched across processes: a server span whose trace context was lost is joined under the host span of its call and marked `stitched`), each node with its GenAI / MCP facts and the codes of the findings on it, plus those findings and the tree as text (as `tripline trace ID`).",
        input: schema::trace_input,
        output: schema::trace_output,
    },
    ToolSpec {
        name: "report",
        title: "Summaries: tools, conversations, guardrails, skills, propagation",
        description: "Returns one report over the store (as `tripline report KIND --format json`): `tools` (per tool and MCP server: calls, tool and protocol errors, latency percentiles, structured results, approvals), `conversations`, `guardrails`, `skills` or `propagation` (per MCP client -> server service pair: requests, how many kept the host's trace and by which channel, the libraries on each side, the fix), with notes on what could not be observed. Same filters as check.",
        input: schema::report_input,
        output: schema::report_output,
    },
    ToolSpec {
        name: "explain",
        title: "Explain a detection rule",
        description: "Returns the documentation of one rule (as `tripline explain CODE`): what it detects, why it matters, an example and how to fix it. Findings name their rule in `rule`.",
        input: schema::explain_input,
        output: schema::explain_output,
    },
];

/// The spec of tool `name`.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The `tools/list` entry of a tool.
pub fn definition(spec: &ToolSpec) -> Result<Tool, serde_json::Error> {
    serde_json::from_value(json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": (spec.input)(),
        "outputSchema": (spec.output)(),
        "annotations": {
            "title": spec.title,
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false
        }
    }))
}

/// What a successful call returns: the structured content and its text block.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        ToolError::BadArgument(format!(
            "invalid arguments for {tool}: {e}; see the tool's inputSchema"
        ))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    #[serde(default)]
    rules: Vec<String>,
    policy: Option<String>,
    max_calls_per_tool: Option<u32>,
    max_model_turns: Option<u32>,
    max_findings: Option<u64>,
    since: Option<String>,
    until: Option<String>,
    service: Option<String>,
    trace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    sql: String,
    limit: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceArgs {
    trace_id: String,
    policy: Option<String>,
    max_spans: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportArgs {
    kind: String,
    max_rows: Option<u64>,
    since: Option<String>,
    until: Option<String>,
    service: Option<String>,
    trace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExplainArgs {
    code: String,
}

fn at_least_one(name: &str, v: Option<u32>) -> Result<Option<u32>, ToolError> {
    match v {
        Some(0) => Err(ToolError::BadArgument(format!(
            "`{name}` must be at least 1"
        ))),
        other => Ok(other),
    }
}

fn bounded(name: &str, v: Option<u64>, default: u64, max: u64) -> Result<usize, ToolError> {
    let n = v.unwrap_or(default);
    if n == 0 || n > max {
        return Err(ToolError::BadArgument(format!(
            "`{name}` must be between 1 and {max}, not {n}"
        )));
    }
    usize::try_from(n).map_err(|_| ToolError::BadArgument(format!("`{name}` is too large")))
}

impl Settings {
    /// The policy a call uses: its own (vetted against the roots), else the server's default.
    fn policy(&self, requested: Option<&str>) -> Result<Option<PathBuf>, ToolError> {
        match requested {
            Some(p) => crate::policy_path::vet(&self.policy_roots, p).map(Some),
            None => Ok(self.policy.clone()),
        }
    }
}

/// Runs tool `name` with `args`. `name` must be one of [`TOOLS`].
pub async fn call(
    settings: &Settings,
    name: &str,
    args: Map<String, Value>,
) -> Result<ToolOutput, ToolError> {
    let data_dir = settings.data_dir.as_path();
    match name {
        "check" => {
            let a: CheckArgs = parse(name, args)?;
            let req = CheckRequest {
                rules: a.rules,
                filter: Filter {
                    since: a.since,
                    until: a.until,
                    service: a.service,
                    trace: a.trace,
                },
                policy: settings.policy(a.policy.as_deref())?,
                max_calls_per_tool: at_least_one("max_calls_per_tool", a.max_calls_per_tool)?,
                max_model_turns: at_least_one("max_model_turns", a.max_model_turns)?,
                max_findings: bounded(
                    "max_findings",
                    a.max_findings,
                    schema::CHECK_DEFAULT_FINDINGS,
                    schema::CHECK_MAX_FINDINGS,
                )?,
            };
            let doc = engine::check(data_dir, &req).await?;
            Ok(ToolOutput {
                text: check_summary(&doc),
                structured: doc,
            })
        }
        "query" => {
            let a: QueryArgs = parse(name, args)?;
            let rows = bounded(
                "limit",
                a.limit,
                schema::QUERY_DEFAULT_ROWS,
                schema::QUERY_MAX_ROWS,
            )?;
            crate::sql_guard::check_read_only(&a.sql)?;
            let limits = QueryLimits {
                rows,
                timeout: settings.query_timeout,
                memory_bytes: settings.query_memory_bytes,
                response_bytes: settings.response_bytes,
            };
            let doc = engine::query(data_dir, &a.sql, limits).await?;
            Ok(ToolOutput {
                text: query_summary(&doc),
                structured: doc,
            })
        }
        "trace" => {
            let a: TraceArgs = parse(name, args)?;
            let req = TraceRequest {
                trace_id: a.trace_id,
                policy: settings.policy(a.policy.as_deref())?,
                max_spans: bounded(
                    "max_spans",
                    a.max_spans,
                    schema::TRACE_DEFAULT_SPANS,
                    schema::TRACE_MAX_SPANS,
                )?,
            };
            let doc = engine::trace(data_dir, &req).await?;
            Ok(ToolOutput {
                text: doc["text"].as_str().unwrap_or_default().to_string(),
                structured: doc,
            })
        }
        "report" => {
            let a: ReportArgs = parse(name, args)?;
            let filter = Filter {
                since: a.since,
                until: a.until,
                service: a.service,
                trace: a.trace,
            };
            let max_rows = bounded(
                "max_rows",
                a.max_rows,
                schema::REPORT_DEFAULT_ROWS,
                schema::REPORT_MAX_ROWS,
            )?;
            let doc = engine::report(data_dir, &a.kind, &filter, max_rows).await?;
            Ok(ToolOutput {
                text: report_summary(&doc),
                structured: doc,
            })
        }
        "explain" => {
            let a: ExplainArgs = parse(name, args)?;
            let doc = engine::explain(&a.code)?;
            Ok(ToolOutput {
                text: doc["text"].as_str().unwrap_or_default().to_string(),
                structured: doc,
            })
        }
        other => Err(ToolError::NotFound(format!("no tool named {other:?}"))),
    }
}

fn count(doc: &Value, key: &str) -> usize {
    doc[key].as_array().map_or(0, Vec::len)
}

/// `what the scan read` in one phrase.
fn scanned_phrase(doc: &Value) -> String {
    let s = &doc["scanned"];
    let mut out = format!(
        "scanned {} span(s) in {} part file(s)",
        s["spans"].as_u64().unwrap_or(0),
        s["files"].as_u64().unwrap_or(0)
    );
    let unreadable = s["unreadable_files"].as_array().map_or(0, Vec::len);
    if unreadable > 0 {
        out.push_str(&format!("; {unreadable} unreadable file(s) skipped"));
    }
    out
}

/// Findings by severity and rule, the first few findings, blind rules, the scan.
pub fn check_summary(doc: &Value) -> String {
    let findings = doc["findings"].as_array().cloned().unwrap_or_default();
    let mut by_severity: Vec<(String, usize)> = Vec::new();
    let mut by_rule: Vec<(String, usize)> = Vec::new();
    for f in &findings {
        for (key, list) in [("severity", &mut by_severity), ("rule", &mut by_rule)] {
            let v = f[key].as_str().unwrap_or("?").to_string();
            match list.iter_mut().find(|(k, _)| *k == v) {
                Some((_, n)) => *n += 1,
                None => list.push((v, 1)),
            }
        }
    }
    let join = |l: &[(String, usize)]| {
        l.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = if findings.is_empty() {
        "no finding".to_string()
    } else if doc["truncated"] == Value::Bool(true) {
        format!(
            "{} finding(s), the first {} here: {} (by rule: {})",
            doc["total_findings"].as_u64().unwrap_or(0),
            findings.len(),
            join(&by_severity),
            join(&by_rule)
        )
    } else {
        format!(
            "{} finding(s): {} (by rule: {})",
            findings.len(),
            join(&by_severity),
            join(&by_rule)
        )
    };
    let blind: Vec<&str> = doc["coverage"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["examined"].as_u64() == Some(0))
        .filter_map(|c| c["rule"].as_str())
        .collect();
    out.push_str(&format!("; {} rule(s) ran", count(doc, "coverage")));
    if !blind.is_empty() {
        out.push_str(&format!(
            ", {} saw nothing to judge ({})",
            blind.len(),
            blind.join(", ")
        ));
    }
    out.push_str(&format!("; {}\n", scanned_phrase(doc)));
    for f in findings.iter().take(10) {
        out.push_str(&format!(
            "{} {} {} trace {} span {}{}: {}\n",
            f["rule"].as_str().unwrap_or("?"),
            f["name"].as_str().unwrap_or("?"),
            f["severity"].as_str().unwrap_or("?"),
            f["trace_id"].as_str().unwrap_or("?"),
            f["span_id"].as_str().unwrap_or("?"),
            f["tool"]
                .as_str()
                .map(|t| format!(" tool {t}"))
                .unwrap_or_default(),
            f["message"].as_str().unwrap_or("")
        ));
    }
    if findings.len() > 10 {
        out.push_str(&format!(
            "… {} more in structuredContent.findings\n",
            findings.len() - 10
        ));
    }
    out
}

/// Rows and columns, the first rows as JSON lines.
pub fn query_summary(doc: &Value) -> String {
    let columns: Vec<&str> = doc["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let mut out = format!(
        "{} row(s), columns: {}",
        doc["row_count"].as_u64().unwrap_or(0),
        columns.join(", ")
    );
    if let Some(reason) = doc["truncated_reason"].as_str() {
        out.push_str(&format!("; truncated: {reason}"));
    }
    out.push('\n');
    let rows = doc["rows"].as_array().cloned().unwrap_or_default();
    for r in rows.iter().take(20) {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    if rows.len() > 20 {
        out.push_str(&format!(
            "… {} more row(s) in structuredContent.rows\n",
            rows.len() - 20
        ));
    }
    out
}

/// Kind, rows, notes, the first rows as JSON lines.
pub fn report_summary(doc: &Value) -> String {
    let shown = if doc["truncated"] == Value::Bool(true) {
        format!(
            "the first {} of {} row(s)",
            count(doc, "rows"),
            doc["total_rows"].as_u64().unwrap_or(0)
        )
    } else {
        format!("{} row(s)", count(doc, "rows"))
    };
    let mut out = format!(
        "{} report: {shown}; {}\n",
        doc["kind"].as_str().unwrap_or("?"),
        scanned_phrase(doc)
    );
    let rows = doc["rows"].as_array().cloned().unwrap_or_default();
    for r in rows.iter().take(20) {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    for n in doc["notes"].as_array().into_iter().flatten() {
        out.push_str(&format!("note: {}\n", n.as_str().unwrap_or("")));
    }
    out
}

/// Names of every tool (for the server's instructions).
pub fn names() -> Arc<str> {
    Arc::from(TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().join(", "))
}
