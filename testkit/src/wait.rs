//! Polling for a condition, so a test waits exactly as long as it must instead of sleeping.

use std::time::{Duration, Instant};

/// Poll `cond` every 10 ms for up to 10 s; fail the test naming `what` when time runs out.
pub fn wait_for(what: &str, cond: impl FnMut() -> bool) {
    wait_up_to(Duration::from_secs(10), what, cond)
}

/// Poll `cond` every 10 ms for up to `limit`; fail the test naming `what` when time runs out.
pub fn wait_up_to(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
