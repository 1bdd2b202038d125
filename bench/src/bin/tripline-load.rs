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
    #[command(flatten)]
    mix: MixArgs,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30.0)]
    timeout_secs: f64,
    /// Pause after a refused (429) or failed request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    backoff_ms: u64,
    /// Build this many requests per worker before the run starts and send them in turn (the
    /// same spans again once the pool is used up), so the generator spends almost no CPU while
    /// it measures latency; 0 builds and encodes a fresh request for each send.
    #[arg(long, default_value_t = 0)]
    prebuilt: usize,
    /// Leave the requests sent in the first SECS seconds out of `latency_after_warmup` (they
    /// still count in `latency` and every total): a receiver that has just started is still
    /// growing its memory.
    #[arg(long, default_value_t = 0.0, value_name = "SECS")]
    warmup_secs: f64,
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
    #[command(flatten)]
    mix: MixArgs,
}

/// What the generated spans carry, shared by `send` and `write`; the defaults are
/// [`SpanMix::default`]'s.
#[derive(clap::Args)]
struct MixArgs {
    /// Share of agent turns carrying opt-in content attributes.
    #[arg(long, default_value_t = SpanMix::default().content_share)]
    content_share: f64,
    /// Share of turns whose tool call fails (isError).
    #[arg(long, default_value_t = SpanMix::default().error_share)]
    error_share: f64,
    /// Share of turns whose MCP server span lost the caller's trace context.
    #[arg(long, default_value_t = SpanMix::default().broken_propagation_share)]
    broken_share: f64,
    /// Distinguishes runs (span ids derive from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl MixArgs {
    fn span_mix(&self) -> SpanMix {
        SpanMix {
            content_share: self.content_share,
            error_share: self.error_share,
            broken_propagation_share: self.broken_share,
        }
    }
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
                mix: a.mix.span_mix(),
                seed: a.mix.seed,
                request_timeout: Duration::try_from_secs_f64(a.timeout_secs)
                    .context("--timeout-secs must be a non-negative number")?,
                refusal_backoff: Duration::from_millis(a.backoff_ms),
                prebuilt: a.prebuilt,
                warmup: Duration::try_from_secs_f64(a.warmup_secs)
                    .context("--warmup-secs must be a non-negative number")?,
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
            let (mix, seed) = (a.mix.span_mix(), a.mix.seed);
            let files = bench::files::write_request_files(&a.out, a.spans, a.batch, mix, seed)
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
