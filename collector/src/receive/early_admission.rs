//! Early admission: decide whether a request may be processed *before* its body is read,
//! decompressed or decoded, so that under overload a refusal (429 / RESOURCE_EXHAUSTED with
//! `Retry-After`) costs a header check instead of a full decode and conversion, and memory stays
//! bounded instead of growing with the number of clients.
//!
//! Two budgets:
//! - **in-flight body bytes**: the bodies of requests admitted but not yet answered. A request is
//!   charged for the bytes it has *actually* sent, frame by frame as they arrive ([`ChargedBody`]),
//!   whatever `Content-Length` it declared and whether it is chunked, HTTP/2 or gRPC: a client
//!   that declares 64 MiB and stalls holds only what it sent, and only until the body deadline.
//!   A frame that no longer fits the budget ends the request with 429 / RESOURCE_EXHAUSTED.
//!   One request larger than the whole budget is still admitted when nothing else is in flight,
//!   so every request within the body cap can eventually pass.
//! - **processing slots**: at most this many requests are decompressed, decoded and converted
//!   at once (about one per core). More would only make the threads fight over the cores and the
//!   allocator, and starve the Parquet writer thread; waiting requests hold only their body.
//!   Slots are handed out in arrival order (a ticket queue, `SlotQueue`): with a plain
//!   counter and condition variable, a request arriving just as a slot frees takes it ahead of
//!   those already waiting, and under steady load an unlucky request can be passed over again
//!   and again, which is what the tail of the acknowledgement latency is made of.
//!
//! Not to be confused with the queue reservation ([`crate::store::queue_reservation`]), which
//! comes later, once the batch is converted, and bounds what waits for the Parquet writer. That
//! queue is checked here first, though: when it is full, nothing admitted now could be accepted
//! anyway.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// Budgets of the request path, shared by the HTTP and gRPC receivers.
#[derive(Debug)]
pub struct EarlyAdmission {
    inflight: Mutex<usize>,
    max_inflight_bytes: usize,
    slots: Mutex<SlotQueue>,
    slot_freed: Condvar,
    max_slots: usize,
}

/// The processing slots as a ticket queue: every request takes the next ticket, and ticket `t`
/// may run once `t < released + max_slots`, so requests start in the order they asked, and at
/// most `max_slots` run at once (tickets admitted minus slots released).
#[derive(Debug, Default)]
struct SlotQueue {
    /// The next ticket to hand out.
    next: u64,
    /// Slots given back so far.
    released: u64,
}

/// Body bytes reserved for one admitted request; dropping it gives them back.
#[derive(Debug)]
pub struct BodyPermit {
    admission: Arc<EarlyAdmission>,
    bytes: usize,
}

/// The right to decode and convert one request now; dropping it frees the slot.
#[derive(Debug)]
pub struct ProcessingSlot {
    admission: Arc<EarlyAdmission>,
}

impl EarlyAdmission {
    /// `max_inflight_bytes` of request bodies in flight, `max_slots` requests processed at once
    /// (at least one).
    pub fn new(max_inflight_bytes: usize, max_slots: usize) -> Arc<EarlyAdmission> {
        Arc::new(EarlyAdmission {
            inflight: Mutex::new(0),
            max_inflight_bytes,
            slots: Mutex::new(SlotQueue::default()),
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

    /// Wait for a processing slot, behind every request that asked before (blocking: call it
    /// on a blocking thread).
    pub fn processing_slot(self: &Arc<Self>) -> ProcessingSlot {
        let slot = ProcessingSlot {
            admission: Arc::clone(self),
        };
        let max = self.max_slots as u64;
        // A poisoned lock (a panic while holding it; nothing in these few lines panics) lets the
        // request through rather than wedging the receiver.
        let Ok(mut queue) = self.slots.lock() else {
            return slot;
        };
        let ticket = queue.next;
        queue.next += 1;
        while ticket >= queue.released + max {
            match self.slot_freed.wait(queue) {
                Ok(q) => queue = q,
                Err(_) => return slot,
            }
        }
        slot
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
        if let Ok(mut queue) = self.admission.slots.lock() {
            queue.released += 1;
        }
        // Every waiter checks its own ticket; only the next in line goes on.
        self.admission.slot_freed.notify_all();
    }
}

/// A body permit shared by the body being read and the request that holds the decoded result.
pub type SharedPermit = Arc<Mutex<BodyPermit>>;

/// Why a [`ChargedBody`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum BodyLimitError {
    /// The in-flight budget cannot hold this body's next frame beside the others (429).
    #[error("the collector is overloaded ({inflight} request bytes in flight, budget {budget}); retry after the Retry-After delay")]
    Overloaded { inflight: usize, budget: usize },
    /// The body is larger than the body cap (413).
    #[error("request body exceeds the limit of {limit} bytes; send smaller batches (or raise --max-body-bytes)")]
    TooLarge { limit: usize },
    /// The whole body did not arrive within the body deadline (408).
    #[error("the request body did not arrive within {secs} s (--body-timeout-secs); send it faster or in smaller batches")]
    TimedOut { secs: u64 },
    /// The connection failed while the body was read (400).
    #[error("cannot read the request body: {0}; resend the request")]
    Read(String),
}

/// A request body that charges the in-flight budget for each frame as it arrives, enforces the
/// body cap on the bytes received and a deadline on the whole body. Errors are
/// [`BodyLimitError`] (or what `map_err` makes of them: gRPC turns them into a `Status`).
pub struct ChargedBody<B> {
    inner: B,
    permit: SharedPermit,
    limit: usize,
    received: usize,
    deadline: Pin<Box<tokio::time::Sleep>>,
    timeout: Duration,
    done: bool,
}

impl<B> ChargedBody<B> {
    /// Wrap `inner`; `permit` was admitted with 0 bytes and grows with the body.
    pub fn new(inner: B, permit: SharedPermit, limit: usize, timeout: Duration) -> Self {
        ChargedBody {
            inner,
            permit,
            limit,
            received: 0,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            timeout,
            done: false,
        }
    }

    /// The wrapped body, to read what is left of it without charging it (a refused request's
    /// rest, [`crate::receive::unread_body`]); the bytes charged so far go back with the permit.
    pub fn into_inner(self) -> B {
        self.inner
    }

    fn fail(&mut self, e: BodyLimitError) -> Poll<Option<Result<Frame<Bytes>, BodyLimitError>>> {
        self.done = true;
        Poll::Ready(Some(Err(e)))
    }
}

impl<B> Body for ChargedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    type Data = Bytes;
    type Error = BodyLimitError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyLimitError>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            let secs = self.timeout.as_secs();
            return self.fail(BodyLimitError::TimedOut { secs });
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Ready(Some(Err(e))) => return self.fail(BodyLimitError::Read(e.to_string())),
            Poll::Ready(Some(Ok(frame))) => frame,
        };
        if let Some(data) = frame.data_ref() {
            let received = self.received.saturating_add(data.len());
            if received > self.limit {
                let limit = self.limit;
                return self.fail(BodyLimitError::TooLarge { limit });
            }
            let grown = match self.permit.lock() {
                Ok(mut p) => p.try_resize(received),
                Err(_) => false,
            };
            if !grown {
                let (inflight, budget) = self
                    .permit
                    .lock()
                    .map(|p| {
                        (
                            p.admission.inflight_bytes(),
                            p.admission.max_inflight_bytes(),
                        )
                    })
                    .unwrap_or_default();
                return self.fail(BodyLimitError::Overloaded { inflight, budget });
            }
            self.received = received;
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn body_budget_refuses_until_bytes_are_given_back() {
        let a = EarlyAdmission::new(1000, 2);
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
        let a = EarlyAdmission::new(10, 1);
        let mut big = a.try_admit(0).unwrap();
        assert!(big.try_resize(5000), "alone, any size fits");
        assert!(a.try_admit(1).is_none());
        drop(big);
        assert!(a.try_admit(5000).is_some());
    }

    #[test]
    fn processing_slots_bound_concurrency() {
        let a = EarlyAdmission::new(1 << 20, 2);
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

    /// Waits until `n` tickets have been handed out (so the test knows who is queued).
    fn until_tickets(a: &EarlyAdmission, n: u64) {
        while a.slots.lock().unwrap().next < n {
            std::thread::yield_now();
        }
    }

    /// Slots go in arrival order: six queued requests start in the order they asked, and a
    /// request that asks just as a slot frees waits behind those already queued instead of
    /// taking the slot (with the old counter it usually did).
    #[test]
    fn processing_slots_are_handed_out_in_arrival_order() {
        let a = EarlyAdmission::new(1 << 20, 1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let held = a.processing_slot();
        let handles: Vec<_> = (1..=6u64)
            .map(|i| {
                let (a2, order) = (Arc::clone(&a), Arc::clone(&order));
                let h = std::thread::spawn(move || {
                    let _slot = a2.processing_slot();
                    order.lock().unwrap().push(i);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                });
                until_tickets(&a, i + 1);
                h
            })
            .collect();
        drop(held);
        // Asks the moment the slot is free, behind the six.
        let late = a.processing_slot();
        order.lock().unwrap().push(7);
        drop(late);
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![1, 2, 3, 4, 5, 6, 7]);
    }
}
