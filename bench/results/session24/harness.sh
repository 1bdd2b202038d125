#!/bin/sh
# scripts/bench_analyzer.py at 10M spans (the store reused), this session's build then the
# session-23 build, one repeat each: check's time and peak RSS beside DuckDB's TL002 + TL004 SQL.
# BINS: the folder holding one folder per build (s24e/ with tripline, tripline-load and
# tripline-samples; s23i/ with tripline); WORK: the harness's work folder (the stores);
# PYTHON: the test venv's python.
set -u
: "${BINS:?set BINS}" "${WORK:?set WORK}" "${PYTHON:?set PYTHON}"
cd "$(dirname "$0")/../../.."
for b in s24e s23i; do
  "$PYTHON" scripts/bench_analyzer.py --tripline "$BINS/$b/tripline" \
    --load "$BINS/s24e/tripline-load" --samples "$BINS/s24e/tripline-samples" \
    --work "$WORK" --out bench/results/session24/analyzer-10m-$b.json \
    --sizes 10000000 --reuse --repeat 1
done
