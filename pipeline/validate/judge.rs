//! Judging a task's runs in one environment: their labels ([`crate::model::labels`])
//! and whether they make a task, or why not (no test results at all, no
//! FAIL_TO_PASS), with the modules the runs could not import named in the detail.

use std::collections::BTreeSet;
use std::path::Path;

use super::attempt::Attempts;
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

pub(super) fn judge(attempts: &Attempts, test_files: &[String], log_dir: &Path) -> Judged {
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
    let network: BTreeSet<String> = pre.iter().chain(post).flat_map(|run| run.network_failures.clone()).collect();
    let mut labels = labels::compute(&pre_results, &post_results).set_aside_network(&network);
    for evidence in pre.iter().filter_map(|run| run.interrupted.as_ref()) {
        if !labels.interrupted_before.contains(evidence) {
            labels.interrupted_before.push(evidence.clone());
        }
    }
    let verdict = if labels.fail_to_pass.is_empty() {
        Err(dropped(
            ValidateDropReason::NoFailToPass,
            format!(
                "no test failed before the gold patch and passed after it in every run ({} pass to pass, {} flaky, {} broken by the patch, {} need the network){}",
                labels.pass_to_pass.len(),
                labels.flaky.len(),
                labels.pass_to_fail.len(),
                labels.needs_network.len(),
                not_importable(&missing)
            ),
        ))
    } else {
        Ok(())
    };
    Judged { labels: Some(labels), verdict }
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

    #[test]
    fn a_drop_names_the_modules_its_runs_could_not_import() {
        let modules: BTreeSet<String> = ["appdirs.x", "py"].iter().map(|name| name.to_string()).collect();
        assert!(
            not_importable(&modules).starts_with("; the runs could not import appdirs.x, py (not in the environment")
        );
        assert_eq!(not_importable(&BTreeSet::new()), "");
    }
}
