//! A repository's overrides, `configs/repos/<owner>__<name>.toml`: its environment per
//! version range, its test framework, and how extract reads it (which files are
//! tests, where its version comes from). Read per task by validate and per repository
//! by extract; `validate --write-config` writes environments into them.
//!
//! Which files are tests ([`Compat`], [`default_test_patterns`]) is also
//! `[extract]`'s in `configs/pipeline.toml`, whose type is extract's own.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::RepoSlug;
use crate::settings::{ConfigError, invalid};

/// Per-repository overrides, `configs/repos/<owner>__<name>.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    pub extract: RepoExtractConfig,
    /// The test framework (`pytest`, `unittest`, `django`, `sympy`), when detection
    /// from the project's files (see `ecosystem::python::framework`) gets it wrong.
    pub test_framework: Option<super::TestFramework>,
    /// Environments by version; the first entry whose `versions` holds the task's
    /// version (or `*`) wins.
    pub environment: Vec<RepoEnvironment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RepoExtractConfig {
    pub compat: Option<Compat>,
    pub test_patterns: Option<Vec<String>>,
    /// A regex over tag names with two groups, major and minor.
    pub version_tag_pattern: Option<String>,
    /// A file holding the version string, read at base_commit when no tag fits.
    pub version_file: Option<String>,
    /// Which source of the version is tried first: `tag` (the default) or `file`
    /// (for projects whose version string names the coming release, e.g. astroid).
    pub version_source: Option<VersionSource>,
}

/// Where a candidate's `major.minor` version comes from first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VersionSource {
    /// The nearest release tag reachable from base_commit, else the version file.
    #[default]
    Tag,
    /// The version string in the package's files at base_commit, else the tag.
    File,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RepoEnvironment {
    /// `major.minor` versions this entry is for; `*` for all.
    pub versions: Vec<String>,
    pub runtime: Option<String>,
    pub system_packages: Vec<String>,
    pub pre_install: Vec<String>,
    pub install: Vec<String>,
    pub extra_packages: Vec<String>,
    pub test_command: Option<String>,
    pub test_path_patterns: Vec<String>,
    /// The ladder rung that found this environment, when `validate --write-config`
    /// wrote the entry: released as the tasks' `environment_rung`.
    pub rung: Option<crate::model::Rung>,
}

impl RepoConfig {
    /// The overrides of `repo`, `<repos_dir>/<owner>__<name>.toml`, checked; the
    /// defaults when it has no file.
    pub fn read(repos_dir: &Path, repo: &RepoSlug) -> Result<RepoConfig, ConfigError> {
        let path = repos_dir.join(format!("{}.toml", repo.double_underscore()));
        let Some(config) = crate::settings::read_optional::<RepoConfig>(&path)? else {
            return Ok(RepoConfig::default());
        };
        config.check(&path.display().to_string())?;
        Ok(config)
    }

    /// The values serde cannot check: patterns, versions, runtime keys.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        if let Some(patterns) = &self.extract.test_patterns {
            check_test_patterns(origin, "extract.test_patterns", patterns)?;
        }
        if let Some(pattern) = &self.extract.version_tag_pattern {
            let regex = regex::Regex::new(pattern)
                .map_err(|error| invalid(origin, "extract.version_tag_pattern", error.to_string()))?;
            if regex.captures_len() < 3 {
                return Err(invalid(
                    origin,
                    "extract.version_tag_pattern",
                    "needs two capture groups, major and minor, e.g. `^v?(\\d+)\\.(\\d+)`",
                ));
            }
        }
        for (index, environment) in self.environment.iter().enumerate() {
            if environment.versions.is_empty() {
                return Err(invalid(
                    origin,
                    &format!("environment[{index}].versions"),
                    "list the `major.minor` versions this entry is for, or `*`",
                ));
            }
            for version in &environment.versions {
                if version != "*" && !is_major_minor(version) {
                    return Err(invalid(
                        origin,
                        &format!("environment[{index}].versions"),
                        format!("`{version}` is neither `*` nor of the form `1.2`"),
                    ));
                }
            }
            if let Some(runtime) = &environment.runtime {
                if !super::runtimes::is_runtime_key(runtime) {
                    return Err(invalid(
                        origin,
                        &format!("environment[{index}].runtime"),
                        format!("`{runtime}` is not a runtime version of the forms {}", super::runtimes::key_forms()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Which rule decides that a file is a test file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Compat {
    /// Path components (`tests/`, `test_*.py`, ...) from `test_patterns`.
    #[default]
    Native,
    /// SWE-bench's rule: the path contains `test`; `patch` keeps only `.py` files.
    Swebench,
}

/// Test files of every language at once (a repository is rarely of two): Python's
/// `tests/`, `test_*.py`, `conftest.py`; Go's `_test.go` files and `testdata/`; Rust's
/// integration tests (`tests/`, which also holds an integration-test crate's files),
/// `benches/`, test modules in files of their own (`tests.rs`, `test.rs`; examples
/// are not tests) and insta's snapshots (`snapshots/*.snap`); JavaScript's and
/// TypeScript's `__tests__/`, `*.test.*`, `*.spec.*`
/// (their `test/` and `tests/` are everyone's). Rust's inline `#[cfg(test)]` modules live in source files, which
/// stay in `patch` (decision: a file is in one patch or the other, and splitting a
/// file's hunks would hand the task a gold patch that does not compile on its own).
pub fn default_test_patterns() -> Vec<String> {
    [
        "**/test/**",
        "**/tests/**",
        "**/testing/**",
        "**/test_*.py",
        "**/*_test.py",
        "**/*_tests.py",
        "**/conftest.py",
        "**/*_test.go",
        "**/testdata/**",
        "**/benches/**",
        "**/__tests__/**",
        "**/__snapshots__/**",
        "**/*.test.*",
        "**/*.spec.*",
        "**/tests.rs",
        "**/test.rs",
        "**/snapshots/*.snap",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// Test-path globs (`extract.test_patterns`, here or in `[extract]`): at least one, each valid.
pub fn check_test_patterns(origin: &str, key: &str, patterns: &[String]) -> Result<(), ConfigError> {
    if patterns.is_empty() {
        return Err(invalid(origin, key, "needs at least one pattern"));
    }
    for pattern in patterns {
        globset::Glob::new(pattern).map_err(|error| invalid(origin, key, error.to_string()))?;
    }
    Ok(())
}

fn is_major_minor(text: &str) -> bool {
    let mut parts = text.split('.');
    let numeric = |part: Option<&str>| part.is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    numeric(parts.next()) && numeric(parts.next()) && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `repos/` folder holding `files` (name, text); read while the guard lives.
    fn repos_dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir(dir.path().join("repos")).unwrap();
        for (name, text) in files {
            fs_err::write(dir.path().join("repos").join(name), text).unwrap();
        }
        dir
    }

    fn read(dir: &tempfile::TempDir, repo: &str) -> Result<RepoConfig, ConfigError> {
        RepoConfig::read(&dir.path().join("repos"), &repo.parse().unwrap())
    }

    #[test]
    fn repo_overrides_are_read_and_checked() {
        let dir = repos_dir_with(&[
            (
                "psf__requests.toml",
                "[extract]\ncompat = \"swebench\"\n\n[[environment]]\nversions = [\"2.0\"]\nruntime = \"3.9\"\n",
            ),
            ("a__b.toml", "[[environment]]\nversions = [\"two\"]\n"),
        ]);
        let requests = read(&dir, "psf/requests").unwrap();
        assert_eq!(requests.extract.compat, Some(Compat::Swebench));
        assert_eq!(requests.environment[0].runtime.as_deref(), Some("3.9"));
        assert_eq!(read(&dir, "x/none").unwrap(), RepoConfig::default());
        let error = read(&dir, "a/b").unwrap_err().to_string();
        assert!(error.contains("a__b.toml") && error.contains("environment[0].versions"), "{error}");
    }

    #[test]
    fn a_runtime_is_checked_against_the_catalogue_and_the_message_lists_its_languages() {
        let dir = repos_dir_with(&[("a__b.toml", "[[environment]]\nversions = [\"1.0\"]\nruntime = \"java17\"\n")]);
        let error = read(&dir, "a/b").unwrap_err().to_string();
        assert!(error.contains("environment[0].runtime") && error.contains("`jdk21` (java)"), "{error}");
    }

    /// A value refused in a repository's file and its whole message, from
    /// `tests/fixtures/config/refused.toml` (as `config`'s test for
    /// `configs/pipeline.toml`).
    #[derive(Deserialize)]
    struct Refused {
        file: String,
        message: String,
    }

    #[derive(Deserialize)]
    struct Refusals {
        repository: Vec<Refused>,
    }

    #[test]
    fn every_refused_value_keeps_its_message_byte_for_byte() {
        let refusals: Refusals = toml::from_str(include_str!("../../tests/fixtures/config/refused.toml")).unwrap();
        assert!(refusals.repository.len() > 10, "every check has its case");
        let mut wrong = Vec::new();
        for Refused { file: text, message: expected } in &refusals.repository {
            let dir = repos_dir_with(&[("a__b.toml", text)]);
            let actual = read(&dir, "a/b").unwrap_err().to_string().replace(&dir.path().display().to_string(), "<dir>");
            if actual != *expected {
                wrong.push(format!("{text:?}\n  {actual:?}"));
            }
        }
        assert!(wrong.is_empty(), "messages changed:\n{}", wrong.join("\n"));
    }
}
