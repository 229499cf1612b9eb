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

use swe_harvest::store::Store;
use swe_harvest::store::coverage::GoldenCoverage;

use crate::support::python_project::{self as project, DockerGuard, FIXED_CALC, Project, Scenario};
use crate::support::{SweHarvest, stderr};

/// Fixes `add` and rewrites `sub` (same behaviour), and adds a module nothing imports.
const FIXED_CALC_REWRITTEN_SUB: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return -(b - a)\n";

fn harvest_with(harvest: &SweHarvest, args: &[&str]) -> std::process::Output {
    let mut command = harvest.command();
    for (name, value) in project::validate_env() {
        command.env(name, value);
    }
    command.args(args).output().expect("swe-harvest runs")
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
        GoldenCoverage::Failed { detail } => panic!("coverage failed: {detail}"),
    }
}

/// Two labelled tasks whose golden tests' change coverage is known by construction.
fn calc_tasks(harvest: &SweHarvest) -> Project {
    let project = Project::new();
    let with_regression = project::tests_with_regression();
    let candidates = vec![
        // X removes lines 2 and 3; the golden test runs both more often than T^R: ΔC = 2/2.
        project.candidate(1, &Scenario::new("fix").gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &with_regression)),
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
    project.mirror_into(&harvest.data_dir);
    project::store_candidates(&harvest.data_dir, &candidates);
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
