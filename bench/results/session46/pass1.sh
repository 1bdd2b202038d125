#!/bin/bash
# pass1.sh BIN STORE: runs `check` from the repository root until pass 1 is reported, prints that
# line and kills the run (pass 1's time and memory without the windows after it).
BIN=$1; S=$2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
TRIPLINE_WINDOW_TRACE=1 "$BIN" --data-dir "$S" check --policy "$ROOT/samples/policy.toml" --format json 2>&1 >/dev/null | while read -r line; do
  case "$line" in *"conversation links"*) echo "$line"; pkill -f "$BIN --data-dir"; break;; esac
done
