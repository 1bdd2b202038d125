//! Self-observability over the HTTP port: `/health` says ready once the WAL is replayed (no
//! token needed), `/metrics` is Prometheus text whose counters move with exports (and needs the
//! bearer token when one is configured).

mod common;

use std::collections::BTreeMap;

use common::*;

/// Parse Prometheus text: `name{labels}` -> value; every sample must have HELP and TYPE.
fn parse_prometheus(text: &str) -> BTreeMap<String, f64> {
    let mut typed = std::collections::BTreeSet::new();
    let mut helped = std::collections::BTreeSet::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split_whitespace();
            let name = it.next().unwrap().to_string();
            assert!(
                matches!(it.next(), Some("counter" | "gauge" | "histogram")),
                "{line}"
            );
            typed.insert(name);
        } else if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.insert(rest.split_whitespace().next().unwrap().to_string());
        } else if !line.is_empty() {
            let (key, value) = line.rsplit_once(' ').expect("sample line");
            let sample = key.split('{').next().unwrap();
            // A histogram's samples carry its name with a suffix.
            let name = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    sample
                        .strip_suffix(suffix)
                        .filter(|base| typed.contains(*base))
                })
                .unwrap_or(sample);
            assert!(name.starts_with("tripline_"), "{line}");
            assert!(
                typed.contains(name) && helped.contains(name),
                "{name} lacks HELP/TYPE"
            );
            samples.insert(
                key.to_string(),
                value.parse::<f64>().expect("numeric value"),
            );
        }
    }
    samples
}

async fn get(url: String, token: Option<&str>) -> reqwest::Response {
    let mut req = reqwest::Client::new().get(url);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    req.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_ready_and_metrics_counters_move_after_an_export() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let base = format!("http://{}", server.http_addr());

    let health = get(format!("{base}/health"), None).await;
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), r#"{"status":"ready"}"#);

    let before = get(format!("{base}/metrics"), None).await;
    assert_eq!(before.status(), 200);
    assert!(before.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let before = parse_prometheus(&before.text().await.unwrap());
    assert_eq!(before["tripline_spans_accepted_total"], 0.0);
    assert_eq!(before["tripline_ready"], 1.0);

    let req = request("metered", tool_call_spans(1, T0));
    export_ok(server.http_addr(), &req).await;
    let resp = post(
        server.http_addr(),
        b"nonsense".to_vec(),
        "application/x-protobuf",
        None,
        None,
    )
    .await;
    assert_eq!(resp.status(), 400);

    let after = parse_prometheus(
        &get(format!("{base}/metrics"), None)
            .await
            .text()
            .await
            .unwrap(),
    );
    assert_eq!(after["tripline_spans_accepted_total"], 2.0);
    assert_eq!(
        after[r#"tripline_requests_total{protocol="http",status="200"}"#],
        1.0
    );
    assert_eq!(
        after[r#"tripline_requests_total{protocol="http",status="400"}"#],
        1.0
    );
    assert!(
        after["tripline_wal_bytes"] > 0.0,
        "the export is in the WAL"
    );
    assert!(after["tripline_wal_appended_bytes_total"] > 0.0);
    assert_eq!(after["tripline_inflight_bytes"], 0.0);
    assert!(after["tripline_connections_open"] >= 1.0);
    for name in [
        "tripline_queue_batches",
        "tripline_flush_lag_seconds",
        "tripline_parquet_write_errors_total",
        "tripline_wal_records_lost_total",
        "tripline_records_quarantined_total",
        "tripline_storage_retries_total",
    ] {
        assert!(after.contains_key(name), "{name} missing");
    }
    assert_eq!(after["tripline_storage_degraded"], 0.0);
    assert_eq!(after["tripline_last_commit_timestamp_seconds"], 0.0);
    // Where the two requests' time went: both bodies were read, both were picked up, given a
    // slot and decoded (the second failed to decode); only the first reached the WAL and was
    // converted there.
    let stage_count =
        |stage: &str| after[&format!(r#"tripline_ack_stage_seconds_count{{stage="{stage}"}}"#)];
    for (stage, n) in [
        ("body_read", 2.0),
        ("blocking_wait", 2.0),
        ("slot_wait", 2.0),
        ("decode", 2.0),
        ("wal_append", 1.0),
        ("convert", 1.0),
        ("wal_fsync", 1.0),
        ("total", 2.0),
    ] {
        assert_eq!(stage_count(stage), n, "{stage}");
        let inf =
            after[&format!(r#"tripline_ack_stage_seconds_bucket{{stage="{stage}",le="+Inf"}}"#)];
        assert_eq!(inf, n, "{stage}: +Inf bucket = count");
        assert!(
            after[&format!(r#"tripline_ack_stage_seconds_sum{{stage="{stage}"}}"#)] >= 0.0,
            "{stage}"
        );
    }
    assert!(
        after[r#"tripline_ack_stage_seconds_sum{stage="total"}"#]
            >= after[r#"tripline_ack_stage_seconds_sum{stage="decode"}"#],
        "the total holds the decode"
    );

    // A commit moves the storage metrics: files, latency, last commit time, no file left open.
    server.pipeline().flush().unwrap();
    let committed = parse_prometheus(
        &get(format!("{base}/metrics"), None)
            .await
            .text()
            .await
            .unwrap(),
    );
    assert!(committed["tripline_files_committed_total"] >= 1.0);
    assert!(committed["tripline_commit_seconds_total"] > 0.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let last = committed["tripline_last_commit_timestamp_seconds"];
    assert!((now - last).abs() < 60.0, "last commit {last}, now {now}");
    assert_eq!(committed["tripline_open_part_files"], 0.0);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_need_the_token_and_health_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.auth_token = Some("tok".into());
    })
    .await;
    let base = format!("http://{}", server.http_addr());
    assert_eq!(get(format!("{base}/health"), None).await.status(), 200);
    assert_eq!(get(format!("{base}/metrics"), None).await.status(), 401);
    assert_eq!(
        get(format!("{base}/metrics"), Some("wrong")).await.status(),
        401
    );
    let ok = get(format!("{base}/metrics"), Some("tok")).await;
    assert_eq!(ok.status(), 200);
    assert!(
        parse_prometheus(&ok.text().await.unwrap()).contains_key("tripline_spans_accepted_total")
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_503_with_the_reason_while_the_queue_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.pipeline.max_queue_batches = 1;
    })
    .await;
    server.pipeline().pause_writer(true);
    let req = request("q", tool_call_spans(1, T0));
    assert_eq!(export(server.http_addr(), &req).await.status(), 200);
    let health = get(format!("http://{}/health", server.http_addr()), None).await;
    assert_eq!(health.status(), 503);
    let body: serde_json::Value = serde_json::from_str(&health.text().await.unwrap()).unwrap();
    assert_eq!(body["status"], "unavailable");
    assert!(body["reason"].as_str().unwrap().contains("queue"), "{body}");
    server.pipeline().pause_writer(false);
    while server.pipeline().queued_batches() > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        get(format!("http://{}/health", server.http_addr()), None)
            .await
            .status(),
        200
    );
    server.shutdown().await.unwrap();
}
