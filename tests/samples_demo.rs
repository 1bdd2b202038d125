//! `tripline demo` end to end: a collector on free loopback ports, the sample scenarios played
//! into it over OTLP by real MCP client and server processes, then the check and tools reports.

use std::process::Command;

#[test]
fn demo_runs_the_scenarios_through_a_collector_and_prints_the_reports() {
    let out = Command::new(env!("CARGO_BIN_EXE_tripline"))
        .env("TRIPLINE_LOG", "warn")
        .arg("demo")
        .output()
        .expect("run tripline demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "demo failed ({:?})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status.code()
    );
    // The check report names rules the broken samples trigger, and the tools report lists the
    // seed tools that ran.
    for needle in ["TL002", "TL004", "raise_parts_order", "get_order_summary"] {
        assert!(
            stdout.contains(needle),
            "demo output lacks {needle}:\n{stdout}"
        );
    }
}
