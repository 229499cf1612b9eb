//! Learned environments (`validate --write-config`): the specs that built and ran
//! in this run, written as `[[environment]]` entries of
//! `configs/repos/<owner>__<name>.toml`, one entry per distinct spec with the
//! versions it served, so that the next run starts at the rung that worked instead
//! of climbing the ladder again.
//!
//! Decisions: only inferred specs are written (a spec from a complete config entry
//! is in the config already); versions that an existing entry names explicitly are
//! left to it; the new entries go before the existing ones, so that they win over a
//! partial `versions = ["*"]` entry (the first entry that holds a version wins), and
//! the existing text, comments included, is kept as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Summary;
use crate::ecosystem::repo_config::RepoEnvironment;
use crate::model::{EnvironmentSpec, RepoSlug};
use crate::settings::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum LearnedError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Write(#[from] crate::dataset::DatasetError),
    #[error("could not write the learned environments of {repo} as TOML: {message}")]
    Encode { repo: String, message: String },
}

/// What was written for one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WrittenConfig {
    pub repo: String,
    pub path: PathBuf,
    /// New `[[environment]]` entries.
    pub entries: usize,
    pub versions: Vec<String>,
}

/// The working inferred specs of each repository, with the versions each served.
pub fn learned(summary: &Summary) -> BTreeMap<String, Vec<(EnvironmentSpec, Vec<String>)>> {
    let mut by_repo: BTreeMap<String, Vec<(EnvironmentSpec, Vec<String>)>> = BTreeMap::new();
    for outcome in &summary.outcomes {
        // An image means the ladder found a working rung for the task.
        let (Some(_), Some(spec)) = (&outcome.image, &outcome.spec) else { continue };
        if spec.source != "inferred" {
            continue;
        }
        let entries = by_repo.entry(outcome.repo.clone()).or_default();
        match entries.iter_mut().find(|(known, _)| known == spec) {
            Some((_, versions)) => {
                if !versions.contains(&outcome.version) {
                    versions.push(outcome.version.clone());
                }
            }
            None => entries.push((spec.clone(), vec![outcome.version.clone()])),
        }
    }
    // A version served by two specs (tasks of one version, two environment commits): the first.
    for entries in by_repo.values_mut() {
        let mut seen: Vec<String> = Vec::new();
        for (_, versions) in entries.iter_mut() {
            versions.retain(|version| !seen.contains(version));
            seen.extend(versions.iter().cloned());
            versions.sort();
        }
        entries.retain(|(_, versions)| !versions.is_empty());
    }
    by_repo
}

/// Writes the learned entries into `repos_dir`; returns what each file gained.
pub fn write(repos_dir: &Path, summary: &Summary) -> Result<Vec<WrittenConfig>, LearnedError> {
    let mut written = Vec::new();
    for (repo, entries) in learned(summary) {
        let slug: RepoSlug = match repo.parse() {
            Ok(slug) => slug,
            Err(_) => continue,
        };
        let path = repos_dir.join(format!("{}.toml", slug.double_underscore()));
        let existing = match fs_err::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(error.into()),
        };
        let configured: Vec<String> = match &existing {
            Some(text) => {
                let config: crate::ecosystem::repo_config::RepoConfig = toml::from_str(text)
                    .map_err(|error| ConfigError::Syntax { path: path.clone(), message: error.to_string() })?;
                config.environment.iter().flat_map(|entry| entry.versions.clone()).filter(|v| v != "*").collect()
            }
            None => Vec::new(),
        };
        let new: Vec<RepoEnvironment> = entries
            .into_iter()
            .filter_map(|(spec, versions)| {
                let versions: Vec<String> =
                    versions.into_iter().filter(|version| !configured.contains(version)).collect();
                (!versions.is_empty()).then(|| entry(&spec, versions))
            })
            .collect();
        if new.is_empty() {
            continue;
        }
        #[derive(Serialize)]
        struct Entries<'a> {
            environment: &'a [RepoEnvironment],
        }
        let text = toml::to_string(&Entries { environment: &new })
            .map_err(|error| LearnedError::Encode { repo: repo.clone(), message: error.to_string() })?;
        let header = format!(
            "# Learned by `swe-harvest validate --write-config` on {}: environments that built and ran the\n\
             # touched tests, by version (`rung` says how faithful each is to the tasks' dates).\n",
            chrono::Utc::now().format("%Y-%m-%d")
        );
        let combined = match &existing {
            None => format!("{header}{text}"),
            Some(existing) => insert_before_first_entry(existing, &format!("{header}{text}")),
        };
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        crate::dataset::write_durably(&path, |file| std::io::Write::write_all(file, combined.as_bytes()))?;
        written.push(WrittenConfig {
            repo,
            path,
            entries: new.len(),
            versions: new.iter().flat_map(|entry| entry.versions.clone()).collect(),
        });
    }
    Ok(written)
}

/// A complete config entry for `spec`.
fn entry(spec: &EnvironmentSpec, versions: Vec<String>) -> RepoEnvironment {
    RepoEnvironment {
        versions,
        runtime: Some(spec.runtime.clone()),
        system_packages: spec.system_packages.clone(),
        pre_install: spec.pre_install.clone(),
        install: spec.install.clone(),
        extra_packages: spec.extra_packages.clone(),
        test_command: Some(spec.test_command.clone()),
        test_path_patterns: spec.test_path_patterns.clone(),
        rung: Some(spec.rung),
    }
}

/// `text` with `addition` before its first `[[environment]]` table (at its end when
/// it has none), so that the added entries are matched first.
fn insert_before_first_entry(text: &str, addition: &str) -> String {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[[environment]]") {
            return format!("{}{addition}\n{}", &text[..offset], &text[offset..]);
        }
        offset += line.len();
    }
    let separator = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    format!("{text}{separator}\n{addition}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Rung;
    use crate::validate::TaskOutcome;

    fn outcome(repo: &str, version: &str, spec: Option<EnvironmentSpec>, image: Option<&str>) -> TaskOutcome {
        TaskOutcome {
            instance_id: format!("{repo}-{version}"),
            repo: repo.into(),
            version: version.into(),
            result: Err(super::super::dropped(crate::model::drop_reason::ValidateDropReason::NoFailToPass, "")),
            image: image.map(String::from),
            spec,
            runtime_needed: None,
            observed: None,
            runs: 1,
            coverage: None,
            coverage_secs: 0.0,
            build_secs: 0.0,
            test_secs: 0.0,
            total_secs: 0.0,
        }
    }

    fn spec(runtime: &str, rung: Rung, source: &str) -> EnvironmentSpec {
        EnvironmentSpec {
            ecosystem: "python".into(),
            runtime: runtime.into(),
            install: vec!["uv pip install -e .".into()],
            test_command: "pytest -rA".into(),
            source: source.into(),
            rung,
            ..EnvironmentSpec::default()
        }
    }

    fn summary() -> Summary {
        Summary {
            outcomes: vec![
                outcome("acme/calc", "1.0", Some(spec("3.9", Rung::RunnerPins, "inferred")), Some("env:1")),
                outcome("acme/calc", "1.1", Some(spec("3.9", Rung::RunnerPins, "inferred")), Some("env:1")),
                outcome("acme/calc", "2.0", Some(spec("3.11", Rung::Dated, "inferred")), Some("env:2")),
                // Its ladder failed: nothing learned.
                outcome("acme/calc", "3.0", Some(spec("3.13", Rung::Dated, "inferred")), None),
                // From the config already.
                outcome("acme/other", "1.0", Some(spec("3.11", Rung::Dated, "config")), Some("env:3")),
            ],
            ..Summary::default()
        }
    }

    #[test]
    fn working_inferred_specs_are_grouped_by_version() {
        let learned = learned(&summary());
        assert_eq!(learned.keys().collect::<Vec<_>>(), vec!["acme/calc"]);
        let entries = &learned["acme/calc"];
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].1, vec!["1.0".to_string(), "1.1".to_string()]);
        assert_eq!(entries[0].0.rung, Rung::RunnerPins);
        assert_eq!(entries[1].1, vec!["2.0".to_string()]);
    }

    #[test]
    fn written_entries_come_first_keep_the_existing_text_and_are_read_back_as_complete_config() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("acme__calc.toml");
        let existing = "# Our notes.\n[extract]\ntest_patterns = [\"tests/**\"]\n\n[[environment]]\nversions = [\"2.0\"]\nruntime = \"3.11\"\n\n[[environment]]\nversions = [\"*\"]\nruntime = \"3.9\"\n";
        fs_err::write(&path, existing).unwrap();
        let written = write(dir.path(), &summary()).unwrap();
        assert_eq!(written.len(), 1);
        assert_eq!(written[0].versions, vec!["1.0".to_string(), "1.1".to_string()], "2.0 has its own entry already");
        let text = fs_err::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Our notes.\n[extract]\ntest_patterns"), "{text}");
        assert!(text.contains("versions = [\"*\"]\nruntime = \"3.9\"\n"), "{text}");
        let config: crate::ecosystem::repo_config::RepoConfig = toml::from_str(&text).unwrap();
        assert_eq!(config.environment.len(), 3);
        let first = &config.environment[0];
        assert_eq!(first.versions, vec!["1.0".to_string(), "1.1".to_string()]);
        assert_eq!(first.rung, Some(Rung::RunnerPins));
        assert_eq!(first.test_command.as_deref(), Some("pytest -rA"));
        // The learned entry is complete: the spec is resolved from it without inference.
        let resolved = super::super::spec::resolve(
            &crate::ecosystem::for_tests::Pytest,
            &config,
            "1.1",
            || panic!("no inference"),
            chrono::Utc::now(),
            &[],
        )
        .unwrap();
        assert_eq!(
            (resolved.runtime.as_str(), resolved.rung, resolved.source.as_str()),
            ("3.9", Rung::RunnerPins, "config")
        );
        // A second write adds nothing: every version is configured now.
        assert!(write(dir.path(), &summary()).unwrap().is_empty());
    }

    #[test]
    fn a_repository_without_a_file_gets_one() {
        let dir = tempfile::tempdir().unwrap();
        let written = write(&dir.path().join("repos"), &summary()).unwrap();
        assert_eq!(written[0].entries, 2);
        let text = fs_err::read_to_string(dir.path().join("repos/acme__calc.toml")).unwrap();
        assert!(text.starts_with("# Learned by `swe-harvest validate --write-config`"), "{text}");
        let config: crate::ecosystem::repo_config::RepoConfig = toml::from_str(&text).unwrap();
        assert_eq!(config.environment.len(), 2);
    }
}
