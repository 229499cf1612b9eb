//! Probe's side of a release: the columns `mutation_score` and `surviving_mutants`,
//! the split `--min-mutation-score`, the manifest's counts of tasks with survivors,
//! and the card's section on what probe found.
//!
//! A task's probe record is used only when it was made for the task as it is now
//! ([`crate::store::probe::current_outcomes`]); a task without one has empty columns, and
//! `--min-mutation-score` leaves it out (`not_probed`), as it does a task probed
//! without a score (no mutant of its gold patch was viable): neither shows its tests
//! reject wrong fixes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::Task;
use crate::model::drop_reason::ReleaseDropReason;
use crate::model::probe::ProbeOutcome;

/// Probe's columns, after the quality columns.
pub const PROBE_COLUMNS: [&str; 2] = ["mutation_score", "surviving_mutants"];

/// What the manifest counts of probe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeCounts {
    /// Released tasks with a current probe record.
    pub probed: usize,
    /// Of those, tasks with a score (a viable mutant).
    pub scored: usize,
    /// Tasks with at least one surviving mutant (a wrong fix their tests accept).
    pub with_survivors: usize,
}

/// Keeps the tasks whose mutation score is at least `min` (all when `None`); counts the
/// others by reason into `left_out`.
pub fn select(
    tasks: Vec<Task>,
    min: Option<f64>,
    outcomes: &BTreeMap<String, ProbeOutcome>,
    left_out: &mut BTreeMap<String, u64>,
) -> Vec<Task> {
    let Some(min) = min else { return tasks };
    tasks
        .into_iter()
        .filter(|task| {
            let score = outcomes.get(&task.candidate.instance_id).and_then(|outcome| outcome.mutation_score);
            let reason = match score {
                None => Some(ReleaseDropReason::NotProbed),
                Some(score) if score < min => Some(ReleaseDropReason::MutationScoreBelowMin),
                Some(_) => None,
            };
            if let Some(reason) = reason {
                *left_out.entry(reason.as_str().to_string()).or_default() += 1;
            }
            reason.is_none()
        })
        .collect()
}

/// A task's probe columns: the score (empty without one) and the survivors (a JSON
/// list, smallest diff first; empty without a record).
pub fn probe_columns(outcome: Option<&ProbeOutcome>) -> [String; 2] {
    match outcome {
        Some(outcome) => [
            outcome.mutation_score.map(|score| format!("{score:.6}")).unwrap_or_default(),
            serde_json::to_string(&outcome.surviving_mutants).expect("survivors serialize"),
        ],
        None => Default::default(),
    }
}

/// The manifest's counts.
pub fn counts(tasks: &[Task], outcomes: &BTreeMap<String, ProbeOutcome>) -> ProbeCounts {
    let mine: Vec<&ProbeOutcome> = tasks.iter().filter_map(|task| outcomes.get(&task.candidate.instance_id)).collect();
    ProbeCounts {
        probed: mine.len(),
        scored: mine.iter().filter(|outcome| outcome.mutation_score.is_some()).count(),
        with_survivors: mine.iter().filter(|outcome| !outcome.surviving_mutants.is_empty()).count(),
    }
}

/// The card's section on probe.
pub fn card_section(counts: &ProbeCounts, total: usize, min: Option<f64>) -> String {
    let mut text = String::from("## Do the tests reject wrong fixes? (probe)\n\n");
    let _ = writeln!(
        text,
        "swe-harvest's probe ran wrong fixes derived from each task's gold patch (mutants: a hunk left \
         out, a changed line reverted, a condition negated, a boundary moved, a literal replaced, a \
         statement dropped, a return emptied) against the task's FAIL_TO_PASS tests and the PASS_TO_PASS \
         tests of its touched test files, in its own environment. A mutant that passes them all is a \
         wrong fix this benchmark would score as resolved. Two columns say what it found: \
         `mutation_score` (killed / (killed + survived); empty when no mutant applied, built and ran) \
         and `surviving_mutants` (a JSON list: each survivor's operator, file, line, what it changes and \
         its diff against the base commit, smallest first).\n"
    );
    let _ = writeln!(
        text,
        "| | tasks |\n| --- | ---: |\n| in this release | {total} |\n| probed | {} |\n| with a score | {} |\n\
         | with a surviving mutant (`weak_tests`) | {} |\n",
        counts.probed, counts.scored, counts.with_survivors
    );
    match min {
        Some(min) => {
            let _ = writeln!(
                text,
                "This release keeps only tasks whose mutation score is at least {min} (`--min-mutation-score`); \
                 tasks not probed, or probed without a score, are left out.\n"
            );
        }
        None => {
            let _ = writeln!(text, "No task was left out for its mutation score.\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::probe::{MutationOperator, SurvivingMutant};

    fn outcome(score: Option<f64>, survivors: usize) -> ProbeOutcome {
        let survivor = SurvivingMutant {
            operator: MutationOperator::MoveBoundary,
            file: "a.py".into(),
            line: 3,
            function: String::new(),
            change: "`<` becomes `<=`".into(),
            patch: "diff".into(),
        };
        ProbeOutcome { mutation_score: score, surviving_mutants: vec![survivor; survivors], viable: 4 }
    }

    #[test]
    fn the_minimum_score_keeps_strong_tasks_and_counts_the_others_by_reason() {
        let tasks: Vec<Task> = (1..=4).map(|number| Task::example("a/b", number)).collect();
        let outcomes: BTreeMap<String, ProbeOutcome> = [
            (tasks[0].candidate.instance_id.clone(), outcome(Some(1.0), 0)),
            (tasks[1].candidate.instance_id.clone(), outcome(Some(0.5), 2)),
            (tasks[2].candidate.instance_id.clone(), outcome(None, 0)),
        ]
        .into();
        let mut left_out = BTreeMap::new();
        let kept = select(tasks.clone(), Some(0.8), &outcomes, &mut left_out);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].candidate.instance_id, tasks[0].candidate.instance_id);
        assert_eq!(left_out["mutation_score_below_min"], 1);
        assert_eq!(left_out["not_probed"], 2);
        let mut left_out = BTreeMap::new();
        assert_eq!(select(tasks.clone(), None, &outcomes, &mut left_out).len(), 4);
        assert!(left_out.is_empty());
        assert_eq!(counts(&tasks, &outcomes), ProbeCounts { probed: 3, scored: 2, with_survivors: 1 });
        let [score, survivors] = probe_columns(outcomes.get(&tasks[1].candidate.instance_id));
        assert_eq!(score, "0.500000");
        assert!(survivors.contains("\"operator\":\"move_boundary\""), "{survivors}");
        assert_eq!(probe_columns(None), [String::new(), String::new()]);
    }
}
