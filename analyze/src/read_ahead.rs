//! An iterator run on a thread of its own, its items handed over in chunks through a bounded
//! channel: the consumer works on one chunk while the next is produced.
//!
//! Why: once every window of a `check` is judged, its findings are merged from the spilled runs
//! (read, decoded, ordered on a heap) and written out (JSON escaping, formatting). Both are
//! single-threaded and the machine's other cores sit idle for the last half second of a
//! 10M-span check (perf, session 52); merging on one thread while the other writes overlaps them.
//! What is alive at once stays bounded: `depth` chunks of `chunk` items.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

/// Items of an iterator produced on another thread, in the iterator's order.
pub struct ReadAhead<T> {
    chunks: Receiver<Vec<T>>,
    current: std::vec::IntoIter<T>,
    producer: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> ReadAhead<T> {
    /// Runs `items` on a new thread, `chunk` items at a time, at most `depth` chunks ahead.
    pub fn spawn<I>(items: I, chunk: usize, depth: usize) -> Self
    where
        I: Iterator<Item = T> + Send + 'static,
    {
        let chunk = chunk.max(1);
        let (tx, rx) = sync_channel(depth.max(1));
        let producer = std::thread::Builder::new()
            .name("tripline-read-ahead".into())
            .spawn(move || {
                let mut items = items;
                loop {
                    let next: Vec<T> = items.by_ref().take(chunk).collect();
                    let last = next.len() < chunk;
                    // A consumer that stopped early (a closed stdout) drops the receiver.
                    if next.is_empty() || tx.send(next).is_err() || last {
                        return;
                    }
                }
            })
            .expect("the operating system refused a thread for reading ahead");
        Self {
            chunks: rx,
            current: Vec::new().into_iter(),
            producer: Some(producer),
        }
    }
}

impl<T> Iterator for ReadAhead<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(item);
            }
            match self.chunks.recv() {
                Ok(chunk) => self.current = chunk.into_iter(),
                Err(_) => {
                    // The producer is done, or it panicked: then the items are not all here,
                    // and ending the sequence quietly would truncate the output.
                    if let Some(p) = self.producer.take() {
                        if let Err(panic) = p.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                    return None;
                }
            }
        }
    }
}

impl<T> Drop for ReadAhead<T> {
    /// Stops the producer and waits for it, so that what the iterator holds (a check's spill
    /// directory) is released before the caller goes on, also when it stopped early (a closed
    /// stdout). A producer blocked on the channel stops once it is closed; one producing a chunk
    /// stops after that chunk.
    fn drop(&mut self) {
        let (_, closed) = sync_channel(0);
        drop(std::mem::replace(&mut self.chunks, closed));
        if let Some(p) = self.producer.take() {
            // A panic there was the producer's; the consumer is going away, so it is not raised.
            let _ = p.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_every_item_in_order_whatever_the_chunk_size() {
        for (n, chunk) in [(0, 3), (1, 1), (10, 3), (9, 3), (1000, 64)] {
            let got: Vec<u32> = ReadAhead::spawn(0..n, chunk, 2).collect();
            assert_eq!(got, (0..n).collect::<Vec<_>>(), "n {n} chunk {chunk}");
        }
    }

    #[test]
    fn a_panicking_producer_is_not_a_short_sequence() {
        let items = (0..10u32).map(|i| if i == 7 { panic!("boom at 7") } else { i });
        let mut read = ReadAhead::spawn(items, 2, 1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (&mut read).count()));
        assert!(
            caught.is_err(),
            "the producer's panic must reach the consumer"
        );
    }

    #[test]
    fn a_consumer_that_stops_early_ends_the_producer_and_what_it_holds() {
        struct Held(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Held {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let released = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let held = Held(released.clone());
        // Endless: the producer ends only because the consumer went away.
        let items = (0..u64::MAX).inspect(move |_| {
            let _ = &held;
        });
        let mut read = ReadAhead::spawn(items, 16, 1);
        assert_eq!(read.next(), Some(0));
        drop(read);
        assert!(
            released.load(std::sync::atomic::Ordering::SeqCst),
            "the iterator is dropped before the consumer's drop returns"
        );
    }
}
