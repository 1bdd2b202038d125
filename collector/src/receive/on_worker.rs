//! Where a request's synchronous work (decode, validation, WAL append and fsync) runs: on the
//! runtime worker thread that read the request, at once.
//!
//! Why not a blocking-pool thread: handing the request over made it wait for that thread to be
//! woken and scheduled. On two cores at 80% of the peak that wait was the tail of the
//! acknowledgement latency: its p99 reached 50–100 ms while decoding and the WAL took under
//! 25 ms (`blocking_wait` in `/metrics`, BENCHMARKS.md, session 33). `block_in_place` keeps the
//! request on its thread and moves the worker's other tasks to another one meanwhile.
//!
//! Either way the work cannot be cancelled halfway: a synchronous call is not dropped in the
//! middle, and the detached task of a current-thread runtime (where blocking in place is not
//! allowed, e.g. a test's runtime) runs to completion even if the client has gone. A panic is
//! answered 503, as before, rather than dropping the connection.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use tokio::runtime::{Handle, RuntimeFlavor};

use crate::ack_latency::AckStage;
use crate::receive::early_admission::SharedPermit;
use crate::receive::request::Refusal;
use crate::telemetry::Stats;

/// [`run`] for a request whose whole body arrived at `received`: its acknowledgement stages are
/// timed in `stats` (the wait before the work starts, and the total), and its body `permit` is
/// held until the work is done. The HTTP and gRPC receivers both answer through this.
pub async fn run_request<T, F>(
    stats: Arc<Stats>,
    received: Instant,
    permit: SharedPermit,
    work: F,
) -> Result<T, Refusal>
where
    F: FnOnce() -> Result<T, Refusal> + Send + 'static,
    T: Send + 'static,
{
    run(move || {
        stats.ack.record(AckStage::BlockingWait, received.elapsed());
        let outcome = work();
        drop(permit);
        stats.ack.record(AckStage::Total, received.elapsed());
        outcome
    })
    .await
}

/// Run `work` to completion and return its outcome (a panic becomes a 503 refusal).
pub async fn run<T, F>(work: F) -> Result<T, Refusal>
where
    F: FnOnce() -> Result<T, Refusal> + Send + 'static,
    T: Send + 'static,
{
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        return tokio::task::block_in_place(|| catch_unwind(AssertUnwindSafe(work)))
            .unwrap_or_else(|_| Err(internal_error("it panicked")));
    }
    let task = tokio::spawn(async move { tokio::task::spawn_blocking(work).await });
    match task.await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) | Err(e) => Err(internal_error(&e.to_string())),
    }
}

fn internal_error(what: &str) -> Refusal {
    Refusal::Unavailable(format!(
        "internal error while storing the request: {what}; retry, and report it if it persists"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(
        flavor_multi: bool,
        work: impl FnOnce() -> Result<u8, Refusal> + Send + 'static,
    ) -> Result<u8, Refusal> {
        let rt = if flavor_multi {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap()
        } else {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
        };
        rt.block_on(run(work))
    }

    #[test]
    fn both_runtimes_return_the_outcome_and_answer_a_panic_with_a_refusal() {
        for multi in [true, false] {
            assert!(matches!(answer(multi, || Ok(7)), Ok(7)));
            assert!(matches!(
                answer(multi, || Err(Refusal::BadRequest("bad".into()))),
                Err(Refusal::BadRequest(m)) if m == "bad"
            ));
            match answer(multi, || panic!("injected")) {
                Err(Refusal::Unavailable(m)) => assert!(m.contains("internal error"), "{m}"),
                other => panic!("a panic must be a 503 refusal, got {other:?}"),
            }
        }
    }

    #[test]
    fn on_a_multi_thread_runtime_the_work_runs_on_the_calling_thread() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let (caller, worker) = rt.block_on(async {
            tokio::spawn(async {
                let caller = std::thread::current().id();
                let worker = run(|| Ok(std::thread::current().id())).await.ok();
                (caller, worker)
            })
            .await
            .unwrap()
        });
        assert_eq!(Some(caller), worker);
    }
}
