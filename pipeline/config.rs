//! The pipeline's configuration, composed: `configs/pipeline.toml` holds one section
//! per module, and each module owns its section's type, defaults and checks
//! (`[github]` is [`GithubConfig`], `[crawl]` [`CrawlConfig`], `[mirror]`
//! [`MirrorConfig`], `[extract]` [`ExtractConfig`], `[validate]` [`ValidateConfig`],
//! `[release]` [`ReleaseConfig`], `[screen]` [`ScreenConfig`], `[probe]`
//! [`ProbeConfig`]). A repository's
//! overrides (`configs/repos/<owner>__<name>.toml`) are `ecosystem::repo_config`'s,
//! a release's file (`configs/releases/<name>.toml`) `release`'s: this module only
//! says where their folders are. It reads the file, applies the environment, runs
//! each section's checks, and `cli/` hands each stage its own sections and plain
//! values. No other module imports it (the layers: docs/architecture.md); what the
//! settings types share (the error naming the file and the key, reading TOML) is
//! [`crate::settings`].
//!
//! Precedence, lowest first: the sections' defaults, the config file, the
//! environment (`SWE_HARVEST_<SECTION>__<KEY>`, plus the named variables of
//! [`crate::env_vars`]), then command-line flags (applied by the CLI). Every struct
//! denies unknown keys, so a typo is an error that names the file and the key
//! instead of a setting silently ignored. `configs/pipeline.toml` documents every
//! default; a test keeps it equal to [`Config::default`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::crawl::CrawlConfig;
use crate::extract::ExtractConfig;
use crate::github::GithubConfig;
use crate::mirror::MirrorConfig;
use crate::probe::ProbeConfig;
use crate::release::ReleaseConfig;
use crate::screen::ScreenConfig;
use crate::settings::{ConfigError, from_table, invalid};
use crate::validate::ValidateConfig;

/// Where configs live when `--config` is not given.
pub const DEFAULT_CONFIG_FILE: &str = "configs/pipeline.toml";

/// The whole pipeline's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub github: GithubConfig,
    pub crawl: CrawlConfig,
    pub mirror: MirrorConfig,
    pub extract: ExtractConfig,
    pub validate: ValidateConfig,
    pub release: ReleaseConfig,
    pub screen: ScreenConfig,
    pub probe: ProbeConfig,
}

/// A config with where it came from, and where the per-repository files are.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    /// The file read, if any.
    pub path: Option<PathBuf>,
    /// The folder of `<owner>__<name>.toml` overrides.
    pub repos_dir: PathBuf,
    /// The folder of `<name>.toml` release settings.
    pub releases_dir: PathBuf,
}

impl LoadedConfig {
    /// Loads `explicit` (an error if missing), or else `configs/pipeline.toml` when it
    /// exists, or else the defaults; then applies the environment's overrides.
    pub fn load(explicit: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
        LoadedConfig::load_with_env(explicit, std::env::vars())
    }

    pub fn load_with_env(
        explicit: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<LoadedConfig, ConfigError> {
        let path = match explicit {
            Some(path) => Some(path.to_path_buf()),
            None => Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|path| path.is_file()),
        };
        let config = match &path {
            Some(path) => {
                let text =
                    fs_err::read_to_string(path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
                let config: Config = crate::settings::parse(&text, path)?;
                config.check(&path.display().to_string())?;
                config
            }
            None => Config::default(),
        };
        let config = apply_env_overrides(config, env)?;
        let configs_dir = match &path {
            Some(path) => path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            None => PathBuf::from("configs"),
        };
        Ok(LoadedConfig {
            config,
            path,
            repos_dir: configs_dir.join("repos"),
            releases_dir: configs_dir.join("releases"),
        })
    }
}

impl Config {
    /// Each section's checks of what serde cannot check (ranges, URLs, patterns),
    /// section by section; `origin` names the file or the variable.
    fn check(&self, origin: &str) -> Result<(), ConfigError> {
        self.github.check(origin)?;
        self.crawl.check(origin)?;
        self.mirror.check(origin)?;
        self.extract.check(origin)?;
        self.validate.check(origin)?;
        self.release.check(origin)?;
        self.screen.check(origin)?;
        self.probe.check(origin)?;
        Ok(())
    }
}

/// Applies `SWE_HARVEST_API_URL` and every `SWE_HARVEST_<SECTION>__<KEY>` variable.
fn apply_env_overrides(config: Config, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
    let mut config = config;
    let mut overrides: Vec<(String, String, String, String)> = Vec::new();
    for (name, value) in env {
        if name == crate::env_vars::SWE_HARVEST_API_URL {
            overrides.push((name, "github".into(), "api_url".into(), value));
            continue;
        }
        let Some(rest) = name.strip_prefix(crate::env_vars::CONFIG_OVERRIDE_PREFIX) else { continue };
        let Some((section, key)) = rest.split_once("__") else { continue };
        overrides.push((name.clone(), section.to_lowercase(), key.to_lowercase(), value));
    }
    // Sorted so that two variables for one key resolve the same way every time.
    overrides.sort();
    for (name, section, key, raw) in overrides {
        let origin = format!("environment variable {name}");
        let mut table = toml::Table::try_from(&config).expect("the config always serializes to TOML");
        let Some(toml::Value::Table(section_table)) = table.get_mut(&section) else {
            let sections: Vec<&String> = table.keys().collect();
            return Err(invalid(&origin, &section, format!("no such config section; sections are {sections:?}")));
        };
        section_table.insert(key.clone(), toml_value(&raw));
        config = from_table::<Config>(table, &origin)?;
        config.check(&origin)?;
    }
    Ok(config)
}

/// A variable's text as a TOML value: `5` is an integer, `true` a boolean,
/// `["a"]` a list, anything that is not valid TOML a string.
fn toml_value(raw: &str) -> toml::Value {
    format!("value = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut table| table.remove("value"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::ecosystem::repo_config::Compat;
    use crate::sandbox::Registries;

    fn load_text(text: &str, env: &[(&str, &str)]) -> Result<LoadedConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipeline.toml");
        fs_err::write(&path, text).unwrap();
        LoadedConfig::load_with_env(Some(&path), env.iter().map(|(name, value)| (name.to_string(), value.to_string())))
    }

    #[test]
    fn shipped_pipeline_toml_equals_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
        let loaded = LoadedConfig::load_with_env(Some(&path), []).unwrap();
        assert_eq!(loaded.config, Config::default());
    }

    /// `configs/pipeline.toml` with each commented-out key (`# key = value`, such as
    /// `# registry = "127.0.0.1:5000"`) written in: every key the file documents, set.
    fn shipped_pipeline_toml_with_every_key() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
        let text = fs_err::read_to_string(path).unwrap();
        let line_of = |line: &str| {
            let key_line = line.strip_prefix("# ")?;
            let table = key_line.parse::<toml::Table>().ok()?;
            (table.len() == 1).then(|| key_line.to_string())
        };
        text.lines().map(|line| line_of(line).unwrap_or_else(|| line.to_string()) + "\n").collect()
    }

    /// The tables whose keys are data (runtimes, Gradle versions), not settings.
    const MAP_KEYS: [&str; 2] = ["validate.base_images", "validate.gradle_distributions"];

    /// Every setting of `table` by its key's path (`validate.registries.allow`).
    fn settings_of(table: &toml::Table, prefix: &str, settings: &mut BTreeMap<String, toml::Value>) {
        for (key, value) in table {
            let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
            match value {
                toml::Value::Table(inner) if !MAP_KEYS.contains(&path.as_str()) => settings_of(inner, &path, settings),
                _ => {
                    settings.insert(path, value.clone());
                }
            }
        }
    }

    #[test]
    fn a_config_with_every_documented_key_round_trips() {
        let text = shipped_pipeline_toml_with_every_key();
        assert!(text.contains("\nregistry = \"127.0.0.1:5000\"\n"), "commented-out keys are written in");
        let loaded = load_text(&text, &[]).unwrap();
        assert!(loaded.config.validate.extra_ca_file.is_some() && loaded.config.release.registry.is_some());
        let written = toml::to_string(&loaded.config).unwrap();
        assert_eq!(load_text(&written, &[]).unwrap().config, loaded.config, "written and read again");

        let mut documented = BTreeMap::new();
        settings_of(&text.parse().unwrap(), "", &mut documented);
        let mut held = BTreeMap::new();
        settings_of(&written.parse().unwrap(), "", &mut held);
        let documented_keys: Vec<&String> = documented.keys().collect();
        let held_keys: Vec<&String> = held.keys().collect();
        assert_eq!(documented_keys, held_keys, "configs/pipeline.toml documents every key, and only those");
        for (key, value) in &documented {
            match (value, &held[key]) {
                (toml::Value::Table(given), toml::Value::Table(kept)) => {
                    for (entry, value) in given {
                        assert_eq!(kept.get(entry), Some(value), "{key}.{entry}");
                    }
                }
                (given, kept) => assert_eq!(given, kept, "{key}"),
            }
        }
    }

    #[test]
    fn defaults_round_trip_through_toml() {
        let text = toml::to_string(&Config::default()).unwrap();
        let loaded = load_text(&text, &[]).unwrap();
        assert_eq!(loaded.config, Config::default());
    }

    #[test]
    fn unknown_key_names_file_key_and_allowed_keys() {
        let error = load_text("[validate]\nrunz = 3\n", &[]).unwrap_err().to_string();
        assert!(error.contains("pipeline.toml"), "{error}");
        assert!(error.contains("runz"), "{error}");
        assert!(error.contains("`runs`"), "lists the allowed keys: {error}");
    }

    #[test]
    fn gradle_distributions_are_keyed_by_gradle_version() {
        let loaded =
            load_text("[validate]\ngradle_distributions = { \"8.5\" = \"/srv/gradle-8.5-bin.zip\" }\n", &[]).unwrap();
        assert_eq!(loaded.config.validate.gradle_distributions["8.5"], Path::new("/srv/gradle-8.5-bin.zip"));
        let text = "[validate]\ngradle_distributions = { \"latest\" = \"/srv/gradle.zip\" }\n";
        let error = load_text(text, &[]).unwrap_err().to_string();
        assert!(error.contains("validate.gradle_distributions.\"latest\"") && error.contains("8.5"), "{error}");
    }

    #[test]
    fn each_registry_has_its_own_setting_and_index_url_is_the_pypi_index() {
        let loaded = load_text("[validate.registries]\ngo_proxy = \"https://goproxy.example.com\"\n", &[]).unwrap();
        let registries = loaded.config.validate.effective_registries();
        assert_eq!(registries.go_proxy, "https://goproxy.example.com");
        assert_eq!(registries.pypi_index, Registries::PYPI, "the others keep their defaults");
        // The deprecated key sets the PyPI index and nothing else (it was GOPROXY too).
        let loaded = load_text("[validate]\nindex_url = \"https://pypi.example.com/simple\"\n", &[]).unwrap();
        let registries = loaded.config.validate.effective_registries();
        assert_eq!(registries.pypi_index, "https://pypi.example.com/simple");
        assert_eq!(registries.go_proxy, Registries::GO);
        let both = "[validate]\nindex_url = \"https://a.example.com/simple\"\n\
                    [validate.registries]\npypi_index = \"https://b.example.com/simple\"\n";
        let error = load_text(both, &[]).unwrap_err().to_string();
        assert!(error.contains("validate.index_url") && error.contains("registries.pypi_index"), "{error}");
        let error = load_text("[validate.registries]\nnpm_registry = \"ftp://x\"\n", &[]).unwrap_err().to_string();
        assert!(error.contains("validate.registries.npm_registry") && error.contains("http(s)"), "{error}");
        let from_env = load_text(
            "",
            &[("SWE_HARVEST_VALIDATE__REGISTRIES", "{ crates_index = \"sparse+https://crates.example.com/\" }")],
        );
        assert_eq!(from_env.unwrap().config.validate.registries.crates_index, "sparse+https://crates.example.com/");
        let names: Vec<&str> = Registries::default().all().iter().map(|(name, _, _)| *name).collect();
        assert_eq!(
            names,
            ["pypi_index", "npm_registry", "go_proxy", "maven_repository", "crates_index", "debian_archive"]
        );
        let error = load_text("[validate.registries]\nallow = [\"https://\"]\n", &[]).unwrap_err().to_string();
        assert!(error.contains("validate.registries.allow") && error.contains("`https://`"), "{error}");
    }

    #[test]
    fn unknown_section_is_an_error() {
        let error = load_text("[valdiate]\nruns = 3\n", &[]).unwrap_err().to_string();
        assert!(error.contains("valdiate") && error.contains("`validate`"), "{error}");
    }

    #[test]
    fn wrong_type_names_the_key_and_the_expected_type() {
        let error = load_text("[validate]\nruns = \"three\"\n", &[]).unwrap_err().to_string();
        assert!(error.contains("key `validate.runs`"), "{error}");
        assert!(error.contains("u32") || error.contains("integer"), "{error}");
    }

    #[test]
    fn out_of_range_values_are_errors() {
        let error = load_text("[github]\nper_page = 500\n", &[]).unwrap_err().to_string();
        assert!(error.contains("github.per_page") && error.contains("between 1 and 100"), "{error}");
        let error = load_text("[extract]\ntest_patterns = [\"[unclosed\"]\n", &[]).unwrap_err().to_string();
        assert!(error.contains("extract.test_patterns"), "{error}");
        let error = load_text("[validate]\nfile_size_bytes = 4096\n", &[]).unwrap_err().to_string();
        assert!(error.contains("validate.file_size_bytes") && error.contains("1 MiB"), "{error}");
        let loaded = load_text("[validate]\nfile_size_bytes = 8589934592\n", &[]).unwrap();
        assert_eq!(loaded.config.validate.container_limits().file_size_bytes, 8 << 30, "a job's file-size limit");
    }

    #[test]
    fn base_images_default_to_the_runtime_catalogue_and_a_config_adds_its_own() {
        let defaults = Config::default().validate.base_images;
        assert_eq!(defaults, crate::ecosystem::runtimes::default_base_images());
        assert_eq!(defaults["3.11"], "swe-harvest/base:py3.11");
        assert_eq!(defaults["jdk17"], "swe-harvest/base:jdk17");

        let text = "[validate.base_images]\n\"3.8\" = \"mine/python:3.8\"\n\"go1.24\" = \"mine/go:1.24\"\n";
        let base_images = load_text(text, &[]).unwrap().config.validate.base_images;
        assert_eq!(base_images["3.8"], "mine/python:3.8", "added");
        assert_eq!(base_images["go1.24"], "mine/go:1.24", "replaced");
        assert_eq!(base_images["3.11"], "swe-harvest/base:py3.11", "the other defaults stay");
        assert_eq!(base_images.len(), defaults.len() + 1);
    }

    #[test]
    fn runtime_keys_are_checked_against_the_catalogue_and_the_message_lists_its_languages() {
        let error = load_text("[validate.base_images]\n\"py3.11\" = \"x\"\n", &[]).unwrap_err().to_string();
        assert!(error.contains("validate.base_images.\"py3.11\""), "{error}");
        for runtimes in crate::ecosystem::runtimes::catalogue() {
            assert!(error.contains(&format!("`{}` ({})", runtimes.example_key(), runtimes.language)), "{error}");
        }
        for key in ["node22", "jdk25", "gcc15", "rust1.90", "3.15"] {
            let text = format!("[validate.base_images]\n\"{key}\" = \"mine/{key}\"\n");
            assert!(load_text(&text, &[]).is_ok(), "{key} is a runtime key without an image of setup.sh's");
        }
    }

    #[test]
    fn syntax_errors_name_the_file() {
        let error = load_text("[validate\nruns = 3\n", &[]).unwrap_err();
        assert!(matches!(error, ConfigError::Syntax { .. }));
        assert!(error.to_string().contains("pipeline.toml"));
    }

    #[test]
    fn precedence_is_defaults_then_file_then_environment() {
        let loaded = load_text("[validate]\nruns = 5\nworkers = 2\n", &[("SWE_HARVEST_VALIDATE__RUNS", "7")]).unwrap();
        assert_eq!(loaded.config.validate.runs, 7, "environment beats the file");
        assert_eq!(loaded.config.validate.workers, 2, "the file beats the defaults");
        assert_eq!(loaded.config.validate.pids_limit, ValidateConfig::default().pids_limit);
        let loaded = load_text("", &[("SWE_HARVEST_API_URL", "http://127.0.0.1:9999")]).unwrap();
        assert_eq!(loaded.config.github.api_url, "http://127.0.0.1:9999");
        let loaded = load_text("", &[("SWE_HARVEST_EXTRACT__COMPAT", "swebench")]).unwrap();
        assert_eq!(loaded.config.extract.compat, Compat::Swebench);
    }

    #[test]
    fn bad_environment_override_names_the_variable() {
        let error = load_text("", &[("SWE_HARVEST_VALIDATE__RUNS", "many")]).unwrap_err().to_string();
        assert!(error.contains("SWE_HARVEST_VALIDATE__RUNS") && error.contains("validate.runs"), "{error}");
        let error = load_text("", &[("SWE_HARVEST_NOPE__X", "1")]).unwrap_err().to_string();
        assert!(error.contains("SWE_HARVEST_NOPE__X") && error.contains("no such config section"), "{error}");
    }

    #[test]
    fn missing_explicit_config_file_is_an_error() {
        let error = LoadedConfig::load_with_env(Some(Path::new("/nonexistent/pipeline.toml")), []).unwrap_err();
        assert!(matches!(error, ConfigError::Read { .. }));
        assert!(error.to_string().contains("/nonexistent/pipeline.toml"));
    }

    /// A value refused in `configs/pipeline.toml` (or in the environment) and its whole
    /// message, from `tests/fixtures/config/refused.toml`.
    #[derive(Deserialize)]
    struct Refused {
        config: String,
        #[serde(default)]
        env: BTreeMap<String, String>,
        message: String,
    }

    #[derive(Deserialize)]
    struct Refusals {
        pipeline: Vec<Refused>,
    }

    /// `text`'s error as a config file, the folder it was read from written `<dir>`.
    fn refusal(text: &str, env: &BTreeMap<String, String>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipeline.toml");
        fs_err::write(&path, text).unwrap();
        let env = env.iter().map(|(name, value)| (name.clone(), value.clone()));
        let error = LoadedConfig::load_with_env(Some(&path), env).unwrap_err();
        error.to_string().replace(&dir.path().display().to_string(), "<dir>")
    }

    #[test]
    fn every_refused_value_keeps_its_message_byte_for_byte() {
        let refusals: Refusals = toml::from_str(include_str!("../tests/fixtures/config/refused.toml")).unwrap();
        assert!(refusals.pipeline.len() > 40, "every check has its case");
        let mut wrong = Vec::new();
        for Refused { config, env, message } in &refusals.pipeline {
            let actual = refusal(config, env);
            if actual != *message {
                wrong.push(format!("{config:?} {env:?}\n  {actual:?}"));
            }
        }
        assert!(wrong.is_empty(), "messages changed:\n{}", wrong.join("\n"));
    }
}
