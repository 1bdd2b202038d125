#!/bin/bash
# usage: pair.sh TAG BINDIR [extra tripline args]
# BINDIR holds tripline (or a wrapper running tripline-collector) and tripline-load; results go
# to $OUT (default: the current directory).
TAG=$1; BIN=$2; EXTRA=${3:-}
PY=~/.cache/tripline-venv/bin/python
O2P=~/.cache/otlp2parquet/bin/otlp2parquet
OUT=$(realpath "${OUT:-.}")
cd "$(dirname "$0")/../../.."
$PY scripts/bench_collector.py --tripline $BIN/tripline --load $BIN/tripline-load --otlp2parquet $O2P \
  --work /tmp/s15-bench/$TAG-16 --secs 20 --batch 1000 --concurrency 16 --tripline-args "$EXTRA" \
  --steps tripline_http,otlp2parquet_http,tripline_latency,otlp2parquet_latency \
  --out $OUT/$TAG-16x1000.json 2>> $OUT/$TAG.log
$PY scripts/bench_collector.py --tripline $BIN/tripline --load $BIN/tripline-load --otlp2parquet $O2P \
  --work /tmp/s15-bench/$TAG-8 --secs 20 --tripline-args "$EXTRA" \
  --steps tripline_http,otlp2parquet_http,tripline_latency,otlp2parquet_latency \
  --out $OUT/$TAG-8x512.json 2>> $OUT/$TAG.log
rm -rf /tmp/s15-bench/$TAG-16 /tmp/s15-bench/$TAG-8
