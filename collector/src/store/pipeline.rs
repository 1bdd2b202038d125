//! The write pipeline shared by the network receivers and `tripline ingest`:
//! converted batch -> queue reservation (bounded queue) -> WAL append (+ fsync per policy) -> batcher
//! thread -> Parquet. [`Pipeline::submit`] returns once the batch is as durable as the fsync
//! policy promises, which is when a receiver may acknowledge it.
//!
//! While Parquet writing fails (see [`crate::store::batcher`]) a batch is refused before it is written
//! ([`SubmitError::StorageDegraded`], 503): nothing is acknowledged that cannot be written soon.
//!
//! Start-up order matters for exactly-once: leftover temporary files are removed, the batcher
//! starts, the WAL is opened and every record not yet durable is replayed through the batcher
//! (minus the rows a committed file already covers), and only then are new records accepted.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use arrow::record_batch::RecordBatch;
use schemas::convert::Converted;

use crate::ack_latency::AckStage;
use crate::config::{FsyncPolicy, PipelineConfig};
use crate::store::batcher::{rows_or_quarantine, Batcher, Control, Msg, Queued, Rows, Unwritten};
use crate::store::committed_records::{drop_covered_rows, CommittedRecords};
use crate::store::durable_files::remove_leftover_tmp_files;
use crate::store::queue_reservation::WriterQueue;
use crate::store::wal::checkpoint::Checkpoint;
use crate::store::wal::record::RequestRecord;
use crate::store::wal::{ipc, Wal, WalError};
use crate::telemetry::Stats;
use schemas::layout::WAL_DIR;

/// Why the pipeline could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Wal(#[from] WalError),
    #[error("cannot prepare the data directory {path}: {source}; check it is writable")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot start the parquet writer thread: {0}")]
    Thread(std::io::Error),
    #[error("the parquet writer thread stopped unexpectedly; restart the collector (acknowledged data is in the WAL)")]
    WriterGone,
    #[error("flushing parquet files failed: {0}; the rows stay in the WAL and are retried in the background (and on the next start)")]
    Flush(String),
    /// Stopped with acknowledged records that could not be written to Parquet.
    #[error("could not write WAL records {first_seq}..={last_seq} to parquet ({reason}); they are kept in {wal_dir} until the disk works again")]
    Unwritten {
        wal_dir: String,
        first_seq: u64,
        last_seq: u64,
        reason: String,
    },
}

/// Why a batch was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The queue is full: the client should retry later (429 / RESOURCE_EXHAUSTED).
    #[error("the collector is overloaded ({queued} batches waiting to be written); retry later")]
    Overloaded { queued: usize },
    /// The collector is stopping.
    #[error("the collector is shutting down; retry against a running collector")]
    ShuttingDown,
    /// The batch could not be written to the WAL (a server-side storage problem).
    #[error(transparent)]
    Wal(#[from] WalError),
    #[error(
        "cannot serialise the batch for the WAL: {0}; this is a bug in tripline, please report it"
    )]
    Encode(#[from] arrow::error::ArrowError),
    /// Parquet writing is failing (full disk, i/o errors): new data is refused before it is
    /// acknowledged until the writer has caught up again (503 / UNAVAILABLE with Retry-After).
    #[error("the collector cannot write parquet files right now ({reason}); retry after the Retry-After delay")]
    StorageDegraded { reason: String },
}

/// The running write path of one data directory.
pub struct Pipeline {
    config: PipelineConfig,
    wal: Arc<Wal>,
    tx: Mutex<Option<Sender<Msg>>>,
    queue: Arc<WriterQueue>,
    control: Arc<Control>,
    stats: Arc<Stats>,
    batcher: Mutex<Option<JoinHandle<Result<(), Unwritten>>>>,
    syncer_stop: Arc<AtomicBool>,
    syncer: Mutex<Option<JoinHandle<()>>>,
    replayed_records: u64,
    /// The error of the last WAL append while appends fail (for `/health`).
    wal_failure: Mutex<Option<String>>,
}

impl Pipeline {
    /// Open the store at `config.data_dir`, replay the WAL and start the batcher thread.
    pub fn start(config: PipelineConfig, stats: Arc<Stats>) -> Result<Pipeline, PipelineError> {
        let data_dir = config.data_dir.clone();
        std::fs::create_dir_all(&data_dir).map_err(|source| PipelineError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        let removed =
            remove_leftover_tmp_files(&data_dir).map_err(|source| PipelineError::DataDir {
                path: data_dir.display().to_string(),
                source,
            })?;
        if removed > 0 {
            tracing::info!(
                removed,
                "removed leftover temporary parquet files (their rows are replayed from the WAL)"
            );
        }
        let wal_dir = data_dir.join(WAL_DIR);
        let checkpoint = Checkpoint::load_or_rebuild(&wal_dir, &data_dir)?;
        let (tx, rx) = mpsc::channel::<Msg>();
        let control = Arc::new(Control::default());
        let batcher = Batcher::new(
            config.clone(),
            checkpoint.epoch.clone(),
            Arc::clone(&stats),
            Arc::clone(&control),
        );
        let writer_nice = config.writer_nice;
        // The writer thread lowers its own priority (only a thread can name itself); the open
        // waits for that, so a collector that says it is listening runs its writer at the nice
        // it was given, never briefly at the default.
        let (prioritised_tx, prioritised_rx) = mpsc::sync_channel::<()>(1);
        let handle = std::thread::Builder::new()
            .name("tripline-batcher".into())
            .spawn(move || {
                crate::store::writer_priority::lower_current_thread_priority(writer_nice);
                let _ = prioritised_tx.send(());
                batcher.run(rx)
            })
            .map_err(PipelineError::Thread)?;
        // An Err means the thread ended before it got there; joining it at shutdown reports why.
        let _ = prioritised_rx.recv();

        let queue = WriterQueue::new(config.max_queue_batches, config.max_queue_bytes);
        let mut committed = CommittedRecords::for_store(&config, &checkpoint.epoch);
        let mut replayed = 0u64;
        let mut skipped_rows = 0usize;
        let replay_tx = tx.clone();
        let mut quarantine_failed: Option<std::io::Error> = None;
        let wal = Wal::open(
            &wal_dir,
            config.fsync,
            config.wal_segment_bytes,
            |seq, payload| {
                if quarantine_failed.is_some() {
                    return;
                }
                // Request records are converted here; one that cannot be is quarantined.
                let batch =
                    match rows_or_quarantine(&data_dir, &checkpoint.epoch, seq, &payload, &stats) {
                        Ok(batch) => batch,
                        Err(e) => {
                            quarantine_failed = Some(e);
                            return;
                        }
                    };
                let batch = batch.map(|b| match drop_covered_rows(&b, seq, &mut committed) {
                    Ok((kept, skipped)) => {
                        skipped_rows += skipped;
                        kept
                    }
                    Err(e) => {
                        tracing::error!(seq, error = %e, "replay: cannot filter a WAL record; writing it whole");
                        b
                    }
                });
                // Empty records still go through, so the batcher sees every sequence number.
                let batch = batch.unwrap_or_else(|| RecordBatch::new_empty(schemas::span_schema()));
                replayed += 1;
                // Back-pressure, so replaying a large WAL keeps memory bounded too.
                let reservation = queue.reserve_blocking(payload.len());
                let _ = replay_tx.send(Msg::Batch(Queued {
                    seq,
                    rows: Rows::Ready(batch),
                    received: Instant::now(),
                    reservation,
                }));
            },
        )?;
        drop(replay_tx);
        if let Some(source) = quarantine_failed {
            // Moving past an acknowledged record that is neither converted nor kept would lose
            // it: refuse to start instead.
            return Err(PipelineError::DataDir {
                path: data_dir
                    .join(crate::store::quarantine::QUARANTINE_DIR)
                    .display()
                    .to_string(),
                source,
            });
        }
        if replayed > 0 {
            tracing::info!(
                records = replayed,
                rows_already_in_parquet = skipped_rows,
                "replayed WAL records not yet in parquet"
            );
        }
        let lost: u64 = wal.lost_records().iter().map(|(a, b)| b - a + 1).sum();
        Stats::add(&stats.wal_records_lost, lost);
        let wal = Arc::new(wal);
        stats
            .wal_bytes_on_disk
            .store(wal.bytes_on_disk(), Ordering::Relaxed);
        tx.send(Msg::AttachWal(Arc::clone(&wal)))
            .map_err(|_| PipelineError::WriterGone)?;
        if replayed > 0 {
            // Commit what replay wrote right away, so the WAL is released early.
            let (rtx, rrx) = mpsc::sync_channel(1);
            tx.send(Msg::Flush(rtx))
                .map_err(|_| PipelineError::WriterGone)?;
            let flushed = rrx.recv().map_err(|_| PipelineError::WriterGone)?;
            if let Err(e) = flushed {
                // Degraded: the batcher keeps retrying and new data is refused meanwhile.
                tracing::error!(error = %e, "replayed records could not be written to parquet yet; retrying in the background");
            }
        }

        let syncer_stop = Arc::new(AtomicBool::new(false));
        let syncer = if config.fsync == FsyncPolicy::Interval {
            let wal = Arc::clone(&wal);
            let stop = Arc::clone(&syncer_stop);
            let every = config.fsync_interval;
            Some(
                std::thread::Builder::new()
                    .name("tripline-wal-sync".into())
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(every);
                            if let Err(e) = wal.sync_all() {
                                tracing::error!(error = %e, "wal: periodic fsync failed");
                            }
                        }
                    })
                    .map_err(PipelineError::Thread)?,
            )
        } else {
            None
        };
        Ok(Pipeline {
            queue,
            config,
            wal,
            tx: Mutex::new(Some(tx)),
            control,
            stats,
            batcher: Mutex::new(Some(handle)),
            syncer_stop,
            syncer: Mutex::new(syncer),
            replayed_records: replayed,
            wal_failure: Mutex::new(None),
        })
    }

    /// The store this pipeline writes.
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// Batches acknowledged but not yet taken by the Parquet writer.
    pub fn queued_batches(&self) -> usize {
        self.queue.queued()
    }

    /// True when the queue could not take any batch now (see [`WriterQueue::is_full`]): a request
    /// arriving now is refused before its body is read.
    pub fn is_full(&self) -> bool {
        self.queue.is_full()
    }

    /// True when the queue could take a batch charged `bytes` now (nothing is reserved; see
    /// [`WriterQueue::has_room`]).
    pub fn has_room_for(&self, bytes: usize) -> bool {
        self.queue.has_room(bytes)
    }

    /// Why Parquet writes are failing (full disk, i/o errors), or `None` when they work: new
    /// data is refused with 503 before it is read, until the writer has caught up from the WAL.
    pub fn degraded(&self) -> Option<String> {
        self.control.degraded()
    }

    /// Why the last WAL append failed, or `None` once one has succeeded again. Not used for
    /// admission (the next request is the probe that clears it), only for `/health`.
    pub fn wal_failure(&self) -> Option<String> {
        self.wal_failure.lock().ok().and_then(|f| f.clone())
    }

    /// True while [`Pipeline::degraded`] has a reason.
    pub fn is_degraded(&self) -> bool {
        self.control.degraded().is_some()
    }

    /// WAL records replayed at start.
    pub fn replayed_records(&self) -> u64 {
        self.replayed_records
    }

    /// Accept a converted batch: refuse it if the queue is full, else append it to the WAL,
    /// enqueue it for Parquet and return once it is durable per the fsync policy.
    pub fn submit(&self, converted: &Converted) -> Result<(), SubmitError> {
        self.submit_inner(&converted.batch, false)
    }

    /// Like [`Pipeline::submit`] but waits for room in the queue instead of refusing (imports).
    pub fn submit_wait(&self, converted: &Converted) -> Result<(), SubmitError> {
        self.submit_inner(&converted.batch, true)
    }

    fn submit_inner(&self, batch: &RecordBatch, wait: bool) -> Result<(), SubmitError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.refuse_while_degraded()?;
        let payload = ipc::encode(batch)?;
        let rows = Rows::Ready(batch.clone());
        self.append_durably(&[&payload], payload.len(), wait, rows, || {})
    }

    /// Accept a request as received ([`RequestRecord`]) whose spans were validated but not
    /// converted: refuse it if the queue is full, else append it to the WAL, run `convert` here,
    /// on the calling thread, while the WAL is synced, and return once the record is durable per
    /// the fsync policy (ADR 0004). `reserve_bytes` is the queue charge (the request's estimated
    /// converted size); the rows reach the batcher in WAL order. A failed conversion does not
    /// change the answer: the record is in the WAL, and the batcher converts it again from there.
    pub fn submit_request(
        &self,
        record: &RequestRecord<'_>,
        reserve_bytes: usize,
        convert: impl FnOnce() -> Result<RecordBatch, String>,
    ) -> Result<(), SubmitError> {
        self.refuse_while_degraded()?;
        let header = record.encode_header();
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        // Converted between the append and the fsync, while the decoded request is still in
        // this thread's cache; the batcher waits for the rows in WAL order. Only once appended:
        // a record that failed to append never reaches the batcher.
        self.append_durably(
            &[&header, record.body],
            reserve_bytes,
            false,
            Rows::Pending(done_rx),
            move || {
                #[cfg(feature = "failpoints")]
                fail::fail_point!("convert::after_append", |_| {
                    let _ =
                        done_tx.send(Err("injected fault at convert::after_append".to_string()));
                });
                let converting = Instant::now();
                let rows = convert();
                self.stats
                    .ack
                    .record(AckStage::Convert, converting.elapsed());
                let _ = done_tx.send(rows);
            },
        )
    }

    /// Refused before anything is written: nothing is acknowledged while Parquet fails.
    fn refuse_while_degraded(&self) -> Result<(), SubmitError> {
        match self.control.degraded() {
            Some(reason) => Err(SubmitError::StorageDegraded { reason }),
            None => Ok(()),
        }
    }

    /// The steps every accepted record takes: a queue reservation of `reserve_bytes` (waited
    /// for when `wait`, else refused when full), the WAL append that hands `rows` to the batcher
    /// in WAL order, `appended` (run only when the append succeeded), then the fsync the policy
    /// asks for. Ok means the record may be acknowledged.
    fn append_durably(
        &self,
        parts: &[&[u8]],
        reserve_bytes: usize,
        wait: bool,
        rows: Rows,
        appended: impl FnOnce(),
    ) -> Result<(), SubmitError> {
        let started = Instant::now();
        let reservation = if wait {
            self.queue.reserve_blocking(reserve_bytes)
        } else {
            self.queue.try_reserve(reserve_bytes)
        };
        let Some(reservation) = reservation else {
            return Err(SubmitError::Overloaded {
                queued: self.queue.queued(),
            });
        };
        let tx = self
            .tx
            .lock()
            .map_err(|_| SubmitError::ShuttingDown)?
            .clone()
            .ok_or(SubmitError::ShuttingDown)?;
        let received = Instant::now();
        let (seq, sent) = self
            .wal
            .append_parts(parts, |seq| {
                tx.send(Msg::Batch(Queued {
                    seq,
                    rows,
                    received,
                    reservation: Some(reservation),
                }))
            })
            .map_err(|e| self.wal_failed(e))?;
        self.stats
            .ack
            .record(AckStage::WalAppend, started.elapsed());
        appended();
        let appended_bytes: usize = parts.iter().map(|p| p.len()).sum();
        Stats::add(&self.stats.wal_bytes_appended, appended_bytes as u64);
        self.stats
            .wal_bytes_on_disk
            .store(self.wal.bytes_on_disk(), Ordering::Relaxed);
        let syncing = Instant::now();
        self.wal.commit(seq).map_err(|e| self.wal_failed(e))?;
        self.stats.ack.record(AckStage::WalFsync, syncing.elapsed());
        if let Ok(mut failure) = self.wal_failure.lock() {
            failure.take();
        }
        if sent.is_err() {
            // In the WAL (replayed on the next start) but the writer is gone: do not ack.
            return Err(SubmitError::ShuttingDown);
        }
        Ok(())
    }

    /// Remember a failed WAL append or fsync for `/health`, and hand the error on.
    fn wal_failed(&self, e: WalError) -> SubmitError {
        if let Ok(mut failure) = self.wal_failure.lock() {
            *failure = Some(e.to_string());
        }
        SubmitError::Wal(e)
    }

    /// Commit every open Parquet file now.
    pub fn flush(&self) -> Result<(), PipelineError> {
        let (rtx, rrx) = mpsc::sync_channel(1);
        {
            let guard = self.tx.lock().map_err(|_| PipelineError::WriterGone)?;
            let tx = guard.as_ref().ok_or(PipelineError::WriterGone)?;
            tx.send(Msg::Flush(rtx))
                .map_err(|_| PipelineError::WriterGone)?;
        }
        rrx.recv()
            .map_err(|_| PipelineError::WriterGone)?
            .map_err(PipelineError::Flush)
    }

    /// Stop the batcher from taking batches (the queue fills up and requests get 429). For
    /// tests and for simulating a stalled disk.
    pub fn pause_writer(&self, paused: bool) {
        self.control.set_paused(paused);
    }

    /// Drain the queue, commit every open file, release the WAL and stop the threads.
    pub fn shutdown(&self) -> Result<(), PipelineError> {
        self.control.set_paused(false);
        let stopped = self.stop_threads();
        let synced = self.wal.sync_all();
        self.stats
            .wal_bytes_on_disk
            .store(self.wal.bytes_on_disk(), Ordering::Relaxed);
        stopped?;
        Ok(synced?)
    }

    /// Stop as a crash would: nothing more is written to Parquet, temporary files stay behind,
    /// the WAL keeps everything acknowledged. For durability tests.
    pub fn abort(&self) {
        self.control.abort();
        let _ = self.stop_threads();
    }

    fn stop_threads(&self) -> Result<(), PipelineError> {
        // A request still converting on its thread sends its rows to the batcher, which waits
        // for them in WAL order after its queue closes (or converts the record again from the
        // WAL if that thread is gone).
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        self.syncer_stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.syncer.lock().ok().and_then(|mut s| s.take()) {
            let _ = h.join();
        }
        if let Some(h) = self.batcher.lock().ok().and_then(|mut b| b.take()) {
            let outcome = h.join().map_err(|_| PipelineError::WriterGone)?;
            if let Err(u) = outcome {
                return Err(PipelineError::Unwritten {
                    wal_dir: self.wal.dir().display().to_string(),
                    first_seq: u.first_seq,
                    last_seq: u.last_seq,
                    reason: u.reason,
                });
            }
        }
        Ok(())
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!(error = %e, "pipeline shutdown on drop failed");
        }
    }
}
