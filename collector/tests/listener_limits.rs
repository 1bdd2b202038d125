//! Every cost of a request is bounded, over real sockets against the real server: a client that
//! declares a huge body and stalls holds only the bytes it sent and only until the body deadline
//! (408); chunked bodies are charged to the in-flight budget as they arrive, so concurrent big
//! uploads are refused (429) rather than buffered past it; an echoed bad value is cut.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Read an HTTP/1.1 response head and return its status (the connection is closed after).
async fn read_status(stream: &mut TcpStream) -> u16 {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf);
    head.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"))
}

async fn inflight_bytes(server: &collector::Server) -> f64 {
    let text = reqwest::get(format!("http://{}/metrics", server.http_addr()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("tripline_inflight_bytes "))
        .expect("inflight gauge")
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_huge_declared_body_neither_blocks_others_nor_holds_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_inflight_bytes = 1024 * 1024;
        config.body_timeout = Duration::from_secs(2);
    })
    .await;

    // Declares 64 MiB (the body cap), sends 1 KiB, then stalls.
    let mut staller = TcpStream::connect(server.http_addr()).await.unwrap();
    staller
        .write_all(
            format!(
                "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
                64 * 1024 * 1024
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    staller.write_all(&[0u8; 1024]).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while inflight_bytes(&server).await < 1024.0 {
        assert!(
            Instant::now() < deadline,
            "the staller's bytes were never charged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        inflight_bytes(&server).await,
        1024.0,
        "charged what arrived, not what was declared"
    );

    // Another client's export goes through meanwhile.
    let req = request("other", tool_call_spans(1, T0));
    export_ok(server.http_addr(), &req).await;

    // The body deadline ends the staller with 408 and gives its bytes back.
    let started = Instant::now();
    assert_eq!(read_status(&mut staller).await, 408);
    assert!(started.elapsed() < Duration::from_secs(4));
    let deadline = Instant::now() + Duration::from_secs(5);
    while inflight_bytes(&server).await != 0.0 {
        assert!(
            Instant::now() < deadline,
            "the staller's budget was not released"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.stats().requests_by_status().get("http:408"),
        Some(&1)
    );
    server.shutdown().await.unwrap();
}

/// Send `body` chunked in 64 KiB chunks, pausing on `gate` after `before_gate` bytes; the status.
async fn chunked_upload(
    addr: std::net::SocketAddr,
    body: Vec<u8>,
    before_gate: usize,
    gate: std::sync::Arc<tokio::sync::Barrier>,
) -> u16 {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ntransfer-encoding: chunked\r\n\r\n";
    let mut ok = s.write_all(head.as_bytes()).await.is_ok();
    let mut sent = 0;
    let mut waited = false;
    for chunk in body.chunks(64 * 1024) {
        if !waited && sent >= before_gate {
            gate.wait().await;
            waited = true;
        }
        if ok {
            let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
            ok = s.write_all(&framed).await.is_ok();
        }
        sent += chunk.len();
    }
    if !waited {
        gate.wait().await;
    }
    if ok {
        let _ = s.write_all(b"0\r\n\r\n").await;
    }
    read_status(&mut s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_chunked_uploads_are_charged_and_cannot_exceed_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    let budget = 4 * 1024 * 1024;
    config.max_inflight_bytes = budget;
    let server = collector::Server::start(config).await.unwrap();

    // Six valid 2 MiB requests; each sends 1.5 MiB, then all wait at the gate: 9 MiB would be
    // buffered at once without charging.
    let mut req = request("chunked", tool_call_spans(1, T0));
    req.resource_spans[0].scope_spans[0].spans[0]
        .attributes
        .push(kv_str("padding", "p".repeat(2 * 1024 * 1024)));
    let body = req.encode_to_vec();
    let clients = 6;
    let gate = std::sync::Arc::new(tokio::sync::Barrier::new(clients + 1));
    let uploads: Vec<_> = (0..clients)
        .map(|_| {
            tokio::spawn(chunked_upload(
                server.http_addr(),
                body.clone(),
                1536 * 1024,
                gate.clone(),
            ))
        })
        .collect();
    // Every client has sent its first 1.5 MiB (or been refused) once the gate opens.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut peak = 0.0f64;
    let gate_passed = gate.wait();
    tokio::pin!(gate_passed);
    loop {
        tokio::select! {
            _ = &mut gate_passed => break,
            _ = tokio::time::sleep(Duration::from_millis(10)) => {
                peak = peak.max(inflight_bytes(&server).await);
                assert!(Instant::now() < deadline, "clients never reached the gate");
            }
        }
    }
    peak = peak.max(inflight_bytes(&server).await);
    let mut statuses = Vec::new();
    for u in uploads {
        statuses.push(u.await.unwrap());
    }
    statuses.sort();
    assert!(
        peak <= budget as f64,
        "in flight {peak} over the budget {budget}"
    );
    assert!(
        statuses.contains(&429),
        "some uploads refused: {statuses:?}"
    );
    assert!(statuses.contains(&200), "some uploads stored: {statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let stored = statuses.iter().filter(|s| **s == 200).count();
    server.shutdown().await.unwrap();
    assert_eq!(
        read_store(dir.path())
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        2 * stored
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mib_bad_value_is_answered_in_under_1_kib() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let ten_mib = "z".repeat(10 * 1024 * 1024);
    // Undecodable: 400, the value echoed in the message is cut.
    let bad = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"x","startTimeUnixNano":"{ten_mib}"}}]}}]}}]}}"#
    );
    let resp = post_json(server.http_addr(), bad.into_bytes()).await;
    assert_eq!(resp.status(), 400);
    let body = resp.bytes().await.unwrap();
    assert!(body.len() < 1024, "answer is {} bytes", body.len());
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains("bytes)"),
        "the cut says how long it was: {message}"
    );

    // A rejected span (bad trace id): partial success whose reason is cut the same way.
    let bad = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{ten_mib}","spanId":"0102030405060708","name":"x"}}]}}]}}]}}"#
    );
    let resp = post_json(server.http_addr(), bad.into_bytes()).await;
    assert_eq!(resp.status(), 200);
    let body = resp.bytes().await.unwrap();
    assert!(body.len() < 1024, "answer is {} bytes", body.len());
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(answer["partialSuccess"]["rejectedSpans"], "1");

    let huge_type = format!("application/{}", "q".repeat(100_000));
    let resp = post(server.http_addr(), b"{}".to_vec(), &huge_type, None, None).await;
    assert_eq!(resp.status(), 415);
    assert!(resp.bytes().await.unwrap().len() < 1024);
    server.shutdown().await.unwrap();
}

/// Read until the server closes the connection; how long that took.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit, stream.read(&mut buf)).await {
            Err(_) => panic!("the connection was still open after {limit:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_slow_connections_are_closed_by_the_header_read_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.header_read_timeout = Duration::from_secs(1);
    })
    .await;

    // Never sends a byte.
    let mut silent = TcpStream::connect(server.http_addr()).await.unwrap();
    let took = closed_within(&mut silent, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(900),
        "closed too early: {took:?}"
    );

    // Sends half a request head.
    let mut slow = TcpStream::connect(server.http_addr()).await.unwrap();
    slow.write_all(b"POST /v1/traces HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let took = closed_within(&mut slow, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(900),
        "closed too early: {took:?}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.idle_timeout = Duration::from_secs(1);
    })
    .await;

    let body = request("idle", tool_call_spans(1, T0)).encode_to_vec();
    let mut idle = TcpStream::connect(server.http_addr()).await.unwrap();
    idle.write_all(
        format!(
            "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    idle.write_all(&body).await.unwrap();
    assert_eq!(read_status(&mut idle).await, 200);
    let took = closed_within(&mut idle, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(900),
        "closed too early: {took:?}"
    );
    assert!(
        server
            .stats()
            .connections_timed_out
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_an_idle_connection_makes_room_for_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_with(dir.path(), |config| {
        config.max_connections = 4;
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..10 {
        idle.push(TcpStream::connect(server.http_addr()).await.unwrap());
    }
    let req = request("capped", tool_call_spans(1, T0));
    export_ok(server.http_addr(), &req).await;
    let stats = server.stats();
    assert!(
        stats
            .connections_evicted
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 7
    );
    assert!(
        stats
            .connections_open
            .load(std::sync::atomic::Ordering::Relaxed)
            <= 4 + 16
    );
    drop(idle);
    server.shutdown().await.unwrap();
}

/// A collector with a 1 MiB in-flight budget, 600 KiB of which an HTTP/1.1 upload that stops
/// sending holds (the returned stream; dropping it gives the bytes back).
async fn server_with_budget_mostly_held(dir: &std::path::Path) -> (collector::Server, TcpStream) {
    let server = start_with(dir, |config| {
        config.max_inflight_bytes = 1024 * 1024;
    })
    .await;
    let holder = hold_budget(server.http_addr(), 10_000_000, 600 * 1024).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while inflight_bytes(&server).await < (600 * 1024) as f64 {
        assert!(
            Instant::now() < deadline,
            "the holder's bytes were never charged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (server, holder)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_bodies_are_charged_to_the_budget_too() {
    let dir = tempfile::tempdir().unwrap();
    let (server, holder) = server_with_budget_mostly_held(dir.path()).await;

    // An h2c (prior knowledge) upload of 600 KiB no longer fits: 429 while it is still sending.
    let tcp = TcpStream::connect(server.http_addr()).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.unwrap();
    let request = http::Request::post(format!("http://{}/v1/traces", server.http_addr()))
        .header("content-type", "application/x-protobuf")
        .body(())
        .unwrap();
    let (response, mut stream) = client.send_request(request, false).unwrap();
    for _ in 0..10 {
        stream.reserve_capacity(60 * 1024);
        let _ = stream.send_data(bytes::Bytes::from(vec![0u8; 60 * 1024]), false);
    }
    let response = tokio::time::timeout(Duration::from_secs(5), response)
        .await
        .expect("answered before the body ended")
        .unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    assert!(inflight_bytes(&server).await <= (1024 * 1024) as f64);
    drop(holder);
    server.shutdown().await.unwrap();
}

/// A valid OTLP/HTTP export of one span carrying `padding` bytes of attribute: the HTTP/1.1
/// request head (`connection: close`) and the protobuf body.
fn padded_upload(service: &str, padding: usize) -> (String, Vec<u8>) {
    let mut req = request(service, tool_call_spans(1, T0));
    req.resource_spans[0].scope_spans[0].spans[0]
        .attributes
        .push(kv_str("padding", "p".repeat(padding)));
    let body = req.encode_to_vec();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    (head, body)
}

/// Reads the whole answer to a refused upload and checks it is a 429 with `Retry-After`, not a
/// reset.
async fn read_429(client: &mut TcpStream, what: &str) {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer))
        .await
        .expect("answered");
    if let Err(e) = read {
        panic!("{what}: the answer was lost to a reset: {e}");
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 429"), "{what}: {answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after:"),
        "{what}: {answer}"
    );
}

/// A refused upload that arrives slowly, as every body does when the collector is overloaded
/// (TCP flow control paces each sender to what the collector reads), is still read to its end
/// and answered 429: the drain gives up after a silence (`unread_body::DRAIN_IDLE`, 2 s), not
/// after a fixed total. With a fixed 2 s drain this 3 s upload was cut off mid-body and its
/// client saw a reset (7 of 2,400 requests of session 38's overload benchmark).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upload_arriving_slowly_reads_its_429_not_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    let (server, holder) = server_with_budget_mostly_held(dir.path()).await;

    let (head, body) = padded_upload("refused-slowly", 4 * 1024 * 1024);
    let mut client = TcpStream::connect(server.http_addr()).await.unwrap();
    client.write_all(head.as_bytes()).await.unwrap();
    // 32 pieces 100 ms apart: 3.2 s in all, no gap near the idle limit.
    let started = Instant::now();
    for (i, piece) in body.chunks(body.len().div_ceil(32)).enumerate() {
        if let Err(e) = client.write_all(piece).await {
            panic!(
                "piece {i}, {:?} in: the connection was closed while the body was still arriving: {e}",
                started.elapsed()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(started.elapsed() > Duration::from_secs(3));
    read_429(&mut client, "the slow upload").await;
    assert!(inflight_bytes(&server).await <= (1024 * 1024) as f64);
    drop(holder);
    server.shutdown().await.unwrap();
}

/// A refused HTTP/1.1 upload gets its 429 over an intact connection. Exporters send the whole
/// body before they read the answer; closing the connection with the rest of the body unread
/// makes the kernel answer the client's next bytes with a reset, and the client then reports a
/// transport error instead of the 429 and its `Retry-After` (9 of 1,938 requests of the overload
/// benchmark, BENCHMARKS.md session 33). The server reads the rest of a refused body and drops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upload_still_sending_reads_its_429_not_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    let (server, holder) = server_with_budget_mostly_held(dir.path()).await;

    // Valid 8 MiB exports, sent whole before the answer is read, as Python's `requests` (the
    // OpenTelemetry Python exporter) does: each runs out of budget a few hundred KiB in.
    let (head, body) = padded_upload("refused", 8 * 1024 * 1024);
    for attempt in 0..5 {
        let mut client = TcpStream::connect(server.http_addr()).await.unwrap();
        client.write_all(head.as_bytes()).await.unwrap();
        if let Err(e) = client.write_all(&body).await {
            panic!("attempt {attempt}: the connection was reset while the body was sent: {e}");
        }
        read_429(&mut client, &format!("attempt {attempt}")).await;
        assert!(inflight_bytes(&server).await <= (1024 * 1024) as f64);
    }
    assert_eq!(
        server.stats().requests_by_status().get("http:429"),
        Some(&5)
    );
    drop(holder);
    server.shutdown().await.unwrap();
}
