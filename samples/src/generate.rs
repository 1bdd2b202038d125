//! Drives the scenarios: for each one, start the host's SDK pipeline and the server processes,
//! play the script, close everything (every process flushes its spans), and — in file mode —
//! merge what the in-process sink received into `<out>/<scenario>.json`.
//!
//! Deterministic mode: ids come from [`crate::ids::SeededIds`] seeded per scenario and process,
//! time from the Lamport clock of [`crate::clock`] starting at [`BASE_UNIX_SECS`] plus ten minutes
//! per scenario, and the conversation id from the scenario name. The processes still run
//! concurrently and talk over real pipes and sockets; only ids and timestamps are fixed.

use std::path::PathBuf;

use tracing::instrument::WithSubscriber;

use crate::error::SamplesError;
use crate::host::{ChildTelemetry, Host, ServerLauncher};
use crate::ids::{seed_from, splitmix64};
use crate::scenario::{self, Revision, Scenario};
use crate::sink::{self, Sink};
use crate::telemetry::{traces_url, Determinism, Telemetry, TelemetryConfig};

/// Logical time 0 of the first scenario in deterministic mode: 2026-11-02T09:00:00Z.
pub const BASE_UNIX_SECS: u64 = 1_793_610_000;
/// Logical time between scenarios.
pub const SCENARIO_SPACING_SECS: u64 = 600;
/// Logical time between the revisions' runs of the scenario table (one day).
pub const REVISION_OFFSET_SECS: u64 = 86_400;

/// Where spans go.
#[derive(Debug, Clone)]
pub enum Target {
    /// One OTLP/JSON file per scenario in this directory.
    Dir(PathBuf),
    /// An OTLP/HTTP collector (base URL or full `/v1/traces` URL).
    Endpoint(String),
}

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub target: Target,
    pub deterministic: bool,
    /// Scenario names to run; empty: all.
    pub only: Vec<String>,
    pub launcher: ServerLauncher,
    /// The MCP protocol revision every scenario is played on.
    pub revision: Revision,
}

/// What one scenario produced.
#[derive(Debug, Clone)]
pub struct Generated {
    pub name: &'static str,
    /// Spans written (file mode) — in endpoint mode the collector counts them.
    pub spans: Option<usize>,
    pub path: Option<PathBuf>,
}

/// The scenarios selected by `only`, with their index in the full table (it fixes their time).
pub fn select(only: &[String]) -> Result<Vec<(usize, Scenario)>, SamplesError> {
    let all: Vec<(usize, Scenario)> = scenario::all().into_iter().enumerate().collect();
    for name in only {
        if !all.iter().any(|(_, s)| s.name == name) {
            return Err(SamplesError::UnknownScenario(name.clone()));
        }
    }
    Ok(all
        .into_iter()
        .filter(|(_, s)| only.is_empty() || only.iter().any(|o| o == s.name))
        .collect())
}

pub async fn generate(options: &GenerateOptions) -> Result<Vec<Generated>, SamplesError> {
    let scenarios = select(&options.only)?;
    let (sink, endpoint) = match &options.target {
        Target::Dir(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| SamplesError::Write(dir.clone(), e))?;
            let sink = Sink::start().await?;
            let endpoint = sink.endpoint();
            (Some(sink), endpoint)
        }
        Target::Endpoint(url) => (None, url.clone()),
    };
    let mut out = Vec::new();
    for (index, scenario) in scenarios {
        run_one(options, &endpoint, index, &scenario).await?;
        let generated = match (&options.target, &sink) {
            (Target::Dir(dir), Some(sink)) => {
                let merged = sink::merge(sink.take());
                let path = dir.join(format!("{}.json", scenario.name));
                sink::write_json(&path, &merged)?;
                Generated {
                    name: scenario.name,
                    spans: Some(sink::span_count(&merged)),
                    path: Some(path),
                }
            }
            _ => Generated {
                name: scenario.name,
                spans: None,
                path: None,
            },
        };
        out.push(generated);
    }
    Ok(out)
}

async fn run_one(
    options: &GenerateOptions,
    endpoint: &str,
    index: usize,
    scenario: &Scenario,
) -> Result<(), SamplesError> {
    let base_unix_nanos = (BASE_UNIX_SECS
        + REVISION_OFFSET_SECS * options.revision as u64
        + SCENARIO_SPACING_SECS * index as u64)
        * 1_000_000_000;
    let key = options.revision.key(scenario.name);
    let determinism = options.deterministic.then(|| Determinism {
        seed: seed_from(&format!("{key}/host")),
        base_unix_nanos,
    });
    let conversation_id = if options.deterministic {
        format!("conv-{:016x}", seed_from(&key))
    } else {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        format!(
            "conv-{:016x}",
            splitmix64(nanos ^ u64::from(std::process::id()))
        )
    };
    let telemetry = Telemetry::start(&TelemetryConfig {
        service_name: format!("{}-host", scenario.agent),
        scope: "tripline-samples/agent-host",
        role: "agent-host",
        traces_url: traces_url(endpoint),
        determinism,
    })?;
    let child = ChildTelemetry {
        endpoint: endpoint.to_string(),
        determinism: determinism.map(|d| (d.seed, d.base_unix_nanos)),
    };
    let mut host = Host::new(
        scenario,
        telemetry.dispatch.clone(),
        telemetry.clock.clone(),
        conversation_id,
    );
    // The host runs with its dispatcher as the default: when a child span closes, the registry
    // releases the parent through the *current* dispatcher, so this keeps parents closing too.
    let dispatch = telemetry.dispatch.clone();
    let (played, closed) = async {
        let played = async {
            host.connect(&options.launcher, &child, options.revision)
                .await?;
            host.discover().await?;
            host.run().await
        }
        .await;
        (played, host.close().await)
    }
    .with_subscriber(dispatch)
    .await;
    let flushed = tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .map_err(|e| SamplesError::Flush(e.to_string()))?;
    played?;
    closed?;
    flushed
}
