//! GenAI events (log records) into the span content attributes they stand for.
//!
//! Why here: the converter derives every content fact (tool result shape, arguments digest, tool
//! definitions...) from the span content attributes ([`crate::columns::CONTENT_COLUMNS`]). When
//! an instrumentation sends that content as events instead, the analyzer turns the events of a
//! span back into those attributes and lets the converter derive the same facts, so no rule has
//! a second code path for event-borne content. Two shapes are recognised:
//!
//! - any event carrying a content attribute under its span name (`gen_ai.input.messages`,
//!   `gen_ai.output.messages`, `gen_ai.system_instructions`, `gen_ai.tool.definitions`,
//!   `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) in its attributes or in a
//!   key/value body; this is `gen_ai.client.inference.operation.details` of the current
//!   conventions;
//! - the per-message events of the conventions before 1.37: `gen_ai.system.message`,
//!   `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message` (in order, into
//!   `gen_ai.input.messages`) and `gen_ai.choice` (into `gen_ai.output.messages`), rewritten in
//!   the current message form (`{"role", "parts": [...]}`).
//!
//! A value that was redacted at ingest (`"[redacted]"`) is passed on as it is: it stays redacted
//! content, never evidence.

use std::collections::HashMap;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use serde_json::{json, Map, Value as Json};

use crate::columns::CONTENT_COLUMNS;

/// Input messages (the current attribute name).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// Output messages (the current attribute name).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";

/// One log record as the analyzer read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventRecord {
    /// Nanoseconds (time, else observed time), for ordering.
    pub time_unix_nano: i64,
    pub event_name: Option<String>,
    /// The body, parsed from its JSON text.
    pub body: Option<Json>,
    /// The attributes object, parsed from its JSON text.
    pub attributes: Map<String, Json>,
}

impl EventRecord {
    /// From the stored JSON text columns; text that is not JSON is kept as a JSON string.
    pub fn from_stored(
        time_unix_nano: i64,
        event_name: Option<&str>,
        body: Option<&str>,
        attributes: Option<&str>,
    ) -> EventRecord {
        let parse = |t: &str| serde_json::from_str(t).unwrap_or_else(|_| Json::String(t.into()));
        EventRecord {
            time_unix_nano,
            event_name: event_name.map(str::to_string),
            body: body.map(parse),
            attributes: match attributes.map(parse) {
                Some(Json::Object(m)) => m,
                _ => Map::new(),
            },
        }
    }
}

/// The span content attributes (name, string value) that the events of one span carry, in
/// [`CONTENT_COLUMNS`] order. `events` may come in any order (they are sorted by time). A
/// content attribute named directly by an event wins over one rebuilt from per-message events;
/// of two events naming the same attribute, the later one wins.
pub fn content_attributes(events: &[EventRecord]) -> Vec<(&'static str, String)> {
    let mut sorted: Vec<&EventRecord> = events.iter().collect();
    sorted.sort_by_key(|e| e.time_unix_nano);
    let mut direct: Vec<Option<String>> = vec![None; CONTENT_COLUMNS.len()];
    let mut input: Vec<Json> = Vec::new();
    let mut output: Vec<Json> = Vec::new();
    for e in sorted {
        for (i, (attr, _)) in CONTENT_COLUMNS.iter().enumerate() {
            let body_field = match &e.body {
                Some(Json::Object(b)) => b.get(*attr),
                _ => None,
            };
            if let Some(v) = e.attributes.get(*attr).or(body_field) {
                if !v.is_null() {
                    direct[i] = Some(as_text(v));
                }
            }
        }
        match e.event_name.as_deref() {
            Some("gen_ai.system.message") => input.push(message("system", e.body.as_ref())),
            Some("gen_ai.user.message") => input.push(message("user", e.body.as_ref())),
            Some("gen_ai.assistant.message") => input.push(message("assistant", e.body.as_ref())),
            Some("gen_ai.tool.message") => input.push(tool_message(e.body.as_ref())),
            Some("gen_ai.choice") => output.push(choice(e.body.as_ref())),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (i, (attr, _)) in CONTENT_COLUMNS.iter().enumerate() {
        let rebuilt = match *attr {
            INPUT_MESSAGES if !input.is_empty() => Some(Json::Array(input.clone()).to_string()),
            OUTPUT_MESSAGES if !output.is_empty() => Some(Json::Array(output.clone()).to_string()),
            _ => None,
        };
        if let Some(v) = direct[i].take().or(rebuilt) {
            out.push((*attr, v));
        }
    }
    out
}

/// A span's identity: trace id and span id.
pub type SpanKey = ([u8; 16], [u8; 8]);

/// Content attributes (name, value) per span, from its events.
pub type ContentBySpan = HashMap<SpanKey, Vec<(&'static str, String)>>;

/// Adds to every span of `request` the content attributes `content` holds for it (by trace id
/// and span id) that the span does not have itself: attributes on the span win. Returns the
/// spans that got at least one.
pub fn add_content_attributes(
    request: &mut ExportTraceServiceRequest,
    content: &ContentBySpan,
) -> Vec<SpanKey> {
    let mut changed = Vec::new();
    for span in request
        .resource_spans
        .iter_mut()
        .flat_map(|rs| rs.scope_spans.iter_mut())
        .flat_map(|ss| ss.spans.iter_mut())
    {
        let (Ok(t), Ok(s)) = (
            <[u8; 16]>::try_from(span.trace_id.as_slice()),
            <[u8; 8]>::try_from(span.span_id.as_slice()),
        ) else {
            continue;
        };
        let Some(attrs) = content.get(&(t, s)) else {
            continue;
        };
        for (key, value) in attrs {
            if span.attributes.iter().any(|kv| kv.key == *key) {
                continue;
            }
            span.attributes.push(KeyValue {
                key: (*key).to_string(),
                value: Some(AnyValue {
                    value: Some(Value::StringValue(value.clone())),
                }),
                ..Default::default()
            });
            if changed.last() != Some(&(t, s)) {
                changed.push((t, s));
            }
        }
    }
    changed
}

/// A JSON string as its text, anything else as JSON text.
fn as_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text parts of a message body's `content` (a string, or a list of `{type, text}` blocks).
fn text_parts(content: Option<&Json>) -> Vec<Json> {
    match content {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::String(s)) => vec![json!({"type": "text", "content": s})],
        Some(Json::Array(items)) => items
            .iter()
            .map(|item| match item {
                Json::Object(o) => match o.get("text").or(o.get("content")) {
                    Some(t) => json!({"type": "text", "content": as_text(t)}),
                    None => item.clone(),
                },
                other => json!({"type": "text", "content": as_text(other)}),
            })
            .collect(),
        Some(other) => vec![json!({"type": "text", "content": as_text(other)})],
    }
}

/// `tool_calls: [{id, type, function: {name, arguments}}]` into `tool_call` parts.
fn tool_call_parts(calls: Option<&Json>) -> Vec<Json> {
    let Some(Json::Array(calls)) = calls else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|c| {
            let f = c.get("function");
            let arguments = f.and_then(|f| f.get("arguments")).cloned();
            // Arguments are a JSON object in the current form; the old events often carry text.
            let arguments = match arguments {
                Some(Json::String(s)) => serde_json::from_str(&s).unwrap_or(Json::String(s)),
                Some(v) => v,
                None => Json::Null,
            };
            json!({
                "type": "tool_call",
                "id": c.get("id").cloned().unwrap_or(Json::Null),
                "name": f.and_then(|f| f.get("name")).cloned().unwrap_or(Json::Null),
                "arguments": arguments,
            })
        })
        .collect()
}

fn message(role: &str, body: Option<&Json>) -> Json {
    let role = body
        .and_then(|b| b.get("role"))
        .and_then(Json::as_str)
        .unwrap_or(role);
    let mut parts = text_parts(body.and_then(|b| b.get("content")));
    parts.extend(tool_call_parts(body.and_then(|b| b.get("tool_calls"))));
    json!({"role": role, "parts": parts})
}

fn tool_message(body: Option<&Json>) -> Json {
    let response = body
        .and_then(|b| b.get("content"))
        .cloned()
        .unwrap_or(Json::Null);
    json!({
        "role": "tool",
        "parts": [{
            "type": "tool_call_response",
            "id": body.and_then(|b| b.get("id")).cloned().unwrap_or(Json::Null),
            "response": response,
        }],
    })
}

fn choice(body: Option<&Json>) -> Json {
    let msg = body.and_then(|b| b.get("message"));
    let mut m = message("assistant", msg);
    if let (Json::Object(o), Some(reason)) = (&mut m, body.and_then(|b| b.get("finish_reason"))) {
        o.insert("finish_reason".into(), reason.clone());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: i64, name: &str, body: Option<Json>, attrs: Json) -> EventRecord {
        EventRecord {
            time_unix_nano: t,
            event_name: Some(name.into()),
            body,
            attributes: attrs.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn operation_details_attributes_become_span_content_attributes() {
        let events = [ev(
            1,
            "gen_ai.client.inference.operation.details",
            None,
            json!({
                "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
                "gen_ai.tool.definitions": "[{\"name\":\"f\"}]",
                "gen_ai.operation.name": "chat",
            }),
        )];
        let got = content_attributes(&events);
        assert_eq!(
            got,
            vec![
                ("gen_ai.tool.definitions", "[{\"name\":\"f\"}]".to_string()),
                (
                    "gen_ai.input.messages",
                    "[{\"parts\":[{\"content\":\"hi\",\"type\":\"text\"}],\"role\":\"user\"}]"
                        .to_string()
                ),
            ]
        );
    }

    #[test]
    fn legacy_message_events_are_rebuilt_in_order() {
        let events = [
            ev(
                3,
                "gen_ai.choice",
                Some(
                    json!({"index": 0, "finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}]}}),
                ),
                json!({}),
            ),
            ev(
                2,
                "gen_ai.user.message",
                Some(json!({"content": "find x"})),
                json!({}),
            ),
            ev(
                1,
                "gen_ai.system.message",
                Some(json!({"content": "be brief"})),
                json!({}),
            ),
            ev(
                4,
                "gen_ai.tool.message",
                Some(json!({"id": "c1", "content": "{\"ok\":true}"})),
                json!({}),
            ),
        ];
        let got = content_attributes(&events);
        let input: Json = serde_json::from_str(&got[0].1).unwrap();
        assert_eq!(got[0].0, INPUT_MESSAGES);
        assert_eq!(
            input,
            json!([
                {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
                {"role": "user", "parts": [{"type": "text", "content": "find x"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "{\"ok\":true}"}]},
            ])
        );
        assert_eq!(got[1].0, OUTPUT_MESSAGES);
        let output: Json = serde_json::from_str(&got[1].1).unwrap();
        assert_eq!(
            output,
            json!([{"role": "assistant", "finish_reason": "tool_calls", "parts": [
                {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": 1}}
            ]}])
        );
    }

    #[test]
    fn a_direct_attribute_wins_over_rebuilt_messages_and_unrelated_events_give_nothing() {
        let events = [
            ev(
                1,
                "gen_ai.user.message",
                Some(json!({"content": "a"})),
                json!({}),
            ),
            ev(
                2,
                "x",
                None,
                json!({"gen_ai.input.messages": "[\"direct\"]"}),
            ),
        ];
        assert_eq!(
            content_attributes(&events),
            vec![(INPUT_MESSAGES, "[\"direct\"]".to_string())]
        );
        assert!(
            content_attributes(&[ev(1, "app.log", Some(json!("hello")), json!({}))]).is_empty()
        );
    }

    #[test]
    fn stored_text_is_parsed_back() {
        let e = EventRecord::from_stored(5, Some("e"), Some("\"x\""), Some("{\"k\":1}"));
        assert_eq!(e.body, Some(json!("x")));
        assert_eq!(e.attributes.get("k"), Some(&json!(1)));
    }
}
