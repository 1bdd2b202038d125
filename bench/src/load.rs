//! The load generator: concurrent OTLP/HTTP (protobuf) or OTLP/gRPC exporters, bounded in count
//! and in time, counting only spans the receiver acknowledged.
//!
//! Why "acknowledged" and not "sent": a collector that answers 429 or drops a request is not
//! faster for it. A span counts once the receiver answered 2xx / OK, minus the
//! `partial_success.rejected_spans` it reported. Refusals (HTTP 429/503, gRPC
//! RESOURCE_EXHAUSTED/UNAVAILABLE) are counted apart so overload runs show them.
//!
//! Each worker owns its own [`RequestBuilder`] with a distinct stream id, so span ids stay unique
//! across workers and the store can be checked by counting distinct ids afterwards.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use serde::Serialize;
use tonic::transport::Channel;

use crate::stats::{summarize_micros, LatencySummary};
use synth::{RequestBuilder, SpanMix};

/// Wire protocol of the exporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OTLP/HTTP, protobuf body, `POST {endpoint}/v1/traces`.
    Http,
    /// OTLP/gRPC, `TraceService/Export`.
    Grpc,
}

/// What to send, how hard, and for how long at most.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Base URL, e.g. `http://127.0.0.1:4318` (HTTP) or `http://127.0.0.1:4317` (gRPC).
    pub endpoint: String,
    pub protocol: Protocol,
    /// Spans per export request.
    pub batch_spans: usize,
    /// Requests in flight at once (one worker each).
    pub concurrency: usize,
    /// Hard bound on requests sent, across all workers.
    pub max_requests: u64,
    /// Hard bound on the run's duration (no new request starts after it).
    pub duration: Duration,
    /// Target offered load in spans/s across all workers; `None` = as fast as acknowledged.
    pub rate_spans_per_sec: Option<f64>,
    pub mix: SpanMix,
    /// Distinguishes runs: stream ids are `seed * 1000 + worker`.
    pub seed: u64,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Pause of a worker after a refusal (429 / RESOURCE_EXHAUSTED) before its next request.
    pub refusal_backoff: Duration,
}

/// The JSON report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub protocol: Protocol,
    pub endpoint: String,
    pub batch_spans: usize,
    pub concurrency: usize,
    pub target_rate_spans_per_sec: Option<f64>,
    pub content_share: f64,
    pub elapsed_secs: f64,
    pub requests_sent: u64,
    pub requests_acked: u64,
    pub requests_refused: u64,
    pub requests_failed: u64,
    pub spans_sent: u64,
    /// Spans the receiver acknowledged (2xx / OK) minus those it reported rejected.
    pub spans_acked: u64,
    pub spans_rejected: u64,
    pub request_bytes_sent: u64,
    pub acked_spans_per_sec: f64,
    /// Latency of acknowledged requests only.
    pub latency: LatencySummary,
    /// Latency of refused requests (how fast overload is answered).
    pub refused_latency: LatencySummary,
    /// First failure seen (transport error or unexpected status), for diagnosis.
    pub first_error: Option<String>,
}

/// Errors that stop a run before it starts.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "cannot connect to gRPC endpoint {endpoint}: {source}; is the collector listening there?"
    )]
    Connect {
        endpoint: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("cannot build the HTTP client: {0}; check the endpoint URL")]
    HttpClient(#[source] reqwest::Error),
    #[error("invalid load configuration: {0}; pass a positive value")]
    Config(String),
}

enum Outcome {
    Acked { rejected: u64 },
    Refused,
    Failed(String),
}

#[derive(Clone)]
enum Sender {
    Http {
        client: reqwest::Client,
        url: String,
    },
    Grpc(TraceServiceClient<Channel>),
}

impl Sender {
    async fn send(&mut self, req: ExportTraceServiceRequest, body_len: &mut u64) -> Outcome {
        match self {
            Sender::Http { client, url } => {
                let body = req.encode_to_vec();
                *body_len = body.len() as u64;
                let resp = match client
                    .post(url.as_str())
                    .header("content-type", "application/x-protobuf")
                    .body(body)
                    .send()
                    .await
                {
                    Ok(r) => r,
                    Err(e) => return Outcome::Failed(format!("http transport: {e}")),
                };
                let status = resp.status();
                let is_json = resp
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("json"));
                let bytes = match resp.bytes().await {
                    Ok(b) => b,
                    Err(e) => return Outcome::Failed(format!("http body: {e}")),
                };
                if status.as_u16() == 429 || status.as_u16() == 503 {
                    return Outcome::Refused;
                }
                if !status.is_success() {
                    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                    return Outcome::Failed(format!("http status {status}: {text}"));
                }
                Outcome::Acked {
                    rejected: rejected_in_http_body(&bytes, is_json),
                }
            }
            Sender::Grpc(client) => {
                *body_len = req.encoded_len() as u64;
                match client.export(req).await {
                    Ok(resp) => Outcome::Acked {
                        rejected: resp
                            .into_inner()
                            .partial_success
                            .map(|p| p.rejected_spans.max(0) as u64)
                            .unwrap_or(0),
                    },
                    Err(status)
                        if matches!(
                            status.code(),
                            tonic::Code::ResourceExhausted | tonic::Code::Unavailable
                        ) =>
                    {
                        Outcome::Refused
                    }
                    Err(status) => Outcome::Failed(format!(
                        "grpc status {:?}: {}",
                        status.code(),
                        status.message()
                    )),
                }
            }
        }
    }
}

/// `partial_success.rejected_spans` of a 2xx answer (protobuf or JSON); an empty or
/// unparseable body counts as "nothing rejected", as the OTLP spec allows an empty response.
pub fn rejected_in_http_body(body: &[u8], is_json: bool) -> u64 {
    if body.is_empty() {
        return 0;
    }
    if is_json {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
            return 0;
        };
        let r = &v["partialSuccess"]["rejectedSpans"];
        return r
            .as_u64()
            .or_else(|| r.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(0);
    }
    ExportTraceServiceResponse::decode(body)
        .ok()
        .and_then(|r| r.partial_success)
        .map(|p| p.rejected_spans.max(0) as u64)
        .unwrap_or(0)
}

#[derive(Default)]
struct WorkerStats {
    sent: u64,
    acked: u64,
    refused: u64,
    failed: u64,
    spans_sent: u64,
    spans_acked: u64,
    spans_rejected: u64,
    bytes: u64,
    latencies_us: Vec<u64>,
    refused_latencies_us: Vec<u64>,
    first_error: Option<String>,
}

/// Runs the load described by `cfg` and reports what the receiver acknowledged.
pub async fn run(cfg: &LoadConfig) -> Result<LoadReport, LoadError> {
    if cfg.batch_spans == 0 || cfg.concurrency == 0 {
        return Err(LoadError::Config(format!(
            "batch {} and concurrency {} must both be > 0",
            cfg.batch_spans, cfg.concurrency
        )));
    }
    let sender = match cfg.protocol {
        Protocol::Http => Sender::Http {
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(cfg.concurrency)
                .timeout(cfg.request_timeout)
                .build()
                .map_err(LoadError::HttpClient)?,
            url: format!("{}/v1/traces", cfg.endpoint.trim_end_matches('/')),
        },
        Protocol::Grpc => {
            let channel = Channel::from_shared(cfg.endpoint.clone())
                .map_err(|e| LoadError::Config(format!("endpoint {}: {e}", cfg.endpoint)))?
                .timeout(cfg.request_timeout)
                .connect()
                .await
                .map_err(|source| LoadError::Connect {
                    endpoint: cfg.endpoint.clone(),
                    source,
                })?;
            Sender::Grpc(
                TraceServiceClient::new(channel).max_encoding_message_size(256 * 1024 * 1024),
            )
        }
    };

    let budget = Arc::new(AtomicU64::new(cfg.max_requests));
    let start = Instant::now();
    let deadline = start + cfg.duration;
    let period = cfg.rate_spans_per_sec.filter(|r| *r > 0.0).map(|rate| {
        Duration::from_secs_f64(cfg.concurrency as f64 * cfg.batch_spans as f64 / rate)
    });

    let mut handles = Vec::with_capacity(cfg.concurrency);
    for worker in 0..cfg.concurrency {
        let mut sender = sender.clone();
        let budget = Arc::clone(&budget);
        let cfg = cfg.clone();
        handles.push(tokio::spawn(async move {
            let mut builder =
                RequestBuilder::new(cfg.seed.wrapping_mul(1000) + worker as u64, cfg.mix);
            let mut stats = WorkerStats::default();
            let mut ticker = period.map(|p| {
                // Stagger workers so paced requests spread over the period.
                let offset = p.mul_f64(worker as f64 / cfg.concurrency as f64);
                let mut t = tokio::time::interval_at(tokio::time::Instant::now() + offset, p);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            });
            loop {
                if let Some(t) = ticker.as_mut() {
                    t.tick().await;
                }
                if Instant::now() >= deadline || !take_one(&budget) {
                    break;
                }
                let req = builder.build(cfg.batch_spans);
                let mut body_len = 0;
                let sent_at = Instant::now();
                let outcome =
                    tokio::time::timeout(cfg.request_timeout, sender.send(req, &mut body_len))
                        .await
                        .unwrap_or_else(|_| {
                            Outcome::Failed(format!("timed out after {:?}", cfg.request_timeout))
                        });
                let took = sent_at.elapsed().as_micros() as u64;
                stats.sent += 1;
                stats.spans_sent += cfg.batch_spans as u64;
                stats.bytes += body_len;
                match outcome {
                    Outcome::Acked { rejected } => {
                        stats.acked += 1;
                        let rejected = rejected.min(cfg.batch_spans as u64);
                        stats.spans_rejected += rejected;
                        stats.spans_acked += cfg.batch_spans as u64 - rejected;
                        stats.latencies_us.push(took);
                    }
                    Outcome::Refused => {
                        stats.refused += 1;
                        stats.refused_latencies_us.push(took);
                        tokio::time::sleep(cfg.refusal_backoff).await;
                    }
                    Outcome::Failed(msg) => {
                        stats.failed += 1;
                        stats.first_error.get_or_insert(msg);
                        tokio::time::sleep(cfg.refusal_backoff).await;
                    }
                }
            }
            stats
        }));
    }

    let mut total = WorkerStats::default();
    for h in handles {
        let s = match h.await {
            Ok(s) => s,
            Err(e) => {
                total
                    .first_error
                    .get_or_insert(format!("worker panicked: {e}"));
                continue;
            }
        };
        total.sent += s.sent;
        total.acked += s.acked;
        total.refused += s.refused;
        total.failed += s.failed;
        total.spans_sent += s.spans_sent;
        total.spans_acked += s.spans_acked;
        total.spans_rejected += s.spans_rejected;
        total.bytes += s.bytes;
        total.latencies_us.extend(s.latencies_us);
        total.refused_latencies_us.extend(s.refused_latencies_us);
        if total.first_error.is_none() {
            total.first_error = s.first_error;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    Ok(LoadReport {
        protocol: cfg.protocol,
        endpoint: cfg.endpoint.clone(),
        batch_spans: cfg.batch_spans,
        concurrency: cfg.concurrency,
        target_rate_spans_per_sec: cfg.rate_spans_per_sec,
        content_share: cfg.mix.content_share,
        elapsed_secs: elapsed,
        requests_sent: total.sent,
        requests_acked: total.acked,
        requests_refused: total.refused,
        requests_failed: total.failed,
        spans_sent: total.spans_sent,
        spans_acked: total.spans_acked,
        spans_rejected: total.spans_rejected,
        request_bytes_sent: total.bytes,
        acked_spans_per_sec: if elapsed > 0.0 {
            total.spans_acked as f64 / elapsed
        } else {
            0.0
        },
        latency: summarize_micros(&mut total.latencies_us),
        refused_latency: summarize_micros(&mut total.refused_latencies_us),
        first_error: total.first_error,
    })
}

/// Takes one request from the shared budget; false once it is spent.
fn take_one(budget: &AtomicU64) -> bool {
    budget
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTracePartialSuccess;

    use super::*;

    #[test]
    fn budget_is_never_overspent() {
        let b = AtomicU64::new(2);
        assert!(take_one(&b));
        assert!(take_one(&b));
        assert!(!take_one(&b));
        assert_eq!(b.load(Ordering::Acquire), 0);
    }

    #[test]
    fn partial_success_is_read_from_protobuf_and_json() {
        let pb = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: 3,
                error_message: "bad ids".into(),
            }),
        }
        .encode_to_vec();
        assert_eq!(rejected_in_http_body(&pb, false), 3);
        assert_eq!(
            rejected_in_http_body(br#"{"partialSuccess":{"rejectedSpans":"4"}}"#, true),
            4
        );
        assert_eq!(
            rejected_in_http_body(br#"{"partialSuccess":{"rejectedSpans":5}}"#, true),
            5
        );
        assert_eq!(rejected_in_http_body(b"{}", true), 0);
        assert_eq!(rejected_in_http_body(b"", false), 0);
    }
}
