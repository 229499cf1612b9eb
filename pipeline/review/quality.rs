//! What the review page shows of the quality screen (`swe-harvest screen`): a task's
//! flags with their evidence, its score, verdict and difficulty, and the flag
//! taxonomy that a reviewer's reject reasons come from.
//!
//! The page reads a task's quality record through [`of_release_row`] (a release's
//! columns) and [`of_stored_tasks`] (the store) only, so that the screen's own types
//! are used in this one file.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::Task;
use crate::screen::FlagCode;
use crate::store::StoreError;

/// One flag the screen raised on a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    pub code: String,
    /// The screen's one-line reason.
    pub reason: String,
    /// The exact strings the screen found (identifiers, strings, URLs), which the page
    /// highlights in the issue and the diffs.
    pub evidence: Vec<String>,
    /// What the flag was worth on the development data, shown with the reason
    /// (`precision 1.00 (7 of 7 development tasks raising it filtered out)`).
    pub precision: Option<String>,
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
    /// How sure the difficulty estimate is (its agreement with annotators).
    pub difficulty_note: Option<String>,
}

/// How far the difficulty estimate goes, in a few words for the page.
fn difficulty_note() -> String {
    let agreement = crate::screen::difficulty::AGREEMENT;
    format!(
        "an estimate from the patch's size: the annotators' bucket for {:.0}% of development tasks (kappa {:.2})",
        100.0 * agreement.exact,
        agreement.kappa
    )
}

/// A reason a reviewer can give for a reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RejectReason {
    pub code: &'static str,
    pub label: &'static str,
}

/// The reject reasons: the screen's flag taxonomy (each flag's code and meaning), then
/// `other`.
pub fn reject_reasons() -> Vec<RejectReason> {
    FlagCode::ALL
        .into_iter()
        .map(|flag| RejectReason { code: flag.as_str(), label: flag.meaning() })
        .chain([RejectReason { code: "other", label: "another reason (say it in the note)" }])
        .collect()
}

/// Whether `code` is a reject reason.
pub fn is_reject_reason(code: &str) -> bool {
    code == "other" || code.parse::<FlagCode>().is_ok()
}

fn of_screen_flags(flags: &[crate::screen::Flag]) -> Vec<Flag> {
    flags
        .iter()
        .map(|flag| {
            let mut evidence: Vec<String> = Vec::new();
            // Probe's evidence is a whole diff, shown as one (not a term to highlight).
            for item in flag.evidence.iter().filter(|item| item.source != crate::screen::flags::Source::Probe) {
                if !evidence.contains(&item.text) {
                    evidence.push(item.text.clone());
                }
            }
            // Records written before flags carried their precision get today's figure.
            let precision = flag.precision.clone().unwrap_or_else(|| crate::screen::precision::of(flag.code));
            Flag {
                code: flag.code.as_str().to_string(),
                reason: flag.reason.clone(),
                evidence,
                precision: Some(precision.describe()),
            }
        })
        .collect()
}

/// The quality record in a release row's columns (`quality_flags` as JSON,
/// `quality_score`, `quality_verdict`, `difficulty`), when the release carries one for
/// the task: `None` when the columns are absent or empty (a task never screened).
pub fn of_release_row(row: &serde_json::Map<String, serde_json::Value>) -> Option<QualityRecord> {
    let text = |column: &str| row.get(column).and_then(|value| value.as_str()).filter(|text| !text.is_empty());
    let score = text("quality_score").and_then(|score| score.parse::<f64>().ok());
    let verdict = text("quality_verdict").map(str::to_string);
    if score.is_none() && verdict.is_none() {
        return None;
    }
    let flags: Vec<crate::screen::Flag> =
        text("quality_flags").and_then(|flags| serde_json::from_str(flags).ok()).unwrap_or_default();
    let difficulty = text("difficulty").map(str::to_string);
    Some(QualityRecord {
        flags: of_screen_flags(&flags),
        score,
        verdict,
        difficulty_note: difficulty.as_ref().map(|_| difficulty_note()),
        difficulty,
    })
}

/// The quality records the screen stored for `tasks` and that describe their current
/// content (a task changed since it was screened has none), by instance id.
pub fn of_stored_tasks(
    connection: &rusqlite::Connection,
    tasks: &[Task],
) -> Result<BTreeMap<String, QualityRecord>, StoreError> {
    let stored = crate::store::screen::all(connection)?;
    let probes = crate::store::probe::current_outcomes(connection, tasks)?;
    let current = crate::release::screen::current_records(tasks, &stored, &probes);
    Ok(current
        .into_iter()
        .map(|(instance_id, record)| {
            let quality = QualityRecord {
                flags: of_screen_flags(&record.quality_flags),
                score: Some(record.quality_score),
                verdict: Some(record.quality_verdict.as_str().to_string()),
                difficulty: Some(record.difficulty.as_str().to_string()),
                difficulty_note: Some(difficulty_note()),
            };
            (instance_id, quality)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reject_reasons_are_the_screens_flags_and_other() {
        let reasons = reject_reasons();
        assert_eq!(reasons.len(), FlagCode::ALL.len() + 1);
        for flag in FlagCode::ALL {
            assert!(is_reject_reason(flag.as_str()), "{flag}");
        }
        assert!(is_reject_reason("other"));
        assert!(!is_reject_reason("tests_use_old_names"));
    }

    #[test]
    fn a_release_rows_quality_columns_are_read_and_empty_ones_mean_unscreened() {
        let flags = r#"[{"code":"tests_use_new_names","reason":"tests call `frobnicate`","evidence":[{"text":"frobnicate","source":"test_patch","file":"t.py","line":3,"diff_line":9},{"text":"frobnicate","source":"patch","file":"a.py","line":1,"diff_line":5}]}]"#;
        let row = serde_json::json!({
            "quality_flags": flags, "quality_score": "0.73", "quality_verdict": "flag", "difficulty": "15 min - 1 hour"
        });
        let record = of_release_row(row.as_object().unwrap()).unwrap();
        assert_eq!(record.score, Some(0.73));
        assert_eq!(record.verdict.as_deref(), Some("flag"));
        assert_eq!(record.difficulty.as_deref(), Some("15 min - 1 hour"));
        assert_eq!(record.flags.len(), 1);
        assert_eq!(record.flags[0].code, "tests_use_new_names");
        assert_eq!(record.flags[0].evidence, vec!["frobnicate".to_string()], "one term per distinct string");
        let unscreened =
            serde_json::json!({"quality_flags": "", "quality_score": "", "quality_verdict": "", "difficulty": ""});
        assert_eq!(of_release_row(unscreened.as_object().unwrap()), None);
        assert_eq!(of_release_row(&serde_json::Map::new()), None);
    }
}
