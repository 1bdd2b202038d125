//! A running collector: the pipeline plus the HTTP and gRPC receivers and the stats logger.
//! [`Server::start`] binds both ports (port 0 gives a free one: tests and the demo read the bound
//! addresses back) and returns once the WAL has been replayed and both listeners accept.
//!
//! Both listeners are served by `accept_loop` on hyper's connection builder, with the same
//! limits: a header-read timeout, an idle timeout (a connection with no request in progress is
//! closed), HTTP/2 streams per connection, and one connection cap for both ports, sized below
//! the process's file-descriptor limit (`RLIMIT_NOFILE`) so the WAL and Parquet files always find
//! a descriptor. At the cap, the least recently active idle connection is closed to make room
//! (idle sockets cannot lock real clients out); when every connection is busy the new one is
//! closed at once. The body deadline and the in-flight byte budget are applied per request
//! ([`crate::receive::early_admission::ChargedBody`]).
//!
//! Shutdown is staged and time-bounded: stop accepting and let in-flight requests finish, then
//! drain the queue and commit every Parquet file, then log the final stats.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tower::ServiceExt as _;

use crate::config::ServerConfig;
use crate::receive::early_admission::EarlyAdmission;
use crate::receive::grpc::GrpcReceiver;
use crate::receive::http::{router, HttpState};
use crate::receive::request::Context;
use crate::store::pipeline::{Pipeline, PipelineError};
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

        let admission = EarlyAdmission::new(config.max_inflight_bytes, config.processing_slots);
        let ctx = |source| Context {
            pipeline: Arc::clone(&pipeline),
            stats: Arc::clone(&stats),
            max_body_bytes: config.max_body_bytes,
            admission: Arc::clone(&admission),
            redact_content: config.redact_content,
            max_converted_bytes: config.max_converted_bytes,
            source,
        };
        let (stop, stop_rx) = watch::channel(false);

        let http_state = Arc::new(HttpState {
            ctx: ctx("otlp-http"),
            auth_token: config.auth_token.clone(),
            retry_after_secs: config.retry_after_secs,
            body_timeout: config.body_timeout,
        });
        let connections = Connections::new(
            effective_max_connections(config.max_connections),
            Arc::clone(&stats),
        );
        let limits = ConnectionLimits {
            header_read_timeout: config.header_read_timeout,
            idle_timeout: config.idle_timeout,
            max_streams_per_connection: config.max_streams_per_connection,
        };
        tracing::info!(
            max_connections = connections.max,
            header_read_timeout_secs = limits.header_read_timeout.as_secs_f64(),
            idle_timeout_secs = limits.idle_timeout.as_secs_f64(),
            body_timeout_secs = config.body_timeout.as_secs_f64(),
            "listener limits"
        );

        let http_handler: Handler = {
            let app = router(http_state);
            Arc::new(move |req| {
                let app = app.clone();
                Box::pin(async move {
                    match app.oneshot(req).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                })
            })
        };
        let http_task = tokio::spawn(accept_loop(
            http_listener,
            "http",
            http_handler,
            Arc::clone(&connections),
            limits,
            stop_rx.clone(),
        ));

        let grpc_handler = GrpcReceiver {
            ctx: ctx("otlp-grpc"),
            auth_token: config.auth_token.clone(),
            retry_after_secs: config.retry_after_secs,
            body_timeout: config.body_timeout,
        }
        .into_handler();
        let grpc_task = tokio::spawn(accept_loop(
            grpc_listener,
            "grpc",
            grpc_handler,
            Arc::clone(&connections),
            limits,
            stop_rx.clone(),
        ));

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

/// One request on a connection of either listener, answered with an axum response body.
pub type Handler = Arc<
    dyn Fn(
            hyper::Request<Incoming>,
        ) -> Pin<Box<dyn Future<Output = axum::response::Response> + Send>>
        + Send
        + Sync,
>;

/// File descriptors kept free for the WAL, the Parquet files and the runtime, beside the
/// connections: at least this many, or a quarter of the limit when that is more.
const FD_HEADROOM: usize = 64;

/// The connection cap actually applied: `configured`, lowered to fit under the soft
/// `RLIMIT_NOFILE` with room for the store's own files.
pub fn effective_max_connections(configured: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own; no other memory is touched.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if !ok || limit.rlim_cur == libc::RLIM_INFINITY {
        return configured.max(1);
    }
    let nofile = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
    let headroom = FD_HEADROOM.max(nofile / 4);
    configured.min(nofile.saturating_sub(headroom)).max(1)
}

/// Time limits of every connection.
#[derive(Debug, Clone, Copy)]
struct ConnectionLimits {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_streams_per_connection: u32,
}

/// The open connections of both listeners, capped at `max`.
struct Connections {
    max: usize,
    open: Mutex<HashMap<u64, Arc<ConnState>>>,
    next_id: AtomicU64,
    emptied: Notify,
    removed: Notify,
    clock: Instant,
    stats: Arc<Stats>,
}

/// What the accept loop knows of one connection.
struct ConnState {
    /// Requests in progress on it.
    busy: AtomicUsize,
    /// Milliseconds since [`Connections::clock`] of its last request start or end (or accept).
    last_active_ms: AtomicU64,
    /// Whether it ever served a request (before that, the header-read timeout is its idle limit).
    served: AtomicBool,
    /// Asked to close to make room for a new connection.
    evicted: AtomicBool,
    evict: Notify,
}

/// Beyond the cap, connections being evicted may briefly overlap with their replacements.
const EVICTION_SLACK: usize = 16;

/// How long a new connection may wait for evicted ones to close before it is refused.
const ADMIT_WAIT: Duration = Duration::from_secs(1);

/// What to do with a new connection.
enum Admit {
    Admitted(u64, Arc<ConnState>),
    /// At the cap with evictions still closing: wait for one.
    Wait,
    /// At the cap and every connection busy.
    Refuse,
}

impl Connections {
    fn new(max: usize, stats: Arc<Stats>) -> Arc<Connections> {
        Arc::new(Connections {
            max,
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            emptied: Notify::new(),
            removed: Notify::new(),
            clock: Instant::now(),
            stats,
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Register a new connection, closing the least recently active idle one when at the cap.
    fn admit(&self) -> Admit {
        let Ok(mut open) = self.open.lock() else {
            return Admit::Refuse;
        };
        let live = open
            .values()
            .filter(|c| !c.evicted.load(Ordering::Relaxed))
            .count();
        if live >= self.max {
            if open.len() >= self.max + EVICTION_SLACK {
                // Evicted connections have not closed yet: wait for them, not for more fds.
                return Admit::Wait;
            }
            let victim = open
                .values()
                .filter(|c| {
                    !c.evicted.load(Ordering::Relaxed) && c.busy.load(Ordering::Relaxed) == 0
                })
                .min_by_key(|c| c.last_active_ms.load(Ordering::Relaxed));
            let Some(victim) = victim else {
                return Admit::Refuse;
            };
            victim.evicted.store(true, Ordering::Relaxed);
            victim.evict.notify_one();
            Stats::add(&self.stats.connections_evicted, 1);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState {
            busy: AtomicUsize::new(0),
            last_active_ms: AtomicU64::new(self.now_ms()),
            served: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
        });
        open.insert(id, Arc::clone(&state));
        self.stats
            .connections_open
            .store(open.len() as u64, Ordering::Relaxed);
        Admit::Admitted(id, state)
    }

    /// [`Connections::admit`], waiting up to [`ADMIT_WAIT`] for evicted connections to close.
    async fn admit_waiting(&self) -> Option<(u64, Arc<ConnState>)> {
        let deadline = tokio::time::Instant::now() + ADMIT_WAIT;
        loop {
            let removed = self.removed.notified();
            match self.admit() {
                Admit::Admitted(id, state) => return Some((id, state)),
                Admit::Refuse => return None,
                Admit::Wait => {
                    if tokio::time::timeout_at(deadline, removed).await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    fn remove(&self, id: u64) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(&id);
            self.removed.notify_waiters();
            self.stats
                .connections_open
                .store(open.len() as u64, Ordering::Relaxed);
            if open.is_empty() {
                self.emptied.notify_waiters();
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.open.lock().map_or(true, |o| o.is_empty())
    }
}

/// Marks a connection busy while one of its requests is answered.
struct BusyGuard {
    conn: Arc<ConnState>,
    connections: Arc<Connections>,
}

impl BusyGuard {
    fn enter(conn: &Arc<ConnState>, connections: &Arc<Connections>) -> BusyGuard {
        conn.busy.fetch_add(1, Ordering::Relaxed);
        conn.served.store(true, Ordering::Relaxed);
        conn.last_active_ms
            .store(connections.now_ms(), Ordering::Relaxed);
        BusyGuard {
            conn: Arc::clone(conn),
            connections: Arc::clone(connections),
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.conn
            .last_active_ms
            .store(self.connections.now_ms(), Ordering::Relaxed);
        self.conn.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Accept connections until `stop`, serve each on its own task, then wait (bounded by the
/// caller) for the open ones to finish.
async fn accept_loop(
    listener: TcpListener,
    protocol: &'static str,
    handler: Handler,
    connections: Arc<Connections>,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                // EMFILE and friends: back off instead of spinning; open connections close by
                // their timeouts and free descriptors.
                crate::telemetry::warn_limited(
                    "accept-failed",
                    &format!("{protocol}: cannot accept a connection: {e}"),
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some((id, conn)) = connections.admit_waiting().await else {
            Stats::add(&connections.stats.connections_refused, 1);
            crate::telemetry::warn_limited(
                "connection-refused",
                &format!("{protocol}: {} connections open and none idle (--max-connections); closing a new connection", connections.max),
            );
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve_connection(
            stream,
            protocol,
            Arc::clone(&handler),
            Arc::clone(&connections),
            id,
            conn,
            limits,
            stop.clone(),
        ));
    }
    drop(listener);
    while !connections.is_empty() {
        let emptied = connections.emptied.notified();
        if connections.is_empty() {
            break;
        }
        // Re-check now and then: the last connection of the other listener may end unseen.
        let _ = tokio::time::timeout(Duration::from_millis(100), emptied).await;
    }
}

/// Serve one connection under the time limits until it ends, is idle too long, is evicted or
/// the collector stops.
#[allow(clippy::too_many_arguments)]
async fn serve_connection(
    stream: tokio::net::TcpStream,
    protocol: &'static str,
    handler: Handler,
    connections: Arc<Connections>,
    id: u64,
    conn: Arc<ConnState>,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let service = {
        let (conn, connections) = (Arc::clone(&conn), Arc::clone(&connections));
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let guard = BusyGuard::enter(&conn, &connections);
            let answer = handler(req);
            async move {
                let response = answer.await;
                drop(guard);
                Ok::<_, Infallible>(response)
            }
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_streams_per_connection);
    let builder = if protocol == "grpc" {
        builder.http2_only()
    } else {
        builder
    };
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let tick_every = (limits.idle_timeout.min(limits.header_read_timeout) / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(5));
    let mut tick = tokio::time::interval(tick_every);
    let mut closing_since: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = connection.as_mut() => break,
            _ = conn.evict.notified(), if closing_since.is_none() => {
                if conn.busy.load(Ordering::Relaxed) == 0 {
                    break;
                }
                connection.as_mut().graceful_shutdown();
                closing_since = Some(Instant::now());
            }
            _ = stop.wait_for(|s| *s), if closing_since.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing_since = Some(Instant::now());
            }
            _ = tick.tick() => {
                let busy = conn.busy.load(Ordering::Relaxed) > 0;
                if let Some(since) = closing_since {
                    if !busy || since.elapsed() > DRAIN_TIMEOUT {
                        break;
                    }
                    continue;
                }
                let idle_limit = if conn.served.load(Ordering::Relaxed) {
                    limits.idle_timeout
                } else {
                    limits.header_read_timeout.min(limits.idle_timeout)
                };
                let idle_ms = connections
                    .now_ms()
                    .saturating_sub(conn.last_active_ms.load(Ordering::Relaxed));
                if !busy && Duration::from_millis(idle_ms) >= idle_limit {
                    Stats::add(&connections.stats.connections_timed_out, 1);
                    break;
                }
            }
        }
    }
    connections.remove(id);
}
