//! `tripline-collector`: the collector alone (`collect`, `ingest`), for hosts that only receive
//! spans. Why a second binary: `tripline` carries the analyzer's SQL engine (DataFusion), most of
//! its size; a collector host needs none of it. Same flags, same store, same exit codes as
//! `tripline collect` / `tripline ingest`.

/// mimalloc, as in `tripline` (src/main.rs says why).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use collector::process::{error_chain, init_logging, GlobalArgs};

#[derive(Parser)]
#[command(
    name = "tripline-collector",
    version,
    about = "Receive OTLP traces and store them as Parquet (the collector of tripline, without the analyzer)",
    max_term_width = 100
)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Receive OTLP traces (gRPC :4317, HTTP :4318) and store them as Parquet.
    Collect(collector::cli::CollectArgs),
    /// Import recorded traces (OTLP/JSON, JSON Lines, protobuf, optionally .gz) into the store.
    Ingest(collector::cli::IngestArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Colour when stderr is a terminal and NO_COLOR is unset (`tripline --color` has the choice).
    init_logging(cli.global.log_format, |tty| {
        tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    });
    let outcome = match cli.command {
        Command::Collect(a) => collector::cli::collect(&cli.global.data_dir, a),
        Command::Ingest(a) => collector::cli::ingest(&cli.global.data_dir, a),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {}", error_chain(&e));
        ExitCode::from(2)
    })
}
