//! Scale mode (`--spans N`): large, realistic datasets for benchmarks, built directly as
//! opentelemetry-proto messages instead of through the SDK.
//!
//! Why not the SDK here: the scenario mode exists to prove the real SDK and the real MCP boundary
//! produce what tripline reads; scale mode exists to produce millions of spans quickly, and
//! spawning processes and exporting through batch processors would make the generator, not
//! tripline, the thing being measured. The shapes are the scenario shapes — an `invoke_agent`
//! root with `chat` turns, approval guardrails before writes, `execute_tool` > `tools/call`
//! CLIENT > `tools/call` SERVER across a host and a server resource — over the seed catalogs, with
//! a small share of tool errors and of broken propagation, and the opt-in content attributes
//! (`gen_ai.tool.definitions`, arguments, results) on a configurable share of agent runs.
//!
//! The runs are built by `synth::agent_runs` (the workspace's one synthetic span generator) over
//! the seed catalogs of [`crate::catalog`]; this module picks the catalogs and writes or sends
//! the requests.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::{json, Value};

use crate::catalog::{self, ServerKind, ServerVariant};
use crate::error::SamplesError;
use synth::{RunBuilder, RunSystem, RunTool};

/// Output encoding of scale files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Binary `ExportTraceServiceRequest` (`.pb`).
    Protobuf,
    /// OTLP/JSON (`.json`).
    Json,
}

#[derive(Debug, Clone)]
pub enum ScaleTarget {
    Dir(PathBuf, Format),
    /// OTLP/HTTP protobuf to a collector (base URL or `/v1/traces` URL).
    Endpoint(String),
}

#[derive(Debug, Clone)]
pub struct ScaleOptions {
    pub spans: u64,
    /// Share of agent runs (0.0–1.0) that carry the opt-in content attributes.
    pub content_share: f64,
    /// Spans per export request / file.
    pub batch_spans: usize,
    pub seed: u64,
    /// Unix nanoseconds of the first span.
    pub start_unix_nanos: u64,
    pub target: ScaleTarget,
}

/// What a scale run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleReport {
    pub spans: u64,
    pub requests: u64,
    pub bytes: u64,
}

/// The seed systems' catalogs as synth's agent runs call them.
fn systems() -> Vec<RunSystem> {
    [
        ("crm-assistant", ServerKind::Crm, ServerVariant::default()),
        ("atlas-field-service", ServerKind::AtlasTickets, ServerVariant::default()),
        ("atlas-field-service", ServerKind::AtlasParts, ServerVariant::default()),
        ("support-assistant", ServerKind::AcmeSupport, ServerVariant::default()),
        ("swcraft-modeller", ServerKind::SwCraft, ServerVariant { catalog_v2: true, ..Default::default() }),
    ]
    .into_iter()
    .map(|(agent, server, variant)| {
        let tools = catalog::tools(server, variant);
        let defs: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "name": t["name"], "description": t["description"], "parameters": t["inputSchema"]}))
            .collect();
        RunSystem {
            agent: agent.to_string(),
            server_service: server.service_name().to_string(),
            tools: tools
                .iter()
                .map(|t| RunTool {
                    name: t["name"].as_str().unwrap_or_default().to_string(),
                    write: t["annotations"]["readOnlyHint"] != json!(true),
                })
                .collect(),
            definitions: Value::Array(defs).to_string(),
        }
    })
    .collect()
}

/// Emits one request: a file, or a POST with bounded retries on 429/503 (honouring Retry-After).
fn emit(
    target: &ScaleTarget,
    client: Option<&reqwest::blocking::Client>,
    n: u64,
    request: &ExportTraceServiceRequest,
) -> Result<u64, SamplesError> {
    match target {
        ScaleTarget::Dir(dir, Format::Protobuf) => {
            let bytes = request.encode_to_vec();
            let path = dir.join(format!("scale-{n:06}.pb"));
            std::fs::write(&path, &bytes).map_err(|e| SamplesError::Write(path, e))?;
            Ok(bytes.len() as u64)
        }
        ScaleTarget::Dir(dir, Format::Json) => {
            let path = dir.join(format!("scale-{n:06}.json"));
            let file =
                std::fs::File::create(&path).map_err(|e| SamplesError::Write(path.clone(), e))?;
            let mut w = std::io::BufWriter::new(file);
            serde_json::to_writer(&mut w, request)?;
            w.flush()
                .map_err(|e| SamplesError::Write(path.clone(), e))?;
            Ok(std::fs::metadata(&path)
                .map(|m| m.len())
                .unwrap_or_default())
        }
        ScaleTarget::Endpoint(url) => {
            let url = crate::telemetry::traces_url(url);
            let bytes = request.encode_to_vec();
            let len = bytes.len() as u64;
            let client =
                client.ok_or_else(|| SamplesError::Send(url.clone(), "no http client".into()))?;
            for attempt in 0..8u32 {
                let resp = client
                    .post(&url)
                    .header("content-type", "application/x-protobuf")
                    .body(bytes.clone())
                    .send()
                    .map_err(|e| SamplesError::Send(url.clone(), e.to_string()))?;
                let status = resp.status().as_u16();
                if (200..300).contains(&status) {
                    return Ok(len);
                }
                if status != 429 && status != 503 {
                    return Err(SamplesError::Send(
                        url.clone(),
                        format!("http status {status}"),
                    ));
                }
                let wait = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok())
                    .map(Duration::from_secs)
                    .unwrap_or(Duration::from_millis(100 << attempt.min(5)));
                std::thread::sleep(wait);
            }
            Err(SamplesError::Send(
                url,
                "still overloaded after 8 attempts".into(),
            ))
        }
    }
}

/// Generates `options.spans` spans (rounded up to whole agent runs). Blocking.
pub fn generate(options: &ScaleOptions) -> Result<ScaleReport, SamplesError> {
    if !(0.0..=1.0).contains(&options.content_share) {
        return Err(SamplesError::Invalid(
            "--content-share",
            format!("{} is not between 0 and 1", options.content_share),
        ));
    }
    if let ScaleTarget::Dir(dir, _) = &options.target {
        std::fs::create_dir_all(dir).map_err(|e| SamplesError::Write(dir.clone(), e))?;
    }
    let client = match &options.target {
        ScaleTarget::Endpoint(_) => Some(
            reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| SamplesError::Send("client".into(), e.to_string()))?,
        ),
        ScaleTarget::Dir(..) => None,
    };
    let mut runs = RunBuilder::new(
        options.seed,
        options.start_unix_nanos,
        options.content_share,
        systems(),
        env!("CARGO_PKG_VERSION"),
    );
    let mut report = ScaleReport {
        spans: 0,
        requests: 0,
        bytes: 0,
    };
    while report.spans < options.spans {
        let up_to = (options.batch_spans as u64).min(options.spans - report.spans);
        let (request, spans) = runs.build(up_to);
        report.bytes += emit(&options.target, client.as_ref(), report.requests, &request)?;
        report.requests += 1;
        report.spans += spans;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::Span;

    fn opts(dir: PathBuf, spans: u64, share: f64) -> ScaleOptions {
        ScaleOptions {
            spans,
            content_share: share,
            batch_spans: 200,
            seed: 42,
            start_unix_nanos: 1_793_610_000_000_000_000,
            target: ScaleTarget::Dir(dir, Format::Protobuf),
        }
    }

    fn read_all(dir: &std::path::Path) -> Vec<ExportTraceServiceRequest> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| {
                ExportTraceServiceRequest::decode(std::fs::read(p).unwrap().as_slice()).unwrap()
            })
            .collect()
    }

    /// `--start-unix-secs` moves every span by the same amount and changes nothing else: the
    /// chunks of a large benchmark store are the same traffic at a later time.
    #[test]
    fn a_later_start_shifts_every_span_and_nothing_else() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        generate(&opts(a.path().to_path_buf(), 500, 0.3)).unwrap();
        let mut later = opts(b.path().to_path_buf(), 500, 0.3);
        let shift = 4 * 86_400 * 1_000_000_000;
        later.start_unix_nanos += shift;
        generate(&later).unwrap();
        let mut base = read_all(a.path());
        let moved = read_all(b.path());
        assert!(!base.is_empty());
        for r in &mut base {
            for s in r
                .resource_spans
                .iter_mut()
                .flat_map(|rs| &mut rs.scope_spans)
                .flat_map(|ss| &mut ss.spans)
            {
                s.start_time_unix_nano += shift;
                s.end_time_unix_nano += shift;
                for e in &mut s.events {
                    e.time_unix_nano += shift;
                }
            }
        }
        assert_eq!(base, moved);
    }

    #[test]
    fn writes_at_least_the_requested_spans_in_whole_runs_with_valid_parents() {
        let dir = tempfile::tempdir().unwrap();
        let report = generate(&opts(dir.path().to_path_buf(), 1000, 0.3)).unwrap();
        let requests = read_all(dir.path());
        let total: usize = requests.iter().map(crate::sink::span_count).sum();
        assert_eq!(total as u64, report.spans);
        assert!(
            report.spans >= 1000 && report.spans < 1000 + 40,
            "{}",
            report.spans
        );
        assert_eq!(report.requests as usize, requests.len());
        for r in &requests {
            let spans: Vec<&Span> = r
                .resource_spans
                .iter()
                .flat_map(|rs| &rs.scope_spans)
                .flat_map(|ss| &ss.spans)
                .collect();
            let ids: std::collections::HashSet<&[u8]> =
                spans.iter().map(|s| s.span_id.as_slice()).collect();
            for s in &spans {
                assert_eq!(s.trace_id.len(), 16);
                assert_eq!(s.span_id.len(), 8);
                assert!(s.end_time_unix_nano >= s.start_time_unix_nano);
                assert!(
                    s.parent_span_id.is_empty() || ids.contains(s.parent_span_id.as_slice()),
                    "parent of {} is in the batch",
                    s.name
                );
            }
        }
    }

    #[test]
    fn content_share_zero_and_one_control_content_attributes() {
        for (share, want) in [(0.0, false), (1.0, true)] {
            let dir = tempfile::tempdir().unwrap();
            generate(&opts(dir.path().to_path_buf(), 300, share)).unwrap();
            let has = read_all(dir.path())
                .iter()
                .flat_map(|r| &r.resource_spans)
                .flat_map(|rs| &rs.scope_spans)
                .flat_map(|ss| &ss.spans)
                .filter(|s| s.name.starts_with("chat "))
                .all(|s| {
                    s.attributes
                        .iter()
                        .any(|kv| kv.key == "gen_ai.tool.definitions")
                });
            assert_eq!(has, want, "share {share}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn endpoint_mode_posts_protobuf_that_a_receiver_decodes() {
        let sink = crate::sink::Sink::start().await.unwrap();
        let mut o = opts(PathBuf::new(), 700, 0.3);
        o.target = ScaleTarget::Endpoint(sink.endpoint());
        let report = tokio::task::spawn_blocking(move || generate(&o))
            .await
            .unwrap()
            .unwrap();
        let received = sink.take();
        assert_eq!(received.len() as u64, report.requests);
        let spans: usize = received.iter().map(crate::sink::span_count).sum();
        assert_eq!(spans as u64, report.spans);
        let bytes: usize = received.iter().map(|r| r.encoded_len()).sum();
        assert_eq!(bytes as u64, report.bytes);
    }

    #[test]
    fn same_seed_same_bytes_and_bad_share_is_rejected() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        generate(&opts(a.path().to_path_buf(), 500, 0.5)).unwrap();
        generate(&opts(b.path().to_path_buf(), 500, 0.5)).unwrap();
        assert_eq!(read_all(a.path()), read_all(b.path()));
        let err = generate(&opts(a.path().to_path_buf(), 10, 1.5)).unwrap_err();
        assert!(
            err.to_string().contains("1.5 is not between 0 and 1"),
            "{err}"
        );
    }

    /// FNV-1a over bytes: a fingerprint of generated output.
    fn fingerprint(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// Scale datasets are compared byte for byte across benchmark runs (BENCHMARKS.md: the
    /// analyzer's JSON over them must not change), so the generator's output for a seed is
    /// pinned: a change to the span builder, the PRNG or the attribute helpers shows up here.
    /// (Changed in session 9 on purpose: conversation ids carry the seed, so stores stacked
    /// from many seeds no longer join unrelated runs into one conversation.)
    #[test]
    fn output_for_a_seed_is_pinned() {
        let dir = tempfile::tempdir().unwrap();
        generate(&opts(dir.path().to_path_buf(), 2000, 0.3)).unwrap();
        let bytes: Vec<u8> = read_all(dir.path())
            .iter()
            .flat_map(|r| r.encode_to_vec())
            .collect();
        assert_eq!(
            fingerprint(&bytes),
            0x6e36_b365_f620_55ce,
            "{:#x}",
            fingerprint(&bytes)
        );
    }
}
