#!/usr/bin/env bash
# Parquet write instructions per column: the example's measured write with one column written
# as all-null at a time, against the write as shipped (N requests of 1,000 synth spans). A column
# that cannot be null (ids, name, kind, status) prints 0: the example refuses to null it.
# usage: parquet-per-column.sh target/profiling/examples/parquet_settings N FILE.parquet
#   (FILE: any span file, for the column names, e.g. one the example kept with TT_KEEP=FILE)
B=$1; N=${2:-5}
run() { valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*parquet_settings::measured*' "$B" "$N" 1000 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
base=$(run); echo "base $base"
cols=$(~/.cache/tripline-venv/bin/python3 -c "
import duckdb,sys
print(' '.join(r[0] for r in duckdb.connect().execute(\"DESCRIBE SELECT * FROM read_parquet('$3')\").fetchall()))")
for c in $cols; do
  v=$(TT_NULL_COLS=$c run); echo "$c $v $((base - v))"
done
