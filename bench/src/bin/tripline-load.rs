//! `tripline-load`: OTLP load generator for benchmarks (see BENCHMARKS.md).
//!
//! `send` drives a receiver and prints one JSON report on stdout; `write` writes request files
//! for `tripline ingest`. Every run is bounded by a request count and a duration.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use bench::load::{self, LoadConfig, Protocol};
use clap::{Parser, Subcommand};
use synth::SpanMix;

#[derive(Parser)]
#[command(
    name = "tripline-load",
    about = "OTLP load generator for tripline benchmarks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Send export requests to a receiver and print a JSON report.
    Send(SendArgs),
    /// Write export requests as .pb files (one ExportTraceServiceRequest each).
    Write(WriteArgs),
}

#[derive(clap::Args)]
struct SendArgs {
    /// Receiver base URL (HTTP: http://127.0.0.1:4318, gRPC: http://127.0.0.1:4317).
    #[arg(long)]
    endpoint: String,
    #[arg(long, value_enum, default_value = "http")]
    protocol: Protocol,
    /// Spans per export request.
    #[arg(long, default_value_t = 512)]
    batch: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// At most this many requests in total.
    #[arg(long, default_value_t = 1_000_000)]
    max_requests: u64,
    /// At most this long (seconds); no request starts after it.
    #[arg(long, default_value_t = 20.0)]
    duration_secs: f64,
    /// Offered load in spans/s (paced); omit to send as fast as acknowledged.
    #[arg(long)]
    rate: Option<f64>,
    /// Share of agent turns carrying opt-in content attributes.
    #[arg(long, default_value_t = 0.3)]
    content_share: f64,
    /// Share of turns whose tool call fails (isError).
    #[arg(long, default_value_t = 0.05)]
    error_share: f64,
    /// Share of turns whose MCP server span lost the caller's trace context.
    #[arg(long, default_value_t = 0.02)]
    broken_share: f64,
    /// Distinguishes runs (span ids derive from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30.0)]
    timeout_secs: f64,
    /// Pause after a refused (429) or failed request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    backoff_ms: u64,
}

#[derive(clap::Args)]
struct WriteArgs {
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Total spans to write.
    #[arg(long)]
    spans: u64,
    /// Spans per file.
    #[arg(long, default_value_t = 5_000)]
    batch: usize,
    #[arg(long, default_value_t = 0.3)]
    content_share: f64,
    #[arg(long, default_value_t = 0.05)]
    error_share: f64,
    #[arg(long, default_value_t = 0.02)]
    broken_share: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tripline-load: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Send(a) => {
            let cfg = LoadConfig {
                endpoint: a.endpoint,
                protocol: a.protocol,
                batch_spans: a.batch,
                concurrency: a.concurrency,
                max_requests: a.max_requests,
                duration: Duration::try_from_secs_f64(a.duration_secs)
                    .context("--duration-secs must be a non-negative number")?,
                rate_spans_per_sec: a.rate,
                mix: SpanMix {
                    content_share: a.content_share,
                    error_share: a.error_share,
                    broken_propagation_share: a.broken_share,
                },
                seed: a.seed,
                request_timeout: Duration::try_from_secs_f64(a.timeout_secs)
                    .context("--timeout-secs must be a non-negative number")?,
                refusal_backoff: Duration::from_millis(a.backoff_ms),
            };
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("starting the tokio runtime")?;
            let report = rt.block_on(load::run(&cfg))?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Write(a) => {
            let mix = SpanMix {
                content_share: a.content_share,
                error_share: a.error_share,
                broken_propagation_share: a.broken_share,
            };
            let files = bench::files::write_request_files(&a.out, a.spans, a.batch, mix, a.seed)
                .with_context(|| format!("writing requests to {}", a.out.display()))?;
            eprintln!(
                "tripline-load: wrote {} spans in {files} files to {}",
                a.spans,
                a.out.display()
            );
            Ok(())
        }
    }
}
