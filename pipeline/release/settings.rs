//! Release's settings: `[release]` in the config ([`ReleaseConfig`], with its checks),
//! and resolving a release's request: the command line's plain values over the
//! release settings file `configs/releases/<name>.toml` over the config (image prefix,
//! registry, `swt_min_runs`; image builds get the containers' limits of
//! `[validate]`). Writing the release is the rest of `release`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Filters, ImageRequest, ReleaseError, ReleaseFile, ReleaseRequest};
use crate::settings::{ConfigError, invalid};
use crate::validate::ValidateConfig;

/// `[release]` in `configs/pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReleaseConfig {
    /// Instance images are tagged `<image_prefix>/<instance_id>:<version>`.
    pub image_prefix: String,
    /// Where `release --images --push` pushes; none means pushing is an error.
    pub registry: Option<String>,
    /// `release --swt` keeps tasks validated in at least this many runs (SWT-Bench: 5).
    pub swt_min_runs: u32,
}

impl Default for ReleaseConfig {
    fn default() -> Self {
        ReleaseConfig { image_prefix: "swe-harvest".into(), registry: None, swt_min_runs: 5 }
    }
}

impl ReleaseConfig {
    /// The values serde cannot check.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        if self.image_prefix.is_empty() {
            return Err(invalid(origin, "release.image_prefix", "must not be empty"));
        }
        if self.swt_min_runs == 0 {
            return Err(invalid(origin, "release.swt_min_runs", "must be at least 1"));
        }
        Ok(())
    }
}

/// The settings file of a release, `<releases_dir>/<name>.toml`, if there is one.
fn read_release_file(releases_dir: &Path, name: &str) -> Result<Option<ReleaseFile>, ConfigError> {
    let path = releases_dir.join(format!("{name}.toml"));
    let file = crate::settings::read_optional(&path)?;
    if file.is_some() {
        tracing::info!(path = %path.display(), "using the release settings file");
    }
    Ok(file)
}

/// Release's command-line values, plain (no clap types).
#[derive(Debug, Clone, Default)]
pub struct ReleaseFlags {
    pub name: String,
    pub version: String,
    /// The settings a release file holds, as the command line gives them
    /// (`--created-after`, `--repo`, `--split-by`, `--swt`, `--max-quality-score`, ...).
    /// Empty lists, `None` and `false` leave the value to the release file.
    pub settings: ReleaseFile,
    /// `--images`.
    pub images: bool,
    /// `--push` (with `--images`): push to `release.registry`.
    pub push: bool,
    /// `--force`.
    pub force: bool,
}

impl ReleaseRequest {
    /// Flags beat the release file; list flags, when given, replace the file's lists.
    /// `--push` without a configured registry is bad usage.
    pub fn resolve(
        release: &ReleaseConfig,
        containers: &ValidateConfig,
        releases_dir: &Path,
        flags: &ReleaseFlags,
    ) -> Result<ReleaseRequest, ReleaseError> {
        let given = &flags.settings;
        if flags.push && release.registry.is_none() {
            return Err(ReleaseError::NoRegistry);
        }
        if let Some(max) = given.max_quality_score.filter(|max| !(0.0..=1.0).contains(max)) {
            return Err(ReleaseError::BadMaxQualityScore(max));
        }
        if let Some(min) = given.min_mutation_score.filter(|min| !(0.0..=1.0).contains(min)) {
            return Err(ReleaseError::BadMinMutationScore(min));
        }
        let file = read_release_file(releases_dir, &flags.name)?.unwrap_or_default();
        Ok(ReleaseRequest {
            name: flags.name.clone(),
            version: flags.version.clone(),
            filters: Filters {
                created_after: given.created_after.or(file.created_after),
                created_before: given.created_before.or(file.created_before),
                repos: if given.repos.is_empty() { file.repos } else { given.repos.clone() },
                exclude_datasets: if given.exclude_datasets.is_empty() {
                    file.exclude_datasets
                } else {
                    given.exclude_datasets.clone()
                },
                screen: super::screen::ScreenFilters {
                    max_quality_score: given.max_quality_score.or(file.max_quality_score),
                    exclude_flags: if given.exclude_flags.is_empty() {
                        file.exclude_flags
                    } else {
                        given.exclude_flags.clone()
                    },
                    only_kept: given.only_kept || file.only_kept,
                },
                min_mutation_score: given.min_mutation_score.or(file.min_mutation_score),
                reviewed_only: given.reviewed_only || file.reviewed_only,
                exclude_rejected: given.exclude_rejected || file.exclude_rejected,
            },
            split_by: given.split_by.or(file.split_by),
            force: flags.force,
            swt_min_runs: (given.swt || file.swt).then_some(release.swt_min_runs),
            images: flags.images.then(|| ImageRequest {
                prefix: release.image_prefix.clone(),
                push_to: if flags.push { release.registry.clone() } else { None },
                build_timeout_secs: containers.build_timeout_secs,
                build_limits: crate::sandbox::BuildLimits::of(&containers.container_limits()),
                mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;
    use crate::model::RepoSlug;
    use crate::release::SplitPeriod;

    /// `flags` resolved with the default settings and the release files of `dir`.
    fn resolve(release: &ReleaseConfig, dir: &Path, flags: &ReleaseFlags) -> Result<ReleaseRequest, ReleaseError> {
        ReleaseRequest::resolve(release, &ValidateConfig::default(), dir, flags)
    }

    #[test]
    fn flags_beat_the_release_file_and_lists_replace_its_lists() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("bench.toml"),
            "created_after = 2026-01-01\nrepos = [\"psf/requests\"]\nsplit_by = \"month\"\nswt = true\n",
        )
        .unwrap();
        let config = ReleaseConfig::default();
        let from_file = resolve(
            &config,
            dir.path(),
            &ReleaseFlags { name: "bench".into(), version: "1".into(), ..ReleaseFlags::default() },
        )
        .unwrap();
        assert_eq!(from_file.filters.created_after, NaiveDate::from_ymd_opt(2026, 1, 1));
        assert_eq!(from_file.filters.repos, vec!["psf/requests".parse::<RepoSlug>().unwrap()]);
        assert_eq!(from_file.split_by, Some(SplitPeriod::Month));
        assert_eq!(from_file.swt_min_runs, Some(config.swt_min_runs));
        assert!(from_file.images.is_none());

        let flags = ReleaseFlags {
            name: "bench".into(),
            version: "1".into(),
            settings: ReleaseFile {
                created_after: NaiveDate::from_ymd_opt(2026, 6, 1),
                repos: vec!["pallets/flask".parse().unwrap()],
                ..ReleaseFile::default()
            },
            images: true,
            ..ReleaseFlags::default()
        };
        let request = resolve(&config, dir.path(), &flags).unwrap();
        assert_eq!(request.filters.created_after, NaiveDate::from_ymd_opt(2026, 6, 1));
        assert_eq!(request.filters.repos, vec!["pallets/flask".parse::<RepoSlug>().unwrap()]);
        assert_eq!(request.images.map(|images| images.prefix), Some(config.image_prefix.clone()));
    }

    #[test]
    fn push_without_a_registry_is_refused_before_anything_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let config = ReleaseConfig { registry: None, ..ReleaseConfig::default() };
        let flags = ReleaseFlags { name: "bench".into(), images: true, push: true, ..ReleaseFlags::default() };
        assert!(matches!(resolve(&config, dir.path(), &flags), Err(ReleaseError::NoRegistry)));
    }

    #[test]
    fn a_release_file_that_is_not_valid_is_refused_naming_the_file_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let flags = ReleaseFlags { name: "bench".into(), version: "1".into(), ..ReleaseFlags::default() };
        let message = |text: &str| {
            fs_err::write(dir.path().join("bench.toml"), text).unwrap();
            let error = resolve(&ReleaseConfig::default(), dir.path(), &flags).unwrap_err();
            assert!(matches!(error, ReleaseError::Config(_)), "{error}");
            error.to_string().replace(&dir.path().display().to_string(), "<dir>")
        };
        assert_eq!(
            message("max_quality = 0.3\n"),
            "invalid config `<dir>/bench.toml`: key `max_quality`: unknown field `max_quality`, expected one of \
             `created_after`, `created_before`, `repos`, `exclude_datasets`, `split_by`, `swt`, `max_quality_score`, \
             `exclude_flags`, `only_kept`, `min_mutation_score`, `reviewed_only`, `exclude_rejected`\n"
        );
        assert_eq!(
            message("split_by = \"week\"\n"),
            "invalid config `<dir>/bench.toml`: key `split_by`: unknown variant `week`, expected `month`\nin `split_by`\n"
        );
        assert_eq!(
            message("swt = [\n"),
            "the config file `<dir>/bench.toml` is not valid TOML: TOML parse error at line 1, column 8\n  |\n\
             1 | swt = [\n  |        ^\nunclosed array, expected `]`\n"
        );
    }
}
