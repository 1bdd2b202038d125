"""Peak run at 16 x 1,000 with perf record (cpu-clock) on the receiver."""
import os, sys, json, argparse, shutil, subprocess, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import bench_collector as bc
name = sys.argv[1]; out = sys.argv[2]
args = argparse.Namespace(tripline=os.environ.get("BIN", ""), load=os.environ["LOAD"], otlp2parquet=os.path.expanduser("~/.cache/otlp2parquet/bin/otlp2parquet"),
                          tripline_args="", work=os.environ.get("WORK", "perf-work"))
work = os.path.join(os.environ.get("WORK", "perf-work"), name)
shutil.rmtree(work, ignore_errors=True); os.makedirs(work + "/data")
if name == "tripline":
    server, ep, _ = bc.start_tripline(args, work + "/data", work + "/log")
else:
    server, ep = bc.start_otlp2parquet(args, work + "/data", work + "/log")
pid = server.proc.pid
g = os.environ.get("CALLG", "")
cmd = ["perf", "record", "-e", "cpu-clock", "-F", os.environ.get("FREQ","999"), "-p", str(pid), "-o", out] + (["--call-graph", g] if g else [])
perf = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.5)
rep = bc.run_load(args, ep, "http", 20, 16, 1000)
perf.send_signal(2); perf.wait()
server.stop()
print(json.dumps({"acked": rep["spans_acked"], "refused": rep["requests_refused"]}))
