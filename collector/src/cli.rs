//! Command-line entry points of the collector: `tripline collect` and `tripline ingest`.
//! The only place in this crate that uses `anyhow`: it turns library errors into messages and
//! outcomes into exit codes (0 ok, 2 error or a failed file).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::config::{self, FsyncPolicy, PipelineConfig, ServerConfig};
use crate::ingest::forward::Forwarder;
use crate::ingest::{ingest_into, Destination, IngestOptions, IngestSummary};
use crate::server::Server;
use crate::store::lock::{current_holder, DataDirLock};
use crate::store::pipeline::Pipeline;
use crate::store::remote::{RemoteLocation, RemoteSink};
use crate::telemetry::Stats;

/// Settings of the write path shared by `collect` and `ingest`.
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// When to fsync the write-ahead log: `always` acknowledges only synced data.
    #[arg(long, value_enum, default_value_t = config::DEFAULT_FSYNC)]
    pub fsync: FsyncPolicy,
    /// Roll a Parquet file once it reaches this many bytes.
    #[arg(long, default_value_t = config::DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: u64,
    /// Roll a Parquet file once it has been open this many seconds.
    #[arg(long, default_value_t = config::DEFAULT_MAX_FILE_AGE_SECS)]
    pub max_file_age_secs: u64,
    /// Flush a Parquet row group at this many rows (it is also bounded by bytes).
    #[arg(long, default_value_t = schemas::parquet_props::DEFAULT_ROW_GROUP_ROWS,
          value_parser = schemas::parquet_props::parse_row_group_rows)]
    pub row_group_rows: usize,
    /// Drop content columns (tool arguments and results, messages) at ingest.
    #[arg(long)]
    pub redact_content: bool,
    /// Run the Parquet writer thread at this nice value (0-19; 0 keeps the process's): a lower
    /// tail acknowledgement latency below saturation, bought with earlier 429s at saturation
    /// (BENCHMARKS.md, session 7).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub writer_nice: i32,
    /// Bytes of acknowledged batches (estimated converted size) that may wait for the Parquet
    /// writer; beyond it new requests are refused (429 / RESOURCE_EXHAUSTED) until it catches
    /// up. It bounds most of the collector's memory under overload.
    #[arg(long, default_value_t = config::DEFAULT_MAX_QUEUE_BYTES, value_parser = parse_queue_bytes)]
    pub max_queue_bytes: usize,
    /// With `--data-dir s3://BUCKET/PREFIX`: the local directory for the write-ahead log, the
    /// lock and the part files being written (uploaded when finished). Required there, refused
    /// for a local store (which keeps its WAL in `<data-dir>/wal`).
    #[arg(long, env = "TRIPLINE_WAL_DIR", value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,
}

/// Where a writer keeps its local files, and the object storage it uploads to, if any.
struct WriteTarget {
    /// The local directory: the store itself, or `--wal-dir` for a store on object storage.
    local: PathBuf,
    remote: Option<RemoteSink>,
}

impl WriteTarget {
    fn resolve(data_dir: &Path, wal_dir: Option<&Path>) -> anyhow::Result<WriteTarget> {
        match (RemoteLocation::of(data_dir), wal_dir) {
            (None, None) => Ok(WriteTarget {
                local: data_dir.to_path_buf(),
                remote: None,
            }),
            (None, Some(w)) => anyhow::bail!(
                "--wal-dir {} is only for a store on object storage (--data-dir s3://BUCKET/PREFIX); a local store keeps its WAL in {}",
                w.display(),
                schemas::layout::wal_dir(data_dir).display()
            ),
            (Some(_), None) => anyhow::bail!(
                "--data-dir {} is on object storage: pass --wal-dir DIR (or TRIPLINE_WAL_DIR), a local directory for the write-ahead log",
                data_dir.display()
            ),
            (Some(location), Some(w)) => {
                let location = location?;
                let url = location.url();
                let sink = RemoteSink::connect(location)
                    .with_context(|| format!("cannot reach the store {url}"))?;
                Ok(WriteTarget {
                    local: w.to_path_buf(),
                    remote: Some(sink),
                })
            }
        }
    }

    fn pipeline_config(&self, store: &StoreArgs) -> PipelineConfig {
        let mut c = store.pipeline_config(&self.local);
        c.remote = self.remote.clone();
        c
    }
}

impl StoreArgs {
    fn pipeline_config(&self, data_dir: &Path) -> PipelineConfig {
        let mut c = PipelineConfig::new(data_dir);
        c.fsync = self.fsync;
        c.max_file_bytes = self.max_file_bytes;
        c.max_file_age = Duration::from_secs(self.max_file_age_secs.max(1));
        c.row_group_rows = self.row_group_rows.max(1);
        c.writer_nice = self.writer_nice;
        c.max_queue_bytes = self.max_queue_bytes;
        c
    }
}

#[derive(clap::Args)]
pub struct CollectArgs {
    /// OTLP/HTTP listen address (`HOST:PORT`; a host name such as `localhost` is resolved).
    #[arg(long, env = "TRIPLINE_HTTP_ADDR", default_value_t = config::DEFAULT_HTTP_ADDR, value_parser = listen_addr)]
    pub http: SocketAddr,
    /// OTLP/gRPC listen address (`HOST:PORT`; a host name such as `localhost` is resolved).
    #[arg(long, env = "TRIPLINE_GRPC_ADDR", default_value_t = config::DEFAULT_GRPC_ADDR, value_parser = listen_addr)]
    pub grpc: SocketAddr,
    /// Refuse request bodies larger than this after decompression (413).
    #[arg(long, default_value_t = config::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Refuse new requests at once (429, before reading them) while this many request-body
    /// bytes are already being processed.
    #[arg(long, default_value_t = config::DEFAULT_MAX_INFLIGHT_BYTES)]
    pub max_inflight_bytes: usize,
    /// Refuse a request (413) whose converted rows would exceed this many bytes: resource and
    /// scope attributes are copied into every span's row, so a small request can expand a lot.
    #[arg(long, default_value_t = config::DEFAULT_MAX_CONVERTED_BYTES)]
    pub max_converted_bytes: u64,
    /// Close a connection that does not send a request's headers within this many seconds (or
    /// does not start a first request within it).
    #[arg(long, default_value_t = config::DEFAULT_HEADER_READ_TIMEOUT_SECS)]
    pub header_read_timeout_secs: u64,
    /// Close a connection with no request in progress for this many seconds (on HTTP/1.1 the
    /// header-read timeout also applies while waiting for the next request).
    #[arg(long, default_value_t = config::DEFAULT_IDLE_TIMEOUT_SECS)]
    pub idle_timeout_secs: u64,
    /// Answer 408 (gRPC DEADLINE_EXCEEDED) when a request's whole body has not arrived within
    /// this many seconds; its in-flight bytes are freed.
    #[arg(long, default_value_t = config::DEFAULT_BODY_TIMEOUT_SECS)]
    pub body_timeout_secs: u64,
    /// Open connections of both ports together; lowered at start to fit under the file
    /// descriptor limit (ulimit -n) with room for the store's files. At the cap the least
    /// recently active idle connection is closed to make room.
    #[arg(long, default_value_t = config::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Concurrent HTTP/2 and gRPC streams per connection.
    #[arg(long, default_value_t = config::DEFAULT_MAX_STREAMS_PER_CONNECTION)]
    pub max_streams_per_connection: u32,
    /// Require `Authorization: Bearer <token>` with the token in this file.
    #[arg(long)]
    pub auth_token_file: Option<PathBuf>,
    /// Log the collector's counters every this many seconds.
    #[arg(long, default_value_t = config::DEFAULT_STATS_INTERVAL_SECS)]
    pub stats_interval_secs: u64,
    /// Fault this many bytes of memory in at start-up, before accepting requests, and keep them
    /// for the request path (0: none; at most a quarter of the process's memory limit, from its
    /// cgroup or the machine's RAM). A collector started into full load otherwise pays its
    /// first page faults on its first requests' latency.
    #[arg(long, default_value_t = config::DEFAULT_PRETOUCH_BYTES, value_name = "BYTES")]
    pub pretouch_bytes: usize,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(clap::Args)]
pub struct IngestArgs {
    /// Files or directories to import.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Send the spans to this running collector (`http://HOST:PORT`, OTLP/HTTP) instead of
    /// writing the store. Chosen automatically when a collector owns --data-dir.
    #[arg(long, value_name = "URL")]
    pub via: Option<String>,
    /// Bearer token for --via, read from this file.
    #[arg(long)]
    pub auth_token_file: Option<PathBuf>,
    /// Stop reading an input file beyond this many bytes (after decompression).
    #[arg(long, default_value_t = config::DEFAULT_MAX_READ_BYTES)]
    pub max_read_bytes: u64,
    /// Largest single request in a file: a whole .json/.pb file or one JSON line.
    #[arg(long, default_value_t = config::DEFAULT_MAX_REQUEST_BYTES)]
    pub max_request_bytes: usize,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl CollectArgs {
    /// The settings these arguments ask for; with no argument given, [`ServerConfig::new`].
    fn server_config(&self, data_dir: &Path, auth_token: Option<String>) -> ServerConfig {
        ServerConfig {
            http: self.http,
            grpc: self.grpc,
            max_body_bytes: self.max_body_bytes,
            max_inflight_bytes: self.max_inflight_bytes,
            max_converted_bytes: self.max_converted_bytes,
            header_read_timeout: Duration::from_secs(self.header_read_timeout_secs.max(1)),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs.max(1)),
            body_timeout: Duration::from_secs(self.body_timeout_secs.max(1)),
            max_connections: self.max_connections.max(1),
            max_streams_per_connection: self.max_streams_per_connection.max(1),
            processing_slots: crate::receive::early_admission::EarlyAdmission::default_slots(),
            auth_token,
            redact_content: self.store.redact_content,
            stats_interval: Duration::from_secs(self.stats_interval_secs.max(1)),
            retry_after_secs: config::DEFAULT_RETRY_AFTER_SECS,
            pipeline: self.store.pipeline_config(data_dir),
        }
    }
}

/// Threads of the blocking pool: the processing slots plus two, so the pipeline's start and
/// shutdown find one. A request blocks in place on its worker thread
/// ([`crate::receive::on_worker`]); the runtime stands a pool thread, within this bound, in for
/// that worker meanwhile.
///
/// Why a bound (tokio's default is 512): requests beyond the slots waited for a slot on a
/// thread of their own, and every thread that once converted a large request keeps the memory
/// it used in its own allocator heap. Under overload (128 connections of 2,048-span requests)
/// that was 73 threads and most of a 2.9 GB peak (BENCHMARKS.md, session 11). With the bound,
/// the thread count stays bounded, and requests wait for a slot in arrival order holding only
/// their body, which the in-flight budget already bounds.
fn blocking_threads(processing_slots: usize) -> usize {
    processing_slots.max(1) + 2
}

pub fn collect(data_dir: &Path, args: CollectArgs) -> anyhow::Result<ExitCode> {
    // Freed memory is reused, not returned to the OS and faulted back in (see the module).
    crate::allocator::configure();
    let target = WriteTarget::resolve(data_dir, args.store.wal_dir.as_deref())?;
    // Before anything in the directory is touched: a second writer changes nothing.
    let mut lock = DataDirLock::acquire(&target.local, "collect")?;
    let auth_token = match &args.auth_token_file {
        Some(p) => Some(crate::receive::auth::load_token(p)?),
        None => None,
    };
    // After the lock (a second collector fails fast), before anything accepts: the first
    // requests find their memory already faulted in.
    if args.pretouch_bytes > 0 {
        let limit = crate::memory_limit::memory_limit();
        let budget = crate::allocator::pretouch_budget(args.pretouch_bytes, limit);
        let done = crate::allocator::pretouch(budget);
        // A log record, not a plain line: `--log-format json` keeps every line JSON.
        tracing::info!(
            pretouched_mib = done.bytes / config::MIB,
            asked_mib = args.pretouch_bytes / config::MIB,
            memory_limit_mib = limit.map(|l| l / config::MIB as u64),
            secs = format_args!("{:.2}", done.elapsed.as_secs_f64()),
            "memory pre-touched for the request path{} (--pretouch-bytes 0 skips this)",
            if budget < args.pretouch_bytes {
                "; capped at a quarter of the memory limit"
            } else {
                ""
            }
        );
    }
    let mut config = args.server_config(&target.local, auth_token);
    config.pipeline = target.pipeline_config(&args.store);
    let wal_note = match &target.remote {
        Some(_) => format!(" wal_dir={}", target.local.display()),
        None => String::new(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("tripline-collect")
        .max_blocking_threads(blocking_threads(config.processing_slots))
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let mut signals = crate::signals::Signals::install();
        let server = Server::start(config)
            .await
            .with_context(|| format!("cannot start the collector on {}", data_dir.display()))?;
        if let Err(e) = lock.publish_endpoints(server.http_addr(), server.grpc_addr()) {
            tracing::warn!(error = %e, "cannot publish the listen addresses in the lock file");
        }
        eprintln!(
            "tripline collect: listening http={} grpc={} data_dir={}{wal_note}",
            server.http_addr(),
            server.grpc_addr(),
            data_dir.display()
        );
        let signal = signals.recv().await;
        tracing::info!(signal, "stopping: draining requests and flushing parquet");
        server.shutdown().await.context("shutdown did not complete; acknowledged data is in the WAL and is written on the next start")?;
        drop(lock);
        Ok(ExitCode::SUCCESS)
    })
}

pub fn ingest(data_dir: &Path, args: IngestArgs) -> anyhow::Result<ExitCode> {
    // A path that does not exist is a typo, not an empty import: say so before creating a store.
    for p in &args.paths {
        if let Err(e) = std::fs::symlink_metadata(p) {
            anyhow::bail!("cannot read {}: {e}; check the path", p.display());
        }
    }
    let options = IngestOptions {
        redact_content: args.store.redact_content,
        progress: true,
        max_file_bytes: args.max_read_bytes,
        max_request_bytes: args.max_request_bytes.max(1),
    };
    let token = match &args.auth_token_file {
        Some(p) => Some(crate::receive::auth::load_token(p)?),
        None => None,
    };
    let target = match &args.via {
        Some(_) => None,
        None => Some(WriteTarget::resolve(
            data_dir,
            args.store.wal_dir.as_deref(),
        )?),
    };
    let local = target.as_ref().map_or(data_dir, |t| t.local.as_path());
    let via = args.via.clone().or_else(|| {
        let holder = current_holder(local)?;
        let http = holder.http?;
        eprintln!(
            "tripline ingest: {} is owned by `tripline {}` (pid {}); sending the spans through it at http://{http}",
            data_dir.display(),
            holder.command,
            holder.pid
        );
        Some(format!("http://{http}"))
    });
    let summary = match (via, &target) {
        (Some(url), _) => {
            let forwarder = Forwarder::new(&url, token)?;
            ingest_into(&Destination::Collector(&forwarder), &args.paths, &options)
        }
        (None, Some(t)) => ingest_into_store(t, &args, &options)?,
        (None, None) => anyhow::bail!("no destination for the import: pass --data-dir or --via"),
    };
    eprintln!("{}", summary.render());
    Ok(if summary.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

fn ingest_into_store(
    target: &WriteTarget,
    args: &IngestArgs,
    options: &IngestOptions,
) -> anyhow::Result<IngestSummary> {
    let data_dir = target.local.as_path();
    let lock = DataDirLock::acquire(data_dir, "ingest")?;
    let stats = Arc::new(Stats::default());
    let pipeline = Pipeline::start(target.pipeline_config(&args.store), stats)
        .with_context(|| format!("cannot open the store {}", data_dir.display()))?;
    let summary = ingest_into(&Destination::Store(&pipeline), &args.paths, options);
    pipeline
        .shutdown()
        .context("flushing to parquet failed; the imported spans are in the WAL and are written on the next start")?;
    drop(lock);
    Ok(summary)
}

/// `HOST:PORT` to a socket address: an IP address as it is, a host name resolved (the first IPv4
/// address when there is one, so `localhost` means 127.0.0.1).
fn listen_addr(value: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Ok(addr);
    }
    use std::net::ToSocketAddrs;
    let addrs: Vec<SocketAddr> = value
        .to_socket_addrs()
        .map_err(|e| {
            format!("cannot resolve `{value}` ({e}); give HOST:PORT, e.g. 127.0.0.1:4318")
        })?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| {
            format!("`{value}` resolves to no address; give HOST:PORT, e.g. 127.0.0.1:4318")
        })
}

/// `--max-queue-bytes`: at least 1 MiB (one batch larger than the bound still passes into an
/// empty queue, so this only sets how much may wait behind it).
fn parse_queue_bytes(value: &str) -> Result<usize, String> {
    let bytes: usize = value
        .parse()
        .map_err(|e| format!("`{value}` is not a byte count ({e}); e.g. 67108864 for 64 MiB"))?;
    if bytes < config::MIB {
        return Err(format!(
            "{bytes} bytes is too small a queue; give at least {} (1 MiB)",
            config::MIB
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Collect {
        #[command(flatten)]
        args: CollectArgs,
    }

    #[derive(Parser)]
    struct Ingest {
        #[command(flatten)]
        args: IngestArgs,
    }

    /// The command line's defaults are the library's: `tripline collect` with no flag runs
    /// exactly `ServerConfig::new`.
    #[test]
    fn command_line_defaults_are_the_config_defaults() {
        let dir = Path::new("/data");
        let args = Collect::try_parse_from(["collect"]).unwrap().args;
        assert_eq!(
            format!("{:?}", args.server_config(dir, None)),
            format!("{:?}", ServerConfig::new(dir))
        );
        let args = Ingest::try_parse_from(["ingest", "x.json"]).unwrap().args;
        assert_eq!(
            format!("{:?}", args.store.pipeline_config(dir)),
            format!("{:?}", PipelineConfig::new(dir))
        );
        let defaults = IngestOptions::default();
        assert_eq!(args.max_read_bytes, defaults.max_file_bytes);
        assert_eq!(args.max_request_bytes, defaults.max_request_bytes);
    }

    #[test]
    fn the_queue_bound_is_set_from_the_command_line_and_refused_below_one_mib() {
        let dir = Path::new("/data");
        let args = Collect::try_parse_from(["collect", "--max-queue-bytes", "33554432"])
            .unwrap()
            .args;
        assert_eq!(
            args.server_config(dir, None).pipeline.max_queue_bytes,
            32 * config::MIB
        );
        let err = Collect::try_parse_from(["collect", "--max-queue-bytes", "1000"])
            .err()
            .expect("a queue under 1 MiB is refused");
        assert!(err.to_string().contains("at least 1048576"), "{err}");
        let err = Collect::try_parse_from(["collect", "--max-queue-bytes", "lots"])
            .err()
            .expect("a queue bound must be a number");
        assert!(err.to_string().contains("not a byte count"), "{err}");
    }

    #[test]
    fn listen_addresses_take_ips_and_host_names() {
        assert_eq!(
            listen_addr("127.0.0.1:4318").unwrap(),
            "127.0.0.1:4318".parse().unwrap()
        );
        assert_eq!(listen_addr("[::1]:0").unwrap(), "[::1]:0".parse().unwrap());
        assert_eq!(
            listen_addr("localhost:4318").unwrap(),
            "127.0.0.1:4318".parse().unwrap()
        );
        let err = listen_addr("4318").unwrap_err();
        assert!(err.contains("HOST:PORT"), "{err}");
    }
}
