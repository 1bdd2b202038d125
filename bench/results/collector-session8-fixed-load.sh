#!/bin/bash
# usage: fixed.sh COLLECT_BIN LOAD_BIN BATCH CONC REQUESTS
# Runs the collector (COLLECT_BIN takes collect's arguments), sends a fixed number of requests,
# prints the collector's user/sys CPU and minor page faults during the load, and acked spans.
set -e
BIN=$1; LOAD=$2; BATCH=$3; CONC=$4; REQ=$5
D=$(mktemp -d)
"$BIN" --data-dir $D/store --http 127.0.0.1:0 --grpc 127.0.0.1:0 > $D/log 2>&1 &
PID=$!
for i in $(seq 50); do grep -q listening $D/log && break; sleep 0.1; done
HTTP=$(grep -o 'http=[^ ]*' $D/log | head -1 | cut -d= -f2)
st() { awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print f[8], f[12], f[13] }' /proc/$PID/stat; }  # minflt utime stime
B=$(st)
"$LOAD" send --endpoint http://$HTTP --protocol http --batch $BATCH --concurrency $CONC \
   --max-requests $REQ --duration-secs 600 --seed 1 --backoff-ms 20 --timeout-secs 30 > $D/load.json 2>$D/load.err
sleep 2   # let the writer drain
A=$(st)
RSS=$(grep VmHWM /proc/$PID/status | awk '{print $2}')
kill -TERM $PID; wait $PID 2>/dev/null || true
python3 - "$B" "$A" "$D/load.json" "$RSS" <<'PY'
import json, sys, os
b = list(map(int, sys.argv[1].split())); a = list(map(int, sys.argv[2].split()))
tck = os.sysconf("SC_CLK_TCK")
txt = open(sys.argv[3]).read()
try:
    r = json.loads(txt)
except Exception:
    r = json.loads(txt[txt.index("{"):])
acked = r.get("acked_spans") or r.get("spans_acked") or r
flt = a[0]-b[0]; ut = (a[1]-b[1])/tck; stt = (a[2]-b[2])/tck
print(json.dumps({"load": {k: r[k] for k in r if not isinstance(r[k], (list, dict))}, "minflt": flt, "user_s": ut, "sys_s": stt, "vmhwm_kib": int(sys.argv[4])}))
PY
rm -rf $D
