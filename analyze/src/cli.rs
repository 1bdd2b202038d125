//! Command-line entry points of the analyzer.

use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {}
#[derive(clap::Args)]
pub struct ExplainArgs {
    pub code: String,
}
#[derive(clap::Args)]
pub struct ReportArgs {
    pub kind: String,
}
#[derive(clap::Args)]
pub struct QueryArgs {
    pub sql: String,
}
#[derive(clap::Args)]
pub struct TraceArgs {
    pub id: String,
}
#[derive(clap::Args)]
pub struct DiffArgs {
    pub baseline: std::path::PathBuf,
    pub candidate: std::path::PathBuf,
}

fn not_yet() -> anyhow::Result<ExitCode> {
    anyhow::bail!("the analyzer is not built yet")
}
pub fn check(_d: &Path, _a: CheckArgs) -> anyhow::Result<ExitCode> { not_yet() }
pub fn rules() -> anyhow::Result<ExitCode> { not_yet() }
pub fn explain(_a: ExplainArgs) -> anyhow::Result<ExitCode> { not_yet() }
pub fn report(_d: &Path, _a: ReportArgs) -> anyhow::Result<ExitCode> { not_yet() }
pub fn query(_d: &Path, _a: QueryArgs) -> anyhow::Result<ExitCode> { not_yet() }
pub fn trace(_d: &Path, _a: TraceArgs) -> anyhow::Result<ExitCode> { not_yet() }
pub fn diff(_d: &Path, _a: DiffArgs) -> anyhow::Result<ExitCode> { not_yet() }
