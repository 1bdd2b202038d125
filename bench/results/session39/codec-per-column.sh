#!/usr/bin/env bash
# What zstd costs and saves per column: the Parquet write of `parquet_settings 20 1000` with one
# column group left uncompressed at a time (TT_COLUMN_CODEC=none, TT_CODEC_COLS), against the
# shipped settings. Prints: group, instructions, bytes, instructions saved, bytes added.
set -euo pipefail
BIN=${BIN:-$HOME/.cache/tripline-release/profiling/examples/parquet_settings}
run() {
  local out
  out=$(env "$@" valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.percodec \
    --toggle-collect='*parquet_settings::measured*' "$BIN" 20 1000 2>&1)
  local ir bytes
  ir=$(grep -o 'Collected : [0-9]*' <<<"$out" | awk '{print $3}')
  bytes=$(grep -o 'parquet: [0-9]* bytes' <<<"$out" | awk '{print $2}')
  echo "$ir $bytes"
}
read -r base_ir base_bytes < <(run TT_X=1)
echo "base $base_ir $base_bytes"
for g in trace_id span_id parent_span_id \
  start_time,end_time,start_time_unix_nano,end_time_unix_nano,duration_ns,received_at \
  attributes tool_definitions events links dialects name \
  gen_ai_tool_call_arguments,gen_ai_tool_call_result,gen_ai_input_messages,gen_ai_output_messages,gen_ai_system_instructions,gen_ai_tool_definitions \
  gen_ai_tool_call_id,gen_ai_response_id,jsonrpc_request_id,mcp_session_id,gen_ai_conversation_id \
  tool_call_arguments_digest attributes_in_columns resource_attributes_json,scope_attributes_json \
  service_version,service_instance_id,scope_version,ingest_source,scope_schema_url; do
  read -r ir bytes < <(run TT_COLUMN_CODEC=none TT_CODEC_COLS="$g")
  echo "$g $ir $bytes $((base_ir - ir)) $((bytes - base_bytes))"
done
