//! The crawl's settings: `[crawl]` in the config ([`CrawlConfig`], with its checks),
//! and what a crawl works with, resolved (defaults < config file < environment < the
//! command line's plain [`CrawlFlags`]).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::CrawlOptions;
use crate::UsageError;
use crate::github::GithubConfig;
use crate::settings::{ConfigError, invalid};

crate::spelled::spelled_enum! {
    /// Which GitHub API the crawl uses.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[serde(rename_all = "lowercase")]
    pub enum CrawlApi {
        /// GraphQL when a token is set (GitHub refuses anonymous GraphQL), else REST.
        #[default]
        Auto => "auto",
        Graphql => "graphql",
        Rest => "rest",
    }
}

/// `[crawl]` in `configs/pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlConfig {
    /// REST: fetch referenced issues one by one instead of listing all issues when a
    /// repository has more than this many issues per referenced issue.
    pub per_issue_fetch_ratio: u32,
    /// `auto` (GraphQL with a token, REST without), `graphql` or `rest`; `--api` wins.
    pub api: CrawlApi,
    /// Merged PRs (or updated issues) per GraphQL query (GitHub's maximum is 100);
    /// halved for the rest of the run when GitHub answers with a timeout or its node limit.
    pub graphql_page_size: u32,
    /// Referenced issues fetched by number in one GraphQL query; halved like the page size.
    pub graphql_issues_per_query: u32,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            per_issue_fetch_ratio: 20,
            api: CrawlApi::Auto,
            graphql_page_size: 100,
            graphql_issues_per_query: 100,
        }
    }
}

impl CrawlConfig {
    /// The values serde cannot check: the GraphQL page sizes.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        if !(1..=100).contains(&self.graphql_page_size) {
            return Err(invalid(origin, "crawl.graphql_page_size", "must be between 1 and 100 (GitHub's maximum)"));
        }
        if !(1..=100).contains(&self.graphql_issues_per_query) {
            return Err(invalid(origin, "crawl.graphql_issues_per_query", "must be between 1 and 100"));
        }
        Ok(())
    }
}

/// The crawl's command-line values, plain (no clap types): each overrides what the
/// config says.
#[derive(Debug, Clone, Default)]
pub struct CrawlFlags {
    pub since: Option<NaiveDate>,
    pub until: Option<NaiveDate>,
    /// `--api-url`.
    pub api_url: Option<String>,
    /// `--api`: which API to crawl with; the config's `crawl.api` when absent.
    pub api: Option<CrawlApi>,
}

/// Everything a crawl needs, resolved.
#[derive(Debug, Clone)]
pub struct CrawlSettings {
    /// The API client's settings, `--api-url` applied.
    pub github: GithubConfig,
    pub options: CrawlOptions,
}

impl CrawlSettings {
    /// Defaults < config file < environment (all three in the config's `github` and
    /// `crawl` sections) < `flags`. An empty window (`since` not before `until`) is bad
    /// usage.
    pub fn resolve(
        github: &GithubConfig,
        crawl: &CrawlConfig,
        flags: &CrawlFlags,
    ) -> Result<CrawlSettings, UsageError> {
        if let (Some(since), Some(until)) = (flags.since, flags.until) {
            if since >= until {
                return Err(UsageError::new(format!("--since {since} is not before --until {until}"))
                    .with_hint("--since is inclusive and --until exclusive: pass an earlier --since"));
            }
        }
        let github = github.clone().with_api_url(flags.api_url.as_deref());
        let options = CrawlOptions {
            since: flags.since,
            until: flags.until,
            per_page: github.per_page,
            per_issue_fetch_ratio: crawl.per_issue_fetch_ratio,
            api: flags.api.unwrap_or(crawl.api),
            graphql_page_size: crawl.graphql_page_size,
            graphql_issues_per_query: crawl.graphql_issues_per_query,
        };
        Ok(CrawlSettings { github, options })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_api_url_and_the_window_comes_from_the_flags() {
        let flags = CrawlFlags {
            since: NaiveDate::from_ymd_opt(2025, 1, 1),
            until: NaiveDate::from_ymd_opt(2025, 2, 1),
            api_url: Some("http://127.0.0.1:9/api".into()),
            api: Some(CrawlApi::Rest),
        };
        let settings = CrawlSettings::resolve(&GithubConfig::default(), &CrawlConfig::default(), &flags).unwrap();
        assert_eq!(settings.github.api_url, "http://127.0.0.1:9/api");
        assert_eq!(settings.options.api, CrawlApi::Rest, "--api beats crawl.api");
        assert_eq!((settings.options.since, settings.options.until), (flags.since, flags.until));
        assert_eq!(settings.options.per_page, settings.github.per_page);
        let github = GithubConfig::default();
        let defaults = CrawlSettings::resolve(&github, &CrawlConfig::default(), &CrawlFlags::default()).unwrap();
        assert_eq!(defaults.github.api_url, github.api_url);
    }

    #[test]
    fn an_empty_window_is_bad_usage_with_a_hint() {
        let day = NaiveDate::from_ymd_opt(2025, 1, 1);
        let error = CrawlSettings::resolve(
            &GithubConfig::default(),
            &CrawlConfig::default(),
            &CrawlFlags { since: day, until: day, ..CrawlFlags::default() },
        )
        .unwrap_err();
        assert_eq!(error.message, "--since 2025-01-01 is not before --until 2025-01-01");
        assert!(error.hint.unwrap().contains("--until exclusive"));
    }
}
