//! The release stage: files, manifest, filters, splits, immutability, compatibility.

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};
use swe_harvest::dataset::{read_records, read_task_rows};
use swe_harvest::model::{SWEBENCH_COLUMNS, Task};
use swe_harvest::store::{self, Store, StoreError};

use crate::support::{SweHarvest, failure, labelled_task, stderr, stdout, validation_run};

fn task(repo: &str, number: u64, created: (i32, u32, u32), patch: &str) -> Task {
    let created_at = Utc.with_ymd_and_hms(created.0, created.1, created.2, 12, 30, 0).unwrap();
    let mut task = labelled_task(repo, number, created_at);
    task.candidate.patch = patch.to_string();
    task.pass_to_pass = vec![format!("tests/test_{number}.py::test_old")];
    task
}

fn patch(n: u64) -> String {
    format!(
        "diff --git a/src/m{n}.py b/src/m{n}.py\n--- a/src/m{n}.py\n+++ b/src/m{n}.py\n@@ -1 +1 @@\n-x = {n}\n+x = {}\n",
        n + 1
    )
}

/// Stores `task` as a validated task: the task and its row of the funnel.
fn store_validated(connection: &rusqlite::Connection, task: &Task) -> Result<(), StoreError> {
    store::candidates::upsert_task(connection, task)?;
    store::record_passed(
        connection,
        swe_harvest::model::Stage::Validate,
        &task.candidate.repo,
        &task.candidate.instance_id,
    )
}

/// Five tasks over two repositories and three months.
fn seeded() -> SweHarvest {
    let harvest = SweHarvest::new();
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    let tasks = vec![
        task("acme/widgets", 12, (2024, 1, 31), &patch(12)),
        task("acme/widgets", 10, (2024, 1, 5), &patch(10)),
        task("acme/widgets", 20, (2024, 2, 1), &patch(20)),
        task("octo/gadgets", 5, (2024, 2, 14), &patch(5)),
        task("octo/gadgets", 9, (2024, 3, 1), &patch(9)),
    ];
    store
        .transaction(|tx| -> Result<(), StoreError> {
            for task in &tasks {
                store_validated(tx, task)?;
            }
            Ok(())
        })
        .unwrap();
    harvest
}

fn release_dir(harvest: &SweHarvest, name: &str, version: &str) -> PathBuf {
    harvest.data_dir.join("releases").join(name).join(version)
}

/// [`seeded`], then released whole as `name`/`version`; with the release's folder.
fn seeded_and_released(name: &str, version: &str) -> (SweHarvest, PathBuf) {
    let harvest = seeded();
    let output = harvest.run(&["release", "--name", name, "--version", version]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, name, version);
    (harvest, dir)
}

fn ids(path: &Path) -> Vec<String> {
    read_records(path).unwrap().iter().map(|record| record["instance_id"].as_str().unwrap().to_string()).collect()
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&fs_err::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// The card says how each task's tests run, by language: a Go task's own command
/// and SWE-bench's Go parser, a Python task's pytest, never pytest for everything.
#[test]
fn the_card_names_each_languages_own_test_command_and_log_parser() {
    let harvest = SweHarvest::new();
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    let mut go = task("acme/goapp", 30, (2024, 4, 2), "diff --git a/server.go b/server.go\n");
    go.candidate.test_patch =
        "diff --git a/server_test.go b/server_test.go\n--- a/server_test.go\n+++ b/server_test.go\n".into();
    go.image = Some("swe-harvest-env/acme__goapp:go".into());
    let mut python = task("acme/widgets", 31, (2024, 4, 3), &patch(31));
    python.image = Some("swe-harvest-env/acme__widgets:py".into());
    let environments = [
        (&go, "go", "go1.24", "go test -json -count=1"),
        (&python, "python", "3.11", "pytest -rA -p no:cacheprovider"),
    ];
    store
        .transaction(|tx| -> Result<(), StoreError> {
            for (task, ecosystem, runtime, test_command) in environments {
                let spec = swe_harvest::model::EnvironmentSpec {
                    ecosystem: ecosystem.into(),
                    runtime: runtime.into(),
                    test_command: test_command.into(),
                    source: "inferred".into(),
                    ..Default::default()
                };
                let image = task.image.as_deref();
                store::validation::record_environment(
                    tx,
                    image.unwrap(),
                    &task.candidate.repo,
                    &task.candidate.environment_setup_commit,
                    &spec,
                    image,
                    "built",
                    None,
                )?;
                store_validated(tx, task)?;
            }
            Ok(())
        })
        .unwrap();
    drop(store);
    let output = harvest.run(&["release", "--name", "mixed", "--version", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let card = fs_err::read_to_string(release_dir(&harvest, "mixed", "1").join("README.md")).unwrap();
    assert!(card.contains("| go | `go test -count=1 -v` | `parse_log_gotest` | 1 |"), "{card}");
    assert!(card.contains("| python | `pytest -rA -p no:cacheprovider` | `parse_log_pytest` | 1 |"), "{card}");
    assert!(!card.contains("with `pytest -rA`"), "no claim that every task runs pytest: {card}");
}

#[test]
fn release_writes_sorted_rows_in_both_formats_with_a_manifest_and_card() {
    let harvest = seeded();
    let output = harvest.run(&["release", "--name", "bench", "--version", "2024.03"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, "bench", "2024.03");
    assert_eq!(stdout(&output).trim(), dir.display().to_string(), "the release path is the data on stdout");

    let expected = ["acme__widgets-10", "acme__widgets-12", "acme__widgets-20", "octo__gadgets-5", "octo__gadgets-9"];
    assert_eq!(ids(&dir.join("tasks.parquet")), expected);
    assert_eq!(read_records(&dir.join("tasks.parquet")).unwrap(), read_records(&dir.join("tasks.jsonl")).unwrap());
    let rows = read_task_rows(&dir.join("tasks.jsonl")).unwrap();
    assert_eq!(rows[0].fail_to_pass, r#"["tests/test_10.py::test_fixed"]"#);
    assert_eq!(rows[0].created_at, "2024-01-05T12:30:00Z");
    let first_line = fs_err::read_to_string(dir.join("tasks.jsonl")).unwrap().lines().next().unwrap().to_string();
    let order: Vec<usize> = SWEBENCH_COLUMNS.iter().map(|c| first_line.find(&format!("\"{c}\":")).unwrap()).collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "SWE-bench's columns come first, in order");
    assert!(first_line.contains(r#""pull_number":"10","issue_numbers":"[\"9\"]","merged_at":"2024-01-06T12:30:00Z""#));

    let manifest = manifest(&dir);
    assert_eq!(manifest["name"], "bench");
    assert_eq!(manifest["version"], "2024.03");
    assert_eq!(manifest["counts"]["total"], 5);
    assert_eq!(manifest["counts"]["per_repository"]["acme/widgets"], 3);
    assert_eq!(manifest["pipeline_version"], env!("CARGO_PKG_VERSION"));
    for file in ["tasks.parquet", "tasks.jsonl", "README.md"] {
        let entry = &manifest["files"][file];
        let bytes = fs_err::read(dir.join(file)).unwrap();
        use sha2::Digest;
        assert_eq!(entry["sha256"], hex::encode(sha2::Sha256::digest(&bytes)), "{file}");
        assert_eq!(entry["size_bytes"], bytes.len());
    }
    let card = fs_err::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.starts_with("---\n") && card.contains("configs:\n- config_name: default"), "{card}");
    assert!(card.contains("num_examples: 5"));
    assert!(card.contains("| acme/widgets | 3 |"));
    assert!(card.contains("| validate | 5 | 5 | 0 |"), "the funnel is in the card");
    assert!(card.contains("unknown: check the repository"), "the license situation is stated");
    let leftovers: Vec<_> = fs_err::read_dir(dir.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("2024.03")], "no staging folder is left");
}

#[test]
fn an_existing_release_is_never_modified_unless_forced() {
    let (harvest, dir) = seeded_and_released("bench", "1");
    let before = fs_err::read(dir.join("manifest.json")).unwrap();
    let output = harvest.run(&["release", "--name", "bench", "--version", "1", "--repo", "octo/gadgets"]);
    let error = failure(&output, 2);
    assert!(error.contains("already exists") && error.contains("--force"), "{error}");
    assert_eq!(fs_err::read(dir.join("manifest.json")).unwrap(), before);
    let output = harvest.run(&["release", "--name", "bench", "--version", "1", "--repo", "octo/gadgets", "--force"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(ids(&dir.join("tasks.jsonl")), ["octo__gadgets-5", "octo__gadgets-9"]);
}

#[test]
fn date_window_is_half_open_and_repos_filter() {
    let harvest = seeded();
    let output = harvest.run(&[
        "release",
        "--name",
        "feb",
        "--version",
        "1",
        "--created-after",
        "2024-02-01",
        "--created-before",
        "2024-03-01",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, "feb", "1");
    assert_eq!(ids(&dir.join("tasks.jsonl")), ["acme__widgets-20", "octo__gadgets-5"]);
    let counts = &manifest(&dir)["counts"]["left_out_by_filters"];
    assert_eq!(counts["created_before_window"], 2);
    assert_eq!(counts["created_after_window"], 1);
    assert_eq!(manifest(&dir)["filters"]["created_after"], "2024-02-01");

    let output = harvest.run(&["release", "--name", "acme", "--version", "1", "--repo", "acme/widgets"]);
    assert!(output.status.success());
    assert_eq!(ids(&release_dir(&harvest, "acme", "1").join("tasks.jsonl")).len(), 3);
}

#[test]
fn exclude_dataset_drops_by_instance_id_and_by_normalised_patch() {
    let harvest = seeded();
    let other = harvest.path("other.jsonl");
    // One row shares an id; another carries our task 5's patch with other whitespace
    // and an index line, under another id.
    let reworded = patch(5).replace("--- a/", "index 0000..1111 100644\n--- a/").replace("x = 6", "x   =  6");
    let rows = [
        serde_json::json!({"instance_id": "acme__widgets-10", "patch": "unrelated"}),
        serde_json::json!({"instance_id": "someone__else-1", "patch": reworded}),
    ];
    fs_err::write(&other, rows.iter().map(|row| row.to_string() + "\n").collect::<String>()).unwrap();
    let output =
        harvest.run(&["release", "--name", "clean", "--version", "1", "--exclude-dataset", other.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, "clean", "1");
    assert_eq!(ids(&dir.join("tasks.jsonl")), ["acme__widgets-12", "acme__widgets-20", "octo__gadgets-9"]);
    let counts = &manifest(&dir)["counts"]["left_out_by_filters"];
    assert_eq!(counts["instance_id_in_excluded_dataset"], 1);
    assert_eq!(counts["patch_in_excluded_dataset"], 1);
    assert!(manifest(&dir)["filters"]["exclude_datasets"][0]["sha256"].as_str().unwrap().len() == 64);

    // A parquet dataset works the same way: exclude everything an earlier release holds.
    let earlier = release_dir(&harvest, "clean", "1").join("tasks.parquet");
    let output =
        harvest.run(&["release", "--name", "rest", "--version", "1", "--exclude-dataset", earlier.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(ids(&release_dir(&harvest, "rest", "1").join("tasks.jsonl")), ["acme__widgets-10", "octo__gadgets-5"]);
}

#[test]
fn split_by_month_writes_one_split_per_month_and_counts_each() {
    let harvest = seeded();
    let output = harvest.run(&["release", "--name", "rolling", "--version", "1", "--split-by", "month"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, "rolling", "1");
    assert_eq!(ids(&dir.join("splits/2024-01/tasks.parquet")), ["acme__widgets-10", "acme__widgets-12"]);
    assert_eq!(ids(&dir.join("splits/2024-02/tasks.jsonl")), ["acme__widgets-20", "octo__gadgets-5"]);
    assert_eq!(ids(&dir.join("splits/2024-03/tasks.jsonl")), ["octo__gadgets-9"]);
    let per_split = &manifest(&dir)["counts"]["per_split"];
    assert_eq!(per_split, &serde_json::json!({"2024-01": 2, "2024-02": 2, "2024-03": 1}));
    assert!(manifest(&dir)["files"]["splits/2024-02/tasks.parquet"]["sha256"].is_string());
    let card = fs_err::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("- split: month_2024_02\n    path: splits/2024-02/tasks.parquet"), "{card}");
}

#[test]
fn release_settings_file_is_used_and_flags_beat_it() {
    let harvest = seeded();
    fs_err::create_dir_all(harvest.path("configs/releases")).unwrap();
    fs_err::write(harvest.path("configs/pipeline.toml"), "").unwrap();
    fs_err::write(
        harvest.path("configs/releases/monthly.toml"),
        "created_after = 2024-02-01\nrepos = [\"acme/widgets\"]\n",
    )
    .unwrap();
    let output = harvest.run(&["release", "--name", "monthly", "--version", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(ids(&release_dir(&harvest, "monthly", "1").join("tasks.jsonl")), ["acme__widgets-20"]);
    let output = harvest.run(&["release", "--name", "monthly", "--version", "2", "--repo", "octo/gadgets"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(ids(&release_dir(&harvest, "monthly", "2").join("tasks.jsonl")), ["octo__gadgets-5", "octo__gadgets-9"]);
    let extends = &manifest(&release_dir(&harvest, "monthly", "2"))["extends"];
    assert_eq!(extends["version"], "1", "a later version names the release it extends");
    assert_eq!(extends["added"], 2);
    assert_eq!(extends["removed"], 1);

    fs_err::write(harvest.path("configs/releases/typo.toml"), "created_afterr = 2024-02-01\n").unwrap();
    let output = harvest.run(&["release", "--name", "typo", "--version", "1"]);
    let error = failure(&output, 2);
    assert!(error.contains("typo.toml") && error.contains("created_afterr"), "{error}");
}

#[test]
fn empty_selection_and_bad_names_are_clear_errors() {
    let harvest = seeded();
    let output = harvest.run(&["release", "--name", "none", "--version", "1", "--created-after", "2030-01-01"]);
    let error = failure(&output, 1);
    assert!(error.contains("no task matches"), "{error}");
    assert!(!release_dir(&harvest, "none", "1").exists());
    let output = harvest.run(&["release", "--name", "../escape", "--version", "1"]);
    let error = failure(&output, 2);
    assert!(error.contains("invalid release name `../escape`"), "{error}");
    let output = harvest.run(&["release", "--name", "ok", "--version", ".hidden"]);
    let error = failure(&output, 2);
    assert!(error.contains("invalid release version `.hidden`: it starts with a dot"), "{error}");
}

#[test]
fn release_parquet_is_read_by_pyarrow_with_the_swebench_schema() {
    let (_harvest, dir) = seeded_and_released("compat", "1");
    let python = crate::support::python_venv("pyarrow", &["pyarrow"]);
    let script = r#"
import json, re, sys
import pyarrow.parquet as pq
SWEBENCH = ["instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
            "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
            "environment_setup_commit"]
table = pq.read_table(sys.argv[1])
assert table.column_names[:12] == SWEBENCH, table.column_names
for field in table.schema:
    assert str(field.type) in ("string", "large_string"), (field.name, field.type)
rows = table.to_pylist()
assert [r["instance_id"] for r in rows] == sorted(r["instance_id"] for r in rows)
for row in rows:
    assert re.fullmatch(r"[A-Za-z0-9-]+__[A-Za-z0-9._-]+-\d+", row["instance_id"]), row["instance_id"]
    assert row["instance_id"].startswith(row["repo"].replace("/", "__") + "-")
    assert re.fullmatch(r"[0-9a-f]{40}", row["base_commit"])
    assert re.fullmatch(r"[0-9a-f]{40}", row["environment_setup_commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["created_at"])
    assert re.fullmatch(r"\d+\.\d+", row["version"])
    for column in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        tests = json.loads(row[column])
        assert isinstance(tests, list) and all(isinstance(t, str) for t in tests), column
with open(sys.argv[2]) as jsonl:
    assert [json.loads(line) for line in jsonl] == rows, "JSONL rows equal parquet rows"
print(len(rows), "rows ok")
"#;
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(dir.join("tasks.parquet"))
        .arg(dir.join("tasks.jsonl"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output).trim(), "5 rows ok");
}

#[test]
fn push_without_a_registry_is_a_usage_error_that_says_where_to_set_one() {
    let harvest = seeded();
    let output = harvest.run(&["release", "--name", "bench", "--version", "1", "--images", "--push"]);
    let error = failure(&output, 2);
    assert!(error.contains("registry") && error.contains("[release]"), "{error}");
    assert!(!release_dir(&harvest, "bench", "1").exists());
}

/// Stores `attempts` validation runs of a task: before the fix its test fails, after
/// it passes, except in the attempts listed in `wobbly` (where it fails after too).
fn store_runs(harvest: &SweHarvest, instance_id: &str, test: &str, attempts: u32, wobbly: &[u32]) {
    use swe_harvest::model::{RunPhase, TestStatus, ValidationRun};
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    let run = |phase: RunPhase, attempt: u32, status: TestStatus| ValidationRun {
        exit_code: Some(1),
        tests: [(test.to_string(), status)].into(),
        ..validation_run(instance_id, phase, attempt)
    };
    store
        .transaction(|tx| -> Result<(), StoreError> {
            for attempt in 1..=attempts {
                let after = if wobbly.contains(&attempt) { TestStatus::Failed } else { TestStatus::Passed };
                store::validation::insert_runs(
                    tx,
                    "content",
                    &[run(RunPhase::Pre, attempt, TestStatus::Failed), run(RunPhase::Post, attempt, after)],
                )?;
            }
            Ok(())
        })
        .unwrap();
}

fn store_coverage(harvest: &SweHarvest, instance_id: &str, coverage: store::coverage::GoldenCoverage) {
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    store.transaction(|tx| store::coverage::upsert(tx, instance_id, &coverage)).unwrap();
}

fn half_covered() -> store::coverage::GoldenCoverage {
    let executable: swe_harvest::swt::metrics::ExecutableLines =
        serde_json::from_str(r#"{"removed": {"src/m.py": [1, 2]}, "added": {}}"#).unwrap();
    store::coverage::GoldenCoverage::Measured {
        executable,
        coverage: swe_harvest::swt::metrics::ChangeCoverage { covered: 1, executable: 2 },
    }
}

#[test]
fn an_swt_release_keeps_only_tasks_with_coverage_and_golden_tests_that_held_in_every_run() {
    let harvest = seeded();
    // Kept: coverage, two runs that agree.
    store_coverage(&harvest, "acme__widgets-10", half_covered());
    store_runs(&harvest, "acme__widgets-10", "tests/test_10.py::test_fixed", 2, &[]);
    // The golden test did not pass after the fix in the second run.
    store_coverage(&harvest, "acme__widgets-12", half_covered());
    store_runs(&harvest, "acme__widgets-12", "tests/test_12.py::test_fixed", 2, &[2]);
    // One run only.
    store_coverage(&harvest, "acme__widgets-20", half_covered());
    store_runs(&harvest, "acme__widgets-20", "tests/test_20.py::test_fixed", 1, &[]);
    // No coverage, and coverage that failed.
    store_runs(&harvest, "octo__gadgets-5", "tests/test_5.py::test_fixed", 2, &[]);
    store_coverage(&harvest, "octo__gadgets-9", store::coverage::GoldenCoverage::Failed { detail: "install".into() });
    store_runs(&harvest, "octo__gadgets-9", "tests/test_9.py::test_fixed", 2, &[]);

    let output = harvest
        .command()
        .env("SWE_HARVEST_RELEASE__SWT_MIN_RUNS", "2")
        .args(["release", "--name", "swt", "--version", "1", "--swt"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let dir = release_dir(&harvest, "swt", "1");
    assert_eq!(ids(&dir.join("tasks.jsonl")), ["acme__widgets-10"]);
    let manifest = manifest(&dir);
    let left_out = &manifest["counts"]["left_out_by_filters"];
    assert_eq!(left_out["swt_coverage_not_measured"], 2, "{manifest:#}");
    assert_eq!(left_out["swt_fewer_validation_runs"], 1);
    assert_eq!(left_out["swt_golden_tests_unstable"], 1);
    assert_eq!(manifest["filters"]["swt_min_runs"], 2);
    let rows = read_records(&dir.join("tasks.jsonl")).unwrap();
    assert_eq!(rows[0]["gold_executable_lines"], "2");
    assert_eq!(rows[0]["golden_change_coverage"], "0.5000");
    assert_eq!(rows[0]["gold_executable_line_map"], r#"{"removed":{"src/m.py":[1,2]},"added":{}}"#);
    let card = fs_err::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("This is an SWT release") && card.contains("at least 2 validation runs"), "{card}");
    assert!(card.contains("| (25%, 50%] | 1 |"), "{card}");

    // An ordinary release holds every task; coverage columns are empty where unmeasured.
    let output = harvest.run(&["release", "--name", "all", "--version", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows = read_records(&release_dir(&harvest, "all", "1").join("tasks.jsonl")).unwrap();
    assert_eq!(rows.len(), 5);
    let gadget = rows.iter().find(|row| row["instance_id"] == "octo__gadgets-9").unwrap();
    assert_eq!(
        (gadget["gold_executable_lines"].as_str(), gadget["golden_change_coverage"].as_str()),
        (Some(""), Some(""))
    );
}

fn stored_releases(harvest: &SweHarvest) -> Vec<(String, String)> {
    let store = Store::open_in(&harvest.data_dir).unwrap();
    let mut statement =
        store.connection().prepare("SELECT name, version FROM releases ORDER BY name, version").unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Regression: a release was renamed into place before the store recorded it; when
/// the insert failed, the release stayed published and could never be made again
/// without `--force`.
#[test]
fn a_release_the_store_cannot_record_is_not_published_and_can_be_made_again() {
    let harvest = seeded();
    let refuse = "CREATE TRIGGER refuse_releases BEFORE INSERT ON releases BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;";
    Store::open_in(&harvest.data_dir).unwrap().connection().execute_batch(refuse).unwrap();

    let failed = harvest.run(&["release", "--name", "bench", "--version", "1"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(stderr(&failed).contains("refused by the test"), "{}", stderr(&failed));
    let dir = release_dir(&harvest, "bench", "1");
    assert!(!dir.exists(), "a release the store does not know is not published");
    let leftovers: Vec<_> = fs_err::read_dir(dir.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(leftovers.is_empty(), "no staging folder is left: {leftovers:?}");

    Store::open_in(&harvest.data_dir).unwrap().connection().execute_batch("DROP TRIGGER refuse_releases").unwrap();
    let again = harvest.run(&["release", "--name", "bench", "--version", "1"]);
    assert!(again.status.success(), "made again without --force: {}", stderr(&again));
    assert_eq!(stored_releases(&harvest), [("bench".to_string(), "1".to_string())]);
    assert_eq!(ids(&dir.join("tasks.jsonl")).len(), 5);
}

/// A kill between the rename and the commit leaves a published release the store does
/// not know: the same request adopts it; a folder that differs from its manifest, or
/// another request, is never adopted.
#[test]
fn a_published_release_whose_record_was_lost_is_adopted_by_the_same_request_only() {
    let (harvest, dir) = seeded_and_released("bench", "1");
    let manifest_before = fs_err::read(dir.join("manifest.json")).unwrap();
    let forget =
        || Store::open_in(&harvest.data_dir).unwrap().connection().execute_batch("DELETE FROM releases").unwrap();
    forget();

    let other_request = harvest.run(&["release", "--name", "bench", "--version", "1", "--repo", "octo/gadgets"]);
    assert_eq!(other_request.status.code(), Some(2), "{}", stderr(&other_request));
    assert!(stderr(&other_request).contains("already exists"), "{}", stderr(&other_request));

    let adopted = harvest.run(&["release", "--name", "bench", "--version", "1"]);
    assert!(adopted.status.success(), "{}", stderr(&adopted));
    assert_eq!(stdout(&adopted).trim(), dir.display().to_string());
    assert_eq!(stored_releases(&harvest), [("bench".to_string(), "1".to_string())]);
    assert_eq!(fs_err::read(dir.join("manifest.json")).unwrap(), manifest_before, "adopted as it was, not rewritten");

    let known = harvest.run(&["release", "--name", "bench", "--version", "1"]);
    assert_eq!(known.status.code(), Some(2), "a recorded release is never made again: {}", stderr(&known));

    forget();
    let mut rows = fs_err::read_to_string(dir.join("tasks.jsonl")).unwrap();
    rows.push_str("{}\n");
    fs_err::write(dir.join("tasks.jsonl"), rows).unwrap();
    let tampered = harvest.run(&["release", "--name", "bench", "--version", "1"]);
    assert_eq!(tampered.status.code(), Some(2), "a folder unlike its manifest is not adopted: {}", stderr(&tampered));
    assert!(stored_releases(&harvest).is_empty());
}
