//! SWT-Bench's metrics as pure functions over line counts and test results: the
//! executable lines of a gold patch, the change coverage ΔC of a set of tests, the
//! fail/pass transitions of generated tests and whether they reproduce the issue.
//!
//! Notation (SWT-Bench): R is the repository at base_commit, X the gold patch, T^R
//! the existing tests of the touched test files, T the tests under study (the golden
//! tests T* of the test patch, or generated ones).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::lines::{ChangedLines, FileLines};
use crate::model::TestStatus;
use crate::model::labels::RunResults;

/// How often each line ran, per repository-relative path.
pub type LineCounts = BTreeMap<String, BTreeMap<u32, u64>>;

fn count(counts: &LineCounts, file: &str, line: u32) -> u64 {
    counts.get(file).and_then(|lines| lines.get(&line)).copied().unwrap_or(0)
}

/// Adds `more` into `total` (several processes of one test run).
pub fn merge_counts(total: &mut LineCounts, more: &LineCounts) {
    for (file, lines) in more {
        let into = total.entry(file.clone()).or_default();
        for (line, hits) in lines {
            *into.entry(*line).or_default() += hits;
        }
    }
}

/// The four measurements of one task: T^R and T^R ∪ T, each on R and on R∘X.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measurements {
    /// T^R on R.
    pub base_pre: LineCounts,
    /// T^R ∪ T on R.
    pub with_tests_pre: LineCounts,
    /// T^R ∪ T on R∘X.
    pub with_tests_post: LineCounts,
    /// T^R on R∘X.
    pub base_post: LineCounts,
}

pub use crate::model::{ChangeCoverage, ExecutableLines};

impl ExecutableLines {
    /// The changed lines that any of `on_r` runs (removed) or any of `on_rx` runs (added).
    pub fn of(changed: &ChangedLines, on_r: &[&LineCounts], on_rx: &[&LineCounts]) -> ExecutableLines {
        let keep = |lines: &FileLines, runs: &[&LineCounts]| -> FileLines {
            lines
                .iter()
                .map(|(file, numbers)| {
                    let ran: BTreeSet<u32> = numbers
                        .iter()
                        .copied()
                        .filter(|&line| runs.iter().any(|counts| count(counts, file, line) > 0))
                        .collect();
                    (file.clone(), ran)
                })
                .filter(|(_, ran)| !ran.is_empty())
                .collect()
        };
        ExecutableLines { removed: keep(&changed.removed, on_r), added: keep(&changed.added, on_rx) }
    }

    /// Executable lines of the gold patch from the golden measurements: what T^R or T*
    /// runs, removed lines on R and added lines on R∘X.
    pub fn of_golden(changed: &ChangedLines, golden: &Measurements) -> ExecutableLines {
        ExecutableLines::of(
            changed,
            &[&golden.base_pre, &golden.with_tests_pre],
            &[&golden.base_post, &golden.with_tests_post],
        )
    }
}

/// ΔC of T: executable lines whose count under T^R ∪ T is higher than under T^R,
/// removed lines measured on R and added lines on R∘X.
pub fn change_coverage(executable: &ExecutableLines, measured: &Measurements) -> ChangeCoverage {
    let higher = |lines: &FileLines, with: &LineCounts, base: &LineCounts| -> usize {
        lines
            .iter()
            .flat_map(|(file, numbers)| numbers.iter().map(move |&line| (file, line)))
            .filter(|&(file, line)| count(with, file, line) > count(base, file, line))
            .count()
    };
    ChangeCoverage {
        covered: higher(&executable.removed, &measured.with_tests_pre, &measured.base_pre)
            + higher(&executable.added, &measured.with_tests_post, &measured.base_post),
        executable: executable.count(),
    }
}

/// F (fails: failed, errored or missing) or P (passes: anything else, skips included).
fn fails(status: Option<&TestStatus>) -> bool {
    matches!(status, Some(TestStatus::Failed | TestStatus::Error) | None)
}

/// The tests of T by their results on R (pre) and R∘X (post).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transitions {
    pub fail_to_pass: Vec<String>,
    pub fail_to_fail: Vec<String>,
    pub pass_to_pass: Vec<String>,
    pub pass_to_fail: Vec<String>,
}

impl Transitions {
    /// The transitions of T's tests. T is every test of the runs with T applied
    /// (`with_pre` on R, `with_post` on R∘X) except those that behave exactly as in
    /// the runs of T^R alone (`base_pre`, `base_post`): the existing tests that T left
    /// alone. This is SWT-Bench's comparison against the base run.
    pub fn of(
        with_pre: &RunResults,
        with_post: &RunResults,
        base_pre: &RunResults,
        base_post: &RunResults,
    ) -> Transitions {
        let mut transitions = Transitions::default();
        let tests: BTreeSet<&String> = with_pre.keys().chain(with_post.keys()).collect();
        for test in tests {
            let outcome = (fails(with_pre.get(test)), fails(with_post.get(test)));
            let in_base = base_pre.contains_key(test) || base_post.contains_key(test);
            if in_base && outcome == (fails(base_pre.get(test)), fails(base_post.get(test))) {
                continue;
            }
            let list = match outcome {
                (true, false) => &mut transitions.fail_to_pass,
                (true, true) => &mut transitions.fail_to_fail,
                (false, false) => &mut transitions.pass_to_pass,
                (false, true) => &mut transitions.pass_to_fail,
            };
            list.push(test.clone());
        }
        transitions
    }

    /// T reproduces the issue: some test fails on R and passes on R∘X, and no test
    /// fails on R∘X.
    pub fn reproduces(&self) -> bool {
        !self.fail_to_pass.is_empty() && self.fail_to_fail.is_empty() && self.pass_to_fail.is_empty()
    }

    /// Some test fails on R, whatever it does on R∘X (SWT-Bench's F→×).
    pub fn fails_before(&self) -> bool {
        !self.fail_to_pass.is_empty() || !self.fail_to_fail.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(entries: &[(&str, u32, u64)]) -> LineCounts {
        let mut counts = LineCounts::new();
        for (file, line, hits) in entries {
            counts.entry(file.to_string()).or_default().insert(*line, *hits);
        }
        counts
    }

    fn changed(removed: &[(&str, u32)], added: &[(&str, u32)]) -> ChangedLines {
        let mut changed = ChangedLines::default();
        for (file, line) in removed {
            changed.removed.entry(file.to_string()).or_default().insert(*line);
        }
        for (file, line) in added {
            changed.added.entry(file.to_string()).or_default().insert(*line);
        }
        changed
    }

    fn results(entries: &[(&str, TestStatus)]) -> RunResults {
        entries.iter().map(|(test, status)| (test.to_string(), *status)).collect()
    }

    #[test]
    fn executable_lines_are_those_run_on_their_side_and_coverage_counts_higher_counts() {
        // X removes lines 2, 3, 8 of m.py and adds line 6; line 9 is never run.
        let x = changed(&[("m.py", 2), ("m.py", 3), ("m.py", 8), ("m.py", 9)], &[("m.py", 6)]);
        let measured = Measurements {
            base_pre: counts(&[("m.py", 2, 1), ("m.py", 8, 1)]),
            with_tests_pre: counts(&[("m.py", 2, 2), ("m.py", 3, 1), ("m.py", 8, 1)]),
            // Line 8 runs on R∘X but is numbered on R: it must not count as added line 8.
            with_tests_post: counts(&[("m.py", 6, 1), ("m.py", 8, 5)]),
            base_post: counts(&[("m.py", 6, 1)]),
        };
        let executable = ExecutableLines::of_golden(&x, &measured);
        assert_eq!(executable.count(), 4, "{executable:?}");
        assert_eq!(executable.removed["m.py"], [2, 3, 8].into_iter().collect());
        let coverage = change_coverage(&executable, &measured);
        assert_eq!(coverage, ChangeCoverage { covered: 2, executable: 4 });
        assert_eq!(coverage.share(), Some(0.5));
    }

    #[test]
    fn a_patch_without_executable_lines_has_no_coverage_share() {
        let x = changed(&[("m.py", 1)], &[]);
        let executable = ExecutableLines::of_golden(&x, &Measurements::default());
        let coverage = change_coverage(&executable, &Measurements::default());
        assert_eq!(coverage.executable, 0);
        assert_eq!(coverage.share(), None);
    }

    #[test]
    fn merged_counts_add_up() {
        let mut total = counts(&[("a.py", 1, 2)]);
        merge_counts(&mut total, &counts(&[("a.py", 1, 3), ("b.py", 4, 1)]));
        assert_eq!(total, counts(&[("a.py", 1, 5), ("b.py", 4, 1)]));
    }

    #[test]
    fn transitions_leave_out_existing_tests_that_behave_as_before() {
        use TestStatus::*;
        let base_pre = results(&[("t.py::old", Passed), ("t.py::broken", Failed)]);
        let base_post = results(&[("t.py::old", Passed), ("t.py::broken", Failed)]);
        let with_pre =
            results(&[("t.py::old", Passed), ("t.py::broken", Failed), ("t.py::new", Failed), ("t.py::keep", Skipped)]);
        let with_post =
            results(&[("t.py::old", Passed), ("t.py::broken", Failed), ("t.py::new", Passed), ("t.py::keep", Passed)]);
        let transitions = Transitions::of(&with_pre, &with_post, &base_pre, &base_post);
        assert_eq!(transitions.fail_to_pass, vec!["t.py::new".to_string()]);
        assert_eq!(transitions.pass_to_pass, vec!["t.py::keep".to_string()], "a skip passes");
        assert!(transitions.fail_to_fail.is_empty(), "the broken existing test is not T's");
        assert!(transitions.reproduces());
        assert!(transitions.fails_before());
    }

    #[test]
    fn a_test_missing_before_fails_there_and_a_failure_after_the_fix_spoils_reproduction() {
        use TestStatus::*;
        let none = RunResults::new();
        let with_pre = results(&[("t.py::b", Passed)]);
        let with_post = results(&[("t.py::a", Passed), ("t.py::b", Error)]);
        let transitions = Transitions::of(&with_pre, &with_post, &none, &none);
        assert_eq!(transitions.fail_to_pass, vec!["t.py::a".to_string()], "collected only after the fix");
        assert_eq!(transitions.pass_to_fail, vec!["t.py::b".to_string()]);
        assert!(!transitions.reproduces());
    }
}
