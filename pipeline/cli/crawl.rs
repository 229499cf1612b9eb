//! `crawl`: resolves the GitHub settings (flag > environment > config file >
//! defaults), runs the crawl stage, and prints its summary on stderr. Exits 1 when
//! requests failed for good, naming what is missing.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;

use swe_harvest::config::GithubConfig;
use swe_harvest::crawl::{self, CrawlOptions, CrawlSummary};
use swe_harvest::github::{ClientSettings, GithubClient};
use swe_harvest::store::Store;
use swe_harvest::{UsageError, env_vars};

use super::args::{CrawlArgs, CrawlOptions as CrawlArgsOptions};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

/// The GitHub settings with `--api-url` applied over the config (which already
/// holds `SWE_HARVEST_API_URL`).
pub fn github_settings(settings: &GlobalSettings, api_url: Option<&String>) -> GithubConfig {
    let mut github = settings.config.config.github.clone();
    if let Some(api_url) = api_url {
        github.api_url = api_url.clone();
    }
    github
}

/// The store of the data dir, for the commands that talk to GitHub.
pub fn open_store(settings: &GlobalSettings) -> anyhow::Result<Store> {
    Store::open_in(&settings.data_dir)
        .with_context(|| format!("failed to open the store in `{}`", settings.data_dir.display()))
}

/// A GitHub client with the tokens of the environment, reporting through a new reporter.
pub fn github_client(github: &GithubConfig) -> anyhow::Result<(GithubClient, Arc<CliReporter>)> {
    let reporter = Arc::new(CliReporter::new());
    let client = GithubClient::new(ClientSettings::from_config(github, env_vars::github_tokens()), reporter.clone())?;
    Ok((client, reporter))
}

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("failed to start the async runtime")
}

fn check_window(options: &CrawlArgsOptions) -> Result<(), UsageError> {
    if let (Some(since), Some(until)) = (options.since, options.until) {
        if since >= until {
            return Err(UsageError::new(format!("--since {since} is not before --until {until}"))
                .with_hint("--since is inclusive and --until exclusive: pass an earlier --since"));
        }
    }
    Ok(())
}

pub fn crawl(settings: &GlobalSettings, args: &CrawlArgs) -> anyhow::Result<ExitStatus> {
    check_window(&args.options)?;
    let github = github_settings(settings, args.options.api_url.as_ref());
    let options = CrawlOptions {
        since: args.options.since,
        until: args.options.until,
        per_page: github.per_page,
        per_issue_fetch_ratio: settings.config.config.crawl.per_issue_fetch_ratio,
        api: args.options.api.map(Into::into).unwrap_or(settings.config.config.crawl.api),
        graphql_page_size: settings.config.config.crawl.graphql_page_size,
        graphql_issues_per_query: settings.config.config.crawl.graphql_issues_per_query,
    };
    let repos = args.selection.repos.clone();
    let mut store = open_store(settings)?;
    let summary = runtime()?.block_on(async {
        let (client, reporter) = github_client(&github)?;
        let summary = crawl::run(&client, &mut store, &repos, &options, reporter.as_ref()).await?;
        anyhow::Ok(summary)
    })?;
    print_summary(&summary)?;
    Ok(if summary.failed_requests() > 0 { ExitStatus::Failure } else { ExitStatus::Success })
}

/// At most this many missing URLs are listed per repository.
const MISSING_SHOWN: usize = 20;

fn print_summary(summary: &CrawlSummary) -> std::io::Result<()> {
    let mut out = std::io::stderr().lock();
    for repo in &summary.repositories {
        writeln!(
            out,
            "{}: read {} closed PRs ({} merged), {} issues, {} comments{}; the store holds {} merged PRs, {} issues, {} comments",
            repo.repo,
            repo.pull_requests_seen,
            repo.merged_seen,
            repo.issues_seen,
            repo.comments_seen,
            match repo.plan {
                Some(crawl::Plan::PerIssue) => " (mentioned issues fetched one by one)",
                _ => "",
            },
            repo.stored.merged_pull_requests,
            repo.stored.issues,
            repo.stored.comments,
        )?;
    }
    let client = &summary.client;
    let points = if client.graphql_queries > 0 { format!(", {} GraphQL points", client.points) } else { String::new() };
    writeln!(
        out,
        "{} requests through the {} API ({} answered 304 Not Modified, {} retried{points}), {}s waiting for rate limits, {:.1}s in all",
        client.requests,
        summary.api,
        client.not_modified,
        client.retries,
        client.rate_limit_wait_secs,
        summary.elapsed_secs
    )?;
    let failed = summary.failed_requests();
    if failed > 0 {
        writeln!(out, "\nerror: {failed} requests failed for good; missing:")?;
        for repo in summary.repositories.iter().filter(|repo| !repo.failed.is_empty()) {
            for (url, error) in repo.failed.iter().take(MISSING_SHOWN) {
                writeln!(out, "  {}: {url}\n    {error}", repo.repo)?;
            }
            if repo.failed.len() > MISSING_SHOWN {
                writeln!(out, "  {}: and {} more", repo.repo, repo.failed.len() - MISSING_SHOWN)?;
            }
        }
        writeln!(
            out,
            "\nhint: run the same crawl again: it resumes where it stopped and fetches only what is missing"
        )?;
    }
    Ok(())
}
