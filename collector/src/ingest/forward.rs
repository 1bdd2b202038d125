//! `tripline ingest` through a running collector.
//!
//! Why: a data directory has one writer (see [`crate::store::lock`]). When a collector owns the store,
//! importing straight into it would race the collector's WAL and Parquet files; sending the
//! recorded requests to the collector's own OTLP/HTTP endpoint stores them through the one writer,
//! with the same acknowledgement a live exporter gets. Requests are sent as OTLP protobuf; a
//! refusal the collector marks as retryable (429 / 503 with `Retry-After`) is retried with the
//! delay it asks for, within a bounded total wait, and anything else is reported, never dropped.

use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;

/// Give up retrying one request after this long.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(120);
/// Per-request time limit (a large request to a busy collector with `--fsync always`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a request could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("cannot reach the collector at {url}: {reason}; is it still running?")]
    Unreachable { url: String, reason: String },
    #[error("the collector at {url} refused the request ({status}): {message}")]
    Refused {
        url: String,
        status: u16,
        message: String,
    },
    #[error("the collector at {url} requires a bearer token; pass --auth-token-file")]
    Unauthorized { url: String },
    #[error("the collector at {url} kept refusing the request as overloaded for {waited:?}; retry later")]
    GaveUp { url: String, waited: Duration },
}

/// A blocking OTLP/HTTP protobuf client for one collector.
pub struct Forwarder {
    url: String,
    /// `<base>/v1/logs`, for recorded log records.
    logs_url: String,
    token: Option<String>,
    client: reqwest::blocking::Client,
}

impl Forwarder {
    /// `endpoint` is the collector's base address (`http://127.0.0.1:4318`); `/v1/traces` (and
    /// `/v1/logs` for log records) is added.
    pub fn new(endpoint: &str, token: Option<String>) -> Result<Forwarder, ForwardError> {
        let base = endpoint.trim_end_matches('/');
        let base = base.strip_suffix("/v1/traces").unwrap_or(base);
        let url = format!("{base}/v1/traces");
        let logs_url = format!("{base}/v1/logs");
        let client = reqwest::blocking::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ForwardError::Unreachable {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        Ok(Forwarder {
            url,
            logs_url,
            token,
            client,
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Send one request; returns (accepted, rejected, rejection reasons) as the collector
    /// acknowledged them.
    pub fn export(
        &self,
        request: &ExportTraceServiceRequest,
    ) -> Result<(usize, usize, Vec<String>), ForwardError> {
        let spans: usize = request
            .resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .map(|s| s.spans.len())
            .sum();
        self.post(&self.url, request.encode_to_vec(), spans, |bytes| {
            ExportTraceServiceResponse::decode(bytes)
                .unwrap_or_default()
                .partial_success
                .map(|p| (p.rejected_spans.max(0) as usize, p.error_message))
        })
    }

    /// Send one log request to `/v1/logs`; returns what [`Forwarder::export`] returns.
    pub fn export_logs(
        &self,
        request: &ExportLogsServiceRequest,
    ) -> Result<(usize, usize, Vec<String>), ForwardError> {
        let records = schemas::logs::log_record_count(request);
        self.post(&self.logs_url, request.encode_to_vec(), records, |bytes| {
            ExportLogsServiceResponse::decode(bytes)
                .unwrap_or_default()
                .partial_success
                .map(|p| (p.rejected_log_records.max(0) as usize, p.error_message))
        })
    }

    /// POST `body` (`items` spans or records) to `url`, retrying retryable refusals;
    /// `partial` reads the rejected count and message from a success answer.
    fn post(
        &self,
        url: &str,
        body: Vec<u8>,
        items: usize,
        partial: impl Fn(&[u8]) -> Option<(usize, String)>,
    ) -> Result<(usize, usize, Vec<String>), ForwardError> {
        let started = Instant::now();
        loop {
            let mut req = self
                .client
                .post(url)
                .header("content-type", "application/x-protobuf")
                .body(body.clone());
            if let Some(t) = &self.token {
                req = req.bearer_auth(t);
            }
            let resp = req.send().map_err(|e| ForwardError::Unreachable {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let bytes = resp.bytes().unwrap_or_default();
            match status {
                200..=299 => {
                    let (rejected, message) = partial(&bytes[..]).unwrap_or_default();
                    let reasons = if message.is_empty() {
                        Vec::new()
                    } else {
                        vec![message]
                    };
                    return Ok((items.saturating_sub(rejected), rejected, reasons));
                }
                401 => {
                    return Err(ForwardError::Unauthorized {
                        url: url.to_string(),
                    })
                }
                429 | 502 | 503 | 504 => {
                    let waited = started.elapsed();
                    if waited >= MAX_RETRY_WAIT {
                        return Err(ForwardError::GaveUp {
                            url: url.to_string(),
                            waited,
                        });
                    }
                    let delay = Duration::from_secs(retry_after.unwrap_or(1).clamp(1, 30));
                    std::thread::sleep(delay);
                }
                _ => {
                    let message = status_message(&bytes);
                    return Err(ForwardError::Refused {
                        url: url.to_string(),
                        status,
                        message,
                    });
                }
            }
        }
    }
}

/// The message of a `google.rpc.Status` body (protobuf), else the body as text, cut short.
fn status_message(bytes: &[u8]) -> String {
    let text = match crate::receive::otlp_wire::RpcStatus::decode(bytes) {
        Ok(s) if !s.message.is_empty() => s.message,
        _ => String::from_utf8_lossy(bytes).into_owned(),
    };
    crate::telemetry::cut(&text).into_owned()
}
