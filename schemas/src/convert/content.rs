//! Splitting a span's attributes into generic attributes and content.
//!
//! Canonical content attributes with a string value go to their own columns (large, opt-in,
//! rarely scanned); vendor content attributes of a dialect the span matched (and canonical ones
//! with a non-string value) go raw into `content_attributes`. Everything else stays in
//! `attributes`. Payloads are also handed to [`crate::derived`] in dialect precedence order.

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};
use serde_json::{Map, Value as Json};

use crate::columns::{CONTENT_COLUMNS, N_CONTENT_COLUMNS};
use crate::derived::{parse_json_or_string, Derived};
use crate::dialects::{ContentRole, DialectEngine, KeyFacts};

/// Endings that instrumentations append when they cut a long payload (compared
/// case-insensitively on the last characters).
const TRUNCATION_MARKERS: &[&str] = &[
    "[truncated]",
    "(truncated)",
    "<truncated>",
    "...truncated",
    "…[truncated]",
    "[...]",
];

/// A span's attributes after the split.
pub struct Split<'a> {
    /// Generic attributes (unique keys).
    pub attributes: Vec<(&'a str, Option<&'a AnyValue>)>,
    /// The [`KeyFacts`] of each of `attributes`, in the same order.
    pub attribute_facts: Vec<KeyFacts>,
    /// Canonical content column values, in [`CONTENT_COLUMNS`] order.
    pub columns: [Option<&'a str>; N_CONTENT_COLUMNS],
    /// Raw vendor (or non-string canonical) content attributes.
    pub content_attributes: Vec<(&'a str, Option<&'a AnyValue>)>,
    /// `Some(true)` when a truncation marker was seen.
    pub truncated: Option<bool>,
}

impl Split<'_> {
    /// An empty split; [`split`] refills it span after span, so the conversion of a request
    /// allocates its lists once instead of once per span.
    pub fn new() -> Self {
        Split {
            attributes: Vec::new(),
            attribute_facts: Vec::new(),
            columns: [None; N_CONTENT_COLUMNS],
            content_attributes: Vec::new(),
            truncated: None,
        }
    }

    fn clear(&mut self) {
        self.attributes.clear();
        self.attribute_facts.clear();
        self.columns = [None; N_CONTENT_COLUMNS];
        self.content_attributes.clear();
        self.truncated = None;
    }
}

impl Default for Split<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Splits `attrs` (unique keys, with their [`KeyFacts`] in `facts`) into `out` (emptied first)
/// and feeds the payloads into `derived`.
pub fn split<'a>(
    out: &mut Split<'a>,
    attrs: &[(&'a str, Option<&'a AnyValue>)],
    facts: &[KeyFacts],
    matched: u32,
    engine: &DialectEngine,
    derived: &mut Derived,
) {
    out.clear();
    // (dialect index, role, payload)
    let mut payloads: Vec<(usize, ContentRole, &'a str)> = Vec::new();
    let mut prefixed_args: Option<(usize, Map<String, Json>)> = None;
    let mut prefixed_defs: Vec<&'a str> = Vec::new();

    for (&(key, value), f) in attrs.iter().zip(facts) {
        if !engine.may_be_content(f) {
            out.attributes.push((key, value));
            out.attribute_facts.push(*f);
            continue;
        }
        let Some(m) = engine.content_role(key, f, matched) else {
            out.attributes.push((key, value));
            out.attribute_facts.push(*f);
            continue;
        };
        let text = match value.and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(s)) => Some(s.as_str()),
            _ => None,
        };
        match (CONTENT_COLUMNS.iter().position(|(k, _)| *k == key), text) {
            (Some(i), Some(t)) => out.columns[i] = Some(t),
            _ => out.content_attributes.push((key, value)),
        }
        let Some(t) = text else {
            // Tool definitions as an array of JSON strings, one per tool (the Vercel AI SDK's
            // `ai.prompt.tools`): read as the JSON list they spell. Definitions merge by name
            // whatever their order, so this list need not wait for the precedence sort.
            if m.role == ContentRole::ToolDefinitions {
                if let Some(list) = value.and_then(json_string_array) {
                    derived.observe(m.role, &list);
                }
            }
            continue;
        };
        if is_truncated(t) {
            out.truncated = Some(true);
        }
        match m.prefix {
            Some(prefix) if m.role == ContentRole::ToolArguments => {
                let entry = prefixed_args.get_or_insert_with(|| (m.dialect, Map::new()));
                entry
                    .1
                    .insert(key[prefix.len()..].to_string(), parse_json_or_string(t));
            }
            // One attribute per tool (OpenInference's `llm.tools.{i}.tool.json_schema`): the
            // definitions are the list of them all.
            Some(_) if m.role == ContentRole::ToolDefinitions => prefixed_defs.push(t),
            _ => payloads.push((m.dialect, m.role, t)),
        }
    }
    if !prefixed_defs.is_empty() {
        derived.observe(
            ContentRole::ToolDefinitions,
            &json_array_text(prefixed_defs),
        );
    }
    if payloads.is_empty() && prefixed_args.is_none() {
        return;
    }
    payloads.sort_by_key(|(dialect, _, _)| *dialect);
    let mut args_pending = prefixed_args;
    for (dialect, role, text) in payloads {
        if let Some((d, _)) = &args_pending {
            if *d < dialect {
                if let Some((_, map)) = args_pending.take() {
                    derived.set_arguments(&Json::Object(map));
                }
            }
        }
        derived.observe(role, text);
    }
    if let Some((_, map)) = args_pending {
        derived.set_arguments(&Json::Object(map));
    }
}

/// `[s1,s2,...]` when `value` is an array whose every element is a string (each taken to be
/// one JSON value); None otherwise.
fn json_string_array(value: &AnyValue) -> Option<String> {
    let Some(Value::ArrayValue(array)) = &value.value else {
        return None;
    };
    let items: Option<Vec<&str>> = array
        .values
        .iter()
        .map(|v| match &v.value {
            Some(Value::StringValue(s)) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    items.map(json_array_text)
}

/// The JSON array whose elements are the JSON texts `items`: `[a,b,...]`.
fn json_array_text(items: Vec<&str>) -> String {
    format!("[{}]", items.join(","))
}

/// Whether `text` ends, but for trailing white space, with a truncation marker in any ASCII
/// case. Compared in place: lowering a copy of the tail cost an allocation for every content
/// value (BENCHMARKS.md, session 43). The markers' only letters are ASCII, so an ASCII-case-blind
/// comparison finds what lowering the text found.
fn is_truncated(text: &str) -> bool {
    let tail = text.trim_end().as_bytes();
    TRUNCATION_MARKERS.iter().any(|m| {
        tail.len() >= m.len() && tail[tail.len() - m.len()..].eq_ignore_ascii_case(m.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_of_json_strings_reads_as_one_list() {
        let s = |t: &str| AnyValue {
            value: Some(Value::StringValue(t.to_string())),
        };
        let array = |values: Vec<AnyValue>| AnyValue {
            value: Some(Value::ArrayValue(
                opentelemetry_proto::tonic::common::v1::ArrayValue { values },
            )),
        };
        let tools = array(vec![s(r#"{"name":"a"}"#), s(r#"{"name":"b"}"#)]);
        assert_eq!(
            json_string_array(&tools).as_deref(),
            Some(r#"[{"name":"a"},{"name":"b"}]"#)
        );
        assert_eq!(json_string_array(&array(vec![])).as_deref(), Some("[]"));
        let mixed = array(vec![
            s("x"),
            AnyValue {
                value: Some(Value::IntValue(1)),
            },
        ]);
        assert_eq!(json_string_array(&mixed), None);
        assert_eq!(json_string_array(&s("[]")), None);
    }

    #[test]
    fn truncation_markers() {
        assert!(is_truncated("{\"a\": \"long...\" [truncated]"));
        assert!(is_truncated("abc… [TRUNCATED] "));
        assert!(!is_truncated("{\"a\":1}"));
        assert!(!is_truncated("é"));
        assert!(is_truncated("…[Truncated]"));
        assert!(is_truncated("a\t(TRUNCATED)\n"));
        assert!(!is_truncated("[truncated] and more"));
        assert!(!is_truncated("truncated]"));
        assert!(!is_truncated(""));
    }
}
