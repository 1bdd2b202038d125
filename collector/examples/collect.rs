//! `tripline collect` without the analyzer: the same `collector::cli::collect` entry, arguments
//! and allocator (mimalloc) as the shipped binary, for profiling the collector process under
//! load (`perf record -p`) without building the query engine the `tripline` binary links.
//! Only difference: no log subscriber, so `tracing` events are dropped instead of printed (the
//! listening line is printed either way).
//!
//! ```sh
//! cargo build --profile bench-dev -p collector -p bench --example collect --bins
//! target/bench-dev/examples/collect --data-dir /tmp/d --http 127.0.0.1:0 --grpc 127.0.0.1:0
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
struct Cli {
    #[arg(long, default_value = "./tripline-data")]
    data_dir: PathBuf,
    #[command(flatten)]
    collect: collector::cli::CollectArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match collector::cli::collect(&cli.data_dir, cli.collect) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
