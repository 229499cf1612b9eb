//! Which test framework a Python project runs its tests with, decided once per
//! environment commit from what the project itself runs ([`detect`]), unless its
//! `configs/repos/<owner>__<name>.toml` says `test_framework = "..."`. Each
//! framework is one [`crate::ecosystem::Ecosystem`] ([`TestFramework::ecosystem`]).
//!
//! The decision, first match wins:
//! 1. Django's own runner: `tests/runtests.py` next to a `django/` package (the
//!    Django repository itself; projects that merely use Django run pytest or
//!    `manage.py test`, which this does not cover);
//! 2. SymPy's own runner: `bin/test` next to a `sympy/` package;
//! 3. plain unittest: pytest appears in none of the project's requirement, config
//!    and CI files, and either those files run unittest (`python -m unittest`,
//!    `unittest discover`, `setup.py test`) or the project's test files (a few read)
//!    are all `unittest.TestCase` modules without a pytest import;
//! 4. else pytest (which also runs unittest-style tests).
//!
//! Pure over the paths and a reader of file contents; the stage reads the mirror.

use serde::{Deserialize, Serialize};

use crate::ecosystem::Ecosystem;

crate::spelled::spelled_enum! {
    /// A Python test framework (`test_framework` in per-repository configs).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum TestFramework {
        Pytest => "pytest",
        Unittest => "unittest",
        Django => "django",
        Sympy => "sympy",
    }
}

impl TestFramework {
    /// The ecosystem that runs this framework's tests.
    pub fn ecosystem(self) -> &'static dyn Ecosystem {
        match self {
            TestFramework::Pytest => &super::Pytest,
            TestFramework::Unittest => &super::unittest::Unittest,
            TestFramework::Django => &super::django::DjangoRunner,
            TestFramework::Sympy => &super::sympy::SympyRunner,
        }
    }
}

/// At most this many test files are read to see whether they are unittest modules.
const SAMPLED_TEST_FILES: usize = 5;

/// Whether `path` is one of the files that say how a project runs its tests
/// (requirement, config and CI files, Makefile, nox/tox).
pub fn says_how_tests_run(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let top_level = !path.contains('/');
    super::infer::reads(path)
        || (top_level && matches!(name, "Makefile" | "noxfile.py" | "pyproject.toml" | "runtests.py"))
        || (path.starts_with(".circleci/") && (name.ends_with(".yml") || name.ends_with(".yaml")))
        || (top_level && matches!(name, ".gitlab-ci.yml" | "appveyor.yml" | "azure-pipelines.yml"))
}

fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// What the files that say how tests run (requirement, config, CI) say of Python's runners.
struct Runners {
    mentions_pytest: bool,
    runs_unittest: bool,
}

fn runners(paths: &[String], read: &mut dyn FnMut(&str) -> Option<String>) -> Runners {
    let mut runners = Runners { mentions_pytest: false, runs_unittest: false };
    for path in paths.iter().filter(|path| says_how_tests_run(path)) {
        let Some(text) = read(path) else { continue };
        let text = text.to_lowercase();
        runners.mentions_pytest |= text.contains("pytest") || text.contains("py.test");
        runners.runs_unittest |= text.contains("-m unittest")
            || text.contains("unittest discover")
            || text.contains("setup.py test")
            || text.contains("test_suite=")
            || text.contains("test_suite =");
    }
    runners
}

/// Whether the project is a Rust project that maturin packages for Python (ruff:
/// `build-backend = "maturin"` beside a root `Cargo.toml`) and none of its requirement,
/// config or CI files runs a Python test: its tests are cargo's. SWE-bench Multilingual's
/// ruff rows are Rust tasks; taken for Python they were built as a wheel and dropped.
/// Bindings with Python tests of their own (pydantic-core, orjson: pytest in their
/// config or their CI) stay Python.
pub fn is_rust_packaged_for_python(paths: &[String], read: &mut dyn FnMut(&str) -> Option<String>) -> bool {
    let has = |wanted: &str| paths.iter().any(|path| path == wanted);
    if !has("Cargo.toml") || !has("pyproject.toml") {
        return false;
    }
    let built_by_maturin = read("pyproject.toml").is_some_and(|text| {
        text.lines().any(|line| {
            let line = line.replace(' ', "");
            line.starts_with("build-backend=") && line.contains("\"maturin\"")
        })
    });
    if !built_by_maturin {
        return false;
    }
    let Runners { mentions_pytest, runs_unittest } = runners(paths, read);
    !mentions_pytest && !runs_unittest
}

/// The project's test framework from its paths at the environment commit, reading
/// files through `read` (see the module's text for the rules).
pub fn detect(paths: &[String], read: &mut dyn FnMut(&str) -> Option<String>) -> TestFramework {
    let has = |wanted: &str| paths.iter().any(|path| path == wanted);
    let has_package = |name: &str| paths.iter().any(|path| path == &format!("{name}/__init__.py"));
    if has("tests/runtests.py") && has_package("django") {
        return TestFramework::Django;
    }
    if has("bin/test") && has_package("sympy") {
        return TestFramework::Sympy;
    }
    let Runners { mentions_pytest, runs_unittest } = runners(paths, read);
    if mentions_pytest {
        return TestFramework::Pytest;
    }
    if runs_unittest {
        return TestFramework::Unittest;
    }
    let mut sampled = 0;
    for path in paths.iter().filter(|path| is_test_file(path)).take(SAMPLED_TEST_FILES) {
        let Some(text) = read(path) else { continue };
        let unittest = text.contains("unittest.TestCase")
            || (text.contains("import unittest") && text.contains("TestCase"))
            || text.contains("from unittest import TestCase");
        if !unittest || text.contains("import pytest") {
            return TestFramework::Pytest;
        }
        sampled += 1;
    }
    if sampled > 0 { TestFramework::Unittest } else { TestFramework::Pytest }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn decide(files: &[(&str, &str)]) -> TestFramework {
        let paths: Vec<String> = files.iter().map(|(path, _)| path.to_string()).collect();
        let texts: BTreeMap<String, String> =
            files.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect();
        detect(&paths, &mut |path| texts.get(path).cloned())
    }

    #[test]
    fn django_and_sympy_are_recognised_by_their_own_runners() {
        let django = decide(&[
            ("setup.py", "setup()"),
            ("django/__init__.py", ""),
            ("tests/runtests.py", "#!/usr/bin/env python"),
            ("tox.ini", "commands = {envpython} runtests.py"),
        ]);
        assert_eq!(django, TestFramework::Django);
        // A project that only uses Django (no django/ package of its own) is not Django's runner.
        let user = decide(&[("setup.py", "install_requires=['django']"), ("tests/runtests.py", "")]);
        assert_ne!(user, TestFramework::Django);
        let sympy = decide(&[
            ("setup.py", "setup()"),
            ("sympy/__init__.py", ""),
            ("bin/test", "#!/usr/bin/env python"),
            (".travis.yml", "script: pytest"),
        ]);
        assert_eq!(sympy, TestFramework::Sympy, "the own runner wins over a pytest mention");
    }

    #[test]
    fn unittest_needs_a_project_that_never_mentions_pytest() {
        let ci = ".github/workflows/ci.yml";
        assert_eq!(
            decide(&[("setup.py", "setup()"), (ci, "run: python -m unittest discover -s tests")]),
            TestFramework::Unittest
        );
        assert_eq!(
            decide(&[("setup.py", "setup()"), (ci, "run: python -m unittest\n- run: pip install pytest-cov")]),
            TestFramework::Pytest,
            "pytest anywhere wins"
        );
        assert_eq!(decide(&[("setup.py", "setup(test_suite='tests')")]), TestFramework::Unittest);
        assert_eq!(
            decide(&[("setup.py", "setup()"), ("requirements-dev.txt", "pytest>=7"), (ci, "run: make test")]),
            TestFramework::Pytest
        );
    }

    #[test]
    fn without_a_runner_named_the_test_files_decide() {
        let case = "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n";
        assert_eq!(
            decide(&[("setup.py", "setup()"), ("tests/test_a.py", case), ("tests/test_b.py", case)]),
            TestFramework::Unittest
        );
        let mixed = "import pytest\nimport unittest\nclass T(unittest.TestCase): pass\n";
        assert_eq!(
            decide(&[("setup.py", "setup()"), ("tests/test_a.py", case), ("tests/test_b.py", mixed)]),
            TestFramework::Pytest
        );
        assert_eq!(
            decide(&[("setup.py", "setup()"), ("tests/test_a.py", "def test_a():\n    assert 1\n")]),
            TestFramework::Pytest
        );
        assert_eq!(decide(&[("setup.py", "setup()")]), TestFramework::Pytest, "no tests at all: the default");
    }

    #[test]
    fn the_override_is_spelled_in_lowercase() {
        #[derive(Deserialize)]
        struct Holder {
            test_framework: TestFramework,
        }
        let holder: Holder = toml::from_str("test_framework = \"django\"").unwrap();
        assert_eq!(holder.test_framework, TestFramework::Django);
        assert!(toml::from_str::<Holder>("test_framework = \"nose\"").is_err());
        let names: Vec<&str> =
            [TestFramework::Pytest, TestFramework::Unittest, TestFramework::Django, TestFramework::Sympy]
                .into_iter()
                .map(|framework| framework.ecosystem().name())
                .collect();
        assert_eq!(names, ["python", "python-unittest", "python-django", "python-sympy"]);
    }
}
