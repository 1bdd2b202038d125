"""Two tripline builds alternated (session 33, the on-worker change): per round a p99 run at
140,000 spans/s, then a peak run (rounds 1 and 2), 16 connections x 1,000-span bodies.
usage: OLD=BIN_A NEW=BIN_B LOAD=BIN/tripline-load WORK=DIR on-worker-ab.py"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc


def measure(args, i):
    l = bc.latency_run(args, "tripline", None)
    p = bc.peak_run(args, "tripline") if i < 2 else None
    return {"p50": l["p50_ms"], "p99": l["p99_ms"],
            "lat_spc": round(l["spans_per_cpu_sec"]), "lat_refused": l["load"]["requests_refused"],
            "stages": {k: v.get("p99_bound_ms") for k, v in (l.get("ack_stages") or {}).items()},
            "peak_spc": round(p["spans_per_cpu_sec"]) if p else None,
            "peak_acked": p["load"]["acked_spans_per_sec"] if p else None,
            "readable": p["all_acked_readable"] if p else None}


bc.alternate_builds(measure, 3, "ab.json", labels=("old", "new"), secs=20, concurrency=16,
                    batch=1000, tripline_args="--max-queue-bytes 67108864", latency_rate=140000)
