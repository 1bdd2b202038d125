//! The logical clock of `--deterministic` mode.
//!
//! Why: real timestamps differ on every run, so byte-identical regeneration needs time that is a
//! function of what happened, not of when. Each process keeps a Lamport clock (a counter):
//! every span start and span end is one tick. The clock crosses the MCP boundary with the
//! messages — the host puts its value into the request's `params._meta` under [`META_KEY`], the
//! server advances its own clock to at least that value before it starts its span, and returns its
//! value in the result's `_meta`, which the host observes before it ends its client span. So a
//! server span always lies inside the client span that caused it, in both processes' time.
//!
//! [`LogicalClockProcessor`] wraps the SDK's span processor: it records the tick of each span's
//! start, and when the span ends rewrites `start_time` / `end_time` to
//! `base + tick × TICK` and places the span's events evenly inside it, before handing the span to
//! the real (batch) processor and OTLP exporter. Nothing else of the span is touched.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanId};
use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};
use opentelemetry_sdk::Resource;

/// `_meta` key carrying the Lamport clock across MCP requests and results (deterministic mode only).
pub const META_KEY: &str = "io.tripline.samples/clock";

/// Length of one tick of logical time.
pub const TICK: Duration = Duration::from_millis(1);

/// A Lamport clock shared by everything in one process.
#[derive(Debug, Clone)]
pub struct LogicalClock {
    ticks: Arc<AtomicU64>,
    base: SystemTime,
}

impl LogicalClock {
    pub fn new(base: SystemTime) -> Self {
        Self {
            ticks: Arc::new(AtomicU64::new(0)),
            base,
        }
    }

    /// Advances the clock by one tick and returns the new value.
    pub fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The current value, to send to the peer.
    pub fn now(&self) -> u64 {
        self.ticks.load(Ordering::SeqCst)
    }

    /// Merges a value received from the peer (Lamport: take the maximum).
    pub fn observe(&self, remote: u64) {
        self.ticks.fetch_max(remote, Ordering::SeqCst);
    }

    /// Wall time of a tick.
    pub fn time_of(&self, tick: u64) -> SystemTime {
        self.base + TICK * u32::try_from(tick).unwrap_or(u32::MAX)
    }
}

/// Span processor that stamps spans with logical time, then forwards them to `inner`.
#[derive(Debug)]
pub struct LogicalClockProcessor<P> {
    clock: LogicalClock,
    started: Mutex<HashMap<SpanId, u64>>,
    inner: P,
}

impl<P: SpanProcessor> LogicalClockProcessor<P> {
    pub fn new(clock: LogicalClock, inner: P) -> Self {
        Self {
            clock,
            started: Mutex::new(HashMap::new()),
            inner,
        }
    }
}

impl<P: SpanProcessor> SpanProcessor for LogicalClockProcessor<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        let tick = self.clock.tick();
        let id = span.span_context().span_id();
        if let Ok(mut started) = self.started.lock() {
            started.insert(id, tick);
        }
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        let end = self.clock.tick();
        let id = span.span_context.span_id();
        let start = self
            .started
            .lock()
            .ok()
            .and_then(|mut s| s.remove(&id))
            .unwrap_or(end.saturating_sub(1));
        span.start_time = self.clock.time_of(start);
        span.end_time = self.clock.time_of(end);
        let n = span.events.events.len() as u32;
        let width = TICK * u32::try_from(end.saturating_sub(start)).unwrap_or(1);
        for (i, event) in span.events.events.iter_mut().enumerate() {
            event.timestamp = span.start_time + width * (i as u32 + 1) / (n + 1);
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lamport_observe_takes_the_maximum() {
        let c = LogicalClock::new(SystemTime::UNIX_EPOCH);
        assert_eq!(c.tick(), 1);
        c.observe(10);
        assert_eq!(c.now(), 10);
        c.observe(3);
        assert_eq!(c.tick(), 11);
        assert_eq!(
            c.time_of(11),
            SystemTime::UNIX_EPOCH + Duration::from_millis(11)
        );
    }
}
