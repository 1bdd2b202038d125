-- TL002 unconfirmed-write, as DuckDB SQL over the tripline store (table `spans`).
--
-- A tool whose effective policy is requires_approval executed without an approval before it: a
-- guardrail decision `require_approval` followed by `allow`, matched by tool call id (or, when
-- either side has no call id, by tool) within the same conversation or the same trace.
-- `$requires_approval` is the list of tools the policy file marks requires_approval
-- (scripts/bench_analyzer.py reads it from the same policy file `tripline check` gets).
-- One row per unconfirmed host `execute_tool` span.
--
-- Simplification against tripline's rule: tripline lets one approval cover one call; here an
-- approval covers every later call it matches. Both agree whenever call ids are recorded.
WITH policy AS (
    SELECT unnest($requires_approval::VARCHAR[]) AS tool
),
execs AS (
    SELECT s.trace_id, s.span_id, s.gen_ai_tool_name AS tool, s.gen_ai_tool_call_id AS call_id,
           s.gen_ai_conversation_id AS conv, s.start_time_unix_nano AS t
    FROM spans s JOIN policy p ON s.gen_ai_tool_name = p.tool
    WHERE s.gen_ai_operation_name = 'execute_tool' AND s.mcp_method_name IS NULL
      AND s.kind <> 'SERVER'
),
decisions AS (
    SELECT trace_id, gen_ai_tool_call_id AS call_id, gen_ai_tool_name AS tool,
           gen_ai_conversation_id AS conv, guardrail_decision AS d, start_time_unix_nano AS t
    FROM spans
    WHERE guardrail_decision IN ('require_approval', 'allow')
),
-- decisions that apply to an execution: same trace or same conversation, and same call id
-- (or same tool where a call id is missing)
matched AS (
    SELECT e.trace_id, e.span_id, e.t AS exec_t, d.d, d.t
    FROM execs e JOIN decisions d ON d.trace_id = e.trace_id
    WHERE d.call_id = e.call_id
       OR ((d.call_id IS NULL OR e.call_id IS NULL) AND d.tool = e.tool)
    UNION
    SELECT e.trace_id, e.span_id, e.t AS exec_t, d.d, d.t
    FROM execs e JOIN decisions d ON d.conv = e.conv AND d.trace_id <> e.trace_id
    WHERE d.call_id = e.call_id
       OR ((d.call_id IS NULL OR e.call_id IS NULL) AND d.tool = e.tool)
),
approved AS (
    SELECT r.trace_id, r.span_id
    FROM matched r JOIN matched a ON a.trace_id = r.trace_id AND a.span_id = r.span_id
    WHERE r.d = 'require_approval' AND a.d = 'allow'
      AND r.t <= a.t AND a.t <= a.exec_t
    GROUP BY ALL
)
SELECT hex(e.trace_id) AS trace_id, hex(e.span_id) AS span_id, e.tool
FROM execs e ANTI JOIN approved a ON a.trace_id = e.trace_id AND a.span_id = e.span_id
ORDER BY 1, 2;
