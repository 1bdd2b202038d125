//! The partition columns have the types every other engine gives them: `hour` is an integer in
//! tripline's own SQL too, so `ORDER BY hour` sorts 9 before 10 (it sorted as text before).

mod common;

use common::*;

#[test]
fn hour_is_an_integer_in_tripline_sql() {
    let scratch = tempfile::tempdir().unwrap();
    let store = scratch.path().join("store");
    // 2026-11-30 at 09:xx, 10:xx and 11:xx UTC, one span each.
    let base: u64 = 1_796_029_200_000_000_000; // 2026-11-30T09:00:00Z
    let spans: Vec<String> = (0..3u64)
        .map(|i| {
            let start = base + i * 3_600_000_000_000 + 5;
            format!(
                r#"{{"traceId":"{:032x}","spanId":"{:016x}","name":"execute_tool t","startTimeUnixNano":"{start}","endTimeUnixNano":"{}"}}"#,
                i + 1,
                i + 1,
                start + 1000
            )
        })
        .collect();
    let file = scratch.path().join("hours-traces.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"h"}}}}]}},"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        ),
    )
    .unwrap();
    let out = tripline(&store, &["ingest", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tripline(
        &store,
        &[
            "query",
            "--format",
            "json",
            "SELECT DISTINCT hour FROM spans ORDER BY hour",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hours: Vec<serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hour"].clone())
        .collect();
    assert_eq!(
        hours,
        vec![9, 10, 11],
        "hours as integers, in numeric order"
    );
}
