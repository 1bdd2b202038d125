//! Settings of the pipeline and of the network receivers, in one place so the CLI, the tests and
//! `tripline demo` build them the same way (`Default` is the embedded, safe configuration).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// When the write-ahead log is fsynced relative to the acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FsyncPolicy {
    /// Every request waits for an fsync covering its bytes before it is acknowledged (group
    /// commit: concurrent requests share one fsync). Nothing acknowledged is lost on power loss.
    Always,
    /// A background thread fsyncs periodically; a crash of the machine can lose the last interval.
    Interval,
    /// Leave it to the operating system; a process crash loses nothing, a machine crash may.
    Never,
}

/// Everything the write path (WAL, batcher, Parquet writer) needs.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Root of the store: `spans/` and `wal/` live below it.
    pub data_dir: PathBuf,
    pub fsync: FsyncPolicy,
    /// Period of the background fsync under [`FsyncPolicy::Interval`].
    pub fsync_interval: Duration,
    /// A Parquet file is closed and renamed once it reaches this many bytes.
    pub max_file_bytes: u64,
    /// ... or once it has been open this long.
    pub max_file_age: Duration,
    /// A row group is flushed at this many rows (at most
    /// [`schemas::parquet_props::MAX_ROW_GROUP_ROWS`], where the writer cuts anyway) ...
    pub row_group_rows: usize,
    /// ... or when its buffered (encoded) size reaches this many bytes.
    pub row_group_bytes: usize,
    /// A WAL segment is closed and a new one started beyond this size.
    pub wal_segment_bytes: u64,
    /// Part files open at once (one per partition being written; each holds an `ArrowWriter`
    /// and a file descriptor). A batch touching a partition beyond it first commits the least
    /// recently written file, so a request spread over thousands of hours stays bounded.
    pub max_open_files: usize,
    /// Admission control: converted batches waiting for the Parquet writer.
    pub max_queue_batches: usize,
    /// Admission control: bytes of those batches (Arrow IPC size).
    pub max_queue_bytes: usize,
}

impl PipelineConfig {
    /// The defaults of `tripline collect` for a store at `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        PipelineConfig {
            data_dir: data_dir.into(),
            fsync: FsyncPolicy::Always,
            fsync_interval: Duration::from_millis(200),
            max_file_bytes: 128 * 1024 * 1024,
            max_file_age: Duration::from_secs(60),
            row_group_rows: schemas::parquet_props::DEFAULT_ROW_GROUP_ROWS,
            row_group_bytes: schemas::parquet_props::MAX_ROW_GROUP_BYTES,
            wal_segment_bytes: 64 * 1024 * 1024,
            max_open_files: 32,
            max_queue_batches: 1024,
            max_queue_bytes: 256 * 1024 * 1024,
        }
    }
}

/// Default of `--header-read-timeout-secs`.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
/// Default of `--idle-timeout-secs`.
pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 60;
/// Default of `--body-timeout-secs`.
pub const DEFAULT_BODY_TIMEOUT_SECS: u64 = 30;
/// Default of `--max-connections` (before it is lowered under the fd limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default of `--max-streams-per-connection`.
pub const DEFAULT_MAX_STREAMS_PER_CONNECTION: u32 = 16;

/// The receivers' settings on top of the pipeline's.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub http: SocketAddr,
    pub grpc: SocketAddr,
    /// Cap on a request body, applied after decompression (and to the compressed body too).
    pub max_body_bytes: usize,
    /// Early admission: request bodies admitted but not yet answered; beyond it a request is
    /// refused with 429 before its body is read.
    pub max_inflight_bytes: usize,
    /// A request whose converted rows would take more than this (resource and scope attributes
    /// are copied into every row) is refused whole with 413 before conversion.
    pub max_converted_bytes: u64,
    /// Requests decoded and converted at once (the others wait holding only their body).
    pub processing_slots: usize,
    /// A connection must send a request's headers within this time (and, before its first
    /// request, must start one within it), else it is closed.
    pub header_read_timeout: Duration,
    /// A connection with no request in progress for this long is closed (keep-alive idle).
    /// On HTTP/1.1, hyper also runs the header-read timeout while it waits for the next request
    /// of a kept-alive connection, so there the idle limit is the shorter of the two.
    pub idle_timeout: Duration,
    /// A request's whole body must arrive within this time, else 408 and its budget is freed.
    pub body_timeout: Duration,
    /// Open connections of both listeners together; lowered at start to fit under the process's
    /// file-descriptor limit with room for the store's files. At the cap the least recently
    /// active idle connection is closed for a new one.
    pub max_connections: usize,
    /// Concurrent HTTP/2 (and gRPC) streams per connection.
    pub max_streams_per_connection: u32,
    /// Bearer token required on every request when set.
    pub auth_token: Option<String>,
    /// Drop content columns (arguments, results, messages) at ingest.
    pub redact_content: bool,
    /// Period of the self-telemetry log line.
    pub stats_interval: Duration,
    /// Seconds suggested to a client refused with 429 / RESOURCE_EXHAUSTED.
    pub retry_after_secs: u32,
    pub pipeline: PipelineConfig,
}

impl ServerConfig {
    /// Loopback defaults (`127.0.0.1:4318` / `:4317`), 64 MiB body cap, 64 MiB of bodies in
    /// flight, 256 MiB of converted rows per request, one processing slot per core, no auth;
    /// 10 s to send headers, 60 s keep-alive idle, 30 s per body, 1,024 connections (lowered
    /// under the fd limit), 16 HTTP/2 streams per connection.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        ServerConfig {
            http: SocketAddr::from(([127, 0, 0, 1], 4318)),
            grpc: SocketAddr::from(([127, 0, 0, 1], 4317)),
            max_body_bytes: 64 * 1024 * 1024,
            max_inflight_bytes: 64 * 1024 * 1024,
            max_converted_bytes: schemas::convert::DEFAULT_MAX_CONVERTED_BYTES,
            processing_slots: crate::admission::Admission::default_slots(),
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECS),
            body_timeout: Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_streams_per_connection: DEFAULT_MAX_STREAMS_PER_CONNECTION,
            auth_token: None,
            redact_content: false,
            stats_interval: Duration::from_secs(30),
            retry_after_secs: 1,
            pipeline: PipelineConfig::new(data_dir),
        }
    }
}
