//! Errors of the samples library. Messages are lowercase, carry the offending value and end with
//! what to try next.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SamplesError {
    #[error("cannot build the otlp exporter for {0}: {1}; check the endpoint url")]
    Exporter(String, String),
    #[error("cannot flush spans to the collector: {0}; is the endpoint reachable?")]
    Flush(String),
    #[error("cannot start the in-process otlp sink: {0}; is loopback networking available?")]
    Sink(std::io::Error),
    #[error(
        "cannot start mcp server process {0}: {1}; check that the generator binary is runnable"
    )]
    Spawn(String, std::io::Error),
    #[error("mcp server process {0} did not report its listening address: {1}; see its stderr")]
    ServerAddress(String, String),
    #[error("mcp {method} to server {server} failed: {reason}; see the server's stderr")]
    Mcp {
        server: String,
        method: String,
        reason: String,
    },
    #[error("scenario {scenario} calls tool {tool}, which no connected server lists; fix the scenario's steps")]
    UnknownTool { scenario: String, tool: String },
    #[error("unknown scenario {0}; run `tripline-samples --list` for the names")]
    UnknownScenario(String),
    #[error("unknown mcp server {0}; expected one of crm, atlas-tickets, atlas-parts, atlas-manuals, acme-support, swcraft")]
    UnknownServer(String),
    #[error("cannot write {0}: {1}; check the directory exists and is writable")]
    Write(PathBuf, std::io::Error),
    #[error("cannot encode otlp json: {0}; this is a bug, please report it")]
    Json(#[from] serde_json::Error),
    #[error("cannot send spans to {0}: {1}; is the collector running?")]
    Send(String, String),
    #[error("invalid option {0}: {1}")]
    Invalid(&'static str, String),
}
