//! Command-line entry points of the collector: `tripline collect` and `tripline ingest`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CollectArgs {}

#[derive(clap::Args)]
pub struct IngestArgs {
    /// Files or directories to import.
    pub paths: Vec<PathBuf>,
}

pub fn collect(_data_dir: &Path, _args: CollectArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("collect is not built yet")
}

pub fn ingest(_data_dir: &Path, _args: IngestArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("ingest is not built yet")
}
