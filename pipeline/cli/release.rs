//! `release`: resolves flags over `configs/releases/<name>.toml` and writes a release.

use std::io::Write;

use anyhow::Context;

use swe_harvest::release::{self, Filters, ImageRequest, ReleaseFile, ReleaseRequest, SplitPeriod};
use swe_harvest::store::Store;

use super::args::{ReleaseArgs, SplitBy};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

/// Flags beat the release file; list flags, when given, replace the file's lists.
pub fn resolve(settings: &GlobalSettings, args: &ReleaseArgs) -> anyhow::Result<ReleaseRequest> {
    let file: ReleaseFile = match settings.config.release_file(&args.name)? {
        Some((file, path)) => {
            tracing::info!(path = %path.display(), "using the release settings file");
            file
        }
        None => ReleaseFile::default(),
    };
    Ok(ReleaseRequest {
        name: args.name.clone(),
        version: args.version.clone(),
        filters: Filters {
            created_after: args.created_after.or(file.created_after),
            created_before: args.created_before.or(file.created_before),
            repos: if args.repos.is_empty() { file.repos } else { args.repos.clone() },
            exclude_datasets: if args.exclude_dataset.is_empty() {
                file.exclude_datasets
            } else {
                args.exclude_dataset.clone()
            },
        },
        split_by: args.split_by.map(|SplitBy::Month| SplitPeriod::Month).or(file.split_by),
        force: args.force,
        swt_min_runs: (args.swt || file.swt).then_some(settings.config.config.release.swt_min_runs),
        images: args.images.then(|| {
            let config = &settings.config.config;
            ImageRequest {
                prefix: config.release.image_prefix.clone(),
                push_to: if args.push { config.release.registry.clone() } else { None },
                build_timeout_secs: config.validate.build_timeout_secs,
                mirrors_dir: std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            }
        }),
    })
}

pub fn release(settings: &GlobalSettings, args: &ReleaseArgs) -> anyhow::Result<ExitStatus> {
    if args.push && settings.config.config.release.registry.is_none() {
        return Err(swe_harvest::UsageError::new("`--push` needs a registry to push to")
            .with_hint("set `registry` under `[release]` in the config (or SWE_HARVEST_RELEASE__REGISTRY)")
            .into());
    }
    let request = resolve(settings, args)?;
    let mut store = Store::open_in(&settings.data_dir)?;
    let reporter = CliReporter::new();
    let summary = release::run(&mut store, &settings.data_dir, &request, &reporter)
        .with_context(|| format!("failed to release `{}/{}`", args.name, args.version))?;
    let counts = &summary.manifest.counts;
    tracing::info!(
        "released {} tasks from {} repositories{}",
        counts.total,
        counts.per_repository.len(),
        if counts.per_split.is_empty() { String::new() } else { format!(" in {} splits", counts.per_split.len()) }
    );
    writeln!(std::io::stdout().lock(), "{}", summary.path.display()).context("failed to write to stdout")?;
    Ok(ExitStatus::Success)
}
