//! Extract's settings: `[extract]` in the config ([`ExtractConfig`], with its checks),
//! and one repository's resolved settings, which add its file in `configs/repos/`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ExtractSettings;
use crate::ecosystem::repo_config::{Compat, RepoConfig, check_test_patterns, default_test_patterns};
use crate::model::RepoSlug;
use crate::settings::ConfigError;

/// `[extract]` in `configs/pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractConfig {
    pub compat: Compat,
    /// Glob patterns of test files (native mode), matched against the whole path.
    pub test_patterns: Vec<String>,
    /// PRs changing more files than this are dropped (`too_many_files`).
    pub max_files_changed: usize,
    /// PRs changing more lines than this are dropped (`too_many_lines`).
    pub max_lines_changed: usize,
    /// Also trust the API's own closing references, not only the closing keywords.
    pub use_api_closing_references: bool,
    /// Threads doing git work (diffs, merge-bases); 0 = one per core.
    pub workers: usize,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            compat: Compat::Native,
            test_patterns: default_test_patterns(),
            max_files_changed: 100,
            max_lines_changed: 5_000,
            use_api_closing_references: false,
            workers: 0,
        }
    }
}

impl ExtractConfig {
    /// The values serde cannot check: the test patterns.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        check_test_patterns(origin, "extract.test_patterns", &self.test_patterns)
    }
}

impl ExtractSettings {
    /// One repository's settings, from `[extract]` and the repository's file in
    /// `repos_dir`. `compat`: the `--compat` flag > the environment
    /// (`SWE_HARVEST_EXTRACT__COMPAT`) > the repository's file (`configs/repos/`) >
    /// the config file > the default. Other keys: the repository's file > the
    /// environment > the config file > the default.
    pub fn resolve(
        config_file: &ExtractConfig,
        repos_dir: &Path,
        repo: &RepoSlug,
        compat: Option<Compat>,
    ) -> Result<ExtractSettings, ConfigError> {
        let repo_config = RepoConfig::read(repos_dir, repo)?.extract;
        let compat_variable = format!("{}EXTRACT__COMPAT", crate::env_vars::CONFIG_OVERRIDE_PREFIX);
        // `config_file` already holds the variable's value when it is set.
        let from_environment = std::env::var_os(compat_variable).is_some().then_some(config_file.compat);
        Ok(ExtractSettings {
            compat: compat.or(from_environment).or(repo_config.compat).unwrap_or(config_file.compat),
            test_patterns: repo_config.test_patterns.unwrap_or_else(|| config_file.test_patterns.clone()),
            max_files_changed: config_file.max_files_changed,
            max_lines_changed: config_file.max_lines_changed,
            version_tag_pattern: repo_config.version_tag_pattern,
            version_file: repo_config.version_file,
            version_source: repo_config.version_source.unwrap_or_default(),
            workers: config_file.workers,
            use_api_closing_references: config_file.use_api_closing_references,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_comes_from_the_flag_then_the_repository_file_then_the_config() {
        let repos_dir = tempfile::tempdir().unwrap();
        fs_err::write(
            repos_dir.path().join("acme__calc.toml"),
            "[extract]\ncompat = \"swebench\"\ntest_patterns = [\"checks/**\"]\n",
        )
        .unwrap();
        let config = ExtractConfig { compat: Compat::Native, ..ExtractConfig::default() };
        let repos_dir = repos_dir.path();
        let acme: RepoSlug = "acme/calc".parse().unwrap();
        let other: RepoSlug = "acme/other".parse().unwrap();
        if std::env::var_os("SWE_HARVEST_EXTRACT__COMPAT").is_none() {
            let from_file = ExtractSettings::resolve(&config, repos_dir, &acme, None).unwrap();
            assert_eq!(from_file.compat, Compat::Swebench);
            assert_eq!(from_file.test_patterns, vec!["checks/**".to_string()]);
            assert_eq!(ExtractSettings::resolve(&config, repos_dir, &other, None).unwrap().compat, Compat::Native);
        }
        let from_flag = ExtractSettings::resolve(&config, repos_dir, &acme, Some(Compat::Native)).unwrap();
        assert_eq!(from_flag.compat, Compat::Native);
        assert_eq!(from_flag.max_files_changed, config.max_files_changed);
    }
}
