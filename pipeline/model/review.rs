//! A person's decision on a task (the `review` page): keep, reject or needs work,
//! with a note and, for a reject, a reason from the quality screen's flag taxonomy.
//!
//! A decision is about one content of a task: it is keyed by the instance id and the
//! hash of what the reviewer read ([`crate::store::reviews::content_hash`]). When a
//! task's content changes (re-extracted, re-validated with other labels), its earlier
//! decisions stay as history but no longer count: the task needs review again.
//! Plain data; the store keeps it, release and export read it.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

crate::spelled::spelled_enum! {
    /// What the reviewer decided; its spelling is the stored code.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Decision {
        /// The task is fair: publish it.
        Keep => "keep",
        /// The task should not be published (with a reason).
        Reject => "reject",
        /// The task could be kept after a fix (of its issue text, its tests, ...).
        NeedsWork => "needs_work",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a review decision; use keep, reject or needs_work")]
pub struct DecisionError(pub String);

impl FromStr for Decision {
    type Err = DecisionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Decision::ALL.into_iter().find(|decision| decision.as_str() == text).ok_or_else(|| DecisionError(text.into()))
    }
}

/// One stored decision: the last one written for this task content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewDecision {
    pub instance_id: String,
    /// The hash of the content the reviewer judged.
    pub content_hash: String,
    pub decision: Decision,
    /// For a reject: a code of the flag taxonomy (`review::quality::reject_reasons`).
    pub reason: Option<String>,
    pub note: String,
    /// Who decided (`review --reviewer`).
    pub reviewer: String,
    /// Time the page was open on this task content before its decisions, summed.
    pub seconds_spent: f64,
    /// When (RFC 3339, UTC).
    pub decided_at: String,
    /// A number that grows with every write to any decision of the store: what the
    /// page compares to see that a task was changed elsewhere.
    pub revision: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_round_trip_through_their_codes_and_unknown_ones_say_what_is_allowed() {
        for decision in Decision::ALL {
            assert_eq!(decision.as_str().parse::<Decision>().unwrap(), decision);
            assert_eq!(serde_json::to_string(&decision).unwrap(), format!("\"{decision}\""));
        }
        let error = "maybe".parse::<Decision>().unwrap_err();
        assert!(error.to_string().contains("keep, reject or needs_work"), "{error}");
    }
}
