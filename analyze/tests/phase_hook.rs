//! The windowed read path calls the pass-one hook once per windowed pass, however many windows
//! follow: the `tripline` binary gives pass 1's freed memory back to the OS there before it keeps
//! what the windows free (`analyze/src/phase.rs`, `collector/src/allocator.rs`).

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use analyze::check::check_store_bounded;
use analyze::load::ScanFilter;
use analyze::policy::Policy;
use analyze::rules::RULES;
use analyze::window::WindowOptions;
use common::stores::{ingest, rt};

static CALLS: AtomicUsize = AtomicUsize::new(0);

fn count() {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_windowed_check_calls_the_pass_one_hook_once() {
    analyze::phase::set_pass_one_done_hook(count);
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let options = WindowOptions {
        window_spans: 5,
        memory_limit: None,
        spill_dir: None,
    };
    let before = CALLS.load(Ordering::SeqCst);
    let (_, _, stats) = rt()
        .block_on(check_store_bounded(
            store.path(),
            &ScanFilter::default(),
            &policy,
            RULES,
            &options,
        ))
        .unwrap();
    assert!(stats.windows > 1, "small windows cut the store: {stats:?}");
    assert_eq!(CALLS.load(Ordering::SeqCst) - before, 1);
}
