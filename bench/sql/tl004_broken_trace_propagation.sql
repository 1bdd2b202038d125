-- TL004 broken-trace-propagation, as DuckDB SQL over the tripline store (table `spans`).
--
-- An MCP server span of a request (it has a jsonrpc request id; notifications do not) that is a
-- root, or whose parent is absent from the store. `client_trace_id` is the host's client span of
-- the same request (same method, tool and request id, overlapping time, same session where both
-- know it) found in another trace: context did not cross the boundary. NULL there = no client
-- span exists at all (the rule's second message). One row per orphaned server span.
WITH srv AS (
    SELECT trace_id, span_id, parent_span_id, mcp_method_name AS m, gen_ai_tool_name AS tool,
           jsonrpc_request_id AS rid, mcp_session_id AS sess,
           start_time_unix_nano AS s, end_time_unix_nano AS e
    FROM spans
    WHERE kind = 'SERVER' AND mcp_method_name IS NOT NULL AND jsonrpc_request_id IS NOT NULL
),
orphans AS (
    SELECT srv.* FROM srv
    WHERE srv.parent_span_id IS NULL
       OR NOT EXISTS (SELECT 1 FROM spans p
                      WHERE p.trace_id = srv.trace_id AND p.span_id = srv.parent_span_id)
),
clients AS (
    SELECT trace_id, mcp_method_name AS m, gen_ai_tool_name AS tool, jsonrpc_request_id AS rid,
           mcp_session_id AS sess, start_time_unix_nano AS s, end_time_unix_nano AS e
    FROM spans
    WHERE kind = 'CLIENT' AND mcp_method_name IS NOT NULL AND jsonrpc_request_id IS NOT NULL
)
SELECT hex(o.trace_id) AS trace_id, hex(o.span_id) AS span_id, o.tool,
       hex(any_value(c.trace_id)) AS client_trace_id
FROM orphans o LEFT JOIN clients c
  ON c.m = o.m AND c.rid = o.rid AND c.tool IS NOT DISTINCT FROM o.tool
 AND c.trace_id <> o.trace_id AND c.s <= o.e AND o.s <= c.e
 AND (c.sess IS NULL OR o.sess IS NULL OR c.sess = o.sess)
GROUP BY o.trace_id, o.span_id, o.tool
ORDER BY 1, 2;
