//! Resolving a release's request: the command line's plain values over the release
//! settings file `configs/releases/<name>.toml` over the config (image prefix,
//! registry, `swt_min_runs`). Writing the release is the rest of `release`.

use super::{Filters, ImageRequest, ReleaseError, ReleaseFile, ReleaseRequest};
use crate::config::LoadedConfig;

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
    pub fn resolve(config: &LoadedConfig, flags: &ReleaseFlags) -> Result<ReleaseRequest, ReleaseError> {
        let settings = &config.config;
        let given = &flags.settings;
        if flags.push && settings.release.registry.is_none() {
            return Err(ReleaseError::NoRegistry);
        }
        if let Some(max) = given.max_quality_score.filter(|max| !(0.0..=1.0).contains(max)) {
            return Err(ReleaseError::BadMaxQualityScore(max));
        }
        let file: ReleaseFile = match config.release_file(&flags.name)? {
            Some((file, path)) => {
                tracing::info!(path = %path.display(), "using the release settings file");
                file
            }
            None => ReleaseFile::default(),
        };
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
                reviewed_only: given.reviewed_only || file.reviewed_only,
                exclude_rejected: given.exclude_rejected || file.exclude_rejected,
            },
            split_by: given.split_by.or(file.split_by),
            force: flags.force,
            swt_min_runs: (given.swt || file.swt).then_some(settings.release.swt_min_runs),
            images: flags.images.then(|| ImageRequest {
                prefix: settings.release.image_prefix.clone(),
                push_to: if flags.push { settings.release.registry.clone() } else { None },
                build_timeout_secs: settings.validate.build_timeout_secs,
                build_limits: crate::sandbox::BuildLimits {
                    memory_bytes: settings.validate.memory_bytes as i64,
                    nano_cpus: (settings.validate.cpus * 1e9) as i64,
                },
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

    fn config_with_releases_dir(dir: &std::path::Path) -> LoadedConfig {
        let mut config = LoadedConfig::for_tests();
        config.releases_dir = dir.to_path_buf();
        config
    }

    #[test]
    fn flags_beat_the_release_file_and_lists_replace_its_lists() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(
            dir.path().join("bench.toml"),
            "created_after = 2026-01-01\nrepos = [\"psf/requests\"]\nsplit_by = \"month\"\nswt = true\n",
        )
        .unwrap();
        let config = config_with_releases_dir(dir.path());
        let from_file = ReleaseRequest::resolve(
            &config,
            &ReleaseFlags { name: "bench".into(), version: "1".into(), ..ReleaseFlags::default() },
        )
        .unwrap();
        assert_eq!(from_file.filters.created_after, NaiveDate::from_ymd_opt(2026, 1, 1));
        assert_eq!(from_file.filters.repos, vec!["psf/requests".parse::<RepoSlug>().unwrap()]);
        assert_eq!(from_file.split_by, Some(SplitPeriod::Month));
        assert_eq!(from_file.swt_min_runs, Some(config.config.release.swt_min_runs));
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
        let request = ReleaseRequest::resolve(&config, &flags).unwrap();
        assert_eq!(request.filters.created_after, NaiveDate::from_ymd_opt(2026, 6, 1));
        assert_eq!(request.filters.repos, vec!["pallets/flask".parse::<RepoSlug>().unwrap()]);
        assert_eq!(request.images.map(|images| images.prefix), Some(config.config.release.image_prefix.clone()));
    }

    #[test]
    fn push_without_a_registry_is_refused_before_anything_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config_with_releases_dir(dir.path());
        config.config.release.registry = None;
        let flags = ReleaseFlags { name: "bench".into(), images: true, push: true, ..ReleaseFlags::default() };
        assert!(matches!(ReleaseRequest::resolve(&config, &flags), Err(ReleaseError::NoRegistry)));
    }

    #[test]
    fn a_release_file_that_is_not_valid_is_refused_naming_the_file_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_with_releases_dir(dir.path());
        let flags = ReleaseFlags { name: "bench".into(), version: "1".into(), ..ReleaseFlags::default() };
        let message = |text: &str| {
            fs_err::write(dir.path().join("bench.toml"), text).unwrap();
            let error = ReleaseRequest::resolve(&config, &flags).unwrap_err();
            assert!(matches!(error, ReleaseError::Config(_)), "{error}");
            error.to_string().replace(&dir.path().display().to_string(), "<dir>")
        };
        assert_eq!(
            message("max_quality = 0.3\n"),
            "invalid config `<dir>/bench.toml`: key `max_quality`: unknown field `max_quality`, expected one of \
             `created_after`, `created_before`, `repos`, `exclude_datasets`, `split_by`, `swt`, `max_quality_score`, \
             `exclude_flags`, `only_kept`, `reviewed_only`, `exclude_rejected`\n"
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
