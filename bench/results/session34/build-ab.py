"""Two collector builds alternated (session 34): per round a peak run (spans per CPU-second,
every acknowledged span read back by DuckDB) and a p99 run at RATE spans/s with the load built
before the run (`--prebuilt 4`), 16 connections x 1,000-span bodies, 20 s each.
usage: A=BIN_A B=BIN_B LOAD=BIN/tripline-load WORK=DIR RATE=110000 ROUNDS=3 [PEAK_ONLY=1] \
  build-ab.py OUT.json"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc


def measure(args, _round):
    p = bc.peak_run(args, "tripline")
    row = {"peak_spans_per_cpu_sec": round(p["spans_per_cpu_sec"]),
           "peak_acked_per_sec": round(p["load"]["acked_spans_per_sec"]),
           "peak_refused": p["load"]["requests_refused"],
           "readable": p["all_acked_readable"], "peak_rss_mib": p["peak_rss_mib"]}
    if not os.environ.get("PEAK_ONLY"):
        l = bc.latency_run(args, "tripline", None)
        row.update({"lat_p50": l["load"]["latency"]["p50_ms"],
                    "lat_p99": l["load"]["latency"]["p99_ms"],
                    "lat_spans_per_cpu_sec": round(l["spans_per_cpu_sec"]),
                    "lat_stages_p99_bound_ms": {k: v.get("p99_bound_ms") for k, v in
                                                (l.get("ack_stages") or {}).items()}})
    return row


bc.alternate_builds(measure, int(os.environ.get("ROUNDS", "3")), sys.argv[1], secs=20,
                    concurrency=16, batch=1000, tripline_args="",
                    latency_rate=float(os.environ.get("RATE", "110000")), latency_prebuilt=4)
