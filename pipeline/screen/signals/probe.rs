//! What probe found: `weak_tests` when a wrong fix derived from the gold patch passed
//! every listed test, with the smallest such mutant's diff as evidence and a reason
//! that says what the tests never check.

use super::Reading;
use crate::screen::flags::{Evidence, Flag, FlagCode, Source};

/// `weak_tests`, when probe kept a surviving mutant.
pub fn weak_tests(reading: &Reading<'_>) -> Option<Flag> {
    let outcome = reading.task.probe?;
    let smallest = outcome.surviving_mutants.first()?;
    let more = outcome.surviving_mutants.len() - 1;
    let mut reason = smallest.what_the_tests_miss();
    if more > 0 {
        reason.push_str(&format!(
            "; {more} more wrong fix{} pass{} too",
            if more == 1 { "" } else { "es" },
            if more == 1 { "es" } else { "" }
        ));
    }
    Some(Flag {
        code: FlagCode::WeakTests,
        reason,
        evidence: outcome
            .surviving_mutants
            .iter()
            .map(|mutant| Evidence {
                text: mutant.patch.clone(),
                source: Source::Probe,
                file: Some(mutant.file.clone()),
                line: Some(mutant.line),
                diff_line: None,
            })
            .collect(),
        precision: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::probe::{MutationOperator, ProbeOutcome, SurvivingMutant};
    use crate::screen::signals::TaskText;

    #[test]
    fn a_survivor_raises_weak_tests_with_its_diff_and_no_survivor_raises_nothing() {
        let survivor = SurvivingMutant {
            operator: MutationOperator::OmitHunk,
            file: "src/http.py".into(),
            line: 40,
            function: "_parse_header".into(),
            change: "the fix's second hunk (of 2) is left out".into(),
            patch: "diff --git a/src/http.py b/src/http.py\n".into(),
        };
        let outcome = ProbeOutcome { mutation_score: Some(0.5), surviving_mutants: vec![survivor], viable: 2 };
        let mut task = TaskText::of_texts("a/b", "issue\n", "", "", &[]);
        task.probe = Some(&outcome);
        let flag = weak_tests(&Reading::new(task, Vec::new())).unwrap();
        assert_eq!(flag.code, FlagCode::WeakTests);
        assert_eq!(
            flag.reason,
            "the tests pass when the fix's second hunk (of 2) is left out (src/http.py:40, in `_parse_header`)"
        );
        assert_eq!(flag.evidence[0].source, Source::Probe);
        assert!(flag.evidence[0].text.starts_with("diff --git"));
        let all_killed = ProbeOutcome { mutation_score: Some(1.0), surviving_mutants: Vec::new(), viable: 3 };
        task.probe = Some(&all_killed);
        assert!(weak_tests(&Reading::new(task, Vec::new())).is_none());
        task.probe = None;
        assert!(weak_tests(&Reading::new(task, Vec::new())).is_none());
    }
}
