//! `tripline-samples`: the sample generator (see the `samples` crate docs).

fn main() -> std::process::ExitCode {
    samples::cli::main()
}
