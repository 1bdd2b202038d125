//! `tripline`: one binary, one subcommand per job. This file only parses arguments and maps
//! outcomes to exit codes (0 clean, 1 findings at or above the threshold, 2 error); the work lives
//! in the `collector`, `analyze` and `samples` crates.

mod demo;

/// mimalloc instead of glibc malloc for the whole binary. Why: both jobs allocate hard. The
/// collector decodes millions of small protobuf strings into short-lived Arrow batches, and the
/// analyzer builds a model of a million spans. Profiles of both showed glibc `malloc`/`free` (and
/// `malloc_consolidate`) among the top entries; BENCHMARKS.md has the figures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tripline",
    version,
    about = "Find the silent breakage in AI agents that call tools over MCP",
    max_term_width = 100
)]
struct Cli {
    #[command(flatten)]
    global: collector::process::GlobalArgs,
    #[command(flatten)]
    ui: analyze::cli::UiArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Receive OTLP traces (gRPC :4317, HTTP :4318) and store them as Parquet.
    Collect(collector::cli::CollectArgs),
    /// Import recorded traces (OTLP/JSON, JSON Lines, protobuf, optionally .gz) into the store.
    Ingest(collector::cli::IngestArgs),
    /// Run the detection rules over the store and report findings with their coverage.
    Check(analyze::cli::CheckArgs),
    /// List the detection rules.
    Rules,
    /// Print the documentation of one rule.
    Explain(analyze::cli::ExplainArgs),
    /// Reports: tools, conversations, guardrails, skills, or one self-contained HTML page (html).
    Report(analyze::cli::ReportArgs),
    /// Run SQL over the store (table `spans`).
    Query(analyze::cli::QueryArgs),
    /// Print one trace as a tree, stitched across processes, findings marked.
    Trace(analyze::cli::TraceArgs),
    /// Compare the tool catalogs and findings of two runs (TL011 catalog-drift).
    Diff(analyze::cli::DiffArgs),
    /// Check the store: every part file decodes, the WAL matches its checkpoint, no leftover
    /// temporary files (exit 0 healthy, 1 problems found, 2 could not run).
    Verify(analyze::cli::VerifyArgs),
    /// Start a collector, play the sample scenarios into it and print the report.
    Demo(demo::DemoArgs),
    /// Serve the store as read-only MCP tools (check, query, trace, report, explain) over stdio,
    /// or Streamable HTTP with --http.
    Mcp(mcp::McpArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout: `tripline man > tripline.1`.
    Man,
}

/// Whether `command` stays up and checks again and again (`check --follow`, the MCP server).
fn waits_between_checks(command: &Command) -> bool {
    matches!(command, Command::Check(a) if a.follow) || matches!(command, Command::Mcp(_))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Once pass 1 of a windowed `check` or `report` is over, what it freed goes back to the OS
    // and what the windows free from then on is kept for reuse (analyze/src/phase.rs,
    // collector/src/allocator.rs). `collect` keeps freed memory from the start. A process that
    // waits between checks (`check --follow`, the MCP server) keeps mimalloc's default and gives
    // freed memory back: kept, a follower sat at its first check's high-water mark while it
    // polled (790 MiB after a 10M-span store's first batch, BENCHMARKS.md session 52).
    if !waits_between_checks(&cli.command) {
        analyze::phase::set_pass_one_done_hook(collector::allocator::release_then_keep);
    }
    let color = cli.ui.color;
    collector::process::init_logging(cli.global.log_format, |tty| color.enabled(tty));
    let data_dir = cli.global.data_dir;
    let ui = cli.ui;
    let outcome = match cli.command {
        Command::Collect(a) => collector::cli::collect(&data_dir, a),
        Command::Ingest(a) => collector::cli::ingest(&data_dir, a),
        Command::Check(a) => analyze::cli::check(&data_dir, a, &ui),
        Command::Rules => analyze::cli::rules(&ui),
        Command::Explain(a) => analyze::cli::explain(a),
        Command::Report(a) => analyze::cli::report(&data_dir, a, &ui),
        Command::Query(a) => analyze::cli::query(&data_dir, a, &ui),
        Command::Trace(a) => analyze::cli::trace(&data_dir, a, &ui),
        Command::Diff(a) => analyze::cli::diff(a, &ui),
        Command::Verify(a) => analyze::cli::verify(&data_dir, a),
        Command::Demo(a) => demo::run(a),
        Command::Mcp(a) => mcp::run(&data_dir, a),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "tripline",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(anyhow::Error::from),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", collector::process::error_chain(&e));
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(args: &[&str]) -> bool {
        let cli = Cli::try_parse_from(std::iter::once("tripline").chain(args.iter().copied()))
            .expect("arguments parse");
        waits_between_checks(&cli.command)
    }

    #[test]
    fn only_processes_that_check_again_give_freed_memory_back() {
        assert!(waits(&["check", "--follow"]));
        assert!(waits(&["mcp"]));
        assert!(!waits(&["check"]));
        assert!(!waits(&["check", "--since", "last"]));
        assert!(!waits(&["report", "tools"]));
    }
}
