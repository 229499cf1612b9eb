//! Label computation: FAIL_TO_PASS, PASS_TO_PASS and flaky tests from the statuses
//! of every pre and post run of one task. A pure function over plain data; it knows
//! nothing of containers or parsers.
//!
//! The rules (docs/architecture.md, "A task's route", validate):
//! - a test *passes* a run when its status is PASSED, XFAIL or XPASS (SWE-bench counts
//!   an expected failure as a pass); it *fails* when FAILED or ERROR, or when it is
//!   missing from the run (a test that the gold patch adds cannot be collected
//!   before; such FAIL_TO_PASS tests are listed apart, [`Labels::no_result_before`]),
//!   unless the run asked for other tests by name and did not reach it
//!   ([`unreached_as_skipped`]); SKIPPED is neither;
//! - a test whose outcome (pass / fail-or-missing / skipped) differs between two runs
//!   of the same phase is flaky: recorded, never labelled;
//! - FAIL_TO_PASS: fails in every pre run and passes in every post run;
//! - PASS_TO_PASS: passes in every pre and every post run;
//! - PASS_TO_FAIL (the gold patch breaks it) is reported, not labelled;
//! - a test that failed in any run because the network is off (the ecosystem says
//!   which, [`crate::ecosystem::ParsedRun::network_failures`]) needs the network: it
//!   is reported as such and never labelled, nor counted flaky or broken
//!   ([`Labels::set_aside_network`]); so does a test that depends on what failed
//!   for want of it ([`crate::ecosystem::ParsedRun::network_dependents`]) and passed
//!   in no run;
//! - a test that the gold patch itself defines is never labelled
//!   ([`Labels::set_aside_defined_by_the_fix`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::TestStatus;

/// The statuses of one run, by test id.
pub type RunResults = BTreeMap<String, TestStatus>;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Labels {
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// Tests whose outcome differed between runs of one phase.
    pub flaky: Vec<String>,
    /// The flaky tests whose runs disagreed only with the run under another time
    /// zone (`validate::attempt::CONTRASTING_TIME_ZONE`): their result depends on the
    /// machine's time zone.
    #[serde(default)]
    pub time_zone_dependent: Vec<String>,
    /// Tests that passed before the gold patch and fail after it.
    pub pass_to_fail: Vec<String>,
    /// Tests that failed in some run because the network is off: never labelled.
    #[serde(default)]
    pub needs_network: Vec<String>,
    /// Tests that the gold patch itself defines (an inline test module of a source
    /// file the fix changes, [`crate::ecosystem::Ecosystem::defined_by_the_patch`]):
    /// no other fix can pass them, so they are never labelled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defined_by_the_fix: Vec<String>,
    /// Tests that failed (or were missing) in every run before and after the gold
    /// patch: never labelled; they explain a published FAIL_TO_PASS test missed here.
    #[serde(default)]
    pub fail_to_fail: Vec<String>,
    /// Tests skipped (or not reached: [`unreached_as_skipped`]) in every run of a
    /// phase: never labelled.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// The FAIL_TO_PASS tests that gave no result in any run before the gold patch
    /// (Multi-SWE-bench's `n2p`), as against those that failed there: they did not
    /// build or collect, or the run stopped before them. Shown in the row.
    #[serde(default)]
    pub no_result_before: Vec<String>,
    /// What the runs before the gold patch said of why tests gave no result there, in
    /// their own words, each once (`panic: test timed out after 10m0s`); empty when
    /// they said nothing.
    #[serde(default)]
    pub interrupted_before: Vec<String>,
    /// How the runs chose their tests when the runner chose them at run time (C's
    /// helper), each statement once with the phases that made it (`after the gold
    /// patch: CTest tests that ...`); empty when the tests to run were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_selection: Vec<String>,
    /// The tests the runs reported as parts of a test their runner ran, with that
    /// test (a GoogleTest case → its CTest test): a published row that names the
    /// runner's test compares with them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub part_of: BTreeMap<String, String>,
}

impl Labels {
    /// Every list a test's outcome puts it in, where a test set aside leaves them all.
    fn test_lists(&mut self) -> [&mut Vec<String>; 8] {
        [
            &mut self.fail_to_pass,
            &mut self.pass_to_pass,
            &mut self.flaky,
            &mut self.time_zone_dependent,
            &mut self.pass_to_fail,
            &mut self.fail_to_fail,
            &mut self.skipped,
            &mut self.no_result_before,
        ]
    }

    /// Takes the tests of `network` (failed in some run because the network is off)
    /// out of every list and reports them in [`Labels::needs_network`]: whatever they
    /// did, the runs say nothing of them but that the network was missing.
    pub fn set_aside_network(mut self, network: &BTreeSet<String>) -> Labels {
        let mut needs_network: BTreeSet<String> = self.needs_network.drain(..).collect();
        for list in self.test_lists() {
            list.retain(|test| !network.contains(test));
        }
        needs_network.extend(network.iter().cloned());
        self.needs_network = needs_network.into_iter().collect();
        self
    }

    /// Takes the tests that `defined` says the gold patch defines out of every list
    /// and reports them in [`Labels::defined_by_the_fix`], whatever they did.
    pub fn set_aside_defined_by_the_fix(mut self, defined: &dyn Fn(&str) -> bool) -> Labels {
        let mut set_aside: BTreeSet<String> = self.defined_by_the_fix.drain(..).collect();
        for list in self.test_lists() {
            list.retain(|test| {
                let by_the_fix = defined(test);
                if by_the_fix {
                    set_aside.insert(test.clone());
                }
                !by_the_fix
            });
        }
        self.defined_by_the_fix = set_aside.into_iter().collect();
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Pass,
    /// Failed, errored, or not there at all.
    Fail,
    Skip,
}

fn outcome(status: Option<&TestStatus>) -> Outcome {
    match status {
        Some(TestStatus::Passed | TestStatus::Xfail | TestStatus::Xpass) => Outcome::Pass,
        Some(TestStatus::Failed | TestStatus::Error) | None => Outcome::Fail,
        Some(TestStatus::Skipped) => Outcome::Skip,
    }
}

/// Whether a status counts as a pass (PASSED, XFAIL, XPASS); missing is a failure.
pub fn passes(status: Option<&TestStatus>) -> bool {
    outcome(status) == Outcome::Pass
}

/// The one outcome of a test over all runs of a phase, or `None` when runs disagree.
fn consistent(test: &str, runs: &[RunResults]) -> Option<Outcome> {
    let mut outcomes = runs.iter().map(|run| outcome(run.get(test)));
    let first = outcomes.next()?;
    outcomes.all(|other| other == first).then_some(first)
}

/// The statuses of a run that asked for some tests by name before it ran the rest
/// (`asked_for`, see [`crate::ecosystem::ParsedRun::asked_for`]): each test of `all`
/// (the tests of every run of the task) that is neither asked for (by its name or a
/// parent's, `parent/case`) nor in the run was not reached there, which says nothing
/// of it, so it counts as skipped there instead of failing. With no `asked_for`, the
/// run's statuses as they are.
pub fn unreached_as_skipped(
    tests: &RunResults,
    asked_for: Option<&BTreeSet<String>>,
    all: &BTreeSet<String>,
) -> RunResults {
    let mut tests = tests.clone();
    let Some(asked) = asked_for else { return tests };
    let is_asked = |test: &str| {
        asked.contains(test)
            || asked.iter().any(|name| test.strip_prefix(name.as_str()).is_some_and(|rest| rest.starts_with('/')))
    };
    for test in all {
        if !tests.contains_key(test) && !is_asked(test) {
            tests.insert(test.clone(), TestStatus::Skipped);
        }
    }
    tests
}

/// Labels from the pre runs (base + test patch) and post runs (+ gold patch).
/// With no run of a phase, nothing is labelled.
pub fn compute(pre: &[RunResults], post: &[RunResults]) -> Labels {
    let mut labels = Labels::default();
    if pre.is_empty() || post.is_empty() {
        return labels;
    }
    let tests: BTreeSet<&String> = pre.iter().chain(post).flat_map(|run| run.keys()).collect();
    for test in tests {
        let (Some(before), Some(after)) = (consistent(test, pre), consistent(test, post)) else {
            labels.flaky.push(test.clone());
            continue;
        };
        match (before, after) {
            (Outcome::Fail, Outcome::Pass) => {
                if pre.iter().all(|run| !run.contains_key(test)) {
                    labels.no_result_before.push(test.clone());
                }
                labels.fail_to_pass.push(test.clone())
            }
            (Outcome::Pass, Outcome::Pass) => labels.pass_to_pass.push(test.clone()),
            (Outcome::Pass, Outcome::Fail) => labels.pass_to_fail.push(test.clone()),
            (Outcome::Fail, Outcome::Fail) => labels.fail_to_fail.push(test.clone()),
            (Outcome::Skip, _) | (_, Outcome::Skip) => labels.skipped.push(test.clone()),
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn run(entries: &[(&str, TestStatus)]) -> RunResults {
        entries.iter().map(|(name, status)| (name.to_string(), *status)).collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn failing_then_passing_is_fail_to_pass_and_steady_passes_are_pass_to_pass() {
        let pre = vec![run(&[("t::a", Failed), ("t::b", Passed)]); 3];
        let post = vec![run(&[("t::a", Passed), ("t::b", Passed)]); 3];
        let labels = compute(&pre, &post);
        assert_eq!(labels.fail_to_pass, names(&["t::a"]));
        assert_eq!(labels.pass_to_pass, names(&["t::b"]));
        assert!(labels.flaky.is_empty() && labels.pass_to_fail.is_empty());
    }

    #[test]
    fn errored_or_missing_before_counts_as_failing() {
        let pre = vec![run(&[("t::err", Error)]), run(&[("t::err", Error)])];
        let post = vec![run(&[("t::err", Passed), ("t::new", Passed)]); 2];
        let labels = compute(&pre, &post);
        assert_eq!(labels.fail_to_pass, names(&["t::err", "t::new"]));
        assert_eq!(labels.no_result_before, names(&["t::new"]), "the errored one had a result");
    }

    #[test]
    fn a_test_a_run_did_not_reach_and_did_not_ask_for_is_not_fail_to_pass() {
        let asked: BTreeSet<String> = ["TestTouched".to_string()].into();
        let all: BTreeSet<String> =
            ["TestTouched", "TestTouched/case", "TestLater", "TestEarly"].iter().map(|name| name.to_string()).collect();
        // The whole-package pass stopped before TestLater; the touched test and its
        // subtest have no result either (they panicked the package).
        let pre = run(&[("TestEarly", Passed)]);
        let pre = unreached_as_skipped(&pre, Some(&asked), &all);
        let post =
            run(&[("TestEarly", Passed), ("TestTouched", Passed), ("TestTouched/case", Passed), ("TestLater", Passed)]);
        let labels = compute(&[pre], std::slice::from_ref(&post));
        assert_eq!(labels.fail_to_pass, names(&["TestTouched", "TestTouched/case"]));
        assert_eq!(labels.skipped, names(&["TestLater"]));
        assert_eq!(labels.pass_to_pass, names(&["TestEarly"]));
        let as_is = unreached_as_skipped(&run(&[("TestEarly", Passed)]), None, &all);
        assert_eq!(compute(&[as_is], &[post]).fail_to_pass.len(), 3, "without asked_for, no result is a failure");
    }

    #[test]
    fn expected_failures_pass_and_skips_are_never_labelled() {
        let pre = vec![run(&[("t::x", Xfail), ("t::s", Skipped), ("t::f", Skipped)])];
        let post = vec![run(&[("t::x", Xfail), ("t::s", Skipped), ("t::f", Passed)])];
        let labels = compute(&pre, &post);
        assert_eq!(labels.pass_to_pass, names(&["t::x"]));
        assert!(labels.fail_to_pass.is_empty(), "skipped before is not failing: {labels:?}");
        assert_eq!(labels.skipped, names(&["t::f", "t::s"]));
    }

    #[test]
    fn disagreeing_runs_make_a_test_flaky_and_unlabelled() {
        let pre = vec![run(&[("t::a", Failed), ("t::flip", Passed)]), run(&[("t::a", Failed), ("t::flip", Failed)])];
        let post = vec![run(&[("t::a", Passed), ("t::flip", Passed)]); 2];
        let labels = compute(&pre, &post);
        assert_eq!(labels.flaky, names(&["t::flip"]));
        assert_eq!(labels.fail_to_pass, names(&["t::a"]));
        assert!(labels.pass_to_pass.is_empty());
        // Disagreement within the post runs is flaky too, also when the test went missing.
        let post = vec![run(&[("t::a", Passed)]), run(&[])];
        let labels = compute(&pre[..1], &post);
        assert!(labels.flaky.contains(&"t::a".to_string()), "{labels:?}");
    }

    #[test]
    fn tests_broken_by_the_gold_patch_are_reported_not_labelled() {
        let pre = vec![run(&[("t::a", Failed), ("t::broken", Passed)]); 2];
        let post = vec![run(&[("t::a", Passed), ("t::broken", Failed)]); 2];
        let labels = compute(&pre, &post);
        assert_eq!(labels.pass_to_fail, names(&["t::broken"]));
        assert_eq!(labels.fail_to_pass, names(&["t::a"]));
        assert!(labels.pass_to_pass.is_empty());
        // Failing before and after (or never there after) is reported too.
        let pre = vec![run(&[("t::a", Failed), ("t::still", Failed)]); 2];
        let post = vec![run(&[("t::a", Passed)]); 2];
        assert_eq!(compute(&pre, &post).fail_to_fail, names(&["t::still"]));
    }

    #[test]
    fn tests_that_needed_the_network_are_reported_and_never_labelled() {
        // Offline, a test that reaches a server fails before and after the fix; one
        // that the gold patch makes reach it only after, fails after.
        let pre = vec![run(&[("t::a", Failed), ("t::online", Failed), ("t::fetch", Passed)]); 2];
        let post = vec![run(&[("t::a", Passed), ("t::online", Failed), ("t::fetch", Failed)]); 2];
        let network: BTreeSet<String> = ["t::online".to_string(), "t::fetch".to_string()].into();
        let labels = compute(&pre, &post).set_aside_network(&network);
        assert_eq!(labels.fail_to_pass, names(&["t::a"]));
        assert_eq!(labels.needs_network, names(&["t::fetch", "t::online"]));
        assert!(labels.pass_to_fail.is_empty() && labels.pass_to_pass.is_empty(), "{labels:?}");
        // A network failure in one run only is not flakiness either, and is never a label.
        let pre =
            vec![run(&[("t::a", Failed), ("t::online", Failed)]), run(&[("t::a", Failed), ("t::online", Passed)])];
        let post = vec![run(&[("t::a", Passed), ("t::online", Passed)]); 2];
        let labels = compute(&pre, &post).set_aside_network(&["t::online".to_string()].into());
        assert_eq!(labels.fail_to_pass, names(&["t::a"]));
        assert!(labels.flaky.is_empty(), "{labels:?}");
        assert_eq!(labels.needs_network, names(&["t::online"]));
    }

    #[test]
    fn no_runs_of_a_phase_label_nothing() {
        let some = vec![run(&[("t::a", Passed)])];
        assert_eq!(compute(&[], &some), Labels::default());
        assert_eq!(compute(&some, &[]), Labels::default());
    }
}
