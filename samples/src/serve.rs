//! Entry point of an MCP server subprocess (`tripline-samples serve-mcp …`, or
//! `tripline demo --serve-mcp …`): its own SDK pipeline, one [`SeedServer`], stdio or Streamable
//! HTTP. Over HTTP it binds a free loopback port, prints `listening <url>` on stdout for the host
//! and serves until its stdin closes; over stdio it serves until the host closes the pipe. Either
//! way it flushes its spans before it exits, so the host can wait for it and know the scenario's
//! spans are all exported.

use std::sync::Arc;

use clap::Parser;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::catalog::{ServerKind, ServerVariant};
use crate::error::SamplesError;
use crate::server::SeedServer;
use crate::telemetry::{traces_url, Determinism, Telemetry, TelemetryConfig};

/// Prefix of the line an HTTP server prints once it listens.
pub const LISTENING: &str = "listening ";

/// Arguments of the server subprocess.
#[derive(Debug, Parser)]
#[command(
    name = "serve-mcp",
    about = "Run one seed MCP server (used by the generator)"
)]
pub struct ServeArgs {
    /// crm | atlas-tickets | atlas-parts | atlas-manuals | acme-support | swcraft
    #[arg(long)]
    pub server: String,
    /// stdio | http
    #[arg(long, default_value = "stdio")]
    pub transport: String,
    /// OTLP/HTTP endpoint for this process's spans.
    #[arg(long)]
    pub endpoint: String,
    /// Variant flags: dict-result, seed-annotations, catalog-v2, mask-errors.
    #[arg(long)]
    pub variant: Vec<String>,
    /// Deterministic id seed (with --base-nanos: deterministic mode).
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub base_nanos: Option<u64>,
}

/// Runs the server until the host disconnects.
pub async fn serve(args: ServeArgs) -> Result<(), SamplesError> {
    let kind = ServerKind::parse(&args.server)
        .ok_or_else(|| SamplesError::UnknownServer(args.server.clone()))?;
    let variant = ServerVariant::from_words(args.variant.iter().map(String::as_str))
        .map_err(|w| SamplesError::Invalid("--variant", format!("unknown flag {w}; expected dict-result, seed-annotations, catalog-v2 or mask-errors")))?;
    let http = match args.transport.as_str() {
        "stdio" => false,
        "http" => true,
        other => {
            return Err(SamplesError::Invalid(
                "--transport",
                format!("{other}; expected stdio or http"),
            ))
        }
    };
    let determinism = match (args.seed, args.base_nanos) {
        (Some(seed), Some(base_unix_nanos)) => Some(Determinism {
            seed,
            base_unix_nanos,
        }),
        _ => None,
    };
    let telemetry = Telemetry::start(&TelemetryConfig {
        service_name: kind.service_name().to_string(),
        scope: "tripline-samples/mcp-server",
        role: "mcp-server",
        traces_url: traces_url(&args.endpoint),
        determinism,
    })?;
    let handler = SeedServer::new(
        kind,
        variant,
        if http { "tcp" } else { "pipe" },
        telemetry.dispatch.clone(),
        telemetry.clock.clone(),
    );
    if http {
        serve_http(handler).await?;
    } else {
        let running =
            handler
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| SamplesError::Mcp {
                    server: kind.name().into(),
                    method: "initialize".into(),
                    reason: e.to_string(),
                })?;
        let _ = running.waiting().await;
    }
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .map_err(|e| SamplesError::Flush(e.to_string()))?
}

async fn serve_http(handler: SeedServer) -> Result<(), SamplesError> {
    let config = StreamableHttpServerConfig::default();
    let ct = config.cancellation_token.clone();
    let service: StreamableHttpService<SeedServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(SamplesError::Sink)?;
    let addr = listener.local_addr().map_err(SamplesError::Sink)?;
    let server = tokio::spawn({
        let ct = ct.clone();
        async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { ct.cancelled_owned().await })
                .await;
        }
    });
    let mut out = tokio::io::stdout();
    out.write_all(format!("{LISTENING}http://{addr}/mcp\n").as_bytes())
        .await
        .map_err(SamplesError::Sink)?;
    out.flush().await.map_err(SamplesError::Sink)?;
    // Serve until the host closes our stdin.
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    ct.cancel();
    let _ = server.await;
    Ok(())
}
