//! `release`: resolves the flags over `configs/releases/<name>.toml`
//! (`ReleaseRequest::resolve`) and writes a release; prints its path on stdout.

use std::io::Write;

use anyhow::Context;

use swe_harvest::release::{self, ReleaseFile, ReleaseFlags, ReleaseRequest, SplitPeriod};

use super::args::{ReleaseArgs, SplitBy};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing};

/// The command line's values for the library.
fn flags(args: &ReleaseArgs) -> ReleaseFlags {
    ReleaseFlags {
        name: args.name.clone(),
        version: args.version.clone(),
        settings: ReleaseFile {
            created_after: args.created_after,
            created_before: args.created_before,
            repos: args.repos.clone(),
            exclude_datasets: args.exclude_dataset.clone(),
            split_by: args.split_by.map(|SplitBy::Month| SplitPeriod::Month),
            swt: args.swt,
            max_quality_score: args.max_quality_score,
            exclude_flags: args.exclude_flag.clone(),
            only_kept: args.only_kept,
            min_mutation_score: args.min_mutation_score,
            reviewed_only: args.reviewed_only,
            exclude_rejected: args.exclude_rejected,
        },
        images: args.images,
        push: args.push,
        force: args.force,
    }
}

pub fn release(global: &GlobalSettings, args: &ReleaseArgs) -> anyhow::Result<ExitStatus> {
    let request = ReleaseRequest::resolve(
        &global.config.config.release,
        &global.config.config.validate,
        &global.config.releases_dir,
        &flags(args),
    )?;
    let mut store = global.open_store(WhenMissing::Create)?;
    let reporter = CliReporter::new();
    let summary = release::run(&mut store, &global.data_dir, &request, &reporter)
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
