//! The MCP methods (`mcp.method.name` values) and the protocol revision each belongs to, so the
//! analyzer classifies requests of both first-class revisions alike: 2025-11-25 (sessions, the
//! `initialize` handshake) and 2026-07-28 (stateless: no session, `server/discover`,
//! `subscriptions/listen`).
//!
//! Sources (read 2026-12-01):
//! - the well-known values and their deprecations: semantic-conventions-genai
//!   `model/mcp/registry.yaml` at commit `4172e394d28f2d26ec4a4514a45f153580c68670`
//!   (<https://github.com/open-telemetry/semantic-conventions-genai/blob/4172e394d28f2d26ec4a4514a45f153580c68670/model/mcp/registry.yaml>);
//! - the revision's changes: MCP specification 2026-07-28 changelog
//!   (<https://modelcontextprotocol.io/specification/2026-07-28/changelog>,
//!   `docs/specification/2026-07-28/changelog.mdx` at
//!   `ab58d0d5983f6e7427a3a726b1b2db49bf3753d3` of modelcontextprotocol/modelcontextprotocol):
//!   SEP-2567 (no sessions), SEP-2575 (no `initialize`, `ping`, `logging/setLevel`;
//!   `server/discover`; `subscriptions/listen` replaces `resources/subscribe` /
//!   `resources/unsubscribe`), SEP-2577 (roots, sampling and logging deprecated).
//!
//! DESIGN.md has no rule for a deprecated *method* (TL007 is about attribute names, TL015 about
//! required attributes), so this table only classifies; no rule reports a deprecated method.

/// The first revision without sessions or the `initialize` handshake.
pub const STATELESS_REVISION: &str = "2026-07-28";

/// Whether a message is a request (answered) or a notification (not answered, no context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Request,
    Notification,
}

/// What the 2026-07-28 revision did to a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// In both revisions.
    Active,
    /// New in 2026-07-28.
    Introduced,
    /// Deprecated or removed by 2026-07-28 (still used by peers on earlier revisions); the
    /// replacement method, where there is one.
    Deprecated { replaced_by: Option<&'static str> },
}

/// One well-known MCP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpMethod {
    /// The `mcp.method.name` value.
    pub name: &'static str,
    pub kind: MessageKind,
    pub status: Status,
}

const fn m(name: &'static str, kind: MessageKind, status: Status) -> McpMethod {
    McpMethod { name, kind, status }
}

use MessageKind::{Notification as N, Request as R};
use Status::{Active as A, Introduced as I};
const D: Status = Status::Deprecated { replaced_by: None };

/// Every well-known method, in the registry's order.
pub static METHODS: &[McpMethod] = &[
    m("notifications/cancelled", N, A),
    m("initialize", R, D),
    m("notifications/initialized", N, D),
    m("notifications/progress", N, A),
    m("ping", R, D),
    m("resources/list", R, A),
    m("resources/templates/list", R, A),
    m("resources/read", R, A),
    m("notifications/resources/list_changed", N, A),
    m(
        "resources/subscribe",
        R,
        Status::Deprecated {
            replaced_by: Some("subscriptions/listen"),
        },
    ),
    m("resources/unsubscribe", R, D),
    m("notifications/resources/updated", N, A),
    m("prompts/list", R, A),
    m("prompts/get", R, A),
    m("notifications/prompts/list_changed", N, A),
    m("tools/list", R, A),
    m("tools/call", R, A),
    m("notifications/tools/list_changed", N, A),
    m("logging/setLevel", R, D),
    m("notifications/message", N, A),
    m("sampling/createMessage", R, D),
    m("completion/complete", R, A),
    m("roots/list", R, D),
    m("notifications/roots/list_changed", N, D),
    m("elicitation/create", R, A),
    m("server/discover", R, I),
    m("subscriptions/listen", R, I),
    m("notifications/subscriptions/acknowledged", N, I),
];

/// The well-known method `name`, if it is one.
pub fn method(name: &str) -> Option<&'static McpMethod> {
    METHODS.iter().find(|d| d.name == name)
}

/// Whether `name` is a notification: the registry's word for well-known methods, the
/// `notifications/` prefix for the others (the JSON-RPC id is what really tells, and spans of
/// notifications carry none).
pub fn is_notification(name: &str) -> bool {
    match method(name) {
        Some(d) => d.kind == MessageKind::Notification,
        None => name.starts_with("notifications/"),
    }
}

/// Whether `mcp.protocol.version` names a stateless revision (2026-07-28 or later: revisions are
/// dates, so they order as strings).
pub fn is_stateless_revision(version: &str) -> bool {
    let v = version.trim();
    v.len() == STATELESS_REVISION.len()
        && v.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        && v >= STATELESS_REVISION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_kinds_follow_the_prefix() {
        let mut names: Vec<&str> = METHODS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METHODS.len());
        for d in METHODS {
            assert_eq!(
                d.kind == MessageKind::Notification,
                d.name.starts_with("notifications/"),
                "{}",
                d.name
            );
            if let Status::Deprecated {
                replaced_by: Some(r),
            } = d.status
            {
                assert!(method(r).is_some_and(|x| x.status == Status::Introduced));
            }
        }
    }

    #[test]
    fn the_2026_07_28_revision() {
        for new in ["server/discover", "subscriptions/listen"] {
            assert_eq!(method(new).map(|d| d.status), Some(Status::Introduced));
            assert!(!is_notification(new));
        }
        for old in [
            "initialize",
            "ping",
            "logging/setLevel",
            "sampling/createMessage",
            "roots/list",
        ] {
            assert!(
                matches!(
                    method(old).map(|d| d.status),
                    Some(Status::Deprecated { .. })
                ),
                "{old}"
            );
        }
        assert_eq!(method("tools/call").map(|d| d.status), Some(Status::Active));
        assert!(is_notification("notifications/subscriptions/acknowledged"));
        assert!(is_notification("notifications/vendor/thing"));
        assert!(!is_notification("tasks/get"));
        assert!(is_stateless_revision("2026-07-28"));
        assert!(is_stateless_revision("2027-01-15"));
        assert!(!is_stateless_revision("2025-11-25"));
        assert!(!is_stateless_revision("draft"));
        assert!(!is_stateless_revision(""));
    }
}
