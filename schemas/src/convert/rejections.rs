//! The rejected spans of a request and the reasons listed for them, collected the same way
//! whether the request is converted ([`super::convert_request_bounded`]) or only validated
//! before it is acknowledged ([`super::validate_request`]): the collector's answer
//! (`partial_success`) must not depend on which of the two ran.

use super::MAX_REASONS;

/// Rejections noted so far.
#[derive(Debug, Default)]
pub(super) struct Rejections {
    rejected: usize,
    reasons: Vec<String>,
    unlisted: usize,
}

impl Rejections {
    /// Span `index` of the scope named `scope_name` is rejected because of `reason`.
    pub(super) fn note(&mut self, index: usize, scope_name: &str, reason: &str) {
        self.rejected += 1;
        let scope_label = if scope_name.is_empty() {
            "(unnamed)"
        } else {
            scope_name
        };
        let line = format!("span {index} of scope {scope_label}: {reason}");
        if self.reasons.len() < MAX_REASONS {
            if !self.reasons.contains(&line) {
                self.reasons.push(line);
            }
        } else {
            self.unlisted += 1;
        }
    }

    /// The count and the listed reasons (with a closing line for those not listed).
    pub(super) fn finish(mut self) -> (usize, Vec<String>) {
        if self.unlisted > 0 {
            self.reasons
                .push(format!("{} more rejected spans not listed", self.unlisted));
        }
        (self.rejected, self.reasons)
    }
}
