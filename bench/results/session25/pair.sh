#!/bin/bash
# usage: pair.sh TAG BINDIR
# One pairing of tripline against otlp2parquet, both load shapes (16 x 1,000 and 8 x 512 spans),
# peak and 80%-of-peak latency runs. BINDIR holds `tripline` and `tripline-load` (bench-dev
# builds); O2P (default ~/.cache/otlp2parquet/bin/otlp2parquet) is the peer, PY the venv python.
# Results go to $OUT (default: the current directory), scratch stores under $WORK (default /tmp).
set -euo pipefail
TAG=$1; BIN=$2
PY=${PY:-$HOME/.cache/tripline-venv/bin/python}
O2P=${O2P:-$HOME/.cache/otlp2parquet/bin/otlp2parquet}
OUT=$(realpath "${OUT:-.}")
WORK=${WORK:-/tmp}/s25-bench
cd "$(dirname "$0")/../../.."
$PY scripts/bench_collector.py --tripline "$BIN/tripline" --load "$BIN/tripline-load" --otlp2parquet "$O2P" \
  --work "$WORK/$TAG-16" --secs 20 --batch 1000 --concurrency 16 \
  --steps tripline_http,otlp2parquet_http,tripline_latency,otlp2parquet_latency \
  --out "$OUT/$TAG-16x1000.json" 2>> "$OUT/$TAG.log"
$PY scripts/bench_collector.py --tripline "$BIN/tripline" --load "$BIN/tripline-load" --otlp2parquet "$O2P" \
  --work "$WORK/$TAG-8" --secs 20 \
  --steps tripline_http,otlp2parquet_http,tripline_latency,otlp2parquet_latency \
  --out "$OUT/$TAG-8x512.json" 2>> "$OUT/$TAG.log"
rm -rf "$WORK/$TAG-16" "$WORK/$TAG-8"
