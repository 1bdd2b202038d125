#!/bin/bash
# pass1.sh BIN STORE: runs check until pass 1 is reported, prints that line, kills it
BIN=$1; S=$2
TRIPLINE_WINDOW_TRACE=1 $BIN --data-dir $S check --policy /work/main/samples/policy.toml --format json 2>&1 >/dev/null | while read -r line; do
  case "$line" in *"conversation links"*) echo "$line"; pkill -f "$BIN --data-dir"; break;; esac
done
