//! Why a tool call failed, as the caller should read it.
//!
//! Every variant becomes a `CallToolResult` with `isError: true` and this message as its text
//! (never a JSON-RPC protocol error): the model calling the tool sees the message and can fix its
//! arguments. So every message names the offending value and says what to do next.

/// A tool call that could not produce its result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema, or a value in them is invalid (a bad
    /// time, trace id, rule code, report kind, policy path).
    #[error("{0}")]
    BadArgument(String),
    /// The statement given to `query` is not a single read-only query.
    #[error("{0}")]
    NotReadOnly(String),
    /// The thing asked for is not in the store (a trace id) or not known (a rule code).
    #[error("{0}")]
    NotFound(String),
    /// The store could not be read, or the scan read nothing (a scan that read nothing is an
    /// error, never an empty answer).
    #[error("{0}")]
    Store(String),
    /// The SQL failed to plan or run.
    #[error("{0}")]
    Query(String),
    /// The call ran longer than its time limit and was stopped.
    #[error("{what} did not finish within {limit_secs} s and was stopped; narrow it (a WHERE on start_time or trace_id, fewer columns, a LIMIT) or start the server with a larger --query-timeout-secs")]
    Timeout { what: &'static str, limit_secs: u64 },
    /// The client cancelled the request.
    #[error("cancelled by the client")]
    Cancelled,
    /// A bug: the result did not match the tool's own output schema, or a task panicked.
    #[error("internal error: {0}; please report it with the arguments of the call")]
    Internal(String),
}

impl ToolError {
    /// A short stable name of the failure class (logged, and recorded on the tool's own span as
    /// `tripline.mcp.error_kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::BadArgument(_) => "bad_argument",
            Self::NotReadOnly(_) => "not_read_only",
            Self::NotFound(_) => "not_found",
            Self::Store(_) => "store",
            Self::Query(_) => "query",
            Self::Timeout { .. } => "timeout",
            Self::Cancelled => "cancelled",
            Self::Internal(_) => "internal",
        }
    }
}
