//! A tiny in-process OTLP/HTTP receiver, and the merge that turns what it received into one
//! `ExportTraceServiceRequest` per sample file.
//!
//! Why a sink and not a file exporter: the spans of one scenario come from several processes (the
//! host and each MCP server). Pointing every process's real OTLP/HTTP exporter at this loopback
//! sink keeps the SDK pipeline exactly the one users run against a collector (`--endpoint`), and
//! gives one place that sees all of a scenario's spans. The merge groups spans by resource and
//! scope and orders everything (services by name, spans by start time then span id), so the file
//! does not depend on how the exporters happened to batch.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValueKind;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};
use prost::Message;
use tokio::sync::oneshot;

use crate::error::SamplesError;

type Received = Arc<Mutex<Vec<ExportTraceServiceRequest>>>;

/// Service name (for ordering), then the encoded resource.
type ResourceKey = (String, Vec<u8>);

/// A running sink on `127.0.0.1:<free port>`.
pub struct Sink {
    pub addr: SocketAddr,
    received: Received,
    stop: Option<oneshot::Sender<()>>,
}

impl Sink {
    pub async fn start() -> Result<Self, SamplesError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(SamplesError::Sink)?;
        let addr = listener.local_addr().map_err(SamplesError::Sink)?;
        let received: Received = Arc::default();
        let app = Router::new()
            .route("/v1/traces", post(receive))
            .with_state(received.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            received,
            stop: Some(stop),
        })
    }

    /// Base URL for exporters (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Takes everything received so far.
    pub fn take(&self) -> Vec<ExportTraceServiceRequest> {
        match self.received.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn receive(State(received): State<Received>, body: Bytes) -> impl IntoResponse {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            if let Ok(mut r) = received.lock() {
                r.push(request);
            }
            let response = ExportTraceServiceResponse {
                partial_success: None,
            };
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/x-protobuf")],
                response.encode_to_vec(),
            )
        }
        Err(e) => (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "text/plain")],
            format!("invalid ExportTraceServiceRequest: {e}").into_bytes(),
        ),
    }
}

fn service_name(resource: &Option<Resource>) -> String {
    resource
        .as_ref()
        .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| match &v.value {
            Some(AnyValueKind::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Merges export requests into one, grouped by resource and scope, in a canonical order.
pub fn merge(requests: Vec<ExportTraceServiceRequest>) -> ExportTraceServiceRequest {
    // key: (service name, encoded resource) -> (resource, schema url, scopes)
    let mut by_resource: BTreeMap<ResourceKey, (ResourceSpans, BTreeMap<Vec<u8>, ScopeSpans>)> =
        BTreeMap::new();
    for request in requests {
        for mut rs in request.resource_spans {
            // The SDK keeps resource attributes in a hash map: order them so files are stable.
            if let Some(r) = rs.resource.as_mut() {
                r.attributes.sort_by(|a, b| a.key.cmp(&b.key));
            }
            let key = (
                service_name(&rs.resource),
                rs.resource
                    .as_ref()
                    .map(|r| r.encode_to_vec())
                    .unwrap_or_default(),
            );
            let entry = by_resource.entry(key).or_insert_with(|| {
                (
                    ResourceSpans {
                        resource: rs.resource.clone(),
                        scope_spans: Vec::new(),
                        schema_url: rs.schema_url.clone(),
                    },
                    BTreeMap::new(),
                )
            });
            for ss in rs.scope_spans {
                let scope_key = ss
                    .scope
                    .as_ref()
                    .map(|s| s.encode_to_vec())
                    .unwrap_or_default();
                let scope = entry.1.entry(scope_key).or_insert_with(|| ScopeSpans {
                    scope: ss.scope.clone(),
                    spans: Vec::new(),
                    schema_url: ss.schema_url.clone(),
                });
                scope.spans.extend(ss.spans);
            }
        }
    }
    let resource_spans = by_resource
        .into_values()
        .map(|(mut rs, scopes)| {
            rs.scope_spans = scopes
                .into_values()
                .map(|mut ss| {
                    ss.spans.sort_by(|a, b| {
                        (a.start_time_unix_nano, &a.span_id)
                            .cmp(&(b.start_time_unix_nano, &b.span_id))
                    });
                    ss
                })
                .collect();
            rs
        })
        .collect();
    ExportTraceServiceRequest { resource_spans }
}

/// Number of spans in a request.
pub fn span_count(request: &ExportTraceServiceRequest) -> usize {
    request
        .resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .map(|ss| ss.spans.len())
        .sum()
}

/// Writes a request as OTLP/JSON (opentelemetry-proto's serde: hex ids, camelCase), pretty printed
/// with a trailing newline so committed files diff well.
pub fn write_json(path: &Path, request: &ExportTraceServiceRequest) -> Result<(), SamplesError> {
    let mut text = serde_json::to_string_pretty(request)?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| SamplesError::Write(path.to_path_buf(), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
    use opentelemetry_proto::tonic::trace::v1::Span;

    fn request(service: &str, spans: &[(u64, u8)]) -> ExportTraceServiceRequest {
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![KeyValue {
                        key: "service.name".into(),
                        value: Some(AnyValue {
                            value: Some(AnyValueKind::StringValue(service.into())),
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                scope_spans: vec![ScopeSpans {
                    spans: spans
                        .iter()
                        .map(|(start, id)| Span {
                            start_time_unix_nano: *start,
                            span_id: vec![*id; 8],
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }],
                schema_url: String::new(),
            }],
        }
    }

    #[test]
    fn merge_groups_by_service_and_orders_spans() {
        let merged = merge(vec![
            request("z-server", &[(5, 1)]),
            request("a-host", &[(9, 2), (1, 3)]),
            request("z-server", &[(2, 4)]),
        ]);
        assert_eq!(merged.resource_spans.len(), 2);
        assert_eq!(service_name(&merged.resource_spans[0].resource), "a-host");
        let starts: Vec<u64> = merged.resource_spans[1].scope_spans[0]
            .spans
            .iter()
            .map(|s| s.start_time_unix_nano)
            .collect();
        assert_eq!(starts, vec![2, 5]);
        assert_eq!(span_count(&merged), 4);
    }

    #[tokio::test]
    async fn sink_decodes_protobuf_posts_and_rejects_garbage() {
        let sink = Sink::start().await.unwrap();
        let url = format!("{}/v1/traces", sink.endpoint());
        let body = request("svc", &[(1, 1)]).encode_to_vec();
        let ok = tokio::task::spawn_blocking({
            let url = url.clone();
            move || {
                let client = reqwest::blocking::Client::new();
                let good = client.post(&url).body(body).send().unwrap().status();
                let bad = client
                    .post(&url)
                    .body(vec![0xff, 0xff, 0xff])
                    .send()
                    .unwrap()
                    .status();
                (good, bad)
            }
        })
        .await
        .unwrap();
        assert_eq!(ok.0.as_u16(), 200);
        assert_eq!(ok.1.as_u16(), 400);
        let got = sink.take();
        assert_eq!(got.len(), 1);
        assert_eq!(span_count(&got[0]), 1);
    }
}
