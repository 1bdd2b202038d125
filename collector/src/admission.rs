//! Early admission: decide whether a request may be processed *before* its body is read,
//! decompressed or decoded, so that under overload a refusal (429 / RESOURCE_EXHAUSTED with
//! `Retry-After`) costs a header check instead of a full decode and conversion, and memory stays
//! bounded instead of growing with the number of clients.
//!
//! Two budgets:
//! - **in-flight body bytes**: the bodies of requests admitted but not yet answered. A request
//!   reserves its declared `Content-Length` before its body is read (or its actual length once
//!   read, when none was declared) and is refused at once when the budget is spent. One request
//!   larger than the whole budget is still admitted when nothing else is in flight, so every
//!   request within the body cap can eventually pass.
//! - **processing slots**: at most this many requests are decompressed, decoded and converted
//!   at once (about one per core). More would only make the threads fight over the cores and the
//!   allocator, and starve the Parquet writer thread; waiting requests hold only their body.
//!
//! The queue in front of the Parquet writer ([`crate::backlog`]) is checked first: when it is full,
//! nothing admitted now could be accepted anyway.

use std::sync::{Arc, Condvar, Mutex};

/// Budgets of the request path, shared by the HTTP and gRPC receivers.
#[derive(Debug)]
pub struct Admission {
    inflight: Mutex<usize>,
    max_inflight_bytes: usize,
    slots: Mutex<usize>,
    slot_freed: Condvar,
    max_slots: usize,
}

/// Body bytes reserved for one admitted request; dropping it gives them back.
#[derive(Debug)]
pub struct BodyPermit {
    admission: Arc<Admission>,
    bytes: usize,
}

/// The right to decode and convert one request now; dropping it frees the slot.
#[derive(Debug)]
pub struct ProcessingSlot {
    admission: Arc<Admission>,
}

impl Admission {
    /// `max_inflight_bytes` of request bodies in flight, `max_slots` requests processed at once
    /// (at least one).
    pub fn new(max_inflight_bytes: usize, max_slots: usize) -> Arc<Admission> {
        Arc::new(Admission {
            inflight: Mutex::new(0),
            max_inflight_bytes,
            slots: Mutex::new(0),
            slot_freed: Condvar::new(),
            max_slots: max_slots.max(1),
        })
    }

    /// One processing slot per core the process may use.
    pub fn default_slots() -> usize {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    }

    /// Reserve `bytes` of body, or `None` when the in-flight budget is spent.
    pub fn try_admit(self: &Arc<Self>, bytes: usize) -> Option<BodyPermit> {
        let mut used = self.inflight.lock().ok()?;
        if *used > 0 && used.saturating_add(bytes) > self.max_inflight_bytes {
            return None;
        }
        *used = used.saturating_add(bytes);
        Some(BodyPermit {
            admission: Arc::clone(self),
            bytes,
        })
    }

    /// The in-flight body budget.
    pub fn max_inflight_bytes(&self) -> usize {
        self.max_inflight_bytes
    }

    /// Body bytes currently reserved by admitted requests.
    pub fn inflight_bytes(&self) -> usize {
        self.inflight.lock().map(|u| *u).unwrap_or(0)
    }

    /// Wait for a processing slot (blocking: call it on a blocking thread).
    pub fn processing_slot(self: &Arc<Self>) -> ProcessingSlot {
        if let Ok(mut busy) = self.slots.lock() {
            while *busy >= self.max_slots {
                match self.slot_freed.wait(busy) {
                    Ok(b) => busy = b,
                    Err(_) => {
                        return ProcessingSlot {
                            admission: Arc::clone(self),
                        }
                    }
                }
            }
            *busy += 1;
        }
        ProcessingSlot {
            admission: Arc::clone(self),
        }
    }
}

impl BodyPermit {
    /// Change the reservation to the body's actual size, once read (a body sent without a
    /// declared length). `false`, reservation unchanged, when that size no longer fits the
    /// budget beside the other requests in flight.
    pub fn try_resize(&mut self, bytes: usize) -> bool {
        let Ok(mut used) = self.admission.inflight.lock() else {
            return false;
        };
        let others = used.saturating_sub(self.bytes);
        if others > 0 && others.saturating_add(bytes) > self.admission.max_inflight_bytes {
            return false;
        }
        *used = others.saturating_add(bytes);
        self.bytes = bytes;
        true
    }
}

impl Drop for BodyPermit {
    fn drop(&mut self) {
        if let Ok(mut used) = self.admission.inflight.lock() {
            *used = used.saturating_sub(self.bytes);
        }
    }
}

impl Drop for ProcessingSlot {
    fn drop(&mut self) {
        if let Ok(mut busy) = self.admission.slots.lock() {
            *busy = busy.saturating_sub(1);
        }
        self.admission.slot_freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn body_budget_refuses_until_bytes_are_given_back() {
        let a = Admission::new(1000, 2);
        let p1 = a.try_admit(600).unwrap();
        assert!(a.try_admit(401).is_none(), "601 + 401 is over 1000");
        let mut p2 = a.try_admit(400).unwrap();
        assert_eq!(a.inflight_bytes(), 1000);
        assert!(a.try_admit(1).is_none());
        assert!(!p2.try_resize(401), "600 + 401 does not fit");
        assert_eq!(a.inflight_bytes(), 1000);
        assert!(p2.try_resize(100));
        assert_eq!(a.inflight_bytes(), 700);
        drop(p1);
        assert_eq!(a.inflight_bytes(), 100);
        drop(p2);
        assert_eq!(a.inflight_bytes(), 0);
    }

    #[test]
    fn oversize_body_is_admitted_alone_only() {
        let a = Admission::new(10, 1);
        let mut big = a.try_admit(0).unwrap();
        assert!(big.try_resize(5000), "alone, any size fits");
        assert!(a.try_admit(1).is_none());
        drop(big);
        assert!(a.try_admit(5000).is_some());
    }

    #[test]
    fn processing_slots_bound_concurrency() {
        let a = Admission::new(1 << 20, 2);
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (a, running, peak) = (Arc::clone(&a), Arc::clone(&running), Arc::clone(&peak));
                std::thread::spawn(move || {
                    let _slot = a.processing_slot();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }
}
