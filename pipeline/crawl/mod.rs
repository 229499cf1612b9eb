//! The crawl stage: GitHub API -> raw objects in the store (merged pull requests,
//! issues, issue comments), in as few requests as the data allows, resumable and
//! incremental. It owns what to fetch and in which order; HTTP, rate limits and
//! retries belong to [`crate::github`], rows and checkpoints to [`crate::store`].
//! It fetches no diffs or commits: those come from the git mirror.
//!
//! What is fetched per repository, in this order:
//! 1. `pulls`: `GET /repos/O/N/pulls?state=closed&sort=updated&direction=desc`, 100
//!    per page. Merged PRs (non-null `merged_at`) created inside `--since`/`--until`
//!    are stored and recorded as passed in the funnel; closed-unmerged ones are
//!    recorded as dropped (`not_merged`). The pulls endpoint has no `since`, so
//!    paging stops at the first PR updated before the pass's lower bound
//!    (`created_at <= updated_at`, so nothing in the window is older than that).
//! 2. Issues, by one of two plans chosen once per window (see [`Plan`]):
//!    - bulk (the usual case): `GET /repos/O/N/issues?state=all&sort=updated&since=`
//!      and `GET /repos/O/N/issues/comments?sort=updated&since=`, 100 per page.
//!      Every issue and comment updated in the window is stored (about one request
//!      per 100 objects, far cheaper than per-PR calls); entries of the issues
//!      listing that are pull requests are not stored as issues. Which PR resolves
//!      which issue is extract's business (closing keywords in titles, bodies and
//!      commit messages), so crawl does not guess.
//!    - per issue: when the repository holds more than `crawl.per_issue_fetch_ratio`
//!      issues per issue that the window's PRs mention (`#N`, same-repo `o/n#N`,
//!      issue URLs in titles and bodies), listing them all would cost more than
//!      `GET /issues/N` plus `GET /issues/N/comments` for just those. Issues that
//!      only commit messages mention are then not fetched (the mirror is not there
//!      yet when crawl runs).
//!
//! With `--since` and the bulk plan, mentioned issues created before `--since` are
//! also fetched one by one, because their older comments (hints) are outside the
//! listing's `since`. The estimate of a repository's issues comes from the PR
//! numbers (issues and PRs share one sequence): the span of the window's numbers
//! minus its PRs.
//!
//! Resumable: every page is written in one transaction together with its resource's
//! checkpoint (the next page's URL), so a crawl killed at any instant restarts at
//! the first page it had not committed. Incremental: a pass remembers the newest
//! `updated_at` it saw on its first page (the watermark); the next pass lists only
//! what was updated since (`since=` for issues and comments; stop-by-date for
//! pulls), and asks for first pages with `If-None-Match`, so an unchanged listing
//! costs one 304. Sorting newest first means objects updated during a pass move to
//! pages already read, never past the read position, and they are newer than the
//! watermark, so the next pass picks them up.
//!
//! A request that fails for good is recorded in `failed_requests`; the rest of the
//! crawl goes on, the pass stays open (the next run resumes it), and the summary
//! says what is missing.
//!
//! This describes the REST crawl (`--api rest`). The GraphQL crawl (`--api graphql`,
//! the default when a token is set) lists merged PRs only, counts the unmerged ones,
//! and fetches only the issues merged PRs refer to, plus GitHub's closing references:
//! the same merged PRs, referenced issues, comments and funnel in about a quarter of
//! the requests; see [`graphql`].

mod convert;
mod graphql;
mod settings;
pub use graphql::OPERATIONS as GRAPHQL_OPERATIONS;
pub mod references;

pub use settings::{CrawlApi, CrawlConfig, CrawlFlags, CrawlSettings};

use std::collections::BTreeSet;
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::Transaction;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::github::{ClientStats, Fetched, GithubClient, GithubError};
use crate::model::drop_reason::CrawlDropReason;
use crate::model::{CrawlCheckpoint, RawComment, RawIssue, RawPullRequest, Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::store::{self, Store, StoreError, raw};

/// Objects on one page of a bulk listing (GitHub's maximum `per_page`).
const BULK_PAGE_SIZE: u64 = 100;

/// What to crawl.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Only PRs created on or after this day.
    pub since: Option<NaiveDate>,
    /// Only PRs created before this day.
    pub until: Option<NaiveDate>,
    /// Page size of listings (GitHub caps it at 100).
    pub per_page: u32,
    /// See [`CrawlConfig::per_issue_fetch_ratio`].
    pub per_issue_fetch_ratio: u32,
    /// Which API: `Auto` is GraphQL when the client has a token, REST without.
    pub api: CrawlApi,
    /// See [`CrawlConfig::graphql_page_size`].
    pub graphql_page_size: u32,
    /// See [`CrawlConfig::graphql_issues_per_query`].
    pub graphql_issues_per_query: u32,
}

impl CrawlOptions {
    /// The API this crawl uses: `Auto` resolved by whether a token is set
    /// (GitHub answers anonymous GraphQL queries with 401).
    pub fn resolved_api(&self, has_token: bool) -> CrawlApi {
        match self.api {
            CrawlApi::Auto if has_token => CrawlApi::Graphql,
            CrawlApi::Auto => CrawlApi::Rest,
            api => api,
        }
    }
}

/// A stage error that stops the crawl: only the store failing. GitHub failures
/// are recorded per request instead.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How issues are fetched for one window of one repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Plan {
    Bulk,
    PerIssue,
    /// GraphQL: only the issues the merged PRs refer to, by number.
    Referenced,
}

/// What one repository's crawl did in this run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RepoSummary {
    pub repo: String,
    pub plan: Option<Plan>,
    /// Closed PRs read from the API (or a 304's cached page) in the window.
    pub pull_requests_seen: u64,
    pub merged_seen: u64,
    /// Closed-unmerged PRs of the window as GitHub counted them (GraphQL, which does
    /// not list them).
    pub unmerged_counted: Option<u64>,
    pub issues_seen: u64,
    pub comments_seen: u64,
    /// What the store holds for the repository after the run.
    pub stored: store::crawl::RawCounts,
    /// Requests that failed for good, URL and error: what is missing.
    pub failed: Vec<(String, String)>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct CrawlSummary {
    /// `graphql` or `rest`.
    pub api: &'static str,
    pub repositories: Vec<RepoSummary>,
    pub client: ClientStats,
    pub elapsed_secs: f64,
}

impl CrawlSummary {
    pub fn failed_requests(&self) -> usize {
        self.repositories.iter().map(|repo| repo.failed.len()).sum()
    }
}

/// The window a pass was started with; a pass of another window starts over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Window {
    since: Option<NaiveDate>,
    until: Option<NaiveDate>,
}

impl Window {
    fn contains(&self, created_at: &DateTime<Utc>) -> bool {
        let day = created_at.date_naive();
        self.since.is_none_or(|since| day >= since) && self.until.is_none_or(|until| day < until)
    }
    fn since_time(&self) -> Option<DateTime<Utc>> {
        self.since.map(|day| day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc())
    }
}

const PASS: &str = "pass";
const PULLS: &str = "pulls";
const ISSUES: &str = "issues";
const COMMENTS: &str = "comments";
const REFERENCED: &str = "referenced_issues";

/// The repository-level checkpoint: which pass is running, and its plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PassCursor {
    number: u64,
    window: Window,
    in_progress: bool,
    plan: Option<Plan>,
}

/// The checkpoint of one listing resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ListingCursor {
    pass: u64,
    window: Window,
    /// The pass's lower bound on `updated_at`.
    since: Option<DateTime<Utc>>,
    /// The next page to fetch, relative to the API root ([`GithubClient::relative_url`]);
    /// `None` once the pass of this listing is complete.
    next: Option<String>,
    pages_done: u64,
    /// The newest `updated_at` on the pass's first page.
    watermark: Option<DateTime<Utc>>,
    complete: bool,
}

/// The checkpoint of referenced issues, one by one (REST) or many per query
/// (GraphQL): the numbers fetched (or found to be no issue) in this window, whose
/// stored copy the refresh listing keeps current.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ReferencedCursor {
    window: Option<Window>,
    done: BTreeSet<u64>,
}

/// A page as cached for conditional requests: our compact objects, not GitHub's
/// bulky JSON, and the page's next link.
#[derive(Debug, Serialize, Deserialize)]
struct CachedPage<T> {
    next: Option<String>,
    items: Vec<T>,
}

/// [`CachedPage`] for writing, borrowing its items.
#[derive(Serialize)]
struct CachedPageRef<'a, T> {
    next: Option<String>,
    items: &'a [T],
}

/// Crawls each repository in turn.
pub async fn run(
    client: &GithubClient,
    store: &mut Store,
    repos: &[RepoSlug],
    options: &CrawlOptions,
    reporter: &dyn Reporter,
) -> Result<CrawlSummary, CrawlError> {
    let started = Instant::now();
    let api = options.resolved_api(client.has_token());
    if api == CrawlApi::Graphql && !client.has_token() {
        tracing::warn!("GitHub refuses GraphQL queries without a token: set GITHUB_TOKEN, or crawl with --api rest");
    }
    tracing::info!(api = api.as_str(), "crawling through the {} API", api.as_str());
    let mut summaries = Vec::new();
    for repo in repos {
        let mut crawl = RepoCrawl {
            client,
            store: &mut *store,
            repo,
            options,
            reporter,
            window: Window { since: options.since, until: options.until },
            summary: RepoSummary { repo: repo.to_string(), ..RepoSummary::default() },
            graphql_page_size: options.graphql_page_size.clamp(1, 100),
            graphql_batch_size: options.graphql_issues_per_query.clamp(1, 100),
        };
        if api == CrawlApi::Graphql {
            crawl.run_graphql().await?;
        } else {
            crawl.run().await?;
        }
        let mut summary = crawl.summary;
        summary.stored = store::crawl::raw_counts(store.connection(), repo)?;
        summary.failed = raw::failed_requests(store.connection(), repo)?;
        summaries.push(summary);
    }
    Ok(CrawlSummary {
        api: api.as_str(),
        repositories: summaries,
        client: client.stats(),
        elapsed_secs: started.elapsed().as_secs_f64(),
    })
}

/// One item kind of a listing: how it is fetched, converted, dated and stored.
trait Listing {
    type Api: DeserializeOwned;
    type Item: Serialize + DeserializeOwned;
    const RESOURCE: &'static str;
    /// Our item of one of the API's; `None` (warned) skips it.
    fn convert(api: Self::Api) -> Option<Self::Item>;
    fn updated_at(item: &Self::Item) -> DateTime<Utc>;
    /// Writes one item; returns (1 if it counts for the summary, 1 if a merged PR).
    fn store(
        tx: &Transaction<'_>,
        repo: &RepoSlug,
        window: &Window,
        item: &Self::Item,
    ) -> Result<(u64, u64), StoreError>;
}

struct PullsListing;
impl Listing for PullsListing {
    type Api = octocrab::models::pulls::PullRequest;
    type Item = RawPullRequest;
    const RESOURCE: &'static str = PULLS;
    fn convert(pull: Self::Api) -> Option<RawPullRequest> {
        let number = pull.number;
        let converted = convert::pull_request(pull);
        if converted.is_none() {
            tracing::warn!(number, "skipping a pull request without a creation time");
        }
        converted
    }
    fn updated_at(item: &RawPullRequest) -> DateTime<Utc> {
        item.updated_at
    }
    fn store(
        tx: &Transaction<'_>,
        repo: &RepoSlug,
        window: &Window,
        pull: &RawPullRequest,
    ) -> Result<(u64, u64), StoreError> {
        if !window.contains(&pull.created_at) {
            return Ok((0, 0));
        }
        if pull.merged_at.is_some() {
            raw::upsert_pull_request(tx, repo, pull)?;
            store::record_passed(tx, Stage::Crawl, repo, &pull.number.to_string())?;
            return Ok((1, 1));
        }
        record_not_merged(tx, repo, pull.number, pull.closed_at)?;
        Ok((1, 0))
    }
}

/// Drops a closed-unmerged PR in the funnel (REST's listing and GraphQL's referenced numbers).
fn record_not_merged(
    tx: &Transaction<'_>,
    repo: &RepoSlug,
    number: u64,
    closed_at: Option<DateTime<Utc>>,
) -> Result<(), StoreError> {
    let closed = closed_at.map(|at| format!(" on {}", at.format("%Y-%m-%d"))).unwrap_or_default();
    store::record_dropped(
        tx,
        &Rejection::new(
            CrawlDropReason::NotMerged,
            repo.clone(),
            number.to_string(),
            format!("closed without being merged{closed}"),
        ),
    )
}

/// Issues listing entries: issues, or pull requests (kept only as their update time).
#[derive(Debug, Serialize, Deserialize)]
enum IssueEntry {
    Issue(RawIssue),
    PullRequest { number: u64, updated_at: DateTime<Utc> },
}

struct IssuesListing;
impl Listing for IssuesListing {
    type Api = octocrab::models::issues::Issue;
    type Item = IssueEntry;
    const RESOURCE: &'static str = ISSUES;
    fn convert(issue: Self::Api) -> Option<IssueEntry> {
        let (number, updated_at) = (issue.number, issue.updated_at);
        Some(match convert::issue(issue) {
            Some(issue) => IssueEntry::Issue(issue),
            None => IssueEntry::PullRequest { number, updated_at },
        })
    }
    fn updated_at(item: &IssueEntry) -> DateTime<Utc> {
        match item {
            IssueEntry::Issue(issue) => issue.updated_at,
            IssueEntry::PullRequest { updated_at, .. } => *updated_at,
        }
    }
    fn store(
        tx: &Transaction<'_>,
        repo: &RepoSlug,
        _window: &Window,
        item: &IssueEntry,
    ) -> Result<(u64, u64), StoreError> {
        match item {
            IssueEntry::Issue(issue) => {
                raw::upsert_issue(tx, repo, issue)?;
                Ok((1, 0))
            }
            IssueEntry::PullRequest { .. } => Ok((0, 0)),
        }
    }
}

struct CommentsListing;
impl Listing for CommentsListing {
    type Api = octocrab::models::issues::Comment;
    type Item = RawComment;
    const RESOURCE: &'static str = COMMENTS;
    fn convert(comment: Self::Api) -> Option<RawComment> {
        let id = comment.id;
        let converted = convert::comment(comment, None);
        if converted.is_none() {
            tracing::warn!(%id, "skipping a comment without an issue URL");
        }
        converted
    }
    fn updated_at(item: &RawComment) -> DateTime<Utc> {
        item.updated_at
    }
    fn store(
        tx: &Transaction<'_>,
        repo: &RepoSlug,
        _window: &Window,
        comment: &RawComment,
    ) -> Result<(u64, u64), StoreError> {
        raw::upsert_comment(tx, repo, comment)?;
        Ok((1, 0))
    }
}

struct RepoCrawl<'a> {
    client: &'a GithubClient,
    store: &'a mut Store,
    repo: &'a RepoSlug,
    options: &'a CrawlOptions,
    reporter: &'a dyn Reporter,
    window: Window,
    summary: RepoSummary,
    /// Items per GraphQL query, halved when GitHub finds a query too large.
    graphql_page_size: u32,
    /// Issues fetched by number per GraphQL query, halved likewise.
    graphql_batch_size: u32,
}

/// Whether a resource finished its part of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Complete,
    Incomplete,
}

impl RepoCrawl<'_> {
    async fn run(&mut self) -> Result<(), CrawlError> {
        let repo = self.repo.clone();
        let previous: Option<PassCursor> = self.load(PASS)?;
        let mut pass = match previous {
            Some(pass) if pass.window == self.window && pass.in_progress => {
                tracing::info!(repo = %repo, pass = pass.number, "resuming the interrupted crawl pass");
                pass
            }
            Some(pass) if pass.window == self.window => {
                PassCursor { number: pass.number + 1, window: self.window.clone(), in_progress: true, plan: pass.plan }
            }
            other => {
                if other.is_some() {
                    tracing::info!(repo = %repo, "the --since/--until window changed: starting a full pass");
                    self.store.transaction(|tx| store::crawl::clear_failed_requests(tx, &repo))?;
                }
                PassCursor {
                    number: other.map_or(1, |pass| pass.number + 1),
                    window: self.window.clone(),
                    in_progress: true,
                    plan: None,
                }
            }
        };
        self.save(PASS, &pass)?;

        let mut outcomes = vec![self.listing::<PullsListing>(pass.number).await?];
        let plan = match pass.plan {
            Some(plan) => plan,
            None if outcomes[0] == Outcome::Complete => {
                let plan = self.choose_plan(&self.mentioned_issues()?)?;
                pass.plan = Some(plan);
                self.save(PASS, &pass)?;
                plan
            }
            // Without the whole pulls listing the plan cannot be chosen; list in bulk.
            None => Plan::Bulk,
        };
        self.summary.plan = Some(plan);
        if plan == Plan::Bulk {
            outcomes.push(self.listing::<IssuesListing>(pass.number).await?);
            outcomes.push(self.listing::<CommentsListing>(pass.number).await?);
        }
        outcomes.push(self.referenced_issues(plan).await?);

        if outcomes.iter().all(|outcome| *outcome == Outcome::Complete) {
            pass.in_progress = false;
            self.save(PASS, &pass)?;
        }
        Ok(())
    }

    /// The referenced issues' checkpoint of this window, stored as `resource` (REST's
    /// and GraphQL's are kept apart).
    fn referenced_cursor(&self, resource: &str) -> Result<ReferencedCursor, CrawlError> {
        Ok(self
            .load::<ReferencedCursor>(resource)?
            .filter(|cursor| cursor.window.as_ref() == Some(&self.window))
            .unwrap_or_else(|| ReferencedCursor { window: Some(self.window.clone()), done: BTreeSet::new() }))
    }

    fn load<T: DeserializeOwned>(&self, resource: &str) -> Result<Option<T>, CrawlError> {
        let Some(checkpoint) = raw::checkpoint(self.store.connection(), self.repo, resource)? else {
            return Ok(None);
        };
        // A checkpoint from an incompatible older build is treated as absent.
        Ok(serde_json::from_value(checkpoint.cursor).ok())
    }

    fn checkpoint<T: Serialize>(&self, resource: &str, cursor: &T) -> CrawlCheckpoint {
        CrawlCheckpoint {
            repo: self.repo.clone(),
            resource: resource.to_string(),
            cursor: serde_json::to_value(cursor).expect("cursors serialize"),
            updated_at: Utc::now(),
        }
    }

    fn save<T: Serialize>(&mut self, resource: &str, cursor: &T) -> Result<(), CrawlError> {
        let checkpoint = self.checkpoint(resource, cursor);
        self.store.transaction(|tx| raw::save_checkpoint(tx, &checkpoint))?;
        Ok(())
    }

    fn record_failure(&mut self, url: &str, error: &GithubError) -> Result<(), CrawlError> {
        tracing::warn!(repo = %self.repo, "{error}");
        let repo = self.repo.clone();
        let message = error.to_string();
        // Relative to the API root, like checkpoints: the next run may reach it elsewhere.
        let url = self.client.relative_url(url);
        self.store.transaction(|tx| raw::record_failed_request(tx, &repo, &url, &message))?;
        Ok(())
    }

    fn first_url(&self, resource: &str, since: Option<DateTime<Utc>>) -> String {
        let repo = self.repo;
        let per_page = ("per_page", self.options.per_page.clamp(1, 100).to_string());
        let since = since.map(|since| ("since", since.format("%Y-%m-%dT%H:%M:%SZ").to_string()));
        let (path, mut query): (String, Vec<(&str, String)>) = match resource {
            PULLS => (
                format!("/repos/{}/{}/pulls", repo.owner(), repo.name()),
                vec![("state", "closed".into()), ("sort", "updated".into()), ("direction", "desc".into())],
            ),
            ISSUES => (
                format!("/repos/{}/{}/issues", repo.owner(), repo.name()),
                vec![("state", "all".into()), ("sort", "updated".into()), ("direction", "desc".into())],
            ),
            _ => (
                format!("/repos/{}/{}/issues/comments", repo.owner(), repo.name()),
                vec![("sort", "updated".into()), ("direction", "desc".into())],
            ),
        };
        // The pulls endpoint has no `since`: the stop-by-date rule bounds it.
        if resource != PULLS {
            query.extend(since);
        }
        query.push(per_page);
        self.client.url(&path, &query)
    }

    /// One listing resource, resumed or started for this pass, page by page.
    async fn listing<L: Listing>(&mut self, pass_number: u64) -> Result<Outcome, CrawlError> {
        let resource = L::RESOURCE;
        let previous: Option<ListingCursor> =
            self.load::<ListingCursor>(resource)?.filter(|cursor| cursor.window == self.window);
        let mut cursor = match previous {
            Some(cursor) if cursor.pass == pass_number => cursor,
            previous => {
                let since = match previous {
                    Some(cursor) if cursor.complete => cursor.watermark.or(cursor.since),
                    _ => self.window.since_time(),
                };
                ListingCursor {
                    pass: pass_number,
                    window: self.window.clone(),
                    since,
                    next: Some(self.client.relative_url(&self.first_url(resource, since))),
                    pages_done: 0,
                    watermark: None,
                    complete: false,
                }
            }
        };
        if cursor.complete {
            return Ok(Outcome::Complete);
        }
        self.reporter.start(&format!("crawl {} {resource}", self.repo), None);
        let outcome = loop {
            let Some(url) = cursor.next.as_deref().map(|next| self.client.absolute_url(next)) else {
                cursor.complete = true;
                self.save(resource, &cursor)?;
                break Outcome::Complete;
            };
            let cached = raw::cached_response(self.store.connection(), &url)?;
            let fetched = self
                .client
                .get_json::<Vec<L::Api>>(&url, cached.as_ref().map(|c| c.etag.as_str()).filter(|etag| !etag.is_empty()))
                .await;
            let first_page = cursor.pages_done == 0;
            let (items, next, cache_entry) = match fetched {
                Err(error) => {
                    self.record_failure(&url, &error)?;
                    break Outcome::Incomplete;
                }
                Ok(Fetched::NotModified) => {
                    let cached = cached.expect("a 304 answers a conditional request");
                    let page: CachedPage<L::Item> = match serde_json::from_str(&cached.body) {
                        Ok(page) => page,
                        Err(_) => {
                            // An unreadable cache entry: forget it and ask again unconditionally.
                            let url_for_delete = url.clone();
                            self.store.transaction(|tx| {
                                raw::save_cached_response(
                                    tx,
                                    &url_for_delete,
                                    &raw::CachedResponse { etag: String::new(), body: String::new() },
                                )
                            })?;
                            continue;
                        }
                    };
                    // An unchanged first page means nothing was updated since it was
                    // cached (sorted by update time): the listing is complete.
                    let next = if first_page { None } else { page.next };
                    (page.items, next, None)
                }
                Ok(Fetched::Fresh { value, etag, next }) => {
                    let items: Vec<L::Item> = value.into_iter().filter_map(L::convert).collect();
                    let entry = etag.filter(|etag| !etag.is_empty()).map(|etag| {
                        let body = serde_json::to_string(&CachedPageRef { next: next.clone(), items: &items })
                            .expect("model types serialize");
                        raw::CachedResponse { etag, body }
                    });
                    (items, next, entry)
                }
            };
            if first_page {
                cursor.watermark = items.iter().map(L::updated_at).max().or(cursor.since);
            }
            // Pulls have no `since`: stop at the first PR updated before the bound.
            let bound = cursor.since;
            let reached_bound = bound.is_some_and(|bound| items.iter().any(|item| L::updated_at(item) < bound));
            let fresh: Vec<&L::Item> =
                items.iter().filter(|item| bound.is_none_or(|bound| L::updated_at(item) >= bound)).collect();
            cursor.pages_done += 1;
            cursor.next = if reached_bound { None } else { next.map(|url| self.client.relative_url(&url)) };
            cursor.complete = cursor.next.is_none();
            let checkpoint = self.checkpoint(resource, &cursor);
            let repo = self.repo.clone();
            let window = self.window.clone();
            let relative_url = self.client.relative_url(&url);
            let counts = self.store.transaction(|tx| -> Result<(u64, u64), StoreError> {
                let mut counts = (0, 0);
                for item in &fresh {
                    let (counted, merged) = L::store(tx, &repo, &window, item)?;
                    counts.0 += counted;
                    counts.1 += merged;
                }
                if let Some(entry) = &cache_entry {
                    raw::save_cached_response(tx, &url, entry)?;
                }
                raw::save_checkpoint(tx, &checkpoint)?;
                raw::clear_failed_request(tx, &repo, &relative_url)?;
                Ok(counts)
            })?;
            match resource {
                PULLS => {
                    self.summary.pull_requests_seen += counts.0;
                    self.summary.merged_seen += counts.1;
                }
                ISSUES => self.summary.issues_seen += counts.0,
                _ => self.summary.comments_seen += counts.0,
            }
            self.reporter.advance(fresh.len() as u64);
            if cursor.complete {
                break Outcome::Complete;
            }
        };
        self.reporter.finish();
        Ok(outcome)
    }

    /// Picks bulk listing or per-issue fetches from what the pulls listing showed.
    fn choose_plan(&self, mentioned: &BTreeSet<u64>) -> Result<Plan, CrawlError> {
        let connection = self.store.connection();
        let pull_numbers = store::crawl::crawled_pull_numbers(connection, self.repo)?;
        let (Some(&lowest), Some(&highest)) = (pull_numbers.first(), pull_numbers.last()) else {
            return Ok(Plan::Bulk);
        };
        // Issue and PR numbers share one sequence: the span of the window's PR
        // numbers, minus those PRs, estimates the issues created in the window.
        let lowest = if self.window.since.is_some() { lowest } else { 1 };
        let estimated_issues = (highest - lowest + 1).saturating_sub(pull_numbers.len() as u64);
        // Within one page of issues, listing costs no more than fetching one by one,
        // and it also catches issues that only commit messages mention.
        let listing_fits_one_page = estimated_issues <= BULK_PAGE_SIZE;
        let plan = if !listing_fits_one_page
            && (mentioned.len() as u64).saturating_mul(self.options.per_issue_fetch_ratio as u64) < estimated_issues
        {
            Plan::PerIssue
        } else {
            Plan::Bulk
        };
        tracing::info!(
            repo = %self.repo,
            estimated_issues,
            mentioned_issues = mentioned.len(),
            ?plan,
            "chose how to fetch issues"
        );
        Ok(plan)
    }

    /// Issue numbers the window's merged PRs mention, minus known PR numbers.
    fn mentioned_issues(&self) -> Result<BTreeSet<u64>, CrawlError> {
        let connection = self.store.connection();
        let pulls = raw::pull_requests(connection, self.repo)?;
        let pull_numbers: BTreeSet<u64> =
            store::crawl::crawled_pull_numbers(connection, self.repo)?.into_iter().collect();
        let mut mentioned = BTreeSet::new();
        for pull in pulls.iter().filter(|pull| pull.merged_at.is_some() && self.window.contains(&pull.created_at)) {
            let text = format!("{}\n{}", pull.title, pull.body.as_deref().unwrap_or(""));
            mentioned.extend(references::referenced_numbers(self.repo, &text));
        }
        mentioned.retain(|number| !pull_numbers.contains(number));
        Ok(mentioned)
    }

    /// Per-issue fetches: every mentioned issue (per-issue plan), or, with the bulk
    /// plan and `--since`, the mentioned issues older than the window.
    async fn referenced_issues(&mut self, plan: Plan) -> Result<Outcome, CrawlError> {
        let since = self.window.since_time();
        if plan == Plan::Bulk && since.is_none() {
            return Ok(Outcome::Complete);
        }
        let mut cursor = self.referenced_cursor(REFERENCED)?;
        let mut targets = Vec::new();
        for number in self.mentioned_issues()? {
            if cursor.done.contains(&number) {
                continue;
            }
            if plan == Plan::Bulk {
                let stored = raw::issue(self.store.connection(), self.repo, number)?;
                // Stored and created inside the window: the listings have it all.
                if stored.is_some_and(|issue| since.is_some_and(|since| issue.created_at >= since)) {
                    continue;
                }
            }
            targets.push(number);
        }
        if targets.is_empty() {
            return Ok(Outcome::Complete);
        }
        self.reporter.start(&format!("crawl {} issues one by one", self.repo), Some(targets.len() as u64));
        let mut outcome = Outcome::Complete;
        for number in targets {
            if self.one_issue(number, &mut cursor).await? == Outcome::Incomplete {
                outcome = Outcome::Incomplete;
            }
            self.reporter.advance(1);
        }
        self.reporter.finish();
        Ok(outcome)
    }

    /// `GET /issues/N` and its comments, stored in one transaction with the cursor.
    async fn one_issue(&mut self, number: u64, cursor: &mut ReferencedCursor) -> Result<Outcome, CrawlError> {
        let repo = self.repo.clone();
        let url = self.client.url(&format!("/repos/{}/{}/issues/{number}", repo.owner(), repo.name()), &[]);
        let cached = raw::cached_response(self.store.connection(), &url)?;
        let (issue, issue_cache): (Option<RawIssue>, Option<raw::CachedResponse>) = match self
            .client
            .get_json::<octocrab::models::issues::Issue>(
                &url,
                cached.as_ref().map(|c| c.etag.as_str()).filter(|etag| !etag.is_empty()),
            )
            .await
        {
            Ok(Fetched::Fresh { value, etag, .. }) => {
                let issue = convert::issue(value);
                let entry = etag.map(|etag| raw::CachedResponse {
                    etag,
                    body: serde_json::to_string(&issue).expect("model types serialize"),
                });
                (issue, entry)
            }
            Ok(Fetched::NotModified) => {
                let body = cached.map(|c| c.body).unwrap_or_default();
                (serde_json::from_str::<Option<RawIssue>>(&body).ok().flatten(), None)
            }
            Err(error) if error.is_not_found() => {
                tracing::debug!(repo = %repo, number, "mentioned issue does not exist");
                (None, None)
            }
            Err(error) => {
                self.record_failure(&url, &error)?;
                return Ok(Outcome::Incomplete);
            }
        };
        // A pull request or a missing issue: nothing to store, but done.
        let mut comments = Vec::new();
        let mut caches: Vec<(String, raw::CachedResponse)> = Vec::new();
        // Failures are stored relative to the API root (see `record_failure`).
        let mut failed_urls = vec![self.client.relative_url(&url)];
        if issue.is_some() {
            let mut next = Some(self.client.url(
                &format!("/repos/{}/{}/issues/{number}/comments", repo.owner(), repo.name()),
                &[("per_page", self.options.per_page.clamp(1, 100).to_string())],
            ));
            while let Some(page_url) = next.take() {
                let cached = raw::cached_response(self.store.connection(), &page_url)?;
                let fetched = self
                    .client
                    .get_json::<Vec<octocrab::models::issues::Comment>>(
                        &page_url,
                        cached.as_ref().map(|c| c.etag.as_str()).filter(|etag| !etag.is_empty()),
                    )
                    .await;
                match fetched {
                    Ok(Fetched::Fresh { value, etag, next: following }) => {
                        let items: Vec<RawComment> =
                            value.into_iter().filter_map(|comment| convert::comment(comment, Some(number))).collect();
                        if let Some(etag) = etag {
                            let body = serde_json::to_string(&CachedPageRef { next: following.clone(), items: &items })
                                .expect("model types serialize");
                            caches.push((page_url.clone(), raw::CachedResponse { etag, body }));
                        }
                        comments.extend(items);
                        next = following;
                    }
                    Ok(Fetched::NotModified) => {
                        let body = cached.map(|c| c.body).unwrap_or_default();
                        match serde_json::from_str::<CachedPage<RawComment>>(&body) {
                            Ok(page) => {
                                comments.extend(page.items);
                                next = page.next;
                            }
                            Err(_) => {
                                self.record_failure(
                                    &page_url,
                                    &GithubError::InvalidJson {
                                        url: page_url.clone(),
                                        detail: "unreadable cache entry".into(),
                                    },
                                )?;
                                return Ok(Outcome::Incomplete);
                            }
                        }
                    }
                    Err(error) => {
                        self.record_failure(&page_url, &error)?;
                        return Ok(Outcome::Incomplete);
                    }
                }
                failed_urls.push(self.client.relative_url(&page_url));
            }
        }
        cursor.done.insert(number);
        let checkpoint = self.checkpoint(REFERENCED, &*cursor);
        self.summary.issues_seen += issue.is_some() as u64;
        self.summary.comments_seen += comments.len() as u64;
        self.store.transaction(|tx| -> Result<(), StoreError> {
            if let Some(issue) = &issue {
                raw::upsert_issue(tx, &repo, issue)?;
            }
            for comment in &comments {
                raw::upsert_comment(tx, &repo, comment)?;
            }
            if let Some(entry) = &issue_cache {
                raw::save_cached_response(tx, &url, entry)?;
            }
            for (page_url, entry) in &caches {
                raw::save_cached_response(tx, page_url, entry)?;
            }
            for failed in &failed_urls {
                raw::clear_failed_request(tx, &repo, failed)?;
            }
            raw::save_checkpoint(tx, &checkpoint)
        })?;
        Ok(Outcome::Complete)
    }
}
