//! Where the windowed read path tells the binary's allocator that a phase is over.
//!
//! Why: the `tripline` binary keeps the memory `check` frees once its windows start (mimalloc's
//! purge off, `collector::allocator`): each window frees a few hundred megabytes and allocates them
//! again, and faulting them in afresh was 4-6% of a 10M-span `check`. Pass 1 comes before the
//! windows and grows with the store; with the purge off from the start, what it freed stayed
//! resident beside the windows' memory, and a 100M-span `check` ran its windows at 1,770 MiB
//! against session 50's 1,238 MiB peak (BENCHMARKS.md, session 51). So the windowed path calls
//! [`pass_one_done`] once pass 1's tables are dropped, and the hook the binary set gives that
//! memory back before it keeps the rest. The analyzer does not link mimalloc itself (its tests run
//! on the system allocator), hence a hook and not a call.

use std::sync::OnceLock;

static PASS_ONE_DONE: OnceLock<fn()> = OnceLock::new();

/// Sets what [`pass_one_done`] calls; the first hook set stays.
pub fn set_pass_one_done_hook(hook: fn()) {
    let _ = PASS_ONE_DONE.set(hook);
}

/// Pass 1 is over and its tables are dropped: the hook, when one is set, runs now.
pub fn pass_one_done() {
    if let Some(hook) = PASS_ONE_DONE.get() {
        hook();
    }
}
