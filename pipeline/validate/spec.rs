//! The environment spec of one task: from `configs/repos/<owner>__<name>.toml` when
//! an `[[environment]]` entry covers the task's version, inferred otherwise
//! by the project's ecosystem ([`crate::ecosystem::Ecosystem::infer`]). A config entry may give only some fields (say, the runtime);
//! the rest is inferred, and `source` says which happened (`config`,
//! `config+inferred` or `inferred`).

use chrono::{DateTime, Utc};

use crate::ecosystem::repo_config::{RepoConfig, RepoEnvironment};
use crate::ecosystem::{Ecosystem, InferError, RepoFiles};
use crate::model::EnvironmentSpec;

/// The config entry for `version`: the first whose `versions` holds it or `*`.
pub fn config_entry<'a>(config: &'a RepoConfig, version: &str) -> Option<&'a RepoEnvironment> {
    config
        .environment
        .iter()
        .find(|entry| entry.versions.iter().any(|candidate| candidate == "*" || candidate == version))
}

/// Whether a config entry says everything, so no inference is needed.
fn complete(entry: &RepoEnvironment) -> bool {
    entry.runtime.is_some() && !entry.install.is_empty() && entry.test_command.is_some()
}

/// The spec for a task of `version`, with the files at its environment commit
/// (only read when something must be inferred) as of `date`.
pub fn resolve(
    ecosystem: &dyn Ecosystem,
    config: &RepoConfig,
    version: &str,
    files: impl FnOnce() -> RepoFiles,
    date: DateTime<Utc>,
    available: &[String],
) -> Result<EnvironmentSpec, InferError> {
    let entry = config_entry(config, version);
    if let Some(entry) = entry.filter(|entry| complete(entry)) {
        // Unless the entry says otherwise, the build tools are brought up to date first,
        // as for inferred specs (old setuptools cannot do editable installs).
        let base = EnvironmentSpec {
            ecosystem: ecosystem.name().to_string(),
            pre_install: ecosystem.default_pre_install(),
            ..EnvironmentSpec::default()
        };
        return Ok(from_entry(entry, base, "config"));
    }
    let inferred = match entry.and_then(|entry| entry.runtime.clone()) {
        // A pinned runtime must not be second-guessed by inference.
        Some(runtime) => ecosystem.infer(&files(), date, &[runtime])?,
        None => ecosystem.infer(&files(), date, available)?,
    };
    Ok(match entry {
        Some(entry) => from_entry(entry, inferred, "config+inferred"),
        None => inferred,
    })
}

fn from_entry(entry: &RepoEnvironment, base: EnvironmentSpec, source: &str) -> EnvironmentSpec {
    let pick = |configured: &Vec<String>, inferred: Vec<String>| {
        if configured.is_empty() { inferred } else { configured.clone() }
    };
    EnvironmentSpec {
        ecosystem: base.ecosystem,
        runtime: entry.runtime.clone().unwrap_or(base.runtime),
        system_packages: pick(&entry.system_packages, base.system_packages),
        pre_install: pick(&entry.pre_install, base.pre_install),
        install: pick(&entry.install, base.install),
        extra_packages: pick(&entry.extra_packages, base.extra_packages),
        test_command: entry.test_command.clone().unwrap_or(base.test_command),
        test_path_patterns: pick(&entry.test_path_patterns, base.test_path_patterns),
        source: source.to_string(),
        rung: entry.rung.unwrap_or(base.rung),
        ci: base.ci,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::for_tests::{PRE_INSTALL_TOOLS, Pytest};
    use chrono::TimeZone;

    fn date() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2023, 1, 1, 0, 0, 0).unwrap()
    }

    fn files() -> RepoFiles {
        [("setup.py".to_string(), "setup(classifiers=['Programming Language :: Python :: 3.11'])".to_string())].into()
    }

    fn available() -> Vec<String> {
        vec!["3.9".into(), "3.11".into()]
    }

    #[test]
    fn complete_config_entry_wins_without_reading_files() {
        let config: RepoConfig = toml::from_str(
            "[[environment]]\nversions = [\"1.0\"]\nruntime = \"3.9\"\ninstall = [\"pip install -e .\"]\ntest_command = \"pytest -rA\"\n\n\
             [[environment]]\nversions = [\"*\"]\nruntime = \"3.11\"\n",
        )
        .unwrap();
        let spec = resolve(&Pytest, &config, "1.0", || panic!("files are not read"), date(), &available()).unwrap();
        assert_eq!(spec.runtime, "3.9");
        assert_eq!(spec.install, vec!["pip install -e .".to_string()]);
        assert_eq!(spec.source, "config");
        assert_eq!(spec.pre_install, vec![format!("uv pip install --upgrade {}", PRE_INSTALL_TOOLS)]);
        // Another version falls through to the `*` entry, which only pins the runtime.
        let spec = resolve(&Pytest, &config, "2.0", files, date(), &available()).unwrap();
        assert_eq!(spec.runtime, "3.11");
        assert_eq!(spec.source, "config+inferred");
        assert!(spec.install.iter().any(|line| line.starts_with("{ uv pip install")), "{:?}", spec.install);
    }

    #[test]
    fn no_config_means_inference() {
        let spec = resolve(&Pytest, &RepoConfig::default(), "1.0", files, date(), &available()).unwrap();
        assert_eq!(spec.runtime, "3.11");
        assert_eq!(spec.source, "inferred");
    }
}
