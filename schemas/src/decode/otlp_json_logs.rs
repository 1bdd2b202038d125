//! The lenient OTLP/JSON reader for logs: `ExportLogsServiceRequest`, and one line of a recorded
//! file that may hold `resourceSpans`, `resourceLogs` or both (the OpenTelemetry Collector's file
//! exporter writes one signal per line; hand-made recordings mix them). Same leniency as the span
//! reader ([`super::otlp_json`]): `null` anywhere, numbers as strings, hex or base64 ids, enum
//! names, snake_case keys.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use serde::{Deserialize, Deserializer};

use super::otlp_json::{
    id_bytes, json_error, kvs, lenient_u32, lenient_u64, nullable, EnumVisitor, JAnyValue,
    JKeyValue, JResource, JResourceSpans, JScope,
};
use crate::error::DecodeError;

#[derive(Deserialize, Default)]
#[serde(default)]
struct JLogsRequest {
    #[serde(
        rename = "resourceLogs",
        alias = "resource_logs",
        deserialize_with = "nullable"
    )]
    resource_logs: Vec<JResourceLogs>,
}

/// A line of a recorded file: either signal, or both.
#[derive(Deserialize, Default)]
#[serde(default)]
struct JSignals {
    #[serde(
        rename = "resourceSpans",
        alias = "resource_spans",
        deserialize_with = "nullable"
    )]
    resource_spans: Vec<JResourceSpans>,
    #[serde(
        rename = "resourceLogs",
        alias = "resource_logs",
        deserialize_with = "nullable"
    )]
    resource_logs: Vec<JResourceLogs>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JResourceLogs {
    #[serde(deserialize_with = "nullable")]
    resource: Option<JResource>,
    #[serde(
        rename = "scopeLogs",
        alias = "scope_logs",
        deserialize_with = "nullable"
    )]
    scope_logs: Vec<JScopeLogs>,
    #[serde(
        rename = "schemaUrl",
        alias = "schema_url",
        deserialize_with = "nullable"
    )]
    schema_url: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JScopeLogs {
    #[serde(deserialize_with = "nullable")]
    scope: Option<JScope>,
    #[serde(
        rename = "logRecords",
        alias = "log_records",
        deserialize_with = "nullable"
    )]
    log_records: Vec<JLogRecord>,
    #[serde(
        rename = "schemaUrl",
        alias = "schema_url",
        deserialize_with = "nullable"
    )]
    schema_url: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct JLogRecord {
    #[serde(
        rename = "timeUnixNano",
        alias = "time_unix_nano",
        deserialize_with = "lenient_u64"
    )]
    time_unix_nano: u64,
    #[serde(
        rename = "observedTimeUnixNano",
        alias = "observed_time_unix_nano",
        deserialize_with = "lenient_u64"
    )]
    observed_time_unix_nano: u64,
    #[serde(
        rename = "severityNumber",
        alias = "severity_number",
        deserialize_with = "severity_number"
    )]
    severity_number: i32,
    #[serde(
        rename = "severityText",
        alias = "severity_text",
        deserialize_with = "nullable"
    )]
    severity_text: String,
    #[serde(deserialize_with = "nullable")]
    body: Option<JAnyValue>,
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
    #[serde(rename = "traceId", alias = "trace_id", deserialize_with = "id_bytes")]
    trace_id: Vec<u8>,
    #[serde(rename = "spanId", alias = "span_id", deserialize_with = "id_bytes")]
    span_id: Vec<u8>,
    #[serde(
        rename = "eventName",
        alias = "event_name",
        deserialize_with = "nullable"
    )]
    event_name: String,
}

/// Severity names without the `SEVERITY_NUMBER_` prefix, indexed by number.
const SEVERITY_NAMES: [&str; 25] = [
    "UNSPECIFIED",
    "TRACE",
    "TRACE2",
    "TRACE3",
    "TRACE4",
    "DEBUG",
    "DEBUG2",
    "DEBUG3",
    "DEBUG4",
    "INFO",
    "INFO2",
    "INFO3",
    "INFO4",
    "WARN",
    "WARN2",
    "WARN3",
    "WARN4",
    "ERROR",
    "ERROR2",
    "ERROR3",
    "ERROR4",
    "FATAL",
    "FATAL2",
    "FATAL3",
    "FATAL4",
];

fn severity_number<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    d.deserialize_any(EnumVisitor {
        what: "severity number",
        prefix: "SEVERITY_NUMBER_",
        names: &SEVERITY_NAMES,
    })
}

impl From<JResourceLogs> for ResourceLogs {
    fn from(rl: JResourceLogs) -> Self {
        ResourceLogs {
            resource: rl.resource.map(Into::into),
            scope_logs: rl.scope_logs.into_iter().map(Into::into).collect(),
            schema_url: rl.schema_url,
        }
    }
}

impl From<JScopeLogs> for ScopeLogs {
    fn from(sl: JScopeLogs) -> Self {
        ScopeLogs {
            scope: sl.scope.map(Into::into),
            log_records: sl.log_records.into_iter().map(Into::into).collect(),
            schema_url: sl.schema_url,
        }
    }
}

impl From<JLogRecord> for LogRecord {
    fn from(r: JLogRecord) -> Self {
        LogRecord {
            time_unix_nano: r.time_unix_nano,
            observed_time_unix_nano: r.observed_time_unix_nano,
            severity_number: r.severity_number,
            severity_text: r.severity_text,
            body: r.body.map(|b| b.0),
            attributes: kvs(r.attributes),
            dropped_attributes_count: r.dropped_attributes_count,
            flags: r.flags,
            trace_id: r.trace_id,
            span_id: r.span_id,
            event_name: r.event_name,
        }
    }
}

fn parse<'a, T: Deserialize<'a>>(body: &'a [u8], line_offset: usize) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed: T =
        serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(e, line_offset))?;
    de.end().map_err(|e| DecodeError::Json {
        path: "the end of the body".into(),
        line: e.line() + line_offset,
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(parsed)
}

pub(super) fn decode_logs_request(
    body: &[u8],
    line_offset: usize,
) -> Result<ExportLogsServiceRequest, DecodeError> {
    let parsed: JLogsRequest = parse(body, line_offset)?;
    Ok(ExportLogsServiceRequest {
        resource_logs: parsed.resource_logs.into_iter().map(Into::into).collect(),
    })
}

pub(super) fn decode_signals(
    body: &[u8],
    line_offset: usize,
) -> Result<(ExportTraceServiceRequest, ExportLogsServiceRequest), DecodeError> {
    let parsed: JSignals = parse(body, line_offset)?;
    Ok((
        ExportTraceServiceRequest {
            resource_spans: parsed.resource_spans.into_iter().map(Into::into).collect(),
        },
        ExportLogsServiceRequest {
            resource_logs: parsed.resource_logs.into_iter().map(Into::into).collect(),
        },
    ))
}
