//! The golden tests' change coverage of the gold patch (SWT-Bench's ΔC), measured in
//! one more container per labelled task (`validate --coverage`) with the
//! [`crate::swt::flow`] script: T^R and T^R ∪ T* on R and on R∘X, the line counter
//! restricted to the Python files the gold patch changes. Only for ecosystems that
//! can measure it ([`crate::ecosystem::Ecosystem::measures_change_coverage`]).

use std::path::PathBuf;

use crate::ecosystem::Ecosystem;
use crate::model::{Candidate, EnvironmentSpec};
use crate::sandbox::{self, Backend, Job, Limits, Owner, script};
use crate::store::coverage::GoldenCoverage;
use crate::swt::flow::{self, FlowOutcome, FlowScript};
use crate::swt::lines::ChangedLines;
use crate::swt::metrics::{ChangeCoverage, ExecutableLines, change_coverage};

/// Where a task's coverage run leaves its log.
pub fn log_path(logs_dir: &std::path::Path, instance_id: &str) -> PathBuf {
    logs_dir.join("validate").join(instance_id).join("coverage.log")
}

/// What one coverage measurement needs.
pub struct CoverageRequest<'a> {
    pub candidate: &'a Candidate,
    pub spec: &'a EnvironmentSpec,
    pub image: &'a str,
    pub mirror: PathBuf,
    pub test_files: &'a [String],
    pub logs_dir: PathBuf,
    pub data_dir_label: String,
}

/// Measures the golden tests' change coverage of one task.
pub async fn measure(
    backend: &dyn Backend,
    ecosystem: &dyn Ecosystem,
    request: &CoverageRequest<'_>,
    limits: Limits,
) -> GoldenCoverage {
    let candidate = request.candidate;
    let changed = ChangedLines::of_patch(&candidate.patch);
    let traced: Vec<String> = changed.files().into_iter().collect();
    if traced.is_empty() {
        // No Python line changes: nothing executable, nothing to run.
        return GoldenCoverage::Measured {
            executable: ExecutableLines::default(),
            coverage: ChangeCoverage { covered: 0, executable: 0 },
        };
    }
    let script = FlowScript {
        install: true,
        base_files: request.test_files.to_vec(),
        with_files: request.test_files.to_vec(),
        traced_files: traced,
        test_command: request.spec.test_command.clone(),
        version: candidate.version.clone(),
        phase_timeout: limits.run_timeout,
    };
    let token = script::new_token();
    let job = Job {
        instance_id: candidate.instance_id.clone(),
        attempt: 0,
        image: request.image.to_string(),
        user: Owner::UNPRIVILEGED,
        testbed: Some((request.mirror.clone(), candidate.base_commit.clone())),
        files: flow::payload_files(&candidate.test_patch, &candidate.patch),
        script: script.render(ecosystem),
        token: token.clone(),
        env: Vec::new(),
        phases: flow::PHASES.len() as u32,
        log_path: log_path(&request.logs_dir, &candidate.instance_id),
        data_dir_label: request.data_dir_label.clone(),
    };
    let output = match sandbox::run_job(backend, &job, limits).await {
        Ok(output) => output,
        Err(error) => return GoldenCoverage::Failed { detail: error.to_string() },
    };
    if output.timed_out || output.oom_killed {
        return GoldenCoverage::Failed {
            detail: format!(
                "the coverage run {} (log: {})",
                if output.timed_out { "hit its time limit" } else { "ran out of memory" },
                job.log_path.display()
            ),
        };
    }
    let outcome = FlowOutcome::parse(&output, &token, request.test_files, ecosystem);
    if let Some((step, text)) = outcome.failed_step() {
        return GoldenCoverage::Failed {
            detail: format!("the coverage run failed at `{step}`: {text}\n(log: {})", job.log_path.display()),
        };
    }
    if !outcome.tracer_replaced.is_empty() {
        return GoldenCoverage::Failed {
            detail: format!(
                "the tests replaced the line counter in the {} run(s) (pytest-cov in addopts, or a debugger), so the \
                 counts are incomplete; give the repository a test_command that turns it off (e.g. `-p no:cov`) \
                 in configs/repos/ (log: {})",
                outcome.tracer_replaced.join(", "),
                job.log_path.display()
            ),
        };
    }
    let measured = outcome.measurements();
    let executable = ExecutableLines::of_golden(&changed, &measured);
    let coverage = change_coverage(&executable, &measured);
    GoldenCoverage::Measured { executable, coverage }
}
