//! Settings of the pipeline, the network receivers and the importer, with every default stated
//! once: the `DEFAULT_*` constants below are what `PipelineConfig::new` and `ServerConfig::new`
//! build (the embedded, safe configuration the tests and `tripline demo` use) and what the
//! command line shows and applies (`crate::cli`), so the two cannot drift.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::time::Duration;

/// One mebibyte, the unit of the byte defaults below.
pub const MIB: usize = 1024 * 1024;

/// Default of `--http`: loopback only, the OTLP/HTTP port.
pub const DEFAULT_HTTP_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 4318));
/// Default of `--grpc`: loopback only, the OTLP/gRPC port.
pub const DEFAULT_GRPC_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 4317));
/// Default of `--fsync`: nothing is acknowledged before it is synced.
pub const DEFAULT_FSYNC: FsyncPolicy = FsyncPolicy::Always;
/// Period of the background fsync under [`FsyncPolicy::Interval`] (no flag).
pub const DEFAULT_FSYNC_INTERVAL: Duration = Duration::from_millis(200);
/// Default of `--max-file-bytes`.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 128 * MIB as u64;
/// Default of `--max-file-age-secs`.
pub const DEFAULT_MAX_FILE_AGE_SECS: u64 = 60;
/// Size beyond which a WAL segment is closed (no flag).
pub const DEFAULT_WAL_SEGMENT_BYTES: u64 = 64 * MIB as u64;
/// Part files open at once (no flag).
pub const DEFAULT_MAX_OPEN_FILES: usize = 32;
/// Batches waiting for the Parquet writer (no flag).
pub const DEFAULT_MAX_QUEUE_BATCHES: usize = 1024;
/// Default of `--max-queue-bytes`: bytes of the batches waiting for the Parquet writer.
pub const DEFAULT_MAX_QUEUE_BYTES: usize = 64 * MIB;
/// Default of `--max-body-bytes`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * MIB;
/// Default of `--max-inflight-bytes`.
pub const DEFAULT_MAX_INFLIGHT_BYTES: usize = 64 * MIB;
/// Default of `--pretouch-bytes`: memory faulted in at start-up for the request path
/// ([`crate::allocator::pretouch`]).
pub const DEFAULT_PRETOUCH_BYTES: usize = 256 * MIB;
/// Default of `--max-converted-bytes` (the converter's own bound).
pub const DEFAULT_MAX_CONVERTED_BYTES: u64 = schemas::convert::DEFAULT_MAX_CONVERTED_BYTES;
/// Default of `--stats-interval-secs`.
pub const DEFAULT_STATS_INTERVAL_SECS: u64 = 30;
/// Seconds a refused client is told to wait (`Retry-After`, gRPC RetryInfo; no flag).
pub const DEFAULT_RETRY_AFTER_SECS: u32 = 1;
/// Default of `tripline ingest --max-read-bytes`: bytes read from one file, after decompression.
pub const DEFAULT_MAX_READ_BYTES: u64 = 1 << 30;
/// Default of `tripline ingest --max-request-bytes`: one request in a file (a whole `.json` /
/// `.pb` file, or one line of JSON lines).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 256 * MIB;

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
    /// Root of the store: `spans/` and `wal/` live below it. With [`PipelineConfig::remote`],
    /// the local directory (`--wal-dir`) holding the WAL, the lock and the part files being
    /// written, which are uploaded when finished.
    pub data_dir: PathBuf,
    /// The store on object storage (`--data-dir s3://…`), or `None` for a local store.
    pub remote: Option<crate::store::remote::RemoteSink>,
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
    /// Queue reservation: converted batches waiting for the Parquet writer.
    pub max_queue_batches: usize,
    /// Queue reservation: bytes of those batches (Arrow IPC size).
    pub max_queue_bytes: usize,
    /// Nice value of the Parquet writer thread (`--writer-nice`, 0 = the process's own); see
    /// [`crate::store::writer_priority`].
    pub writer_nice: i32,
}

impl PipelineConfig {
    /// The defaults of `tripline collect` for a store at `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        PipelineConfig {
            data_dir: data_dir.into(),
            remote: None,
            fsync: DEFAULT_FSYNC,
            fsync_interval: DEFAULT_FSYNC_INTERVAL,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_file_age: Duration::from_secs(DEFAULT_MAX_FILE_AGE_SECS),
            row_group_rows: schemas::parquet_props::DEFAULT_ROW_GROUP_ROWS,
            row_group_bytes: schemas::parquet_props::MAX_ROW_GROUP_BYTES,
            wal_segment_bytes: DEFAULT_WAL_SEGMENT_BYTES,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
            max_queue_batches: DEFAULT_MAX_QUEUE_BATCHES,
            max_queue_bytes: DEFAULT_MAX_QUEUE_BYTES,
            writer_nice: 0,
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
    /// The `DEFAULT_*` settings: loopback listeners, one processing slot per core, no auth, no
    /// redaction, the pipeline's defaults for a store at `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        ServerConfig {
            http: DEFAULT_HTTP_ADDR,
            grpc: DEFAULT_GRPC_ADDR,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_inflight_bytes: DEFAULT_MAX_INFLIGHT_BYTES,
            max_converted_bytes: DEFAULT_MAX_CONVERTED_BYTES,
            processing_slots: crate::receive::early_admission::EarlyAdmission::default_slots(),
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECS),
            body_timeout: Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_streams_per_connection: DEFAULT_MAX_STREAMS_PER_CONNECTION,
            auth_token: None,
            redact_content: false,
            stats_interval: Duration::from_secs(DEFAULT_STATS_INTERVAL_SECS),
            retry_after_secs: DEFAULT_RETRY_AFTER_SECS,
            pipeline: PipelineConfig::new(data_dir),
        }
    }
}
