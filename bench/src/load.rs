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
//!
//! The generator shares the machine with the receiver. Building and encoding a 1,000-span
//! request costs it milliseconds of CPU on the runtime threads that also read every worker's
//! answers, so under load its own queueing lands in the measured latency. `prebuilt` requests
//! per worker, built before the clock starts and sent in turn, take that out of a latency run
//! (the spans repeat, so such a run cannot be checked by distinct ids).

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
    /// Requests each worker builds before the run and sends in turn; 0 = a fresh request for
    /// each send, built and encoded as it is sent.
    pub prebuilt: usize,
    /// Requests sent within this long of the start are left out of `latency_after_warmup`
    /// (they still count everywhere else): a receiver that has just started grows its memory
    /// and fills its caches under the first requests.
    pub warmup: Duration,
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
    /// Requests each worker built before the run and sent in turn (0: fresh ones).
    pub prebuilt: usize,
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
    /// The warm-up left out of `latency_after_warmup`, in seconds.
    pub warmup_secs: f64,
    /// Latency of the acknowledged requests sent after the warm-up (all of them without one).
    pub latency_after_warmup: LatencySummary,
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

/// A request as the protocol's client takes it.
#[derive(Clone)]
enum Prepared {
    /// The encoded protobuf body (cloned by reference count).
    Http(bytes::Bytes),
    /// The message (tonic encodes it as it sends).
    Grpc(ExportTraceServiceRequest),
}

impl Prepared {
    fn new(req: ExportTraceServiceRequest, protocol: Protocol) -> Self {
        match protocol {
            Protocol::Http => Prepared::Http(req.encode_to_vec().into()),
            Protocol::Grpc => Prepared::Grpc(req),
        }
    }

    /// Bytes of the encoded request.
    fn len(&self) -> u64 {
        match self {
            Prepared::Http(body) => body.len() as u64,
            Prepared::Grpc(req) => req.encoded_len() as u64,
        }
    }
}

/// Where a worker's requests come from: built one per send, or a pool built before the run.
enum Source {
    Fresh {
        builder: RequestBuilder,
        batch: usize,
        protocol: Protocol,
    },
    Pool {
        requests: Vec<Prepared>,
        next: usize,
    },
}

impl Source {
    fn new(seed: u64, cfg: &LoadConfig) -> Self {
        let mut builder = RequestBuilder::new(seed, cfg.mix);
        if cfg.prebuilt == 0 {
            return Source::Fresh {
                builder,
                batch: cfg.batch_spans,
                protocol: cfg.protocol,
            };
        }
        let requests = (0..cfg.prebuilt)
            .map(|_| Prepared::new(builder.build(cfg.batch_spans), cfg.protocol))
            .collect();
        Source::Pool { requests, next: 0 }
    }

    /// The next request; a fresh one is built and (for HTTP) encoded here, on the caller's
    /// thread.
    fn next(&mut self) -> Prepared {
        match self {
            Source::Fresh {
                builder,
                batch,
                protocol,
            } => Prepared::new(builder.build(*batch), *protocol),
            Source::Pool { requests, next } => {
                let req = requests[*next % requests.len()].clone();
                *next += 1;
                req
            }
        }
    }
}

impl Sender {
    async fn send(&mut self, req: Prepared) -> Outcome {
        match (self, req) {
            (Sender::Http { client, url }, Prepared::Http(body)) => {
                let resp = match client
                    .post(url.as_str())
                    .header("content-type", "application/x-protobuf")
                    .body(body)
                    .send()
                    .await
                {
                    Ok(r) => r,
                    Err(e) => return Outcome::Failed(format!("http transport: {}", causes(&e))),
                };
                let status = resp.status();
                let is_json = resp
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("json"));
                let bytes = match resp.bytes().await {
                    Ok(b) => b,
                    Err(e) => return Outcome::Failed(format!("http body: {}", causes(&e))),
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
            (Sender::Grpc(client), Prepared::Grpc(req)) => match client.export(req).await {
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
            },
            _ => Outcome::Failed(
                "a request prepared for one protocol was sent over the other".to_string(),
            ),
        }
    }
}

/// An error and its sources, outermost first: reqwest's own message ("error sending request")
/// does not say whether the connection was reset, refused or timed out.
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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
    /// Of `latencies_us`, those of requests sent after the warm-up.
    settled_latencies_us: Vec<u64>,
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

    // Pools are built before the clock starts, on blocking threads (one per worker).
    let mut sources = Vec::with_capacity(cfg.concurrency);
    for worker in 0..cfg.concurrency {
        let cfg = cfg.clone();
        sources.push(tokio::task::spawn_blocking(move || {
            Source::new(cfg.seed.wrapping_mul(1000) + worker as u64, &cfg)
        }));
    }
    let mut built = Vec::with_capacity(cfg.concurrency);
    for s in sources {
        built.push(
            s.await
                .map_err(|e| LoadError::Config(format!("building the requests failed: {e}")))?,
        );
    }

    let budget = Arc::new(AtomicU64::new(cfg.max_requests));
    let start = Instant::now();
    let deadline = start + cfg.duration;
    let settled_from = start + cfg.warmup;
    let period = cfg.rate_spans_per_sec.filter(|r| *r > 0.0).map(|rate| {
        Duration::from_secs_f64(cfg.concurrency as f64 * cfg.batch_spans as f64 / rate)
    });

    let mut handles = Vec::with_capacity(cfg.concurrency);
    for (worker, mut source) in built.into_iter().enumerate() {
        let mut sender = sender.clone();
        let budget = Arc::clone(&budget);
        let cfg = cfg.clone();
        handles.push(tokio::spawn(async move {
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
                let req = source.next();
                let body_len = req.len();
                let sent_at = Instant::now();
                let outcome = tokio::time::timeout(cfg.request_timeout, sender.send(req))
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
                        if sent_at >= settled_from {
                            stats.settled_latencies_us.push(took);
                        }
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
        total.settled_latencies_us.extend(s.settled_latencies_us);
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
        prebuilt: cfg.prebuilt,
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
        warmup_secs: cfg.warmup.as_secs_f64(),
        latency_after_warmup: summarize_micros(&mut total.settled_latencies_us),
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
    fn a_transport_error_names_its_causes() {
        #[derive(Debug)]
        struct Sending(std::io::Error);
        impl std::fmt::Display for Sending {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error sending request")
            }
        }
        impl std::error::Error for Sending {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Sending(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        ));
        assert_eq!(
            causes(&e),
            "error sending request: connection reset by peer"
        );
    }

    fn config(prebuilt: usize) -> LoadConfig {
        LoadConfig {
            endpoint: "http://127.0.0.1:1".to_string(),
            protocol: Protocol::Http,
            batch_spans: 10,
            concurrency: 1,
            max_requests: 1,
            duration: Duration::from_secs(1),
            rate_spans_per_sec: None,
            mix: SpanMix::default(),
            seed: 7,
            request_timeout: Duration::from_secs(1),
            refusal_backoff: Duration::from_millis(1),
            prebuilt,
            warmup: Duration::ZERO,
        }
    }

    fn body(p: Prepared) -> bytes::Bytes {
        match p {
            Prepared::Http(b) => b,
            Prepared::Grpc(_) => panic!("an HTTP config prepares HTTP bodies"),
        }
    }

    #[test]
    fn a_pool_is_sent_in_turn_and_fresh_requests_differ() {
        let mut pool = Source::new(1, &config(2));
        let (a, b, c) = (body(pool.next()), body(pool.next()), body(pool.next()));
        assert!(a != b, "the pool holds distinct requests");
        assert!(a == c, "the pool starts again once used up");
        let decoded = ExportTraceServiceRequest::decode(a.as_ref()).unwrap();
        assert_eq!(
            synth::span_count(&decoded),
            10,
            "a pooled body is a whole encoded request"
        );

        let mut fresh = Source::new(1, &config(0));
        let (x, y, z) = (body(fresh.next()), body(fresh.next()), body(fresh.next()));
        assert!(
            x != y && y != z && x != z,
            "fresh requests are all distinct"
        );
    }

    /// An OTLP/HTTP receiver on a real socket that answers every request with an empty 200,
    /// `slow` late while it is younger than `young`.
    async fn receiver(young: Duration, slow: Duration) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let born = Instant::now();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 8192];
                    loop {
                        // One request: the head, then content-length bytes of body.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            match conn.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                        let body_len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap_or(0));
                        while buf.len() < head_end + body_len {
                            match conn.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buf.drain(..head_end + body_len);
                        if born.elapsed() < young {
                            tokio::time::sleep(slow).await;
                        }
                        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                        if conn.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_sent_in_the_warmup_are_left_out_of_the_settled_latency() {
        let addr = receiver(Duration::from_millis(400), Duration::from_millis(200)).await;
        let cfg = LoadConfig {
            endpoint: format!("http://{addr}"),
            max_requests: 1_000_000,
            duration: Duration::from_millis(1200),
            warmup: Duration::from_millis(600),
            ..config(0)
        };
        let report = run(&cfg).await.unwrap();
        assert_eq!(report.requests_failed, 0, "{:?}", report.first_error);
        assert_eq!(report.warmup_secs, 0.6);
        let (all, settled) = (report.latency, report.latency_after_warmup);
        assert_eq!(all.count as u64, report.requests_acked);
        assert!(
            settled.count > 0 && settled.count < all.count,
            "{settled:?} of {all:?}"
        );
        assert!(all.max_ms >= 200.0, "the young receiver's answers: {all:?}");
        assert!(
            settled.max_ms < 200.0,
            "requests after the warm-up met the settled receiver only: {settled:?}"
        );

        let whole = run(&LoadConfig {
            warmup: Duration::ZERO,
            duration: Duration::from_millis(200),
            ..cfg.clone()
        })
        .await
        .unwrap();
        assert_eq!(whole.latency, whole.latency_after_warmup, "no warm-up");
    }

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
