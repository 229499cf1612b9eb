//! Small synthetic Python projects with pytest tests, as git repositories with a bare
//! mirror at `<data-dir>/mirrors/<owner>__<name>.git`, and validation candidates
//! written straight into the store. Commits have fixed authors and dates, so the same
//! project gives the same commit ids in every test: every test then shares one
//! environment image (same content key), built once.
//!
//! Also: a guard for tests that need Docker, which fails the test with a clear
//! message when no engine answers and removes the test's containers at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{TimeZone, Utc};
use swe_harvest::model::{Candidate, RepoSlug};
use swe_harvest::store::{Store, StoreError};

/// The project's repository name in the tests.
pub const REPO: &str = "acme/calc";
/// The date of every commit (and so the `--exclude-newer` date of the environment).
pub const COMMIT_DATE: &str = "2024-06-01T12:00:00+00:00";

pub const PYPROJECT: &str = r#"[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "1.0.0"
requires-python = ">=3.9"
classifiers = ["Programming Language :: Python :: 3.11"]

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
packages = ["calc"]
"#;

/// `add` is wrong for negative numbers: the bug every scenario's gold patch fixes.
pub const BUGGY_CALC: &str =
    "def add(a, b):\n    if b < 0:\n        return a - b\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
pub const FIXED_CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
/// Fixes `add` and breaks `sub`.
pub const FIXED_CALC_BROKEN_SUB: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n";
pub const BASE_TESTS: &str = "from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n";
/// The base tests plus the one that fails before the fix.
pub fn tests_with_regression() -> String {
    format!("{BASE_TESTS}\n\ndef test_add_negative():\n    assert add(1, -1) == 0\n")
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_dated(dir, args, COMMIT_DATE)
}

fn git_dated(dir: &Path, args: &[&str], date: &str) -> String {
    let output = Command::new("git")
        .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_NAME", "Test Author")
        .env("GIT_COMMITTER_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write_files(dir: &Path, files: &BTreeMap<String, String>) {
    for (path, text) in files {
        let path = dir.join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }
}

/// A scenario: what the gold patch and the test patch write on top of the base.
pub struct Scenario {
    pub name: &'static str,
    pub gold: BTreeMap<String, String>,
    pub tests: BTreeMap<String, String>,
}

impl Scenario {
    pub fn new(name: &'static str) -> Scenario {
        Scenario { name, gold: BTreeMap::new(), tests: BTreeMap::new() }
    }
    /// The usual task: the gold patch fixes `add`, the test patch adds the regression
    /// test that fails before it (`tests/test_calc.py::test_add_negative`).
    pub fn fixing_add(name: &'static str) -> Scenario {
        Scenario::new(name).gold("calc/__init__.py", FIXED_CALC).test("tests/test_calc.py", &tests_with_regression())
    }
    pub fn gold(mut self, path: &str, text: &str) -> Scenario {
        self.gold.insert(path.to_string(), text.to_string());
        self
    }
    pub fn test(mut self, path: &str, text: &str) -> Scenario {
        self.tests.insert(path.to_string(), text.to_string());
        self
    }
}

/// The base project in a work tree, with one commit per scenario on its own branch.
pub struct Project {
    pub work: tempfile::TempDir,
    pub base_commit: String,
}

impl Project {
    pub fn new() -> Project {
        Project::dated(COMMIT_DATE)
    }

    /// The project with its base commit made at `date`: another date is another
    /// environment image (for tests that need a cold build).
    pub fn dated(date: &str) -> Project {
        Project::build(date, true)
    }

    /// The project without any packaging or requirements file: nothing to infer from.
    pub fn without_packaging() -> Project {
        Project::build(COMMIT_DATE, false)
    }

    /// The project without packaging, with some files added (a build file in a folder).
    pub fn without_packaging_with(files: &[(&str, &str)]) -> Project {
        Project::build_with(COMMIT_DATE, false, files)
    }

    /// The project with some of its files replaced or added (another packaging, a
    /// vendored dependency, a pytest config).
    pub fn with_files(files: &[(&str, &str)]) -> Project {
        Project::build_with(COMMIT_DATE, true, files)
    }

    /// The project with some files replaced or added, its base commit made at `date`
    /// (the date its dependencies are resolved at).
    pub fn dated_with_files(date: &str, files: &[(&str, &str)]) -> Project {
        Project::build_with(date, true, files)
    }

    fn build(date: &str, packaged: bool) -> Project {
        Project::build_with(date, packaged, &[])
    }

    /// A project of exactly these files and none of the Python calculator's (a
    /// project in another language).
    pub fn of_files(files: &[(&str, &str)]) -> Project {
        Project::dated_of_files(COMMIT_DATE, files)
    }

    /// A project of exactly these files, its base commit made at `date` (for a Rust
    /// crate: the toolchain of that date).
    pub fn dated_of_files(date: &str, files: &[(&str, &str)]) -> Project {
        let files = files.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect();
        Project::commit_files(date, &files)
    }

    fn build_with(date: &str, packaged: bool, replaced: &[(&str, &str)]) -> Project {
        let files: BTreeMap<String, String> = [
            ("pyproject.toml", PYPROJECT),
            ("calc/__init__.py", BUGGY_CALC),
            ("tests/__init__.py", ""),
            ("tests/test_calc.py", BASE_TESTS),
        ]
        .into_iter()
        .filter(|(path, _)| packaged || *path != "pyproject.toml")
        .chain(replaced.iter().copied())
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
        Project::commit_files(date, &files)
    }

    fn commit_files(date: &str, files: &BTreeMap<String, String>) -> Project {
        let work = tempfile::tempdir().unwrap();
        let dir = work.path();
        git(dir, &["init", "-q"]);
        write_files(dir, files);
        git(dir, &["add", "-A"]);
        git_dated(dir, &["commit", "-q", "-m", "calc 1.0"], date);
        let base_commit = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        Project { work, base_commit }
    }

    /// Commits the scenario on a branch and returns its candidate.
    pub fn candidate(&self, number: u64, scenario: &Scenario) -> Candidate {
        let dir = self.work.path();
        git(dir, &["checkout", "-q", "-B", scenario.name, &self.base_commit]);
        write_files(dir, &scenario.gold);
        write_files(dir, &scenario.tests);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", scenario.name]);
        let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        let diff = |paths: Vec<&String>| {
            let mut args: Vec<&str> = vec!["diff", self.base_commit.as_str(), head.as_str(), "--"];
            args.extend(paths.into_iter().map(String::as_str));
            git(dir, &args)
        };
        let patch = diff(scenario.gold.keys().collect());
        let test_patch = diff(scenario.tests.keys().collect());
        git(dir, &["checkout", "-q", "main"]);
        let repo: RepoSlug = REPO.parse().unwrap();
        Candidate {
            instance_id: Candidate::instance_id_for(&repo, number),
            repo,
            pull_number: number,
            issue_numbers: vec![number + 1000],
            base_commit: self.base_commit.clone(),
            head_commit: head,
            patch,
            test_patch,
            problem_statement: format!("{}\n", scenario.name),
            hints_text: String::new(),
            created_at: Utc.with_ymd_and_hms(2024, 6, 2, 0, 0, 0).unwrap(),
            merged_at: None,
            version: "1.0".into(),
            environment_setup_commit: self.base_commit.clone(),
            test_files: scenario.tests.keys().cloned().collect(),
        }
    }

    /// Mirrors the project into `data_dir` and stores `candidates`: what validate finds.
    pub fn seed(&self, data_dir: &Path, candidates: &[Candidate]) {
        self.mirror_into(data_dir);
        store_candidates(data_dir, candidates);
    }

    /// A bare mirror of the project where the validate stage looks for it.
    pub fn mirror_into(&self, data_dir: &Path) -> PathBuf {
        let repo: RepoSlug = REPO.parse().unwrap();
        let path = data_dir.join("mirrors").join(format!("{}.git", repo.double_underscore()));
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        let work = self.work.path().to_str().unwrap().to_string();
        git(data_dir, &["clone", "-q", "--mirror", &work, path.to_str().unwrap()]);
        path
    }
}

/// Writes candidates into the store of `data_dir`.
pub fn store_candidates(data_dir: &Path, candidates: &[Candidate]) {
    let mut store = Store::open_in(data_dir).unwrap();
    store
        .transaction(|transaction| -> Result<(), StoreError> {
            for candidate in candidates {
                swe_harvest::store::candidates::upsert_candidate(transaction, candidate)?;
            }
            Ok(())
        })
        .unwrap();
}

/// Set in the test process to run the Docker tests on base images of another
/// repository than scripts/setup.sh's `swe-harvest/base` (e.g. images of a new recipe
/// built with `SWE_HARVEST_BASE_REPO=swe-harvest/base-next scripts/setup.sh`).
pub const TEST_BASE_REPO_VAR: &str = "SWE_HARVEST_TEST_BASE_REPO";

/// Environment for validate runs in tests: the host CA bundle for the TLS proxy in
/// front of PyPI (harmless without one), and the base images of
/// [`TEST_BASE_REPO_VAR`] when it is set.
pub fn validate_env() -> Vec<(String, String)> {
    let mut env = Vec::new();
    let bundle = "/etc/ssl/certs/ca-certificates.crt";
    if Path::new(bundle).is_file() {
        env.push(("SWE_HARVEST_VALIDATE__EXTRA_CA_FILE".to_string(), bundle.to_string()));
    }
    if let Ok(repo) = std::env::var(TEST_BASE_REPO_VAR) {
        let images: Vec<String> = ["3.9", "3.11", "3.13", "3.14"]
            .iter()
            .map(|runtime| format!("\"{runtime}\" = \"{repo}:py{runtime}\""))
            .collect();
        env.push(("SWE_HARVEST_VALIDATE__BASE_IMAGES".to_string(), format!("{{ {} }}", images.join(", "))));
    }
    env
}

/// A test's claim on the Docker engine: fails the test when no engine answers, and
/// removes every container labelled with the test's data dir when dropped (also
/// when the test panics).
pub struct DockerGuard {
    label: String,
}

impl DockerGuard {
    pub fn require(data_dir: &Path) -> DockerGuard {
        let output = Command::new("docker").args(["info", "--format", "{{.ServerVersion}}"]).output();
        let ok = output.as_ref().is_ok_and(|output| output.status.success());
        assert!(
            ok,
            "this test needs a Docker engine, and none answers (`docker info` failed: {}). Run scripts/setup.sh \
             to install and start one and to build the local base images.",
            output.map(|output| String::from_utf8_lossy(&output.stderr).into_owned()).unwrap_or_else(|e| e.to_string())
        );
        fs_err::create_dir_all(data_dir).unwrap();
        let label = fs_err::canonicalize(data_dir).unwrap().display().to_string();
        DockerGuard { label }
    }

    /// Containers that carry this test's label.
    pub fn containers(&self) -> Vec<String> {
        let output = Command::new("docker")
            .args(["ps", "-aq", "--filter", &format!("label=swe-harvest.data-dir={}", self.label)])
            .output()
            .expect("docker runs");
        String::from_utf8_lossy(&output.stdout).lines().map(String::from).collect()
    }
}

impl Drop for DockerGuard {
    fn drop(&mut self) {
        let ids = self.containers();
        if !ids.is_empty() {
            let _ = Command::new("docker").args(["rm", "-f"]).args(&ids).output();
        }
    }
}

/// A patch that creates `path` with `body`.
pub fn new_file_patch(path: &str, body: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let mut patch = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch
}
