//! The test-generation view (SWT-Bench) against a real Docker engine, on the
//! synthetic calc project (tests/support/python_project.rs), whose lines are known:
//!
//! ```text
//! 1 def add(a, b):          the bug: negative b subtracts
//! 2     if b < 0:
//! 3         return a - b
//! 4     return a + b
//! 5
//! 6
//! 7 def sub(a, b):
//! 8     return a - b
//! ```
//!
//! The existing tests T^R (tests/test_calc.py) call `add(1, 2)` and `sub(3, 1)`; the
//! golden test adds `add(1, -1)`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use swe_harvest::store::Store;
use swe_harvest::store::coverage::GoldenCoverage;

use crate::support::python_project::{self as project, DockerGuard, FIXED_CALC, Project, Scenario, new_file_patch};
use crate::support::{SweHarvest, stderr};

/// Fixes `add` and rewrites `sub` (same behaviour), and adds a module nothing imports.
const FIXED_CALC_REWRITTEN_SUB: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return -(b - a)\n";

fn harvest_with(harvest: &SweHarvest, args: &[&str]) -> std::process::Output {
    let mut command = harvest.validate_command();
    command.args(args).output().expect("swe-harvest runs")
}

/// The calc tasks validated with coverage and released with their images; the
/// project (kept while the test runs) and the release's folder.
fn released_calc_tasks(harvest: &SweHarvest) -> (Project, PathBuf) {
    let project = calc_tasks(harvest);
    let output = harvest_with(harvest, &["validate", "--runs", "1", "--coverage"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = harvest_with(harvest, &["release", "--name", "calc", "--version", "1", "--images"]);
    assert!(output.status.success(), "{}", stderr(&output));
    (project, harvest.data_dir.join("releases/calc/1"))
}

fn coverage(harvest: &SweHarvest) -> BTreeMap<String, GoldenCoverage> {
    let store = Store::open_in(&harvest.data_dir).unwrap();
    swe_harvest::store::coverage::all(store.connection()).unwrap()
}

fn measured(coverage: &GoldenCoverage) -> (usize, usize, String) {
    match coverage {
        GoldenCoverage::Measured { executable, coverage } => {
            (coverage.executable, coverage.covered, serde_json::to_string(executable).unwrap())
        }
        other => panic!("coverage not measured: {}", other.why_not_measured().unwrap_or_default()),
    }
}

/// Two labelled tasks whose golden tests' change coverage is known by construction.
fn calc_tasks(harvest: &SweHarvest) -> Project {
    let project = Project::new();
    let with_regression = project::tests_with_regression();
    let candidates = vec![
        // X removes lines 2 and 3; the golden test runs both more often than T^R: ΔC = 2/2.
        project.candidate(
            1,
            &Scenario::new("fix").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &with_regression),
        ),
        // X removes 2, 3 and 8, adds new line 6, and adds calc/extra.py that nothing
        // runs. Executable: 2, 3, 8 (T^R's test_sub) and new 6 (test_sub on R∘X);
        // the golden test raises the counts of 2 and 3 only: ΔC = 2/4.
        project.candidate(
            2,
            &Scenario::new("fix-rewrite-sub")
                .gold("calc/__init__.py", FIXED_CALC_REWRITTEN_SUB)
                .gold("calc/extra.py", "def unused():\n    return 1\n")
                .test("tests/test_calc.py", &with_regression),
        ),
    ];
    project.seed(&harvest.data_dir, &candidates);
    project
}

#[test]
fn validate_coverage_measures_the_golden_tests_change_coverage() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let _project = calc_tasks(&harvest);

    // Labels first, without coverage; then --coverage measures the labelled tasks
    // without running their validation again.
    let output = harvest_with(&harvest, &["validate", "--runs", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(coverage(&harvest).is_empty());
    let output = harvest_with(&harvest, &["validate", "--runs", "1", "--coverage"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("coverage: 2 measured, 0 failed"), "{}", stderr(&output));
    let store = Store::open_in(&harvest.data_dir).unwrap();
    let runs = swe_harvest::store::validation::runs(store.connection(), "acme__calc-1").unwrap();
    assert_eq!(runs.len(), 2, "the stored attempt was reused, not run again");
    drop(store);

    let coverage = coverage(&harvest);
    let (executable, covered, lines) = measured(&coverage["acme__calc-1"]);
    assert_eq!((executable, covered), (2, 2), "{lines}");
    assert_eq!(lines, r#"{"removed":{"calc/__init__.py":[2,3]},"added":{}}"#);
    let (executable, covered, lines) = measured(&coverage["acme__calc-2"]);
    assert_eq!((executable, covered), (4, 2), "{lines}");
    assert_eq!(lines, r#"{"removed":{"calc/__init__.py":[2,3,8]},"added":{"calc/__init__.py":[6]}}"#);
    assert!(harvest.data_dir.join("logs/validate/acme__calc-2/coverage.log").is_file());

    // Nothing left to measure: no container runs.
    let again = harvest_with(&harvest, &["validate", "--runs", "1", "--coverage"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("2 already finished"), "{}", stderr(&again));
    assert!(docker.containers().is_empty(), "every container is removed");
}

fn prediction(instance_id: &str, model: &str, patch: &str) -> String {
    serde_json::json!({"instance_id": instance_id, "model_name_or_path": model, "model_patch": patch}).to_string()
}

/// The `evaluate` report of `predictions` (JSONL lines) against `release`.
fn evaluate(
    harvest: &SweHarvest,
    release: &std::path::Path,
    mode: &str,
    predictions: &[String],
) -> (serde_json::Value, String) {
    let (output, report) = evaluate_output(harvest, release, mode, predictions);
    assert!(output.status.success(), "evaluate --mode {mode} failed:\n{}", stderr(&output));
    assert!(
        !harvest.data_dir.join(format!("report-{mode}.json.progress.jsonl")).exists(),
        "the progress file is replaced"
    );
    (report, crate::support::stdout(&output))
}

/// The output of `evaluate` in `mode` of `predictions` (JSONL lines) against
/// `release`, and the report it wrote.
fn evaluate_output(
    harvest: &SweHarvest,
    release: &std::path::Path,
    mode: &str,
    predictions: &[String],
) -> (std::process::Output, serde_json::Value) {
    let path = harvest.data_dir.join(format!("predictions-{mode}.jsonl"));
    fs_err::write(&path, predictions.join("\n") + "\n").unwrap();
    let out = harvest.data_dir.join(format!("report-{mode}.json"));
    let (release, predictions, report) = (release.to_str().unwrap(), path.to_str().unwrap(), out.to_str().unwrap());
    let output = harvest_with(
        harvest,
        &["evaluate", "--release", release, "--predictions", predictions, "--mode", mode, "--out", report],
    );
    let report = fs_err::read_to_string(&out).unwrap_or_else(|error| panic!("{error}: {}", stderr(&output)));
    (output, serde_json::from_str(&report).unwrap())
}

fn prediction_report<'a>(report: &'a serde_json::Value, instance_id: &str, model: &str) -> &'a serde_json::Value {
    report["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["instance_id"] == instance_id && entry["model_name_or_path"] == model)
        .unwrap_or_else(|| panic!("no report for {model} on {instance_id}: {report:#}"))
}

fn totals<'a>(report: &'a serde_json::Value, model: &str) -> &'a serde_json::Value {
    report["totals"].as_array().unwrap().iter().find(|entry| entry["model_name_or_path"] == model).unwrap()
}

fn close(value: &serde_json::Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|value| (value - expected).abs() < 1e-9)
}

const REPRODUCING_TEST: &str = "from calc import add\n\n\ndef test_negative():\n    assert add(1, -1) == 0\n";
/// Passes before and after the fix; runs line 2 but not line 3: half of task 1's lines.
const PASSING_TEST: &str = "from calc import add\n\n\ndef test_positive():\n    assert add(2, 2) == 4\n";
const FAILING_TEST: &str = "from calc import add\n\n\ndef test_wrong():\n    assert add(1, 1) == 3\n";
/// Checks what task 2's gold patch adds: `sub` rewritten and `calc.extra.unused`.
const EXTRA_TEST: &str = "from calc import sub\nfrom calc.extra import unused\n\n\ndef test_extra():\n    assert sub(3, 1) == 2\n    assert unused() == 1\n";

#[test]
fn evaluate_grades_generated_tests_and_code_patches_against_a_released_task_set() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let (_project, release) = released_calc_tasks(&harvest);

    // The release carries the coverage columns and the card's test-generation section.
    let rows = swe_harvest::dataset::read_records(&release.join("tasks.jsonl")).unwrap();
    let row = |id: &str| rows.iter().find(|row| row["instance_id"] == id).unwrap().clone();
    assert_eq!(row("acme__calc-1")["gold_executable_lines"], "2");
    assert_eq!(row("acme__calc-1")["golden_change_coverage"], "1.0000");
    assert_eq!(row("acme__calc-2")["gold_executable_lines"], "4");
    assert_eq!(row("acme__calc-2")["golden_change_coverage"], "0.5000");
    assert!(row("acme__calc-1")["test_command"].as_str().is_some_and(|command| command.starts_with("pytest -rA")));
    let card = fs_err::read_to_string(release.join("README.md")).unwrap();
    assert!(card.contains("## Test generation (SWT-Bench)"), "{card}");
    assert!(card.contains("| 100% | 1 |") && card.contains("| (25%, 50%] | 1 |"), "{card}");
    assert!(card.contains("mean 75.0%"), "{card}");

    // --mode swt: hand-built generated tests whose outcomes are known.
    let missing_file = "diff --git a/tests/test_missing.py b/tests/test_missing.py\n--- a/tests/test_missing.py\n+++ b/tests/test_missing.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";
    let generated = |body: &str| new_file_patch("tests/test_gen.py", body);
    let predictions = vec![
        prediction("acme__calc-1", "reproduces", &generated(REPRODUCING_TEST)),
        prediction("acme__calc-1", "passes", &generated(PASSING_TEST)),
        prediction("acme__calc-1", "fails", &generated(FAILING_TEST)),
        prediction("acme__calc-1", "does-not-apply", missing_file),
        prediction("acme__calc-1", "empty", ""),
        prediction("acme__calc-99", "reproduces", &generated(REPRODUCING_TEST)),
        // One model over both tasks: S = F→P = P→P = 1/2; ΔC 1 on task 1 and, on task 2,
        // line 2 of the four executable lines: mean 0.625.
        prediction("acme__calc-1", "suite", &generated(REPRODUCING_TEST)),
        prediction("acme__calc-2", "suite", &generated(PASSING_TEST)),
        // Tests of what task 2's gold patch adds: they meet its mutants.
        prediction("acme__calc-2", "thorough", &generated(EXTRA_TEST)),
    ];
    let (report, table) = evaluate(&harvest, &release, "swt", &predictions);

    let reproduces = prediction_report(&report, "acme__calc-1", "reproduces");
    assert_eq!(reproduces["applied"], true);
    assert_eq!(reproduces["reproduced"], true, "{reproduces:#}");
    assert_eq!(reproduces["tests"]["fail_to_pass"], serde_json::json!(["tests/test_gen.py::test_negative"]));
    assert_eq!(reproduces["tests"]["pass_to_pass"], serde_json::json!([]), "the existing tests are T^R's, not T's");
    assert!(close(&reproduces["change_coverage"], 1.0), "{reproduces:#}");

    let passes = prediction_report(&report, "acme__calc-1", "passes");
    assert_eq!(passes["reproduced"], false);
    assert_eq!(passes["tests"]["pass_to_pass"], serde_json::json!(["tests/test_gen.py::test_positive"]));
    assert!(close(&passes["change_coverage"], 0.5), "covers line 2, not line 3: {passes:#}");

    let fails = prediction_report(&report, "acme__calc-1", "fails");
    assert_eq!(fails["reproduced"], false);
    assert_eq!(fails["tests"]["fail_to_fail"], serde_json::json!(["tests/test_gen.py::test_wrong"]));

    let not_applied = prediction_report(&report, "acme__calc-1", "does-not-apply");
    assert_eq!((not_applied["status"].as_str(), not_applied["applied"].as_bool()), (Some("evaluated"), Some(false)));
    assert!(close(&not_applied["change_coverage"], 0.0));
    assert_eq!(prediction_report(&report, "acme__calc-1", "empty")["status"], "empty_patch");
    assert_eq!(prediction_report(&report, "acme__calc-99", "reproduces")["status"], "unknown_task");
    assert_eq!(report["unknown_tasks"], serde_json::json!(["acme__calc-99"]));

    let suite = totals(&report, "suite");
    assert_eq!(suite["tasks"], 2);
    assert!(close(&suite["applied_share"], 1.0));
    assert!(close(&suite["swt"]["success_rate"], 0.5), "{suite:#}");
    assert!(close(&suite["swt"]["fail_to_pass_share"], 0.5));
    assert!(close(&suite["swt"]["fail_before_share"], 0.5));
    assert!(close(&suite["swt"]["pass_to_pass_share"], 0.5));
    assert!(close(&suite["swt"]["mean_change_coverage"], 0.625), "{suite:#}");
    assert!(close(&totals(&report, "does-not-apply")["applied_share"], 0.0));
    assert!(close(&totals(&report, "reproduces")["swt"]["success_rate"], 1.0), "the unknown task is not counted");
    assert!(table.contains("mean ΔC") && table.contains("suite"), "{table}");
    // Mutants: task 1's gold patch only removes code (none); task 2's are met by the
    // tests of what it adds, not by a test of `add` alone.
    assert!(prediction_report(&report, "acme__calc-1", "suite").get("mutants_killed").is_none());
    let weak = &prediction_report(&report, "acme__calc-2", "suite")["mutants_killed"];
    let thorough = &prediction_report(&report, "acme__calc-2", "thorough")["mutants_killed"];
    assert!(weak["viable"].as_u64().unwrap() >= 1, "{report:#}");
    assert_eq!(weak["killed"], 0, "a test of `add` meets none of task 2's mutants: {report:#}");
    assert!(thorough["killed"].as_u64().unwrap() >= 1, "{report:#}");
    assert!(table.contains("mutants killed"), "{table}");

    // --mode swe: code patches against FAIL_TO_PASS / PASS_TO_PASS.
    let gold = |id: &str| row(id)["patch"].as_str().unwrap().to_string();
    let comment_only = "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1,2 +1,3 @@\n+# a comment\n def add(a, b):\n     if b < 0:\n";
    let predictions = vec![
        prediction("acme__calc-1", "gold", &gold("acme__calc-1")),
        prediction("acme__calc-2", "gold", &gold("acme__calc-2")),
        prediction("acme__calc-1", "comment", comment_only),
        prediction("acme__calc-1", "does-not-apply", missing_file),
        prediction("acme__calc-1", "empty", ""),
    ];
    let (report, _) = evaluate(&harvest, &release, "swe", &predictions);
    let gold_totals = totals(&report, "gold");
    assert!(close(&gold_totals["swe"]["resolved_share"], 1.0), "{report:#}");
    let comment = prediction_report(&report, "acme__calc-1", "comment");
    assert_eq!((comment["applied"].as_bool(), comment["resolved"].as_bool()), (Some(true), Some(false)), "{comment:#}");
    assert_eq!(comment["fail_to_pass"], serde_json::json!({"passed": 0, "total": 1}));
    assert_eq!(comment["pass_to_pass"], serde_json::json!({"passed": 2, "total": 2}));
    assert_eq!(prediction_report(&report, "acme__calc-1", "does-not-apply")["applied"], false);
    assert_eq!(prediction_report(&report, "acme__calc-1", "empty")["status"], "empty_patch");
    assert!(docker.containers().is_empty(), "every container is removed");

    // Resume: a prediction recorded in the progress file (as a killed run leaves it,
    // with a last line cut short) is not graded again; the others are.
    let tasks = swe_harvest::evaluate::inputs::read_release(&release).unwrap();
    let recorded = swe_harvest::evaluate::inputs::Prediction {
        instance_id: "acme__calc-1".into(),
        model: "gold".into(),
        patch: Some(gold("acme__calc-1")),
    };
    let key =
        swe_harvest::evaluate::prediction_key(swe_harvest::evaluate::Mode::Swe, &tasks["acme__calc-1"], &recorded);
    let mut marker = swe_harvest::evaluate::report::PredictionReport::new(
        "acme__calc-1",
        "gold",
        swe_harvest::evaluate::report::Status::Evaluated,
    );
    marker.applied = true;
    marker.resolved = Some(true);
    marker.detail = Some("recorded before the kill".into());
    let line = serde_json::to_string(&swe_harvest::evaluate::ProgressLine { key, report: marker }).unwrap();
    let out = harvest.data_dir.join("report-swe.json");
    fs_err::remove_file(&out).unwrap();
    fs_err::write(swe_harvest::evaluate::progress_path(&out), format!("{line}\n{{\"key\": \"cut")).unwrap();
    let (report, _) = evaluate(&harvest, &release, "swe", &predictions[..2]);
    assert_eq!(prediction_report(&report, "acme__calc-1", "gold")["detail"], "recorded before the kill");
    let fresh = prediction_report(&report, "acme__calc-2", "gold");
    assert_eq!((fresh["resolved"].as_bool(), fresh.get("detail")), (Some(true), None), "{fresh:#}");
}

#[test]
fn evaluate_needs_a_release_with_images_and_readable_predictions() {
    let harvest = SweHarvest::new();
    let release = harvest.data_dir.join("releases/plain/1");
    fs_err::create_dir_all(&release).unwrap();
    fs_err::write(
        release.join("tasks.jsonl"),
        r#"{"instance_id": "a__b-1", "patch": "", "test_patch": ""}"#.to_string() + "\n",
    )
    .unwrap();
    let predictions = harvest.data_dir.join("predictions.jsonl");
    fs_err::write(&predictions, prediction("a__b-1", "m", "x") + "\n").unwrap();
    let run = |release: &str, predictions: &str| {
        harvest.run(&["evaluate", "--release", release, "--predictions", predictions, "--mode", "swt"])
    };
    let refusal = || {
        let output = run(release.to_str().unwrap(), predictions.to_str().unwrap());
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        stderr(&output)
    };
    let error = refusal();
    assert!(error.contains("has no instance image") && error.contains("--images"), "{error}");

    // A task run by an ecosystem this build does not know is refused, naming it.
    fs_err::write(
        release.join("tasks.jsonl"),
        r#"{"instance_id": "a__b-1", "patch": "", "test_patch": "", "image": "x/y:1", "ecosystem": "python-nose"}"#
            .to_string()
            + "\n",
    )
    .unwrap();
    let error = refusal();
    assert!(error.contains("`python-nose`") && error.contains("python-django"), "{error}");

    fs_err::write(&predictions, "not json\n").unwrap();
    refusal();

    let output = run(harvest.data_dir.join("nowhere").to_str().unwrap(), predictions.to_str().unwrap());
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("does not exist"), "{}", stderr(&output));
}

#[test]
fn evaluate_reports_a_release_id_or_a_model_name_that_is_not_a_folder_name_as_an_error_of_its_prediction() {
    let harvest = SweHarvest::new();
    let _docker = DockerGuard::require(&harvest.data_dir);
    let release = harvest.data_dir.join("releases/hostile/1");
    fs_err::create_dir_all(&release).unwrap();
    let task = |instance_id: &str| {
        serde_json::json!({"instance_id": instance_id, "patch": "", "test_patch": "", "image": "swe-harvest/none:1"})
            .to_string()
    };
    fs_err::write(release.join("tasks.jsonl"), [task("../../../../escape-1"), task("a__b-1")].join("\n") + "\n")
        .unwrap();
    let predictions = [prediction("../../../../escape-1", "model", "x"), prediction("a__b-1", "..", "x")];
    let (output, report) = evaluate_output(&harvest, &release, "swe", &predictions);
    assert_eq!(output.status.code(), Some(1), "errors, not bad usage: {}", stderr(&output));
    assert_eq!(report["errors"], 2, "{report:#}");
    let escape = prediction_report(&report, "../../../../escape-1", "model");
    assert_eq!(escape["status"], "error");
    assert!(escape["detail"].as_str().unwrap().contains("invalid instance_id `../../../../escape-1`"), "{escape:#}");
    let dots = prediction_report(&report, "a__b-1", "..");
    assert!(
        dots["detail"].as_str().unwrap().contains("invalid model_name_or_path (as a folder name) `..`"),
        "{dots:#}"
    );
    assert!(!harvest.data_dir.join("logs").join("escape-1").exists() && !harvest.path("escape-1").exists());
}

/// Runs `script` with the line counter as `sitecustomize`, counting `traced`; returns
/// what the counter wrote.
fn count_lines(files: &[(&str, &str)], traced: &str, script: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }
    fs_err::create_dir_all(dir.path().join("trace")).unwrap();
    fs_err::write(dir.path().join("trace/sitecustomize.py"), swe_harvest::swt::TRACER).unwrap();
    fs_err::write(dir.path().join("main.py"), script).unwrap();
    let output = std::process::Command::new("python3")
        .arg("main.py")
        .current_dir(dir.path())
        .env("PYTHONPATH", dir.path().join("trace"))
        .env("SWE_HARVEST_TRACE_FILES", traced)
        .env("SWE_HARVEST_TRACE_OUT", dir.path().join("out"))
        .env("SWE_HARVEST_TRACE_ROOT", dir.path())
        .output()
        .expect("python3 runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let written: Vec<_> = fs_err::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("out."))
        .collect();
    assert_eq!(written.len(), 1, "one file per process: {written:?}");
    serde_json::from_str(&fs_err::read_to_string(&written[0]).unwrap()).unwrap()
}

#[test]
fn the_line_counter_counts_executions_in_every_thread_of_the_named_files_only() {
    let calc = project::BUGGY_CALC;
    let other = "def unrelated():\n    return 1\n";
    let script = "import threading\nfrom calc import add, sub\nfrom other import unrelated\n\
                  for b in (1, 2, -1):\n    add(1, b)\nunrelated()\n\
                  thread = threading.Thread(target=sub, args=(3, 1))\nthread.start()\nthread.join()\n";
    let written = count_lines(&[("calc/__init__.py", calc), ("other.py", other)], "calc/__init__.py\n", script);
    // Lines 1 and 7 are the `def`s (run once at import); `if b < 0` runs on each of
    // the three calls, `return a - b` once, `return a + b` twice; `sub` once, in a thread.
    assert_eq!(
        written,
        serde_json::json!({"counts": {"calc/__init__.py": {"1": 1, "2": 3, "3": 1, "4": 2, "7": 1, "8": 1}}, "tracer_replaced": false})
    );

    let replacing = "import sys\nfrom calc import add\nadd(1, 2)\nsys.settrace(lambda *args: None)\nadd(1, -1)\n";
    let written = count_lines(&[("calc/__init__.py", calc)], "calc/__init__.py", replacing);
    assert_eq!(written["tracer_replaced"], true, "{written}");
    assert_eq!(
        written["counts"]["calc/__init__.py"]["2"], 1,
        "the call after the replacement is not counted: {written}"
    );
}

/// Regression: SIGTERM (what `timeout` and schedulers send) killed evaluate outright
/// and left its containers running; now it stops like Ctrl-C: containers removed,
/// no report for an unfinished evaluation, exit 1.
#[test]
fn evaluate_stopped_by_sigterm_removes_its_containers_and_exits_non_zero() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let (_project, release) = released_calc_tasks(&harvest);

    let slow = new_file_patch("tests/test_gen.py", "import time\n\n\ndef test_slow():\n    time.sleep(600)\n");
    let predictions = harvest.data_dir.join("predictions.jsonl");
    fs_err::write(&predictions, prediction("acme__calc-1", "slow", &slow) + "\n").unwrap();
    let out = harvest.data_dir.join("report.json");
    let mut command = harvest.validate_command();
    let child = command
        .args(["evaluate", "--release", release.to_str().unwrap(), "--predictions", predictions.to_str().unwrap()])
        .args(["--mode", "swt", "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while docker.containers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "evaluate never started a container");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let terminated = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(terminated.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "stopped is not a success: {}", stderr(&output));
    assert!(stderr(&output).contains("interrupted by SIGTERM"), "{}", stderr(&output));
    assert!(docker.containers().is_empty(), "SIGTERM removes the running container: {}", stderr(&output));
    assert!(!out.exists(), "no report for an unfinished evaluation");
}
