#!/usr/bin/env python3
"""Collector throughput benchmark: tripline `collect` against otlp2parquet, same stream, one run.

Why a script and not a test: every figure here is a timing on the machine at hand. This script
starts each receiver on loopback, drives it with `tripline-load`, samples its CPU and memory from
/proc, stops it with SIGTERM, and then asks DuckDB whether every acknowledged span is readable.
Every loop is bounded in count and in time. Results go to one JSON file that
`bench_report.py` turns into the BENCHMARKS.md tables.

Usage (scripts/bench calls it): bench_collector.py --tripline BIN --load BIN --otlp2parquet BIN
    --work DIR --out results.json [--secs 20]
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
LISTEN_RE = re.compile(r"tripline collect: listening http=(\S+) grpc=(\S+) data_dir=(\S+)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_secs(pid):
    """utime + stime of a live process, from /proc/<pid>/stat, in seconds (None if gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # fields after the ")" that closes the command name; utime, stime are fields 14 and 15
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_mem_kib(pid):
    """(VmRSS, VmHWM) in KiB from /proc/<pid>/status (None if gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    k, v = line.split(":", 1)
                    out[k] = int(v.split()[0])
    except OSError:
        return None
    return out.get("VmRSS"), out.get("VmHWM")


def kib_to_mib(kib):
    """KiB to MiB, None kept (a figure not seen is not reported as zero)."""
    return kib / 1024 if kib is not None else None


class Sampler(threading.Thread):
    """Samples RSS and CPU of a pid every `period` seconds until stopped (bounded by max_samples)."""

    def __init__(self, pid, period=0.25, max_samples=20_000):
        super().__init__(daemon=True)
        self.pid, self.period, self.max_samples = pid, period, max_samples
        self.samples = []  # (t, rss_kib, hwm_kib, cpu_s)
        self.stop_event = threading.Event()
        self.t0 = time.monotonic()

    def run(self):
        while not self.stop_event.is_set() and len(self.samples) < self.max_samples:
            mem = proc_mem_kib(self.pid)
            cpu = proc_cpu_secs(self.pid)
            if mem is None or cpu is None:
                break
            self.samples.append((round(time.monotonic() - self.t0, 3), mem[0], mem[1], cpu))
            self.stop_event.wait(self.period)

    def stop(self):
        self.stop_event.set()
        self.join(timeout=5)


class Server:
    """A receiver child process: started, sampled, stopped with SIGTERM, reaped with wait4."""

    def __init__(self, name, argv, log_path, env=None, cwd=None):
        self.name = name
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=cwd)
        self.lines = []
        self.listening = threading.Event()
        self.http = self.grpc = None
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.write(line)
            self.log.flush()
            m = LISTEN_RE.search(line)
            if m:
                self.http, self.grpc = m.group(1), m.group(2)
                self.listening.set()

    def stop(self, timeout=120):
        """SIGTERM, wait (bounded), return rusage totals: cpu seconds and the receiver's own peak
        RSS (KiB).

        The peak is the process's VmHWM, read every 10 ms until it exits, so the flush after
        SIGTERM is in it. Not `ru_maxrss` from wait4: Linux carries the high-water mark of the
        image a process exec'd from into it, and that image is this harness (spawned by vfork,
        so its whole address space: DuckDB included after the first readability check). Until
        session 33 every "peak RSS" here was at least the harness's size. None when the process
        was gone before its VmHWM could be read.
        """
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        killed = False
        hwm_kib = 0
        while True:
            mem = proc_mem_kib(self.proc.pid)
            if mem and mem[1]:
                hwm_kib = max(hwm_kib, mem[1])
            pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline and not killed:
                self.proc.kill()
                killed = True
                deadline += 10
            elif killed and time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not exit after SIGKILL")
            time.sleep(0.01)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        return {
            "exit_code": self.proc.returncode,
            "killed": killed,
            "cpu_secs_total": ru.ru_utime + ru.ru_stime,
            "max_rss_kib": hwm_kib or None,
            "rusage_maxrss_kib": ru.ru_maxrss,
        }


def wait_http(url, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"no answer from {url} within {timeout}s")


def start_tripline(args, data_dir, log_path, extra=()):
    argv = [args.tripline, "collect", "--data-dir", data_dir, "--http", "127.0.0.1:0",
            "--grpc", "127.0.0.1:0", *args.tripline_args.split(), *extra]
    s = Server("tripline", argv, log_path)
    if not s.listening.wait(60):
        s.stop(10)
        raise RuntimeError(f"tripline collect did not print its listening line; see {log_path}")
    return s, f"http://{s.http}", f"http://{s.grpc}"


def start_otlp2parquet(args, data_dir, log_path):
    port = free_port()
    # Its defaults (batch 200k rows / 128 MB / 10 s, uncompressed Parquet); only the address
    # (loopback), the log level and the output directory are set, through its OTLP2PARQUET_*
    # environment overrides. It runs in its work dir so no stray config.toml is picked up.
    env = dict(os.environ, OTLP2PARQUET_LISTEN_ADDR=f"127.0.0.1:{port}",
               OTLP2PARQUET_LOG_LEVEL="warn", OTLP2PARQUET_STORAGE_BACKEND="fs",
               OTLP2PARQUET_STORAGE_PATH=data_dir)
    s = Server("otlp2parquet", [args.otlp2parquet, "serve"], log_path, env=env,
               cwd=os.path.dirname(data_dir))
    wait_http(f"http://127.0.0.1:{port}/health")
    return s, f"http://127.0.0.1:{port}"


ACK_STAGE_RE = re.compile(
    r'^tripline_ack_stage_seconds_(bucket|sum|count)\{stage="([a-z_]+)"(?:,le="([^"]+)")?\} (\S+)$')


def ack_stages(http_base):
    """tripline's own histogram of where each acknowledgement's time went (`/metrics`,
    `tripline_ack_stage_seconds`): per stage the count, the mean and the bucket bounds that hold
    the median and the 99th percentile, in ms. None if the endpoint did not answer."""
    try:
        with urllib.request.urlopen(f"{http_base}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    return parse_ack_stages(text)


def parse_ack_stages(text):
    """`ack_stages` of a `/metrics` text already read."""
    stages = {}
    for line in text.splitlines():
        m = ACK_STAGE_RE.match(line)
        if not m:
            continue
        kind, stage, le, value = m.groups()
        st = stages.setdefault(stage, {"buckets": []})
        if kind == "bucket":
            st["buckets"].append((float("inf") if le == "+Inf" else float(le), float(value)))
        else:
            st[kind] = float(value)
    out = {}
    for stage, st in stages.items():
        n = st.get("count", 0)
        def bound(q):
            rank = max(1, -(-q * n // 1))
            for le, cum in st["buckets"]:
                if cum >= rank:
                    return le * 1000
            return None
        out[stage] = {"count": n, "mean_ms": st.get("sum", 0) * 1000 / n if n else None,
                      "p50_bound_ms": bound(0.5) if n else None,
                      "p99_bound_ms": bound(0.99) if n else None}
    return out


def alternate_builds(measure, rounds, out_path, labels=("a", "b"), **fields):
    """Two collector builds alternated round by round (the A/B record scripts under
    `bench/results`): for each round and label, `measure(args, round)` on an
    `argparse.Namespace` of the build's binary (the environment variable named by the label in
    capitals), `LOAD`, a work directory of its own under `WORK`, and `fields`. Each row, round
    and build first, is printed as a JSON line as it comes; all of them are written to
    `out_path`."""
    runs = []
    for i in range(rounds):
        for label in labels:
            args = argparse.Namespace(tripline=os.environ[label.upper()],
                                      load=os.environ["LOAD"],
                                      work=os.path.join(os.environ["WORK"], label), **fields)
            row = {"round": i, "build": label, **measure(args, i)}
            print(json.dumps(row), flush=True)
            runs.append(row)
    with open(out_path, "w") as f:
        json.dump(runs, f, indent=1)
    return runs


def run_load(args, endpoint, protocol, secs, concurrency, batch, rate=None, seed=1,
             backoff_ms=20, prebuilt=0, warmup=0.0):
    argv = [args.load, "send", "--endpoint", endpoint, "--protocol", protocol,
            "--batch", str(batch), "--concurrency", str(concurrency),
            "--duration-secs", str(secs), "--seed", str(seed),
            "--backoff-ms", str(backoff_ms), "--timeout-secs", "30"]
    if rate:
        argv += ["--rate", f"{rate:.0f}"]
    if prebuilt:
        argv += ["--prebuilt", str(prebuilt)]
    if warmup:
        argv += ["--warmup-secs", f"{warmup:g}"]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=secs + 120)
    if p.returncode != 0:
        raise RuntimeError(f"tripline-load failed ({p.returncode}): {p.stderr.strip()}")
    report = json.loads(p.stdout)
    report["wall_secs"] = time.monotonic() - t0
    return report


def parquet_files(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.endswith(".parquet")]
    return out


def dir_bytes(root):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)


def duckdb_counts(files, id_col):
    import duckdb
    if not files:
        return {"rows": 0, "distinct_span_ids": 0}
    con = duckdb.connect()
    rows, distinct = con.execute(
        f"SELECT count(*), count(DISTINCT {id_col}) FROM read_parquet(?, union_by_name=true)",
        [files]).fetchone()
    return {"rows": rows, "distinct_span_ids": distinct}


def otlp2parquet_span_id_col(files):
    import duckdb
    cols = [r[0] for r in duckdb.connect().execute(
        "DESCRIBE SELECT * FROM read_parquet(?)", [files[:1]]).fetchall()]
    for c in ("span_id", "SpanId", "spanId"):
        if c in cols:
            return c
    raise RuntimeError(f"no span id column in otlp2parquet output: {cols}")


def peak_run(args, name, protocol="http"):
    """Max acknowledged throughput, CPU, RSS, bytes on disk, and the readability check."""
    work = os.path.join(args.work, f"{name}-{protocol}-peak")
    shutil.rmtree(work, ignore_errors=True)
    data = os.path.join(work, "data")
    os.makedirs(data)
    log = os.path.join(work, "server.log")
    if name == "tripline":
        server, http, grpc = start_tripline(args, data, log)
        endpoint = http if protocol == "http" else grpc
    else:
        server, endpoint = start_otlp2parquet(args, data, log)
    sampler = Sampler(server.proc.pid)
    sampler.start()
    cpu_before = proc_cpu_secs(server.proc.pid)
    report = run_load(args, endpoint, protocol, args.secs, args.concurrency, args.batch)
    cpu_after_load = proc_cpu_secs(server.proc.pid)
    mem_after_load = proc_mem_kib(server.proc.pid)
    stages = ack_stages(http) if name == "tripline" else None
    sampler.stop()
    t_stop = time.monotonic()
    totals = server.stop()
    shutdown_secs = time.monotonic() - t_stop
    files = parquet_files(data)
    pq_bytes = sum(os.path.getsize(f) for f in files)
    id_col = "span_id" if name == "tripline" else otlp2parquet_span_id_col(files)
    counts = duckdb_counts(files, id_col)
    acked = report["spans_acked"]
    cpu = totals["cpu_secs_total"]
    return {
        "receiver": name, "protocol": protocol, "load": report,
        "cpu_secs_during_load": (cpu_after_load or 0) - (cpu_before or 0),
        "cpu_secs_total": cpu,
        "acked_spans_per_sec": report["acked_spans_per_sec"],
        "spans_per_cpu_sec": acked / cpu if cpu else None,
        "peak_rss_mib": kib_to_mib(totals["max_rss_kib"]),
        "rusage_maxrss_mib": totals["rusage_maxrss_kib"] / 1024,
        "vmhwm_mib_after_load": (mem_after_load[1] / 1024) if mem_after_load else None,
        "rss_samples": sampler.samples[::4],
        "shutdown_secs": shutdown_secs, "exit_code": totals["exit_code"],
        "parquet_files": len(files), "parquet_bytes": pq_bytes,
        "data_dir_bytes_after_exit": dir_bytes(data),
        "bytes_per_span": pq_bytes / counts["rows"] if counts["rows"] else None,
        "duckdb": counts,
        "all_acked_readable": counts["rows"] == acked and counts["distinct_span_ids"] == acked,
        "ack_stages": stages,
    }


def latency_run(args, name, peak_rate):
    """p99 acknowledgement latency at 80% of the receiver's own measured peak (or at
    --latency-rate, to compare two builds at the same load)."""
    work = os.path.join(args.work, f"{name}-latency")
    shutil.rmtree(work, ignore_errors=True)
    data = os.path.join(work, "data")
    os.makedirs(data)
    log = os.path.join(work, "server.log")
    if name == "tripline":
        server, endpoint, _ = start_tripline(args, data, log)
    else:
        server, endpoint = start_otlp2parquet(args, data, log)
    rate = args.latency_rate or 0.8 * peak_rate
    prebuilt = getattr(args, "latency_prebuilt", 0)
    warmup = getattr(args, "latency_warmup", 0.0)
    report = run_load(args, endpoint, "http", args.secs, args.concurrency, args.batch, rate=rate,
                      seed=2, prebuilt=prebuilt, warmup=warmup)
    stages = ack_stages(endpoint) if name == "tripline" else None
    totals = server.stop()
    cpu = totals["cpu_secs_total"]
    # The same efficiency figure as the peak step, at a load the receiver sustains: no refusal
    # (and no retry) charges CPU to no acknowledged span here.
    settled = report.get("latency_after_warmup") or report["latency"]
    return {"receiver": name, "offered_spans_per_sec": rate, "prebuilt": prebuilt,
            "load": report,
            "p50_ms": report["latency"]["p50_ms"], "p99_ms": report["latency"]["p99_ms"],
            # The same requests less those sent in the first `warmup_secs` (the receiver's
            # start: it grows its memory and fills its caches under them).
            "warmup_secs": warmup,
            "settled_p50_ms": settled["p50_ms"], "settled_p99_ms": settled["p99_ms"],
            "cpu_secs_total": cpu,
            "spans_per_cpu_sec": report["spans_acked"] / cpu if cpu else None,
            "exit_code": totals["exit_code"], "ack_stages": stages}


def overload_run(args):
    """tripline under more load than it can take: does it refuse (429) with bounded memory?"""
    work = os.path.join(args.work, "tripline-overload")
    shutil.rmtree(work, ignore_errors=True)
    data = os.path.join(work, "data")
    os.makedirs(data)
    server, endpoint, _ = start_tripline(args, data, os.path.join(work, "server.log"))
    sampler = Sampler(server.proc.pid)
    sampler.start()
    report = run_load(args, endpoint, "http", args.secs, args.overload_concurrency,
                      args.overload_batch, seed=3, backoff_ms=0)
    sampler.stop()
    totals = server.stop()
    files = parquet_files(data)
    counts = duckdb_counts(files, "span_id")
    s = sampler.samples
    half = len(s) // 2
    rss = [x[1] for x in s]
    return {
        "concurrency": args.overload_concurrency, "batch": args.overload_batch, "load": report,
        "requests_refused": report["requests_refused"],
        "requests_acked": report["requests_acked"],
        "rss_mib_first_half_max": max(rss[:half]) / 1024 if half else None,
        "rss_mib_second_half_max": max(rss[half:]) / 1024 if rss else None,
        "peak_rss_mib": kib_to_mib(totals["max_rss_kib"]),
        "rusage_maxrss_mib": totals["rusage_maxrss_kib"] / 1024,
        "rss_samples": s[::4],
        "duckdb": counts,
        "all_acked_readable": counts["rows"] == report["spans_acked"]
        and counts["distinct_span_ids"] == report["spans_acked"],
        "exit_code": totals["exit_code"],
    }


def run_step(key, fn):
    """One step, after the page cache is written back; a failed step is reported, not raised."""
    print(f"bench_collector: {key} ...", file=sys.stderr, flush=True)
    # Each step starts with nothing left to write back: otlp2parquet does not fsync, and the
    # kernel writing its hundreds of MB back during the next step would slow that step's fsyncs
    # (tripline acknowledges only synced data) and charge one receiver's i/o to the other.
    os.sync()
    time.sleep(2)
    try:
        out = fn()
    except Exception as e:  # a failed step is reported, the others still run
        out = {"error": f"{type(e).__name__}: {e}"}
    brief = {k: v for k, v in out.items() if not isinstance(v, (dict, list))}
    print(f"bench_collector: {key}: {json.dumps(brief)}", file=sys.stderr, flush=True)
    return out


def run_pairs(res, fns, keys, pairs):
    """The peak steps `keys` (tripline's, then the peer's) `pairs` times, alternated.

    Why: the peer's spans per CPU-second moved by up to a quarter between sittings of one day
    (BENCHMARKS.md, session 30), as much as the change being measured. Runs next to each other
    share the machine's state, so each pair gives a ratio, and the median of those ratios is the
    figure; each receiver's median run (by spans per CPU-second) stands for it in the tables,
    with every run's figure kept beside it."""
    runs = {k: [] for k in keys}
    for _ in range(pairs):
        for k in keys:
            runs[k].append(run_step(k, fns[k]))
    per_pair = []
    for t, o in zip(*(runs[k] for k in keys)):
        a, b = t.get("spans_per_cpu_sec"), o.get("spans_per_cpu_sec")
        per_pair.append(a / b if a and b else None)
    for k in keys:
        ok = [r for r in runs[k] if r.get("spans_per_cpu_sec")]
        if not ok:
            res[k] = runs[k][0]
            continue
        med = dict(sorted(ok, key=lambda r: r["spans_per_cpu_sec"])[len(ok) // 2])
        med["spans_per_cpu_sec_all"] = [r.get("spans_per_cpu_sec") for r in runs[k]]
        med["all_runs_acked_readable"] = all(r.get("all_acked_readable") for r in runs[k])
        res[k] = med
    valid = sorted(r for r in per_pair if r is not None)
    res["pairs"] = {
        "count": pairs,
        "ratios": per_pair,
        "median_ratio": valid[len(valid) // 2] if valid else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tripline", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--otlp2parquet", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--secs", type=float, default=20)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--overload-concurrency", type=int, default=128)
    ap.add_argument("--overload-batch", type=int, default=2048)
    ap.add_argument("--tripline-args", default="",
                    help="extra `tripline collect` arguments, space-separated "
                         "(e.g. \"--writer-nice 10\")")
    ap.add_argument("--latency-rate", type=float,
                    help="offered spans/s of the latency steps (default: 80%% of the peak step)")
    ap.add_argument("--latency-prebuilt", type=int, default=4,
                    help="requests each connection of the latency steps builds before the run "
                         "and sends in turn (`tripline-load send --prebuilt`), so the "
                         "generator's own CPU stays out of the measured latency; 0 builds each "
                         "request as it is sent")
    ap.add_argument("--latency-warmup", type=float, default=2.0,
                    help="seconds at the start of each latency step whose requests are left out "
                         "of its settled p99 (`tripline-load send --warmup-secs`); the whole "
                         "run's p99 is reported too")
    ap.add_argument("--pairs", type=int, default=1,
                    help="run the two HTTP peak steps this many times, alternated (tripline, "
                         "otlp2parquet, tripline, ...); each receiver's median run is reported "
                         "and the ratio is the median of the per-pair ratios")
    ap.add_argument("--steps", default="all",
                    help="comma-separated subset of the steps (tripline_http, otlp2parquet_http, "
                         "tripline_grpc, tripline_latency, otlp2parquet_latency, "
                         "tripline_overload), or all")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    res = {"secs": args.secs, "batch": args.batch, "concurrency": args.concurrency,
           "tripline_args": args.tripline_args}
    steps = [
        ("tripline_http", lambda: peak_run(args, "tripline", "http")),
        ("otlp2parquet_http", lambda: peak_run(args, "otlp2parquet", "http")),
        ("tripline_grpc", lambda: peak_run(args, "tripline", "grpc")),
        ("tripline_latency", lambda: latency_run(
            args, "tripline", res.get("tripline_http", {}).get("acked_spans_per_sec"))),
        ("otlp2parquet_latency", lambda: latency_run(
            args, "otlp2parquet", res.get("otlp2parquet_http", {}).get("acked_spans_per_sec"))),
        ("tripline_overload", lambda: overload_run(args)),
    ]
    wanted = None if args.steps == "all" else set(args.steps.split(","))
    paired = ("tripline_http", "otlp2parquet_http")
    pairs = args.pairs if wanted is None or all(k in wanted for k in paired) else 1
    if pairs > 1:
        run_pairs(res, dict(steps), paired, pairs)
    for key, fn in steps:
        if wanted is not None and key not in wanted:
            continue
        if key in res:
            continue
        res[key] = run_step(key, fn)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
