//! Command line of `tripline-samples` (the CLI edge: errors become `anyhow` here).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::generate::{self, GenerateOptions, Target};
use crate::host::ServerLauncher;
use crate::manifest;
use crate::scale::{self, Format, ScaleOptions, ScaleTarget};
use crate::scenario::{self, Revision};
use crate::serve::{self, ServeArgs};

#[derive(Debug, Parser)]
#[command(
    name = "tripline-samples",
    version,
    about = "Play the seed agent systems over real MCP through the OpenTelemetry SDK, or write large span datasets",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Internal: run one seed MCP server (the generator starts these itself).
    #[command(hide = true)]
    ServeMcp(ServeArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Write one OTLP/JSON file per scenario (or scale files) into DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "endpoint")]
    pub out: Option<PathBuf>,
    /// Send over OTLP/HTTP protobuf to a collector, e.g. http://127.0.0.1:4318.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Fixed ids and a logical clock: regenerating gives byte-identical files.
    #[arg(long)]
    pub deterministic: bool,
    /// Only these scenarios (repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// MCP protocol revision to play the scenarios on: 2025-11-25 (`initialize`) or 2026-07-28
    /// (stateless, `server/discover`); committed under samples/traces and samples/traces-2026-07-28.
    #[arg(long, value_name = "VERSION", default_value = "2025-11-25")]
    pub revision: String,
    /// List the scenarios and their expected findings, then exit.
    #[arg(long)]
    pub list: bool,
    /// Write samples/expected.json (derived from the scenario table) to PATH.
    #[arg(long, value_name = "PATH")]
    pub write_expected: Option<PathBuf>,
    /// Print the README table of the samples.
    #[arg(long)]
    pub readme_table: bool,
    /// Scale mode: write at least N spans of mixed scenario shapes (built directly as OTLP protobuf).
    #[arg(long, value_name = "N")]
    pub spans: Option<u64>,
    /// Scale mode: share of agent runs carrying content attributes (0.0–1.0).
    #[arg(long, default_value_t = 0.3)]
    pub content_share: f64,
    /// Scale mode: spans per export request / file.
    #[arg(long, default_value_t = 5000)]
    pub batch_spans: usize,
    /// Scale mode: random seed (same seed, same data).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Scale mode: when the first run starts, in Unix seconds (default: the samples' fixed base,
    /// 2026-11-02T09:00Z). Chunks of a large benchmark store are spread over time with it.
    #[arg(long, value_name = "SECS", default_value_t = generate::BASE_UNIX_SECS)]
    pub start_unix_secs: u64,
    /// Scale mode file format: pb or json.
    #[arg(long, default_value = "pb")]
    pub format: String,
}

/// Runs the command line; `args` excludes nothing (clap's usual `std::env::args_os()`).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(Command::ServeMcp(args)) = cli.command {
        return runtime()?
            .block_on(serve::serve(args))
            .context("mcp server process failed");
    }
    let a = cli.run;
    if a.list {
        for s in scenario::all() {
            println!("{:<28} {:<18} {}", s.name, s.expected.join(","), s.broken);
        }
        return Ok(());
    }
    if a.readme_table {
        print!("{}", manifest::readme_table());
        return Ok(());
    }
    if let Some(path) = &a.write_expected {
        std::fs::write(path, manifest::expected_text()).with_context(|| {
            format!(
                "cannot write {}; check the directory exists",
                path.display()
            )
        })?;
        if a.out.is_none() && a.endpoint.is_none() {
            return Ok(());
        }
    }
    if let Some(spans) = a.spans {
        let target = match (&a.out, &a.endpoint) {
            (Some(dir), _) => ScaleTarget::Dir(
                dir.clone(),
                match a.format.as_str() {
                    "pb" => Format::Protobuf,
                    "json" => Format::Json,
                    other => anyhow::bail!("unknown --format {other}; expected pb or json"),
                },
            ),
            (None, Some(url)) => ScaleTarget::Endpoint(url.clone()),
            (None, None) => anyhow::bail!("--spans needs --out DIR or --endpoint URL"),
        };
        let start = std::time::Instant::now();
        let report = scale::generate(&ScaleOptions {
            spans,
            content_share: a.content_share,
            batch_spans: a.batch_spans.max(1),
            seed: a.seed,
            start_unix_nanos: a.start_unix_secs.saturating_mul(1_000_000_000),
            target,
        })?;
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "tripline-samples: {} spans in {} requests, {} bytes, {:.2}s ({:.0} spans/s)",
            report.spans,
            report.requests,
            report.bytes,
            secs,
            report.spans as f64 / secs.max(1e-9)
        );
        return Ok(());
    }
    let target = match (&a.out, &a.endpoint) {
        (Some(dir), _) => Target::Dir(dir.clone()),
        (None, Some(url)) => Target::Endpoint(url.clone()),
        (None, None) => {
            anyhow::bail!("nothing to do: pass --out DIR or --endpoint URL (or --list)")
        }
    };
    let program = std::env::current_exe()
        .context("cannot find the generator's own executable to start MCP servers")?;
    let Some(revision) = Revision::parse(&a.revision) else {
        anyhow::bail!(
            "unknown --revision {}; expected 2025-11-25 or 2026-07-28",
            a.revision
        );
    };
    let options = GenerateOptions {
        target,
        deterministic: a.deterministic,
        only: a.only,
        revision,
        launcher: ServerLauncher {
            program,
            prefix: vec!["serve-mcp".to_string()],
        },
    };
    let generated = runtime()?.block_on(generate::generate(&options))?;
    for g in generated {
        match (g.path, g.spans) {
            (Some(p), Some(n)) => eprintln!(
                "tripline-samples: {} -> {} ({n} spans)",
                g.name,
                p.display()
            ),
            _ => eprintln!("tripline-samples: {} sent", g.name),
        }
    }
    Ok(())
}
