//! The batcher: one thread that takes acknowledged batches off the queue in WAL order, splits
//! them by Hive partition, appends them to one open Parquet file per partition and commits files
//! when they reach their size or age bound, or when more than `max_open_files` partitions are
//! open (the least recently written is committed first). After every commit it tells the WAL how
//! far everything is durable, which releases WAL segments.
//!
//! Why one thread: WAL order in, one writer per partition, no locks around `ArrowWriter`; the
//! request path never waits for Parquet. The release watermark is the lowest WAL sequence number
//! still in an open (or failed) file, or the next expected one if no file is open.
//!
//! When writing or committing fails (a full disk, an i/o error), the batcher is *degraded*: it
//! discards its open files (their rows are in the WAL), the pipeline refuses new data (503) and
//! the batcher retries with backoff (100 ms doubling to 5 s) by reading the records from the
//! failed one on back from the WAL, dropping rows a committed file already holds, and writing
//! the rest. It recovers on its own once the disk works again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{Array, Int64Array, TimestampMicrosecondArray, UInt32Array};
use arrow::record_batch::RecordBatch;
use schemas::schema::col;

use crate::config::PipelineConfig;
use crate::store::committed_records::{drop_covered_rows, CommittedRecords};
use crate::store::part_file::{PartFile, RowGroupLimits, StoreError};
use crate::store::queue_reservation::Reservation;
use crate::store::wal::{record, Wal};
use crate::telemetry::Stats;
use schemas::layout::{Partition, Table};

/// First and longest wait between two attempts to write failed rows again.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// One acknowledged (or replayed) WAL record on its way to Parquet.
pub struct Queued {
    pub seq: u64,
    pub rows: Rows,
    pub received: Instant,
    /// Freed once the batch is in a Parquet writer.
    pub reservation: Option<Reservation>,
}

/// The rows of a queued record: converted already, or being converted on its request thread
/// between the WAL append and the fsync ([`crate::store::pipeline::Pipeline::submit_request`]).
pub enum Rows {
    Ready(RecordBatch),
    /// The request thread sends the rows, or why it could not convert them.
    Pending(Receiver<Result<RecordBatch, String>>),
}

/// Messages to the batcher thread.
pub enum Msg {
    Batch(Queued),
    /// The WAL is open: from now on release segments after commits.
    AttachWal(Arc<Wal>),
    /// Commit every open file now, then answer.
    Flush(SyncSender<Result<(), String>>),
}

/// Acknowledged WAL records the batcher could not write to Parquet before it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwritten {
    pub first_seq: u64,
    pub last_seq: u64,
    pub reason: String,
}

/// Pause / abort switches shared with the pipeline (abort simulates a crash in tests), and the
/// degraded flag the pipeline reads before accepting a batch.
#[derive(Default)]
pub struct Control {
    paused: Mutex<bool>,
    changed: Condvar,
    aborted: AtomicBool,
    degraded: AtomicBool,
    /// Why, while degraded.
    failure: Mutex<String>,
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

    /// Why Parquet writing is failing, or `None` when it works (new data is refused meanwhile).
    pub fn degraded(&self) -> Option<String> {
        if !self.degraded.load(Ordering::SeqCst) {
            return None;
        }
        Some(self.failure.lock().map(|f| f.clone()).unwrap_or_default())
    }

    fn set_degraded(&self, failure: Option<&str>) {
        if let Ok(mut f) = self.failure.lock() {
            *f = failure.unwrap_or_default().to_string();
        }
        self.degraded.store(failure.is_some(), Ordering::SeqCst);
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
    control: Arc<Control>,
    open: HashMap<Partition, PartFile>,
    /// Counts writes, to find the least recently written open file.
    writes: u64,
    /// Degraded: every record from this sequence number on is rewritten from the WAL.
    failed_below: Option<u64>,
    /// Why the last attempt failed (for the report at shutdown).
    failure: String,
    retry_delay: Duration,
    retry_at: Instant,
    next_expected: Option<u64>,
}

impl Batcher {
    pub fn new(
        config: PipelineConfig,
        epoch: String,
        stats: Arc<Stats>,
        control: Arc<Control>,
    ) -> Batcher {
        Batcher {
            config,
            epoch,
            wal: None,
            stats,
            control,
            open: HashMap::new(),
            writes: 0,
            failed_below: None,
            failure: String::new(),
            retry_delay: RETRY_FIRST,
            retry_at: Instant::now(),
            next_expected: None,
        }
    }

    /// The thread body: runs until the queue is closed (then commits everything, and reports
    /// the records it could not write) or until aborted (then leaves temporary files behind, as
    /// a crash would).
    pub fn run(mut self, rx: Receiver<Msg>) -> Result<(), Unwritten> {
        let control = Arc::clone(&self.control);
        let tick = Duration::from_millis(200).min(self.config.max_file_age);
        loop {
            control.wait_while_paused();
            if control.aborted() {
                return Ok(());
            }
            let wait = match self.failed_below {
                Some(_) => tick.min(self.retry_at.saturating_duration_since(Instant::now())),
                None => tick,
            };
            match rx.recv_timeout(wait) {
                Ok(Msg::Batch(q)) => {
                    // A pause that came while waiting holds this batch (and its queue slot).
                    control.wait_while_paused();
                    if control.aborted() {
                        return Ok(());
                    }
                    self.write(q);
                }
                Ok(Msg::AttachWal(wal)) => self.wal = Some(wal),
                Ok(Msg::Flush(reply)) => {
                    let _ = self.commit_all();
                    let result = self.retry_now();
                    self.update_lag();
                    let _ = reply.send(result);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if control.aborted() {
                        return Ok(());
                    }
                    let _ = self.commit_all();
                    let result = self.retry_now();
                    self.update_lag();
                    return match (result, self.failed_below, self.next_expected) {
                        (Err(reason), Some(first), Some(next)) if next > first => Err(Unwritten {
                            first_seq: first,
                            last_seq: next - 1,
                            reason,
                        }),
                        _ => Ok(()),
                    };
                }
            }
            if self.failed_below.is_some() {
                if Instant::now() >= self.retry_at {
                    let _ = self.retry_now();
                }
            } else {
                self.roll_due();
            }
            self.update_lag();
        }
    }

    fn write(&mut self, q: Queued) {
        let Queued {
            seq,
            rows,
            received,
            reservation,
        } = q;
        self.next_expected = Some(seq + 1);
        let batch = match rows {
            Rows::Ready(batch) => Ok(batch),
            Rows::Pending(rx) => rx.recv().unwrap_or_else(|_| {
                Err("the request thread stopped before sending the rows".to_string())
            }),
        };
        // Degraded: the record is in the WAL, and the retry reads it from there.
        if self.failed_below.is_none() {
            let written = match batch {
                Ok(batch) => self.write_record(seq, &batch, received),
                Err(reason) => self.unconverted(seq, &reason),
            };
            if let Err(e) = written {
                self.degrade(Some(seq), &e);
            }
        }
        drop(reservation);
    }

    /// The request thread could not convert acknowledged record `seq`: convert it again from the WAL
    /// (whatever failed may not fail twice), else keep it in the quarantine directory. An error
    /// (no WAL yet, the WAL or the quarantine cannot be read or written) degrades the batcher,
    /// whose retry reads the record from the WAL again.
    fn unconverted(&mut self, seq: u64, reason: &str) -> Result<(), StoreError> {
        tracing::warn!(
            seq,
            reason,
            "batcher: an acknowledged request was not converted; converting it again from the WAL"
        );
        let Some(wal) = self.wal.clone() else {
            return Err(StoreError::Retry(format!(
                "WAL record {seq} was not converted ({reason})"
            )));
        };
        let mut result: Result<(), StoreError> = Ok(());
        let mut found = false;
        wal.read_records(seq, seq + 1, |seq, payload| {
            found = true;
            result = self.rows_of(seq, payload).and_then(|rows| match rows {
                Some(rows) => self.write_record(seq, &rows, Instant::now()),
                None => Ok(()),
            });
        })
        .map_err(|e| StoreError::Retry(e.to_string()))?;
        if !found {
            return Err(StoreError::Retry(format!(
                "WAL record {seq} was not converted ({reason}) and cannot be read back"
            )));
        }
        result
    }

    /// The rows of a WAL record read back from the WAL. A request record that cannot be
    /// converted is kept in the quarantine directory (`Ok(None)`); an unreadable IPC record is
    /// skipped with an error, as it always was (its CRC passed, so it was written that way).
    fn rows_of(&self, seq: u64, payload: &[u8]) -> Result<Option<RecordBatch>, StoreError> {
        rows_or_quarantine(
            &self.config.data_dir,
            &self.epoch,
            seq,
            payload,
            &self.stats,
        )
        .map_err(|e| StoreError::Retry(format!("cannot quarantine WAL record {seq}: {e}")))
    }

    fn write_record(
        &mut self,
        seq: u64,
        batch: &RecordBatch,
        received: Instant,
    ) -> Result<(), StoreError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        for (partition, rows) in split_by_partition(batch)? {
            self.write_partition(partition, &rows, seq, received)?;
        }
        Ok(())
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
            while self.open.len() >= self.config.max_open_files.max(1) {
                let lru = self
                    .open
                    .iter()
                    .min_by_key(|(_, f)| f.last_write)
                    .map(|(p, _)| *p);
                match lru {
                    Some(p) => self.commit(p)?,
                    None => break,
                }
            }
            let f = PartFile::create(&self.config.data_dir, partition, seq, received)?;
            self.open.insert(partition, f);
        }
        self.writes += 1;
        let writes = self.writes;
        let Some(file) = self.open.get_mut(&partition) else {
            return Ok(());
        };
        file.last_write = writes;
        file.write(rows, seq, limits)?;
        if file.size_estimate() >= self.config.max_file_bytes {
            self.commit(partition)?;
        }
        Ok(())
    }

    /// Writing failed: discard every open file (their rows are in the WAL), hold the release
    /// watermark below the first record they held, refuse new data and retry with backoff.
    fn degrade(&mut self, seq: Option<u64>, e: &StoreError) {
        Stats::add(&self.stats.write_errors, 1);
        let mut first = self.failed_below.into_iter().chain(seq).min();
        for (_, f) in self.open.drain() {
            first = Some(first.map_or(f.first_seq, |x| x.min(f.first_seq)));
            f.discard();
        }
        let Some(first) = first else { return };
        let newly = self.failed_below.is_none();
        self.failed_below = Some(first);
        self.failure = e.to_string();
        if newly {
            self.retry_delay = RETRY_FIRST;
            tracing::error!(error = %e, first_seq = first, "batcher: parquet write failed; new data is refused until it works again, rows from this WAL record on are rewritten from the WAL");
        } else {
            self.retry_delay = (self.retry_delay * 2).min(RETRY_MAX);
            tracing::warn!(error = %e, first_seq = first, retry_in_ms = self.retry_delay.as_millis() as u64, "batcher: parquet write still failing");
        }
        self.retry_at = Instant::now() + self.retry_delay;
        self.control.set_degraded(Some(&self.failure));
        self.stats.storage_degraded.store(1, Ordering::Relaxed);
    }

    /// Degraded: write the records from the failed one on again, read back from the WAL,
    /// without the rows a committed file already holds. Ok once nothing is left to rewrite.
    fn retry_now(&mut self) -> Result<(), String> {
        let Some(from) = self.failed_below else {
            return Ok(());
        };
        let Some(wal) = self.wal.clone() else {
            return Err(self.failure.clone());
        };
        Stats::add(&self.stats.storage_retries, 1);
        let to = self.next_expected.unwrap_or(from);
        let mut committed = CommittedRecords::for_store(&self.config, &self.epoch);
        let mut result: Result<(), StoreError> = Ok(());
        let mut records = 0u64;
        let read = wal.read_records(from, to, |seq, payload| {
            if result.is_err() {
                return;
            }
            let batch = match self.rows_of(seq, payload) {
                Ok(Some(b)) => b,
                Ok(None) => return,
                Err(e) => {
                    result = Err(e);
                    return;
                }
            };
            records += 1;
            result = drop_covered_rows(&batch, seq, &mut committed)
                .map_err(StoreError::from)
                .and_then(|(rows, _)| self.write_record(seq, &rows, Instant::now()));
        });
        let result = match read {
            Err(e) => Err(e.to_string()),
            Ok(()) => result
                .and_then(|()| self.commit_open())
                .map_err(|e| e.to_string()),
        };
        match result {
            Ok(()) => {
                self.failed_below = None;
                self.failure.clear();
                self.control.set_degraded(None);
                self.stats.storage_degraded.store(0, Ordering::Relaxed);
                tracing::info!(
                    records,
                    first_seq = from,
                    "batcher: parquet writing works again; failed rows rewritten from the WAL"
                );
                self.release();
                Ok(())
            }
            Err(reason) => {
                self.degrade(None, &StoreError::Retry(reason.clone()));
                Err(reason)
            }
        }
    }

    fn commit(&mut self, partition: Partition) -> Result<(), StoreError> {
        let Some(file) = self.open.remove(&partition) else {
            return Ok(());
        };
        let rows = file.rows;
        let first = file.first_seq;
        let started = Instant::now();
        match file.commit(&self.epoch, self.config.remote.as_ref()) {
            Ok(path) => {
                Stats::add(&self.stats.files_committed, 1);
                Stats::add(&self.stats.rows_committed, rows);
                Stats::add(
                    &self.stats.commit_micros,
                    started.elapsed().as_micros() as u64,
                );
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                self.stats
                    .last_commit_unix_ms
                    .store(now_ms, Ordering::Relaxed);
                tracing::debug!(file = %path.display(), rows, "batcher: committed part file");
                self.release();
                Ok(())
            }
            Err(e) => {
                self.failed_below = Some(self.failed_below.map_or(first, |f| f.min(first)));
                Err(e)
            }
        }
    }

    /// Commit every open file; the first failure stops it (the caller degrades).
    fn commit_open(&mut self) -> Result<(), StoreError> {
        let partitions: Vec<Partition> = self.open.keys().copied().collect();
        for p in partitions {
            self.commit(p)?;
        }
        Ok(())
    }

    fn commit_all(&mut self) -> Result<(), String> {
        if let Err(e) = self.commit_open() {
            self.degrade(None, &e);
        }
        self.release();
        match self.failed_below {
            Some(_) => Err(self.failure.clone()),
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
                self.degrade(None, &e);
                return;
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
            tracing::error!(error = %e, "batcher: cannot advance the WAL checkpoint (retried after the next commit)");
        }
        self.stats
            .wal_bytes_on_disk
            .store(wal.bytes_on_disk(), Ordering::Relaxed);
    }

    fn update_lag(&self) {
        self.stats
            .open_part_files
            .store(self.open.len() as u64, Ordering::Relaxed);
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
///
/// Policy for start times far from receipt: a span that claims to start more than
/// [`MAX_FUTURE_SKEW_NANOS`] (24 h) after the collector received it is filed under the hour it
/// was received (its `start_time_unix_nano` column keeps the claimed value). A broken clock or a
/// hostile client could otherwise spread one request over thousands of future hours. Past start
/// times are kept as they are: importing recorded traces is normal, and the open-file cap
/// (`max_open_files`) bounds what a spread of old hours costs.
///
/// Log record batches ([`schemas::logs::is_log_schema`]) go to the `logs/` table, by the
/// record's time (else its observed time, else the receive time), under the same policy.
pub fn row_partitions(batch: &RecordBatch) -> Vec<Partition> {
    let is_logs = schemas::logs::is_log_schema(&batch.schema());
    let table = if is_logs { Table::Logs } else { Table::Spans };
    let int64 = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
    };
    let (start, fallback) = if is_logs {
        (
            int64(schemas::logs::schema::col::TIME_UNIX_NANO),
            int64(schemas::logs::schema::col::OBSERVED_TIME_UNIX_NANO),
        )
    } else {
        (int64(col::START_TIME_UNIX_NANO), None)
    };
    let received = batch
        .column_by_name(col::RECEIVED_AT)
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>());
    (0..batch.num_rows())
        .map(|i| {
            let received_nanos = match received {
                Some(r) if r.is_valid(i) => Some(r.value(i).saturating_mul(1000)),
                _ => None,
            };
            let claimed = match (start, fallback) {
                (Some(a), _) if a.is_valid(i) && a.value(i) > 0 => Some(a),
                (_, Some(o)) if o.is_valid(i) && o.value(i) > 0 => Some(o),
                (a, _) => a,
            };
            let nanos = match (claimed, received_nanos) {
                (Some(a), Some(r))
                    if a.is_valid(i)
                        && a.value(i) > 0
                        && a.value(i).saturating_sub(r) > MAX_FUTURE_SKEW_NANOS =>
                {
                    r
                }
                (Some(a), _) if a.is_valid(i) && a.value(i) > 0 => a.value(i),
                (_, r) => r.unwrap_or(0),
            };
            Partition::of_unix_nanos(nanos).in_table(table)
        })
        .collect()
}

/// How far after its receipt a span's start time may lie and still choose its partition.
pub const MAX_FUTURE_SKEW_NANOS: i64 = 24 * 3600 * 1_000_000_000;

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

/// The rows of WAL record `seq` (`payload`), for replay and retries: `Ok(None)` when it holds
/// none, or when it is a request record that cannot be converted, which is then kept in the
/// quarantine directory ([`crate::store::quarantine`]) and counted. An unreadable IPC record is
/// logged and skipped. `Err` only when the quarantine file cannot be written: the caller must
/// not move past the record then.
pub fn rows_or_quarantine(
    data_dir: &std::path::Path,
    epoch: &str,
    seq: u64,
    payload: &[u8],
    stats: &Stats,
) -> std::io::Result<Option<RecordBatch>> {
    match record::decode_one(payload) {
        Ok(rows) => Ok(rows),
        Err(e) if record::is_request(payload) => {
            let path = crate::store::quarantine::keep(data_dir, epoch, seq, payload)?;
            Stats::add(&stats.records_quarantined, 1);
            tracing::error!(seq, error = %e, file = %path.display(), "an acknowledged request cannot be converted into rows; it is kept whole in the quarantine file (re-import it with `tripline ingest` once fixed) and the WAL moves past it; please report this as a tripline bug");
            Ok(None)
        }
        Err(e) => {
            tracing::error!(seq, error = %e, "WAL record is not a readable batch; skipped");
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::ArrayRef;
    use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

    use super::*;

    fn batch(starts: Vec<i64>, received_micros: i64) -> RecordBatch {
        let n = starts.len();
        let schema = Schema::new(vec![
            Field::new(col::START_TIME_UNIX_NANO, DataType::Int64, true),
            Field::new(
                col::RECEIVED_AT,
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(starts)),
            Arc::new(
                TimestampMicrosecondArray::from(vec![received_micros; n]).with_timezone("UTC"),
            ),
        ];
        RecordBatch::try_new(Arc::new(schema), columns).unwrap()
    }

    #[test]
    fn far_future_start_times_are_filed_under_the_receipt_hour() {
        let hour = 3_600_000_000_000i64;
        let received = 1_796_007_845_000_000i64; // 2026-11-30T03:04:05Z in microseconds
        let received_nanos = received * 1000;
        let starts = vec![
            received_nanos - 5000 * hour, // old: a recorded trace, kept
            received_nanos + hour,        // an hour of clock skew, kept
            received_nanos + 2500 * hour, // far future: receipt hour
            0,                            // no start time: receipt hour
        ];
        let parts = row_partitions(&batch(starts, received));
        let at = Partition::of_unix_nanos;
        assert_eq!(parts[0], at(received_nanos - 5000 * hour));
        assert_eq!(parts[1], at(received_nanos + hour));
        assert_eq!(parts[2], at(received_nanos));
        assert_eq!(parts[3], at(received_nanos));
    }
}
