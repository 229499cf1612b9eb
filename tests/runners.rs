//! Test runners other than pytest, through a real Docker engine: a project whose CI
//! runs `python -m unittest`, and a Django-style project (its own
//! `tests/runtests.py` next to a `django/` package) get the framework detected at the
//! environment commit, run with that framework's command, and labelled with ids in
//! SWE-bench's published form (`test_name (module.Class...)`, or a docstring's first
//! line). The synthetic runtests.py takes Django's arguments and prints unittest's
//! verbose output, as Django's runner does (real Django's and SymPy's suites are
//! measured with `validate --input` on SWE-bench rows, scripts/validate-groundtruth.sh).
//!
//! The same tasks released with instance images are graded by SWE-bench's own harness
//! (gold resolves, an empty prediction does not), and `validate --coverage` and
//! `evaluate --mode swt|swe` run them with the project's own runner.

use std::collections::BTreeMap;
use std::process::Command;

use swe_harvest::model::{Candidate, Task};
use swe_harvest::store::Store;

use crate::support::python_project::{self as project, DockerGuard, FIXED_CALC, Project, Scenario};
use crate::support::workspace::Workspace;
use crate::support::{SweHarvest, names, python_venv, run_harness, stderr, stdout, tasks, validated_once};

/// The project's pyproject without its `test` extra: it never mentions pytest.
fn plain_pyproject() -> String {
    let plain = project::PYPROJECT.replace("[project.optional-dependencies]\ntest = [\"pytest\"]\n\n", "");
    assert!(!plain.contains("pytest"), "the test extra is gone: {plain}");
    plain
}

const UNITTEST_CI: &str = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m unittest discover -s tests\n";

/// Tests of `calc` as a unittest module; `with_regression` adds the test that fails
/// before the gold patch.
fn unittest_tests(with_regression: bool) -> String {
    let mut text = String::from(
        "import unittest\n\nfrom calc import add, sub\n\n\nclass CalcTests(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    \
         def test_sub(self):\n        \"\"\"Subtraction takes the second from the first.\n\n        More text.\n        \"\"\"\n        \
         self.assertEqual(sub(3, 1), 2)\n",
    );
    if with_regression {
        text.push_str("\n    def test_add_negative(self):\n        self.assertEqual(add(1, -1), 0)\n");
    }
    text
}

/// A stand-in for Django's tests/runtests.py: Django's arguments, unittest's verbose
/// output on stderr (Django's runner is unittest's), labels as dotted modules under
/// `tests/`.
const RUNTESTS: &str = r#"#!/usr/bin/env python
import argparse
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
parser = argparse.ArgumentParser()
parser.add_argument("labels", nargs="*")
parser.add_argument("--settings", required=True)
parser.add_argument("--parallel", type=int, default=0)
parser.add_argument("-v", "--verbosity", type=int, default=1)
args = parser.parse_args()
if args.settings != "test_sqlite" or args.parallel != 1 or args.verbosity != 2:
    sys.exit("unexpected arguments: %r" % args)
print("Testing against Django installed in '%s' with up to 1 processes" % here)
suite = unittest.defaultTestLoader.loadTestsFromNames(args.labels)
result = unittest.TextTestRunner(verbosity=args.verbosity).run(suite)
sys.exit(not result.wasSuccessful())
"#;

fn run_validate(harvest: &SweHarvest) -> std::process::Output {
    let mut command = harvest.validate_command();
    command.args(["validate", "--runs", "1"]).output().expect("swe-harvest runs")
}

fn drops(harvest: &SweHarvest) -> Vec<(String, String, String)> {
    let store = Store::open_in(&harvest.data_dir).unwrap();
    let mut statement = store
        .connection()
        .prepare("SELECT item, reason, detail FROM stage_items WHERE stage = 'validate' AND outcome = 'dropped'")
        .unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// A project of `files` whose candidate `number` (scenario `name`) fixes `add` and
/// adds the regression test to `test_file`, the project's unittest module; mirrored
/// into `harvest`'s data dir and stored.
fn seeded_unittest_fix(
    harvest: &SweHarvest,
    files: &[(&str, &str)],
    number: u64,
    name: &'static str,
    test_file: &str,
) -> Project {
    let project = Project::with_files(files);
    let scenario = Scenario::new(name).gold("calc/__init__.py", FIXED_CALC).test(test_file, &unittest_tests(true));
    project.seed(&harvest.data_dir, &[project.candidate(number, &scenario)]);
    project
}

/// The unittest project, with candidate 41, mirrored and stored.
fn unittest_project(harvest: &SweHarvest) -> Project {
    let (pyproject, tests) = (plain_pyproject(), unittest_tests(false));
    let files = [
        ("pyproject.toml", pyproject.as_str()),
        (".github/workflows/ci.yml", UNITTEST_CI),
        ("tests/test_calc.py", &tests),
    ];
    seeded_unittest_fix(harvest, &files, 41, "unittest", "tests/test_calc.py")
}

/// The Django-style project, with candidate 42, mirrored and stored.
fn django_style_project(harvest: &SweHarvest) -> Project {
    let tests = unittest_tests(false);
    let files = [
        ("django/__init__.py", "VERSION = (4, 2)\n"),
        ("tests/runtests.py", RUNTESTS),
        ("tests/test_sqlite.py", "DATABASES = {}\n"),
        ("tests/calc_tests/__init__.py", ""),
        ("tests/calc_tests/tests.py", &tests),
    ];
    seeded_unittest_fix(harvest, &files, 42, "django-style", "tests/calc_tests/tests.py")
}

/// Validates the stored candidate and returns its task.
fn validated(harvest: &SweHarvest, instance_id: &str) -> Task {
    let output = run_validate(harvest);
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let mut tasks = tasks(harvest);
    tasks.remove(instance_id).unwrap_or_else(|| panic!("not labelled: {:?}", drops(harvest)))
}

/// Validates the task `instance_id` of the project `set_up` mirrors and stores, and
/// asserts its labels and that no container is left.
fn assert_labelled(set_up: fn(&SweHarvest) -> Project, instance_id: &str, fail_to_pass: &str, pass_to_pass: &[&str]) {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let _project = set_up(&harvest);
    let task = validated(&harvest, instance_id);
    assert_eq!(task.fail_to_pass, names(&[fail_to_pass]));
    assert_eq!(task.pass_to_pass, names(pass_to_pass));
    assert!(docker.containers().is_empty());
}

#[test]
fn a_project_whose_ci_runs_unittest_is_labelled_with_unittest_ids() {
    // Python 3.11 (the project's declared runtime) names the method in the class part.
    assert_labelled(
        unittest_project,
        "acme__calc-41",
        "test_add_negative (tests.test_calc.CalcTests.test_add_negative)",
        &["Subtraction takes the second from the first.", "test_add (tests.test_calc.CalcTests.test_add)"],
    );
}

#[test]
fn a_django_style_project_runs_its_runtests_with_labels_from_the_test_patch() {
    assert_labelled(
        django_style_project,
        "acme__calc-42",
        "test_add_negative (calc_tests.tests.CalcTests.test_add_negative)",
        &["Subtraction takes the second from the first.", "test_add (calc_tests.tests.CalcTests.test_add)"],
    );
}

/// Validates `candidate` of `project` alone in a new Docker workspace, then releases
/// and grades it with SWE-bench's harness and `log_parser` ([`graded_by_swebench`]);
/// asserts the row's `language` and that no container is left, and returns the row's
/// eval script.
pub(crate) fn graded_alone(project: &Project, candidate: Candidate, log_parser: &str, language: &str) -> String {
    let workspace = Workspace::with_docker();
    let instance_id = candidate.instance_id.clone();
    validated_once(&workspace.harvest, project, &[candidate]);
    let row = graded_by_swebench(&workspace.harvest, &instance_id, log_parser);
    assert_eq!(row["language"], language);
    assert!(workspace.containers().is_empty());
    row["eval_script"].as_str().unwrap().to_string()
}

/// Releases the validated task with an instance image and grades it with SWE-bench's
/// own harness: gold resolves it, an empty prediction does not. Returns the row.
pub(crate) fn graded_by_swebench(harvest: &SweHarvest, instance_id: &str, log_parser: &str) -> serde_json::Value {
    // One version per call: the instance image is `swe-harvest/<instance id>:<version>`,
    // and tests that run at once grade tasks of the same id (`acme__calc-1` of the
    // Maven and the Gradle project): with the process's id alone, one test's release
    // replaced the other's image, or removed it, mid-grading.
    static RELEASES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = RELEASES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let version = format!("runners-{}-{serial}", std::process::id());
    let released = harvest.run(&["release", "--name", "runners", "--version", &version, "--images"]);
    assert!(released.status.success(), "{}", stderr(&released));
    let dataset = std::path::PathBuf::from(stdout(&released).trim()).join("tasks.jsonl");
    let row: serde_json::Value =
        serde_json::from_str(fs_err::read_to_string(&dataset).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(row["instance_id"], instance_id);
    assert_eq!(row["log_parser"], log_parser, "{row:#}");
    let image = row["image"].as_str().unwrap().to_string();
    let python = python_venv("swebench", &["swebench>=5,<6"]);
    let work = harvest.work_dir.path();
    let gold = run_harness(&python, work, &dataset, "gold", &format!("gold-{version}"));
    let empty_predictions = work.join("empty.jsonl");
    fs_err::write(
        &empty_predictions,
        serde_json::json!({"instance_id": instance_id, "model_name_or_path": "probe", "model_patch": ""}).to_string()
            + "\n",
    )
    .unwrap();
    let empty = run_harness(&python, work, &dataset, empty_predictions.to_str().unwrap(), &format!("empty-{version}"));
    // Our own `evaluate --mode swe` grades the same release as the harness does.
    let gold_predictions = work.join("gold.jsonl");
    fs_err::write(
        &gold_predictions,
        serde_json::json!({"instance_id": instance_id, "model_name_or_path": "gold", "model_patch": row["patch"]})
            .to_string()
            + "\n",
    )
    .unwrap();
    let release_dir = dataset.parent().unwrap();
    let evaluated: Vec<(serde_json::Value, String)> = [&gold_predictions, &empty_predictions]
        .iter()
        .map(|predictions| {
            let report = work.join(format!("{}-report.json", predictions.file_stem().unwrap().to_string_lossy()));
            let output = harvest.run(&[
                "evaluate",
                "--release",
                release_dir.to_str().unwrap(),
                "--mode",
                "swe",
                "--predictions",
                predictions.to_str().unwrap(),
                "--out",
                report.to_str().unwrap(),
            ]);
            let text = fs_err::read_to_string(&report).unwrap_or_default();
            (serde_json::from_str(&text).unwrap_or_default(), stderr(&output))
        })
        .collect();
    let _ = Command::new("docker").args(["image", "rm", "-f", &image]).output();
    let resolved = |(report, log): &(serde_json::Value, String)| -> bool {
        report["predictions"][0]["resolved"].as_bool().unwrap_or_else(|| panic!("no verdict: {report:#}\n{log}"))
    };
    let gold_log = fs_err::read_to_string(
        harvest.data_dir.join(format!("logs/evaluate/runners-{version}.swe.gold/gold/{instance_id}/swe.log")),
    )
    .unwrap_or_default();
    assert!(resolved(&evaluated[0]), "evaluate --mode swe resolves the gold patch: {:#}\n{gold_log}", evaluated[0].0);
    let empty_report = &evaluated[1].0;
    assert_eq!(empty_report["predictions"].as_array().map(Vec::len), Some(1), "{empty_report:#}\n{}", evaluated[1].1);
    assert_ne!(empty_report["predictions"][0]["resolved"], true, "evaluate --mode swe rejects an empty prediction");
    // The harness's own log of the gold run, to say why when it did not resolve.
    let gold_output = fs_err::read_to_string(
        work.join(format!("logs/run_evaluation/gold-{version}/gold/{instance_id}/test_output.txt")),
    )
    .unwrap_or_default();
    assert_eq!(gold["resolved_instances"], 1, "the gold patch resolves the task: {gold:#}\n{gold_output}");
    assert_eq!(gold["error_instances"], 0, "{gold:#}");
    assert_eq!(empty["resolved_instances"], 0, "an empty prediction resolves nothing: {empty:#}");
    row
}

#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_unittest_and_django_style_tasks() {
    graded_by_swebench_alone(unittest_project, "acme__calc-41", "python -m unittest -v tests/test_calc.py");
    graded_by_swebench_alone(
        django_style_project,
        "acme__calc-42",
        "tests/runtests.py --settings=test_sqlite --parallel 1 -v 2",
    );
}

/// The task `instance_id` of the project that `project_of` seeds, validated in a data
/// dir of its own and graded by SWE-bench's harness with `parse_log_django`: its eval
/// script runs `command`, and no container is left.
fn graded_by_swebench_alone(project_of: fn(&SweHarvest) -> Project, instance_id: &str, command: &str) {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let _project = project_of(&harvest);
    validated(&harvest, instance_id);
    let row = graded_by_swebench(&harvest, instance_id, "parse_log_django");
    let script = row["eval_script"].as_str().unwrap();
    assert!(script.contains(command), "{script}");
    assert!(docker.containers().is_empty());
}

/// A new unittest module under the Django-style project's `tests/calc_tests/`.
fn generated_module(name: &str, body: &str) -> String {
    let text = format!("import unittest\n\nfrom calc import add\n\n\nclass GenTests(unittest.TestCase):\n{body}");
    project::new_file_patch(&format!("tests/calc_tests/{name}.py"), &text)
}

fn evaluate(
    harvest: &SweHarvest,
    release: &std::path::Path,
    mode: &str,
    predictions: &[serde_json::Value],
) -> serde_json::Value {
    let path = harvest.data_dir.join(format!("predictions-{mode}.jsonl"));
    let lines: Vec<String> = predictions.iter().map(ToString::to_string).collect();
    fs_err::write(&path, lines.join("\n") + "\n").unwrap();
    let out = harvest.data_dir.join(format!("report-{mode}.json"));
    let mut command = harvest.validate_command();
    let output = command
        .args(["evaluate", "--release", release.to_str().unwrap(), "--predictions", path.to_str().unwrap()])
        .args(["--mode", mode, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "evaluate --mode {mode} failed:\n{}", stderr(&output));
    serde_json::from_str(&fs_err::read_to_string(&out).unwrap()).unwrap()
}

fn graded<'a>(report: &'a serde_json::Value, model: &str) -> &'a serde_json::Value {
    report["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["model_name_or_path"] == model)
        .unwrap_or_else(|| panic!("no report for {model}: {report:#}"))
}

#[test]
fn coverage_and_evaluate_run_a_django_style_projects_own_runner() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let _project = django_style_project(&harvest);
    let mut command = harvest.validate_command();
    let output = command.args(["validate", "--runs", "1", "--coverage"]).output().unwrap();
    assert!(output.status.success(), "validate --coverage failed:\n{}", stderr(&output));
    let output = harvest.run(&["release", "--name", "django-style", "--version", "1", "--images"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let release = harvest.data_dir.join("releases/django-style/1");
    let rows = swe_harvest::dataset::read_records(&release.join("tasks.jsonl")).unwrap();
    let row = &rows[0];
    // The gold patch removes the two lines of the negative branch; the golden test runs
    // both more often than the existing tests: ΔC = 2/2, measured through runtests.py.
    assert_eq!(row["gold_executable_lines"], "2", "{row:#?}");
    assert_eq!(row["golden_change_coverage"], "1.0000", "{row:#?}");
    assert_eq!(row["ecosystem"], "python-django");

    // --mode swt: generated Django test modules, labelled and read as the runner names them.
    let prediction = |model: &str, patch: &str| serde_json::json!({"instance_id": "acme__calc-42", "model_name_or_path": model, "model_patch": patch});
    let reproducing =
        generated_module("test_gen", "    def test_negative(self):\n        self.assertEqual(add(1, -1), 0)\n");
    let passing =
        generated_module("test_gen", "    def test_positive(self):\n        self.assertEqual(add(2, 2), 4)\n");
    let report =
        evaluate(&harvest, &release, "swt", &[prediction("reproduces", &reproducing), prediction("passes", &passing)]);
    let reproduces = graded(&report, "reproduces");
    assert_eq!(reproduces["reproduced"], true, "{reproduces:#}");
    assert_eq!(
        reproduces["tests"]["fail_to_pass"],
        serde_json::json!(["test_negative (calc_tests.test_gen.GenTests.test_negative)"])
    );
    let passes = graded(&report, "passes");
    assert_eq!(passes["reproduced"], false, "{passes:#}");
    assert_eq!(
        passes["tests"]["pass_to_pass"],
        serde_json::json!(["test_positive (calc_tests.test_gen.GenTests.test_positive)"])
    );

    // --mode swe: the eval script runs runtests.py and its output is read as Django's.
    let gold = row["patch"].as_str().unwrap();
    let comment_only = "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1,2 +1,3 @@\n+# a comment\n def add(a, b):\n     if b < 0:\n";
    let report = evaluate(&harvest, &release, "swe", &[prediction("gold", gold), prediction("comment", comment_only)]);
    let resolved = graded(&report, "gold");
    assert_eq!(resolved["resolved"], true, "{resolved:#}");
    assert_eq!(resolved["pass_to_pass"], serde_json::json!({"passed": 2, "total": 2}));
    let comment = graded(&report, "comment");
    assert_eq!((comment["applied"].as_bool(), comment["resolved"].as_bool()), (Some(true), Some(false)), "{comment:#}");
    assert_eq!(comment["fail_to_pass"], serde_json::json!({"passed": 0, "total": 1}));
    let _ = Command::new("docker").args(["image", "rm", "-f", row["image"].as_str().unwrap()]).output();
    assert!(docker.containers().is_empty());
}

/// Regression: SymPy 1.1's `test_bell` hangs at its environment commit (the test patch
/// of sympy__sympy-13437 replaces it), and the ladder's check of the image waited the
/// whole run limit (15 minutes) for it. The check now has its own, shorter limit, and
/// running out of it keeps the image: the task's own runs decide.
#[test]
fn an_existing_test_that_hangs_at_the_environment_commit_does_not_hold_up_or_condemn_the_image() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    // The hanging test comes first, so the check sees no verdict before its limit.
    let hanging = unittest_tests(false).replace(
        "class CalcTests(unittest.TestCase):\n",
        "class CalcTests(unittest.TestCase):\n    def test_a_hangs(self):\n        import time\n        time.sleep(3600)\n\n",
    );
    let project = Project::dated_with_files(
        "2024-06-02T12:00:00+00:00",
        &[
            ("pyproject.toml", &plain_pyproject()),
            (".github/workflows/ci.yml", UNITTEST_CI),
            ("tests/test_calc.py", &hanging),
        ],
    );
    // Two tasks share the image, so that it gets a check run of its own (a lone task's
    // first run is its image's check).
    let scenario =
        Scenario::new("hangs").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &unittest_tests(true));
    let candidates = [project.candidate(43, &scenario), project.candidate(44, &scenario)];
    project.seed(&harvest.data_dir, &candidates);
    let mut command = harvest.validate_command();
    let output = command
        .env("SWE_HARVEST_VALIDATE__CHECK_TIMEOUT_SECS", "5")
        .args(["validate", "--runs", "1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = tasks(&harvest)
        .remove("acme__calc-43")
        .unwrap_or_else(|| panic!("not labelled: {:?}\n{}", drops(&harvest), stderr(&output)));
    assert_eq!(task.fail_to_pass, names(&["test_add_negative (tests.test_calc.CalcTests.test_add_negative)"]));
    assert_eq!(task.environment_rung, Some(swe_harvest::model::Rung::Dated), "the first rung is kept");
    let checks: Vec<String> = fs_err::read_dir(harvest.data_dir.join("logs/check"))
        .unwrap()
        .map(|entry| fs_err::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    assert!(
        checks.iter().any(|log| log.contains("test_a_hangs") && log.contains("check end 124")),
        "the check stopped at its own limit: {checks:?}"
    );
    assert!(docker.containers().is_empty());
}

/// The mirror of `owner+name` (or `owner__name.git`) under `SWE_HARVEST_MIRRORS`.
fn fetched_mirror(owner: &str, name: &str) -> Option<std::path::PathBuf> {
    let root = std::path::PathBuf::from(std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS)?);
    [root.join(format!("{owner}+{name}/repo")), root.join(format!("{owner}__{name}.git"))]
        .into_iter()
        .find(|path| path.is_dir())
}

/// Real data: SWE-bench Lite rows of SymPy (its own runner, ids as function names)
/// through `validate --input`, with no per-repository config, against a local mirror
/// of sympy/sympy; their FAIL_TO_PASS must be the published one and every published
/// PASS_TO_PASS test must pass. Two rows of different SymPy generations (1.0 of 2016,
/// 1.6 of 2020) keep it to minutes; scripts/validate-groundtruth.sh runs all 13.
#[test]
fn swe_bench_sympy_rows_get_their_published_labels_from_sympys_own_runner() {
    let Some(_mirror) = fetched_mirror("sympy", "sympy") else {
        eprintln!(
            "SKIPPED: set SWE_HARVEST_MIRRORS to a folder holding a bare mirror of sympy/sympy \
             (sympy+sympy/repo or sympy__sympy.git) to run the SymPy real-data test"
        );
        return;
    };
    let Some(source) = crate::support::shared_groundtruth("swe-bench-lite-test-django-sympy-sample.jsonl") else {
        return;
    };
    let text = fs_err::read_to_string(&source).unwrap();
    let wanted = ["sympy__sympy-11400", "sympy__sympy-18835"];
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|row| wanted.contains(&row["instance_id"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(rows.len(), wanted.len(), "the ground truth holds {wanted:?}");
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let input = harvest.path("rows.jsonl");
    let lines: Vec<String> = rows.iter().map(ToString::to_string).collect();
    fs_err::write(&input, lines.join("\n") + "\n").unwrap();
    let out = harvest.path("out.jsonl");
    let mut command = harvest.validate_command();
    let output = command
        .env(
            swe_harvest::env_vars::SWE_HARVEST_MIRRORS,
            std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS).unwrap(),
        )
        .args(["validate", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--runs", "1"])
        .args(["--workers", "2"])
        .output()
        .unwrap();
    assert!(output.status.success(), "validate --input failed:\n{}", stderr(&output));
    let validated: BTreeMap<String, serde_json::Value> = fs_err::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .map(|row| (row["instance_id"].as_str().unwrap().to_string(), row))
        .collect();
    let list = |row: &serde_json::Value, key: &str| -> Vec<String> {
        let mut list: Vec<String> = serde_json::from_str(row[key].as_str().unwrap()).unwrap();
        list.sort();
        list
    };
    for published in &rows {
        let id = published["instance_id"].as_str().unwrap();
        let fresh = &validated[id];
        assert_eq!(list(fresh, "FAIL_TO_PASS"), list(published, "FAIL_TO_PASS"), "{id}: {:#}", fresh["diagnosis"]);
        let passing = list(fresh, "PASS_TO_PASS");
        let missed: Vec<String> =
            list(published, "PASS_TO_PASS").into_iter().filter(|test| !passing.contains(test)).collect();
        assert!(missed.is_empty(), "{id}: published PASS_TO_PASS tests that did not pass: {missed:?}");
    }
    assert!(docker.containers().is_empty());
}
