//! Rough decode -> Arrow throughput on the real recordings (not a test, not a criterion bench:
//! `bench/benches/decode_convert.rs` is the maintained benchmark). Prints spans/s for protobuf
//! bodies and for the same requests re-encoded as OTLP/JSON.
//!
//! `cargo run --release -p schemas --example convert_throughput -- ../shared/recordings [seconds]`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use schemas::{convert_request, decode_json, decode_protobuf, IngestContext};

fn bodies(root: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let p: PathBuf = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("-traces.pb")
                || p.to_string_lossy().ends_with("-traces.grpc.pb")
            {
                if let Ok(b) = std::fs::read(&p) {
                    out.push(b);
                }
            }
        }
    }
    out
}

fn run(
    label: &str,
    bodies: &[Vec<u8>],
    secs: u64,
    decode: &dyn Fn(&[u8]) -> Option<schemas::ExportTraceServiceRequest>,
) {
    let ctx = IngestContext {
        received_at_unix_nano: 0,
        source: "bench".into(),
        redact_content: false,
    };
    let start = Instant::now();
    let (mut spans, mut bytes) = (0usize, 0usize);
    while start.elapsed() < Duration::from_secs(secs) {
        for body in bodies {
            let Some(req) = decode(body) else { continue };
            spans += convert_request(&req, &ctx).accepted;
            bytes += body.len();
        }
    }
    let s = start.elapsed().as_secs_f64();
    println!(
        "{label}: {:.0} spans/s, {:.1} MB/s of request bodies ({spans} spans in {s:.1}s)",
        spans as f64 / s,
        bytes as f64 / s / 1e6
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().unwrap_or_else(|| "../shared/recordings".into()));
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let pb = bodies(&root);
    if pb.is_empty() {
        eprintln!(
            "no *-traces.pb files under {}; pass the recordings directory",
            root.display()
        );
        std::process::exit(2);
    }
    let json: Vec<Vec<u8>> = pb
        .iter()
        .filter_map(|b| decode_protobuf(b).ok())
        .filter_map(|r| serde_json::to_vec(&r).ok())
        .collect();
    run("protobuf -> arrow", &pb, secs, &|b| decode_protobuf(b).ok());
    run("otlp/json -> arrow", &json, secs, &|b| decode_json(b).ok());
}
