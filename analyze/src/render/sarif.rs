//! `check --format sarif`: SARIF 2.1.0, built with the `serde-sarif` types (generated from the
//! official schema) and validated against that schema in `analyze/tests/sarif_schema.rs`.
//!
//! Every rule is in `tool.driver.rules` and every result has one `ruleId`, so code-scanning UIs
//! group findings by rule. Spans are not lines of a file, yet code-scanning uploads reject a
//! result without a physical location, so each result points at an artifact that produced the
//! judgement (the policy file when one was given, else the data dir: [`SarifArtifact`]) and names
//! the span as a logical location `trace/<trace_id>/span/<span_id>`. Coverage and what the scan
//! read go into the run's property bag.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use serde_sarif::sarif::{
    ArtifactLocation, Location, LogicalLocation, Message, MultiformatMessageString,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor, Result,
    ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use crate::rules::{Coverage, Finding, Report, Rule, Severity, RULES};
use crate::store::Scanned;

/// The file every result's physical location points at.
#[derive(Clone, Copy, Debug)]
pub enum SarifArtifact<'a> {
    /// The policy file given with `--policy` (results point at its first line).
    Policy(&'a str),
    /// The data dir that was scanned (no policy file).
    DataDir(&'a str),
}

impl SarifArtifact<'_> {
    fn location(&self) -> PhysicalLocation {
        match self {
            Self::Policy(p) => PhysicalLocation::builder()
                .artifact_location(ArtifactLocation::builder().uri(uri(p)).build())
                .region(Region::builder().start_line(1).build())
                .build(),
            Self::DataDir(d) => PhysicalLocation::builder()
                .artifact_location(ArtifactLocation::builder().uri(uri(d)).build())
                .build(),
        }
    }
}

/// A path as a URI reference: relative paths stay relative (code scanning resolves them against
/// the repository), absolute ones become `file://` URIs; bytes outside the unreserved set are
/// percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            b'\\' => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Critical | Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

/// The SARIF log, pretty-printed, newline-terminated; results point at the default data dir.
pub fn render_sarif(report: &Report) -> String {
    render_sarif_with(report, None, SarifArtifact::DataDir("tripline-data"))
}

/// [`render_sarif`] with what the store scan read in the run's property bag (`scanned`) and the
/// artifact results point at.
pub fn render_sarif_with(
    report: &Report,
    scanned: Option<&Scanned>,
    artifact: SarifArtifact,
) -> String {
    let location = artifact.location();
    let results: Vec<Result> = report
        .findings
        .iter()
        .map(|f| result(f, &location))
        .collect();
    sarif_log(results, &report.coverage, scanned)
}

/// The log of one run with `results`, pretty-printed, newline-terminated.
fn sarif_log(results: Vec<Result>, coverage: &[Coverage], scanned: Option<&Scanned>) -> String {
    let rules: Vec<ReportingDescriptor> = RULES.iter().map(|r| descriptor(*r)).collect();
    let mut props = BTreeMap::new();
    props.insert("coverage".to_string(), json!(coverage));
    if let Some(scanned) = scanned {
        props.insert("scanned".to_string(), json!(scanned));
    }
    let run = Run::builder()
        .tool(
            Tool::builder()
                .driver(
                    ToolComponent::builder()
                        .name("tripline")
                        .version(env!("CARGO_PKG_VERSION"))
                        .information_uri("https://github.com/tripline/tripline")
                        .rules(rules)
                        .build(),
                )
                .build(),
        )
        .results(results)
        .properties(bag(None, props))
        .build();
    let log = Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

/// [`render_sarif_with`]'s bytes written to `out` (give it a buffered writer), the results made
/// from `findings` as they come (once): the log around them is rendered first with no result,
/// and the results array is written where it goes, at its indentation. An error reading a
/// finding (a spilled run) is an I/O error.
pub fn write_sarif_streamed<I, E>(
    out: &mut impl std::io::Write,
    findings: &mut I,
    coverage: &[Coverage],
    scanned: Option<&Scanned>,
    artifact: SarifArtifact,
) -> std::io::Result<()>
where
    I: Iterator<Item = std::result::Result<Finding, E>>,
    E: std::fmt::Display,
{
    let frame = sarif_log(Vec::new(), coverage, scanned);
    // `runs[0].results`: three levels in (the log, `runs`, the run), its key six spaces in.
    const KEY: &str = "\n      \"results\": []";
    let at = frame.find(KEY).ok_or_else(|| {
        std::io::Error::other("the SARIF frame has no results array; this is a bug in tripline")
    })?;
    let open = at + KEY.len() - "[]".len();
    out.write_all(&frame.as_bytes()[..open])?;
    let mut formatter = serde_json::ser::PrettyFormatter::new();
    {
        use serde_json::ser::Formatter as _;
        let mut sink = std::io::sink();
        for _ in 0..3 {
            formatter.begin_array(&mut sink)?;
        }
    }
    let location = artifact.location();
    let results = StreamedResults {
        findings: std::cell::RefCell::new(findings),
        location: &location,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, formatter);
    serde::Serialize::serialize(&results, &mut ser).map_err(std::io::Error::from)?;
    out.write_all(&frame.as_bytes()[open + "[]".len()..])
}

/// SARIF results serialised as a JSON array as they are made from an iterator of findings.
struct StreamedResults<'a, I> {
    findings: std::cell::RefCell<&'a mut I>,
    location: &'a PhysicalLocation,
}

impl<I, E> serde::Serialize for StreamedResults<'_, I>
where
    I: Iterator<Item = std::result::Result<Finding, E>>,
    E: std::fmt::Display,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let mut findings = self.findings.borrow_mut();
        let mut seq = s.serialize_seq(None)?;
        for f in &mut **findings {
            let f = f.map_err(S::Error::custom)?;
            seq.serialize_element(&result(&f, self.location))?;
        }
        seq.end()
    }
}

fn text(s: impl Into<String>) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s.into()).build()
}

fn bag(tags: Option<Vec<String>>, props: BTreeMap<String, Value>) -> PropertyBag {
    PropertyBag {
        tags,
        additional_properties: props,
    }
}

fn descriptor(r: &dyn Rule) -> ReportingDescriptor {
    let d = r.docs();
    ReportingDescriptor::builder()
        .id(r.code())
        .name(r.name())
        .short_description(text(r.name()))
        .full_description(text(d.what))
        .help(
            MultiformatMessageString::builder()
                .text(format!("{}\n\nWhy: {}\n\nFix: {}", d.what, d.why, d.fix))
                .markdown(format!(
                    "{}\n\n**Why it matters.** {}\n\n**Example.** {}\n\n**How to fix.** {}",
                    d.what, d.why, d.example, d.fix
                ))
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level(r.severity())))
                .build(),
        )
        .properties(bag(
            Some(vec![
                "tripline".to_string(),
                r.severity().as_str().to_string(),
            ]),
            BTreeMap::new(),
        ))
        .build()
}

fn result(f: &Finding, location: &PhysicalLocation) -> Result {
    let index = RULES.iter().position(|r| r.code() == f.rule);
    let related: Vec<String> = f.related.iter().map(ToString::to_string).collect();
    let mut props = BTreeMap::new();
    props.insert("severity".to_string(), json!(f.severity.as_str()));
    props.insert("trace_id".to_string(), json!(f.trace_id.to_string()));
    props.insert("span_id".to_string(), json!(f.span_id.to_string()));
    props.insert("conversation_id".to_string(), json!(f.conversation_id));
    props.insert("tool".to_string(), json!(f.tool));
    props.insert("related".to_string(), json!(related));
    let mut builder = Result::builder()
        .rule_id(f.rule)
        .level(level(f.severity))
        .message(Message::builder().text(f.message.clone()).build())
        .locations(vec![Location::builder()
            .physical_location(location.clone())
            .logical_locations(vec![LogicalLocation::builder()
                .name(f.span_id.to_string())
                .fully_qualified_name(format!("trace/{}/span/{}", f.trace_id, f.span_id))
                .kind("object")
                .build()])
            .build()])
        .partial_fingerprints(BTreeMap::from([(
            "tripline/v1".to_string(),
            format!("{}:{}:{}", f.rule, f.trace_id, f.span_id),
        )]))
        .properties(bag(None, props))
        .build();
    builder.rule_index = index.map(|i| i as i64);
    builder
}
