//! `check --since last` and `check --follow` through the real binary (docs/incremental.md): over
//! a store built in two ingests, the incremental runs report exactly the findings one full
//! `check` reports, each once; a trace split across the two ingests (the host's call first, the
//! MCP server's span later) is judged with both halves; `--settle` keeps a half-arrived call from
//! being reported on half its spans; nothing new is said and exits 0; `--follow` prints JSON
//! lines and stops cleanly on SIGTERM with its state saved.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{repo, tripline};

const POLICY: &str = "samples/policy.toml";
const BROKEN: &str = "samples/traces/atlas-broken-propagation.json";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ingest(data: &Path, files: &[PathBuf]) {
    let mut args = vec!["ingest".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = tripline(data, &args);
    assert!(out.status.success(), "ingest: {}", text(&out.stderr));
}

/// Runs `check ARGS --format json --policy samples/policy.toml`; exit 0 or 1 (findings) only.
fn check_json(data: &Path, args: &[&str]) -> (Value, String) {
    let mut all = vec!["check", "--format", "json", "--policy", POLICY];
    all.extend_from_slice(args);
    let out = tripline(data, &all);
    let stderr = text(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "check {args:?} exited {:?}: {stderr}",
        out.status.code()
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check {args:?}: {e}: {}", text(&out.stdout)));
    (v, stderr)
}

fn since_last(data: &Path, state: &Path, extra: &[&str]) -> (Value, String) {
    let state = state.display().to_string();
    let mut args = vec!["--since", "last", "--state", state.as_str()];
    args.extend_from_slice(extra);
    check_json(data, &args)
}

/// Findings as whole JSON objects (every field), in a set.
fn findings(v: &Value) -> BTreeSet<String> {
    v["findings"]
        .as_array()
        .expect("findings[]")
        .iter()
        .map(|f| f.to_string())
        .collect()
}

/// Findings' identities (rule/trace/span).
fn keys(v: &Value) -> BTreeSet<String> {
    v["findings"]
        .as_array()
        .expect("findings[]")
        .iter()
        .map(key)
        .collect()
}

fn key(f: &Value) -> String {
    format!("{}/{}/{}", f["rule"], f["trace_id"], f["span_id"])
}

/// The keys (`rule/trace/span`) recorded beside the state file `state`: one file per rule,
/// `<state>.reported/<RULE>.keys`, an 8-byte header then 24-byte records (trace id, span id)
/// in order (docs/incremental.md).
fn reported_keys(state: &Path) -> BTreeSet<String> {
    let dir = PathBuf::from(format!("{}.reported", state.display()));
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(&dir).expect("key dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rule = name.strip_suffix(".keys").expect("only .keys files");
        let bytes = std::fs::read(e.path()).expect("keys");
        assert_eq!(&bytes[..8], b"TLKEYS1\n");
        let records: Vec<&[u8]> = bytes[8..].chunks(24).collect();
        assert!(records.iter().all(|r| r.len() == 24));
        assert!(records.windows(2).all(|w| w[0] < w[1]), "{name} not sorted");
        for r in records {
            out.insert(format!("{rule}/{}/{}", hex(&r[..16]), hex(&r[16..])));
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One more span (internal, no attribute, a child of the first span) in every trace of the
/// sample `sample`, as an OTLP/JSON file in `dir`: data that touches traces already checked.
fn late_spans(dir: &Path, sample: &str) -> PathBuf {
    let v: Value =
        serde_json::from_slice(&std::fs::read(repo().join(sample)).expect("sample")).expect("json");
    let mut firsts: Vec<Value> = Vec::new();
    for rs in v["resourceSpans"].as_array().expect("resourceSpans") {
        for ss in rs["scopeSpans"].as_array().expect("scopeSpans") {
            for sp in ss["spans"].as_array().expect("spans") {
                if !firsts.iter().any(|f| f["traceId"] == sp["traceId"]) {
                    firsts.push(sp.clone());
                }
            }
        }
    }
    let spans: Vec<Value> = firsts
        .iter()
        .enumerate()
        .map(|(i, parent)| {
            serde_json::json!({
                "traceId": parent["traceId"],
                "spanId": format!("{:016x}", 0xfeed_0000_u64 + i as u64),
                "parentSpanId": parent["spanId"],
                "name": "late-bookkeeping",
                "kind": 1,
                "startTimeUnixNano": parent["startTimeUnixNano"],
                "endTimeUnixNano": parent["startTimeUnixNano"],
            })
        })
        .collect();
    let doc = serde_json::json!({ "resourceSpans": [{
        "resource": v["resourceSpans"][0]["resource"],
        "scopeSpans": [{ "scope": { "name": "late" }, "spans": spans }],
    }]});
    let path = dir.join("late.json");
    std::fs::write(&path, doc.to_string()).expect("write");
    path
}

/// The sample file split in two OTLP/JSON files: the host's resource spans, then the MCP
/// servers' (whose `tools/call` spans are orphans: propagation is broken in this sample).
fn split_host_and_servers(dir: &Path) -> (PathBuf, PathBuf) {
    let v: Value =
        serde_json::from_slice(&std::fs::read(repo().join(BROKEN)).expect("sample")).expect("json");
    let rs = v["resourceSpans"].as_array().expect("resourceSpans");
    let host = serde_json::json!({ "resourceSpans": [rs[0].clone()] });
    let servers = serde_json::json!({ "resourceSpans": rs[1..].to_vec() });
    let (h, s) = (dir.join("host.json"), dir.join("servers.json"));
    std::fs::write(&h, host.to_string()).expect("write");
    std::fs::write(&s, servers.to_string()).expect("write");
    (h, s)
}

fn samples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("samples/traces"))
        .expect("samples")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn since_last_over_two_ingests_reports_the_full_check_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, state) = (dir.path().join("data"), dir.path().join("state.json"));
    let (host, servers) = split_host_and_servers(dir.path());
    // The samples are 10 minutes apart: crm-* and atlas-* are the earlier hours.
    let (first, second): (Vec<PathBuf>, Vec<PathBuf>) = samples()
        .into_iter()
        .filter(|p| !p.ends_with(BROKEN))
        .partition(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("crm-") || name.starts_with("atlas-")
        });
    assert!(!first.is_empty() && !second.is_empty());
    // Ingest 1: the earlier samples and the host's half of the broken-propagation run.
    let mut one = first;
    one.push(host);
    ingest(&data, &one);
    let (run1, _) = since_last(&data, &state, &[]);
    // Ingest 2: the rest, and the MCP servers' spans of that run, late.
    let mut two = second;
    two.push(servers);
    ingest(&data, &two);
    let (run2, stderr2) = since_last(&data, &state, &[]);
    let (full, _) = check_json(&data, &[]);

    assert!(!keys(&full).is_empty());
    let repeated: Vec<_> = keys(&run1).intersection(&keys(&run2)).cloned().collect();
    assert!(repeated.is_empty(), "reported twice: {repeated:?}");
    let union: BTreeSet<String> = findings(&run1).union(&findings(&run2)).cloned().collect();
    assert_eq!(union, findings(&full), "run 1 + run 2 != one full check");
    // The split call was judged in run 2, stitched to the host's client span from run 1.
    let late: Vec<&Value> = run2["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "TL004" && f["trace_id"] == "be23bb8012503371ed60568ba1feda00")
        .collect();
    assert_eq!(late.len(), 1, "{run2:#}");
    assert!(
        late[0]["message"]
            .as_str()
            .expect("message")
            .contains("although the host's client span 54cf107264352350"),
        "{}",
        late[0]
    );
    // Run 2 scanned the new files plus the look-back (an hour: some atlas-* runs, whose
    // findings run 1 reported and run 2 leaves out), not the first ingest's oldest hours.
    let inc = &run2["incremental"];
    assert!(inc["previous_run"].is_string(), "{inc}");
    assert!(inc["new_files"].as_u64().expect("new_files") > 0);
    assert!(inc["window_since"].is_string(), "{inc}");
    assert!(
        inc["outside_new_data"].as_u64().expect("outside") > 0,
        "{inc}"
    );
    let spans = |v: &Value| v["scanned"]["spans"].as_u64().expect("scanned.spans");
    assert!(spans(&run2) < spans(&full), "{stderr2}");

    // Nothing new: said on stderr, exit 0, no finding, no `scanned`.
    let out = tripline(
        &data,
        &[
            "check",
            "--since",
            "last",
            "--state",
            &state.display().to_string(),
            "--policy",
            POLICY,
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nothing new since"),
        "{}",
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["findings"], serde_json::json!([]));
    assert!(v.get("scanned").is_none(), "{v}");
    assert_eq!(v["incremental"]["new_files"], 0);
}

#[test]
fn since_last_in_small_windows_with_spilled_findings_and_ids_repeats_nothing_and_loses_nothing() {
    // Three ingests, three `--since last` runs, each cut into windows of a few spans,
    // spilling its findings to disk past one held finding (the first run streams the whole store
    // this way) and the new spans' ids past four held ids: together they report exactly what one full `check` (default windows, nothing
    // spilled) reports over the final store, each finding once.
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, state) = (dir.path().join("data"), dir.path().join("state.json"));
    let spill = dir.path().join("spill");
    std::fs::create_dir_all(&spill).expect("spill dir");
    let (host, servers) = split_host_and_servers(dir.path());
    let rest: Vec<PathBuf> = samples()
        .into_iter()
        .filter(|p| !p.ends_with(BROKEN))
        .collect();
    let third = rest.len().div_ceil(3);
    let mut parts: Vec<Vec<PathBuf>> = rest.chunks(third).map(<[PathBuf]>::to_vec).collect();
    assert_eq!(parts.len(), 3);
    parts[0].push(host);
    parts[1].push(servers);
    // A late span in every trace of a first-ingest sample with findings: run 3 judges those
    // traces again, and must not repeat their findings.
    parts[2].push(late_spans(
        dir.path(),
        "samples/traces/atlas-prohibited-export.json",
    ));
    let run = || -> (Value, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_tripline"))
            .current_dir(repo())
            .env("TRIPLINE_LOG", "warn")
            .env("TRIPLINE_SPILL_FINDINGS", "1")
            .env("TRIPLINE_SPILL_IDS", "4")
            .env("TRIPLINE_WINDOW_TRACE", "1")
            .arg("--data-dir")
            .arg(&data)
            .args([
                "check", "--since", "last", "--format", "json", "--policy", POLICY,
            ])
            .args(["--window-spans", "5", "--spill-dir"])
            .arg(&spill)
            .arg("--state")
            .arg(&state)
            .output()
            .expect("run");
        let stderr = text(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
        (v, stderr)
    };
    let mut runs = Vec::new();
    for part in &parts {
        ingest(&data, part);
        runs.push(run());
    }
    let (full, _) = check_json(&data, &[]);
    // The first run was cut into many windows and spilled its findings.
    let windows: usize = runs[0]
        .1
        .lines()
        .find_map(|l| l.strip_prefix("planned ")?.split(' ').next()?.parse().ok())
        .expect("planned N windows");
    assert!(windows > 3, "{}", runs[0].1);
    assert!(
        runs[0]
            .1
            .lines()
            .any(|l| l.starts_with("findings: ") && !l.contains(", 0 sorted runs spilled")),
        "{}",
        runs[0].1
    );
    // The later runs held at most 4 of the new spans' ids (and trace ids) in memory: the rest
    // were looked up in sorted files.
    for (_, stderr) in &runs[1..] {
        let line = stderr
            .lines()
            .find_map(|l| l.strip_prefix("new ids: "))
            .unwrap_or_else(|| panic!("no `new ids:` line: {stderr}"));
        let spilled: Vec<usize> = line
            .split(" + ")
            .map(|n| n.split(' ').next().unwrap().parse().expect(line))
            .collect();
        assert!(spilled[0] > 0 && spilled[1] > 0, "{line}");
        assert!(line.ends_with("(at most 4 held)"), "{line}");
        // So did the conversations of the new spans (five or more per later ingest).
        let line = stderr
            .lines()
            .find_map(|l| l.strip_prefix("new conversations: "))
            .unwrap_or_else(|| panic!("no `new conversations:` line: {stderr}"));
        let runs: usize = line.split(' ').next().unwrap().parse().expect(line);
        assert!(runs > 0, "{line}");
        assert!(line.ends_with("(at most 4 held)"), "{line}");
    }
    // No spill directory is left behind.
    assert_eq!(std::fs::read_dir(&spill).expect("spill").count(), 0);

    let mut seen = BTreeSet::new();
    let mut union = BTreeSet::new();
    for (i, (v, stderr)) in runs.iter().enumerate() {
        let listed: Vec<String> = v["findings"]
            .as_array()
            .expect("findings[]")
            .iter()
            .map(key)
            .collect();
        assert!(!listed.is_empty(), "run {}: {stderr}", i + 1);
        assert_eq!(
            v["incremental"]["new_findings"].as_u64(),
            Some(listed.len() as u64),
            "run {}",
            i + 1
        );
        for k in listed {
            assert!(seen.insert(k.clone()), "run {} repeats {k}", i + 1);
        }
        union.extend(findings(v));
    }
    assert_eq!(
        seen,
        keys(&full),
        "keys of the three runs != one full check"
    );
    assert_eq!(union, findings(&full), "the three runs != one full check");
    // With the ids in sorted files, findings in the look-back that touch no new span are still
    // told apart (and left to the runs that reported them).
    assert!(
        runs[1..]
            .iter()
            .any(|(v, _)| v["incremental"]["outside_new_data"].as_u64() > Some(0)),
        "{:?}",
        runs.iter()
            .map(|(v, _)| &v["incremental"])
            .collect::<Vec<_>>()
    );
    // Run 3 judged the first run's findings again (their traces got a span) and left them out.
    let third = &runs[2].0["incremental"];
    assert!(
        third["already_reported"].as_u64().expect("already") > 0,
        "{third}"
    );
    // Every reported key is recorded once, sorted, beside the state.
    let recorded = reported_keys(&state);
    let stripped: BTreeSet<String> = seen.iter().map(|k| k.replace('"', "")).collect();
    assert_eq!(recorded, stripped);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&state).expect("state")).expect("json");
    assert_eq!(saved["version"], 2);
    assert_eq!(saved["reported_keys"].as_u64(), Some(recorded.len() as u64));
    assert!(saved.get("reported").is_none(), "{saved}");
}

#[test]
fn settle_keeps_a_half_arrived_call_from_being_reported_on_half_its_spans() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (host, servers) = split_host_and_servers(dir.path());
    // The servers' spans arrive first: judged alone, the orphan looks like an uninstrumented
    // client ("no host span of this request is in the store").
    for (settle_first, expect_early) in [("1h", false), ("0s", true)] {
        let data = dir.path().join(format!("data-{settle_first}"));
        let state = dir.path().join(format!("state-{settle_first}.json"));
        ingest(&data, std::slice::from_ref(&servers));
        let (early, stderr) = since_last(&data, &state, &["--settle", settle_first]);
        let early_tl004: Vec<&Value> = early["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["rule"] == "TL004")
            .collect();
        if expect_early {
            // Without settling, the half-arrived call is judged at once, and that finding is
            // reported (and not retracted later: docs/incremental.md says so).
            assert!(!early_tl004.is_empty(), "{early:#}");
        } else {
            assert!(early_tl004.is_empty(), "{early:#}");
            assert!(
                stderr.contains("part file(s) committed less than 3600s ago wait"),
                "{stderr}"
            );
            assert_eq!(early["incremental"]["waiting_files"], 1, "{early:#}");
        }
        ingest(&data, std::slice::from_ref(&host));
        let (late, _) = since_last(&data, &state, &["--settle", "0s"]);
        let (full, _) = check_json(&data, &[]);
        let reported: BTreeSet<String> = keys(&early).union(&keys(&late)).cloned().collect();
        assert_eq!(reported, keys(&full), "settle {settle_first}");
        if !expect_early {
            // Settled: exactly the full check's findings, messages included (stitched).
            assert_eq!(findings(&late), findings(&full));
            assert!(late["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .all(|f| !f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("no host span of this request is in the store")));
        }
    }
}

#[test]
fn a_first_run_over_an_empty_store_is_the_empty_scan_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("spans")).expect("mkdir");
    let out = tripline(
        &data,
        &[
            "check",
            "--since",
            "last",
            "--state",
            &dir.path().join("s.json").display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is empty: no part files under spans/"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("s.json").exists());
}

#[test]
fn the_default_state_is_per_store_outside_it_and_bound_to_the_rules() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, xdg) = (dir.path().join("data"), dir.path().join("xdg"));
    ingest(&data, &[repo().join(BROKEN)]);
    let run = |args: &[&str]| -> Output {
        Command::new(env!("CARGO_BIN_EXE_tripline"))
            .current_dir(repo())
            .env("TRIPLINE_LOG", "warn")
            .env("XDG_STATE_HOME", &xdg)
            .arg("--data-dir")
            .arg(&data)
            .args(["check", "--since", "last"])
            .args(args)
            .output()
            .expect("run")
    };
    let out = run(&["--rule", "TL004"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut states: Vec<PathBuf> = std::fs::read_dir(xdg.join("tripline/check"))
        .expect("state dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    states.sort();
    // The state file, and beside it the directory of its reported findings' keys.
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(states[1].is_dir(), "{states:?}");
    assert_eq!(
        states[1].display().to_string(),
        format!("{}.reported", states[0].display())
    );
    let keys = reported_keys(&states[0]);
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k.starts_with("TL004/")), "{keys:?}");
    let state: Value =
        serde_json::from_slice(&std::fs::read(&states[0]).expect("state")).expect("state json");
    assert_eq!(state["scope"]["rules"], serde_json::json!(["TL004"]));
    assert!(!std::fs::read_dir(&data)
        .expect("data")
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains("state")));
    // Again: nothing new, exit 0 although the store has findings.
    let out = run(&["--rule", "TL004"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Another rule set with the same state is refused, not silently mixed.
    let out = run(&["--rule", "TL002"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("was made for data dir"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn follow_prints_each_new_finding_once_and_stops_on_sigterm_with_its_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, state) = (dir.path().join("data"), dir.path().join("state.json"));
    let (host, servers) = split_host_and_servers(dir.path());
    ingest(
        &data,
        &[repo().join("samples/traces/atlas-unapproved-order.json")],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_tripline"))
        .current_dir(repo())
        .env("TRIPLINE_LOG", "warn")
        .arg("--data-dir")
        .arg(&data)
        .args(["check", "--follow", "--since", "last", "--settle", "0s"])
        .args(["--interval", "0.2", "--policy", POLICY, "--state"])
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn follow");
    let (tx, rx) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let v: Value = serde_json::from_str(&line).expect("every line is one JSON object");
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    // Lines until (and including) the next batch line, waiting up to a generous deadline.
    let next_batch = || -> (Vec<Value>, Value) {
        let mut found = Vec::new();
        loop {
            let v = rx
                .recv_timeout(Duration::from_secs(120))
                .expect("a line from --follow");
            if v.get("batch").is_some() {
                return (found, v);
            }
            found.push(v);
        }
    };
    let (first, batch1) = next_batch();
    assert!(first.iter().any(|f| f["rule"] == "TL002"), "{first:?}");
    assert!(batch1["batch"]["coverage"].is_array(), "{batch1}");
    assert!(batch1["batch"]["scanned"]["spans"].as_u64() > Some(0));
    ingest(&data, &[host]);
    ingest(&data, &[servers]);
    let mut second = Vec::new();
    while !second.iter().any(|f: &Value| f["rule"] == "TL004") {
        second.extend(next_batch().0);
    }
    let first_keys: BTreeSet<String> = first.iter().map(key).collect();
    let second_keys: Vec<String> = second.iter().map(key).collect();
    assert!(
        second_keys.iter().all(|k| !first_keys.contains(k)),
        "repeated: {second_keys:?}"
    );
    let unique: BTreeSet<&String> = second_keys.iter().collect();
    assert_eq!(unique.len(), second_keys.len(), "{second_keys:?}");
    // Every line is a finding object with exactly the `check --format json` fields.
    let (full, _) = check_json(&data, &[]);
    let contract: BTreeSet<&str> = full["findings"][0]
        .as_object()
        .expect("finding")
        .keys()
        .map(String::as_str)
        .collect();
    for f in first.iter().chain(&second) {
        let fields: BTreeSet<&str> = f
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(fields, contract);
    }

    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&state).expect("state saved")).expect("json");
    let recorded = reported_keys(&state);
    for k in first_keys.iter().chain(&second_keys) {
        let k = k.replace('"', "");
        assert!(recorded.contains(&k), "{k} not in the saved keys");
    }
    assert_eq!(saved["reported_keys"].as_u64(), Some(recorded.len() as u64));
    // Resuming from the state: nothing is repeated.
    let (again, stderr) = since_last(&data, &state, &["--settle", "0s"]);
    assert_eq!(again["findings"], serde_json::json!([]), "{stderr}");
}
