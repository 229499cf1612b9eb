//! The discover stage: candidate repositories from GitHub's search API (language,
//! minimum stars, last push, license), minus repositories that already appear in
//! reference datasets. Results go to the store's `repositories` table and the
//! funnel (stage `discover`: kept repositories pass, those found in a reference
//! dataset are dropped with `in_reference_dataset`); the CLI can also write them as
//! a TOML repository list. HTTP is [`crate::github`]'s business.
//!
//! The search API answers at most 1,000 results per query, 100 per page, sorted by
//! stars; discover pages until it has `limit` repositories after exclusions. When a
//! query's 1,000 results run out first, the next query asks for the stars below the
//! last ones seen (`stars:MIN..LAST`, repositories seen already skipped), so the cap
//! is never a silent end; only more than 1,000 repositories with one star count stop
//! it, and the summary says so (`capped`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::github::{Fetched, GithubClient, GithubError};
use crate::model::drop_reason::DiscoverDropReason;
use crate::model::{Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::store::{self, Store, StoreError};

/// What to search for: the search API's filters, and how many repositories to find.
#[derive(Debug, Clone, Default)]
pub struct RepositorySearch {
    pub language: String,
    pub min_stars: u32,
    pub limit: usize,
    /// Only repositories pushed to on or after this day.
    pub pushed_after: Option<NaiveDate>,
    /// Only repositories under this license (GitHub's key, e.g. `mit`).
    pub license: Option<String>,
}

/// What to search for, and what to leave out.
#[derive(Debug, Clone)]
pub struct DiscoverOptions {
    pub search: RepositorySearch,
    /// `owner/name` (lower case) of repositories to leave out.
    pub exclude: BTreeSet<String>,
}

/// Discover's command-line values, plain (no clap types).
#[derive(Debug, Clone, Default)]
pub struct DiscoverFlags {
    pub search: RepositorySearch,
    /// `--exclude-dataset`: JSONL or parquet files with a `repo` column.
    pub exclude_datasets: Vec<PathBuf>,
    /// `--api-url`.
    pub api_url: Option<String>,
}

/// Everything a discover run needs, resolved.
#[derive(Debug, Clone)]
pub struct DiscoverSettings {
    /// The API client's settings, `--api-url` applied.
    pub github: crate::github::GithubConfig,
    pub options: DiscoverOptions,
}

impl DiscoverSettings {
    /// Defaults < config file < environment (all three in `github`, the config's
    /// `[github]`) < `flags`; reads the repositories of the datasets to exclude.
    pub fn resolve(
        github: &crate::github::GithubConfig,
        flags: &DiscoverFlags,
    ) -> Result<DiscoverSettings, DiscoverError> {
        let mut exclude = BTreeSet::new();
        for path in &flags.exclude_datasets {
            exclude.extend(dataset_repositories(path)?);
        }
        Ok(DiscoverSettings {
            github: github.clone().with_api_url(flags.api_url.as_deref()),
            options: DiscoverOptions { search: flags.search.clone(), exclude },
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the repository search failed")]
    Github(#[from] GithubError),
    #[error("failed to read the dataset `{path}`: {message}; pass a JSONL or parquet file with a `repo` column")]
    Dataset { path: PathBuf, message: String },
}

/// One repository found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredRepository {
    pub repo: RepoSlug,
    pub stars: u32,
    pub language: Option<String>,
    pub license: Option<String>,
    pub pushed_at: Option<DateTime<Utc>>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiscoverSummary {
    pub query: String,
    pub found: Vec<DiscoveredRepository>,
    /// Repositories left out because a reference dataset has them.
    pub excluded: Vec<String>,
    /// Matches the search reported in total (for its first query).
    pub total_count: Option<u64>,
    /// The search API's cap of 1,000 results per query stopped the search before
    /// `limit` (more than 1,000 repositories share one star count).
    pub capped: bool,
}

/// The most results the search API gives for one query.
pub const SEARCH_RESULT_CAP: usize = 1000;

/// The search query of GitHub's syntax; `most_stars` bounds the stars from above
/// (the queries after the first 1,000 results).
pub fn search_query(options: &DiscoverOptions, most_stars: Option<u32>) -> String {
    let stars = match most_stars {
        Some(most) => format!("stars:{}..{most}", options.search.min_stars),
        None => format!("stars:>={}", options.search.min_stars),
    };
    let mut terms = vec![format!("language:{}", options.search.language), stars];
    if let Some(day) = options.search.pushed_after {
        terms.push(format!("pushed:>={}", day.format("%Y-%m-%d")));
    }
    if let Some(license) = &options.search.license {
        terms.push(format!("license:{license}"));
    }
    terms.push("archived:false".into());
    terms.join(" ")
}

#[derive(Debug, Deserialize)]
struct SearchPage {
    total_count: Option<u64>,
    items: Vec<octocrab::models::Repository>,
}

/// Searches, pages, excludes, and stores what it found.
pub async fn run(
    client: &GithubClient,
    store: &mut Store,
    options: &DiscoverOptions,
    reporter: &dyn Reporter,
) -> Result<DiscoverSummary, DiscoverError> {
    let query = search_query(options, None);
    let first_page = |query: String| {
        Some(client.url(
            "/search/repositories",
            &[
                ("q", query),
                ("sort", "stars".into()),
                ("order", "desc".into()),
                ("per_page", options.search.limit.clamp(1, 100).to_string()),
            ],
        ))
    };
    let mut next = first_page(query.clone());
    let mut summary = DiscoverSummary {
        query: query.clone(),
        found: Vec::new(),
        excluded: Vec::new(),
        total_count: None,
        capped: false,
    };
    // The current query's upper bound of stars, results so far and fewest stars seen.
    let mut most_stars: Option<u32> = None;
    let mut in_query = 0usize;
    let mut fewest_stars: Option<u32> = None;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    reporter.start("discover repositories", Some(options.search.limit as u64));
    loop {
        if summary.found.len() >= options.search.limit {
            break;
        }
        let Some(url) = next.take() else {
            // This query is exhausted: below its cap, or at it (then go on below the
            // fewest stars seen, unless they did not move).
            if in_query < SEARCH_RESULT_CAP {
                break;
            }
            match fewest_stars {
                Some(fewest) if Some(fewest) != most_stars => {
                    tracing::info!(stars = fewest, "the search API's 1,000 results ran out; going on below them");
                    most_stars = Some(fewest);
                    in_query = 0;
                    next = first_page(search_query(options, most_stars));
                    continue;
                }
                _ => {
                    tracing::warn!(
                        "the search API returns at most 1,000 results per query, and more repositories than that \
                         share one star count; raise --min-stars or narrow with --pushed-after / --license"
                    );
                    summary.capped = true;
                    break;
                }
            }
        };
        let page = match client.get_json::<SearchPage>(&url, None).await? {
            Fetched::Fresh { value, next: following, .. } => {
                next = following;
                value
            }
            Fetched::NotModified => break,
        };
        summary.total_count = summary.total_count.or(page.total_count);
        let mut kept = Vec::new();
        let mut excluded = Vec::new();
        in_query += page.items.len();
        for repository in page.items {
            let Some(found) = convert(repository) else { continue };
            fewest_stars = Some(fewest_stars.map_or(found.stars, |fewest| fewest.min(found.stars)));
            // The next query repeats the repositories with the fewest stars of this one.
            if !seen.insert(found.repo.to_string().to_lowercase()) {
                continue;
            }
            if options.exclude.contains(&found.repo.to_string().to_lowercase()) {
                excluded.push(found);
            } else if summary.found.len() + kept.len() < options.search.limit {
                kept.push(found);
            }
        }
        store.transaction(|tx| -> Result<(), StoreError> {
            for found in &kept {
                store::discover::upsert_repository(
                    tx,
                    &found.repo,
                    "discover",
                    &serde_json::to_value(found).expect("serializes"),
                )?;
                store::record_passed(tx, Stage::Discover, &found.repo, &found.repo.to_string())?;
            }
            for found in &excluded {
                store::record_dropped(
                    tx,
                    &Rejection::new(
                        DiscoverDropReason::InReferenceDataset,
                        found.repo.clone(),
                        found.repo.to_string(),
                        "a reference dataset given with --exclude-dataset has tasks from this repository",
                    ),
                )?;
            }
            Ok(())
        })?;
        reporter.advance(kept.len() as u64);
        summary.excluded.extend(excluded.into_iter().map(|found| found.repo.to_string()));
        summary.found.extend(kept);
    }
    reporter.finish();
    Ok(summary)
}

fn convert(repository: octocrab::models::Repository) -> Option<DiscoveredRepository> {
    let full_name = repository
        .full_name
        .clone()
        .or_else(|| repository.owner.as_ref().map(|owner| format!("{}/{}", owner.login, repository.name)))?;
    let repo: RepoSlug = full_name.parse().ok()?;
    Some(DiscoveredRepository {
        repo,
        stars: repository.stargazers_count.unwrap_or(0),
        language: repository.language.as_ref().and_then(|value| value.as_str()).map(str::to_string),
        license: repository.license.as_ref().map(|license| license.key.clone()),
        pushed_at: repository.pushed_at,
        description: repository.description.clone(),
    })
}

/// The `repo` values (lower case) of a dataset, JSONL or parquet, read by
/// [`crate::dataset::read_records`].
pub fn dataset_repositories(path: &Path) -> Result<BTreeSet<String>, DiscoverError> {
    let error = |message: String| DiscoverError::Dataset { path: path.to_path_buf(), message };
    let records = crate::dataset::read_records(path).map_err(|e| error(crate::error_chain(&e)))?;
    let mut repos = BTreeSet::new();
    for (index, record) in records.iter().enumerate() {
        let repo = record
            .get("repo")
            .and_then(|value| value.as_str())
            .ok_or_else(|| error(format!("row {} has no `repo` string", index + 1)))?;
        repos.insert(repo.to_lowercase());
    }
    Ok(repos)
}

/// The repositories as a TOML list for configs and `--repo`.
/// Writes [`repository_list_toml`] to `path` (`--out`) through a temporary file
/// beside it, so the list is whole or absent.
pub fn write_repository_list(path: &Path, summary: &DiscoverSummary) -> std::io::Result<()> {
    let temporary = path.with_extension("toml.partial");
    fs_err::write(&temporary, repository_list_toml(summary))?;
    fs_err::rename(&temporary, path)
}

pub fn repository_list_toml(summary: &DiscoverSummary) -> String {
    let mut text = format!(
        "# Repositories found by `swe-harvest discover` on {}\n# Search: {}\nrepos = [\n",
        Utc::now().format("%Y-%m-%d"),
        summary.query
    );
    for found in &summary.found {
        let license = found.license.as_deref().unwrap_or("no license");
        text.push_str(&format!("    \"{}\", # {} stars, {license}\n", found.repo, found.stars));
    }
    text.push_str("]\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_query_has_every_filter() {
        let search = RepositorySearch {
            language: "Python".into(),
            min_stars: 500,
            limit: 10,
            pushed_after: NaiveDate::from_ymd_opt(2025, 1, 31),
            license: Some("mit".into()),
        };
        let options = DiscoverOptions { search, exclude: BTreeSet::new() };
        assert_eq!(
            search_query(&options, None),
            "language:Python stars:>=500 pushed:>=2025-01-31 license:mit archived:false"
        );
        assert_eq!(
            search_query(&options, Some(900)),
            "language:Python stars:500..900 pushed:>=2025-01-31 license:mit archived:false"
        );
    }

    #[test]
    fn repository_list_is_valid_toml() {
        let summary = DiscoverSummary {
            query: "language:Python".into(),
            found: vec![DiscoveredRepository {
                repo: "a/b".parse().unwrap(),
                stars: 10,
                language: Some("Python".into()),
                license: Some("mit".into()),
                pushed_at: None,
                description: None,
            }],
            excluded: vec![],
            total_count: Some(1),
            capped: false,
        };
        let table: toml::Table = repository_list_toml(&summary).parse().unwrap();
        assert_eq!(table["repos"].as_array().unwrap()[0].as_str(), Some("a/b"));
    }
}
