//! Stores written by the collector's real ingest pipeline, for the tests that compare a
//! windowed read with one model of the whole store (`windows.rs`, `report_windows.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use collector::{ingest_paths, IngestOptions, Pipeline, PipelineConfig, Stats};
use prost::Message;
use synth::{RequestBuilder, SpanMix};

/// A two-thread runtime for the async analyzer calls.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A store holding the spans of `paths`, written by the collector's ingest pipeline.
pub fn ingest(paths: &[PathBuf]) -> tempfile::TempDir {
    let store = tempfile::tempdir().unwrap();
    let pipeline = Pipeline::start(
        PipelineConfig::new(store.path()),
        Arc::new(Stats::default()),
    )
    .unwrap();
    let summary = ingest_paths(&pipeline, paths, &IngestOptions::default());
    pipeline.shutdown().unwrap();
    assert_eq!(summary.failed, vec![], "no file failed");
    assert!(summary.spans_accepted > 0);
    store
}

/// Synthetic agent turns from four streams whose clocks overlap (1.5 s apart; turns last
/// 2.4–3 s), so every window boundary falls inside other traces' time, and half of the MCP
/// server spans lost their context: each is a trace of its own, judged in another window than
/// its host's call.
pub fn orphans_across_boundaries() -> tempfile::TempDir {
    let input = tempfile::tempdir().unwrap();
    let mix = SpanMix {
        content_share: 0.5,
        error_share: 0.2,
        broken_propagation_share: 0.5,
    };
    let t0: u64 = 1_796_000_000_000_000_000;
    for stream in 0..4u64 {
        let mut b = RequestBuilder::new(stream, mix).with_fixed_clock(t0 + stream * 1_500_000_000);
        for request in 0..3 {
            let body = b.build(150).encode_to_vec();
            std::fs::write(input.path().join(format!("s{stream}-r{request}.pb")), body).unwrap();
        }
    }
    ingest(&[input.path().to_path_buf()])
}

/// Synthetic agent runs (synth's `RunBuilder`: one conversation per run, MCP server spans in
/// their own service) from three seeds whose clocks start together, so conversations overlap in
/// time and every window boundary cuts through other conversations.
#[allow(dead_code)]
pub fn conversations_across_boundaries() -> tempfile::TempDir {
    use synth::{RunBuilder, RunSystem, RunTool};
    let input = tempfile::tempdir().unwrap();
    let system = |agent: &str, server: &str, tools: &[(&str, bool)]| RunSystem {
        agent: agent.to_string(),
        server_service: server.to_string(),
        tools: tools
            .iter()
            .map(|&(name, write)| RunTool {
                name: name.to_string(),
                write,
            })
            .collect(),
        definitions: serde_json::Value::Array(
            tools
                .iter()
                .map(|(name, _)| serde_json::json!({"type": "function", "name": name}))
                .collect(),
        )
        .to_string(),
    };
    let systems = vec![
        system("crm", "crm-mcp", &[("lookup", false), ("update", true)]),
        system("tickets", "tickets-mcp", &[("search", false)]),
    ];
    let t0: u64 = 1_796_000_000_000_000_000;
    for seed in 0..3u64 {
        let mut b = RunBuilder::new(seed, t0, 0.3, systems.clone(), "0.0.0");
        for request in 0..2 {
            let (body, _) = b.build(200);
            std::fs::write(
                input.path().join(format!("s{seed}-r{request}.pb")),
                body.encode_to_vec(),
            )
            .unwrap();
        }
    }
    ingest(&[input.path().to_path_buf()])
}
