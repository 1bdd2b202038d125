//! What every tripline binary does around a command: log lines on stderr, and one `error: …`
//! line for a failure. Shared by `tripline` (every job) and `tripline-collector` (the collector
//! alone, for hosts that only receive spans), so the two print and exit alike.

use std::io::IsTerminal;
use std::path::PathBuf;

/// The flags every command of both binaries takes: where the store is and how logs look.
#[derive(clap::Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Directory of the Parquet span store.
    #[arg(
        long,
        global = true,
        env = "TRIPLINE_DATA_DIR",
        default_value = "./tripline-data"
    )]
    pub data_dir: PathBuf,
    /// Log line format on stderr: `text` for people, `json` (one object per line) for log
    /// pipelines. Levels come from RUST_LOG, else TRIPLINE_LOG, else `info`.
    #[arg(
        long,
        global = true,
        env = "TRIPLINE_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub log_format: LogFormat,
}

/// Log line format on stderr: `text` for people, `json` (one object per line) for log pipelines.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Log to stderr in `format`, filtered by RUST_LOG, else TRIPLINE_LOG, else `info`; text lines
/// are coloured when `color(stderr is a terminal)` says so.
pub fn init_logging(format: LogFormat, color: impl FnOnce(bool) -> bool) {
    let filter = ["RUST_LOG", "TRIPLINE_LOG"]
        .iter()
        .find_map(|var| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .and_then(|v| tracing_subscriber::EnvFilter::try_new(v).ok())
        })
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder
            .with_ansi(color(std::io::stderr().is_terminal()))
            .init(),
    }
}

/// The error and its causes, `: `-separated, each said once: a message that already quotes its
/// cause (an OS error in a "cannot list ... : Permission denied" message) does not repeat it.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_message_already_quotes_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "Permission denied");
        let e = anyhow::Error::new(io).context("cannot list /x: Permission denied");
        assert_eq!(error_chain(&e), "cannot list /x: Permission denied");
        let e = anyhow::anyhow!("disk full").context("cannot write part");
        assert_eq!(error_chain(&e), "cannot write part: disk full");
    }
}
