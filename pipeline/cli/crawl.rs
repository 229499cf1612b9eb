//! `crawl`: resolves the crawl's settings (`CrawlSettings::resolve`), runs the crawl
//! stage, and prints its summary on stderr. Exits 1 when requests failed for good,
//! naming what is missing.

use std::io::Write;
use std::sync::Arc;

use swe_harvest::crawl::{self, CrawlFlags, CrawlSettings, CrawlSummary};
use swe_harvest::env_vars;
use swe_harvest::github::{ClientSettings, GithubClient, GithubConfig};

use super::args::{CrawlArgs, CrawlOptions};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing, runtime};

/// A GitHub client with the tokens of the environment, reporting through a new
/// reporter; `discover` uses it too.
pub fn github_client(github: &GithubConfig) -> anyhow::Result<(GithubClient, Arc<CliReporter>)> {
    let reporter = Arc::new(CliReporter::new());
    let client = GithubClient::new(ClientSettings::from_config(github, env_vars::github_tokens()), reporter.clone())?;
    Ok((client, reporter))
}

/// The command line's values for the library.
fn flags(options: &CrawlOptions) -> CrawlFlags {
    CrawlFlags {
        since: options.since,
        until: options.until,
        api_url: options.api_url.clone(),
        api: options.api.map(Into::into),
    }
}

pub fn crawl(global: &GlobalSettings, args: &CrawlArgs) -> anyhow::Result<ExitStatus> {
    let settings =
        CrawlSettings::resolve(&global.config.config.github, &global.config.config.crawl, &flags(&args.options))?;
    let repos = args.selection.repos.clone();
    let mut store = global.open_store(WhenMissing::Create)?;
    let summary = runtime()?.block_on(async {
        let (client, reporter) = github_client(&settings.github)?;
        let summary = crawl::run(&client, &mut store, &repos, &settings.options, reporter.as_ref()).await?;
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
        let pulls = match repo.unmerged_counted {
            Some(unmerged) => format!("{} merged PRs (GitHub counts {unmerged} closed unmerged)", repo.merged_seen),
            None => format!("{} closed PRs ({} merged)", repo.pull_requests_seen, repo.merged_seen),
        };
        writeln!(
            out,
            "{}: read {pulls}, {} issues, {} comments{}; the store holds {} merged PRs, {} issues, {} comments",
            repo.repo,
            repo.issues_seen,
            repo.comments_seen,
            match repo.plan {
                Some(crawl::Plan::PerIssue) => " (mentioned issues fetched one by one)",
                Some(crawl::Plan::Referenced) => " (the issues merged PRs refer to)",
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
