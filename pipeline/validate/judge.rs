//! Judging a task's runs in one environment: their labels ([`crate::model::labels`])
//! and whether they make a task, or why not (no test results at all, no
//! FAIL_TO_PASS), with the modules the runs could not import named in the detail.
//! Tests that the gold patch itself defines are set aside before the verdict: no
//! other fix could pass them ([`crate::ecosystem::Ecosystem::defined_by_the_patch`]).

use std::collections::BTreeSet;
use std::path::Path;

use super::attempt::{Attempts, CONTRASTING_TIME_ZONE};
use super::{Dropped, dropped};
use crate::model::ValidationRun;
use crate::model::drop_reason::ValidateDropReason;
use crate::model::labels::{self, Labels};

/// The labels of an environment's runs, and whether they make a task.
pub(super) struct Judged {
    /// `None` when no run collected a test.
    pub labels: Option<Labels>,
    pub verdict: Result<(), Dropped>,
}

impl Judged {
    /// Whether the runs make a task.
    pub fn labelled(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// `defined_by_the_fix` says whether the gold patch defines a test id.
pub(super) fn judge(
    attempts: &Attempts,
    test_files: &[String],
    log_dir: &Path,
    defined_by_the_fix: &dyn Fn(&str) -> bool,
) -> Judged {
    let missing = attempts.missing();
    let (pre, post) = (&attempts.pre, &attempts.post);
    if pre.iter().chain(post).all(|run| run.tests.is_empty()) {
        let detail = format!(
            "no test results in any run of {}{}; see the logs in `{}`",
            test_files.join(", "),
            not_importable(&missing),
            log_dir.display()
        );
        return Judged { labels: None, verdict: Err(dropped(ValidateDropReason::NoTestsCollected, detail)) };
    }
    let all: BTreeSet<String> = pre.iter().chain(post).flat_map(|run| run.tests.keys().cloned()).collect();
    let results = |runs: &[ValidationRun]| -> Vec<labels::RunResults> {
        runs.iter().map(|run| labels::unreached_as_skipped(&run.tests, run.asked_for.as_ref(), &all)).collect()
    };
    let (pre_results, post_results) = (results(pre), results(post));
    let mut network: BTreeSet<String> = pre.iter().chain(post).flat_map(|run| run.network_failures.clone()).collect();
    // A test that depends on what failed for want of the network needs it unless it
    // passed in some run (then it did without).
    network.extend(
        pre.iter()
            .chain(post)
            .flat_map(|run| run.network_dependents.iter())
            .filter(|test| pre.iter().chain(post).all(|run| !labels::passes(run.tests.get(test.as_str()))))
            .cloned(),
    );
    let mut labels = labels::compute(&pre_results, &post_results)
        .set_aside_network(&network)
        .set_aside_defined_by_the_fix(defined_by_the_fix);
    // The runs in the usual time zone alone: a test flaky only with the run under
    // another one depends on the time zone.
    let usual = |runs: &[ValidationRun]| -> Vec<ValidationRun> {
        runs.iter().filter(|run| run.time_zone.as_deref() != Some(CONTRASTING_TIME_ZONE)).cloned().collect()
    };
    let (usual_pre, usual_post) = (usual(pre), usual(post));
    if usual_pre.len() < pre.len() || usual_post.len() < post.len() {
        let steady = labels::compute(&results(&usual_pre), &results(&usual_post))
            .set_aside_defined_by_the_fix(defined_by_the_fix);
        labels.time_zone_dependent = labels.flaky.iter().filter(|test| !steady.flaky.contains(test)).cloned().collect();
    }
    for evidence in pre.iter().filter_map(|run| run.interrupted.as_ref()) {
        if !labels.interrupted_before.contains(evidence) {
            labels.interrupted_before.push(evidence.clone());
        }
    }
    labels.test_selection = selections(pre, post);
    labels.part_of = pre.iter().chain(post).flat_map(|run| run.part_of.clone()).collect();
    let verdict = if labels.fail_to_pass.is_empty() {
        Err(dropped(
            ValidateDropReason::NoFailToPass,
            format!(
                "no test failed before the gold patch and passed after it in every run ({} pass to pass, {} flaky, {} broken by the patch, {} need the network){}{}{}{}",
                labels.pass_to_pass.len(),
                labels.flaky.len(),
                labels.pass_to_fail.len(),
                labels.needs_network.len(),
                defined_by_the_gold_patch(&labels.defined_by_the_fix),
                vanished_after(&labels.fail_to_fail, post),
                past_the_file_size_limit(pre.iter().chain(post)),
                not_importable(&missing)
            ),
        ))
    } else {
        Ok(())
    };
    Judged { labels: Some(labels), verdict }
}

/// Each statement of how the runs chose their tests once, with the phases whose runs
/// made it: `before and after the gold patch: ...` when they agree.
fn selections(pre: &[ValidationRun], post: &[ValidationRun]) -> Vec<String> {
    let of = |runs: &[ValidationRun]| -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for selection in runs.iter().filter_map(|run| run.test_selection.clone()) {
            if !seen.contains(&selection) {
                seen.push(selection);
            }
        }
        seen
    };
    let (before, after) = (of(pre), of(post));
    let mut statements = Vec::new();
    for selection in &before {
        let phases =
            if after.contains(selection) { "before and after the gold patch" } else { "before the gold patch" };
        statements.push(format!("{phases}: {selection}"));
    }
    for selection in after.iter().filter(|selection| !before.contains(selection)) {
        statements.push(format!("after the gold patch: {selection}"));
    }
    statements
}

/// `; defined by the gold patch itself, so no fair label: X, Y`, or nothing.
fn defined_by_the_gold_patch(tests: &[String]) -> String {
    if tests.is_empty() {
        return String::new();
    }
    format!("; defined by the gold patch itself, so no fair label (no other fix could pass them): {}", tests.join(", "))
}

/// `; failed before the gold patch and gave no result after it: X, Y`, or nothing: a
/// test that vanishes with the fix is no fail-to-pass test, yet it may be what the
/// test patch checks (Jest's `D > encountered a declaration exception`, its report of
/// a `describe` block whose own code, outside any test, threw: dayjs-867).
fn vanished_after(fail_to_fail: &[String], post: &[ValidationRun]) -> String {
    let vanished: Vec<&str> = fail_to_fail
        .iter()
        .filter(|test| post.iter().all(|run| !run.tests.contains_key(*test)))
        .map(String::as_str)
        .collect();
    if vanished.is_empty() {
        return String::new();
    }
    format!("; failed before the gold patch and gave no result after it: {}", vanished.join(", "))
}

/// How a drop's detail says that a run wrote past the container's file-size limit.
pub(super) const PAST_THE_FILE_SIZE_LIMIT: &str = "a run wrote past the file-size limit";

/// `; a run wrote past the file-size limit (...)`, or nothing: its tests may pass
/// with `validate.file_size_bytes` raised.
fn past_the_file_size_limit<'a>(mut runs: impl Iterator<Item = &'a ValidationRun>) -> String {
    let words = crate::ecosystem::FILE_SIZE_LIMIT_WORDS;
    runs.find_map(|run| run.interrupted.as_ref().filter(|evidence| words.iter().any(|w| evidence.contains(w))))
        .map(|evidence| {
            format!(
                "; {PAST_THE_FILE_SIZE_LIMIT} (`{evidence}`): its tests write larger files than validate.file_size_bytes allows, and may pass with it raised"
            )
        })
        .unwrap_or_default()
}

/// `; the runs could not import py, appdirs (not in the environment)`, or nothing.
fn not_importable(modules: &BTreeSet<String>) -> String {
    if modules.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = modules.iter().map(String::as_str).collect();
    format!(
        "; the runs could not import {} (not in the environment: the environment commit's dependencies may lack what this commit imports)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::{RunPhase, TestStatus};

    fn run(phase: RunPhase, attempt: u32, time_zone: &str, tests: &[(&str, TestStatus)]) -> ValidationRun {
        ValidationRun {
            instance_id: "a__b-1".into(),
            phase,
            attempt,
            image: "img".into(),
            exit_code: Some(0),
            timed_out: false,
            duration_secs: 1.0,
            tests: tests.iter().map(|(name, status)| (name.to_string(), *status)).collect(),
            test_durations: Default::default(),
            results_source: "junit".into(),
            network_failures: Default::default(),
            network_dependents: Default::default(),
            interrupted: None,
            asked_for: None,
            time_zone: Some(time_zone.into()),
            test_selection: None,
            missing_modules: Default::default(),
            part_of: Default::default(),
        }
    }

    #[test]
    fn a_test_that_disagrees_only_in_the_other_time_zone_depends_on_it() {
        use TestStatus::{Failed, Passed};
        let phase = |phase: RunPhase, fixed: TestStatus| -> Vec<ValidationRun> {
            (1..=3)
                .map(|attempt| {
                    let (zone, local) = if attempt == 3 { (CONTRASTING_TIME_ZONE, Failed) } else { ("UTC", Passed) };
                    let noisy = if attempt == 1 { Failed } else { Passed };
                    run(phase, attempt, zone, &[("t::fix", fixed), ("t::local", local), ("t::noisy", noisy)])
                })
                .collect()
        };
        let attempts = Attempts { pre: phase(RunPhase::Pre, Failed), post: phase(RunPhase::Post, Passed) };
        let judged = judge(&attempts, &["t.py".to_string()], Path::new("logs"), &|_| false);
        let labels = judged.labels.expect("results");
        assert_eq!(labels.fail_to_pass, ["t::fix"]);
        assert_eq!(labels.flaky, ["t::local", "t::noisy"]);
        assert_eq!(labels.time_zone_dependent, ["t::local"], "t::noisy disagrees among the UTC runs too");
    }

    #[test]
    fn how_the_runs_chose_their_tests_is_said_once_with_the_phases_that_chose_so() {
        use TestStatus::{Failed, Passed};
        let chose = |phase: RunPhase, attempt: u32, selection: &str, status: TestStatus| ValidationRun {
            test_selection: Some(selection.into()),
            ..run(phase, attempt, "UTC", &[("t", status)])
        };
        let attempts = Attempts {
            pre: vec![chose(RunPhase::Pre, 1, "all of them", Failed), chose(RunPhase::Pre, 2, "all of them", Failed)],
            post: vec![chose(RunPhase::Post, 1, "all of them", Passed), chose(RunPhase::Post, 2, "t and u", Passed)],
        };
        let labels = judge(&attempts, &["t.c".to_string()], Path::new("logs"), &|_| false).labels.expect("results");
        assert_eq!(
            labels.test_selection,
            ["before and after the gold patch: all of them", "after the gold patch: t and u"]
        );
        let given = Attempts {
            pre: vec![run(RunPhase::Pre, 1, "UTC", &[("t", Failed)])],
            post: vec![run(RunPhase::Post, 1, "UTC", &[("t", Passed)])],
        };
        let labels = judge(&given, &["t.py".to_string()], Path::new("logs"), &|_| false).labels.expect("results");
        assert!(labels.test_selection.is_empty(), "the tests to run were given");
    }

    #[test]
    fn the_tests_each_case_was_part_of_come_from_the_runs_of_both_phases() {
        use TestStatus::{Failed, Passed};
        let part = |phase: RunPhase, status: TestStatus, case: &str| ValidationRun {
            part_of: [(case.to_string(), "unit".to_string())].into(),
            ..run(phase, 1, "UTC", &[(case, status)])
        };
        // Before the fix the program stopped after its first case; after it, both ran.
        let mut post = part(RunPhase::Post, Passed, "Add.Negative");
        post.tests.insert("Add.Small".into(), Passed);
        post.part_of.insert("Add.Small".into(), "unit".into());
        let attempts = Attempts { pre: vec![part(RunPhase::Pre, Failed, "Add.Negative")], post: vec![post] };
        let labels = judge(&attempts, &["t.cc".to_string()], Path::new("logs"), &|_| false).labels.expect("results");
        assert_eq!(labels.fail_to_pass, ["Add.Negative", "Add.Small"]);
        assert_eq!(
            labels.part_of.iter().map(|(case, test)| (case.as_str(), test.as_str())).collect::<Vec<_>>(),
            [("Add.Negative", "unit"), ("Add.Small", "unit")]
        );
    }

    #[test]
    fn a_drop_names_the_tests_that_failed_before_the_fix_and_vanished_with_it() {
        use TestStatus::{Failed, Passed};
        let declaration = "test/d.test.js > Seconds > encountered a declaration exception";
        let attempts = Attempts {
            pre: vec![run(
                RunPhase::Pre,
                1,
                "UTC",
                &[(declaration, Failed), ("test/d.test.js > kept", Passed), ("old", Failed)],
            )],
            post: vec![run(RunPhase::Post, 1, "UTC", &[("test/d.test.js > kept", Passed), ("old", Failed)])],
        };
        let judged = judge(&attempts, &["test/d.test.js".to_string()], Path::new("logs"), &|_| false);
        let detail = judged.verdict.expect_err("no fail-to-pass test").detail;
        assert!(
            detail.ends_with(&format!("(1 pass to pass, 0 flaky, 0 broken by the patch, 0 need the network); failed before the gold patch and gave no result after it: {declaration}")),
            "{detail}"
        );
    }

    #[test]
    fn a_test_that_depends_on_an_offline_fixture_needs_the_network_unless_it_passed_without_it() {
        use TestStatus::{Failed, Passed};
        let offline = |phase: RunPhase, add: TestStatus| ValidationRun {
            network_failures: ["download_test_data".to_string()].into(),
            network_dependents: ["add".to_string(), "add_data".to_string()].into(),
            ..run(phase, 1, "UTC", &[("add", add), ("add_data", Failed)])
        };
        let attempts =
            Attempts { pre: vec![offline(RunPhase::Pre, Failed)], post: vec![offline(RunPhase::Post, Passed)] };
        let labels = judge(&attempts, &["tests/test_add.c".to_string()], Path::new("logs"), &|_| false).labels.unwrap();
        assert_eq!(labels.fail_to_pass, ["add"], "it passed without the fixture's data");
        assert_eq!(labels.needs_network, ["add_data", "download_test_data"]);
        assert!(labels.fail_to_fail.is_empty(), "{:?}", labels.fail_to_fail);
    }

    #[test]
    fn a_test_the_gold_patch_defines_is_never_labelled_and_a_drop_names_it() {
        use TestStatus::{Failed, Passed};
        let defined = |test: &str| test.starts_with("vscreen::tests::");
        let attempts = Attempts {
            pre: vec![run(RunPhase::Pre, 1, "UTC", &[("tests::bug", Failed), ("tests::old", Passed)])],
            post: vec![run(
                RunPhase::Post,
                1,
                "UTC",
                &[("tests::bug", Passed), ("tests::old", Passed), ("vscreen::tests::fits", Passed)],
            )],
        };
        let labels = judge(&attempts, &["src/tests.rs".to_string()], Path::new("logs"), &defined).labels.unwrap();
        assert_eq!(labels.fail_to_pass, ["tests::bug"]);
        assert_eq!(labels.no_result_before, Vec::<String>::new());
        assert_eq!(labels.defined_by_the_fix, ["vscreen::tests::fits"]);
        // When they are all the fix's own tests, the task is dropped, saying so.
        let only_the_fixs = Attempts {
            pre: vec![run(RunPhase::Pre, 1, "UTC", &[("tests::old", Passed)])],
            post: vec![run(RunPhase::Post, 1, "UTC", &[("tests::old", Passed), ("vscreen::tests::fits", Passed)])],
        };
        let detail = judge(&only_the_fixs, &["src/tests.rs".to_string()], Path::new("logs"), &defined)
            .verdict
            .unwrap_err()
            .detail;
        assert!(detail.contains("; defined by the gold patch itself, so no fair label (no other fix could pass them): vscreen::tests::fits"), "{detail}");
    }

    #[test]
    fn a_drop_says_that_a_run_wrote_past_the_file_size_limit() {
        use TestStatus::Failed;
        let stopped = |phase: RunPhase| ValidationRun {
            interrupted: Some("File size limit exceeded".into()),
            ..run(phase, 1, "UTC", &[("tests/make-test-zstd", Failed)])
        };
        let attempts = Attempts { pre: vec![stopped(RunPhase::Pre)], post: vec![stopped(RunPhase::Post)] };
        let detail = judge(&attempts, &["tests/playTests.sh".to_string()], Path::new("logs"), &|_| false)
            .verdict
            .expect_err("no fail-to-pass test")
            .detail;
        assert!(
            detail.ends_with("; a run wrote past the file-size limit (`File size limit exceeded`): its tests write larger files than validate.file_size_bytes allows, and may pass with it raised"),
            "{detail}"
        );
    }

    #[test]
    fn a_drop_names_the_modules_its_runs_could_not_import() {
        let modules: BTreeSet<String> = ["appdirs.x", "py"].iter().map(|name| name.to_string()).collect();
        assert!(
            not_importable(&modules).starts_with("; the runs could not import appdirs.x, py (not in the environment")
        );
        assert_eq!(not_importable(&BTreeSet::new()), "");
    }
}
