//! The queue reservation: a converted batch gets a place in the bounded queue to the Parquet
//! writer *before* anything is written to the WAL; without one it is refused (429 /
//! RESOURCE_EXHAUSTED with `Retry-After`; `tripline ingest` waits instead). The reservation is
//! released when the writer has taken the batch, so memory between the receivers and the writer
//! stays bounded by batches and bytes.
//!
//! This is the second gate a request passes. The first, early admission
//! ([`crate::receive::early_admission`]), runs before the body is even read and bounds the bytes
//! of bodies in flight and the requests being converted; this one bounds what is converted and
//! waiting to be written.

use std::sync::{Arc, Condvar, Mutex};

#[derive(Debug, Default)]
struct Used {
    batches: usize,
    bytes: usize,
}

/// The bounded queue between the request path and the batcher.
#[derive(Debug)]
pub struct WriterQueue {
    used: Mutex<Used>,
    freed: Condvar,
    max_batches: usize,
    max_bytes: usize,
}

/// A slot in the queue; dropping it frees the slot.
#[derive(Debug)]
pub struct Reservation {
    queue: Arc<WriterQueue>,
    bytes: usize,
}

impl WriterQueue {
    pub fn new(max_batches: usize, max_bytes: usize) -> Arc<WriterQueue> {
        Arc::new(WriterQueue {
            used: Mutex::new(Used::default()),
            freed: Condvar::new(),
            max_batches,
            max_bytes,
        })
    }

    fn fits(&self, used: &Used, bytes: usize) -> bool {
        // One batch larger than the byte budget is still admitted into an empty queue, so a
        // request within the body cap can always eventually pass.
        used.batches < self.max_batches
            && (used.batches == 0 || used.bytes + bytes <= self.max_bytes)
    }

    /// Reserve room for a batch of `bytes`, or `None` when the queue is full.
    pub fn try_reserve(self: &Arc<Self>, bytes: usize) -> Option<Reservation> {
        let mut used = self.used.lock().ok()?;
        if !self.fits(&used, bytes) {
            return None;
        }
        used.batches += 1;
        used.bytes += bytes;
        Some(Reservation {
            queue: Arc::clone(self),
            bytes,
        })
    }

    /// Reserve, waiting for room (file import: back-pressure instead of refusal).
    /// `None` only if the lock was poisoned or the queue admits nothing at all.
    pub fn reserve_blocking(self: &Arc<Self>, bytes: usize) -> Option<Reservation> {
        if self.max_batches == 0 {
            return None;
        }
        let mut used = self.used.lock().ok()?;
        while !self.fits(&used, bytes) {
            used = self.freed.wait(used).ok()?;
        }
        used.batches += 1;
        used.bytes += bytes;
        Some(Reservation {
            queue: Arc::clone(self),
            bytes,
        })
    }

    /// True when not even a small batch could be reserved now: checked when a request arrives,
    /// before its body is read, so a refusal under overload costs nothing.
    pub fn is_full(&self) -> bool {
        self.used.lock().map_or(true, |u| {
            u.batches >= self.max_batches || (u.batches > 0 && u.bytes >= self.max_bytes)
        })
    }

    /// True when a batch of `bytes` could be reserved now (nothing is reserved): the request path
    /// asks this with the least charge a request can get before decoding it, so a request that
    /// the reservation would refuse anyway is refused before its decode is paid for.
    pub fn has_room(&self, bytes: usize) -> bool {
        self.used.lock().is_ok_and(|u| self.fits(&u, bytes))
    }

    /// Batches currently queued.
    pub fn queued(&self) -> usize {
        self.used.lock().map(|u| u.batches).unwrap_or(0)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Ok(mut used) = self.queue.used.lock() {
            used.batches = used.batches.saturating_sub(1);
            used.bytes = used.bytes.saturating_sub(self.bytes);
        }
        self.queue.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_queue_refuses_until_a_slot_is_freed() {
        let b = WriterQueue::new(2, 100);
        let r1 = b.try_reserve(60).unwrap();
        assert!(b.try_reserve(50).is_none(), "bytes over budget");
        let r2 = b.try_reserve(40).unwrap();
        assert!(b.try_reserve(0).is_none(), "batches over budget");
        assert_eq!(b.queued(), 2);
        assert!(b.is_full());
        drop(r1);
        assert!(!b.is_full());
        let _r3 = b.try_reserve(60).unwrap();
        drop(r2);
        assert_eq!(b.queued(), 1);
    }

    #[test]
    fn oversize_batch_fits_an_empty_queue() {
        let b = WriterQueue::new(4, 10);
        assert!(!b.is_full());
        let r = b.try_reserve(1000).unwrap();
        assert!(b.is_full(), "bytes at or over the budget");
        assert!(b.try_reserve(1).is_none());
        drop(r);
        assert!(b.reserve_blocking(1000).is_some());
    }

    #[test]
    fn has_room_answers_what_try_reserve_would_without_reserving() {
        let b = WriterQueue::new(4, 100);
        assert!(b.has_room(1000), "an empty queue takes any batch");
        let _r = b.try_reserve(60).unwrap();
        assert!(b.has_room(40));
        assert!(!b.has_room(41), "60 + 41 is over the byte budget");
        assert!(!b.is_full(), "a small batch would still fit");
        assert_eq!(b.queued(), 1, "asking reserved nothing");
        assert!(b.try_reserve(41).is_none());
        assert!(b.try_reserve(40).is_some());
    }
}
