//! One validation attempt in one container: install the repository at base_commit
//! (offline: the dependencies are in the environment image), apply the test patch,
//! run the touched test files (pre), apply the gold patch, run them again (post).
//! Each step is wrapped in markers that carry this run's random token; the test
//! phases write structured reports that the project's ecosystem reads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::ecosystem::{Ecosystem, ParsedRun, ResultsSource};
use crate::sandbox::script::{self, StepOutput};
use crate::sandbox::{self, Backend, Job, Limits, Owner, RunError};

/// One run to do.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub instance_id: String,
    pub attempt: u32,
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
mark install begin
install_repository 2>&1; code=$?
mark install "end $code"
[ "$code" -eq 0 ] || exit 0
mark test_patch begin
apply_patch /swe-harvest/test.patch 2>&1; code=$?
mark test_patch "end $code"
[ "$code" -eq 0 ] || exit 0
run_tests pre
# A phase that hit its time limit is not followed by another (the task is dropped as a timeout).
[ "$code" -ne 124 ] || exit 0
mark gold_patch begin
apply_patch /swe-harvest/gold.patch 2>&1; code=$?
mark gold_patch "end $code"
[ "$code" -eq 0 ] || exit 0
run_tests post
mark done begin
mark done "end 0"
"#,
        preamble = script::preamble("pipeline/validate/attempt.rs", &ecosystem.script_setup(&request.version)),
        timeout = phase_timeout.as_secs().max(1),
    )
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
        env: vec![format!("SWE_HARVEST_ATTEMPT={}", request.attempt)],
        phases: 2,
        log_path: request.log_dir.join(format!("run-{}.log", request.attempt)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::python::Pytest;

    #[test]
    fn script_quotes_test_files_and_applies_the_timeout() {
        let request = RunRequest {
            instance_id: "a__b-1".into(),
            attempt: 1,
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
