//! `extract`: merged PRs of the store -> task candidates; prints a summary per
//! repository (PRs in, candidates out, dropped by reason, PRs per second).

use std::io::Write;

use anyhow::Context;

use swe_harvest::ecosystem::repo_config::Compat;
use swe_harvest::extract::{self, ExtractSettings};
use swe_harvest::git::mirror::mirror_path;
use swe_harvest::model::drop_reason::format_counts;

use super::args::ExtractArgs;
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing};

/// Extracts the repositories one after the other.
pub fn extract(global: &GlobalSettings, args: &ExtractArgs) -> anyhow::Result<ExitStatus> {
    let mut store = global.open_store(WhenMissing::Create)?;
    let compat = args.options.compat.map(Compat::from);
    let mut failed = false;
    for repo in &args.selection.repos {
        let settings = ExtractSettings::resolve(&global.config.config.extract, &global.config.repos_dir, repo, compat)?;
        let path = mirror_path(&global.data_dir, repo);
        let reporter = CliReporter::new();
        let summary = match extract::run(&mut store, repo, path, &settings, &reporter) {
            Ok(summary) => summary,
            Err(error @ extract::ExtractError::Mirror { .. }) => {
                failed = true;
                let error = anyhow::Error::new(error).context(format!("failed to extract `{repo}`"));
                let mut stderr = std::io::stderr().lock();
                writeln!(stderr, "error: {error:#}")?;
                writeln!(stderr, "\nhint: run `swe-harvest mirror --repo {repo}` first")?;
                continue;
            }
            Err(error) => return Err(error).with_context(|| format!("failed to extract `{repo}`")),
        };
        failed |= summary.failed > 0;
        let mut stdout = std::io::stdout().lock();
        let dropped: usize = summary.dropped.values().sum();
        let reasons = format_counts(&summary.dropped);
        writeln!(
            stdout,
            "{repo} ({:?}): {} merged PRs in, {} unchanged since the last run, {} candidates out, {dropped} dropped{}{}{}, {:.0} PRs/s ({:.2}s)",
            settings.compat,
            summary.pull_requests,
            summary.unchanged,
            summary.candidates,
            if reasons.is_empty() { String::new() } else { format!(" ({reasons})") },
            if summary.failed > 0 { format!(", {} failed", summary.failed) } else { String::new() },
            if summary.invalidated > 0 {
                format!(", {} changed or dropped candidates to validate again", summary.invalidated)
            } else {
                String::new()
            },
            summary.pull_requests_per_second(),
            summary.seconds,
        )?;
    }
    Ok(if failed { ExitStatus::Failure } else { ExitStatus::Success })
}
