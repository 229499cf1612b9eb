//! Support code shared by the integration tests.

#![allow(dead_code)]

pub mod browser;
pub mod docker_lane;
pub mod github_sim;
pub mod probes;
pub mod published;
pub mod python_project;
pub mod stopped_build;
pub mod synthetic_repo;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use swe_harvest::model::{Candidate, RepoSlug, RunPhase, Task, ValidationRun};

/// The `swe-harvest` binary with a clean environment: no `SWE_HARVEST_*` or token
/// variables leak in from the developer's shell, and the working directory is a
/// temporary folder (so `configs/pipeline.toml` is not picked up by accident).
pub struct SweHarvest {
    pub data_dir: PathBuf,
    pub work_dir: tempfile::TempDir,
}

impl SweHarvest {
    pub fn new() -> SweHarvest {
        let work_dir = tempfile::tempdir().expect("temp dir");
        SweHarvest { data_dir: work_dir.path().join("data"), work_dir }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_swe-harvest"));
        for (name, _) in std::env::vars() {
            if name.starts_with("SWE_HARVEST_") || name.starts_with("GITHUB_TOKEN") || name == "RUST_LOG" {
                command.env_remove(name);
            }
        }
        command.current_dir(self.work_dir.path()).arg("--data-dir").arg(&self.data_dir);
        command
    }

    /// [`Self::command`] with what validate's containers need on this machine (the
    /// host's CA bundle for image builds, the base-image override of the tests).
    pub fn validate_command(&self) -> Command {
        let mut command = self.command();
        command.envs(python_project::validate_env());
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("the swe-harvest binary runs")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.work_dir.path().join(relative)
    }

    /// Runs `export` of `stage` as `format` into `<stage>.<format>` in the work dir and
    /// asserts that it succeeded; the file and the command's output.
    pub fn exported(&self, stage: &str, format: &str) -> (PathBuf, Output) {
        let out = self.path(&format!("{stage}.{format}"));
        let output = self.run(&["export", "--stage", stage, "--format", format, "--out", out.to_str().unwrap()]);
        assert!(output.status.success(), "export of {stage} failed: {}", stderr(&output));
        (out, output)
    }

    /// Runs `args` with `--config` naming the file `file_name` (in the work dir) that
    /// holds `config`.
    pub fn run_with_config(&self, file_name: &str, config: &str, args: &[&str]) -> Output {
        let path = self.path(file_name);
        fs_err::write(&path, config).expect("the config file is written");
        self.command().arg("--config").arg(&path).args(args).output().expect("the swe-harvest binary runs")
    }
}

/// Asserts that the command exited with `code` and returns its stderr, the error a
/// test then reads.
pub fn failure(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code), "{}", stderr(output));
    stderr(output)
}

/// A labelled task of pull request `number` of `repo`, which fixes issue `number - 1`
/// and was created at `created_at`, merged a day later: fixed commit ids, one test file
/// with one FAIL_TO_PASS test, version 1.0, three validation runs. Tests change the
/// fields they look at.
pub fn labelled_task(repo: &str, number: u64, created_at: chrono::DateTime<chrono::Utc>) -> Task {
    let repo: RepoSlug = repo.parse().unwrap();
    let test_file = format!("tests/test_{number}.py");
    Task {
        candidate: Candidate {
            instance_id: Candidate::instance_id_for(&repo, number),
            repo,
            pull_number: number,
            issue_numbers: vec![number - 1],
            base_commit: format!("{number:040}"),
            head_commit: format!("{:040}", number + 1),
            patch: String::new(),
            test_patch: format!("diff --git a/{test_file} b/{test_file}\n"),
            problem_statement: format!("Issue {}\nIt breaks.\n", number - 1),
            hints_text: String::new(),
            created_at,
            merged_at: Some(created_at + chrono::Duration::days(1)),
            version: "1.0".into(),
            environment_setup_commit: format!("{:040}", 7),
            test_files: vec![test_file.clone()],
        },
        fail_to_pass: vec![format!("{test_file}::test_fixed")],
        pass_to_pass: vec![],
        flaky_tests: vec![],
        needs_network: vec![],
        fail_to_pass_no_result_before: Vec::new(),
        validation_runs: 3,
        image: None,
        environment_rung: None,
    }
}

/// One validation run of `instance_id` as validate stores it: a run in image `env:1`
/// that exited 0 after a second with no tests, results read from JUnit XML. Tests set
/// the fields they look at with struct update syntax.
pub fn validation_run(instance_id: &str, phase: RunPhase, attempt: u32) -> ValidationRun {
    ValidationRun {
        instance_id: instance_id.to_string(),
        phase,
        attempt,
        image: "env:1".into(),
        exit_code: Some(0),
        timed_out: false,
        duration_secs: 1.0,
        tests: Default::default(),
        test_durations: Default::default(),
        results_source: "junit".into(),
        network_failures: Default::default(),
        network_dependents: Default::default(),
        interrupted: None,
        asked_for: None,
        time_zone: None,
        test_selection: None,
        missing_modules: Default::default(),
        part_of: Default::default(),
    }
}

/// The tasks stored in `harvest`'s data dir, by instance id.
pub fn tasks(harvest: &SweHarvest) -> std::collections::BTreeMap<String, swe_harvest::model::Task> {
    let store = swe_harvest::store::Store::open_in(&harvest.data_dir).unwrap();
    swe_harvest::store::candidates::tasks(store.connection(), &[])
        .unwrap()
        .into_iter()
        .map(|task| (task.candidate.instance_id.clone(), task))
        .collect()
}

/// Stores `candidates` of `project`, validates them once (`--runs 1`) and checks that
/// the first one is labelled.
pub fn validated_once(harvest: &SweHarvest, project: &python_project::Project, candidates: &[Candidate]) {
    project.seed(&harvest.data_dir, candidates);
    let output = harvest.validate_command().args(["validate", "--runs", "1"]).output().unwrap();
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let id = &candidates[0].instance_id;
    assert!(tasks(harvest).contains_key(id), "{id} not labelled:\n{}", stderr(&output));
}

/// Test ids as owned strings, for comparing with a task's lists.
pub fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(ToString::to_string).collect()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The repository root (for `configs/`, `../shared/`).
pub fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file or folder of the shared ground truth (`../shared/groundtruth/<relative>`,
/// next to the clone), or `None` after saying that the test is skipped: a user's clone
/// has no shared data, and the suite passes without it.
pub fn shared_groundtruth(relative: &str) -> Option<PathBuf> {
    let path = project_root().join("../shared/groundtruth").join(relative);
    if path.exists() {
        return Some(path);
    }
    eprintln!(
        "SKIPPED: `{}` is not there (the shared ground truth lives in ../shared/groundtruth next to the clone)",
        path.display()
    );
    None
}

/// A Python virtual environment with `packages` installed from the package index,
/// cached under Cargo's target tmp dir so that tests share it.
pub fn python_venv(name: &str, packages: &[&str]) -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("venv-{name}"));
    let python = venv.join("bin/python");
    let marker = venv.join(".installed");
    let wanted = packages.join(" ");
    // Tests that share a venv run at once in one process or in several (nextest): the
    // first to take the lock builds it, the others wait and find it built.
    let lock = fs_err::File::create(venv.with_extension("lock")).unwrap();
    rustix::fs::flock(lock.file(), rustix::fs::FlockOperation::LockExclusive).unwrap();
    if fs_err::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) {
        return python;
    }
    let status =
        Command::new("python3").arg("-m").arg("venv").arg("--clear").arg(&venv).status().expect("python3 runs");
    assert!(status.success(), "python3 -m venv {} failed", venv.display());
    let output = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(packages)
        .output()
        .expect("pip runs");
    assert!(
        output.status.success(),
        "pip install {wanted} failed (the package index must be reachable):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    fs_err::write(&marker, &wanted).unwrap();
    python
}

/// Runs SWE-bench's own harness (`swebench.harness.run_evaluation`) from `work` on
/// `dataset` with `predictions` (`gold`, or a JSONL file whose model is `probe`) and
/// returns its report. It shares the engine with the other Docker tests: its listing of
/// images and containers leaves out those removed while it lists
/// (tests/support/harness_on_a_shared_engine.py); it once took the engine alone for
/// its whole run, and those runs were a fifth of the suite's time.
pub fn run_harness(python: &Path, work: &Path, dataset: &Path, predictions: &str, run_id: &str) -> serde_json::Value {
    let output = Command::new(python)
        .current_dir(work)
        .arg(project_root().join("tests/support/harness_on_a_shared_engine.py"))
        .arg("--dataset_name")
        .arg(dataset)
        .args(["--predictions_path", predictions, "--run_id", run_id, "--max_workers", "2", "--timeout", "300"])
        .output()
        .unwrap();
    assert!(output.status.success(), "run_evaluation failed:\n{}\n{}", stdout(&output), stderr(&output));
    let model = if predictions == "gold" { "gold".to_string() } else { "probe".to_string() };
    let report = work.join(format!("{model}.{run_id}.json"));
    serde_json::from_str(
        &fs_err::read_to_string(&report)
            .unwrap_or_else(|error| panic!("no harness report at {}: {error}\n{}", report.display(), stdout(&output))),
    )
    .unwrap()
}

/// Skips (true) when one of the base images that `SWE_HARVEST_LANGUAGES="python
/// {language}" scripts/setup.sh` makes is not there.
pub fn base_images_missing(language: &str, images: &[&str]) -> bool {
    let missing: Vec<String> = images
        .iter()
        .map(|tag| format!("swe-harvest/base:{tag}"))
        .filter(|image| {
            !std::process::Command::new("docker")
                .args(["image", "inspect", image])
                .output()
                .is_ok_and(|output| output.status.success())
        })
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "skipped: no {}; make them with SWE_HARVEST_LANGUAGES=\"python {language}\" scripts/setup.sh",
            missing.join(", ")
        );
    }
    !missing.is_empty()
}
