//! The task's runs in one environment: each validation attempt in its own container
//! installs the repository at base_commit (offline: the dependencies are in the
//! environment image), applies the test patch, runs the touched test files (pre),
//! applies the gold patch and runs them again (post). Each step is wrapped in markers
//! that carry this run's random token; the test phases write structured reports that
//! the project's ecosystem reads. [`run_all`] runs the `--runs` attempts, resuming
//! after those already stored for the same content, and turns a failed step into the
//! task's drop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Context, Dropped, dropped};
use crate::ecosystem::{Ecosystem, ParsedRun, ResultsSource};
use crate::model::drop_reason::ValidateDropReason;
use crate::model::{Candidate, EnvironmentSpec, RunPhase, ValidationRun};
use crate::sandbox::images::BuiltImage;
use crate::sandbox::script::{self, StepOutput};
use crate::sandbox::{self, Backend, Job, Limits, Owner, RunError};
use crate::store::validation;

/// The time zone of the task's runs (`TZ`): UTC, what SWE-bench's harness and most
/// projects' CI run in, and what the base images' `/etc/localtime` names.
pub const TIME_ZONE: &str = "UTC";

/// The time zone of the last run when there are three or more (decision,
/// 2026-11-27): an offset of +12:45 (+13:45 in its summer), far from UTC and not a
/// whole hour, so that a test whose result depends on the machine's time zone
/// shows it by disagreeing with the other runs, and is reported as depending on the
/// time zone instead of labelled.
pub const CONTRASTING_TIME_ZONE: &str = "Pacific/Chatham";

/// The time zone of attempt `attempt` of `runs`.
pub fn time_zone_of(attempt: u32, runs: u32) -> &'static str {
    if runs >= 3 && attempt == runs { CONTRASTING_TIME_ZONE } else { TIME_ZONE }
}

/// One run to do.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub instance_id: String,
    pub attempt: u32,
    /// `TZ` in the container ([`time_zone_of`]).
    pub time_zone: &'static str,
    pub image: String,
    pub mirror: PathBuf,
    pub base_commit: String,
    pub version: String,
    pub test_patch: String,
    pub gold_patch: String,
    pub test_files: Vec<String>,
    pub test_command: String,
    /// Where this run's log and reports are written.
    pub log_dir: PathBuf,
    /// The value of [`sandbox::DATA_DIR_LABEL`].
    pub data_dir_label: String,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    pub steps: BTreeMap<String, StepOutput>,
    /// Results per phase (`pre`, `post`), from the structured report or else the log.
    pub results: BTreeMap<String, (ParsedRun, ResultsSource)>,
    pub exit_code: Option<i64>,
    /// The container hit the outer wall-time limit and was killed.
    pub timed_out: bool,
    pub oom_killed: bool,
    pub duration_secs: f64,
    /// Seconds per test phase, measured inside the container.
    pub phase_secs: BTreeMap<String, f64>,
    pub log_path: PathBuf,
}

/// The script that runs inside the container. The token is its first argument.
pub fn script(ecosystem: &dyn Ecosystem, request: &RunRequest, phase_timeout: Duration) -> String {
    let invocation = ecosystem.test_invocation(
        &request.test_command,
        r#"/swe-harvest/out/"$phase".xml"#,
        &script::shell_words(&request.test_files),
    );
    format!(
        r#"{preamble}run_tests() {{
    phase="$1"
    mark "$phase" begin
    start=$(date +%s.%N)
    timeout -k 5 {timeout} {invocation} 2>&1
    code=$?
    end=$(date +%s.%N)
    cleanup
    mark "$phase" "end $code"
    echo "@@swe-harvest $token $phase-seconds $start $end"
}}
# A step that must succeed before the next one: marked, and the attempt ends when it fails.
step() {{
    phase="$1"
    shift
    mark "$phase" begin
    "$@" 2>&1
    code=$?
    mark "$phase" "end $code"
    [ "$code" -eq 0 ] || exit 0
}}
step install install_repository
step test_patch apply_patch /swe-harvest/test.patch
run_tests pre
# A phase that hit its time limit is not followed by another (the task is dropped as a timeout).
[ "$code" -ne 124 ] || exit 0
step gold_patch apply_patch /swe-harvest/gold.patch
run_tests post
mark done begin
mark done "end 0"
"#,
        preamble = script::preamble("pipeline/validate/attempt.rs", &ecosystem.script_setup(&request.version)),
        timeout = phase_timeout.as_secs().max(1),
    )
}

/// Where attempt `attempt`'s log goes in a task's log folder `log_dir`.
pub fn log_path(log_dir: &Path, attempt: u32) -> PathBuf {
    log_dir.join(format!("run-{attempt}.log"))
}

/// Runs one validation attempt: install, test patch, pre, gold patch, post.
pub async fn run(
    backend: &dyn Backend,
    ecosystem: &dyn Ecosystem,
    request: &RunRequest,
    limits: Limits,
) -> Result<RunOutcome, RunError> {
    let token = script::new_token();
    let job = Job {
        instance_id: request.instance_id.clone(),
        attempt: request.attempt,
        image: request.image.clone(),
        user: Owner::UNPRIVILEGED,
        testbed: Some((request.mirror.clone(), request.base_commit.clone())),
        files: vec![
            ("test.patch".into(), request.test_patch.clone().into_bytes(), 0o644),
            ("gold.patch".into(), request.gold_patch.clone().into_bytes(), 0o644),
        ],
        script: script(ecosystem, request, limits.run_timeout),
        token: token.clone(),
        env: vec![format!("SWE_HARVEST_ATTEMPT={}", request.attempt), format!("TZ={}", request.time_zone)],
        phases: 2,
        log_path: log_path(&request.log_dir, request.attempt),
        data_dir_label: request.data_dir_label.clone(),
    };
    let output = sandbox::run_job(backend, &job, limits).await?;
    let steps = script::split_steps(&output.log, &token);
    let mut results = BTreeMap::new();
    let mut phase_secs = BTreeMap::new();
    for phase in ["pre", "post"] {
        let Some(step) = steps.get(phase) else { continue };
        let report = output.reports.get(&format!("{phase}.xml")).map(String::as_str);
        results.insert(phase.to_string(), ecosystem.parse_results(report, &step.text, &request.test_files));
        if let Some(seconds) = script::phase_seconds(&output.log, &token, phase) {
            phase_secs.insert(phase.to_string(), seconds);
        }
    }
    Ok(RunOutcome {
        steps,
        results,
        exit_code: output.exit_code,
        timed_out: output.timed_out,
        oom_killed: output.oom_killed,
        duration_secs: output.duration_secs,
        phase_secs,
        log_path: job.log_path,
    })
}

/// The runs of one environment, before and after the gold patch.
pub(super) struct Attempts {
    pub pre: Vec<ValidationRun>,
    pub post: Vec<ValidationRun>,
}

impl Attempts {
    /// Whether any run, before or after the gold patch, ran a test to a verdict
    /// (passed, failed, xfail or xpass): not only collection errors, skips or nothing.
    pub fn anything_ran(&self) -> bool {
        self.pre.iter().chain(&self.post).flat_map(|run| run.tests.values()).any(|status| status.ran())
    }

    /// The modules the runs before the gold patch could not import.
    pub fn missing_pre(&self) -> BTreeSet<String> {
        missing_modules(&self.pre)
    }

    /// The modules the runs after the gold patch could not import.
    pub fn missing_post(&self) -> BTreeSet<String> {
        missing_modules(&self.post)
    }

    /// The modules the runs could not import, before or after the gold patch.
    pub fn missing(&self) -> BTreeSet<String> {
        missing_modules(self.pre.iter().chain(&self.post))
    }
}

fn missing_modules<'a>(runs: impl IntoIterator<Item = &'a ValidationRun>) -> BTreeSet<String> {
    runs.into_iter().flat_map(|run| run.missing_modules.iter().cloned()).collect()
}

/// What the task's runs in one environment are made of.
pub(super) struct Environment<'a> {
    pub candidate: &'a Candidate,
    pub ecosystem: &'static dyn Ecosystem,
    pub spec: &'a EnvironmentSpec,
    pub built: &'a BuiltImage,
    pub mirror: &'a Path,
    pub test_files: &'a [String],
    /// Where the runs leave their logs and reports.
    pub log_dir: &'a Path,
}

/// Runs attempts 1 to `last` in `environment`, resuming after the attempts already
/// stored for this very content (patches, commits, environment): the same id with
/// other content runs afresh. Adds the seconds of the test phases run here to
/// `test_secs`.
pub(super) async fn run_all(
    context: &Context<'_>,
    environment: &Environment<'_>,
    last: u32,
    test_secs: &mut f64,
) -> Result<Attempts, Dropped> {
    let settings = context.settings;
    let Environment { candidate, ecosystem, spec, built, .. } = *environment;
    let content_hash = validation::run_content_hash(candidate, spec, &built.tag);
    let stored = {
        let store = context.store.lock().expect("not poisoned");
        validation::runs_for_content(store.connection(), &candidate.instance_id, &content_hash)
            .map_err(|error| dropped(ValidateDropReason::StoreError, error.to_string()))?
    };
    let complete = |attempt: u32| {
        stored.iter().any(|run| run.attempt == attempt && run.phase == RunPhase::Pre)
            && stored.iter().any(|run| run.attempt == attempt && run.phase == RunPhase::Post)
    };
    let mut attempts = Attempts { pre: Vec::new(), post: Vec::new() };
    for attempt in 1..=last {
        if complete(attempt) {
            let phase = |phase: RunPhase| stored.iter().filter(move |run| run.attempt == attempt && run.phase == phase);
            attempts.pre.extend(phase(RunPhase::Pre).cloned());
            attempts.post.extend(phase(RunPhase::Post).cloned());
            continue;
        }
        let request = RunRequest {
            instance_id: candidate.instance_id.clone(),
            attempt,
            time_zone: time_zone_of(attempt, settings.runs),
            image: built.tag.clone(),
            mirror: environment.mirror.to_path_buf(),
            base_commit: candidate.base_commit.clone(),
            version: candidate.version.clone(),
            test_patch: candidate.test_patch.clone(),
            gold_patch: candidate.patch.clone(),
            test_files: environment.test_files.to_vec(),
            test_command: spec.test_command.clone(),
            log_dir: environment.log_dir.to_path_buf(),
            data_dir_label: context.data_dir_label.clone(),
        };
        let run = run(context.backend.as_ref(), ecosystem, &request, settings.limits)
            .await
            .map_err(|error| dropped(ValidateDropReason::ContainerFailed, error.to_string()))?;
        *test_secs += run.phase_secs.values().sum::<f64>();
        check_run(&run, settings.limits.run_timeout)?;
        let missing = |name: &str| -> BTreeSet<String> {
            run.steps
                .get(name)
                .map(|step| ecosystem.missing_modules(&step.text).into_iter().collect())
                .unwrap_or_default()
        };
        let runs: Vec<ValidationRun> = [(RunPhase::Pre, "pre"), (RunPhase::Post, "post")]
            .into_iter()
            .map(|(phase, name)| {
                let (parsed, source) =
                    run.results.get(name).map(|(parsed, source)| (parsed.clone(), source.as_str())).unwrap_or_default();
                ValidationRun {
                    instance_id: candidate.instance_id.clone(),
                    phase,
                    attempt,
                    image: built.tag.clone(),
                    exit_code: run.steps.get(name).and_then(|step| step.exit_code),
                    timed_out: false,
                    duration_secs: run.phase_secs.get(name).copied().unwrap_or_default(),
                    tests: parsed.tests,
                    test_durations: parsed.durations,
                    results_source: source.to_string(),
                    network_failures: parsed.network_failures,
                    network_dependents: parsed.network_dependents,
                    interrupted: parsed.interrupted,
                    asked_for: parsed.asked_for,
                    time_zone: Some(request.time_zone.to_string()),
                    test_selection: parsed.selection,
                    part_of: parsed.part_of,
                    missing_modules: missing(name),
                }
            })
            .collect();
        {
            let mut store = context.store.lock().expect("not poisoned");
            store
                .transaction(|transaction| validation::insert_runs(transaction, &content_hash, &runs))
                .map_err(|error| dropped(ValidateDropReason::StoreError, error.to_string()))?;
        }
        let mut runs = runs.into_iter();
        attempts.pre.extend(runs.next());
        attempts.post.extend(runs.next());
    }
    Ok(attempts)
}

/// Turns a failed step of a run into the task's drop reason.
fn check_run(run: &RunOutcome, phase_timeout: Duration) -> Result<(), Dropped> {
    let log = run.log_path.display();
    let phase_timed_out =
        ["pre", "post"].iter().any(|phase| run.steps.get(*phase).and_then(|step| step.exit_code) == Some(124));
    if run.timed_out || phase_timed_out {
        return Err(dropped(
            ValidateDropReason::Timeout,
            format!("the tests ran longer than {}s (validate.run_timeout_secs); log: {log}", phase_timeout.as_secs()),
        ));
    }
    if run.oom_killed {
        return Err(dropped(
            ValidateDropReason::OutOfMemory,
            format!("the container ran out of memory (validate.memory_bytes); log: {log}"),
        ));
    }
    let failed = |step: &str| match run.steps.get(step) {
        Some(output) if output.exit_code == Some(0) => None,
        Some(output) => Some(script::last_lines(&output.text, 5, "\n")),
        None => Some("(the step never started)".to_string()),
    };
    for (step, reason) in [
        ("install", ValidateDropReason::InstallFailed),
        ("test_patch", ValidateDropReason::TestPatchDoesNotApply),
        ("pre", ValidateDropReason::RunFailed),
        ("gold_patch", ValidateDropReason::GoldPatchDoesNotApply),
        ("post", ValidateDropReason::RunFailed),
    ] {
        let finished = run.steps.get(step).is_some_and(|output| output.exit_code.is_some());
        // Test phases may exit non-zero (failing tests); they must only finish.
        if step == "pre" || step == "post" {
            if !finished {
                return Err(dropped(
                    reason,
                    format!("the {step} tests did not finish (exit code {:?}); log: {log}", run.exit_code),
                ));
            }
            let killed = run.steps.get(step).and_then(|output| output.exit_code) == Some(137);
            if killed {
                return Err(dropped(
                    ValidateDropReason::Killed,
                    format!("the {step} tests were killed (memory or process limits); log: {log}"),
                ));
            }
            continue;
        }
        if let Some(detail) = failed(step) {
            return Err(dropped(reason, format!("{detail}\n(log: {log})")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::for_tests::Pytest;

    #[test]
    fn script_quotes_test_files_and_applies_the_timeout() {
        let request = RunRequest {
            instance_id: "a__b-1".into(),
            attempt: 1,
            time_zone: TIME_ZONE,
            image: "img".into(),
            mirror: PathBuf::new(),
            base_commit: String::new(),
            version: "1.2".into(),
            test_patch: String::new(),
            gold_patch: String::new(),
            test_files: vec!["tests/test a.py".into(), "tests/test_b.py".into()],
            test_command: "pytest -rA".into(),
            log_dir: PathBuf::new(),
            data_dir_label: String::new(),
        };
        let text = script(&Pytest, &request, Duration::from_secs(42));
        assert!(
            text.contains(
                "timeout -k 5 42 pytest -rA --junitxml=/swe-harvest/out/\"$phase\".xml 'tests/test a.py' tests/test_b.py"
            ),
            "{text}"
        );
        assert!(text.contains("SETUPTOOLS_SCM_PRETEND_VERSION=1.2.0"));
        assert!(text.contains("install_repository() {"));
        assert!(text.contains("apply_patch() {"));
    }
}
