//! TL013 captured-sensitive-content: opt-in content was captured, and secrets or personal data
//! patterns are in it.
//!
//! Why a rule: content capture (tool arguments and results, prompts, completions) is off by
//! default in every SDK for a reason; once on, whatever users and tools pass through lands in
//! the trace store, usually with a longer retention and a wider audience than the application's
//! own database. The detectors are in [`patterns`]; a finding counts what it found and where,
//! never the value.

mod patterns;

use std::collections::BTreeMap;

use schemas::convert::REDACTED;
use schemas::schema::col;

use super::{Coverage, Finding, Partial, Rule, RuleDocs, RuleInput, RuleOutcome, Severity};
use crate::model::SpanRow;
use patterns::Kind;

pub struct CapturedSensitiveContent;

static DOCS: RuleDocs = RuleDocs {
    what: "A span's captured content (gen_ai.tool.call.arguments / result, input / output \
           messages, system instructions, and vendor content attributes such as \
           traceloop.entity.input) contains e-mail addresses, phone numbers, credit card numbers \
           (Luhn-checked, with a card network prefix), API keys or bearer tokens (sk-..., \
           AKIA..., ghp_..., Bearer ..., private keys) or IBANs (mod-97 checked). One finding per \
           span with the kinds, counts and content fields; the values themselves are never \
           printed. Candidates are spans that carry content; content redacted at ingest is \
           counted as clean.",
    why: "Traces are kept longer and read by more people (and vendors) than the application's \
          own data. A leaked API key in a tool argument or a customer's card number in a tool \
          result is a security incident and, for personal data, a data-protection problem.",
    example: "execute_tool find_contact_by_email with gen_ai.tool.call.arguments \
              {\"email\":\"sam.ortiz@example.com\"} and a result holding the contact's phone \
              number.",
    fix: "Turn content capture off where it is not needed, redact at ingest (collector \
          --redact-content) or in the SDK, and rotate any credential that was captured.",
};

/// Spans seen / with captured content / whose content was all redacted at ingest.
const SPANS: &str = "spans";
const EXAMINED: &str = "examined";
const REDACTED_SPANS: &str = "redacted";

impl Rule for CapturedSensitiveContent {
    fn code(&self) -> &'static str {
        "TL013"
    }
    fn name(&self) -> &'static str {
        "captured-sensitive-content"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn docs(&self) -> &'static RuleDocs {
        &DOCS
    }
    fn columns(&self) -> &'static [&'static str] {
        &[
            col::GEN_AI_TOOL_CALL_ARGUMENTS,
            col::GEN_AI_TOOL_CALL_RESULT,
            col::GEN_AI_INPUT_MESSAGES,
            col::GEN_AI_OUTPUT_MESSAGES,
            col::GEN_AI_SYSTEM_INSTRUCTIONS,
            col::CONTENT_ATTRIBUTES,
        ]
    }

    fn scan(&self, input: &RuleInput) -> Partial {
        let model = input.model;
        let mut out = Partial::default();
        for (i, s) in model.spans.iter().enumerate() {
            if !input.owns(i) {
                continue;
            }
            out.add(SPANS, 1);
            let fields = content_fields(s);
            if fields.is_empty() {
                continue;
            }
            out.add(EXAMINED, 1);
            if fields.iter().all(|(_, v)| *v == REDACTED) {
                out.add(REDACTED_SPANS, 1);
                continue;
            }
            // kind -> (count, fields it was found in)
            let mut found: BTreeMap<Kind, (usize, Vec<&str>)> = BTreeMap::new();
            for (field, text) in &fields {
                for (kind, n) in patterns::scan(text) {
                    let e = found.entry(kind).or_default();
                    e.0 += n;
                    if !e.1.contains(field) {
                        e.1.push(*field);
                    }
                }
            }
            if found.is_empty() {
                continue;
            }
            let parts: Vec<String> = found
                .iter()
                .map(|(k, (n, f))| format!("{} x{n} in {}", k.label(), f.join(", ")))
                .collect();
            out.findings.push(Finding::at(
                self,
                model,
                i,
                format!("captured content holds {}", parts.join("; ")),
            ));
        }
        out
    }

    fn finish(&self, partial: Partial, _input: &RuleInput) -> RuleOutcome {
        let (examined, redacted) = (partial.count(EXAMINED), partial.count(REDACTED_SPANS));
        let mut cov = Coverage::new(examined);
        if examined == 0 {
            cov.note(format!(
                "no captured content on any of {} spans: nothing stored to leak",
                partial.count(SPANS)
            ));
        }
        if redacted > 0 {
            cov.note(format!(
                "content redacted at ingest on {redacted} of {examined} spans: nothing stored to leak"
            ));
        }
        RuleOutcome::new(partial.findings, cov)
    }
}

/// (field name, text) of every captured content value of the span.
fn content_fields(s: &SpanRow) -> Vec<(&str, &str)> {
    let Some(c) = &s.content else {
        return Vec::new();
    };
    let mut out: Vec<(&str, &str)> = [
        ("gen_ai.tool.call.arguments", &c.tool_call_arguments),
        ("gen_ai.tool.call.result", &c.tool_call_result),
        ("gen_ai.input.messages", &c.input_messages),
        ("gen_ai.output.messages", &c.output_messages),
        ("gen_ai.system_instructions", &c.system_instructions),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
    .collect();
    out.extend(c.other.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    out
}
