//! The OTLP receiver and Parquet span store writer.
//!
//! Two halves, one folder each:
//! - [`receive`]: the network side. The OTLP/HTTP and OTLP/gRPC receivers share one request path
//!   ([`receive::request`]): auth, early admission before a body is read
//!   ([`receive::early_admission`]), capped decompression ([`receive::decompress`]), decode and
//!   convert, and the answer in the request's encoding ([`receive::otlp_wire`]).
//! - [`store`]: the data directory. [`store::pipeline`] takes a converted batch, reserves room
//!   in the queue to the Parquet writer ([`store::queue_reservation`]), appends it to the
//!   [`store::wal`] and returns once it is durable; the [`store::batcher`] thread writes
//!   [`store::part_file`]s in the store layout ([`schemas::layout`]). On start the WAL is replayed
//!   exactly once ([`store::committed_records`]). One writer per directory ([`store::lock`]);
//!   [`store::verify`] checks a store read-only.
//!
//! Around them: [`server`] runs both receivers over one pipeline (`tripline collect`), [`ingest`]
//! imports recorded exports through the same pipeline or a running collector (`tripline
//! ingest`), [`cli`] maps both to exit codes, [`config`] holds every setting and its default,
//! [`telemetry`] counts ([`ack_latency`]: where an acknowledgement's time goes), [`signals`] waits for the signal to stop, [`process`] logs and words errors for both
//! binaries (`tripline`, and `tripline-collector`: the collector alone).
//!
//! A request is acknowledged once its batch is in the WAL; Parquet is written off the request
//! path.

pub mod ack_latency;
pub mod allocator;
pub mod cli;
pub mod config;
pub mod ingest;
pub mod memory_limit;
pub mod process;
pub mod receive;
pub mod server;
pub mod signals;
pub mod store;
pub mod telemetry;

pub use config::{FsyncPolicy, PipelineConfig, ServerConfig};
pub use ingest::{ingest_into, ingest_paths, Destination, IngestOptions, IngestSummary};
pub use server::Server;
pub use store::pipeline::Pipeline;
pub use telemetry::Stats;
