//! Resolving a release's request: the command line's plain values over the release
//! settings file `configs/releases/<name>.toml` over the config (image prefix,
//! registry, `swt_min_runs`). Writing the release is the rest of `release`.

use std::path::PathBuf;

use chrono::NaiveDate;

use super::{Filters, ImageRequest, ReleaseError, ReleaseFile, ReleaseRequest, SplitPeriod};
use crate::config::LoadedConfig;
use crate::model::RepoSlug;

/// Release's command-line values, plain (no clap types). Empty lists and `None`
/// leave the value to the release file.
#[derive(Debug, Clone, Default)]
pub struct ReleaseFlags {
    pub name: String,
    pub version: String,
    pub created_after: Option<NaiveDate>,
    pub created_before: Option<NaiveDate>,
    pub repos: Vec<RepoSlug>,
    pub exclude_datasets: Vec<PathBuf>,
    pub split_by: Option<SplitPeriod>,
    /// `--images`.
    pub images: bool,
    /// `--push` (with `--images`): push to `release.registry`.
    pub push: bool,
    /// `--swt`.
    pub swt: bool,
    /// `--force`.
    pub force: bool,
    /// `--max-quality-score`.
    pub max_quality_score: Option<f64>,
    /// `--exclude-flag`.
    pub exclude_flags: Vec<crate::screen::FlagCode>,
    /// `--only-kept`.
    pub only_kept: bool,
    /// `--reviewed-only`.
    pub reviewed_only: bool,
    /// `--exclude-rejected`.
    pub exclude_rejected: bool,
}

impl ReleaseRequest {
    /// Flags beat the release file; list flags, when given, replace the file's lists.
    /// `--push` without a configured registry is bad usage.
    pub fn resolve(config: &LoadedConfig, flags: &ReleaseFlags) -> Result<ReleaseRequest, ReleaseError> {
        let settings = &config.config;
        if flags.push && settings.release.registry.is_none() {
            return Err(ReleaseError::NoRegistry);
        }
        if let Some(max) = flags.max_quality_score.filter(|max| !(0.0..=1.0).contains(max)) {
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
                created_after: flags.created_after.or(file.created_after),
                created_before: flags.created_before.or(file.created_before),
                repos: if flags.repos.is_empty() { file.repos } else { flags.repos.clone() },
                exclude_datasets: if flags.exclude_datasets.is_empty() {
                    file.exclude_datasets
                } else {
                    flags.exclude_datasets.clone()
                },
                screen: super::screen::ScreenFilters {
                    max_quality_score: flags.max_quality_score.or(file.max_quality_score),
                    exclude_flags: if flags.exclude_flags.is_empty() {
                        file.exclude_flags
                    } else {
                        flags.exclude_flags.clone()
                    },
                    only_kept: flags.only_kept || file.only_kept,
                },
                reviewed_only: flags.reviewed_only || file.reviewed_only,
                exclude_rejected: flags.exclude_rejected || file.exclude_rejected,
            },
            split_by: flags.split_by.or(file.split_by),
            force: flags.force,
            swt_min_runs: (flags.swt || file.swt).then_some(settings.release.swt_min_runs),
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
    use super::*;

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
            created_after: NaiveDate::from_ymd_opt(2026, 6, 1),
            repos: vec!["pallets/flask".parse().unwrap()],
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
}
