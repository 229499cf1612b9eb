//! The test-generation side of a release (SWT-Bench): the coverage columns, which
//! tasks an SWT release keeps (`release --swt`), and the card's section on using
//! the release for test generation with the distribution of the golden tests'
//! change coverage.
//!
//! An SWT release keeps a task only when its golden tests are reliable: its coverage
//! was measured (`validate --coverage`), it was validated in at least
//! `release.swt_min_runs` runs (SWT-Bench uses 5), and the tests that failed before
//! the gold patch and passed after it were the same in every run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rusqlite::Connection;

use crate::model::drop_reason::ReleaseDropReason;
use crate::model::labels;
use crate::model::{RunPhase, Task};
use crate::store::StoreError;
use crate::store::coverage::GoldenCoverage;

/// Why an SWT release leaves a task out (the manifest's `left_out_by_filters`).
const NO_COVERAGE: ReleaseDropReason = ReleaseDropReason::SwtCoverageNotMeasured;
const TOO_FEW_RUNS: ReleaseDropReason = ReleaseDropReason::SwtFewerValidationRuns;
const UNSTABLE: ReleaseDropReason = ReleaseDropReason::SwtGoldenTestsUnstable;

/// Whether the golden FAIL_TO_PASS held in every run: each attempt, on its own, gives
/// the same non-empty FAIL_TO_PASS.
pub fn golden_tests_held(pre: &[labels::RunResults], post: &[labels::RunResults]) -> bool {
    if pre.is_empty() || pre.len() != post.len() {
        return false;
    }
    let per_attempt: Vec<Vec<String>> = pre
        .iter()
        .zip(post)
        .map(|(pre, post)| labels::compute(std::slice::from_ref(pre), std::slice::from_ref(post)).fail_to_pass)
        .collect();
    !per_attempt[0].is_empty() && per_attempt.iter().all(|fail_to_pass| fail_to_pass == &per_attempt[0])
}

/// Keeps the tasks fit for an SWT release; counts the others by reason.
pub fn select(
    connection: &Connection,
    tasks: Vec<Task>,
    coverage: &BTreeMap<String, GoldenCoverage>,
    min_runs: u32,
    left_out: &mut BTreeMap<String, u64>,
) -> Result<Vec<Task>, StoreError> {
    let mut kept = Vec::with_capacity(tasks.len());
    for task in tasks {
        let instance_id = &task.candidate.instance_id;
        let reason = if !matches!(coverage.get(instance_id), Some(GoldenCoverage::Measured { .. })) {
            Some(NO_COVERAGE)
        } else {
            let runs = crate::store::validation::runs(connection, instance_id)?;
            let phase = |phase: RunPhase| -> Vec<labels::RunResults> {
                let mut runs: Vec<_> = runs.iter().filter(|run| run.phase == phase).collect();
                runs.sort_by_key(|run| run.attempt);
                runs.into_iter().map(|run| run.tests.clone()).collect()
            };
            let (pre, post) = (phase(RunPhase::Pre), phase(RunPhase::Post));
            if (pre.len() as u32) < min_runs || task.validation_runs < min_runs {
                Some(TOO_FEW_RUNS)
            } else if !golden_tests_held(&pre, &post) {
                Some(UNSTABLE)
            } else {
                None
            }
        };
        match reason {
            Some(reason) => *left_out.entry(reason.as_str().to_string()).or_default() += 1,
            None => kept.push(task),
        }
    }
    Ok(kept)
}

/// The card's section on test generation.
pub fn card_section(tasks: &[Task], coverage: &BTreeMap<String, GoldenCoverage>, swt_min_runs: Option<u32>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "## Test generation (SWT-Bench)\n");
    let _ = writeln!(
        text,
        "Every task is also a test-generation task: given `problem_statement` and the \
         repository at `base_commit`, write tests that fail before `patch` (the gold patch) and \
         pass after it; `test_patch` holds the developers' own such tests. Predictions are JSONL \
         rows `{{instance_id, model_name_or_path, model_patch}}` whose `model_patch` adds or \
         changes tests; with instance images, swe-harvest grades them with SWT-Bench's metrics \
         (success rate S, W, F→×, F→P, P→P, change coverage ΔC):\n\n\
         ```sh\nswe-harvest evaluate --release . --predictions predictions.jsonl --mode swt\n```\n"
    );
    let _ = writeln!(
        text,
        "`gold_executable_lines` counts the lines of the gold patch that the existing tests \
         of the touched test files or the golden tests run (removed lines before the patch, \
         added lines after it); `golden_change_coverage` is the share of those lines that the \
         golden tests run more often than the existing tests alone (ΔC); \
         `gold_executable_line_map` lists the lines. Empty when coverage was not measured \
         (`validate --coverage`); ΔC is also empty when the patch has no executable line.\n"
    );
    if let Some(min_runs) = swt_min_runs {
        let _ = writeln!(
            text,
            "This is an SWT release: it holds only tasks whose coverage was measured and whose \
             golden FAIL_TO_PASS held in every one of at least {min_runs} validation runs.\n"
        );
    }
    let mut shares = Vec::new();
    let (mut without_lines, mut not_measured) = (0usize, 0usize);
    for task in tasks {
        match coverage.get(&task.candidate.instance_id) {
            Some(GoldenCoverage::Measured { coverage, .. }) => match coverage.share() {
                Some(share) => shares.push(share),
                None => without_lines += 1,
            },
            _ => not_measured += 1,
        }
    }
    if shares.is_empty() {
        let _ = writeln!(
            text,
            "No task of this release has a measured change coverage ({not_measured} not measured, \
             {without_lines} without executable lines).\n"
        );
        return text;
    }
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    let _ = writeln!(
        text,
        "Golden tests' change coverage over the {} tasks with executable lines (mean {:.1}%; \
         {without_lines} tasks without executable lines and {not_measured} not measured are left out):\n",
        shares.len(),
        mean * 100.0
    );
    let _ = writeln!(text, "| ΔC | tasks |\n| --- | ---: |");
    for (label, low, high) in COVERAGE_BINS {
        let count = shares.iter().filter(|&&share| in_bin(share, low, high)).count();
        let _ = writeln!(text, "| {label} | {count} |");
    }
    let _ = writeln!(text);
    text
}

/// The bins of the card's ΔC table: exactly 0, then quarters, then exactly 1.
const COVERAGE_BINS: [(&str, f64, f64); 6] = [
    ("0%", 0.0, 0.0),
    ("(0%, 25%]", 0.0, 0.25),
    ("(25%, 50%]", 0.25, 0.5),
    ("(50%, 75%]", 0.5, 0.75),
    ("(75%, 100%)", 0.75, 1.0),
    ("100%", 1.0, 1.0),
];

fn in_bin(share: f64, low: f64, high: f64) -> bool {
    if low == high {
        share == low
    } else if high == 1.0 {
        share > low && share < 1.0
    } else {
        share > low && share <= high
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestStatus;

    fn run(entries: &[(&str, TestStatus)]) -> labels::RunResults {
        entries.iter().map(|(test, status)| (test.to_string(), *status)).collect()
    }

    #[test]
    fn golden_tests_hold_only_when_every_attempt_gives_the_same_fail_to_pass() {
        use TestStatus::*;
        let pre = run(&[("t::a", Failed), ("t::b", Failed)]);
        let post = run(&[("t::a", Passed), ("t::b", Passed)]);
        let wobbly_post = run(&[("t::a", Passed), ("t::b", Failed)]);
        assert!(golden_tests_held(&[pre.clone(), pre.clone()], &[post.clone(), post.clone()]));
        assert!(!golden_tests_held(&[pre.clone(), pre.clone()], &[post.clone(), wobbly_post]));
        assert!(!golden_tests_held(std::slice::from_ref(&pre), std::slice::from_ref(&pre)), "no FAIL_TO_PASS at all");
        assert!(!golden_tests_held(&[], &[]));
    }

    #[test]
    fn coverage_bins_split_exact_ends_from_the_quarters() {
        let count = |share: f64| COVERAGE_BINS.iter().filter(|(_, low, high)| in_bin(share, *low, *high)).count();
        for share in [0.0, 0.1, 0.25, 0.5, 0.74, 0.99, 1.0] {
            assert_eq!(count(share), 1, "{share} falls in exactly one bin");
        }
        assert!(in_bin(1.0, 1.0, 1.0) && !in_bin(1.0, 0.75, 1.0));
    }
}
