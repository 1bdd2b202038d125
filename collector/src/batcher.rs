//! The batcher: one thread that takes acknowledged batches off the queue in WAL order, splits
//! them by Hive partition, appends them to one open Parquet file per partition and commits files
//! when they reach their size or age bound. After every commit it tells the WAL how far
//! everything is durable, which releases WAL segments.
//!
//! Why one thread: WAL order in, one writer per partition, no locks around `ArrowWriter`; the
//! request path never waits for Parquet. The release watermark is the lowest WAL sequence number
//! still in an open (or failed) file, or the next expected one if no file is open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{Array, Int64Array, TimestampMicrosecondArray, UInt32Array};
use arrow::record_batch::RecordBatch;
use schemas::schema::col;

use crate::backlog::Reservation;
use crate::config::PipelineConfig;
use crate::layout::Partition;
use crate::parquet_writer::{PartFile, RowGroupLimits, StoreError};
use crate::telemetry::Stats;
use crate::wal::Wal;

/// One acknowledged (or replayed) WAL record on its way to Parquet.
pub struct Queued {
    pub seq: u64,
    pub batch: RecordBatch,
    pub received: Instant,
    /// Freed once the batch is in a Parquet writer.
    pub reservation: Option<Reservation>,
}

/// Messages to the batcher thread.
pub enum Msg {
    Batch(Queued),
    /// The WAL is open: from now on release segments after commits.
    AttachWal(Arc<Wal>),
    /// Commit every open file now, then answer.
    Flush(SyncSender<Result<(), String>>),
}

/// Pause / abort switches shared with the pipeline (abort simulates a crash in tests).
#[derive(Default)]
pub struct Control {
    paused: Mutex<bool>,
    changed: Condvar,
    aborted: AtomicBool,
}

impl Control {
    pub fn set_paused(&self, paused: bool) {
        if let Ok(mut p) = self.paused.lock() {
            *p = paused;
        }
        self.changed.notify_all();
    }

    pub fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.changed.notify_all();
    }

    fn aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    fn wait_while_paused(&self) {
        let Ok(mut p) = self.paused.lock() else {
            return;
        };
        while *p && !self.aborted() {
            match self.changed.wait(p) {
                Ok(g) => p = g,
                Err(_) => return,
            }
        }
    }
}

pub struct Batcher {
    config: PipelineConfig,
    epoch: String,
    wal: Option<Arc<Wal>>,
    stats: Arc<Stats>,
    open: HashMap<Partition, PartFile>,
    /// Lowest sequence number whose rows could not be written (kept in the WAL until restart).
    failed_below: Option<u64>,
    next_expected: Option<u64>,
}

impl Batcher {
    pub fn new(config: PipelineConfig, epoch: String, stats: Arc<Stats>) -> Batcher {
        Batcher {
            config,
            epoch,
            wal: None,
            stats,
            open: HashMap::new(),
            failed_below: None,
            next_expected: None,
        }
    }

    /// The thread body: runs until the queue is closed (then commits everything) or until
    /// aborted (then leaves temporary files behind, as a crash would).
    pub fn run(mut self, rx: Receiver<Msg>, control: Arc<Control>) {
        let tick = Duration::from_millis(200).min(self.config.max_file_age);
        loop {
            control.wait_while_paused();
            if control.aborted() {
                return;
            }
            match rx.recv_timeout(tick) {
                Ok(Msg::Batch(q)) => {
                    // A pause that came while waiting holds this batch (and its queue slot).
                    control.wait_while_paused();
                    if control.aborted() {
                        return;
                    }
                    self.write(q);
                }
                Ok(Msg::AttachWal(wal)) => self.wal = Some(wal),
                Ok(Msg::Flush(reply)) => {
                    let result = self.commit_all();
                    self.update_lag();
                    let _ = reply.send(result.map_err(|e| e.to_string()));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if control.aborted() {
                        return;
                    }
                    if let Err(e) = self.commit_all() {
                        tracing::error!(error = %e, "batcher: final commit failed; rows stay in the WAL");
                    }
                    self.update_lag();
                    return;
                }
            }
            self.roll_due();
            self.update_lag();
        }
    }

    fn write(&mut self, q: Queued) {
        let Queued {
            seq,
            batch,
            received,
            reservation,
        } = q;
        self.next_expected = Some(seq + 1);
        if batch.num_rows() > 0 {
            match split_by_partition(&batch) {
                Ok(parts) => {
                    for (partition, rows) in parts {
                        if let Err(e) = self.write_partition(partition, &rows, seq, received) {
                            self.fail(partition, seq, &e);
                        }
                    }
                }
                Err(e) => {
                    tracing::error!(seq, error = %e, "batcher: cannot split batch; it stays in the WAL");
                    self.failed_below = Some(self.failed_below.map_or(seq, |f| f.min(seq)));
                }
            }
        }
        drop(reservation);
    }

    fn write_partition(
        &mut self,
        partition: Partition,
        rows: &RecordBatch,
        seq: u64,
        received: Instant,
    ) -> Result<(), StoreError> {
        let limits = RowGroupLimits {
            rows: self.config.row_group_rows,
            bytes: self.config.row_group_bytes,
        };
        if !self.open.contains_key(&partition) {
            let f = PartFile::create(&self.config.data_dir, partition, seq, received)?;
            self.open.insert(partition, f);
        }
        let Some(file) = self.open.get_mut(&partition) else {
            return Ok(());
        };
        file.write(rows, seq, limits)?;
        if file.size_estimate() >= self.config.max_file_bytes {
            self.commit(partition)?;
        }
        Ok(())
    }

    /// A write failed: drop the file (its rows stay in the WAL, replayed on the next start) and
    /// hold the release watermark below its first record.
    fn fail(&mut self, partition: Partition, seq: u64, e: &StoreError) {
        Stats::add(&self.stats.write_errors, 1);
        let first = match self.open.remove(&partition) {
            Some(f) => {
                let first = f.first_seq;
                f.discard();
                first
            }
            None => seq,
        };
        self.failed_below = Some(self.failed_below.map_or(first, |f| f.min(first)));
        tracing::error!(error = %e, partition = %partition.relative_dir().display(), first_seq = first, "batcher: parquet write failed; rows kept in the WAL for the next start");
    }

    fn commit(&mut self, partition: Partition) -> Result<(), StoreError> {
        let Some(file) = self.open.remove(&partition) else {
            return Ok(());
        };
        let rows = file.rows;
        let first = file.first_seq;
        match file.commit(&self.epoch) {
            Ok(path) => {
                Stats::add(&self.stats.files_committed, 1);
                Stats::add(&self.stats.rows_committed, rows);
                tracing::debug!(file = %path.display(), rows, "batcher: committed part file");
                self.release();
                Ok(())
            }
            Err(e) => {
                Stats::add(&self.stats.write_errors, 1);
                self.failed_below = Some(self.failed_below.map_or(first, |f| f.min(first)));
                Err(e)
            }
        }
    }

    fn commit_all(&mut self) -> Result<(), StoreError> {
        let partitions: Vec<Partition> = self.open.keys().copied().collect();
        let mut first_err = None;
        for p in partitions {
            if let Err(e) = self.commit(p) {
                tracing::error!(error = %e, "batcher: commit failed; rows stay in the WAL");
                first_err.get_or_insert(e);
            }
        }
        self.release();
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn roll_due(&mut self) {
        let max_age = self.config.max_file_age;
        let due: Vec<Partition> = self
            .open
            .iter()
            .filter(|(_, f)| f.opened.elapsed() >= max_age)
            .map(|(p, _)| *p)
            .collect();
        for p in due {
            if let Err(e) = self.commit(p) {
                tracing::error!(error = %e, "batcher: commit failed; rows stay in the WAL");
            }
        }
    }

    /// Everything below the watermark is in committed files: let the WAL drop it.
    fn release(&mut self) {
        let Some(wal) = &self.wal else { return };
        let Some(next) = self.next_expected else {
            return;
        };
        let mut watermark = next;
        for f in self.open.values() {
            watermark = watermark.min(f.first_seq);
        }
        if let Some(failed) = self.failed_below {
            watermark = watermark.min(failed);
        }
        if let Err(e) = wal.release_below(watermark) {
            tracing::error!(error = %e, "batcher: cannot advance the WAL checkpoint");
        }
        self.stats
            .wal_bytes_on_disk
            .store(wal.bytes_on_disk(), Ordering::Relaxed);
    }

    fn update_lag(&self) {
        let lag = self
            .open
            .values()
            .map(|f| f.oldest_row.elapsed())
            .max()
            .unwrap_or_default();
        self.stats
            .flush_lag_ms
            .store(lag.as_millis() as u64, Ordering::Relaxed);
    }
}

/// The partition of every row: from the span's start time, falling back to the receive time
/// for a span without one.
pub fn row_partitions(batch: &RecordBatch) -> Vec<Partition> {
    let start = batch
        .column_by_name(col::START_TIME_UNIX_NANO)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>());
    let received = batch
        .column_by_name(col::RECEIVED_AT)
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>());
    (0..batch.num_rows())
        .map(|i| {
            let nanos = match start {
                Some(a) if a.is_valid(i) && a.value(i) > 0 => a.value(i),
                _ => match received {
                    Some(r) if r.is_valid(i) => r.value(i).saturating_mul(1000),
                    _ => 0,
                },
            };
            Partition::of_unix_nanos(nanos)
        })
        .collect()
}

/// Split a batch into one batch per partition, in first-seen order.
pub fn split_by_partition(
    batch: &RecordBatch,
) -> Result<Vec<(Partition, RecordBatch)>, arrow::error::ArrowError> {
    let parts = row_partitions(batch);
    let Some(first) = parts.first().copied() else {
        return Ok(Vec::new());
    };
    if parts.iter().all(|p| *p == first) {
        return Ok(vec![(first, batch.clone())]);
    }
    let mut order: Vec<Partition> = Vec::new();
    let mut indices: HashMap<Partition, Vec<u32>> = HashMap::new();
    for (i, p) in parts.iter().enumerate() {
        let e = indices.entry(*p).or_insert_with(|| {
            order.push(*p);
            Vec::new()
        });
        e.push(i as u32);
    }
    order
        .into_iter()
        .map(|p| {
            let idx = UInt32Array::from(indices.remove(&p).unwrap_or_default());
            arrow::compute::take_record_batch(batch, &idx).map(|b| (p, b))
        })
        .collect()
}
