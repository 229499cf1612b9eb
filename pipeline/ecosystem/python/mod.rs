//! Python projects tested with pytest: recognised by their packaging files
//! (pyproject.toml, setup.py, setup.cfg, requirements*.txt), environments inferred
//! from those and the CI files ([`infer`]), built as a venv with uv and dependencies
//! as of the task's date ([`image`]), tests run with pytest writing JUnit XML, read
//! back by [`results`] (the `-rA` summary when no report was written).
//!
//! Projects whose tests run under another framework ([`framework`]: plain
//! [`unittest`], Django's runner [`django`], SymPy's [`sympy`]) share this
//! environment and image, each with its own test command, selection and results.

/// The part of an [`Ecosystem`] impl that every other Python test framework shares
/// with [`Pytest`]: the language, the base images, the environment image, the build
/// tools and the ladder. Such a framework is found only through Pytest's
/// test-framework detection, never by paths alone. Its spec is Pytest's with the
/// framework's name and `test_command`, then changed by `adapt` where one is given
/// (`fn(&RepoFiles, &[String], EnvironmentSpec) -> EnvironmentSpec`).
macro_rules! shares_pytest_environment {
    (test_command: $test_command:expr $(, adapt: $adapt:expr)?) => {
        fn infer(
            &self,
            files: &$crate::ecosystem::RepoFiles,
            date: chrono::DateTime<chrono::Utc>,
            runtimes: &[String],
        ) -> Result<$crate::model::EnvironmentSpec, $crate::ecosystem::InferError> {
            let pytest = $crate::ecosystem::python::infer::infer(files, date, runtimes)?;
            let mut spec = $crate::model::EnvironmentSpec {
                ecosystem: self.name().into(),
                test_command: $test_command.into(),
                ..pytest
            };
            // Its own test command takes none of pytest's options from CI.
            spec.ci.retain(|line| !line.starts_with($crate::ecosystem::python::infer::PYTEST_OPTIONS_FROM_CI));
            $(let spec = $adapt(files, runtimes, spec);)?
            Ok(spec)
        }

        fn language(&self) -> &'static str {
            "python"
        }

        fn recognises(&self, _paths: &[String]) -> bool {
            false
        }

        fn default_pre_install(&self) -> Vec<String> {
            $crate::ecosystem::python::Pytest.default_pre_install()
        }

        fn runtime_needed(
            &self,
            files: &$crate::ecosystem::RepoFiles,
            date: chrono::DateTime<chrono::Utc>,
            runtimes: &[String],
        ) -> Option<$crate::ecosystem::RuntimeNeed> {
            $crate::ecosystem::python::Pytest.runtime_needed(files, date, runtimes)
        }

        /// Pytest's runtimes, inference, image and scripts' setup, which a
        /// framework's own methods build on.
        fn parts(&self) -> &'static $crate::ecosystem::Parts {
            $crate::ecosystem::python::Pytest.parts()
        }

        fn next_rung(
            &self,
            failed: &$crate::ecosystem::FailedRung<'_>,
        ) -> Option<$crate::model::EnvironmentSpec> {
            $crate::ecosystem::python::Pytest.next_rung(failed)
        }

        fn packages_to_add(&self, runs: &$crate::ecosystem::RunsSeen<'_>) -> Vec<String> {
            $crate::ecosystem::python::Pytest.packages_to_add(runs)
        }

        fn missing_modules(&self, log: &str) -> Vec<String> {
            $crate::ecosystem::python::Pytest.missing_modules(log)
        }

        fn network_reached_for(&self, log: &str) -> Option<String> {
            $crate::ecosystem::python::Pytest.network_reached_for(log)
        }

        fn runtime_label(&self, runtime: &str) -> String {
            $crate::ecosystem::python::Pytest.runtime_label(runtime)
        }

        fn measures_change_coverage(&self) -> bool {
            true
        }
    };
}
use shares_pytest_environment;

pub mod defined_tests;
pub mod django;
pub mod framework;
pub mod image;
pub mod infer;
pub mod ladder;
pub mod missing;
pub mod results;
pub mod runtimes;
pub mod sympy;
pub mod unittest;

use chrono::{DateTime, Utc};

use super::{Ecosystem, FailedRung, ParsedRun, Parts, RepoFiles, RunsSeen, RuntimeNeed};
use crate::git::diff::files_changed_by;
use crate::model::EnvironmentSpec;

/// Python with pytest.
pub struct Pytest;

/// The Python files a diff creates or changes that can be run as tests: all but
/// `conftest.py` and `__init__.py`.
pub fn python_test_files(diff: &str) -> Vec<String> {
    files_changed_by(diff)
        .into_iter()
        .filter(|file| file.ends_with(".py"))
        .filter(|file| {
            let name = file.rsplit('/').next().unwrap_or(file);
            name != "conftest.py" && name != "__init__.py"
        })
        .collect()
}

/// The version string handed to setuptools-scm (there is no `.git` in `/testbed`):
/// `1.2` -> `1.2.0`.
pub fn pretend_version(version: &str) -> String {
    let clean: String = version.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    match clean.matches('.').count() {
        0 if clean.is_empty() => "0.0.0".to_string(),
        0 => format!("{clean}.0.0"),
        1 => format!("{clean}.0"),
        _ => clean,
    }
}

impl Ecosystem for Pytest {
    fn name(&self) -> &'static str {
        "python"
    }

    fn project_files(&self) -> &'static str {
        "Python: pyproject.toml, setup.py, setup.cfg, requirements*.txt"
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| {
            let top_level = !path.contains('/');
            top_level
                && (matches!(path.as_str(), "pyproject.toml" | "setup.py" | "setup.cfg")
                    || (path.ends_with(".txt") && path.contains("requirements")))
        })
    }

    /// A requirements file alone: projects of other languages keep one for their
    /// docs or tools (urfave/cli's `mkdocs-requirements.txt` beside its `go.mod`).
    fn recognises_only_by_shared_files(&self, paths: &[String]) -> bool {
        !paths.iter().any(|path| matches!(path.as_str(), "pyproject.toml" | "setup.py" | "setup.cfg"))
    }

    /// The project's test framework ([`framework::detect`]), or cargo's for a Rust
    /// project packaged for Python ([`framework::is_rust_packaged_for_python`]), or C's
    /// for a build in a folder tested by its own harness ([`crate::ecosystem::c::harness::claims`]).
    fn by_test_framework(
        &self,
        paths: &[String],
        read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<&'static dyn Ecosystem> {
        if framework::is_rust_packaged_for_python(paths, read) {
            return Some(&crate::ecosystem::rust::CargoTest);
        }
        // A C build in a folder tested by its own harness, whose root pyproject.toml
        // configures linters (micropython).
        if crate::ecosystem::c::harness::claims(paths, read) {
            return Some(&crate::ecosystem::c::MakeCheck);
        }
        Some(framework::detect(paths, read).ecosystem())
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: python_test_files, testbed_copy: image::TESTBED_COPY)
    }

    fn runtime_needed(&self, files: &RepoFiles, date: DateTime<Utc>, runtimes: &[String]) -> Option<RuntimeNeed> {
        infer::runtime_needed(files, date, runtimes)
    }

    fn default_pre_install(&self) -> Vec<String> {
        vec![format!("uv pip install --upgrade {}", infer::PRE_INSTALL_TOOLS)]
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        format!("{test_command} --junitxml={report} {files}")
    }

    /// JUnit XML; a report it cannot read counts as none (the `-rA` summary then).
    fn parse_report(&self, report: &str, test_files: &[String]) -> ParsedRun {
        results::parse_junit(report, test_files).unwrap_or_default()
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        results::parse_pytest_log(log)
    }

    /// A session that stops with an `INTERNALERROR` (the bug under test can crash
    /// pytest itself while it reports) never prints its `-rA` summary: SWE-bench's
    /// harness sees no result of that run, so the passes its report holds are void.
    /// Only the session's own: pytest prints its terminal summary's sections (`-rA`'s
    /// `short test summary info`, `PASSES`, `FAILURES`) only for a session that did
    /// not stop with an `INTERNALERROR` (it still prints the counts line), so one of
    /// them after the last `INTERNALERROR` says that was a nested session's, printed
    /// in a test's captured output (pytest's own `test_internal_error` runs one:
    /// held-out pytest-5692, whose passes after the fix were voided, 2026-12-07).
    fn interruption(&self, log: &str) -> Option<super::Interruption> {
        static SUMMARY_SECTION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"^=+ (short test summary info|PASSES|FAILURES|ERRORS|warnings summary) =+$")
                .expect("valid regex")
        });
        let lines: Vec<&str> = log.lines().collect();
        let at = lines.iter().rposition(|line| line.starts_with("INTERNALERROR>"))?;
        if lines[at..].iter().any(|line| SUMMARY_SECTION.is_match(line.trim_end())) {
            return None;
        }
        let last = lines
            .iter()
            .filter_map(|line| line.strip_prefix("INTERNALERROR>"))
            .map(|line| line.trim())
            .rfind(|line| !line.is_empty())?;
        Some(super::Interruption {
            evidence: format!("pytest stopped with an INTERNALERROR ({last})"),
            voids_passes: true,
        })
    }

    /// `-rA` at least: SWE-bench's `parse_log_pytest` reads the `-rA` summary.
    fn harness_test_command(&self, test_command: &str) -> String {
        if test_command.split_whitespace().any(|word| word == "-rA") {
            test_command.to_string()
        } else {
            format!("{test_command} -rA")
        }
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_pytest"
    }

    fn next_rung(&self, failed: &FailedRung<'_>) -> Option<EnvironmentSpec> {
        ladder::next_rung(failed.tried, &failed.failure, failed.context)
    }

    fn packages_to_add(&self, runs: &RunsSeen<'_>) -> Vec<String> {
        missing::packages_to_add(runs)
    }

    fn missing_modules(&self, log: &str) -> Vec<String> {
        missing::modules_not_found(log)
    }

    /// A doctest of a source module whose example the patch adds ([`defined_tests`]).
    fn defined_by_the_patch(&self, id: &str, patch: &str) -> bool {
        defined_tests::defines_test(id, patch)
    }

    /// A line that a failure for want of the network would print
    /// ([`results::network_evidence`]).
    fn network_reached_for(&self, log: &str) -> Option<String> {
        results::network_evidence(log)
    }

    fn runtime_label(&self, runtime: &str) -> String {
        format!("Python {runtime}")
    }

    fn default_test_command(&self) -> &'static str {
        "pytest -rA"
    }

    /// pytest's `-x`.
    fn stop_at_first_failure(&self, test_command: &str) -> String {
        if test_command.split_whitespace().any(|word| word == "-x" || word == "--exitfirst") {
            test_command.to_string()
        } else {
            format!("{test_command} -x")
        }
    }

    fn measures_change_coverage(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_stopped_by_an_internalerror_keeps_only_its_failures() {
        let report = r#"<testsuites><testsuite name="pytest"><testcase classname="t.test_a" file="t/test_a.py" name="test_ok"/><testcase classname="t.test_a" file="t/test_a.py" name="test_bad"><error message="boom"/></testcase></testsuite></testsuites>"#;
        let files = ["t/test_a.py".to_string()];
        let crashed = "t/test_a.py .E\nINTERNALERROR> Traceback (most recent call last):\nINTERNALERROR>   File \"x.py\", line 1\nINTERNALERROR> RuntimeError\nINTERNALERROR> \n";
        let (run, _) = Pytest.parse_results(Some(report), crashed, &files);
        assert_eq!(run.tests.keys().collect::<Vec<_>>(), ["t/test_a.py::test_bad"], "the pass is void: {run:?}");
        assert_eq!(run.interrupted.as_deref(), Some("pytest stopped with an INTERNALERROR (RuntimeError)"));
        let (run, _) = Pytest.parse_results(Some(report), "t/test_a.py .E\n", &files);
        assert_eq!(run.tests.len(), 2, "a session that ended normally keeps its passes");
        assert_eq!(run.interrupted, None);
        // The session's own INTERNALERROR, then the counts line, which pytest prints
        // after one too.
        let with_counts = format!("{crashed}==== 1 passed, 1 error in 0.12s ====\n");
        let (run, _) = Pytest.parse_results(Some(report), &with_counts, &files);
        assert!(run.interrupted.is_some(), "{run:?}");
        // A nested session's INTERNALERROR in a test's captured output, the outer
        // session's terminal summary after it (old and new pytest's forms).
        for section in [
            "=========================== short test summary info ============================",
            "==================================== PASSES ====================================",
            "==== FAILURES ====",
        ] {
            let nested = format!("{crashed}{section}\nPASSED t/test_a.py::test_ok\n==== 1 passed in 0.12s ====\n");
            let (run, _) = Pytest.parse_results(Some(report), &nested, &files);
            assert_eq!(run.interrupted, None, "{section}");
            assert_eq!(run.tests.len(), 2, "{section}");
        }
    }

    #[test]
    fn pretend_versions_have_three_parts() {
        for (version, pretended) in
            [("2.1", "2.1.0"), ("0.13", "0.13.0"), ("3", "3.0.0"), ("", "0.0.0"), ("1.2.3rc1", "1.2.3")]
        {
            assert_eq!(pretend_version(version), pretended);
        }
    }

    #[test]
    fn an_existing_summary_flag_is_not_repeated() {
        assert_eq!(Pytest.harness_test_command("pytest -rA -x"), "pytest -rA -x");
        assert_eq!(Pytest.harness_test_command("pytest"), "pytest -rA");
    }

    #[test]
    fn python_projects_are_recognised_by_their_packaging_files() {
        crate::ecosystem::fixtures::assert_recognition(
            &Pytest,
            &[&["README.md", "setup.py"], &["requirements-dev.txt"]],
            &[&["Cargo.toml", "docs/setup.py"]],
        );
    }

    #[test]
    fn test_files_leave_out_conftest_and_init() {
        let diff = "--- a/tests/conftest.py\n+++ b/tests/conftest.py\n--- a/tests/__init__.py\n+++ b/tests/__init__.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n--- a/docs/x.rst\n+++ b/docs/x.rst\n";
        assert_eq!(python_test_files(diff), vec!["tests/test_a.py".to_string()]);
    }
}
