//! The acknowledgement path of one OTLP/HTTP protobuf request, in process and without sockets:
//! early admission -> processing slot -> decode -> convert -> queue reservation -> WAL append ->
//! fsync, exactly as `receive::request::process_body` runs it for `tripline collect`, over
//! realistic 1,000-span GenAI/MCP requests from `synth` (30% of turns with content, like
//! `scripts/bench`).
//!
//! Why: wall-clock figures on a shared 2-core VM move by 10–20% from run to run; instruction
//! counts under callgrind repeat to a fraction of a percent, so a change to the request path is
//! measured by instructions per acknowledged span (BENCHMARKS.md, "Collector cost"):
//!
//! ```sh
//! cargo build --profile profiling -p collector --example request_path
//! valgrind --tool=callgrind --toggle-collect='*request_path::measured*' \
//!   target/profiling/examples/request_path 20 1000
//! ```
//!
//! `--toggle-collect` counts only the measured requests (one warm-up request first fills the
//! dialect tables and the allocator), on the request thread: since ADR 0004 that is the
//! acknowledgement path (decode, validation, WAL append of the request as received, its
//! conversion, fsync). The Parquet writer thread writes after the answer, off the request
//! thread. Arguments: requests (default 20), spans per request (default 1000), and `parquet` to
//! also count the work after the answer.
//!
//! With `parquet`, the measured requests are decoded and converted again (not counted: the
//! request thread did both) and the batches are written as the batcher thread writes them, in
//! `measured_parquet`: split by partition, appended to one open part file per partition with
//! the store's writer settings and row-group bounds, committed (footer, fsync, rename). The
//! pattern `*request_path::measured*` matches both functions, so one callgrind total is the CPU
//! `scripts/bench` charges the collector per span, minus the network (hyper, tokio).

use std::sync::Arc;

use collector::receive::decompress::Encoding;
use collector::receive::early_admission::EarlyAdmission;
use collector::receive::otlp_wire::Format;
use collector::receive::request::{admit, process_body, Context};
use collector::receive::request_pool::PooledRequest;
use collector::store::batcher::split_by_partition;
use collector::store::part_file::{PartFile, RowGroupLimits};
use collector::{Pipeline, PipelineConfig, Stats};

#[path = "synthetic/mod.rs"]
mod synthetic;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let requests: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    let spans: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let parquet = match args.next().as_deref() {
        None => false,
        Some("parquet") => true,
        Some(other) => {
            return Err(format!("unknown argument {other:?} (expected `parquet`)").into())
        }
    };

    collector::allocator::configure(); // as `tripline collect` does
    let dir = tempfile::tempdir()?;
    let stats = Arc::new(Stats::default());
    let pipeline = Arc::new(Pipeline::start(
        PipelineConfig::new(dir.path()),
        Arc::clone(&stats),
    )?);
    let ctx = Context {
        pipeline: Arc::clone(&pipeline),
        stats,
        max_body_bytes: 64 << 20,
        admission: EarlyAdmission::new(64 << 20, 1),
        redact_content: false,
        max_converted_bytes: schemas::convert::DEFAULT_MAX_CONVERTED_BYTES,
        source: "otlp-http",
    };
    let bodies = synthetic::bodies(requests, spans);
    let body_bytes: usize = bodies[1..].iter().map(Vec::len).sum();

    let acked = send(&ctx, &bodies[0])?; // warm-up, not measured
    let acked = acked + measured(&ctx, &bodies[1..])?;
    pipeline.shutdown()?;
    let wal_bytes = pipeline
        .stats()
        .wal_bytes_appended
        .load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "WAL bytes appended {wal_bytes}, {:.0} per acknowledged span",
        wal_bytes as f64 / acked.max(1) as f64
    );
    if parquet {
        // The rows the request threads built, built again (not counted: `measured` counted
        // them) for the Parquet write.
        let mut batches = Vec::with_capacity(bodies.len() - 1);
        for body in &bodies[1..] {
            batches.push(convert_again(PooledRequest::decode_protobuf(body)?)?);
        }
        let out = tempfile::tempdir()?;
        let config = PipelineConfig::new(out.path());
        let (files, bytes) = measured_parquet(&config, &batches)?;
        println!("parquet: {files} files, {bytes} bytes");
    }
    println!(
        "requests {requests}, spans per request {spans}, measured body bytes {body_bytes}, acknowledged spans {acked} (warm-up included)"
    );
    Ok(())
}

/// The measured requests (callgrind `--toggle-collect` target).
#[inline(never)]
fn measured(ctx: &Context, bodies: &[Vec<u8>]) -> Result<usize, Box<dyn std::error::Error>> {
    let mut acked = 0;
    for body in bodies {
        acked += send(ctx, body)?;
    }
    Ok(acked)
}

/// The rows of one measured request, as its request thread built them (not counted).
fn convert_again(
    request: PooledRequest,
) -> Result<arrow::record_batch::RecordBatch, Box<dyn std::error::Error>> {
    let ctx = schemas::convert::IngestContext {
        received_at_unix_nano: 0,
        source: "otlp-http".into(),
        redact_content: false,
    };
    let converted = schemas::convert::convert_request_for_store(&request, &ctx, u64::MAX)?;
    drop(request);
    Ok(converted.batch)
}

/// The batcher's work for the measured requests' batches (callgrind `--toggle-collect` target
/// with `parquet`): what `Batcher::write_record` and `Batcher::commit` do, without the WAL.
#[inline(never)]
fn measured_parquet(
    config: &PipelineConfig,
    batches: &[arrow::record_batch::RecordBatch],
) -> Result<(usize, u64), Box<dyn std::error::Error>> {
    let limits = RowGroupLimits {
        rows: config.row_group_rows,
        bytes: config.row_group_bytes,
    };
    let mut open: std::collections::HashMap<_, PartFile> = std::collections::HashMap::new();
    let received = std::time::Instant::now();
    for (seq, batch) in batches.iter().enumerate() {
        for (partition, rows) in split_by_partition(batch)? {
            let file = match open.entry(partition) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(PartFile::create(
                    &config.data_dir,
                    partition,
                    seq as u64,
                    received,
                )?),
            };
            file.write(&rows, seq as u64, limits)?;
        }
    }
    let files = open.len();
    let mut bytes = 0;
    for (_, file) in open {
        let path = file.commit("measured", None)?;
        bytes += std::fs::metadata(path)?.len();
    }
    Ok((files, bytes))
}

fn send(ctx: &Context, body: &[u8]) -> Result<usize, Box<dyn std::error::Error>> {
    let _permit = admit(ctx, body.len()).map_err(|r| format!("not admitted: {r:?}"))?;
    let accepted = process_body(ctx, body, Encoding::Identity, Format::Protobuf)
        .map_err(|r| format!("refused: {r:?}"))?;
    if accepted.rejected != 0 {
        return Err(format!("{} spans rejected: {}", accepted.rejected, accepted.message).into());
    }
    Ok(accepted.accepted)
}
