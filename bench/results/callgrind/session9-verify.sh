#!/bin/bash
# usage (from the checkout): TL=<tripline of main> SYNTH=<dir of tripline-load write .pb files> \
#   WORK=<scratch> session9-verify.sh COLLECT_BIN OUTNAME
# COLLECT_BIN takes `tripline collect`'s arguments (examples/collect, or a wrapper running
# `tripline-collector collect "$@"`). Sends the synthetic requests, samples/ and the shared recordings
# through it (`tripline ingest --via`), then prints the rows DuckDB reads from each store (hashed) and
# the hash of `tripline check --format json` over it. Session 9 (BENCHMARKS.md).
set -euo pipefail
BIN=$1; NAME=$2
TL=${TL:-tripline}
OUT=${WORK:-/tmp}/verify-$NAME; rm -rf $OUT; mkdir -p $OUT
for input in synth:${SYNTH:-/tmp/synth-pb} samples:./samples/traces:./samples/traces-2026-07-28 recordings:${RECORDINGS:-../shared/recordings}; do
  label=${input%%:*}; paths=${input#*:}
  D=$OUT/$label; mkdir -p $D
  $BIN --data-dir $D/store --http 127.0.0.1:0 --grpc 127.0.0.1:0 > $D/collect.log 2>&1 &
  PID=$!
  for i in $(seq 100); do grep -q "listening" $D/collect.log && break; sleep 0.2; done
  HTTP=$(grep -o 'http=[^ ]*' $D/collect.log | head -1 | cut -d= -f2)
  $TL ingest --via http://$HTTP ${paths//:/ } > $D/ingest.log 2>&1 || { cat $D/ingest.log; }
  kill -TERM $PID; wait $PID || true
  ~/.cache/tripline-venv/bin/python - "$D/store" > $D/rows.txt <<'PY'
import duckdb, sys, hashlib
store = sys.argv[1]
con = duckdb.connect()
rows = con.execute(f"SELECT * EXCLUDE (received_at) FROM read_parquet('{store}/**/*.parquet', union_by_name=true) ORDER BY trace_id, span_id").fetchall()
print(len(rows))
for r in rows: print(repr(r))
PY
  $TL check --data-dir $D/store --format json > $D/check.json 2>$D/check.err || true
  echo "$label rows=$(head -1 $D/rows.txt) rows_sha=$(sha256sum < $D/rows.txt | cut -c1-16) check_sha=$(sha256sum < $D/check.json | cut -c1-16) check_bytes=$(wc -c < $D/check.json)"
done
