#!/usr/bin/env python3
"""Rows in the Parquet files a windowed `check` touches, against the rows it keeps.

Usage: touched_rows.py STORE [WINDOW_SPANS]. Cuts the store's spans, in start order, into windows
of WINDOW_SPANS (default 250,000; the planner's cores, without its overlap) and sums, per window,
the rows of every file whose start-time range meets the window's. A file met by two windows has
its pages decompressed by both scans. Needs pyarrow.
"""
import glob, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq

store = sys.argv[1]; size = int(sys.argv[2]) if len(sys.argv) > 2 else 250_000
files = sorted(glob.glob(f'{store}/spans/**/*.parquet', recursive=True))
ranges, chunks = [], []
for f in files:
    col = pq.read_table(f, columns=['start_time_unix_nano']).column(0)
    mm = pc.min_max(col); ranges.append((mm['min'].as_py(), mm['max'].as_py(), len(col)))
    chunks.extend(col.chunks)
starts = pc.sort_indices(pa.chunked_array(chunks))
starts = pc.take(pa.chunked_array(chunks).combine_chunks(), starts).to_pylist()
cuts = starts[::size] + [starts[-1] + 1]
touched = sum(n for a, b in zip(cuts, cuts[1:]) for lo, hi, n in ranges if hi >= a and lo < b)
print(f'{len(files)} files, {len(starts)} rows, {len(cuts) - 1} windows of {size}: '
      f'{touched} rows in touched files, {touched / len(starts):.2f}x the rows kept')
