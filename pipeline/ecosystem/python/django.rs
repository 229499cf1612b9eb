//! The Django repository's own test runner: `tests/runtests.py --settings=test_sqlite
//! --parallel 1 -v 2 LABELS`, run from the repository's root as SWE-bench runs it,
//! with one label per touched test file (`tests/foo/tests.py` -> `foo.tests`,
//! `tests/foo/test_bar.py` -> `foo.test_bar`; the conversion is done by the shell,
//! so that a runner given `"$@"` converts too). Results come from the verbose
//! output ([`super::unittest::parse_verbose_log`]), ids in SWE-bench's published
//! form (`test_name (module.Class)`, or the docstring's first line).
//!
//! The environment: Python's ([`super::infer`], [`super::image`]), with
//! - the runtime: the oldest one with a base image that the project declares
//!   (classifiers), else Python's choice. Django's CI runs the whole suite on its
//!   oldest supported Python, and SWE-bench's published ids come from those
//!   (Python 3.11 changed unittest's ids: `test_name (module.Class.test_name)`);
//! - the install: the repository with `tests/requirements/py3.txt`, else with that
//!   file less the packages that need a C library or a service (pylibmc,
//!   pywatchman, selenium, ...), else the repository alone;
//! - a UTF-8 locale (`C.UTF-8`): tests of i18n and of file names need one.

use super::{Pytest, infer};
use crate::ecosystem::{Ecosystem, ParsedRun, RepoFiles};
use crate::model::EnvironmentSpec;
use crate::sandbox::script::shell_quote;

/// Django's runner.
pub struct DjangoRunner;

/// The test command of inferred specs; the runner adds the labels.
pub const TEST_COMMAND: &str = "python tests/runtests.py --settings=test_sqlite --parallel 1 -v 2";

/// Django's test requirements.
pub const TEST_REQUIREMENTS: &str = "tests/requirements/py3.txt";

/// Test requirements left out on the second install rung: they need a C library, a
/// browser or a service that environment images do not have.
const HEAVY_REQUIREMENTS: &[&str] =
    &["pylibmc", "pywatchman", "selenium", "mysqlclient", "psycopg", "psycopg2", "cx_oracle", "oracledb", "geoip2"];

/// The environment variables of every run: a UTF-8 locale.
const LOCALE: &str = "export LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONIOENCODING=utf8";

/// The classifiers' `3.x` runtimes among `available`, oldest first.
fn declared_runtimes(files: &RepoFiles, available: &[String]) -> Vec<String> {
    let classifier = regex::Regex::new(r"Programming Language :: Python :: (3\.\d+)").expect("valid regex");
    let mut declared: Vec<String> = Vec::new();
    for text in files.values() {
        for capture in classifier.captures_iter(text) {
            if available.iter().any(|runtime| *runtime == capture[1]) && !declared.contains(&capture[1].to_string()) {
                declared.push(capture[1].to_string());
            }
        }
    }
    let minor = |runtime: &String| runtime.split('.').nth(1).and_then(|minor| minor.parse::<u32>().ok());
    declared.sort_by_key(minor);
    declared
}

/// Pytest's spec as Django's runner installs it: the oldest runtime the classifiers
/// declare that the project allows (else Pytest's), and the project with its test requirements
/// (without the heavy ones, then alone, when those fail).
fn adapt_pytest_spec(files: &RepoFiles, runtimes: &[String], pytest: EnvironmentSpec) -> EnvironmentSpec {
    let allowed = infer::allowed_runtimes(files, runtimes);
    let runtime = declared_runtimes(files, runtimes)
        .into_iter()
        .find(|runtime| allowed.contains(runtime))
        .unwrap_or(pytest.runtime.clone());
    let project = "uv pip install --no-build-isolation -e .";
    let mut rungs: Vec<String> = Vec::new();
    if files.contains_key(TEST_REQUIREMENTS) {
        rungs.push(format!("{project} -r {TEST_REQUIREMENTS}"));
        let heavy = HEAVY_REQUIREMENTS.join("|");
        rungs.push(format!(
            "grep -viE {} {TEST_REQUIREMENTS} > /tmp/django-test-requirements.txt && {project} -r /tmp/django-test-requirements.txt",
            shell_quote(&format!("^\\s*({heavy})\\b"))
        ));
    }
    rungs.push(project.to_string());
    let install = rungs
        .iter()
        .enumerate()
        .map(|(index, rung)| match index {
            0 => format!("{{ {rung}; }}"),
            _ => format!("{{ echo 'swe-harvest: install rung {}'; {rung}; }}", index + 1),
        })
        .collect::<Vec<_>>()
        .join(" || ");
    EnvironmentSpec { runtime, install: vec![install], ..pytest }
}

impl Ecosystem for DjangoRunner {
    fn name(&self) -> &'static str {
        "python-django"
    }

    super::shares_pytest_environment!(test_command: TEST_COMMAND, adapt: adapt_pytest_spec);

    fn reads_for_inference(&self, path: &str) -> bool {
        Pytest.reads_for_inference(path) || path == TEST_REQUIREMENTS
    }

    /// The Python files under `tests/` (not `__init__.py`, not the runner itself), as
    /// SWE-bench picks its labels.
    fn runnable_test_files(&self, diff: &str) -> Vec<String> {
        Pytest
            .runnable_test_files(diff)
            .into_iter()
            .filter(|file| file.starts_with("tests/") && file != "tests/runtests.py")
            .collect()
    }

    fn script_setup(&self, version: &str) -> String {
        format!("{LOCALE}\n{}", Pytest.script_setup(version))
    }

    /// `bash -c` turns the files into labels; Django's runner writes no report.
    fn test_invocation(&self, test_command: &str, _report: &str, files: &str) -> String {
        format!("{} {files}", labelled(test_command))
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        super::unittest::parse_verbose_log(log)
    }

    fn harness_setup(&self, version: &str) -> Vec<String> {
        let mut lines = Pytest.harness_setup(version);
        lines.push(LOCALE.to_string());
        lines
    }

    /// Followed by the test files, as in validation.
    fn harness_test_command(&self, test_command: &str) -> String {
        labelled(test_command)
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_django"
    }
}

/// `test_command` run by a `bash -c` that turns its arguments (test files) into
/// Django's labels ([`label`]).
fn labelled(test_command: &str) -> String {
    let script = format!(
        r#"labels=(); for file in "$@"; do file="${{file#tests/}}"; file="${{file%.py}}"; labels+=("${{file//\//.}}"); done; exec {test_command} "${{labels[@]}}""#
    );
    format!("bash -c {} django-labels", shell_quote(&script))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    #[test]
    fn the_shell_makes_the_same_labels() {
        let command = labelled("echo");
        let output = std::process::Command::new("bash")
            .args(["-c", &format!("{command} tests/foo/tests.py 'tests/a/b/test_c.py'")])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "foo.tests a.b.test_c\n");
    }

    #[test]
    fn only_python_files_under_tests_are_run() {
        let diff = "--- a/tests/foo/tests.py\n+++ b/tests/foo/tests.py\n--- a/tests/foo/__init__.py\n+++ b/tests/foo/__init__.py\n\
                    --- a/django/test/utils.py\n+++ b/django/test/utils.py\n--- a/tests/templates/x.html\n+++ b/tests/templates/x.html\n";
        assert_eq!(DjangoRunner.runnable_test_files(diff), vec!["tests/foo/tests.py".to_string()]);
    }

    #[test]
    fn inference_takes_the_oldest_declared_runtime_and_the_test_requirements() {
        let files: RepoFiles = [
            (
                "setup.cfg".to_string(),
                "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n    Programming Language :: Python :: 3.9\n    \
                 Programming Language :: Python :: 3.11\n[options]\npython_requires = >=3.8\n"
                    .to_string(),
            ),
            ("setup.py".to_string(), "from setuptools import setup\nsetup()\n".to_string()),
            (TEST_REQUIREMENTS.to_string(), "pylibmc\nsqlparse\n".to_string()),
        ]
        .into();
        let date = Utc.with_ymd_and_hms(2023, 4, 1, 0, 0, 0).unwrap();
        let runtimes: Vec<String> = vec!["3.9".into(), "3.11".into(), "3.13".into()];
        let spec = DjangoRunner.infer(&files, date, &runtimes).unwrap();
        assert_eq!(spec.runtime, "3.9", "the oldest declared, not the newest");
        assert_eq!(spec.ecosystem, "python-django");
        assert_eq!(spec.test_command, TEST_COMMAND);
        assert!(
            spec.install[0].starts_with("{ uv pip install --no-build-isolation -e . -r tests/requirements/py3.txt; }")
        );
        assert!(spec.install[0].contains("grep -viE"), "{}", spec.install[0]);
        // Django 5 declares no runtime older than 3.10: 3.11.
        let mut newer = files.clone();
        newer.insert(
            "setup.cfg".into(),
            "classifiers =\n    Programming Language :: Python :: 3.10\n    Programming Language :: Python :: 3.11\n\
             python_requires = >=3.10\n"
                .into(),
        );
        assert_eq!(DjangoRunner.infer(&newer, date, &runtimes).unwrap().runtime, "3.11");
    }
}
