//! Grading one prediction in a container from its task's instance image (the
//! repository at base_commit in `/testbed`, installed): network off, the same
//! limits as validate, as root (the image's `/testbed` belongs to root; every
//! capability is dropped).
//!
//! - `swt`: the [`crate::swt::flow`] script with the prediction as the test-side
//!   patch: T^R (the golden test files as they are at R) and T^R ∪ T on R and on R∘X.
//! - `swe`: apply the prediction, then the task's own `eval_script` (test patch, the
//!   touched tests with `pytest -rA` between SWE-bench's markers), as SWE-bench does.

use std::path::PathBuf;

use super::inputs::ReleaseTask;
use super::report::{MutantsKilled, Passed, PredictionReport, Status};
use crate::model::labels;
use crate::model::probe::MutantStatus;
use crate::mutation;
use crate::sandbox::script::{self, split_steps};
use crate::sandbox::{self, Backend, Job, Limits, Owner};
use crate::swt::flow::{self, FlowOutcome, FlowScript};
use crate::swt::lines::ChangedLines;
use crate::swt::metrics::{Transitions, change_coverage};

/// Where a prediction's container runs and leaves its log.
pub struct GradeContext<'a> {
    pub backend: &'a dyn Backend,
    /// `swt`: how many of the gold patch's mutants the generated tests meet (0: none).
    pub mutants: usize,
    /// Where mirrors are (the data dir's, `SWE_HARVEST_MIRRORS`): the gold patch's files
    /// before it are read from there, so that the mutants are probe's.
    pub data_dir: PathBuf,
    pub mirrors_dir: Option<PathBuf>,
    pub limits: Limits,
    pub logs_dir: PathBuf,
    pub data_dir_label: String,
}

/// The log folder of a model's predictions: its name with every character other than
/// letters, digits, `-`, `_` and `.` replaced by `_` (`org/model` -> `org_model`).
/// `evaluate` checks it with [`check_id`](crate::model::ids::check_id) before grading,
/// so that a name such as `..` is an error of its predictions, never a path.
pub(crate) fn model_folder(model: &str) -> String {
    model.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

#[allow(clippy::too_many_arguments)] // the parts of one job, each used once
fn job(
    context: &GradeContext<'_>,
    task: &ReleaseTask,
    model: &str,
    name: &str,
    files: Vec<(String, Vec<u8>, u32)>,
    script: String,
    token: &str,
    phases: u32,
) -> Job {
    let model_dir = model_folder(model);
    Job {
        instance_id: task.instance_id.clone(),
        attempt: 0,
        image: task.image.clone(),
        user: Owner::ROOT,
        testbed: None,
        files,
        script,
        token: token.to_string(),
        env: Vec::new(),
        phases,
        log_path: context.logs_dir.join(model_dir).join(&task.instance_id).join(format!("{name}.log")),
        data_dir_label: context.data_dir_label.clone(),
    }
}

fn error(task: &ReleaseTask, model: &str, detail: String) -> PredictionReport {
    PredictionReport { detail: Some(detail), ..PredictionReport::new(&task.instance_id, model, Status::Error) }
}

/// Grades generated tests (SWT-Bench).
pub async fn swt(context: &GradeContext<'_>, task: &ReleaseTask, model: &str, patch: &str) -> PredictionReport {
    let base_files = task.golden_test_files();
    let mut with_files = base_files.clone();
    for file in task.ecosystem().runnable_test_files(patch) {
        if !with_files.contains(&file) {
            with_files.push(file);
        }
    }
    let script = FlowScript {
        install: false,
        base_files,
        with_files: with_files.clone(),
        traced_files: ChangedLines::of_patch(&task.patch).files().into_iter().collect(),
        test_command: task.test_command.clone(),
        version: task.version.clone(),
        phase_timeout: context.limits.run_timeout,
    };
    let token = script::new_token();
    let files = flow::payload_files(patch, &task.patch);
    let rendered = script.render(task.ecosystem());
    let job = job(context, task, model, "swt", files, rendered, &token, flow::PHASES.len() as u32);
    let output = match sandbox::run_job(context.backend, &job, context.limits).await {
        Ok(output) => output,
        Err(failure) => return error(task, model, failure.to_string()),
    };
    let outcome = FlowOutcome::parse(&output, &token, &with_files, task.ecosystem());
    let mut report = PredictionReport::new(&task.instance_id, model, Status::Evaluated);
    report.applied = outcome.applied();
    report.executable_lines = task.executable.as_ref().map(|executable| executable.count());
    let log = job.log_path.display().to_string();
    if !report.applied {
        report.reproduced = Some(false);
        report.change_coverage = task.change_coverage_of_nothing();
        let text =
            outcome.steps.get("tests_patch").map(|step| script::last_lines(&step.text, 3, " | ")).unwrap_or_default();
        report.detail = Some(format!("the patch does not apply to base_commit: {text} (log: {log})"));
        return report;
    }
    if output.timed_out || output.oom_killed || !outcome.complete() {
        let (step, text) =
            outcome.failed_step().unwrap_or_else(|| ("the container".into(), "hit its time or memory limit".into()));
        report.reproduced = Some(false);
        report.detail = Some(format!("the run stopped at `{step}`: {text} (log: {log})"));
        return report;
    }
    let transitions = Transitions::of(
        &outcome.phase_results("with_pre"),
        &outcome.phase_results("with_post"),
        &outcome.phase_results("base_pre"),
        &outcome.phase_results("base_post"),
    );
    report.reproduced = Some(transitions.reproduces());
    if let Some(executable) = &task.executable {
        if outcome.tracer_replaced.is_empty() {
            report.change_coverage = change_coverage(executable, &outcome.measurements()).share();
        } else {
            report.detail = Some(format!(
                "no ΔC: the tests replaced the line counter in the {} run(s) (log: {log})",
                outcome.tracer_replaced.join(", ")
            ));
        }
    }
    report.tests = Some(transitions);
    if context.mutants > 0 {
        match mutants_killed(context, task, model, patch).await {
            Ok(counts) => report.mutants_killed = counts,
            Err(detail) => {
                let detail = format!("no mutant kills: {detail}");
                report.detail = Some(report.detail.map_or(detail.clone(), |earlier| format!("{earlier}; {detail}")));
            }
        }
    }
    report
}

/// How many of the gold patch's mutants the generated tests (`patch`) reject: one
/// container applies them, runs their test files with the gold patch (the tests that
/// pass there are the ones that count), then with each mutant in its place. A mutant
/// is killed when one of those tests does not pass with it; mutants that do not apply,
/// build or run are not counted. `None` when the gold patch gives no mutant, or none
/// of the generated tests passes with the gold patch.
async fn mutants_killed(
    context: &GradeContext<'_>,
    task: &ReleaseTask,
    model: &str,
    patch: &str,
) -> Result<Option<MutantsKilled>, String> {
    let before = match task
        .repo
        .parse()
        .ok()
        .and_then(|repo| crate::git::find_mirror(&context.data_dir, context.mirrors_dir.as_deref(), &repo).ok())
    {
        Some(mirror) => {
            let (base_commit, gold) = (task.base_commit.clone(), task.patch.clone());
            tokio::task::spawn_blocking(move || mutation::files_before(&mirror, &base_commit, &gold))
                .await
                .unwrap_or_default()
        }
        None => mutation::FilesBefore::new(),
    };
    let made = mutation::make(&task.patch, &task.test_patch, context.mutants, &before);
    if made.mutants.is_empty() {
        return Ok(None);
    }
    let ecosystem = task.ecosystem();
    let test_files = ecosystem.runnable_test_files(patch);
    if test_files.is_empty() {
        return Ok(None);
    }
    let gold = mutation::patch::Patch::parse(&task.patch);
    let (mut existing, mut created) = (Vec::new(), Vec::new());
    for file in &gold.files {
        if file.created { created.push(file.path.clone()) } else { existing.push(file.path.clone()) }
    }
    // Index 0 is the gold patch itself; 1..=n the mutants.
    let indices: Vec<usize> = (0..=made.mutants.len()).collect();
    let rendered = mutation::script::ProbeScript {
        install: false,
        version: &task.version,
        test_command: &task.test_command,
        test_files: &test_files,
        existing_files: &existing,
        created_files: &created,
        mutants: &indices,
        timeout: context.limits.run_timeout,
    }
    .render(ecosystem);
    let mut files = vec![
        ("test.patch".to_string(), patch.as_bytes().to_vec(), 0o644),
        ("gold.patch".to_string(), task.patch.as_bytes().to_vec(), 0o644),
        (mutation::script::patch_file(0), task.patch.as_bytes().to_vec(), 0o644),
    ];
    for (index, mutant) in made.mutants.iter().enumerate() {
        files.push((mutation::script::patch_file(index + 1), mutant.patch.as_bytes().to_vec(), 0o644));
    }
    let token = script::new_token();
    let job = job(context, task, model, "swt-mutants", files, rendered, &token, indices.len() as u32);
    let output = sandbox::run_job(context.backend, &job, context.limits).await.map_err(|error| error.to_string())?;
    let steps = split_steps(&output.log, &token);
    let results = |index: usize| {
        let phase = mutation::script::test_phase(index);
        let step = steps.get(&phase)?;
        let report = output.reports.get(&format!("{phase}.xml")).map(String::as_str);
        Some((step.exit_code, ecosystem.parse_results(report, &step.text, &test_files).0))
    };
    let Some((_, with_gold)) = results(0) else {
        return Err(format!("the generated tests did not run with the gold patch (log: {})", job.log_path.display()));
    };
    let listed: std::collections::BTreeSet<String> = with_gold
        .tests
        .iter()
        .filter(|(_, status)| labels::passes(Some(*status)))
        .map(|(test, _)| test.clone())
        .collect();
    if listed.is_empty() {
        return Ok(None);
    }
    let (mut killed, mut viable) = (0, 0);
    for index in 1..=made.mutants.len() {
        let apply = steps.get(&mutation::script::apply_step(index));
        let tests = results(index);
        let phase = mutation::judge::MutantPhase {
            apply_exit: apply.and_then(|step| step.exit_code),
            apply_text: apply.map_or("", |step| step.text.as_str()),
            tests_exit: tests.as_ref().and_then(|(exit, _)| *exit),
            results: tests.as_ref().map(|(_, parsed)| parsed),
        };
        match mutation::judge::judge(&phase, &listed, context.limits.run_timeout.as_secs())
            .map(|verdict| verdict.status)
        {
            Some(MutantStatus::Killed) => {
                killed += 1;
                viable += 1;
            }
            Some(MutantStatus::Survived) => viable += 1,
            _ => {}
        }
    }
    Ok(Some(MutantsKilled { killed, viable }))
}

/// The script of a `swe` grading: apply the prediction, run the task's eval script.
fn swe_script(task: &ReleaseTask) -> String {
    format!(
        r#"{preamble}mark model_patch begin
apply_patch /swe-harvest/model.patch 2>&1; code=$?
mark model_patch "end $code"
[ "$code" -eq 0 ] || exit 0
mark eval begin
bash /swe-harvest/eval.sh 2>&1; code=$?
mark eval "end $code"
"#,
        preamble = script::preamble("pipeline/evaluate/grade.rs", &task.ecosystem().script_setup(&task.version)),
    )
}

/// The test output between SWE-bench's markers in an eval script's output (`set -x`
/// prints the `:` commands that carry them).
fn between_markers(text: &str) -> &str {
    let start = text.find(">>>>> Start Test Output").map(|at| text[at..].find('\n').map_or(text.len(), |end| at + end));
    let Some(start) = start else { return text };
    let end = text[start..].find(">>>>> End Test Output").map_or(text.len(), |end| start + end);
    &text[start..end]
}

/// Grades a code patch against the task's FAIL_TO_PASS and PASS_TO_PASS.
pub async fn swe(context: &GradeContext<'_>, task: &ReleaseTask, model: &str, patch: &str) -> PredictionReport {
    if task.eval_script.is_empty() {
        return error(task, model, "the release row has no eval_script; make the release with `--images`".into());
    }
    let token = script::new_token();
    let files = vec![
        ("model.patch".to_string(), flow::with_newline(patch).into_bytes(), 0o644),
        ("eval.sh".to_string(), task.eval_script.clone().into_bytes(), 0o755),
    ];
    let job = job(context, task, model, "swe", files, swe_script(task), &token, 1);
    let output = match sandbox::run_job(context.backend, &job, context.limits).await {
        Ok(output) => output,
        Err(failure) => return error(task, model, failure.to_string()),
    };
    let steps = split_steps(&output.log, &token);
    let mut report = PredictionReport::new(&task.instance_id, model, Status::Evaluated);
    report.applied = steps.get("model_patch").and_then(|step| step.exit_code) == Some(0);
    let log = job.log_path.display().to_string();
    if !report.applied {
        report.resolved = Some(false);
        report.detail = Some(format!("the patch does not apply to base_commit (log: {log})"));
        return report;
    }
    let Some(eval) = steps.get("eval").filter(|step| step.exit_code.is_some()) else {
        report.resolved = Some(false);
        report.detail = Some(format!("the eval script did not finish (log: {log})"));
        return report;
    };
    // The harness's output carries no report: the ecosystem reads the log, as SWE-bench's
    // parser does, knowing the test files (Maven's and Gradle's readers keep the lines of
    // the test classes they ran).
    let (results, _) = task.ecosystem().parse_results(None, between_markers(&eval.text), &task.golden_test_files());
    let results = results.tests;
    let passed = |tests: &[String]| Passed {
        passed: tests.iter().filter(|test| labels::passes(results.get(*test))).count(),
        total: tests.len(),
    };
    let (fail_to_pass, pass_to_pass) = (passed(&task.fail_to_pass), passed(&task.pass_to_pass));
    report.resolved = Some(fail_to_pass.passed == fail_to_pass.total && pass_to_pass.passed == pass_to_pass.total);
    report.fail_to_pass = Some(fail_to_pass);
    report.pass_to_pass = Some(pass_to_pass);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_output_between_the_markers_is_graded() {
        let text = "+ git apply\nPASSED a::fake\n+ : '>>>>> Start Test Output'\nPASSED t::real\n+ : '>>>>> End Test Output'\nPASSED b::after\n";
        assert_eq!(between_markers(text), "\nPASSED t::real\n+ : '");
    }
}
