//! The offline demo, end to end: `scripts/demo.sh` with the binaries of this build
//! (crawl from the simulator, mirror, extract, validate in Docker, release), and its
//! own check of every expected task and drop reason. Then the same tasks released
//! with instance images and graded by SWE-bench's own harness (`swebench` 5.x from
//! the package index): the gold patches resolve every task, empty and no-op
//! predictions resolve none, and the wrong fix that probe kept for the task whose
//! tests are weak by construction resolves it: the evidence is real.

use std::path::Path;
use std::process::Command;

use crate::support::{SweHarvest, project_root, python_venv, run_harness, stderr, stdout};

/// A prediction that applies everywhere and fixes nothing.
const NO_OP_PATCH: &str = "diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+no fix here\n";

#[test]
fn offline_demo_releases_the_expected_tasks_and_swebench_harness_runs_them_unchanged() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_swe-harvest")).parent().unwrap();
    let harvest = SweHarvest::new();
    let work = harvest.work_dir.path();
    let output = Command::new("bash")
        .arg(project_root().join("scripts/demo.sh"))
        .env("SWE_HARVEST_DEMO_BIN_DIR", bin_dir)
        .env("SWE_HARVEST_DEMO_DIR", work)
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_TOKENS")
        .output()
        .unwrap();
    assert!(output.status.success(), "the demo failed:\n{}\n{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("all checks passed"), "{}", stdout(&output));
    assert!(!stdout(&output).contains("FAIL "), "{}", stdout(&output));

    // The demo's data dir (`<work>/data`) is the harness helper's data dir too.
    let version = format!("img-{}", std::process::id());
    let released = harvest.run(&["release", "--name", "demo", "--version", &version, "--images"]);
    assert!(released.status.success(), "{}", stderr(&released));
    let release_dir = std::path::PathBuf::from(stdout(&released).trim());
    let dataset = release_dir.join("tasks.jsonl");
    let rows: Vec<serde_json::Value> =
        fs_err::read_to_string(&dataset).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(rows.len(), 5);
    for row in &rows {
        let expected_tag = format!("swe-harvest/{}:{version}", row["instance_id"].as_str().unwrap().to_lowercase());
        assert_eq!(row["image"], expected_tag.as_str());
        let (language, parser) = if row["instance_id"] == "demo-org__gounits-2" {
            ("go", "parse_log_gotest")
        } else {
            ("python", "parse_log_pytest")
        };
        assert_eq!((row["language"].as_str(), row["log_parser"].as_str()), (Some(language), Some(parser)));
        assert_eq!(row["eval_type"], "pass_and_fail");
        // The screen's columns travel with the instance images.
        assert!(["keep", "uncertain", "flag"].contains(&row["quality_verdict"].as_str().unwrap()), "{row}");
        assert!(!row["difficulty"].as_str().unwrap().is_empty(), "{row}");
    }

    let python = python_venv("swebench", &["swebench>=5,<6"]);
    let gold = run_harness(&python, work, &dataset, "gold", &format!("gold-{version}"));
    assert_eq!(gold["resolved_instances"], 5, "the gold patches resolve every task: {gold:#}");
    assert_eq!(gold["error_instances"], 0, "{gold:#}");

    let predictions = work.join("probe.jsonl");
    let lines: Vec<String> = rows
        .iter()
        .map(|row| {
            serde_json::json!({"instance_id": row["instance_id"], "model_name_or_path": "probe", "model_patch": ""})
                .to_string()
        })
        .collect();
    fs_err::write(&predictions, lines.join("\n") + "\n").unwrap();
    let empty = run_harness(&python, work, &dataset, predictions.to_str().unwrap(), &format!("empty-{version}"));
    assert_eq!(empty["resolved_instances"], 0, "{empty:#}");

    let lines: Vec<String> = rows
        .iter()
        .map(|row| {
            serde_json::json!({"instance_id": row["instance_id"], "model_name_or_path": "probe", "model_patch": NO_OP_PATCH})
                .to_string()
        })
        .collect();
    fs_err::write(&predictions, lines.join("\n") + "\n").unwrap();
    let no_op = run_harness(&python, work, &dataset, predictions.to_str().unwrap(), &format!("noop-{version}"));
    assert_eq!(no_op["completed_instances"], 5, "the no-op patch applies and the tests run: {no_op:#}");
    assert_eq!(no_op["resolved_instances"], 0, "{no_op:#}");

    // Probe's survivor is a wrong fix the benchmark's own harness scores as resolved.
    let weak = rows.iter().find(|row| row["instance_id"] == "demo-org__textkit-4").expect("the weak task is released");
    let survivors: Vec<serde_json::Value> = serde_json::from_str(weak["surviving_mutants"].as_str().unwrap()).unwrap();
    let wrong_fix = survivors.first().expect("a survivor")["patch"].as_str().unwrap().to_string();
    assert_ne!(wrong_fix, weak["patch"].as_str().unwrap());
    let predictions = work.join("survivor.jsonl");
    let line = serde_json::json!({"instance_id": "demo-org__textkit-4", "model_name_or_path": "probe", "model_patch": wrong_fix});
    fs_err::write(&predictions, line.to_string() + "\n").unwrap();
    let survivor = run_harness(&python, work, &dataset, predictions.to_str().unwrap(), &format!("survivor-{version}"));
    assert_eq!(survivor["resolved_instances"], 1, "the harness scores the wrong fix resolved: {survivor:#}");

    for row in &rows {
        let _ = Command::new("docker").args(["image", "rm", "-f", row["image"].as_str().unwrap()]).output();
    }
}
