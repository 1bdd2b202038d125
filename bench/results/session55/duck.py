"""duck.py STORE [N]: the benchmark's DuckDB TL002 and TL004 queries on STORE, N times each."""
import sys, os, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import bench_analyzer as b
data = sys.argv[1]
params = {"requires_approval": b.requires_approval(b.POLICY_SAMPLES)}
for f in ["tl002_unconfirmed_write.sql", "tl004_broken_trace_propagation.sql"]:
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        print(f, json.dumps(b.run_duckdb(data, f, 2, params)), flush=True)
