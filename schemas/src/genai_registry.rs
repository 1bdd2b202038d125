//! The GenAI conventions' own attribute registry, vendored and pinned: the `gen_ai.*` names that
//! are current, and the renames tripline's TL007 (deprecated-attribute) reports.
//!
//! Why vendored: the GenAI conventions moved out of core semantic conventions into their own
//! repository, `open-telemetry/semantic-conventions-genai`, which publishes no tagged release (it
//! evolves on `main`). Core semconv then marks the in-core `gen_ai.*` definitions deprecated only
//! *because they moved*, so resolving GenAI names against core would call every current name
//! deprecated. tripline resolves them against the GenAI registry instead, at a pinned commit, and
//! a test checks that no name listed here as current is ever reported as deprecated.
//!
//! Sources (read 2026-12-01 through the public-code index; no schema URL of the GenAI repository
//! could be confirmed, so the pin is by commit):
//! - current names: `model/gen-ai/registry.yaml` at [`REGISTRY_COMMIT`]
//!   (<https://github.com/open-telemetry/semantic-conventions-genai/blob/e8fc5751506258db1459d1bde47994e01dee922e/model/gen-ai/registry.yaml>),
//!   with the one later rename applied:
//! - `gen_ai.usage.cache_creation.input_tokens` → `gen_ai.usage.cache_write.input_tokens`
//!   (semantic-conventions-genai PR #440, changelog fragment `changelog.d/440.breaking.md` at
//!   [`CACHE_WRITE_RENAME_COMMIT`]);
//! - the renames inherited from core semconv (`gen_ai.system`, `gen_ai.usage.prompt_tokens` /
//!   `completion_tokens`, `gen_ai.openai.*`): core's
//!   `model/gen-ai/deprecated/registry-deprecated.yaml` at
//!   <https://github.com/open-telemetry/semantic-conventions/blob/055b333b02569c9fc03c102a9581a1bb618b8a69/model/gen-ai/deprecated/registry-deprecated.yaml>.
//!
//! `gen_ai.token.type` (a metric attribute) is left out: semantic-conventions-genai PR #374
//! replaced the histogram that used it, and its status after that could not be confirmed.

/// The repository the current names come from.
pub const REGISTRY_REPOSITORY: &str =
    "https://github.com/open-telemetry/semantic-conventions-genai";
/// The commit of `model/gen-ai/registry.yaml` the current names were read at.
pub const REGISTRY_COMMIT: &str = "e8fc5751506258db1459d1bde47994e01dee922e";
/// The commit of the changelog fragment recording the `cache_creation` → `cache_write` rename
/// (PR #440), applied on top of [`REGISTRY_COMMIT`].
pub const CACHE_WRITE_RENAME_COMMIT: &str = "b9449702673fa5ea79d3c4cee3733f6d5e2b1e40";
/// When the sources above were read.
pub const RETRIEVED: &str = "2026-12-01";

/// Every current `gen_ai.*` attribute of the pinned GenAI registry, sorted.
pub static CURRENT: &[&str] = &[
    "gen_ai.agent.description",
    "gen_ai.agent.id",
    "gen_ai.agent.name",
    "gen_ai.agent.version",
    "gen_ai.conversation.id",
    "gen_ai.data_source.id",
    "gen_ai.embeddings.dimension.count",
    "gen_ai.evaluation.explanation",
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.score.value",
    "gen_ai.input.messages",
    "gen_ai.operation.name",
    "gen_ai.output.messages",
    "gen_ai.output.type",
    "gen_ai.prompt.name",
    "gen_ai.provider.name",
    "gen_ai.request.choice.count",
    "gen_ai.request.encoding_formats",
    "gen_ai.request.frequency_penalty",
    "gen_ai.request.max_tokens",
    "gen_ai.request.model",
    "gen_ai.request.presence_penalty",
    "gen_ai.request.seed",
    "gen_ai.request.stop_sequences",
    "gen_ai.request.stream",
    "gen_ai.request.temperature",
    "gen_ai.request.top_k",
    "gen_ai.request.top_p",
    "gen_ai.response.finish_reasons",
    "gen_ai.response.id",
    "gen_ai.response.model",
    "gen_ai.response.time_to_first_chunk",
    "gen_ai.retrieval.documents",
    "gen_ai.retrieval.query.text",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.result",
    "gen_ai.tool.definitions",
    "gen_ai.tool.description",
    "gen_ai.tool.name",
    "gen_ai.tool.type",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.workflow.name",
];

/// Current names outside `gen_ai.*` that a GenAI rename points to (core semconv's
/// `registry-deprecated.yaml`, see the module docs: `gen_ai.openai.*` moved to `openai.*`).
pub static CURRENT_OTHER: &[&str] = &[
    "openai.request.service_tier",
    "openai.response.service_tier",
    "openai.response.system_fingerprint",
];

/// True when `name` is a current attribute of the pinned GenAI registry.
pub fn is_current(name: &str) -> bool {
    CURRENT.binary_search(&name).is_ok() || CURRENT_OTHER.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_names_are_sorted_unique_and_gen_ai() {
        let mut sorted = CURRENT.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, CURRENT, "CURRENT must stay sorted and unique");
        assert!(CURRENT.iter().all(|n| n.starts_with("gen_ai.")));
        assert!(is_current("gen_ai.usage.cache_write.input_tokens"));
        assert!(!is_current("gen_ai.usage.cache_creation.input_tokens"));
        assert!(!is_current("gen_ai.system"));
        assert!(is_current("openai.request.service_tier"));
    }

    #[test]
    fn pins_are_full_commits() {
        for c in [REGISTRY_COMMIT, CACHE_WRITE_RENAME_COMMIT] {
            assert_eq!(c.len(), 40);
            assert!(c.bytes().all(|b| b.is_ascii_hexdigit()));
        }
    }
}
