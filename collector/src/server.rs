//! A running collector: the pipeline plus the HTTP and gRPC receivers and the stats logger.
//! [`Server::start`] binds both ports (port 0 gives a free one: tests and the demo read the bound
//! addresses back) and returns once the WAL has been replayed and both listeners accept.
//!
//! Shutdown is staged and time-bounded: stop accepting and let in-flight requests finish, then
//! drain the queue and commit every Parquet file, then log the final stats.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::admission::Admission;
use crate::config::ServerConfig;
use crate::grpc::GrpcReceiver;
use crate::http::{router, HttpState};
use crate::pipeline::{Pipeline, PipelineError};
use crate::request::Context;
use crate::telemetry::Stats;

/// In-flight requests get this long to finish after shutdown starts.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the collector could not start or stop.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "cannot listen on {addr} ({protocol}): {source}; pick another address with --{protocol}"
    )]
    Bind {
        protocol: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("the collector's start-up task failed: {0}")]
    Task(String),
}

/// A running collector.
pub struct Server {
    http_addr: SocketAddr,
    grpc_addr: SocketAddr,
    pipeline: Arc<Pipeline>,
    stats: Arc<Stats>,
    stop: watch::Sender<bool>,
    http_task: JoinHandle<()>,
    grpc_task: JoinHandle<()>,
    stats_task: JoinHandle<()>,
}

impl Server {
    /// Replay the WAL, bind both receivers and start serving.
    pub async fn start(config: ServerConfig) -> Result<Server, ServerError> {
        let stats = Arc::new(Stats::default());
        let pipeline_config = config.pipeline.clone();
        let pipeline_stats = Arc::clone(&stats);
        let pipeline =
            tokio::task::spawn_blocking(move || Pipeline::start(pipeline_config, pipeline_stats))
                .await
                .map_err(|e| ServerError::Task(e.to_string()))??;
        let pipeline = Arc::new(pipeline);

        let http_listener = tokio::net::TcpListener::bind(config.http)
            .await
            .map_err(|source| ServerError::Bind {
                protocol: "http",
                addr: config.http,
                source,
            })?;
        let grpc_listener = tokio::net::TcpListener::bind(config.grpc)
            .await
            .map_err(|source| ServerError::Bind {
                protocol: "grpc",
                addr: config.grpc,
                source,
            })?;
        let http_addr = http_listener
            .local_addr()
            .map_err(|source| ServerError::Bind {
                protocol: "http",
                addr: config.http,
                source,
            })?;
        let grpc_addr = grpc_listener
            .local_addr()
            .map_err(|source| ServerError::Bind {
                protocol: "grpc",
                addr: config.grpc,
                source,
            })?;
        for addr in [http_addr, grpc_addr] {
            if !addr.ip().is_loopback() && config.auth_token.is_none() {
                tracing::warn!(%addr, "listening on a non-loopback address without --auth-token-file: anyone who can reach it can write spans");
            }
        }

        let admission = Admission::new(config.max_inflight_bytes, config.processing_slots);
        let ctx = |source| Context {
            pipeline: Arc::clone(&pipeline),
            stats: Arc::clone(&stats),
            max_body_bytes: config.max_body_bytes,
            admission: Arc::clone(&admission),
            redact_content: config.redact_content,
            source,
        };
        let (stop, stop_rx) = watch::channel(false);

        let http_state = Arc::new(HttpState {
            ctx: ctx("otlp-http"),
            auth_token: config.auth_token.clone(),
            retry_after_secs: config.retry_after_secs,
        });
        let mut http_stop = stop_rx.clone();
        let http_task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = http_stop.wait_for(|s| *s).await;
            };
            if let Err(e) = axum::serve(http_listener, router(http_state))
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::error!(error = %e, "http receiver stopped");
            }
        });

        let grpc_service = GrpcReceiver {
            ctx: ctx("otlp-grpc"),
            auth_token: config.auth_token.clone(),
            retry_after_secs: config.retry_after_secs,
        }
        .into_service();
        let mut grpc_stop = stop_rx.clone();
        let grpc_task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = grpc_stop.wait_for(|s| *s).await;
            };
            let incoming = tonic::transport::server::TcpIncoming::from(grpc_listener);
            if let Err(e) = tonic::transport::Server::builder()
                .add_service(grpc_service)
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
            {
                tracing::error!(error = %e, "grpc receiver stopped");
            }
        });

        let log_stats = Arc::clone(&stats);
        let every = config.stats_interval;
        let mut stats_stop = stop_rx;
        let stats_task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tick.tick() => log_stats.log("periodic"),
                    _ = stats_stop.wait_for(|s| *s) => break,
                }
            }
        });

        Ok(Server {
            http_addr,
            grpc_addr,
            pipeline,
            stats,
            stop,
            http_task,
            grpc_task,
            stats_task,
        })
    }

    /// The bound OTLP/HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The bound OTLP/gRPC address.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    /// The write pipeline (flush, pause for tests).
    pub fn pipeline(&self) -> &Arc<Pipeline> {
        &self.pipeline
    }

    /// Counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    async fn stop_receivers(&mut self) {
        let _ = self.stop.send(true);
        let receivers = async {
            let _ = (&mut self.http_task).await;
            let _ = (&mut self.grpc_task).await;
        };
        if tokio::time::timeout(DRAIN_TIMEOUT, receivers)
            .await
            .is_err()
        {
            tracing::warn!("in-flight requests did not finish within {DRAIN_TIMEOUT:?}; closing their connections");
            self.http_task.abort();
            self.grpc_task.abort();
        }
        let _ = (&mut self.stats_task).await;
    }

    /// Stop accepting, finish in-flight requests, commit everything to Parquet.
    pub async fn shutdown(mut self) -> Result<(), ServerError> {
        self.stop_receivers().await;
        let pipeline = Arc::clone(&self.pipeline);
        tokio::task::spawn_blocking(move || pipeline.shutdown())
            .await
            .map_err(|e| ServerError::Task(e.to_string()))??;
        self.stats.log("shutdown");
        Ok(())
    }

    /// Stop as a crash would (receivers closed, nothing more written to Parquet, temporary
    /// files left behind). For durability tests.
    pub async fn abort(mut self) {
        self.pipeline.pause_writer(true);
        self.stop_receivers().await;
        let pipeline = Arc::clone(&self.pipeline);
        let _ = tokio::task::spawn_blocking(move || pipeline.abort()).await;
    }
}
