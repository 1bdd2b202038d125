#!/bin/sh
# scripts/bench_analyzer.py at 10M spans (the store reused), this session's build then the
# session-23 build, one repeat each: check's time and peak RSS beside DuckDB's TL002 + TL004 SQL.
set -u
cd /work/main
for b in s24e s23i; do
  ~/.cache/tripline-venv/bin/python scripts/bench_analyzer.py --tripline /work/bins/$b/tripline \
    --load /work/bins/s24e/tripline-load --samples /work/bins/s24e/tripline-samples \
    --work /work/bench --out bench/results/session24/analyzer-10m-$b.json \
    --sizes 10000000 --reuse --repeat 1
done
