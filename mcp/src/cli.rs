//! `tripline mcp`: flags, start-up checks, and the serve loop over stdio or Streamable HTTP.
//!
//! This is the CLI edge (anyhow errors, mapped to exit 2 by `main`). On stdio, stdout carries
//! the protocol only: everything else goes to stderr. Over HTTP the server prints one line,
//! `tripline mcp: listening http://ADDR/mcp data_dir=DIR`, on stderr once it accepts, and stops
//! on Ctrl-C or SIGTERM. Either way tripline's own spans are flushed before the process exits.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::server::TriplineServer;
use crate::telemetry::Telemetry;
use crate::tools::Settings;

/// Flags of `tripline mcp` (the store is the global `--data-dir`).
#[derive(clap::Args, Debug, Clone)]
pub struct McpArgs {
    /// Serve over Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8808;
    /// port 0 picks a free one). Loopback addresses only, unless --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Let --http listen on a non-loopback address; requires --auth-token-file.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// Require `Authorization: Bearer <token>` on every HTTP request (the token is the file's
    /// content, trimmed), as `tripline collect --auth-token-file` does.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub auth_token_file: Option<PathBuf>,
    /// Policy file (TOML host tool registry) used by check and trace when a call names none.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Directory whose policy files a call may name (repeatable). Default: the working
    /// directory. Paths outside every root are refused.
    #[arg(long = "policy-root", value_name = "DIR")]
    pub policy_roots: Vec<PathBuf>,
    /// Time limit of one `query` call, in seconds.
    #[arg(long, default_value_t = 10, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub query_timeout_secs: u64,
    /// Memory limit of one `query` call, in MiB (a larger sort or join fails with a message).
    #[arg(long, default_value_t = 1024, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(16..=1_048_576))]
    pub query_memory_mib: u64,
}

/// Most bytes of JSON rows in one `query` answer.
const RESPONSE_BYTES: usize = 8 * 1024 * 1024;

fn settings(data_dir: &Path, args: &McpArgs) -> anyhow::Result<Settings> {
    let roots = if args.policy_roots.is_empty() {
        vec![std::env::current_dir().context("cannot read the working directory")?]
    } else {
        args.policy_roots.clone()
    };
    let policy_roots = roots
        .iter()
        .map(|r| {
            r.canonicalize().with_context(|| {
                format!(
                    "--policy-root {}: not a directory that can be read",
                    r.display()
                )
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(p) = &args.policy {
        // Fail at start-up, not on the first call.
        analyze_policy_readable(p)?;
    }
    Ok(Settings {
        data_dir: data_dir.to_path_buf(),
        policy: args.policy.clone(),
        policy_roots,
        query_timeout: Duration::from_secs(args.query_timeout_secs),
        query_memory_bytes: usize::try_from(args.query_memory_mib * 1024 * 1024)
            .unwrap_or(usize::MAX),
        response_bytes: RESPONSE_BYTES,
    })
}

fn analyze_policy_readable(path: &Path) -> anyhow::Result<()> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|_| ())
        .with_context(|| format!("--policy {}: no such file", path.display()))
}

/// Runs the server until the client closes stdio, or until Ctrl-C / SIGTERM over HTTP.
pub fn run(data_dir: &Path, args: McpArgs) -> anyhow::Result<ExitCode> {
    let token = match &args.auth_token_file {
        Some(p) => Some(collector::receive::auth::load_token(p)?),
        None => None,
    };
    if let Some(addr) = args.http {
        crate::http::check_address(addr, args.allow_remote, token.is_some())?;
    }
    let settings = settings(data_dir, &args)?;
    if !data_dir.is_dir() {
        // Not fatal: the store may appear later (a collector about to start); every call says so.
        tracing::warn!(data_dir = %data_dir.display(), "the data dir does not exist yet; every tool call will say so until it does");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let telemetry = Telemetry::from_env()?.map(Arc::new);
        let outcome = match args.http {
            Some(addr) => serve_http(settings, telemetry.clone(), addr, token).await,
            None => serve_stdio(settings, telemetry.clone()).await,
        };
        if let Some(t) = telemetry {
            let _ = tokio::task::spawn_blocking(move || t.shutdown()).await;
        }
        outcome
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn serve_stdio(settings: Settings, telemetry: Option<Arc<Telemetry>>) -> anyhow::Result<()> {
    let server = TriplineServer::new(settings, telemetry, "pipe")?;
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP handshake on stdio failed")?;
    running
        .waiting()
        .await
        .context("the MCP session on stdio failed")?;
    Ok(())
}

async fn serve_http(
    settings: Settings,
    telemetry: Option<Arc<Telemetry>>,
    addr: SocketAddr,
    token: Option<String>,
) -> anyhow::Result<()> {
    let data_dir = settings.data_dir.display().to_string();
    let server = TriplineServer::new(settings, telemetry, "tcp")?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}; is another process using it?"))?;
    let bound = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let shutdown = CancellationToken::new();
    // Registered before the listening line is printed: a SIGTERM sent right after it must stop
    // the server gracefully, not kill it with the default action.
    let signals = Signals::install().context("cannot install the signal handlers")?;
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            signals.recv().await;
            shutdown.cancel();
        }
    });
    eprintln!("tripline mcp: listening http://{bound}/mcp data_dir={data_dir}");
    crate::http::serve(server, listener, token, !bound.ip().is_loopback(), shutdown)
        .await
        .context("the HTTP server failed")
}

/// SIGINT (Ctrl-C) and SIGTERM, registered when installed.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Waits for the first of them.
    async fn recv(mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => {}
                _ = self.int.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
