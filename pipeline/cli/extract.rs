//! `extract`: merged PRs of the store -> task candidates; prints a summary per
//! repository (PRs in, candidates out, dropped by reason, PRs per second).

use std::io::Write;

use anyhow::Context;

use swe_harvest::config::Compat;
use swe_harvest::extract::{self, ExtractSettings};
use swe_harvest::git::mirror::mirror_path;
use swe_harvest::model::RepoSlug;
use swe_harvest::store::Store;

use super::args::{CompatArg, ExtractArgs};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

/// Per repository, `compat`: `--compat` > the environment
/// (`SWE_HARVEST_EXTRACT__COMPAT`) > the repository's file (`configs/repos/`) > the
/// config file > the default. Other keys: the repository's file > the environment >
/// the config file > the default.
pub fn settings(
    global: &GlobalSettings,
    repo: &RepoSlug,
    compat: Option<CompatArg>,
) -> anyhow::Result<ExtractSettings> {
    let config = &global.config.config.extract;
    let repo_config = global.config.repo(repo)?.extract;
    let compat_variable = format!("{}EXTRACT__COMPAT", swe_harvest::env_vars::CONFIG_OVERRIDE_PREFIX);
    // The loaded config already holds the variable's value when it is set.
    let from_environment = std::env::var_os(compat_variable).is_some().then_some(config.compat);
    Ok(ExtractSettings {
        compat: compat.map(Compat::from).or(from_environment).or(repo_config.compat).unwrap_or(config.compat),
        test_patterns: repo_config.test_patterns.unwrap_or_else(|| config.test_patterns.clone()),
        max_files_changed: config.max_files_changed,
        max_lines_changed: config.max_lines_changed,
        version_tag_pattern: repo_config.version_tag_pattern,
        version_file: repo_config.version_file,
        version_source: repo_config.version_source.unwrap_or_default(),
        workers: config.workers,
        use_api_closing_references: config.use_api_closing_references,
    })
}

pub fn extract(global: &GlobalSettings, args: &ExtractArgs) -> anyhow::Result<ExitStatus> {
    let mut store = Store::open_in(&global.data_dir)?;
    run(global, &mut store, &args.selection.repos, args.options.compat)
}

/// Extracts the repositories one after the other; used by `run` too.
pub fn run(
    global: &GlobalSettings,
    store: &mut Store,
    repos: &[RepoSlug],
    compat: Option<CompatArg>,
) -> anyhow::Result<ExitStatus> {
    let mut failed = false;
    for repo in repos {
        let settings = settings(global, repo, compat)?;
        let path = mirror_path(&global.data_dir, repo);
        let reporter = CliReporter::new();
        let summary = match extract::run(store, repo, path, &settings, &reporter) {
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
        let mut reasons: Vec<(&String, &usize)> = summary.dropped.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let reasons = reasons.iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", ");
        writeln!(
            stdout,
            "{repo} ({:?}): {} merged PRs in, {} unchanged since the last run, {} candidates out, {dropped} dropped{}{}, {:.0} PRs/s ({:.2}s)",
            settings.compat,
            summary.pull_requests,
            summary.unchanged,
            summary.candidates,
            if reasons.is_empty() { String::new() } else { format!(" ({reasons})") },
            if summary.failed > 0 { format!(", {} failed", summary.failed) } else { String::new() },
            summary.pull_requests_per_second(),
            summary.seconds,
        )?;
    }
    Ok(if failed { ExitStatus::Failure } else { ExitStatus::Success })
}
