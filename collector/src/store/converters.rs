//! The converter threads: they turn acknowledged request records (see
//! [`crate::store::wal::record`]) into rows after the client has its answer.
//!
//! Why threads of their own: the acknowledgement path then costs a decode, a validation and a
//! WAL write, and conversion (most of a request's CPU) no longer sits between a request and its
//! answer. They run at the Parquet writer's nice value (`--writer-nice`): both are work done
//! after the answer. Results reach the batcher in WAL order, because the batcher waits for each
//! record's rows in turn ([`crate::store::batcher::Rows::Pending`]); the queue reservation of
//! the record bounds the memory of the requests waiting here.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One conversion; it sends its result to the batcher itself.
pub type Job = Box<dyn FnOnce() + Send>;

/// A small pool of converter threads fed by one queue.
pub struct Converters {
    tx: Mutex<Option<Sender<Job>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Converters {
    /// Start `threads` converter threads (at least one) at `nice`.
    pub fn start(threads: usize, nice: i32) -> std::io::Result<Converters> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut handles = Vec::new();
        // Each thread lowers its own priority (only a thread can name itself); start waits for
        // that, as the writer's does, so no conversion ever runs at the default priority.
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            let ready = ready_tx.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("tripline-convert-{i}"))
                    .spawn(move || {
                        crate::store::writer_priority::lower_current_thread_priority(nice);
                        let _ = ready.send(());
                        work(&rx);
                    })?,
            );
        }
        drop(ready_tx);
        // Err: every thread has ended (or signalled); joining them at stop reports nothing more.
        for _ in 0..handles.len() {
            if ready_rx.recv().is_err() {
                break;
            }
        }
        Ok(Converters {
            tx: Mutex::new(Some(tx)),
            threads: Mutex::new(handles),
        })
    }

    /// Queue `job`; when the converters have stopped it runs here and now, so every job runs.
    pub fn run(&self, job: Job) {
        let sender = self.tx.lock().ok().and_then(|tx| tx.clone());
        let job = match sender {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        job();
    }

    /// Let the threads finish every queued job, then stop them.
    pub fn stop(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let handles = self
            .threads
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        for h in handles {
            let _ = h.join();
        }
    }
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_before_stop_returns_and_after_it() {
        let pool = Converters::start(2, 0).unwrap();
        let (tx, rx) = mpsc::channel();
        for i in 0..50 {
            let tx = tx.clone();
            pool.run(Box::new(move || tx.send(i).unwrap()));
        }
        pool.stop();
        // A job given to a stopped pool runs on the caller's thread.
        let caller = std::thread::current().id();
        let (ttx, trx) = mpsc::channel();
        pool.run(Box::new(move || {
            ttx.send(std::thread::current().id()).unwrap()
        }));
        assert_eq!(trx.recv().unwrap(), caller);
        drop(tx);
        let mut got: Vec<i32> = rx.iter().collect();
        got.sort();
        assert_eq!(got, (0..50).collect::<Vec<_>>());
    }
}
