//! The environment ladder, as the stage climbs it for one task: build the image of
//! the spec; when the spec was inferred, check that the image runs the touched test
//! files' existing tests at the environment commit (at least one runs to a verdict,
//! passed or failed: not only collection errors and skips); when the
//! build or the check fails, ask the project's ecosystem for the next rung
//! ([`crate::ecosystem::Ecosystem::next_rung`]) and try that, until one works or no
//! rung is left. The winning spec carries its rung ([`crate::model::Rung`]), which
//! the environment record, the `--input` rows and the release show.
//!
//! Specs from a complete per-repository config are built as given: no check, no
//! ladder (the config is the user's word; `validate --write-config` writes the rung
//! that worked into it). Each environment image is checked once per process (single
//! flight per image, with the first task's test files, or where they were before the
//! suite moved), and a check that finds nothing to run at all passes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::OnceCell;

use super::{Context, Dropped, dropped};
use crate::ecosystem::{Ecosystem, LadderContext, RepoFiles, RungFailure};
use crate::model::drop_reason::ValidateDropReason;
use crate::model::{Candidate, EnvironmentSpec};
use crate::sandbox::images::{BuiltImage, EnvironmentRequest, ImageError, Recipe};
use crate::sandbox::script::{self, shell_words};
use crate::sandbox::{self, Job, Owner};
use crate::store::validation;

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
type Check = Result<(), String>;

/// Checks of environment images, once per image.
#[derive(Default)]
pub(super) struct Checks {
    flights: std::sync::Mutex<HashMap<String, Arc<OnceCell<Check>>>>,
}

/// What the task's environment is made of.
pub(super) struct Environment<'a> {
    pub ecosystem: &'static dyn Ecosystem,
    pub candidate: &'a Candidate,
    pub mirror: &'a Path,
    pub files: &'a RepoFiles,
    pub date: DateTime<Utc>,
    pub test_files: &'a [String],
    /// The runtimes whose base image is there (see `available_runtimes`).
    pub runtimes: &'a [String],
}

/// The first spec that builds and runs, with its image; or the task's drop, whose
/// detail says how every rung failed. The specs of `unusable` are rungs whose image
/// passed its check but in which the task's own runs ran no test to a verdict (old
/// pytest on a newer runtime can collect the environment commit's tests and not the
/// base commit's): they count as unusable, with that detail.
pub(super) async fn climb(
    context: &Context<'_>,
    environment: &Environment<'_>,
    first: EnvironmentSpec,
    unusable: &[(EnvironmentSpec, String)],
) -> Result<(EnvironmentSpec, BuiltImage), Dropped> {
    let ecosystem = environment.ecosystem;
    let candidate = environment.candidate;
    let inferred = first.source == "inferred";
    let mut tried: Vec<EnvironmentSpec> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut spec = first;
    loop {
        let built = build(context, environment, &spec).await;
        let build_log;
        let (failure, reason, detail) = match built {
            Ok(built) => {
                context.note_image(&built);
                if !inferred {
                    return Ok((spec, built));
                }
                let known = unusable.iter().find(|(known, _)| *known == spec).map(|(_, detail)| detail);
                let checked = match known {
                    Some(detail) => Err(detail.clone()),
                    None => check(context, environment, &spec, &built).await?,
                };
                match checked {
                    Ok(()) => {
                        if !tried.is_empty() {
                            tracing::info!(
                                instance_id = %candidate.instance_id, rung = %spec.rung, runtime = %spec.runtime,
                                "the environment ladder found a working rung"
                            );
                        }
                        return Ok((spec, built));
                    }
                    Err(detail) => {
                        // A rung the task's runs condemned stays as its check recorded it.
                        if known.is_none() {
                            record(context, candidate, &spec, &Ok(built), Some(&detail));
                        }
                        (RungFailure::Unusable, ValidateDropReason::EnvironmentUnusable, detail)
                    }
                }
            }
            Err(error) => {
                let climbable = matches!(error, ImageError::BuildFailed { .. });
                if !inferred || !climbable {
                    failures.push(error.to_string());
                    return Err(ladder_drop(error.reason(), &tried, &spec, failures));
                }
                build_log = match &error {
                    ImageError::BuildFailed { log, .. } => fs_err::read_to_string(log).unwrap_or_default(),
                    _ => String::new(),
                };
                (RungFailure::BuildFailed { log: &build_log }, error.reason(), error.to_string())
            }
        };
        failures.push(detail);
        tried.push(spec.clone());
        let ladder = LadderContext { files: environment.files, date: environment.date, runtimes: environment.runtimes };
        match ecosystem.next_rung(&tried, &failure, &ladder) {
            Some(next) => {
                let why = failures.last().and_then(|detail| detail.lines().rev().find(|line| !line.trim().is_empty()));
                tracing::info!(
                    instance_id = %candidate.instance_id, failed = %spec.rung, why = why.unwrap_or_default(),
                    next = %next.rung, runtime = %next.runtime,
                    "the environment failed; trying the next rung of the ladder"
                );
                spec = next;
            }
            None => return Err(ladder_drop(reason, &tried[..tried.len() - 1], &spec, failures)),
        }
    }
}

/// Builds (or finds) the environment image of `spec` and records the attempt.
pub(super) async fn build(
    context: &Context<'_>,
    environment: &Environment<'_>,
    spec: &EnvironmentSpec,
) -> Result<BuiltImage, ImageError> {
    let ecosystem = environment.ecosystem;
    let candidate = environment.candidate;
    let request = EnvironmentRequest {
        repo: candidate.repo.clone(),
        mirror: environment.mirror.to_path_buf(),
        environment_setup_commit: candidate.environment_setup_commit.clone(),
        spec: spec.clone(),
        date: environment.date,
        version: candidate.version.clone(),
    };
    let dockerfile = |base: &str| ecosystem.environment_dockerfile(&request, base, &context.settings.images);
    let recipe = Recipe {
        request: &request,
        fallback_base: ecosystem.local_base_image(&spec.runtime),
        dockerfile: &dockerfile,
        files: ecosystem.environment_context_files(&request, &context.settings.images),
    };
    let built = context.images.ensure(&recipe).await;
    record(context, candidate, spec, &built, None);
    built
}

/// The drop of a task whose every rung failed: the last failure's reason, and each
/// rung's failure in order.
fn ladder_drop(
    reason: ValidateDropReason,
    before: &[EnvironmentSpec],
    last: &EnvironmentSpec,
    failures: Vec<String>,
) -> Dropped {
    if failures.len() == 1 {
        return dropped(reason, failures.into_iter().next().unwrap_or_default());
    }
    let rungs = before.iter().chain(std::iter::once(last));
    let lines: Vec<String> = rungs
        .zip(&failures)
        .map(|(spec, failure)| format!("rung {} ({}): {failure}", spec.rung, runtime_label(spec)))
        .collect();
    dropped(reason, format!("every rung of the environment ladder failed:\n{}", lines.join("\n")))
}

/// The runtime as messages name it: `Python 3.11`, `go1.24`.
fn runtime_label(spec: &EnvironmentSpec) -> String {
    if spec.ecosystem.is_empty() || spec.ecosystem == "python" {
        format!("Python {}", spec.runtime)
    } else {
        spec.runtime.clone()
    }
}

/// Records an environment: built, failed, or (with `unusable`) built but unusable.
fn record(
    context: &Context<'_>,
    candidate: &Candidate,
    spec: &EnvironmentSpec,
    built: &Result<BuiltImage, ImageError>,
    unusable: Option<&str>,
) {
    // Which rung failed how, so that `status` shows it in one look.
    let rung = |detail: &str| format!("rung {} ({}): {detail}", spec.rung, runtime_label(spec));
    let (key, image, status, detail) = match (built, unusable) {
        (Ok(built), None) => (built.key.clone(), Some(built.tag.clone()), "built", None),
        (Ok(built), Some(detail)) => (built.key.clone(), Some(built.tag.clone()), "unusable", Some(rung(detail))),
        (Err(error), _) => (
            format!("failed:{}:{}:{}", candidate.repo, candidate.environment_setup_commit, spec.rung),
            None,
            "failed",
            Some(rung(&error.to_string())),
        ),
    };
    let mut store = context.store.lock().expect("not poisoned");
    let written = store.transaction(|transaction| {
        validation::record_environment(
            transaction,
            &key,
            &candidate.repo,
            &candidate.environment_setup_commit,
            spec,
            image.as_deref(),
            status,
            detail.as_deref(),
        )
    });
    if let Err(error) = written {
        tracing::warn!(%error, "could not record the environment");
    }
}

/// Whether the image runs the touched test files' existing tests (once per image).
async fn check(
    context: &Context<'_>,
    environment: &Environment<'_>,
    spec: &EnvironmentSpec,
    built: &BuiltImage,
) -> Result<Check, Dropped> {
    let flight = {
        let mut flights = context.checks.flights.lock().expect("not poisoned");
        flights.entry(built.tag.clone()).or_default().clone()
    };
    let outcome = flight.get_or_try_init(|| run_check(context, environment, spec, built)).await?;
    Ok(outcome.clone())
}

async fn run_check(
    context: &Context<'_>,
    environment: &Environment<'_>,
    spec: &EnvironmentSpec,
    built: &BuiltImage,
) -> Result<Check, Dropped> {
    let candidate = environment.candidate;
    let commit = candidate.environment_setup_commit.clone();
    let existing: Vec<String> = {
        let mirror = environment.mirror.to_path_buf();
        let wanted = environment.test_files.to_vec();
        let commit = commit.clone();
        let ecosystem = environment.ecosystem;
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
    let ecosystem = environment.ecosystem;
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
        preamble = script::preamble("pipeline/validate/ladder.rs", &ecosystem.script_setup(&candidate.version)),
        timeout = settings.check_timeout.as_secs().max(1),
    );
    let log_path = settings.images.logs_dir.join("check").join(format!("{}.log", built.tag.replace(['/', ':'], "_")));
    let job = Job {
        instance_id: candidate.instance_id.clone(),
        attempt: 0,
        image: built.tag.clone(),
        user: Owner::UNPRIVILEGED,
        testbed: Some((environment.mirror.to_path_buf(), commit)),
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
        let tail = install.map(|step| script::last_lines(&step.text, 5, "\n")).unwrap_or_default();
        return Ok(Err(format!("the repository does not install in the environment:\n{tail}\n(log: {log})")));
    }
    let Some(step) = steps.get("check") else {
        return Ok(Err(format!("the check of the existing tests did not finish (log: {log})")));
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
    Ok(Err(format!(
        "the existing tests of {} did not run in the environment ({} results, none ran to a verdict):\n{}\n(log: {log})",
        existing.join(", "),
        parsed.tests.len(),
        script::last_lines(&step.text, 5, "\n")
    )))
}

#[cfg(test)]
mod tests {
    use super::files_to_check;

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
        let is_test = |path: &str| crate::ecosystem::node::is_node_test_path(path);
        assert!(files_to_check(&list(&["test/unit/adapters/adapters.js"]), &node, &is_test).is_empty());
    }
}
