//! A lenient mirror of the OTLP/JSON message tree, converted into the prost types.
//!
//! Field readers accept what real senders write: `null` anywhere, numbers as JSON numbers or
//! strings, ids as hex (spec) or base64 (plain protobuf JSON mapping), enums as integers or names,
//! lowerCamelCase or snake_case keys. (The writer of the canonical form is `crate::encode`.)

use std::fmt;

use base64::Engine as _;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::DecodeError;
use crate::kind_status::{SpanKind, StatusCode};

pub(super) fn decode_request(
    body: &[u8],
    line_offset: usize,
) -> Result<ExportTraceServiceRequest, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed: JRequest =
        serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(e, line_offset))?;
    de.end().map_err(|e| DecodeError::Json {
        path: "the end of the body".into(),
        line: e.line() + line_offset,
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(parsed.into())
}

pub(super) fn decode_any_value(body: &[u8]) -> Result<AnyValue, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed: JAnyValue =
        serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(e, 0))?;
    Ok(parsed.0)
}

/// Parses a JSON object of attributes (`{"key":{"stringValue":"v"},...}`, the form
/// [`crate::encode::attributes_json`] writes) into key/values in the object's order.
pub(super) fn decode_attributes_object(body: &[u8]) -> Result<Vec<KeyValue>, DecodeError> {
    struct Attrs(Vec<KeyValue>);
    impl<'de> Deserialize<'de> for Attrs {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Attrs;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a JSON object of attributes")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Attrs, A::Error> {
                    let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                    while let Some(key) = map.next_key::<String>()? {
                        let value: JAnyValue = map.next_value()?;
                        out.push(KeyValue {
                            key,
                            value: Some(value.0),
                            ..Default::default()
                        });
                    }
                    Ok(Attrs(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed: Attrs = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(e, 0))?;
    Ok(parsed.0)
}

pub(super) fn json_error(
    e: serde_path_to_error::Error<serde_json::Error>,
    line_offset: usize,
) -> DecodeError {
    let path = e.path().to_string();
    let path = if path == "." {
        "the top level".to_string()
    } else {
        path
    };
    let inner = e.into_inner();
    DecodeError::Json {
        path,
        line: inner.line() + line_offset,
        column: inner.column(),
        // serde_json appends " at line L column C"; we report those separately.
        message: strip_position(&inner.to_string()),
    }
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// mirror types

#[derive(Deserialize, Default)]
#[serde(default)]
struct JRequest {
    #[serde(
        rename = "resourceSpans",
        alias = "resource_spans",
        deserialize_with = "nullable"
    )]
    resource_spans: Vec<JResourceSpans>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct JResourceSpans {
    #[serde(deserialize_with = "nullable")]
    resource: Option<JResource>,
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        deserialize_with = "nullable"
    )]
    scope_spans: Vec<JScopeSpans>,
    #[serde(
        rename = "schemaUrl",
        alias = "schema_url",
        deserialize_with = "nullable"
    )]
    schema_url: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct JResource {
    #[serde(deserialize_with = "nullable")]
    pub(super) attributes: Vec<JKeyValue>,
    #[serde(
        rename = "droppedAttributesCount",
        alias = "dropped_attributes_count",
        deserialize_with = "lenient_u32"
    )]
    pub(super) dropped_attributes_count: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JScopeSpans {
    #[serde(deserialize_with = "nullable")]
    scope: Option<JScope>,
    #[serde(deserialize_with = "nullable")]
    spans: Vec<JSpan>,
    #[serde(
        rename = "schemaUrl",
        alias = "schema_url",
        deserialize_with = "nullable"
    )]
    schema_url: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct JScope {
    #[serde(deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) version: String,
    #[serde(deserialize_with = "nullable")]
    pub(super) attributes: Vec<JKeyValue>,
    #[serde(
        rename = "droppedAttributesCount",
        alias = "dropped_attributes_count",
        deserialize_with = "lenient_u32"
    )]
    pub(super) dropped_attributes_count: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JSpan {
    #[serde(rename = "traceId", alias = "trace_id", deserialize_with = "id_bytes")]
    trace_id: Vec<u8>,
    #[serde(rename = "spanId", alias = "span_id", deserialize_with = "id_bytes")]
    span_id: Vec<u8>,
    #[serde(
        rename = "traceState",
        alias = "trace_state",
        deserialize_with = "nullable"
    )]
    trace_state: String,
    #[serde(
        rename = "parentSpanId",
        alias = "parent_span_id",
        deserialize_with = "id_bytes"
    )]
    parent_span_id: Vec<u8>,
    #[serde(deserialize_with = "lenient_u32")]
    flags: u32,
    #[serde(deserialize_with = "nullable")]
    name: String,
    #[serde(deserialize_with = "span_kind")]
    kind: i32,
    #[serde(
        rename = "startTimeUnixNano",
        alias = "start_time_unix_nano",
        deserialize_with = "lenient_u64"
    )]
    start_time_unix_nano: u64,
    #[serde(
        rename = "endTimeUnixNano",
        alias = "end_time_unix_nano",
        deserialize_with = "lenient_u64"
    )]
    end_time_unix_nano: u64,
    #[serde(deserialize_with = "nullable")]
    attributes: Vec<JKeyValue>,
    #[serde(
        rename = "droppedAttributesCount",
        alias = "dropped_attributes_count",
        deserialize_with = "lenient_u32"
    )]
    dropped_attributes_count: u32,
    #[serde(deserialize_with = "nullable")]
    events: Vec<JEvent>,
    #[serde(
        rename = "droppedEventsCount",
        alias = "dropped_events_count",
        deserialize_with = "lenient_u32"
    )]
    dropped_events_count: u32,
    #[serde(deserialize_with = "nullable")]
    links: Vec<JLink>,
    #[serde(
        rename = "droppedLinksCount",
        alias = "dropped_links_count",
        deserialize_with = "lenient_u32"
    )]
    dropped_links_count: u32,
    #[serde(deserialize_with = "nullable")]
    status: Option<JStatus>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JEvent {
    #[serde(
        rename = "timeUnixNano",
        alias = "time_unix_nano",
        deserialize_with = "lenient_u64"
    )]
    time_unix_nano: u64,
    #[serde(deserialize_with = "nullable")]
    name: String,
    #[serde(deserialize_with = "nullable")]
    attributes: Vec<JKeyValue>,
    #[serde(
        rename = "droppedAttributesCount",
        alias = "dropped_attributes_count",
        deserialize_with = "lenient_u32"
    )]
    dropped_attributes_count: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JLink {
    #[serde(rename = "traceId", alias = "trace_id", deserialize_with = "id_bytes")]
    trace_id: Vec<u8>,
    #[serde(rename = "spanId", alias = "span_id", deserialize_with = "id_bytes")]
    span_id: Vec<u8>,
    #[serde(
        rename = "traceState",
        alias = "trace_state",
        deserialize_with = "nullable"
    )]
    trace_state: String,
    #[serde(deserialize_with = "nullable")]
    attributes: Vec<JKeyValue>,
    #[serde(
        rename = "droppedAttributesCount",
        alias = "dropped_attributes_count",
        deserialize_with = "lenient_u32"
    )]
    dropped_attributes_count: u32,
    #[serde(deserialize_with = "lenient_u32")]
    flags: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JStatus {
    #[serde(deserialize_with = "nullable")]
    message: String,
    #[serde(deserialize_with = "status_code")]
    code: i32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct JKeyValue {
    #[serde(deserialize_with = "nullable")]
    key: String,
    #[serde(deserialize_with = "nullable")]
    value: Option<JAnyValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JArrayValue {
    #[serde(deserialize_with = "nullable")]
    values: Vec<JAnyValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JKeyValueList {
    #[serde(deserialize_with = "nullable")]
    values: Vec<JKeyValue>,
}

/// An `AnyValue`: an object with at most one of the `*Value` keys (an empty object is the empty
/// value).
#[derive(Default)]
pub(super) struct JAnyValue(pub(super) AnyValue);

impl<'de> Deserialize<'de> for JAnyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AnyValueVisitor)
    }
}

struct AnyValueVisitor;

impl<'de> Visitor<'de> for AnyValueVisitor {
    type Value = JAnyValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AnyValue object such as {\"stringValue\": \"x\"}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JAnyValue, A::Error> {
        use any_value::Value;
        let mut value = None;
        while let Some(key) = map.next_key::<String>()? {
            let v = match key.as_str() {
                "stringValue" | "string_value" => {
                    map.next_value::<Option<String>>()?.map(Value::StringValue)
                }
                "boolValue" | "bool_value" => {
                    map.next_value::<Option<bool>>()?.map(Value::BoolValue)
                }
                "intValue" | "int_value" => map
                    .next_value::<Option<LenientI64>>()?
                    .map(|v| Value::IntValue(v.0)),
                "doubleValue" | "double_value" => map
                    .next_value::<Option<LenientF64>>()?
                    .map(|v| Value::DoubleValue(v.0)),
                "arrayValue" | "array_value" => map
                    .next_value::<Option<JArrayValue>>()?
                    .map(|a| Value::ArrayValue(a.into())),
                "kvlistValue" | "kvlist_value" => map
                    .next_value::<Option<JKeyValueList>>()?
                    .map(|l| Value::KvlistValue(l.into())),
                "bytesValue" | "bytes_value" => match map.next_value::<Option<String>>()? {
                    Some(text) => Some(Value::BytesValue(
                        base64::engine::general_purpose::STANDARD
                            .decode(text.as_bytes())
                            .map_err(|e| {
                                de::Error::custom(format!("bytesValue `{text}` is not base64: {e}"))
                            })?,
                    )),
                    None => None,
                },
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                    None
                }
            };
            if v.is_some() {
                value = v;
            }
        }
        Ok(JAnyValue(AnyValue { value }))
    }
}

// ---------------------------------------------------------------------------------------------
// conversions into the prost types

pub(super) fn kvs(list: Vec<JKeyValue>) -> Vec<KeyValue> {
    list.into_iter().map(Into::into).collect()
}

impl From<JKeyValue> for KeyValue {
    fn from(kv: JKeyValue) -> Self {
        KeyValue {
            key: kv.key,
            value: kv.value.map(|v| v.0),
            ..Default::default()
        }
    }
}

impl From<JArrayValue> for ArrayValue {
    fn from(a: JArrayValue) -> Self {
        ArrayValue {
            values: a.values.into_iter().map(|v| v.0).collect(),
        }
    }
}

impl From<JKeyValueList> for KeyValueList {
    fn from(l: JKeyValueList) -> Self {
        KeyValueList {
            values: kvs(l.values),
        }
    }
}

impl From<JRequest> for ExportTraceServiceRequest {
    fn from(r: JRequest) -> Self {
        ExportTraceServiceRequest {
            resource_spans: r.resource_spans.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<JResource> for Resource {
    fn from(r: JResource) -> Self {
        Resource {
            attributes: kvs(r.attributes),
            dropped_attributes_count: r.dropped_attributes_count,
            ..Default::default()
        }
    }
}

impl From<JScope> for InstrumentationScope {
    fn from(s: JScope) -> Self {
        InstrumentationScope {
            name: s.name,
            version: s.version,
            attributes: kvs(s.attributes),
            dropped_attributes_count: s.dropped_attributes_count,
        }
    }
}

impl From<JResourceSpans> for ResourceSpans {
    fn from(rs: JResourceSpans) -> Self {
        ResourceSpans {
            resource: rs.resource.map(Into::into),
            scope_spans: rs.scope_spans.into_iter().map(Into::into).collect(),
            schema_url: rs.schema_url,
        }
    }
}

impl From<JScopeSpans> for ScopeSpans {
    fn from(ss: JScopeSpans) -> Self {
        ScopeSpans {
            scope: ss.scope.map(Into::into),
            spans: ss.spans.into_iter().map(Into::into).collect(),
            schema_url: ss.schema_url,
        }
    }
}

impl From<JSpan> for Span {
    fn from(s: JSpan) -> Self {
        Span {
            trace_id: s.trace_id,
            span_id: s.span_id,
            trace_state: s.trace_state,
            parent_span_id: s.parent_span_id,
            flags: s.flags,
            name: s.name,
            kind: s.kind,
            start_time_unix_nano: s.start_time_unix_nano,
            end_time_unix_nano: s.end_time_unix_nano,
            attributes: kvs(s.attributes),
            dropped_attributes_count: s.dropped_attributes_count,
            events: s
                .events
                .into_iter()
                .map(|e| span::Event {
                    time_unix_nano: e.time_unix_nano,
                    name: e.name,
                    attributes: kvs(e.attributes),
                    dropped_attributes_count: e.dropped_attributes_count,
                })
                .collect(),
            dropped_events_count: s.dropped_events_count,
            links: s
                .links
                .into_iter()
                .map(|l| span::Link {
                    trace_id: l.trace_id,
                    span_id: l.span_id,
                    trace_state: l.trace_state,
                    attributes: kvs(l.attributes),
                    dropped_attributes_count: l.dropped_attributes_count,
                    flags: l.flags,
                })
                .collect(),
            dropped_links_count: s.dropped_links_count,
            status: s.status.map(|st| Status {
                message: st.message,
                code: st.code,
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// lenient field readers

pub(super) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

pub(super) fn id_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(Vec::new());
    };
    if text.len() % 2 == 0 {
        if let Ok(bytes) = hex::decode(&text) {
            return Ok(bytes);
        }
    }
    base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|_| {
            de::Error::custom(format!(
                "id `{text}` is neither hex nor base64 (OTLP/JSON ids are hex strings)"
            ))
        })
}

/// An integer written as a JSON number or a decimal string.
struct IntVisitor<T>(&'static str, std::marker::PhantomData<T>);

impl<'de, T> Visitor<'de> for IntVisitor<T>
where
    T: TryFrom<u64> + TryFrom<i64> + std::str::FromStr + Default,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} as a number or a decimal string", self.0)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for {}", self.0)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for {}", self.0)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        // Some JSON writers emit integral values as floats (1.0); accept exact integers only.
        if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
            if v >= 0.0 {
                return self.visit_u64(v as u64);
            }
            return self.visit_i64(v as i64);
        }
        Err(E::custom(format!("{v} is not an integer ({})", self.0)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.trim()
            .parse::<T>()
            .map_err(|_| E::custom(format!("`{v}` is not a valid {}", self.0)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
}

pub(super) fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(IntVisitor::<u64>(
        "unsigned 64-bit integer",
        Default::default(),
    ))
}

pub(super) fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    d.deserialize_any(IntVisitor::<u32>(
        "unsigned 32-bit integer",
        Default::default(),
    ))
}

struct LenientI64(i64);

impl<'de> Deserialize<'de> for LenientI64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntVisitor::<i64>("64-bit integer", Default::default()))
            .map(LenientI64)
    }
}

struct LenientF64(f64);

impl<'de> Deserialize<'de> for LenientF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = f64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, or \"NaN\" / \"Infinity\" / \"-Infinity\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
                match v {
                    "NaN" => Ok(f64::NAN),
                    "Infinity" => Ok(f64::INFINITY),
                    "-Infinity" => Ok(f64::NEG_INFINITY),
                    other => other
                        .parse::<f64>()
                        .map_err(|_| E::custom(format!("`{other}` is not a double"))),
                }
            }
        }
        d.deserialize_any(V).map(LenientF64)
    }
}

/// An enum written as its number or its name, with or without the type prefix.
pub(super) struct EnumVisitor {
    pub(super) what: &'static str,
    pub(super) prefix: &'static str,
    /// Names without the prefix, indexed by enum number.
    pub(super) names: &'static [&'static str],
}

impl<'de> Visitor<'de> for EnumVisitor {
    type Value = i32;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} as an integer or a name", self.what)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i32, E> {
        i32::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for {}", self.what)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i32, E> {
        i32::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for {}", self.what)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<i32, E> {
        if let Ok(n) = v.trim().parse::<i32>() {
            return Ok(n);
        }
        let upper = v.trim().to_ascii_uppercase();
        let short = upper.strip_prefix(self.prefix).unwrap_or(&upper);
        self.names
            .iter()
            .position(|name| *name == short)
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| {
                let known: Vec<String> = self
                    .names
                    .iter()
                    .map(|n| format!("{}{n}", self.prefix))
                    .collect();
                E::custom(format!(
                    "unknown {} `{v}`; expected one of {}",
                    self.what,
                    known.join(", ")
                ))
            })
    }
    fn visit_unit<E: de::Error>(self) -> Result<i32, E> {
        Ok(0)
    }
    fn visit_none<E: de::Error>(self) -> Result<i32, E> {
        Ok(0)
    }
}

fn span_kind<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    d.deserialize_any(EnumVisitor {
        what: "span kind",
        prefix: SpanKind::OTLP_PREFIX,
        names: &SpanKind::NAMES,
    })
}

fn status_code<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    d.deserialize_any(EnumVisitor {
        what: "status code",
        prefix: StatusCode::OTLP_PREFIX,
        names: &StatusCode::NAMES,
    })
}
