"""Alternated runs of one tripline build with different `collect` arguments (session 33):
usage: alternate.py --tripline BIN/tripline --load BIN/tripline-load --work DIR --out F.json
[--rounds N] [--rate SPANS_PER_S] [--no-peak | --no-latency] --configs "ARGS" "ARGS" ..."""
import argparse, json, sys
sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "../../../scripts"))
import bench_collector as bc

p = argparse.ArgumentParser()
p.add_argument("--tripline"); p.add_argument("--load")
p.add_argument("--work"); p.add_argument("--rounds", type=int, default=2)
p.add_argument("--batch", type=int, default=1000); p.add_argument("--concurrency", type=int, default=16)
p.add_argument("--secs", type=float, default=20); p.add_argument("--out")
p.add_argument("--rate", type=float, default=100000)
p.add_argument("--no-latency", action="store_true")
p.add_argument("--no-peak", action="store_true")
p.add_argument("--configs", nargs="+", default=["", "--writer-nice 10"])
a = p.parse_args()
runs = []
for i in range(a.rounds):
    for k, cfg in enumerate(a.configs):
        args = argparse.Namespace(tripline=a.tripline, load=a.load, work=f"{a.work}/c{k}", secs=a.secs,
                                  concurrency=a.concurrency, batch=a.batch, tripline_args=cfg,
                                  latency_rate=a.rate)
        r = {"spans_per_cpu_sec": None, "load": {"spans_acked": 0, "requests_refused": None}, "peak_rss_mib": None, "cpu_secs_total": None, "all_acked_readable": None} if a.no_peak else bc.peak_run(args, "tripline")
        l = {"p50_ms": None, "p99_ms": None, "spans_per_cpu_sec": None, "load": {"requests_refused": None}} if a.no_latency else bc.latency_run(args, "tripline", None)
        row = {"round": i, "cfg": cfg, "spans_per_cpu_sec": r["spans_per_cpu_sec"],
               "acked_per_s": r["load"]["spans_acked"] / a.secs,
               "refused": r["load"]["requests_refused"], "peak_rss_mib": r["peak_rss_mib"], "cpu": r["cpu_secs_total"],
               "readable": r["all_acked_readable"],
               "lat_rate": a.rate, "p50": l["p50_ms"], "p99": l["p99_ms"],
               "lat_spc": l["spans_per_cpu_sec"], "lat_refused": l["load"]["requests_refused"]}
        print(json.dumps(row), flush=True)
        runs.append(row)
json.dump(runs, open(a.out, "w"), indent=1)
