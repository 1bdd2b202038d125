"""Two collector builds alternated under the overload step of `scripts/bench` (128 requests of
2,048 spans in flight, no client back-off, 20 s): how many requests were acknowledged, refused
(429) and failed with a transport error, peak RSS, and whether DuckDB read back every
acknowledged span (session 38: the refused bodies' drain).
usage: A=BIN_A B=BIN_B LOAD=BIN/tripline-load WORK=DIR ROUNDS=3 overload-ab.py OUT.json"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc


def measure(args, _round):
    o = bc.overload_run(args)
    load = o["load"]
    return {"acked": load["requests_acked"], "refused": load["requests_refused"],
            "failed": load["requests_failed"], "first_error": load.get("first_error"),
            "refusal_p99_ms": (load.get("refused_latency") or {}).get("p99_ms"),
            "peak_rss_mib": o["peak_rss_mib"], "readable": o["all_acked_readable"]}


bc.alternate_builds(measure, int(os.environ.get("ROUNDS", "3")), sys.argv[1], secs=20,
                    overload_concurrency=128, overload_batch=2048, tripline_args="")
