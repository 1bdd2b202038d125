"""Two collector builds alternated under overload (session 35): 128 connections of 2,048-span
requests for 20 s with no client back-off, as `scripts/bench`'s overload step. Per run: requests
acknowledged, refused (429) and failed (a transport error: no answer), peak RSS, and whether
DuckDB reads back every acknowledged span.
usage: A=BIN_A B=BIN_B LOAD=BIN/tripline-load WORK=DIR ROUNDS=3 overload-ab.py OUT.json"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc


def measure(args, _round):
    o = bc.overload_run(args)
    return {"acked": o["requests_acked"], "refused": o["requests_refused"],
            "failed": o["load"]["requests_failed"], "first_error": o["load"]["first_error"],
            "acked_spans_per_sec": round(o["load"]["acked_spans_per_sec"]),
            "peak_rss_mib": round(o["peak_rss_mib"], 1), "readable": o["all_acked_readable"]}


bc.alternate_builds(measure, int(os.environ.get("ROUNDS", "3")), sys.argv[1], secs=20,
                    overload_concurrency=128, overload_batch=2048, tripline_args="")
