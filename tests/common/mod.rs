//! Helpers shared by the integration tests that drive the real `tripline` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the root package's manifest dir).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `tripline --data-dir DATA_DIR ARGS...` from the repository root, quiet logs.
pub fn tripline(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tripline"))
        .current_dir(repo())
        .env("TRIPLINE_LOG", "warn")
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .expect("run the tripline binary")
}
