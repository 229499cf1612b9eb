//! The screen's side of a release: the four quality columns, the screened split
//! (`--max-quality-score`, `--exclude-flag`, `--only-kept`), and the card's section
//! that says what the screen found and how many tasks each flag removed.
//!
//! A task's quality record is used only when it describes the task's current content
//! (its `content_hash`); a task without one has empty quality columns, and a screened
//! split leaves it out (`not_screened`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::Task;
use crate::model::drop_reason::{ReleaseDropReason, format_counts};
use crate::screen::{FlagCode, QualityRecord, Verdict, record};

/// The quality columns, after the other extra columns.
pub const QUALITY_COLUMNS: [&str; 4] = ["quality_flags", "quality_score", "quality_verdict", "difficulty"];

/// The screened split asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScreenFilters {
    pub max_quality_score: Option<f64>,
    pub exclude_flags: Vec<FlagCode>,
    pub only_kept: bool,
}

impl ScreenFilters {
    pub fn is_empty(&self) -> bool {
        self.max_quality_score.is_none() && self.exclude_flags.is_empty() && !self.only_kept
    }
}

/// The records of the tasks whose content they describe, by instance id: what the
/// screen read (its texts, and probe's outcome of the task as it is now, `probes`).
pub fn current_records<'a>(
    tasks: &[Task],
    records: &'a BTreeMap<String, QualityRecord>,
    probes: &BTreeMap<String, crate::model::probe::ProbeOutcome>,
) -> BTreeMap<String, &'a QualityRecord> {
    tasks
        .iter()
        .filter_map(|task| {
            let record = records.get(&task.candidate.instance_id)?;
            let repo = task.candidate.repo.to_string();
            let mut text = crate::screen::task_text(task, &repo);
            text.probe = probes.get(&task.candidate.instance_id);
            let current = record::content_hash(&text) == record.content_hash;
            current.then(|| (task.candidate.instance_id.clone(), record))
        })
        .collect()
}

/// Keeps the tasks of the screened split. Counts the others by reason into `left_out`,
/// and by flag into `removed_by_flag`: `--exclude-flag` counts the excluded flags a
/// task carries; a score above the maximum or a `flag` verdict counts every flag of
/// the task (a task with two flags counts for both; one with none counts as `none`).
pub fn select(
    tasks: Vec<Task>,
    filters: &ScreenFilters,
    records: &BTreeMap<String, &QualityRecord>,
    left_out: &mut BTreeMap<String, u64>,
    removed_by_flag: &mut BTreeMap<String, u64>,
) -> Vec<Task> {
    if filters.is_empty() {
        return tasks;
    }
    let mut kept = Vec::with_capacity(tasks.len());
    for task in tasks {
        let Some(record) = records.get(&task.candidate.instance_id) else {
            *left_out.entry(ReleaseDropReason::NotScreened.as_str().to_string()).or_default() += 1;
            continue;
        };
        let excluded: Vec<FlagCode> = record
            .quality_flags
            .iter()
            .map(|flag| flag.code)
            .filter(|code| filters.exclude_flags.contains(code))
            .collect();
        let reason = if !excluded.is_empty() {
            Some((ReleaseDropReason::ExcludedFlag, excluded))
        } else if filters.max_quality_score.is_some_and(|max| record.quality_score > max) {
            Some((ReleaseDropReason::QualityScoreAboveMax, record.quality_flags.iter().map(|flag| flag.code).collect()))
        } else if filters.only_kept && record.quality_verdict == Verdict::Flag {
            Some((ReleaseDropReason::FlaggedByScreen, record.quality_flags.iter().map(|flag| flag.code).collect()))
        } else if filters.only_kept && record.quality_verdict == Verdict::Uncertain {
            Some((ReleaseDropReason::UncertainInScreen, record.quality_flags.iter().map(|flag| flag.code).collect()))
        } else {
            None
        };
        match reason {
            Some((reason, codes)) => {
                *left_out.entry(reason.as_str().to_string()).or_default() += 1;
                if codes.is_empty() {
                    *removed_by_flag.entry("none".to_string()).or_default() += 1;
                }
                for code in codes {
                    *removed_by_flag.entry(code.as_str().to_string()).or_default() += 1;
                }
            }
            None => kept.push(task),
        }
    }
    kept
}

/// A task's quality columns: the flags (JSON), the score, the verdict, the bucket;
/// empty strings for a task with no current record.
pub fn quality_columns(record: Option<&&QualityRecord>) -> [String; 4] {
    match record {
        Some(record) => [
            serde_json::to_string(&record.quality_flags).expect("flags serialize"),
            record.quality_score.to_string(),
            record.quality_verdict.as_str().to_string(),
            record.difficulty.as_str().to_string(),
        ],
        None => Default::default(),
    }
}

/// The card's section on the screen.
pub fn card_section(
    tasks: &[Task],
    records: &BTreeMap<String, &QualityRecord>,
    filters: &ScreenFilters,
    removed_by_flag: &BTreeMap<String, u64>,
) -> String {
    let mut text = String::from("## Quality screen\n\n");
    let screened: Vec<&QualityRecord> =
        tasks.iter().filter_map(|task| records.get(&task.candidate.instance_id).copied()).collect();
    let count = |verdict: Verdict| screened.iter().filter(|record| record.quality_verdict == verdict).count();
    let _ = writeln!(
        text,
        "Every task went through swe-harvest's quality screen (no LLM; see its documentation, \
         `docs/screen.md`), which writes four columns: `quality_flags` (a JSON list of flags, \
         each with its code, a one-line reason, the exact strings that are its evidence, and its \
         measured precision), `quality_score` (the estimated probability that careful annotators \
         would filter the task out, from a logistic model fitted to SWE-bench Verified's \
         annotations), `quality_verdict` and `difficulty` (SWE-bench Verified's buckets). {} of the \
         {} tasks have a record: {} `keep`, {} `uncertain`, {} `flag`.\n",
        screened.len(),
        tasks.len(),
        count(Verdict::Keep),
        count(Verdict::Uncertain),
        count(Verdict::Flag),
    );
    let _ = writeln!(
        text,
        "The verdict is precision-first: `flag` only on a flag that is strong evidence \
         (measured well above the base rate on the development data, or observed in the task's \
         own runs: flaky tests, a wrong fix that passes), `uncertain` on any other flag or a \
         high score, `keep` where the screen found nothing. `keep` is not a guarantee: on the \
         development data most tasks the annotators filtered out raised no flag (docs/screen.md).\n"
    );
    let mut flags: BTreeMap<&str, u64> = BTreeMap::new();
    let mut buckets: BTreeMap<&str, u64> = BTreeMap::new();
    for record in &screened {
        for flag in &record.quality_flags {
            *flags.entry(flag.code.as_str()).or_default() += 1;
        }
        *buckets.entry(record.difficulty.as_str()).or_default() += 1;
    }
    let _ = writeln!(
        text,
        "Each flag's precision is measured on {} ({:.0}% of them filtered out): of the tasks raising \
         the flag, the share the annotators filtered out.\n",
        crate::screen::precision::SET_DESCRIPTION,
        100.0 * crate::screen::precision::base_rate()
    );
    let _ =
        writeln!(text, "| flag | tasks in this release | measured precision | meaning |\n| --- | ---: | --- | --- |");
    for code in FlagCode::ALL {
        let measured = crate::screen::precision::of(code);
        let precision = match measured.precision {
            Some(precision) => format!("{precision:.2} ({} of {})", measured.filtered_out, measured.tasks),
            None => "not measured".to_string(),
        };
        let _ = writeln!(
            text,
            "| `{}` | {} | {precision} | {} |",
            code,
            flags.get(code.as_str()).copied().unwrap_or(0),
            code.meaning()
        );
    }
    let agreement = crate::screen::difficulty::AGREEMENT;
    let _ = writeln!(
        text,
        "\nDifficulty: {}. An estimate from the gold patch's size alone: on {} it names the \
         annotators' bucket for {:.0}% of tasks and is within one bucket for {:.0}% (Cohen's kappa \
         {:.2}: fair agreement, not a measurement of effort); `1-4 hours` and `>4 hours` rest on a \
         handful of annotated tasks.\n",
        if buckets.is_empty() { "none".to_string() } else { format_counts(&buckets) },
        agreement.set,
        100.0 * agreement.exact,
        100.0 * agreement.within_one,
        agreement.kappa
    );
    if filters.is_empty() {
        let _ = writeln!(text, "This release is not a screened split: flagged tasks are in it.\n");
    } else {
        let _ = writeln!(
            text,
            "This release is a screened split ({}). Tasks each flag removed (a task with two flags counts for \
             both): {}.\n",
            describe(filters),
            if removed_by_flag.is_empty() { "none".to_string() } else { format_counts(removed_by_flag) }
        );
    }
    text
}

fn describe(filters: &ScreenFilters) -> String {
    let mut parts = Vec::new();
    if let Some(max) = filters.max_quality_score {
        parts.push(format!("quality_score at most {max}"));
    }
    if !filters.exclude_flags.is_empty() {
        parts.push(format!(
            "without the flags {}",
            filters.exclude_flags.iter().map(|code| format!("`{code}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    if filters.only_kept {
        parts.push("only tasks the screen kept".to_string());
    }
    parts.join("; ")
}
