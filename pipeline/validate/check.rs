//! The check of an environment image: does it run the touched test files' existing
//! tests at the environment commit (at least one runs to a verdict, passed or failed:
//! not only collection errors and skips)? Each image is checked once per process
//! (single flight per image, with the first task's test files, or where they were
//! before the suite moved), and a check that finds nothing to run at all passes. An
//! image that serves one task of the run alone is checked by that task's first run
//! instead ([`super::ladder`]).

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::OnceCell;

use super::ladder::Rung;
use super::{Context, Dropped, dropped};
use crate::model::drop_reason::ValidateDropReason;
use crate::sandbox::script::{self, shell_words};
use crate::sandbox::{self, Job, Owner};

/// The test files the check runs at the environment commit: the touched test files
/// that exist there; when none does (the suite moved, or every touched file is new),
/// the file of the same name elsewhere (`tests/test_x.py` was `test_x.py`), so that
/// an environment that runs no test at all is still caught. No unrelated stand-in:
/// its own failures would climb the ladder away from a faithful environment. The
/// stand-in must be a test file of the ecosystem (`is_test`): axios's new
/// `test/unit/adapters/adapters.js` is not `lib/adapters/adapters.js`.
fn files_to_check(touched: &[String], paths: &[String], is_test: &dyn Fn(&str) -> bool) -> Vec<String> {
    let existing: Vec<String> = touched.iter().filter(|file| paths.contains(file)).cloned().collect();
    if !existing.is_empty() {
        return existing;
    }
    let name = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    let mut sorted: Vec<&String> = paths.iter().collect();
    sorted.sort();
    let touched_names: Vec<String> = touched.iter().map(|file| name(file)).collect();
    sorted
        .into_iter()
        .find(|path| touched_names.contains(&name(path)) && is_test(path))
        .map(|path| vec![path.clone()])
        .unwrap_or_default()
}

/// The outcome of one image's check: `Err` holds why it is unusable.
pub(super) type Check = Result<(), Unusable>;

/// Why an image is unusable: the diagnosis, and the output it comes from (which the
/// ecosystem reads for its next move: a tool the build lacks).
#[derive(Debug, Clone)]
pub(super) struct Unusable {
    pub detail: String,
    pub output: String,
}

/// What the ecosystem says the output lacks (`missing_modules`, and the network
/// that the session reached for: `network_reached_for`), as a line that starts the
/// diagnosis; empty when it names nothing.
pub(super) fn lacks(ecosystem: &dyn crate::ecosystem::Ecosystem, output: &str) -> String {
    let mut missing = ecosystem.missing_modules(output);
    missing.dedup();
    let mut lacks = String::new();
    if let Some(evidence) = ecosystem.network_reached_for(output) {
        lacks.push_str(&needs_network_or_a_missing_file(&evidence));
    }
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|name| format!("`{name}`")).collect();
        lacks.push_str(&format!("the environment lacks {}; ", names.join(", ")));
    }
    lacks
}

/// How a diagnosis says that the test session reached for the network, with the
/// line of its output that shows it.
pub(super) fn needs_network_or_a_missing_file(evidence: &str) -> String {
    format!(
        "the test session needs the network or a file the mirror lacks (it tried to download one: `{evidence}`; \
         a data file kept in git LFS, or left out of the repository's snapshot, is not in the mirror); "
    )
}

/// Checks of environment images, once per image.
#[derive(Default)]
pub(super) struct Checks {
    flights: std::sync::Mutex<HashMap<String, Arc<OnceCell<Check>>>>,
}

/// Whether the image runs the touched test files' existing tests (once per image).
pub(super) async fn check(context: &Context<'_>, rung: &Rung<'_>) -> Result<Check, Dropped> {
    let built = rung.built;
    let flight = {
        let mut flights = context.checks.flights.lock().expect("not poisoned");
        flights.entry(built.tag.clone()).or_default().clone()
    };
    let outcome = flight.get_or_try_init(|| run_check(context, rung)).await?;
    Ok(outcome.clone())
}

async fn run_check(context: &Context<'_>, rung: &Rung<'_>) -> Result<Check, Dropped> {
    let (project, spec, built) = (rung.project, rung.spec, rung.built);
    let candidate = project.candidate;
    let commit = candidate.environment_setup_commit.clone();
    let existing: Vec<String> = {
        let mirror = project.mirror.clone();
        let wanted = rung.test_files.to_vec();
        let commit = commit.clone();
        let ecosystem = project.ecosystem;
        tokio::task::spawn_blocking(move || {
            let paths = crate::git::Mirror::open(&mirror).and_then(|mirror| mirror.list_files(&commit))?;
            // The ecosystem's test files among the paths (it reads them from a diff).
            let listing: String = paths.iter().map(|path| format!("+++ b/{path}\n")).collect();
            let tests: std::collections::HashSet<String> =
                ecosystem.runnable_test_files(&listing).into_iter().collect();
            Ok::<_, crate::git::GitError>(files_to_check(&wanted, &paths, &|path| tests.contains(path)))
        })
        .await
        .map_err(|error| dropped(ValidateDropReason::EnvironmentCommitMissing, error.to_string()))?
        .map_err(|error| dropped(ValidateDropReason::EnvironmentCommitMissing, error.to_string()))?
    };
    if existing.is_empty() {
        tracing::debug!(image = %built.tag, "no test file to check at the environment commit: nothing to check");
        return Ok(Ok(()));
    }
    let ecosystem = project.ecosystem;
    let settings = context.settings;
    let token = script::new_token();
    let report = "/swe-harvest/out/check.xml";
    let invocation = ecosystem.test_invocation(&spec.test_command, report, &shell_words(&existing));
    let text = format!(
        r#"{preamble}mark install begin
install_repository 2>&1; code=$?
mark install "end $code"
[ "$code" -eq 0 ] || exit 0
mark check begin
timeout -k 5 {timeout} {invocation} 2>&1
mark check "end $?"
"#,
        preamble = script::preamble("pipeline/validate/check.rs", &ecosystem.script_setup(&candidate.version)),
        timeout = settings.check_timeout.as_secs().max(1),
    );
    let log_path = settings.images.logs_dir.join("check").join(format!("{}.log", built.tag.replace(['/', ':'], "_")));
    let job = Job {
        instance_id: candidate.instance_id.clone(),
        attempt: 0,
        image: built.tag.clone(),
        user: Owner::UNPRIVILEGED,
        testbed: Some((project.mirror.clone(), commit)),
        files: Vec::new(),
        script: text,
        token: token.clone(),
        env: Vec::new(),
        phases: 1,
        log_path: log_path.clone(),
        data_dir_label: context.data_dir_label.clone(),
    };
    let output = sandbox::run_job(context.backend.as_ref(), &job, settings.limits)
        .await
        .map_err(|error| dropped(ValidateDropReason::ContainerFailed, error.to_string()))?;
    let steps = script::split_steps(&output.log, &token);
    let log = log_path.display();
    let install = steps.get("install");
    if install.and_then(|step| step.exit_code) != Some(0) {
        let output = install.map(|step| step.text.clone()).unwrap_or_default();
        let tail = script::last_lines(&output, 5, "\n");
        let lacks = lacks(ecosystem, &output);
        let detail = format!("{lacks}the repository does not install in the environment:\n{tail}\n(log: {log})");
        return Ok(Err(Unusable { detail, output }));
    }
    let Some(step) = steps.get("check") else {
        let detail = format!("the check of the existing tests did not finish (log: {log})");
        return Ok(Err(Unusable { detail, output: output.log.clone() }));
    };
    let (parsed, _) =
        ecosystem.parse_results(output.reports.get("check.xml").map(String::as_str), &step.text, &existing);
    // A collection error, a skip or no result at all says the environment lacks something.
    if parsed.tests.values().any(|status| status.ran()) {
        return Ok(Ok(()));
    }
    // Out of time (`timeout`'s 124, or 137 when it had to kill): the existing tests hang
    // or are slow at the environment commit, which says nothing against the image (a
    // broken environment fails fast); the task's own runs have the full limit.
    if matches!(step.exit_code, Some(124 | 137)) {
        tracing::warn!(
            image = %built.tag,
            seconds = settings.check_timeout.as_secs(),
            "the check of the existing tests ran out of time before a verdict; keeping the image (log: {log})"
        );
        return Ok(Ok(()));
    }
    let detail = format!(
        "{}the existing tests of {} did not run in the environment ({} results, none ran to a verdict):\n{}\n(log: {log})",
        lacks(ecosystem, &step.text),
        existing.join(", "),
        parsed.tests.len(),
        script::last_lines(&step.text, 5, "\n")
    );
    Ok(Err(Unusable { detail, output: step.text.clone() }))
}

#[cfg(test)]
mod tests {
    use super::{files_to_check, lacks};

    #[test]
    fn a_session_that_reached_for_the_network_is_said_to_need_it_or_a_file_the_mirror_lacks() {
        let pytest = &crate::ecosystem::for_tests::Pytest;
        let output = "ImportError while loading conftest '/tmp/w/tests/conftest.py'.\n\
                      E   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n";
        assert!(
            lacks(pytest, output).starts_with(
                "the test session needs the network or a file the mirror lacks (it tried to download one: \
                 `E   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>`"
            ),
            "{}",
            lacks(pytest, output)
        );
        assert_eq!(lacks(pytest, "E   AssertionError\n"), "");
    }

    fn list(paths: &[&str]) -> Vec<String> {
        paths.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_check_runs_the_touched_test_files_or_a_stand_in_of_the_same_kind() {
        let paths = list(&["README.md", "requests/models.py", "test_requests.py", "tests/test_utils.py"]);
        // The touched files that exist.
        assert_eq!(
            files_to_check(&list(&["tests/test_utils.py", "tests/test_new.py"]), &paths, &|_| true),
            list(&["tests/test_utils.py"])
        );
        // The suite moved: the file of the same name.
        assert_eq!(files_to_check(&list(&["tests/test_requests.py"]), &paths, &|_| true), list(&["test_requests.py"]));
        // Only new files: nothing to check (an unrelated file's failures say nothing).
        assert!(files_to_check(&list(&["tests/test_new.py"]), &paths, &|_| true).is_empty());
        // A source file of the same name is no stand-in for a new test file.
        let node = list(&["lib/adapters/adapters.js", "test/unit/core/Axios.js"]);
        let is_test = |path: &str| crate::ecosystem::for_tests::is_node_test_path(path);
        assert!(files_to_check(&list(&["test/unit/adapters/adapters.js"]), &node, &is_test).is_empty());
    }
}
