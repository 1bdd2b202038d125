//! The OTLP receiver and Parquet span store writer.
//!
//! Data path: receivers ([`http`], [`grpc`]) and the file importer ([`ingest`]) share one
//! [`request`] path into the [`pipeline`]: early [`admission`] (before a body is read) ->
//! decode and convert -> queue reservation ([`backlog`]) -> [`wal`] -> [`batcher`] ->
//! [`parquet_writer`] in the Hive [`layout`]. A request is acknowledged once its batch is in the
//! WAL; Parquet is written off the request path and the WAL is replayed, exactly once, on start.

pub mod admission;
pub mod auth;
pub mod backlog;
pub mod batcher;
pub mod cli;
pub mod config;
pub mod coverage;
pub mod forward;
pub mod grpc;
pub mod http;
pub mod ingest;
pub mod layout;
pub mod limits;
pub mod lock;
pub mod otlp_response;
pub mod parquet_writer;
pub mod pipeline;
pub mod request;
pub mod server;
pub mod shutdown;
pub mod telemetry;
pub mod verify;
pub mod wal;

pub use config::{FsyncPolicy, PipelineConfig, ServerConfig};
pub use ingest::{ingest_into, ingest_paths, Destination, IngestOptions, IngestSummary};
pub use pipeline::Pipeline;
pub use server::Server;
pub use telemetry::Stats;
