//! The write side of a data directory: from a converted batch to committed Parquet part files,
//! with nothing acknowledged ever lost.
//!
//! [`pipeline`] is the entry: it reserves room in the bounded queue to the writer
//! ([`queue_reservation`]; refused with 429 when full), appends to the write-ahead log ([`wal`])
//! and returns once the batch is durable, which is when a receiver acknowledges it. The
//! [`batcher`] thread then writes each partition's rows into one open [`part_file`], committed
//! by the steps in [`durable_files`] (at a lower CPU priority than the request path if asked:
//! [`writer_priority`]). Each part file records which WAL records it holds, so
//! replay after a crash skips rows already committed ([`committed_records`]). [`lock`] keeps one
//! writer per directory; [`verify`] checks a store without changing it. Paths and file names are
//! the store layout, [`schemas::layout`]. Trace requests are written to the WAL as received
//! (ADR 0003) and converted on their request thread while the WAL is synced (ADR 0004); one that
//! cannot be converted is kept whole by [`quarantine`]. With `--data-dir s3://…` finished part files
//! are uploaded to object storage ([`remote`]) and the WAL stays on a local disk.

pub mod batcher;
pub mod committed_records;
pub mod durable_files;
pub mod lock;
pub mod part_file;
pub mod pipeline;
pub mod quarantine;
pub mod queue_reservation;
pub mod remote;
pub mod verify;
pub mod wal;
pub mod writer_priority;
