//! Which changed files are test files: the rule that splits a PR's diff into `patch`
//! and `test_patch`.
//!
//! Two rules: native (glob patterns over the whole path, by default path components
//! such as `tests/` and names such as `test_*.py`; configurable per repository) and
//! SWE-bench's compatibility rule (a path is a test path when it contains `test`, so
//! `contest.py` counts, and `patch` keeps only `.py` files). This module only
//! classifies paths; it reads no files.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::ecosystem::repo_config::Compat;

/// A compiled test-path rule.
#[derive(Debug, Clone)]
pub enum TestPathRule {
    /// Globs matched against the whole path (`/`-separated, relative to the root).
    Native(GlobSet),
    /// SWE-bench's substring rule.
    Swebench,
}

#[derive(Debug, thiserror::Error)]
#[error("invalid test path pattern `{pattern}`: {source}; fix `extract.test_patterns` in the config")]
pub struct PatternError {
    pub pattern: String,
    #[source]
    pub source: globset::Error,
}

impl TestPathRule {
    pub fn new(compat: Compat, patterns: &[String]) -> Result<TestPathRule, PatternError> {
        match compat {
            Compat::Swebench => Ok(TestPathRule::Swebench),
            Compat::Native => {
                let mut builder = GlobSetBuilder::new();
                for pattern in patterns {
                    let glob =
                        Glob::new(pattern).map_err(|source| PatternError { pattern: pattern.clone(), source })?;
                    builder.add(glob);
                }
                let set = builder.build().map_err(|source| PatternError { pattern: patterns.join(", "), source })?;
                Ok(TestPathRule::Native(set))
            }
        }
    }

    /// Whether a changed file at `path` belongs to the test patch.
    pub fn is_test(&self, path: &str) -> bool {
        match self {
            TestPathRule::Swebench => path.contains("test"),
            TestPathRule::Native(set) => set.is_match(path),
        }
    }

    /// Whether a non-test file is kept in `patch`: SWE-bench keeps only `.py` files.
    pub fn keeps_in_patch(&self, path: &str) -> bool {
        match self {
            TestPathRule::Swebench => path.ends_with(".py"),
            TestPathRule::Native(_) => true,
        }
    }
}

/// Whether a non-test file counts as a change to the source (for the rule that a
/// candidate must change at least one source file): documentation and changelogs do
/// not.
pub fn is_source_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let in_docs = lower
        .split('/')
        .rev()
        .skip(1)
        .any(|component| matches!(component, "doc" | "docs" | "changelog.d" | "changes" | "news"));
    let prose = [".md", ".rst", ".txt", ".adoc"].iter().any(|extension| lower.ends_with(extension));
    let file_name = lower.rsplit('/').next().unwrap_or(&lower);
    let meta = matches!(file_name, "license" | "authors" | "contributors" | ".gitignore" | ".mailmap");
    !(in_docs || prose || meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::repo_config::default_test_patterns;

    fn native() -> TestPathRule {
        TestPathRule::new(Compat::Native, &default_test_patterns()).unwrap()
    }

    #[test]
    fn native_rule_matches_test_components_and_test_file_names() {
        let rule = native();
        for path in [
            "tests/test_api.py",
            "test/rules/std_test.py",
            "src/pkg/tests/data/input.sql",
            "pkg/testing/fixtures.py",
            "pkg/test_utils.py",
            "pkg/core_test.py",
            "pkg/core_tests.py",
            "conftest.py",
            "pkg/conftest.py",
            "test_top.py",
            "core/stringx/strings_test.go",
            "core/conf/testdata/config.yaml",
            "tests/test_buf.rs",
            "benches/bytes.rs",
            "src/slice/test.rs",
            "src/parser/tests.rs",
            "test_suite/tests/ui/remote/getter.stderr",
            "crates/ruff_linter/src/rules/pie/snapshots/ruff_linter__rules__pie__tests__PIE800.py.snap",
        ] {
            assert!(rule.is_test(path), "{path} should be a test path");
        }
        for path in [
            "src/contest.py",
            "pkg/testimony.py",
            "pkg/attestation/core.py",
            "docs/testing.rst",
            "setup.py",
            "pkg/latest/x.py",
            "pkg/mytests/x.py",
            "core/stringx/strings.go",
            "src/buf/buf_impl.rs",
            "examples/demo.rs",
            "src/testing_utils.rs",
        ] {
            assert!(!rule.is_test(path), "{path} should not be a test path");
        }
    }

    #[test]
    fn swebench_rule_is_a_substring_test_and_keeps_only_python_sources() {
        let rule = TestPathRule::new(Compat::Swebench, &[]).unwrap();
        assert!(rule.is_test("src/contest.py"), "SWE-bench's rule counts `contest.py`");
        assert!(rule.is_test("pkg/latest/x.py"));
        assert!(rule.is_test("test/fixtures/a.sql"));
        assert!(!rule.is_test("src/core.py"));
        assert!(!rule.is_test("Tests/x.py"), "the substring test is case-sensitive");
        assert!(rule.keeps_in_patch("src/core.py"));
        assert!(!rule.keeps_in_patch("CHANGELOG.md"));
        assert!(!rule.keeps_in_patch("src/dialect.sql"));
        assert!(native().keeps_in_patch("CHANGELOG.md"));
    }

    #[test]
    fn custom_patterns_replace_the_defaults() {
        let rule = TestPathRule::new(Compat::Native, &["spec/**".to_string(), "**/*_spec.py".to_string()]).unwrap();
        assert!(rule.is_test("spec/a.py"));
        assert!(rule.is_test("lib/x_spec.py"));
        assert!(!rule.is_test("tests/test_a.py"));
        assert!(TestPathRule::new(Compat::Native, &["[bad".to_string()]).is_err());
    }

    #[test]
    fn documentation_is_not_source() {
        for path in ["CHANGELOG.md", "docs/index.rst", "doc/api/x.py", "README.txt", "changelog.d/1.bugfix", "LICENSE"]
        {
            assert!(!is_source_path(path), "{path}");
        }
        for path in ["src/pkg/core.py", "setup.py", "pkg/data/schema.json", "Makefile", "pkg/docs.py"] {
            assert!(is_source_path(path), "{path}");
        }
    }
}
