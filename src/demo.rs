//! `tripline demo`: a newcomer's first run. Starts a collector on free loopback ports with a
//! temporary data dir, plays the sample scenarios into it over OTLP and prints the reports.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct DemoArgs {}

pub fn run(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("demo is not built yet")
}
