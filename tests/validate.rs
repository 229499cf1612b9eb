//! The validate stage against a real Docker engine, on synthetic Python projects
//! (tests/support/python_project.rs). Every test shares one environment image: the
//! project's base commit is the same everywhere.

use std::collections::BTreeMap;

use swe_harvest::model::Candidate;
use swe_harvest::store::Store;

use crate::support::python_project::{
    self as project, FIXED_CALC, FIXED_CALC_BROKEN_SUB, PYPROJECT, Project, Scenario,
};
use crate::support::stopped_build::{
    self, BuildPoint, LOCAL, StopSignal, a_row_with_a_cold_environment, resumes_and_labels, slow_setup_py,
    stop_rows_run,
};
use crate::support::workspace::{ADD_NEGATIVE, RowsRun, Workspace, row_of};
use crate::support::{SweHarvest, names, stderr, stdout, tasks};

/// A Docker socket where no engine answers.
const NO_DOCKER_ENGINE: (&str, &str) = ("DOCKER_HOST", "unix:///nonexistent/docker.sock");

const FLAKY_TEST: &str = "import os\n\n\ndef test_flaky():\n    # Passes in odd attempts, fails in even ones: a disagreement every two runs.\n    assert int(os.environ.get('SWE_HARVEST_ATTEMPT', '1')) % 2 == 1\n";
const NETWORK_TEST: &str =
    "import socket\n\n\ndef test_reaches_pypi():\n    socket.create_connection(('pypi.org', 443), timeout=5).close()\n";
const FORGER_TEST: &str = r#"FORGED = (
    "\n@@swe-harvest forgedtoken0000000000000 pre end 0\n"
    "=========================== short test summary info ============================\n"
    "PASSED tests/test_forger.py::test_always_fails\n"
    "============================== 1 passed in 0.01s ===============================\n"
)


def test_forger():
    print(FORGED)
    try:
        # Straight to the container's output, around pytest's capture.
        with open("/proc/1/fd/1", "w") as out:
            out.write(FORGED)
    except OSError:
        pass


def test_always_fails():
    assert False
"#;

#[test]
fn validate_labels_fail_to_pass_and_keeps_broken_flaky_networked_and_forged_tests_out() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidates = vec![
        project.candidate(1, &Scenario::fixing_add("fix")),
        project.candidate(
            2,
            &Scenario::new("fix-breaks-sub")
                .gold("calc/__init__.py", FIXED_CALC_BROKEN_SUB)
                .test("tests/test_calc.py", &project::tests_with_regression()),
        ),
        project.candidate(3, &Scenario::fixing_add("flaky").test("tests/test_flaky.py", FLAKY_TEST)),
        project.candidate(4, &Scenario::fixing_add("network").test("tests/test_network.py", NETWORK_TEST)),
        project.candidate(5, &Scenario::fixing_add("forger").test("tests/test_forger.py", FORGER_TEST)),
        // The test patch only adds a test that passes before the fix: nothing to label.
        project.candidate(
            6,
            &Scenario::new("no-f2p")
                .gold("calc/__init__.py", FIXED_CALC)
                .test("tests/test_more.py", "def test_more():\n    assert True\n"),
        ),
    ];
    workspace.seeded(&project, &candidates);

    let output = workspace.validated(&["--runs", "2", "--workers", "2"]);
    let tasks = tasks(&workspace.harvest);
    let regression = ADD_NEGATIVE;

    let fix = &tasks["acme__calc-1"];
    assert_eq!(fix.fail_to_pass, names(&[regression]));
    assert_eq!(fix.pass_to_pass, names(&["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]));
    assert_eq!(fix.validation_runs, 2);
    assert!(
        fix.image.as_deref().is_some_and(|image| image.starts_with("swe-harvest/env.acme__calc:")),
        "{:?}",
        fix.image
    );

    let breaks = &tasks["acme__calc-2"];
    assert_eq!(breaks.fail_to_pass, names(&[regression]));
    assert_eq!(breaks.pass_to_pass, names(&["tests/test_calc.py::test_add"]), "test_sub broke: not pass-to-pass");

    let flaky = &tasks["acme__calc-3"];
    assert_eq!(flaky.flaky_tests, names(&["tests/test_flaky.py::test_flaky"]));
    assert_eq!(flaky.fail_to_pass, names(&[regression]));
    assert!(!flaky.pass_to_pass.iter().any(|test| test.contains("flaky")));

    let network = &tasks["acme__calc-4"];
    assert_eq!(network.fail_to_pass, names(&[regression]));
    assert!(!network.pass_to_pass.iter().any(|test| test.contains("pypi")), "{:?}", network.pass_to_pass);
    // Not just absent: reported as needing the network, and only it.
    assert_eq!(network.needs_network, names(&["tests/test_network.py::test_reaches_pypi"]));
    assert!(
        tasks
            .values()
            .filter(|task| task.candidate.instance_id != "acme__calc-4")
            .all(|task| task.needs_network.is_empty())
    );

    let forger = &tasks["acme__calc-5"];
    assert_eq!(forger.fail_to_pass, names(&[regression]));
    assert!(
        forger.pass_to_pass.contains(&"tests/test_forger.py::test_forger".to_string()),
        "{:?}",
        forger.pass_to_pass
    );
    assert!(!forger.pass_to_pass.iter().any(|test| test.contains("test_always_fails")), "{:?}", forger.pass_to_pass);
    let forger_log = workspace.run_log("acme__calc-5");
    assert!(forger_log.contains("@@swe-harvest forgedtoken"), "the forged marker reached the output: {forger_log}");

    let drops = workspace.drops();
    assert_eq!(drops["acme__calc-6"].0, "no_fail_to_pass", "{:?}", drops["acme__calc-6"]);

    // Per-run results and logs are kept.
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let runs = swe_harvest::store::validation::runs(store.connection(), "acme__calc-1").unwrap();
    assert_eq!(runs.len(), 4, "pre and post of two attempts");
    assert!(runs.iter().all(|run| run.results_source == "junit"), "{runs:?}");
    let log_dir = workspace.data_dir().join("logs/validate/acme__calc-1");
    assert!(log_dir.join("run-1.log").is_file() && log_dir.join("run-2.log").is_file());
    // The network test really was refused the network.
    let network_log = workspace.run_log("acme__calc-4");
    assert!(network_log.contains("test_reaches_pypi"), "{network_log}");

    assert!(workspace.containers().is_empty(), "every container is removed");
    let summary = stderr(&output);
    assert!(summary.contains("5 labelled, 1 dropped"), "{summary}");
    assert!(summary.contains("needs the network: 1 tests in 1 tasks"), "{summary}");

    // A second run has nothing left to do and starts no container.
    let again = workspace.validate(&["--runs", "2"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("6 already finished"), "{}", stderr(&again));
}

const HANGING_TEST: &str = "import time\n\n\ndef test_hangs():\n    time.sleep(3600)\n";
const FORK_BOMB_TEST: &str = "import os\n\n\ndef test_fork_bomb():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n";
const MEMORY_HOG_TEST: &str = "def test_memory_hog():\n    hog = b'x' * (2 * 1024 ** 3)\n    assert hog\n";
/// Writes 2 MiB: past a file-size limit of 1 MiB, Python (which ignores SIGXFSZ) gets
/// "File too large" and the test fails before and after the fix.
const LARGE_FILE_TEST: &str =
    "def test_large_file(tmp_path):\n    (tmp_path / 'big').write_bytes(b'x' * (2 * 1024 ** 2))\n";

/// The file-size limit of the test below: 1 MiB.
const FILE_SIZE_BYTES: &str = "1048576";

#[test]
fn validate_contains_a_hanging_test_a_fork_bomb_a_memory_hog_and_a_large_file() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let hazard = |number, name, file, text| project.candidate(number, &Scenario::fixing_add(name).test(file, text));
    let candidates = vec![
        hazard(11, "hangs", "tests/test_hang.py", HANGING_TEST),
        hazard(12, "fork-bomb", "tests/test_bomb.py", FORK_BOMB_TEST),
        hazard(13, "memory-hog", "tests/test_hog.py", MEMORY_HOG_TEST),
        hazard(14, "large-file", "tests/test_large.py", LARGE_FILE_TEST),
    ];
    workspace.seeded(&project, &candidates);

    let started = std::time::Instant::now();
    let output = workspace.validate_with_env(
        &[
            ("SWE_HARVEST_VALIDATE__RUN_TIMEOUT_SECS", "15"),
            ("SWE_HARVEST_VALIDATE__MEMORY_BYTES", "268435456"),
            ("SWE_HARVEST_VALIDATE__PIDS_LIMIT", "64"),
            ("SWE_HARVEST_VALIDATE__FILE_SIZE_BYTES", FILE_SIZE_BYTES),
        ],
        &["--runs", "1", "--workers", "3"],
    );
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let drops = workspace.drops();
    assert_eq!(drops["acme__calc-11"].0, "timeout", "{:?}", drops["acme__calc-11"]);
    assert!(drops["acme__calc-11"].1.contains("15s"), "{:?}", drops["acme__calc-11"]);
    let bomb = &drops["acme__calc-12"].0;
    assert_eq!(bomb, "timeout", "the fork bomb is stopped by the limits: {:?}", drops["acme__calc-12"]);
    assert_eq!(drops["acme__calc-13"].0, "out_of_memory", "{:?}", drops["acme__calc-13"]);
    // The large file is cut off at the configured limit: its test fails before and after
    // the fix, in neither list, while the task's own regression test is labelled.
    let tasks = tasks(&workspace.harvest);
    assert_eq!(tasks.keys().collect::<Vec<_>>(), vec!["acme__calc-14"], "{drops:#?}");
    let large = &tasks["acme__calc-14"];
    assert!(!large.fail_to_pass.is_empty(), "{large:?}");
    let in_lists = large.fail_to_pass.iter().chain(&large.pass_to_pass).any(|test| test.contains("test_large_file"));
    assert!(!in_lists, "a 2 MiB file was written under a 1 MiB limit: {large:?}");
    assert!(workspace.containers().is_empty(), "every container is removed, also after timeouts");
    eprintln!("drops: {drops:#?}");
    // The limits hold: nothing ran anywhere near the hanging test's hour.
    assert!(started.elapsed().as_secs() < 600, "took {:?}", started.elapsed());
}

#[test]
fn environment_builds_run_the_repositorys_code_within_the_memory_limit() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(15, &Scenario::fixing_add("hungry-build"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    // The repository's install step wants 1 GiB; jobs, and now builds, get 256 MiB.
    let config = workspace.with_repo_config(
        "[[environment]]\nversions = [\"*\"]\nruntime = \"3.11\"\n\
         install = [\"python -c 'hog = bytearray(1024 ** 3); print(len(hog))'\", \"uv pip install --no-build-isolation -e . pytest\"]\n\
         test_command = \"pytest -rA -p no:cacheprovider\"\n",
    );
    let output = workspace.validate_with_env(
        &[("SWE_HARVEST_CONFIG", config.to_str().unwrap()), ("SWE_HARVEST_VALIDATE__MEMORY_BYTES", "268435456")],
        &["--runs", "1"],
    );
    assert_eq!(output.status.code(), Some(1), "its only task lost to its environment:\n{}", stderr(&output));
    let drops = workspace.drops();
    assert_eq!(drops["acme__calc-15"].0, "environment_build_failed", "{:?}", drops.get("acme__calc-15"));
    assert!(drops["acme__calc-15"].1.contains("137"), "killed at the limit: {:?}", drops["acme__calc-15"]);
    assert!(tasks(&workspace.harvest).is_empty());
    assert!(workspace.containers().is_empty());
}

/// A project built with flit, which zips its sources for an editable install.
const FLIT_PYPROJECT: &str = "[build-system]\nrequires = [\"flit_core>=3.4,<4\"]\nbuild-backend = \"flit_core.buildapi\"\n\n\
[project]\nname = \"calc\"\ndynamic = [\"version\", \"description\"]\nrequires-python = \">=3.9\"\n\
classifiers = [\"Programming Language :: Python :: 3.11\"]\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n";

#[test]
fn a_flit_project_gets_an_environment_and_labels() {
    let workspace = Workspace::with_docker();
    let calc = format!("\"\"\"A calculator.\"\"\"\n\n__version__ = \"1.0.0\"\n\n{}", project::BUGGY_CALC);
    let project = Project::with_files(&[("pyproject.toml", FLIT_PYPROJECT), ("calc/__init__.py", &calc)]);
    let candidate = project.candidate(16, &Scenario::fixing_add("flit"));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(workspace.containers().is_empty());
}

#[test]
fn a_dependency_with_an_invalid_escape_does_not_break_a_project_whose_warnings_are_errors() {
    let workspace = Workspace::with_docker();
    // A dependency of its time whose source warns when compiled (`\d` in a plain string).
    let project = Project::with_files(&[
        ("requirements.txt", "./vendor/oldlib\n"),
        (
            "vendor/oldlib/pyproject.toml",
            "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
             [project]\nname = \"oldlib\"\nversion = \"0.1\"\n\n[tool.setuptools]\npy-modules = [\"oldlib\"]\n",
        ),
        ("vendor/oldlib/oldlib.py", "PATTERN = \"\\d+\"\n"),
        ("pytest.ini", "[pytest]\nfilterwarnings =\n    error\n"),
    ]);
    let tests = format!("import oldlib  # noqa: F401\n{}", project::tests_with_regression());
    let candidate = project.candidate(
        17,
        &Scenario::new("strict-warnings").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &tests),
    );
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(workspace.containers().is_empty());
}

#[test]
fn a_dependency_that_the_gold_patch_adds_is_installed_into_the_tasks_environment() {
    let workspace = Workspace::with_docker();
    // The fix imports a package that the environment commit (here the base commit)
    // does not declare: after the gold patch no test of the file can be collected,
    // so without that package no test fails to pass (pylint's `appdirs`).
    let project = Project::new();
    let fixed = format!("import six  # noqa: F401\n{FIXED_CALC}");
    let with_six = project::PYPROJECT.replace("version = \"1.0.0\"", "version = \"1.0.0\"\ndependencies = [\"six\"]");
    let candidate = project.candidate(
        19,
        &Scenario::new("gold-adds-a-dependency")
            .gold("calc/__init__.py", &fixed)
            .gold("pyproject.toml", &with_six)
            .test("tests/test_calc.py", &project::tests_with_regression()),
    );
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(
        task.pass_to_pass,
        vec!["tests/test_calc.py::test_add".to_string(), "tests/test_calc.py::test_sub".to_string()]
    );
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let image = task.image.as_deref().expect("an image");
    let spec = swe_harvest::store::validation::environment_spec_for_image(store.connection(), image).unwrap().unwrap();
    assert_eq!(spec.extra_packages, vec!["six".to_string()], "the task's environment adds the missing package");
    assert!(workspace.containers().is_empty());
}

/// A project of March 2019 that depends on pytest 4.3.0 (as pytest plugins do), with
/// `requires-python` given: pytest 4.3.0 needs `atomicwrites`, whose releases before
/// 2022 are deleted from PyPI, so the environment as of the date cannot be resolved.
fn pytest_4_project(requires_python: &str) -> (Project, swe_harvest::model::Candidate) {
    let pyproject = format!(
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
         [project]\nname = \"calc\"\nversion = \"1.0.0\"\nrequires-python = \"{requires_python}\"\n\
         dependencies = [\"pytest==4.3.0\"]\n\n[tool.setuptools]\npackages = [\"calc\"]\n"
    );
    let project = Project::dated_with_files("2019-03-01T12:00:00+00:00", &[("pyproject.toml", &pyproject)]);
    let candidate = project.candidate(18, &Scenario::fixing_add("pytest-4"));
    (project, candidate)
}

/// The released `environment_rung` of each task, through `export`.
fn exported_rungs(harvest: &SweHarvest) -> BTreeMap<String, String> {
    let (out, _) = harvest.exported("tasks", "jsonl");
    swe_harvest::dataset::read_records(&out)
        .unwrap()
        .into_iter()
        .map(|record| {
            (
                record["instance_id"].as_str().unwrap().to_string(),
                record["environment_rung"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_dependency_whose_old_releases_are_gone_is_taken_at_its_oldest_release_and_the_rung_is_released() {
    let workspace = Workspace::with_docker();
    let (project, candidate) = pytest_4_project(">=3.9");
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validated(&["--runs", "1"]);
    let task = workspace.task("acme__calc-18");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(task.environment_rung, Some(swe_harvest::model::Rung::RelaxedPackages));
    assert!(stderr(&output).contains("environments by ladder rung: 1 relaxed-packages"), "{}", stderr(&output));
    assert_eq!(exported_rungs(&workspace.harvest)["acme__calc-18"], "relaxed-packages");
    assert!(workspace.containers().is_empty());
}

#[test]
fn a_test_runner_of_the_date_that_cannot_run_on_the_runtime_climbs_to_runner_pins() {
    let workspace = Workspace::with_docker();
    // 3.11 and 3.13 only: pytest 4.3.0 imports `py`, whose lazy modules break on both.
    let (project, candidate) = pytest_4_project(">=3.10");
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validate(&["--runs", "1", "--write-config"]);
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = workspace.task("acme__calc-18");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(task.pass_to_pass, names(&["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]));
    assert_eq!(task.environment_rung, Some(swe_harvest::model::Rung::RunnerPins));
    // Every rung before was recorded with how it failed.
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let statuses: Vec<(String, String)> = store
        .connection()
        .prepare("SELECT status, spec FROM environments ORDER BY updated_at")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let unusable = statuses.iter().filter(|(status, _)| status == "unusable").count();
    assert!(unusable >= 2, "the relaxed 3.11 and the 3.13 environments ran no test: {statuses:?}");
    assert!(statuses.iter().any(|(status, spec)| status == "built" && spec.contains("runner-pins")), "{statuses:?}");
    // Each rung left kept its run's log apart from the next one's.
    let log_dir = workspace.data_dir().join("logs/validate/acme__calc-18");
    let set_aside = rung_log_folders(&log_dir);
    assert!(set_aside.len() >= 2, "{set_aside:?}");
    for folder in &set_aside {
        assert!(!folder.contains("runner-pins"), "the verdict's own runs stay in the task's folder: {set_aside:?}");
        assert!(log_dir.join(folder).join("run-1.log").is_file(), "{folder}");
    }
    assert!(log_dir.join("run-1.log").is_file());
    let details: Vec<String> = store
        .connection()
        .prepare("SELECT detail FROM environments WHERE status = 'unusable'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let logs_named: Vec<&str> = details
        .iter()
        .filter_map(|detail| detail.split("(log: ").nth(1).and_then(|rest| rest.split(')').next()))
        .collect();
    assert!(!logs_named.is_empty(), "{details:?}");
    for path in logs_named {
        assert!(path.contains("/rung-") && std::path::Path::new(path).is_file(), "{path} of {details:?}");
    }

    // The learned config makes the next run start at the rung that worked.
    let learned = fs_err::read_to_string(workspace.path("configs/repos/acme__calc.toml")).unwrap();
    assert!(learned.contains("rung = \"runner-pins\""), "{learned}");
    assert!(learned.contains("versions = [\"1.0\"]"), "{learned}");
    let output = workspace.validate(&["--runs", "1", "--instance", "acme__calc-18"]);
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let again = self::tasks(&workspace.harvest);
    assert_eq!(again["acme__calc-18"].fail_to_pass, task.fail_to_pass);
    assert_eq!(again["acme__calc-18"].environment_rung, Some(swe_harvest::model::Rung::RunnerPins));
    assert!(
        stderr(&output).contains("environment images: 0 built"),
        "the learned spec's image exists: {}",
        stderr(&output)
    );
    let rows_after: i64 =
        store.connection().query_row("SELECT COUNT(*) FROM environments", [], |row| row.get(0)).unwrap();
    assert_eq!(rows_after as usize, statuses.len(), "no rung was climbed again");
    assert_eq!(rung_log_folders(&log_dir), Vec::<String>::new(), "an earlier validate's rungs are gone");
    assert!(workspace.containers().is_empty());
}

/// The folders of a task's log folder where the ladder set a rung's run files aside.
fn rung_log_folders(log_dir: &std::path::Path) -> Vec<String> {
    let mut folders: Vec<String> = fs_err::read_dir(log_dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("rung-"))
        .collect();
    folders.sort();
    folders
}

/// A project of the pytest 2 era (runtime 3.9): its test requirements pin pytest 2.9,
/// which has no `pytest` command (only `py.test`), and its config turns off assertion
/// rewriting (pytest 2's rewriting breaks on Python 3.9's `assert`).
const PYTEST2_PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
[project]\nname = \"calc\"\nversion = \"1.0.0\"\nclassifiers = [\"Programming Language :: Python :: 3.9\"]\n\n\
[tool.setuptools]\npackages = [\"calc\"]\n";

#[test]
fn a_project_that_pins_a_pytest_without_a_pytest_command_gets_labels() {
    let workspace = Workspace::with_docker();
    let project = Project::with_files(&[
        ("pyproject.toml", PYTEST2_PYPROJECT),
        ("requirements-test.txt", "pytest==2.9.2\n"),
        ("pytest.ini", "[pytest]\naddopts = --assert=plain\n"),
    ]);
    let candidate = project.candidate(18, &Scenario::fixing_add("pytest2"));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(task.pass_to_pass.contains(&"tests/test_calc.py::test_add".to_string()), "{:?}", task.pass_to_pass);
    assert!(workspace.containers().is_empty());
}

/// A project of the pytest 2.8 era on Python 3.9 (its assertion rewriting off, which
/// pytest 2 cannot do on 3.9). pytest 2.8 collects plain test functions there, so the
/// environment passes its check at the environment commit;
/// but its collector ends a hook wrapper with `raise StopIteration` whenever another
/// plugin collected the object, which Python 3.7 and later turn into a `RuntimeError`
/// (PEP 479): the test patch's `unittest.TestCase` class makes the whole module fail
/// to collect, and no test of the task's runs runs at all (psf/requests rows of 2015).
const PYTEST28_PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
[project]\nname = \"calc\"\nversion = \"1.0.0\"\nclassifiers = [\"Programming Language :: Python :: 3.9\"]\n\n\
[tool.setuptools]\npackages = [\"calc\"]\n";
const TEST_CASE_CLASS: &str = "\n\nimport unittest\n\n\nclass NegativeTests(unittest.TestCase):\n    def test_add_negative(self):\n        \
     self.assertEqual(add(1, -1), 0)\n";

#[test]
fn an_environment_whose_runs_run_no_test_at_the_base_commit_gives_way_to_the_next_rung() {
    let workspace = Workspace::with_docker();
    let project = Project::with_files(&[
        ("pyproject.toml", PYTEST28_PYPROJECT),
        ("requirements-test.txt", "pytest==2.8.7\n"),
        ("pytest.ini", "[pytest]\naddopts = --assert=plain\n"),
    ]);
    let tests = format!("{}{TEST_CASE_CLASS}", project::BASE_TESTS);
    let candidate = project.candidate(
        20,
        &Scenario::new("runs-run-nothing").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &tests),
    );
    let task = workspace.labelled_alone(&project, &candidate);
    let first = workspace.first_environment_spec();
    assert_eq!(task.fail_to_pass, vec!["tests/test_calc.py::NegativeTests::test_add_negative".to_string()]);
    assert!(task.pass_to_pass.contains(&"tests/test_calc.py::test_add".to_string()), "{:?}", task.pass_to_pass);
    assert_eq!(first["runtime"], "3.9", "{first}");
    assert!(first.get("rung").is_none_or(|rung| rung == "dated"), "the dated rung first: {first}");
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let environments: i64 =
        store.connection().query_row("SELECT COUNT(*) FROM environments", [], |row| row.get(0)).unwrap();
    assert!(environments >= 2, "a rung after the dated one: {environments} environments");
    assert!(workspace.containers().is_empty());
}

/// A project versioned by setuptools-scm (no `.git` in the container: its version is
/// pretended) with a dependency from source whose version setuptools-scm reads from
/// its sdist's PKG-INFO.
const SCM_PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=64\", \"setuptools_scm>=8\"]\n\
build-backend = \"setuptools.build_meta\"\n\n\
[project]\nname = \"calc\"\ndynamic = [\"version\"]\nrequires-python = \">=3.9\"\n\
classifiers = [\"Programming Language :: Python :: 3.11\"]\n\n\
[project.optional-dependencies]\ntest = [\"pytest\"]\n\n[tool.setuptools]\npackages = [\"calc\"]\n\n[tool.setuptools_scm]\n";
const SCMLIB_PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=64\", \"setuptools_scm>=8\"]\n\
build-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"scmlib\"\ndynamic = [\"version\"]\n\n\
[tool.setuptools]\npy-modules = [\"scmlib\"]\n\n[tool.setuptools_scm]\n";

#[test]
fn a_dependency_versioned_by_setuptools_scm_keeps_its_own_version() {
    let workspace = Workspace::with_docker();
    let project = Project::with_files(&[
        ("pyproject.toml", SCM_PYPROJECT),
        ("requirements.txt", "./vendor/scmlib\n"),
        ("vendor/scmlib/pyproject.toml", SCMLIB_PYPROJECT),
        ("vendor/scmlib/PKG-INFO", "Metadata-Version: 2.1\nName: scmlib\nVersion: 1.8.0\n"),
        ("vendor/scmlib/scmlib.py", "VALUE = 1\n"),
    ]);
    let tests = format!(
        "from importlib.metadata import version\n\n{}\n\n\ndef test_versions():\n    \
         assert version('scmlib') == '1.8.0'\n    assert version('calc') == '1.0.0'\n",
        project::tests_with_regression()
    );
    let candidate = project
        .candidate(19, &Scenario::new("scm").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &tests));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(
        task.pass_to_pass.contains(&"tests/test_calc.py::test_versions".to_string()),
        "the versions are right: {:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

/// Finds the project's package directory on `sys.path`, as pylint's `modutils` does;
/// in a directory without `__init__.py`, so pytest puts that directory (not /testbed)
/// on `sys.path`.
const BY_PATH_TESTS: &str = r#"import os
import sys

from calc import add


def package_dir(name):
    for entry in sys.path:
        candidate = os.path.join(entry, name)
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    raise ImportError(f"{name} is not in a directory on sys.path: {sys.path}")


def test_add():
    assert add(1, 2) == 3


def test_add_negative():
    assert package_dir("calc") == "/testbed/calc"
    assert add(1, -1) == 0
"#;

#[test]
fn a_project_that_finds_its_modules_on_sys_path_gets_labels() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(
        23,
        &Scenario::new("by-path").gold("calc/__init__.py", FIXED_CALC).test("checks/test_paths.py", BY_PATH_TESTS),
    );
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, vec!["checks/test_paths.py::test_add_negative".to_string()]);
    assert!(workspace.containers().is_empty());
}

/// The bug crashes pytest itself before the fix: the project's own reporting hook
/// raises on a failed test, so the session stops with an `INTERNALERROR` and never
/// prints its summary (pytest-dev__pytest-7168's shape). SWE-bench's harness sees no
/// result of that run, so every test that passes after the fix is FAIL_TO_PASS, and
/// the row says which of them had no result before.
#[test]
fn tests_of_a_session_that_crashed_before_the_fix_are_fail_to_pass_and_said_to_have_no_result() {
    let workspace = Workspace::with_docker();
    let conftest = "def pytest_runtest_logreport(report):\n    if report.when == 'call' and report.failed:\n        raise RuntimeError('the reporter broke on a failure')\n";
    let project = Project::with_files(&[("conftest.py", conftest)]);
    let tests = format!("{}\n\ndef test_add_later():\n    assert add(2, 2) == 4\n", project::tests_with_regression());
    let candidate = project.candidate(29, &Scenario::fixing_add("crashing").test("tests/test_calc.py", &tests));
    let task = workspace.labelled_alone(&project, &candidate);
    let all = [
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_add_later",
        ADD_NEGATIVE,
        "tests/test_calc.py::test_sub",
    ];
    assert_eq!(task.fail_to_pass, names(&all), "a crashed session's passes say nothing");
    for test in ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub", "tests/test_calc.py::test_add_later"] {
        assert!(task.fail_to_pass_no_result_before.contains(&test.to_string()), "{test}: {task:?}");
    }
    assert!(workspace.containers().is_empty());
}

#[test]
fn an_optional_test_dependency_named_only_in_tox_deps_is_installed() {
    let workspace = Workspace::with_docker();
    // `toolz` is named only in tox's deps; `pytest<3` there cannot join this
    // environment and is skipped without failing the build.
    let project = Project::with_files(&[(
        "tox.ini",
        "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    toolz\n    pytest<3\n    -r{toxinidir}/requirements-missing.txt\ncommands = pytest\n",
    )]);
    let tests = format!("import pytest\n\ntoolz = pytest.importorskip('toolz')\n{}", project::tests_with_regression());
    let candidate = project.candidate(
        24,
        &Scenario::new("optional").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &tests),
    );
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(workspace.containers().is_empty());
}

/// An optional test dependency that raises on import, not with an `ImportError`
/// (PyPI's `iris` is a placeholder that raises a RuntimeError; so does `eccodes`
/// without its C library): it is removed, so that `importorskip` skips its tests
/// instead of every test file that tries it failing to collect.
#[test]
fn an_optional_test_dependency_that_raises_on_import_is_removed() {
    let workspace = Workspace::with_docker();
    let project = Project::with_files(&[(
        "tox.ini",
        "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    iris\ncommands = pytest\n",
    )]);
    let tests = format!("import pytest\n\niris = pytest.importorskip('iris')\n{}", project::tests_with_regression());
    let candidate = project.candidate(27, &Scenario::fixing_add("raising-optional").test("tests/test_iris.py", &tests));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(task.environment_rung, Some(swe_harvest::model::Rung::Dated), "no climb for an optional dependency");
    assert!(workspace.containers().is_empty());
}

/// An optional test dependency with no wheel for the runtime at the environment's
/// date (ephem 4.1.4 of December 2022 was an sdist alone until its wheels for Python
/// 3.11 came in April 2023): it comes from a newer wheel that fits what is installed,
/// and is not built from source.
#[test]
fn an_optional_test_dependency_with_no_wheel_of_its_date_comes_from_a_newer_wheel() {
    let workspace = Workspace::with_docker();
    // A commit of its own, so that its environment is built now and the build logged.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let project = Project::dated_with_files(
        "2023-01-15T12:00:00+00:00",
        &[(
            "tox.ini",
            &format!("# {nonce}\n[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    ephem\ncommands = pytest\n"),
        )],
    );
    let uses_ephem = "import pytest\n\nephem = pytest.importorskip('ephem')\n\n\n\
        def test_ephem_dates():\n    assert str(ephem.Date('2023/1/15')) == '2023/1/15 00:00:00'\n";
    let candidate =
        project.candidate(74, &Scenario::fixing_add("optional-wheel").test("tests/test_ephem.py", uses_ephem));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    let logs = workspace.build_logs();
    assert!(
        logs.contains(
            "swe-harvest: optional test dependency ephem: no wheel of the environment's date; trying newer wheels"
        ),
        "{logs}"
    );
    assert!(!logs.contains("Building ephem"), "not built from source: {logs}");
    assert!(
        task.pass_to_pass.contains(&"tests/test_ephem.py::test_ephem_dates".to_string()),
        "the optional dependency is installed: {:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

/// An optional test dependency that requires a newer release of the project itself
/// (cytoolz requires toolz 0.8 or later; this project is toolz 0.1.0, as pvfactors
/// 1.5.2 requires a newer pvlib than pvlib-python-1154's): it is skipped, and the
/// environment keeps the project's own editable install instead of a release of it.
#[test]
fn an_optional_test_dependency_never_replaces_the_project_with_a_release_of_it() {
    let workspace = Workspace::with_docker();
    let pyproject =
        project::PYPROJECT.replace("name = \"calc\"\nversion = \"1.0.0\"", "name = \"toolz\"\nversion = \"0.1.0\"");
    assert!(pyproject.contains("name = \"toolz\""), "{pyproject}");
    // A commit of its own, so that its environment is built now and the build logged.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let tox = format!("# {nonce}\n[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    cytoolz\ncommands = pytest\n");
    let project =
        Project::dated_with_files("2023-01-15T12:00:00+00:00", &[("pyproject.toml", &pyproject), ("tox.ini", &tox)]);
    let candidate = project.candidate(76, &Scenario::fixing_add("own-release"));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    let logs = workspace.build_logs();
    assert!(logs.contains("swe-harvest: optional test dependency cytoolz skipped"), "{logs}");
    let image = task.image.expect("the task's environment image");
    let listed = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", &image, "uv", "pip", "list", "--editable", "--format", "freeze"])
        .output()
        .expect("docker runs");
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "toolz==0.1.0", "{logs}");
    assert!(workspace.containers().is_empty());
}

/// A test that resolves its own host name, as Surefire does before it forks
/// (apache/dubbo): the container has no network, but its host name resolves.
#[test]
fn a_test_that_resolves_its_own_host_name_passes_without_a_network() {
    let workspace = Workspace::with_docker();
    let project = Project::with_files(&[]);
    let resolves = "import socket\n\n\ndef test_the_host_name_resolves():\n    \
                    assert socket.getaddrinfo(socket.gethostname(), None)\n";
    let candidate = project.candidate(75, &Scenario::fixing_add("host-name").test("tests/test_host_name.py", resolves));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(
        task.pass_to_pass.contains(&"tests/test_host_name.py::test_the_host_name_resolves".to_string()),
        "{:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

/// A test session that downloads a data file at collection (astropy's `download_file`
/// of a file absent from the mirror, once reported `environment_unusable` with only
/// "no test ran to a verdict"): the drop says that the session needs the network or a
/// file the mirror lacks, with the line that shows it, and no other rung is tried
/// (none has either).
#[test]
fn a_test_session_that_tries_to_download_a_file_is_said_to_need_the_network_or_a_file_the_mirror_lacks() {
    let workspace = Workspace::with_docker();
    let conftest = "import urllib.request\n\n# Test data too large for the repository, fetched at collection.\n\
                    DATA = urllib.request.urlopen(\"https://example.invalid/calc-data.csv\").read()\n";
    let project = Project::with_files(&[("tests/conftest.py", conftest)]);
    let candidate = project.candidate(76, &Scenario::fixing_add("download"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validate(&["--runs", "1"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-76");
    assert_eq!(reason, "environment_unusable", "{detail}");
    assert!(
        detail.starts_with(
            "the test session needs the network or a file the mirror lacks (it tried to download one: \
             `E   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>`"
        ),
        "{detail}"
    );
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let environments: i64 =
        store.connection().query_row("SELECT COUNT(*) FROM environments", [], |row| row.get(0)).unwrap();
    assert_eq!(environments, 1, "no rung after the first: {detail}");
    assert!(workspace.containers().is_empty());
}

/// A test requirement pins a setuptools too old to build an editable project
/// (pylint pins `setuptools==41.6.0` for one of its tests): the project is built in
/// isolation with the build tools it declares, and the pin holds in the environment.
#[test]
fn a_test_requirement_pinning_an_old_setuptools_does_not_break_the_projects_build() {
    let workspace = Workspace::with_docker();
    let pyproject = project::PYPROJECT.replace("setuptools>=61", "setuptools>=64");
    let project = Project::with_files(&[
        ("pyproject.toml", &pyproject),
        ("requirements_test.txt", "setuptools==41.6.0\npytest\n"),
    ]);
    let pinned =
        "import setuptools\n\n\ndef test_the_pinned_setuptools():\n    assert setuptools.__version__ == '41.6.0'\n";
    let candidate = project.candidate(25, &Scenario::fixing_add("old-setuptools").test("tests/test_pinned.py", pinned));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(
        task.pass_to_pass.contains(&"tests/test_pinned.py::test_the_pinned_setuptools".to_string()),
        "the test requirement's pin holds: {:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

/// A test requirement pins a version that was never published (or was yanked, as
/// sqlfluff's `types-pkg-resources`): the first install rung does not resolve, the
/// isolated build of the same requirements is skipped, and the rung without the
/// requirement file installs the project.
#[test]
fn requirements_that_do_not_resolve_skip_the_rung_that_installs_the_same() {
    let workspace = Workspace::with_docker();
    // A commit of its own, so that its environment is built now and the build logged.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let project = Project::with_files(&[("requirements_test.txt", &format!("# {nonce}\npytest==0.0.0\n"))]);
    let candidate = project.candidate(73, &Scenario::fixing_add("unresolvable-pin"));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    let logs = workspace.build_logs();
    assert!(logs.contains("No solution found when resolving dependencies"), "rung 1's own output is kept: {logs}");
    assert!(logs.contains("swe-harvest: install rung 2 skipped: the requirements of rung 1 do not resolve"), "{logs}");
    assert!(logs.contains("swe-harvest: install rung 3\n"), "{logs}");
    assert!(workspace.containers().is_empty());
}

const PINNED_PACKAGING_TEST: &str =
    "import packaging\n\n\ndef test_the_packaging_of_2021():\n    assert packaging.__version__ == '20.9'\n";

/// A project of 2021 whose test requirements pin the `packaging` of its time: today's
/// setuptools (71 and later) builds with the environment's `packaging` and fails
/// (flask of 2021); the build tools are dated too.
#[test]
fn a_project_of_2021_with_the_packaging_of_its_time_builds_with_setuptools_of_its_time() {
    let workspace = Workspace::with_docker();
    let project = Project::dated_with_files(
        "2021-05-03T12:00:00+00:00",
        &[("requirements/tests.txt", "packaging==20.9\npytest\n")],
    );
    let candidate = project
        .candidate(26, &Scenario::fixing_add("dated-packaging").test("tests/test_packaging.py", PINNED_PACKAGING_TEST));
    let task = workspace.labelled_alone(&project, &candidate);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(task.environment_rung, Some(swe_harvest::model::Rung::Dated), "the first rung builds");
    assert!(
        task.pass_to_pass.contains(&"tests/test_packaging.py::test_the_packaging_of_2021".to_string()),
        "the test requirements are installed, not dropped by a later install rung: {:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

/// The calculator as a project of November 2019 that declares Python 3.8 and requires
/// `requires`, with `files` besides, and a candidate that fixes `add`.
fn project_of_2019(requires: &str, files: &[(&str, &str)], number: u64) -> (Project, Candidate) {
    let pyproject = PYPROJECT
        .replace("requires-python = \">=3.9\"", &format!("requires-python = \"{requires}\""))
        .replace("Python :: 3.11", "Python :: 3.8");
    let mut files = files.to_vec();
    files.push(("pyproject.toml", &pyproject));
    let project = Project::dated_with_files("2019-11-20T12:00:00+00:00", &files);
    let candidate = project.candidate(number, &Scenario::fixing_add("python-3.8"));
    (project, candidate)
}

/// A `setup.py` of the time that refuses a Python it does not support (uv installs a
/// local project whatever its `requires-python` says).
const SETUP_BEFORE_3_9: &str = "import sys\nfrom setuptools import setup\n\n\
if sys.version_info >= (3, 9):\n    sys.exit('calc supports Python 3.5 to 3.8')\nsetup()\n";

/// A project of 2019 that supports only Python 3.5-3.8 (`requires-python`, and its
/// `setup.py` refuses newer ones): no base image here provides those (the reachable
/// Debian suites ship 3.9 and newer). It is tried on the nearest runtime there is,
/// 3.9, where it does not install, and is dropped as `runtime_unavailable` naming
/// Python 3.8: in the funnel and `status`, and in a `validate --input` row's diagnosis.
#[test]
fn a_project_that_needs_a_python_no_image_provides_is_dropped_as_runtime_unavailable() {
    let workspace = Workspace::with_docker();
    let (project, candidate) = project_of_2019(">=3.5, <3.9", &[("setup.py", SETUP_BEFORE_3_9)], 19);
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validate(&["--runs", "1"]);
    // Every task lost to its environment: the run says so with exit code 1.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-19");
    assert_eq!(reason, "runtime_unavailable", "{detail}");
    assert!(detail.contains("needs runtime 3.8 (requires-python `>=3.5, <3.9`)"), "{detail}");
    assert!(detail.contains("tried on runtime 3.9"), "the nearest runtime there is: {detail}");
    assert!(detail.contains("validate.base_images.\"3.8\""), "what to do: {detail}");
    let status = workspace.harvest.run(&["status"]);
    assert!(stdout(&status).contains("runtime_unavailable 1"), "{}", stdout(&status));

    // The same task as a published row: its diagnosis names the runtime it needs.
    let row = row_of(&candidate, &[ADD_NEGATIVE], &[]);
    let written = workspace.validate_rows("rows", &[row], &[], &["--runs", "1"]).row();
    let diagnosis = &written["diagnosis"];
    assert_eq!(diagnosis["reason"], "runtime_unavailable", "{diagnosis}");
    assert_eq!(diagnosis["runtime_needed"]["runtime"], "3.8", "{diagnosis}");
    assert_eq!(diagnosis["runtime"], "3.9", "tried on the nearest runtime: {diagnosis}");
    assert!(workspace.containers().is_empty());
}

/// Bring your own runtime: an image configured under a runtime key in
/// `validate.base_images` is one inference chooses among. A project of 2019 that
/// declares Python 3.8 runs on the configured "3.8" image. (The image here is the 3.9
/// base image under another tag, so that the test downloads nothing: it checks that
/// the configured tag is found and taken, not the interpreter inside.)
#[test]
fn a_runtime_brought_as_a_configured_image_is_chosen_by_inference() {
    let workspace = Workspace::with_docker();
    let base_39 = std::env::var(project::TEST_BASE_REPO_VAR)
        .map_or("swe-harvest/base:py3.9".to_string(), |repo| format!("{repo}:py3.9"));
    // A tag of this run's own: an environment image built FROM a tag of an earlier run
    // would be reused (the tag is part of its content key) and leave no build log.
    let nonce = workspace.data_dir().parent().and_then(|dir| dir.file_name()).unwrap().to_string_lossy().to_lowercase();
    let own = format!("swe-harvest-test/own-python:3.8-{}", nonce.trim_start_matches('.'));
    let own = own.as_str();
    let tagged = std::process::Command::new("docker").args(["tag", &base_39, own]).output().unwrap();
    assert!(tagged.status.success(), "docker tag {base_39} {own}: {}", stderr(&tagged));
    let (project, candidate) = project_of_2019(">=3.5", &[], 23);
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let images = format!("{{ \"3.8\" = \"{own}\", \"3.9\" = \"{base_39}\" }}");
    let output = workspace.validate_with_env(&[("SWE_HARVEST_VALIDATE__BASE_IMAGES", &images)], &["--runs", "1"]);
    let _ = std::process::Command::new("docker").args(["rmi", own]).output();
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = workspace.task(&candidate.instance_id);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    let store = Store::open_in(workspace.data_dir()).unwrap();
    let (spec, image): (String, String) = store
        .connection()
        .query_row("SELECT spec, image FROM environments", [], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap();
    let _ = std::process::Command::new("docker").args(["rmi", &image]).output();
    let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    assert_eq!(spec["runtime"], "3.8", "the declared runtime, brought as an image: {spec}");
    let logs = workspace.data_dir().join("logs/build");
    let built_on_own = fs_err::read_dir(&logs)
        .unwrap()
        .flatten()
        .any(|entry| fs_err::read_to_string(entry.path()).unwrap_or_default().contains(&format!("FROM {own}")));
    assert!(built_on_own, "an environment image was built FROM {own} (logs in {})", logs.display());
    assert!(workspace.containers().is_empty());
}

/// A C extension of early 2020 whose only distribution for Python 3.9 back then was
/// its sdist (typed-ast 1.4.1: cp35-cp38 wheels in January 2020, a cp39 wheel only
/// in October 2020): the environment must compile it.
const C_EXTENSION_TEST: &str =
    "from typed_ast import ast3\n\n\ndef test_typed_ast_parses():\n    assert ast3.parse('x: int = 1').body\n";

#[test]
fn a_c_extension_without_a_wheel_for_the_runtime_is_compiled() {
    let workspace = Workspace::with_docker();
    let project = Project::dated_with_files("2020-03-02T12:00:00+00:00", &[("requirements.txt", "typed-ast==1.4.1\n")]);
    let candidate =
        project.candidate(18, &Scenario::fixing_add("c-extension").test("tests/test_typed_ast.py", C_EXTENSION_TEST));
    let task = workspace.labelled_alone(&project, &candidate);
    let spec = workspace.first_environment_spec();
    assert_eq!(spec["runtime"], "3.9", "the runtime without a typed-ast wheel of the date: {spec}");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(
        task.pass_to_pass.contains(&"tests/test_typed_ast.py::test_typed_ast_parses".to_string()),
        "the compiled extension imports and works: {:?}",
        task.pass_to_pass
    );
    assert!(workspace.containers().is_empty());
}

#[test]
fn a_configured_runtime_without_a_base_image_is_not_chosen() {
    let workspace = Workspace::with_docker();
    // The project declares 3.11 and 3.12; 3.12 is configured (an optional runtime of
    // scripts/setup.sh) but its image was never made: 3.11 is taken.
    let pyproject = project::PYPROJECT.replace(
        "\"Programming Language :: Python :: 3.11\"",
        "\"Programming Language :: Python :: 3.11\", \"Programming Language :: Python :: 3.12\"",
    );
    let project = Project::with_files(&[("pyproject.toml", &pyproject)]);
    let candidate = project.candidate(19, &Scenario::fixing_add("absent-runtime"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let base_311 = std::env::var(project::TEST_BASE_REPO_VAR)
        .map_or("swe-harvest/base:py3.11".to_string(), |repo| format!("{repo}:py3.11"));
    let images = format!("{{ \"3.11\" = \"{base_311}\", \"3.12\" = \"swe-harvest-test/absent:py3.12\" }}");
    let output = workspace.validate_with_env(&[("SWE_HARVEST_VALIDATE__BASE_IMAGES", &images)], &["--runs", "1"]);
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = workspace.task("acme__calc-19");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    let spec = workspace.first_environment_spec();
    assert_eq!(spec["runtime"], "3.11", "{spec}");
    assert!(workspace.containers().is_empty());
}

/// Prints 150 MB straight to the container's output once pytest is done (its capture is
/// off by then), in every test phase.
const FLOODING_CONFTEST: &str = "import os\n\n\ndef pytest_unconfigure(config):\n    chunk = b'x' * 1023 + b'\\n'\n    for _ in range(150 * 1024):\n        os.write(1, chunk)\n";

#[test]
fn validate_keeps_a_flood_of_output_within_bounds_and_still_labels() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(14, &Scenario::fixing_add("flood").test("tests/conftest.py", FLOODING_CONFTEST));
    workspace.seeded(&project, std::slice::from_ref(&candidate));

    workspace.validated(&["--runs", "1"]);
    let task = workspace.task("acme__calc-14");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    // 300 MB were printed; the log keeps each step's head and tail and says what was cut.
    let log = workspace.data_dir().join("logs/validate/acme__calc-14/run-1.log");
    let size = fs_err::metadata(&log).unwrap().len();
    assert!(size < 16 << 20, "the run log has {size} bytes");
    let text = fs_err::read_to_string(&log).unwrap();
    assert!(text.contains("bytes of this step's output were cut here"), "the cut is said in the log");
    assert!(workspace.containers().is_empty());
}

#[test]
fn validate_input_rows_are_written_back_with_fresh_labels_and_compared() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(21, &Scenario::fixing_add("fix"));
    project.mirror_into(workspace.data_dir());
    // A row as published elsewhere: one FAIL_TO_PASS test right, one PASS_TO_PASS missing, one wrong extra.
    let mut row =
        row_of(&candidate, &[ADD_NEGATIVE], &["tests/test_calc.py::test_add", "tests/test_calc.py::test_gone"]);
    row["extra_column"] = "kept".into();
    let mut wrong = row.clone();
    wrong["instance_id"] = "acme__calc-22".into();
    wrong["FAIL_TO_PASS"] = "[\"tests/test_calc.py::test_sub\"]".into();

    let run = workspace.validate_rows("rows", &[row, wrong], &[], &["--compare", "--runs", "2"]).succeeded();
    let compare = stdout(&run.output);
    let same = compare.lines().find(|line| line.starts_with("acme__calc-21\t")).unwrap();
    assert!(same.contains("FAIL_TO_PASS same") && same.contains("PASS_TO_PASS recall 1/2"), "{compare}");
    let differs = compare.lines().find(|line| line.starts_with("acme__calc-22\t")).unwrap();
    assert!(
        differs.contains("missing [\"tests/test_calc.py::test_sub\" (passes before the gold patch here)]"),
        "{compare}"
    );
    assert!(differs.contains("extra [\"tests/test_calc.py::test_add_negative\"]"), "{compare}");
    assert!(compare.contains("exactly the published list: 1 of 2 rows"), "{compare}");

    let written = run.written();
    assert_eq!(written.len(), 2);
    assert_eq!(written[0]["FAIL_TO_PASS"], "[\"tests/test_calc.py::test_add_negative\"]");
    assert_eq!(written[0]["PASS_TO_PASS"], "[\"tests/test_calc.py::test_add\",\"tests/test_calc.py::test_sub\"]");
    assert_eq!(written[0]["extra_column"], "kept");
    assert_eq!(written[0]["diagnosis"]["status"], "labelled");
    assert_eq!(written[0]["validation_runs"], 2);
    // Rows from a file are not candidates of the store.
    let store = Store::open_in(workspace.data_dir()).unwrap();
    assert!(swe_harvest::store::candidates::candidates(store.connection(), &[]).unwrap().is_empty());
    assert!(workspace.containers().is_empty());
}

#[test]
fn validate_input_runs_afresh_a_known_instance_id_whose_gold_patch_changed() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let fixing = project.candidate(31, &Scenario::fixing_add("fix"));
    let not_fixing = project.candidate(
        31,
        &Scenario::new("nofix")
            .gold("calc/__init__.py", &format!("{}# not a fix\n", project::BUGGY_CALC))
            .test("tests/test_calc.py", &project::tests_with_regression()),
    );
    project.mirror_into(workspace.data_dir());
    let validate_row = |candidate: &Candidate, name: &str| -> serde_json::Value {
        workspace.validate_rows(name, &[row_of(candidate, &[], &[])], &[], &["--runs", "1"]).succeeded().row()
    };
    let first = validate_row(&fixing, "fixing");
    assert_eq!(first["diagnosis"]["status"], "labelled", "{first}");
    assert_eq!(first["FAIL_TO_PASS"], "[\"tests/test_calc.py::test_add_negative\"]");
    // The same id with a gold patch that fixes nothing: its runs are not the stored ones.
    let second = validate_row(&not_fixing, "not_fixing");
    assert_eq!(
        second["diagnosis"]["status"], "dropped",
        "the stored labels of the other content were reused: {second}"
    );
    assert_eq!(second["diagnosis"]["reason"], "no_fail_to_pass", "{second}");
    // And the first content again finds no runs of its own (they were replaced): it runs afresh too.
    let again = validate_row(&fixing, "fixing_again");
    assert_eq!(again["FAIL_TO_PASS"], "[\"tests/test_calc.py::test_add_negative\"]", "{again}");
    assert!(workspace.containers().is_empty());
}

#[test]
fn validate_without_a_docker_engine_says_how_to_get_one() {
    let workspace = Workspace::without_docker();
    let project = Project::new();
    let candidate = project.candidate(31, &Scenario::new("fix").gold("calc/__init__.py", FIXED_CALC));
    workspace.stored(&[candidate]);
    let output = workspace.validate_with_env(&[NO_DOCKER_ENGINE], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("scripts/setup.sh"), "{}", stderr(&output));
}

#[test]
fn validate_input_refuses_an_instance_id_that_would_write_outside_the_data_dir() {
    let workspace = Workspace::without_docker();
    let project = Project::new();
    let candidate = project.candidate(31, &Scenario::new("fix").gold("calc/__init__.py", FIXED_CALC));
    let outside = tempfile::tempdir().unwrap();
    let escape = format!("../../../../../../../..{}/x", outside.path().display());
    for bad in [escape.as_str(), "/tmp/swe-harvest-absolute-id"] {
        let mut row = row_of(&candidate, &[], &[]);
        row["instance_id"] = bad.into();
        let RowsRun { output, out } = workspace.validate_rows("rows", &[row], &[NO_DOCKER_ENGINE], &[]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(
            message.contains("line 1 of") && message.contains(&format!("invalid instance_id `{bad}`")),
            "{message}"
        );
        assert!(message.contains("allowed: 1-200 characters of A-Z, a-z, 0-9"), "{message}");
        assert!(!out.exists());
    }
    assert_eq!(fs_err::read_dir(outside.path()).unwrap().count(), 0, "nothing was written outside the data dir");
    assert!(!std::path::Path::new("/tmp/swe-harvest-absolute-id").exists());
}

#[test]
fn validate_warns_about_each_repo_and_instance_that_selects_nothing() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(31, &Scenario::new("fix").gold("calc/__init__.py", FIXED_CALC));
    workspace.stored(&[candidate]);
    let output = workspace.validate(&["--repo", "acme/other", "--instance", "acme__calc-99"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("0 selected"), "{message}");
    assert!(message.contains("--repo acme/other matches no candidate in the store"), "{message}");
    assert!(message.contains("--instance acme__calc-99 matches no candidate"), "{message}");
    // A selection that matches says nothing of the kind.
    let output = workspace.validate(&["--instance", "acme__calc-31", "--runs", "1"]);
    assert!(!stderr(&output).contains("matches no candidate"), "{}", stderr(&output));
}

#[test]
fn validate_input_drops_a_row_whose_base_commit_is_not_in_the_mirror_as_a_data_error() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(31, &Scenario::fixing_add("fix"));
    project.mirror_into(workspace.data_dir());
    let mut row = row_of(&candidate, &[], &[]);
    row["base_commit"] = "0123456789abcdef0123456789abcdef01234567".into();
    let run = workspace.validate_rows("rows", &[row], &[], &[]);
    assert_eq!(run.output.status.code(), Some(0), "a data drop, not a machinery failure: {}", stderr(&run.output));
    let written = run.row();
    assert_eq!(written["diagnosis"]["reason"], "base_commit_missing", "{written}");
    assert!(written["diagnosis"]["detail"].as_str().unwrap().contains("0123456789abcdef"), "{written}");
    assert!(workspace.containers().is_empty());
}

#[test]
fn validate_interrupted_by_ctrl_c_removes_its_containers_and_resumes_at_the_missing_attempt() {
    interrupted_validate_removes_its_containers_and_resumes_at_the_missing_attempt("INT");
}

/// Regression: SIGTERM (what `timeout` and schedulers send) killed validate with 143
/// and left its containers running until the next run.
#[test]
fn validate_stopped_by_sigterm_removes_its_containers_and_resumes_at_the_missing_attempt() {
    interrupted_validate_removes_its_containers_and_resumes_at_the_missing_attempt("TERM");
}

fn interrupted_validate_removes_its_containers_and_resumes_at_the_missing_attempt(signal: &str) {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let slow = "import time\n\n\ndef test_slow():\n    time.sleep(6)\n";
    let candidate = project.candidate(41, &Scenario::fixing_add("slow").test("tests/test_slow.py", slow));
    workspace.seeded(&project, &[candidate]);

    let mut command = workspace.harvest.validate_command();
    let mut child = command
        .args(["validate", "--runs", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first attempt is stored and the second one's container runs.
    let stored_runs = || {
        let store = Store::open_in(workspace.data_dir()).unwrap();
        swe_harvest::store::validation::runs(store.connection(), "acme__calc-41").unwrap().len()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while stored_runs() != 2 || workspace.containers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the first attempt never finished");
        assert!(child.try_wait().unwrap().is_none(), "validate ended before it could be interrupted");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let first_log = workspace.data_dir().join("logs/validate/acme__calc-41/run-1.log");
    let first_log_time = fs_err::metadata(&first_log).unwrap().modified().unwrap();
    let interrupted =
        std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "an interrupted run is not a success: {}", stderr(&output));
    assert!(stderr(&output).contains("interrupted"), "{}", stderr(&output));
    assert!(workspace.containers().is_empty(), "SIG{signal} removes the running container: {}", stderr(&output));
    assert_eq!(stored_runs(), 2, "the unfinished attempt left nothing behind");

    let resumed = workspace.validate(&["--runs", "2"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let task = &tasks(&workspace.harvest)["acme__calc-41"];
    assert_eq!(task.validation_runs, 2);
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(task.pass_to_pass.contains(&"tests/test_slow.py::test_slow".to_string()));
    assert_eq!(stored_runs(), 4);
    assert_eq!(
        fs_err::metadata(&first_log).unwrap().modified().unwrap(),
        first_log_time,
        "the finished first attempt was not run again"
    );
}

/// Issue 66: `validate --input` stopped during an environment build left the build's
/// proxy running, its network, and the exited container of the network's probe until
/// the next run swept them. Stopped by SIGTERM, then by Ctrl-C, before the proxy
/// starts, it leaves nothing of either run on the engine, and the next run builds the
/// environment and labels the row.
#[test]
fn validate_input_stopped_by_sigterm_or_ctrl_c_before_its_build_proxy_starts_leaves_nothing_and_resumes() {
    stopped_build::stopped_before_the_proxy_starts(LOCAL, &|_| {});
}

/// Issue 66, with the build's install step running: the step's container, the proxy
/// and the network go with the run.
#[test]
fn validate_input_stopped_by_sigterm_or_ctrl_c_while_its_environment_builds_leaves_nothing_and_resumes() {
    stopped_build::stopped_while_the_install_step_runs(LOCAL, &|_| {});
}

/// Issue 66, with the install step's command done and its container being committed.
#[test]
fn validate_input_stopped_by_sigterm_or_ctrl_c_while_its_environment_is_committed_leaves_nothing_and_resumes() {
    stopped_build::stopped_while_the_install_step_is_committed(LOCAL, &|_| {});
}

/// SIGKILL cannot be caught: a run killed while its environment builds leaves the
/// build's proxy and network (the engine takes the build's step down itself once the
/// run's connection closes), and the next run sweeps them as it starts, then builds the
/// environment and labels the row.
#[test]
fn validate_input_killed_while_its_environment_builds_leaves_its_proxy_and_network_to_the_next_runs_sweep() {
    let (workspace, row) = a_row_with_a_cold_environment(&slow_setup_py(30, 0));
    let killed = stop_rows_run(&workspace, &row, BuildPoint::WhileTheInstallStepRuns, StopSignal::Kill, LOCAL);
    assert!(killed.proxy_and_network_left(), "SIGKILL left the build's proxy and network: {killed:?}");
    resumes_and_labels(&workspace, &row, LOCAL);
    killed.assert_nothing_left();
}

/// Regression: a second `validate` on the same data dir swept the first one's live
/// containers, whose runs were then stored as `install_failed` drops. Now the second
/// one (with or without `--input`) is refused with the first one's PID before it
/// touches anything, the first one's containers survive, and `status` reads meanwhile.
#[test]
fn a_second_validate_is_refused_with_the_holders_pid_and_the_first_ones_containers_survive() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let slow = "import time\n\n\ndef test_slow():\n    time.sleep(20)\n";
    let candidate = project.candidate(51, &Scenario::fixing_add("slow").test("tests/test_slow.py", slow));
    workspace.seeded(&project, &[candidate]);

    let mut command = workspace.harvest.validate_command();
    let first = command
        .args(["validate", "--runs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = KillOnDrop(Some(first));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while workspace.containers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the first validate never started a container");
        assert!(first.child().try_wait().unwrap().is_none(), "the first validate ended before its container ran");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let running = workspace.containers();

    let holder = format!("PID {}", first.child().id());
    let second = workspace.validate(&["--runs", "1"]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(stderr(&second).contains(&holder), "the refusal names the holder: {}", stderr(&second));
    let rows = workspace.path("rows.jsonl");
    let out = workspace.path("out.jsonl");
    let with_input = workspace.validate(&["--input", rows.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(with_input.status.code(), Some(2), "{}", stderr(&with_input));
    assert!(stderr(&with_input).contains(&holder), "{}", stderr(&with_input));
    let status = workspace.harvest.run(&["status"]);
    assert!(status.status.success(), "status reads while validate runs: {}", stderr(&status));

    let still_there = workspace.containers();
    for id in &running {
        assert!(still_there.contains(id), "the first validate's container {id} survived the second one");
    }
    let output = first.wait_with_output();
    assert!(output.status.success(), "the first validate was not disturbed: {}", stderr(&output));
    let task = &tasks(&workspace.harvest)["acme__calc-51"];
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
    assert!(workspace.drops().is_empty(), "{:?}", workspace.drops());
}

/// A validate killed with SIGKILL leaves its container running (nothing of it can
/// clean up); the next validate gets the data dir (the kernel released the lock),
/// sweeps that container because its run is gone, and labels the task.
#[test]
fn after_a_validate_is_killed_the_next_one_owns_the_data_dir_and_sweeps_its_leftover_container() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let slow = "import time\n\n\ndef test_slow():\n    time.sleep(3)\n";
    let candidate = project.candidate(61, &Scenario::fixing_add("slow").test("tests/test_slow.py", slow));
    workspace.seeded(&project, &[candidate]);

    let mut command = workspace.harvest.validate_command();
    let mut first = KillOnDrop(Some(
        command
            .args(["validate", "--runs", "1"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while workspace.containers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the first validate never started a container");
        assert!(first.child().try_wait().unwrap().is_none(), "the first validate ended before its container ran");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let leftover = workspace.containers();
    first.child().kill().unwrap(); // SIGKILL: no cleanup at all.
    first.child().wait().unwrap();
    assert_eq!(workspace.containers(), leftover, "a killed validate leaves its container behind");

    let second = workspace.validate(&["--runs", "1"]);
    assert!(second.status.success(), "the next validate owns the data dir: {}", stderr(&second));
    assert!(workspace.containers().is_empty(), "the killed run's container was swept: {}", stderr(&second));
    let task = &tasks(&workspace.harvest)["acme__calc-61"];
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
}

/// Kills the child when dropped (a failing assertion must not leave it running).
struct KillOnDrop(Option<std::process::Child>);

impl KillOnDrop {
    fn child(&mut self) -> &mut std::process::Child {
        self.0.as_mut().expect("not waited for yet")
    }

    fn wait_with_output(mut self) -> std::process::Output {
        self.0.take().expect("not waited for yet").wait_with_output().unwrap()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn concurrent_workers_build_a_new_environment_image_once() {
    let workspace = Workspace::with_docker();
    // A base commit dated now: an image no earlier run has built.
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S+00:00").to_string();
    let project = Project::dated(&now);
    let candidates: Vec<_> = (51..54).map(|number| project.candidate(number, &Scenario::fixing_add("fix"))).collect();
    workspace.seeded(&project, &candidates);

    let output = workspace.validate(&["--runs", "1", "--workers", "3"]);
    let tasks = tasks(&workspace.harvest);
    let images: std::collections::BTreeSet<String> = tasks.values().filter_map(|task| task.image.clone()).collect();
    for image in &images {
        let _ = std::process::Command::new("docker").args(["rmi", "-f", image]).output();
    }
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    assert_eq!(tasks.len(), 3);
    assert_eq!(images.len(), 1, "three tasks share one environment: {images:?}");
    assert!(stderr(&output).contains("environment images: 1 built"), "{}", stderr(&output));
    // Each task's summary line counts the new image's build (or the wait for it) apart
    // from its tests, within its total.
    for instance in tasks.keys() {
        let [tests, building, total] = task_seconds(&stderr(&output), instance);
        assert!(building > 0.5, "{instance}: {building}s building images, for an image new to the engine");
        assert!(tests > 0.0 && building + tests <= total, "{instance}: {tests}s + {building}s within {total}s");
    }
    let build_logs = fs_err::read_dir(workspace.data_dir().join("logs/build")).unwrap().count();
    assert_eq!(build_logs, 1, "one build, not one per worker");
    // An image several tasks share is checked once, by a check run of its own.
    assert_eq!(logs_in(&workspace.data_dir().join("logs/check"), ""), 1, "one check of the shared image");
    assert!(workspace.containers().is_empty());
}

/// The check of an environment that serves one task is that task's first run (a check
/// run of its own cost a container for nothing the runs do not show): no check run,
/// and the task's runs label it.
#[test]
fn a_lone_tasks_environment_is_checked_by_its_first_run_not_a_check_run() {
    let workspace = Workspace::with_docker();
    let project = Project::dated("2024-06-03T12:00:00+00:00");
    let candidate = project.candidate(55, &Scenario::fixing_add("fix"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validated(&["--runs", "2"]);
    let task = workspace.task("acme__calc-55");
    assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]), "{}", stderr(&output));
    assert!(!workspace.data_dir().join("logs/check").exists(), "a check run for a lone task");
    let runs = logs_in(&workspace.data_dir().join("logs/validate/acme__calc-55"), "run-");
    assert_eq!(runs, 2, "both runs, the first of them the check");
    assert!(workspace.containers().is_empty());
}

/// How many `.log` files whose names start with `prefix` are in `dir` (beside the
/// runs' reports).
fn logs_in(dir: &std::path::Path, prefix: &str) -> usize {
    fs_err::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(prefix) && name.ends_with(".log"))
        .count()
}

#[test]
fn the_documented_repository_config_and_every_shipped_one_parse() {
    // No repository config ships today: inference matches what the SWE-bench
    // repositories' configs said (figures in the closing note of issue 13). The format
    // documented in configs/repos/README.md must stay what the loader reads.
    let root = crate::support::project_root();
    let readme = fs_err::read_to_string(root.join("configs/repos/README.md")).unwrap();
    let example = readme.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).expect("a toml example");
    let config: swe_harvest::ecosystem::repo_config::RepoConfig = toml::from_str(example).unwrap();
    let entry = swe_harvest::validate::spec::config_entry(&config, "2.3").expect("the example's entry");
    assert_eq!(entry.runtime.as_deref(), Some("3.9"));
    assert!(swe_harvest::validate::spec::config_entry(&config, "9.9").is_none());
    assert_eq!(config.test_framework, Some(swe_harvest::ecosystem::TestFramework::Unittest));
    for entry in fs_err::read_dir(root.join("configs/repos")).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_name().and_then(|name| name.to_str()).and_then(|name| name.strip_suffix(".toml"))
        else {
            continue;
        };
        let repo: swe_harvest::model::RepoSlug = stem.replacen("__", "/", 1).parse().unwrap();
        swe_harvest::ecosystem::repo_config::RepoConfig::read(&root.join("configs/repos"), &repo)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    }
}

#[test]
fn candidates_without_a_mirror_or_an_inferable_environment_are_dropped_with_the_reason() {
    let workspace = Workspace::with_docker();
    // Its build lives in a folder (as micropython's ports do), which is not inferred.
    let project = Project::without_packaging_with(&[("port/Makefile", "all:\n\ttrue\n")]);
    let candidate = project.candidate(61, &Scenario::fixing_add("fix"));
    workspace.stored(&[candidate]);

    let output = workspace.validate(&["--runs", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-61");
    assert_eq!(reason, "no_mirror", "{detail}");
    assert!(detail.contains("swe-harvest mirror --repo acme/calc"), "{detail}");

    project.mirror_into(workspace.data_dir());
    let output = workspace.validate(&["--runs", "1", "--instance", "acme__calc-61"]);
    assert_eq!(output.status.code(), Some(1), "every task lost to its environment: {}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-61");
    assert_eq!(reason, "environment_inference_failed", "{detail}");
    assert!(detail.contains("configs/repos/<owner>__<name>.toml"), "says what to do: {detail}");
    // Not the fallback's "no Python project file": what every language looks for, and
    // where the project's build file is.
    assert!(detail.starts_with("no supported language recognises the project"), "{detail}");
    assert!(detail.contains("Rust: Cargo.toml") && detail.contains("C/C++: configure.ac"), "{detail}");
    assert!(detail.contains("build files below the root: `port/Makefile`"), "{detail}");
    assert!(workspace.containers().is_empty());
}

/// Image ids that `docker images` lists with `args`.
fn docker_image_ids(args: &[&str]) -> Vec<String> {
    let output = std::process::Command::new("docker").arg("images").args(args).output().expect("docker runs");
    String::from_utf8_lossy(&output.stdout).lines().map(String::from).collect()
}

/// The ids that a legacy build log names: of its steps' images (` ---> id`) and of
/// its intermediate containers (` ---> Running in id`).
fn build_log_ids(log: &str) -> (Vec<String>, Vec<String>) {
    let (mut images, mut containers) = (Vec::new(), Vec::new());
    for line in log.lines().map(str::trim) {
        if let Some(id) = line.strip_prefix("---> Running in ") {
            containers.push(id.to_string());
        } else if let Some(id) = line.strip_prefix("---> ") {
            if id.chars().all(|c| c.is_ascii_hexdigit()) {
                images.push(id.to_string());
            }
        }
    }
    (images, containers)
}

/// Regression (issue 13): a failed environment build was diagnosed by the engine's
/// message, which repeats the RUN command ("The command '/bin/sh -c ...' returned a
/// non-zero code: 1"), left the image of its last finished step dangling, and a run
/// whose every task was lost to its environment exited 0. Now the drop's detail, the
/// `--input` row's diagnosis and `status` carry uv's own error, the failed build
/// leaves no dangling image and no container, and validate exits 1.
#[test]
fn a_failed_environment_build_is_diagnosed_by_its_own_error_leaves_nothing_behind_and_exits_1() {
    let workspace = Workspace::with_docker();
    // A version of a real package that does not exist: uv cannot resolve it.
    let pyproject =
        project::PYPROJECT.replace("requires-python", "dependencies = [\"iniconfig==99.0.0\"]\nrequires-python");
    let project = Project::with_files(&[("pyproject.toml", &pyproject)]);
    let candidate = project.candidate(71, &Scenario::fixing_add("fix"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let dangling_before = docker_image_ids(&["-a", "-q", "--no-trunc", "--filter", "dangling=true"]);

    let output = workspace.validate(&["--runs", "1"]);
    assert_eq!(output.status.code(), Some(1), "every task lost to its environment: {}", stderr(&output));
    assert!(stderr(&output).contains("every task was lost to its environment"), "{}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-71");
    assert_eq!(reason, "environment_build_failed", "{detail}");
    let uv_said = |text: &str| text.contains("No solution found") || text.contains("no versions of");
    assert!(uv_said(&detail) && detail.contains("iniconfig"), "uv's own error: {detail}");
    assert!(!detail.contains("/bin/sh -c"), "not the RUN command: {detail}");

    // Every rung of the ladder was tried (dated, the neighbouring runtime, runner pins),
    // and each says how it failed.
    assert!(detail.contains("rung dated (Python 3.11)") && detail.contains("rung runner-pins"), "{detail}");

    // Nothing of the failed builds is left: no dangling image of their steps, no container.
    let build_logs: Vec<_> = fs_err::read_dir(workspace.data_dir().join("logs/build")).unwrap().flatten().collect();
    assert_eq!(build_logs.len(), 3, "one build per rung: {build_logs:?}");
    let dangling_after = docker_image_ids(&["-a", "-q", "--no-trunc", "--filter", "dangling=true"]);
    let all_containers = std::process::Command::new("docker").args(["ps", "-aq", "--no-trunc"]).output().unwrap();
    let all_containers = String::from_utf8_lossy(&all_containers.stdout).into_owned();
    for build_log in &build_logs {
        let log = fs_err::read_to_string(build_log.path()).unwrap();
        let (images, containers) = build_log_ids(&log);
        assert!(!images.is_empty() && !containers.is_empty(), "a legacy build log names its steps: {log}");
        let last = images.last().unwrap();
        let present = std::process::Command::new("docker").args(["image", "inspect", last]).output().unwrap();
        assert!(!present.status.success(), "the image of the last finished step {last} is gone");
        let new_of_this_build: Vec<&String> = dangling_after
            .iter()
            .filter(|id| !dangling_before.contains(id))
            .filter(|id| images.iter().any(|short| id.trim_start_matches("sha256:").starts_with(short.as_str())))
            .collect();
        assert!(new_of_this_build.is_empty(), "dangling images left by the failed build: {new_of_this_build:?}");
        for id in &containers {
            assert!(!all_containers.lines().any(|line| line.starts_with(id.as_str())), "container {id} left");
        }
    }

    // `status` shows the diagnosis.
    let status = workspace.harvest.run(&["status"]);
    assert!(status.status.success(), "{}", stderr(&status));
    let table = stdout(&status);
    assert!(table.contains("Environments that failed to build (3)") && uv_said(&table), "{table}");
    assert!(!table.contains("/bin/sh -c"), "{table}");
    let json: serde_json::Value =
        serde_json::from_slice(&workspace.harvest.run(&["status", "--json"]).stdout).expect("status --json is JSON");
    assert!(uv_said(json["failed_environments"][0]["detail"].as_str().unwrap()), "{json}");

    // The same row from a file: its diagnosis has it too, and the exit code is 1 again.
    let run = workspace.validate_rows("rows", &[row_of(&candidate, &[], &[])], &[], &[]);
    assert_eq!(run.output.status.code(), Some(1), "{}", stderr(&run.output));
    let written = run.row();
    assert_eq!(written["diagnosis"]["reason"], "environment_build_failed", "{written}");
    let detail = written["diagnosis"]["detail"].as_str().unwrap();
    assert!(uv_said(detail) && !detail.contains("/bin/sh -c"), "{written}");
    assert!(workspace.containers().is_empty());
}

/// A build that runs out of time says what its step printed last, and leaves no
/// dangling image and no container either.
#[test]
fn a_timed_out_environment_build_says_its_last_output_and_leaves_nothing_behind() {
    let workspace = Workspace::with_docker();
    // A file of its own: every step after the repository's copy is this test's alone.
    let project = Project::with_files(&[("TIMEOUT.txt", "a build that runs out of time\n")]);
    let candidate = project.candidate(72, &Scenario::fixing_add("fix"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let config = workspace.with_repo_config(
        "[[environment]]\nversions = [\"*\"]\nruntime = \"3.11\"\n\
         install = [\"echo resolving the slow dependency\", \"sleep 600\"]\n\
         test_command = \"pytest -rA\"\n",
    );
    let output = workspace.validate_with_env(
        &[("SWE_HARVEST_CONFIG", config.to_str().unwrap()), ("SWE_HARVEST_VALIDATE__BUILD_TIMEOUT_SECS", "60")],
        &["--runs", "1"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let (reason, detail) = workspace.dropped("acme__calc-72");
    assert_eq!(reason, "environment_build_timeout", "{detail}");
    // The step's last lines, ending with the one it printed before it hung.
    assert!(
        detail.contains("its last output: ") && detail.contains("resolving the slow dependency; the build log is"),
        "{detail}"
    );

    let build_logs: Vec<_> = fs_err::read_dir(workspace.data_dir().join("logs/build")).unwrap().flatten().collect();
    let log = fs_err::read_to_string(build_logs[0].path()).unwrap();
    let (images, containers) = build_log_ids(&log);
    let last = images.last().unwrap();
    let gone = |id: &str, kind: &str| {
        !std::process::Command::new("docker").args([kind, "inspect", id]).output().unwrap().status.success()
    };
    assert!(gone(last, "image"), "the image of the last finished step {last} is gone: {log}");
    for id in &containers {
        assert!(gone(id, "container"), "the container of the step that ran out of time {id} is gone");
    }
    assert!(workspace.containers().is_empty());
}

/// A task's seconds from validate's summary line
/// `ID: Xs in containers' tests, Ys building images, Zs in total`: `[X, Y, Z]`.
fn task_seconds(log: &str, instance: &str) -> [f64; 3] {
    let line = log
        .lines()
        .find(|line| line.trim_start().starts_with(&format!("{instance}: ")) && line.contains("s building images"))
        .unwrap_or_else(|| panic!("no summary line of {instance} in:\n{log}"));
    let seconds = |label: &str| -> f64 {
        let before = line.split(label).next().unwrap_or_default();
        before.rsplit(' ').next().unwrap_or_default().parse().unwrap_or_else(|_| panic!("no seconds in `{line}`"))
    };
    [seconds("s in containers' tests"), seconds("s building images"), seconds("s in total")]
}

/// A Node project for `validate --plan`: `engines.node` allows every Node image, so
/// inference alone takes the oldest; `workflow` (when given) is its CI.
fn node_project_for_plan(workflow: Option<&str>) -> (Project, Candidate) {
    const PACKAGE_JSON: &str = r#"{"name": "calc", "version": "1.0.0", "engines": {"node": ">=16"},
  "scripts": {"test": "mocha --exit"}, "devDependencies": {"mocha": "^10.2.0"}}
"#;
    const CALC: &str = "exports.add = (a, b) => (b < 0 ? a : a + b);\n";
    const TESTS: &str = "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\n\
                         describe('add', () => {\n  it('adds', () => assert.strictEqual(add(1, 2), 3));\n});\n";
    let mut files = vec![("package.json", PACKAGE_JSON), ("lib/calc.js", CALC), ("test/calc.test.js", TESTS)];
    if let Some(workflow) = workflow {
        files.push((".github/workflows/ci.yml", workflow));
    }
    let project = Project::of_files(&files);
    let regression = format!(
        "{TESTS}\ndescribe('negative', () => {{\n  it('adds', () => assert.strictEqual(add(1, -1), 0));\n}});\n"
    );
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("lib/calc.js", "exports.add = (a, b) => a + b;\n")
            .test("test/calc.test.js", &regression),
    );
    (project, candidate)
}

/// No Docker engine, and the Node images inference chooses among (whatever base
/// images the test machine gives validate).
const PLAN_ENV: [(&str, &str); 2] = [
    NO_DOCKER_ENGINE,
    ("SWE_HARVEST_VALIDATE__BASE_IMAGES", r#"{ "node18" = "absent/node:18", "node20" = "absent/node:20" }"#),
];

/// `validate --plan` on `rows` in a data dir holding `project`'s mirror, with
/// [`PLAN_ENV`]: it must succeed; the plans written and what it said on stderr.
fn planned(workspace: &Workspace, project: &Project, rows: &[serde_json::Value]) -> (Vec<serde_json::Value>, String) {
    project.mirror_into(workspace.data_dir());
    let run = workspace.validate_rows("rows", rows, &PLAN_ENV, &["--plan"]).succeeded();
    (run.written(), stderr(&run.output))
}

/// `validate --plan` says, without a Docker engine, what validate would start from:
/// the runtime, the test command and the test files, and what came from CI (a
/// workflow that tests Node 20 moves a project whose `engines.node` is `>=16` from
/// the oldest image to Node 20); a row whose repository has no mirror gets validate's
/// reason instead of a crash; two plans of the same rows are the same bytes.
#[test]
fn validate_plan_says_the_runtime_and_test_command_ci_evidence_chose_without_docker() {
    let plain = Workspace::without_docker();
    let (project, candidate) = node_project_for_plan(None);
    let (plans, _) = planned(&plain, &project, &[row_of(&candidate, &[], &[])]);
    assert_eq!(plans[0]["runtime"], "node18", "{:#}", plans[0]);
    assert!(plans[0]["ci"].as_array().unwrap().is_empty(), "{:#}", plans[0]);

    let workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      \
                    - uses: actions/setup-node@v4\n        with:\n          node-version: 20\n      - run: npm ci\n      - run: npm test\n";
    let workspace = Workspace::without_docker();
    let (project, candidate) = node_project_for_plan(Some(workflow));
    let mut elsewhere = row_of(&candidate, &[], &[]);
    elsewhere["repo"] = "acme/elsewhere".into();
    elsewhere["instance_id"] = "acme__elsewhere-1".into();
    let rows = [row_of(&candidate, &[], &[]), elsewhere];
    let (plans, said) = planned(&workspace, &project, &rows);
    let plan = &plans[0];
    assert_eq!(plan["instance_id"], "acme__calc-1");
    assert_eq!(plan["ecosystem"], "node", "{plan:#}");
    assert_eq!(plan["runtime"], "node20", "CI's Node 20 within `>=16`: {plan:#}");
    assert!(plan["ci"][0].as_str().unwrap().contains("CI tests Node 20"), "{plan:#}");
    assert!(plan["test_command"].as_str().unwrap().contains("mocha"), "{plan:#}");
    assert_eq!(plan["test_files"], serde_json::json!(["test/calc.test.js"]), "{plan:#}");
    assert_eq!(plan["source"], "inferred");
    assert!(plan["error"].is_null(), "{plan:#}");
    assert_eq!(plans[1]["error"]["reason"], "no_mirror", "{:#}", plans[1]);
    assert!(plans[1]["runtime"].is_null(), "{:#}", plans[1]);
    assert!(said.contains("acme__calc-1: node runtime node20 (inferred, 1 CI note)"), "{said}");
    assert!(said.contains("acme__elsewhere-1: would be dropped as no_mirror"), "{said}");

    let out = workspace.path("out/rows.jsonl");
    let first = fs_err::read(&out).unwrap();
    workspace.validate_rows("rows", &rows, &PLAN_ENV, &["--plan"]).succeeded();
    assert_eq!(fs_err::read(&out).unwrap(), first, "a second plan of the same rows differs");
}

/// `validate --plan` of the store's tasks prints the plans on stdout and writes
/// nothing a real validate would take as done: no environment is recorded, the task
/// is not finished, and the real validate that follows validates it; a plan after
/// that says it is finished.
#[test]
fn validate_plan_of_the_stores_tasks_leaves_them_to_the_next_validate() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(1, &Scenario::fixing_add("fix"));
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let plan_of_the_store = || -> serde_json::Value {
        let output = workspace.validate_with_env(&[NO_DOCKER_ENGINE], &["--plan"]);
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_str(stdout(&output).trim()).unwrap()
    };
    let plan = plan_of_the_store();
    assert_eq!(plan["instance_id"], "acme__calc-1");
    assert_eq!(plan["ecosystem"], "python", "{plan:#}");
    assert!(plan["error"].is_null() && plan["runtime"].is_string(), "{plan:#}");
    assert_eq!(plan["test_files"], serde_json::json!(["tests/test_calc.py"]), "{plan:#}");
    assert_eq!(plan["finished"], false, "{plan:#}");

    let store = Store::open_in(workspace.data_dir()).unwrap();
    assert!(swe_harvest::store::validation::finished_instances(store.connection()).unwrap().is_empty());
    let environments: i64 =
        store.connection().query_row("SELECT COUNT(*) FROM environments", [], |row| row.get(0)).unwrap();
    assert_eq!(environments, 0, "a plan records no environment");
    drop(store);

    let output = workspace.validated(&["--runs", "1"]);
    assert!(stderr(&output).contains("1 selected, 0 already finished, 1 labelled"), "{}", stderr(&output));
    assert_eq!(workspace.task("acme__calc-1").fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_eq!(plan_of_the_store()["finished"], true);
    assert!(workspace.containers().is_empty());
}

/// A task whose inference fails gets validate's drop reason and inference's error in
/// its plan, not a crash: a Node project whose `package.json` does not parse.
#[test]
fn validate_plan_gives_a_task_whose_inference_fails_its_error() {
    let workspace = Workspace::without_docker();
    let tests =
        "const assert = require('assert');\n\ndescribe('add', () => {\n  it('adds', () => assert.ok(true));\n});\n";
    let project = Project::of_files(&[("package.json", "{ \"name\": \"calc\", "), ("test/calc.test.js", tests)]);
    let candidate = project.candidate(
        1,
        &Scenario::new("more").gold("lib/calc.js", "exports.add = (a, b) => a + b;\n").test("test/more.test.js", tests),
    );
    let (plans, said) = planned(&workspace, &project, &[row_of(&candidate, &[], &[])]);
    let plan = &plans[0];
    assert_eq!(plan["ecosystem"], "node", "{plan:#}");
    assert_eq!(plan["error"]["reason"], "environment_inference_failed", "{plan:#}");
    assert!(plan["error"]["detail"].as_str().unwrap().contains("package.json"), "{plan:#}");
    assert!(plan["runtime"].is_null() && plan["test_command"].is_null(), "{plan:#}");
    assert!(said.contains("1 would be dropped before any build"), "{said}");
    assert!(said.contains("  acme__calc-1: would be dropped as environment_inference_failed: "), "{said}");
}
