//! What one mutant's run says ([`judge`]): `killed` when a listed test (a
//! FAIL_TO_PASS test, or a PASS_TO_PASS test of the touched test files) does not
//! pass, `survived` when every one passes, `stillborn` when the mutant does not
//! apply or none of the listed tests runs to a verdict (it does not build or
//! collect), `timeout` when its tests ran past probe's limit. Pure over the run's
//! parsed results; "passes" is what labelling calls passing (passed, xfail, xpass).

use std::collections::BTreeSet;

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;
use crate::model::probe::MutantStatus;

/// What the container printed of one mutant.
#[derive(Debug, Clone, Default)]
pub struct MutantPhase<'a> {
    /// The exit code of applying the mutant; `None` when that step never ended.
    pub apply_exit: Option<i64>,
    /// What applying printed.
    pub apply_text: &'a str,
    /// The exit code of the test phase (124: probe's time limit); `None` when it never
    /// ended.
    pub tests_exit: Option<i64>,
    /// The results the ecosystem read from the phase's report or log.
    pub results: Option<&'a ParsedRun>,
}

/// A mutant's verdict, the listed tests that did not pass, and a line on why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub status: MutantStatus,
    pub killing_tests: Vec<String>,
    pub detail: String,
}

/// The tests a mutant must pass: the task's FAIL_TO_PASS and its PASS_TO_PASS (which
/// come from the touched test files, the only ones validate runs).
pub fn listed_tests(fail_to_pass: &[String], pass_to_pass: &[String]) -> BTreeSet<String> {
    fail_to_pass.iter().chain(pass_to_pass).cloned().collect()
}

/// Judges one mutant's phase; `None` when the container ended before it began (it
/// runs again in another container).
pub fn judge(phase: &MutantPhase<'_>, listed: &BTreeSet<String>, timeout_secs: u64) -> Option<Verdict> {
    let verdict = |status: MutantStatus, killing_tests: Vec<String>, detail: String| {
        Some(Verdict { status, killing_tests, detail })
    };
    match phase.apply_exit {
        None => return None,
        Some(0) => {}
        Some(_) => {
            return verdict(
                MutantStatus::Stillborn,
                Vec::new(),
                format!("does not apply: {}", crate::sandbox::script::last_lines(phase.apply_text, 2, " | ")),
            );
        }
    }
    match phase.tests_exit {
        Some(124) => {
            return verdict(MutantStatus::Timeout, Vec::new(), format!("its tests ran past {timeout_secs}s"));
        }
        Some(137) => {
            return verdict(
                MutantStatus::Stillborn,
                Vec::new(),
                "its tests were killed (memory or process limits)".to_string(),
            );
        }
        None => return None,
        Some(_) => {}
    }
    let results = phase.results.cloned().unwrap_or_default();
    let status = |test: &str| results.tests.get(test).copied();
    // A listed test with a result of its own (an error in its body counts: JUnit
    // reports an uncaught exception so) ran; a session that collected or built nothing
    // gives the listed tests no result at all, or skips.
    let ran_any = listed.iter().any(|test| status(test).is_some_and(|status| status != TestStatus::Skipped));
    if !ran_any {
        let why = results.interrupted.as_deref().unwrap_or("none of the listed tests ran to a verdict");
        return verdict(MutantStatus::Stillborn, Vec::new(), format!("does not build or collect ({why})"));
    }
    let failing: Vec<String> = listed
        .iter()
        .filter(|test| matches!(status(test), Some(TestStatus::Failed | TestStatus::Error | TestStatus::Skipped)))
        .cloned()
        .collect();
    if !failing.is_empty() {
        let detail = format!("{} listed test(s) fail", failing.len());
        return verdict(MutantStatus::Killed, failing, detail);
    }
    // A listed test with no result while others ran: SWE-bench's harness counts it as
    // not passing. After a failure a runner that stops at the first one leaves the
    // rest without result, which is covered above.
    let missing: Vec<String> = listed.iter().filter(|test| status(test).is_none()).cloned().collect();
    if !missing.is_empty() {
        let detail = format!("{} listed test(s) gave no result", missing.len());
        return verdict(MutantStatus::Killed, missing, detail);
    }
    verdict(MutantStatus::Survived, Vec::new(), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(results: &[(&str, TestStatus)]) -> ParsedRun {
        let mut parsed = ParsedRun::default();
        for (id, status) in results {
            parsed.record(id, *status);
        }
        parsed
    }

    fn listed() -> BTreeSet<String> {
        listed_tests(&["t::f2p".into()], &["t::p2p".into()])
    }

    fn phase<'a>(apply: Option<i64>, tests: Option<i64>, results: Option<&'a ParsedRun>) -> MutantPhase<'a> {
        MutantPhase { apply_exit: apply, apply_text: "error: patch failed: a.py:3\n", tests_exit: tests, results }
    }

    #[test]
    fn each_outcome_follows_from_the_run() {
        let all_pass =
            run(&[("t::f2p", TestStatus::Passed), ("t::p2p", TestStatus::Xfail), ("t::other", TestStatus::Failed)]);
        let verdict = judge(&phase(Some(0), Some(1), Some(&all_pass)), &listed(), 60).unwrap();
        assert_eq!(verdict.status, MutantStatus::Survived, "a test nobody listed does not count");

        let one_fails = run(&[("t::f2p", TestStatus::Failed), ("t::p2p", TestStatus::Passed)]);
        let verdict = judge(&phase(Some(0), Some(1), Some(&one_fails)), &listed(), 60).unwrap();
        assert_eq!((verdict.status, verdict.killing_tests), (MutantStatus::Killed, vec!["t::f2p".to_string()]));

        // Stopped at the first failure: the other listed test has no result.
        let stopped = run(&[("t::p2p", TestStatus::Error)]);
        assert_eq!(
            judge(&phase(Some(0), Some(1), Some(&stopped)), &listed(), 60).unwrap().status,
            MutantStatus::Killed
        );

        let vanished = run(&[("t::p2p", TestStatus::Passed)]);
        let verdict = judge(&phase(Some(0), Some(0), Some(&vanished)), &listed(), 60).unwrap();
        assert_eq!((verdict.status, verdict.killing_tests), (MutantStatus::Killed, vec!["t::f2p".to_string()]));

        let nothing_ran =
            ParsedRun { interrupted: Some("error: could not compile `x`".into()), ..ParsedRun::default() };
        let verdict = judge(&phase(Some(0), Some(101), Some(&nothing_ran)), &listed(), 60).unwrap();
        assert_eq!(verdict.status, MutantStatus::Stillborn);
        assert!(verdict.detail.contains("could not compile"), "{}", verdict.detail);

        let verdict = judge(&phase(Some(1), None, None), &listed(), 60).unwrap();
        assert_eq!(verdict.status, MutantStatus::Stillborn);
        assert!(verdict.detail.contains("patch failed: a.py:3"), "{}", verdict.detail);

        let verdict = judge(&phase(Some(0), Some(124), None), &listed(), 60).unwrap();
        assert_eq!((verdict.status, verdict.detail.as_str()), (MutantStatus::Timeout, "its tests ran past 60s"));

        assert_eq!(judge(&phase(None, None, None), &listed(), 60), None, "never began: runs again");
        assert_eq!(judge(&phase(Some(0), None, None), &listed(), 60), None, "never ended: runs again");
    }
}
