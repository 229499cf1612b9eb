//! The crawl through GitHub's GraphQL API (`crawl --api graphql`, the default with a
//! token): the merged pull requests and the issues they refer to, with GitHub's own
//! closing references, in about a quarter of REST's requests. HTTP, points and
//! retries belong to [`crate::github::GithubClient::graphql`]; this module owns the
//! queries, their cursors and what is stored.
//!
//! Per repository and pass (checkpoints of their own, `graphql_*`, so that switching
//! APIs starts a fresh pass):
//! 1. `PullRequests`: `repository.pullRequests(states: [MERGED], orderBy: UPDATED_AT
//!    DESC)`, `crawl.graphql_page_size` per query, each PR with its
//!    `closingIssuesReferences` (first 25; those of this repository are stored as
//!    source `closing`) and its commits' messages (first 100; the issue numbers they
//!    mention are stored as source `commit_message`). Paging stops at the first PR
//!    updated before the pass's lower bound. Closed-unmerged PRs are not listed: the
//!    pass's first page also asks how many there are (`pullRequests(states: [CLOSED])
//!    { totalCount }`, or with `--since`/`--until` a `search` of `is:pr is:closed
//!    is:unmerged created:...` for its `issueCount`), and the funnel records that
//!    count as `not_merged` drops (see `store::record_dropped_total`). Extract needs
//!    no more of them: it reads merged PRs only, and an unmerged PR's number only when
//!    a merged PR refers to it, which step 3 finds out.
//! 2. From the second pass of a window on, `Issues`: `repository.issues(filterBy:
//!    {since})` since the previous pass started (less [`CLOCK_MARGIN`]), newest
//!    update first: the issues edited or commented since. Only those the window's
//!    merged PRs refer to are stored (with their comments).
//! 3. `IssuesByNumber`: every issue number the window's merged PRs refer to (`#N`,
//!    same-repository `o/n#N` and issue URLs in titles and bodies, commit messages,
//!    closing references), minus known PR numbers and those already fetched in this
//!    window, `crawl.graphql_issues_per_query` per query through aliased
//!    `issueOrPullRequest(number:)` fields with the issue's comments. A number that
//!    is a closed-unmerged PR of the window is recorded in the funnel as REST records
//!    it (extract then knows it is no issue); an open PR is asked again next pass.
//!
//! An issue with more than 100 comments gets follow-up `IssueComments` queries (100 a
//! page) before it is stored, so a stored issue always has all its comments.
//! Comments on pull requests are not stored (extract never reads them), nor are
//! issues that no merged PR refers to (REST's bulk listing stores them; extract never
//! reads them): the two APIs store the same merged PRs, the same referenced issues
//! and comments, and the same funnel.
//!
//! Every page is committed in one transaction with its cursor (GitHub's `endCursor`,
//! or the numbers done), so a killed crawl resumes at the first uncommitted page.
//! GraphQL has no ETags: an incremental pass asks for PRs newest-updated first and
//! stops at the previous pass's watermark, and for issues updated since the previous
//! pass began, so an unchanged refresh costs two queries of a few points. When
//! GitHub answers a query with a timeout or its node limit, the page size (or the
//! batch of numbers) is halved for the rest of the run, down to one.
//!
//! Page sizes (decision): 100 merged PRs a query (GitHub's `first` maximum) may
//! return 14,600 nodes and cost 3 points (a point per 100 connections GitHub assumes
//! full: the page, and per PR its labels, closing references and commits); 100
//! issues by number may return 12,000 nodes and cost 2 points. Both are far below the
//! 500,000-node limit, so the requests, not the points or nodes, bound the crawl.
//!
//! Limits (decisions): closing references beyond the first 25 of a PR, and commit
//! messages beyond the first 100, are not read (extract reads every commit message
//! from the mirror; an issue named only in a PR's 101st commit is not fetched). A
//! comment edited without its issue being updated is not refetched by a refresh.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{CrawlError, Outcome, Plan, PullsListing, RepoCrawl, Window, references};
use crate::github::{GithubError, GraphqlAnswer};
use crate::model::drop_reason::CrawlDropReason;
use crate::model::{RawComment, RawIssue, RawPullRequest, RepoSlug};
use crate::store::raw::{self, ReferenceSource};
use crate::store::{self, StoreError};

const PASS: &str = "graphql_pass";
const PULLS: &str = "graphql_pulls";
const ISSUES: &str = "graphql_issues";
const REFERENCED: &str = "graphql_referenced_issues";

/// The operation names of every query this crawl sends.
pub const OPERATIONS: [&str; 4] = ["PullRequests", "Issues", "IssuesByNumber", "IssueComments"];

/// Closing references read per PR.
const CLOSING_REFERENCES_PER_PULL: u32 = 25;
/// Commit messages read per PR.
const COMMITS_PER_PULL: u32 = 100;
/// Comments per issue in a listing, and per follow-up query.
const COMMENTS_PER_PAGE: u32 = 100;
/// A refresh lists issues updated since the previous pass began, less this much: room
/// for this machine's clock running ahead of GitHub's.
const CLOCK_MARGIN: chrono::Duration = chrono::Duration::minutes(10);

const RATE_LIMIT: &str = "rateLimit { cost remaining resetAt }";

/// The fields of an issue that the crawl stores, with its first 100 comments.
const ISSUE_FRAGMENT: &str = "fragment IssueFields on Issue { number title body state createdAt updatedAt closedAt \
     author { login } labels(first: 20) { nodes { name } } \
     comments(first: 100) { totalCount pageInfo { hasNextPage endCursor } \
     nodes { databaseId body createdAt updatedAt author { login } } } }";

/// What the crawl needs of a PR that a referenced number turns out to be. Its `state`
/// is aliased: beside an issue's `state` (another type) in one selection, GraphQL
/// refuses the same name.
const PULL_STATE_FRAGMENT: &str =
    "fragment PullRequestState on PullRequest { number pullState: state createdAt closedAt mergedAt }";

/// How the first page of a pass counts the closed-unmerged PRs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UnmergedCount {
    /// `pullRequests(states: [CLOSED]) { totalCount }`: all of them (no window).
    Total,
    /// `search(query:) { issueCount }` with this query: those created in the window.
    Search(String),
}

impl UnmergedCount {
    fn for_window(repo: &RepoSlug, window: &Window) -> UnmergedCount {
        let created = match (window.since, window.until) {
            (None, None) => return UnmergedCount::Total,
            (Some(since), Some(until)) => format!("{since}..{}", until.pred_opt().unwrap_or(until)),
            (Some(since), None) => format!(">={since}"),
            (None, Some(until)) => format!("<{until}"),
        };
        UnmergedCount::Search(format!("repo:{repo} is:pr is:closed is:unmerged created:{created}"))
    }
}

/// A page of merged PRs; the first page of a pass also counts the unmerged ones.
fn pulls_query(count: Option<&UnmergedCount>) -> String {
    let (search_variable, search_field, total_field) = match count {
        None => ("", "", ""),
        Some(UnmergedCount::Total) => ("", "", "closedUnmerged: pullRequests(states: [CLOSED]) { totalCount } "),
        Some(UnmergedCount::Search(_)) => (
            ", $unmergedQuery: String!",
            "closedUnmergedInWindow: search(query: $unmergedQuery, type: ISSUE) { issueCount } ",
            "",
        ),
    };
    format!(
        "query PullRequests($owner: String!, $name: String!, $first: Int!, $after: String{search_variable}) {{ {RATE_LIMIT} \
         {search_field}repository(owner: $owner, name: $name) {{ {total_field}\
         pullRequests(first: $first, after: $after, states: [MERGED], orderBy: {{field: UPDATED_AT, direction: DESC}}) {{ \
         pageInfo {{ hasNextPage endCursor }} \
         nodes {{ number title body state createdAt updatedAt mergedAt closedAt \
         baseRefName baseRefOid headRefName headRefOid mergeCommit {{ oid }} author {{ login }} \
         labels(first: 20) {{ nodes {{ name }} }} \
         closingIssuesReferences(first: {CLOSING_REFERENCES_PER_PULL}) {{ nodes {{ number repository {{ nameWithOwner }} }} }} \
         commits(first: {COMMITS_PER_PULL}) {{ nodes {{ commit {{ message }} }} }} }} }} }} }}"
    )
}

fn issues_query() -> String {
    format!(
        "query Issues($owner: String!, $name: String!, $first: Int!, $after: String, $since: DateTime) {{ {RATE_LIMIT} \
         repository(owner: $owner, name: $name) {{ \
         issues(first: $first, after: $after, orderBy: {{field: UPDATED_AT, direction: DESC}}, filterBy: {{since: $since}}) {{ \
         pageInfo {{ hasNextPage endCursor }} nodes {{ ...IssueFields }} }} }} }} {ISSUE_FRAGMENT}"
    )
}

fn issue_comments_query() -> String {
    format!(
        "query IssueComments($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String) {{ {RATE_LIMIT} \
         repository(owner: $owner, name: $name) {{ issue(number: $number) {{ \
         comments(first: $first, after: $after) {{ totalCount pageInfo {{ hasNextPage endCursor }} \
         nodes {{ databaseId body createdAt updatedAt author {{ login }} }} }} }} }} }}"
    )
}

fn issues_by_number_query(numbers: &[u64]) -> String {
    let fields: String = numbers
        .iter()
        .map(|number| {
            format!(
                "issue_{number}: issueOrPullRequest(number: {number}) {{ __typename ...IssueFields ...PullRequestState }} "
            )
        })
        .collect();
    format!(
        "query IssuesByNumber($owner: String!, $name: String!) {{ {RATE_LIMIT} \
         repository(owner: $owner, name: $name) {{ {fields}}} }} {ISSUE_FRAGMENT} {PULL_STATE_FRAGMENT}"
    )
}

// ---- The answers' shapes (only the fields asked for).

#[derive(Debug, Deserialize)]
struct PageInfo {
    #[serde(rename = "hasNextPage")]
    has_next_page: bool,
    #[serde(rename = "endCursor")]
    end_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Nodes<T> {
    #[serde(default = "Vec::new")]
    nodes: Vec<Option<T>>,
}

#[derive(Debug, Deserialize)]
struct Connection<T> {
    #[serde(rename = "pageInfo")]
    page_info: PageInfo,
    #[serde(default = "Vec::new")]
    nodes: Vec<Option<T>>,
}

#[derive(Debug, Deserialize)]
struct Login {
    login: String,
}

#[derive(Debug, Deserialize)]
struct Name {
    name: String,
}

#[derive(Debug, Deserialize)]
struct Oid {
    oid: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullNode {
    number: u64,
    title: String,
    body: Option<String>,
    state: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    merged_at: Option<DateTime<Utc>>,
    closed_at: Option<DateTime<Utc>>,
    base_ref_name: String,
    base_ref_oid: String,
    head_ref_name: String,
    head_ref_oid: String,
    merge_commit: Option<Oid>,
    author: Option<Login>,
    labels: Option<Nodes<Name>>,
    closing_issues_references: Option<Nodes<ClosingReference>>,
    commits: Option<Nodes<CommitNode>>,
}

#[derive(Debug, Deserialize)]
struct ClosingReference {
    number: u64,
    repository: RepositoryName,
}

#[derive(Debug, Deserialize)]
struct RepositoryName {
    #[serde(rename = "nameWithOwner")]
    name_with_owner: String,
}

#[derive(Debug, Deserialize)]
struct CommitNode {
    commit: CommitMessage,
}

#[derive(Debug, Deserialize)]
struct CommitMessage {
    message: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IssueNode {
    number: u64,
    title: String,
    body: Option<String>,
    state: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    closed_at: Option<DateTime<Utc>>,
    author: Option<Login>,
    labels: Option<Nodes<Name>>,
    comments: Connection<CommentNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentNode {
    database_id: u64,
    body: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    author: Option<Login>,
}

#[derive(Debug, Deserialize)]
struct RepositoryData<T> {
    repository: Option<T>,
}

/// A page of merged PRs, and on a pass's first page the count of unmerged ones.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullsData {
    repository: Option<PullRequestsField>,
    closed_unmerged_in_window: Option<SearchCount>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullRequestsField {
    pull_requests: Connection<PullNode>,
    closed_unmerged: Option<TotalCount>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TotalCount {
    total_count: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchCount {
    issue_count: u64,
}

/// A referenced number that is a pull request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullStateNode {
    number: u64,
    #[serde(rename = "pullState")]
    state: String,
    created_at: DateTime<Utc>,
    closed_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize)]
struct IssuesField {
    issues: Connection<IssueNode>,
}

#[derive(Debug, Deserialize)]
struct IssueCommentsField {
    issue: Option<IssueCommentsOnly>,
}

#[derive(Debug, Deserialize)]
struct IssueCommentsOnly {
    comments: Connection<CommentNode>,
}

// ---- Conversions to the pipeline's raw model.

fn names(labels: Option<Nodes<Name>>) -> Vec<String> {
    labels.map(|labels| labels.nodes.into_iter().flatten().map(|label| label.name).collect()).unwrap_or_default()
}

/// A pull request, its closing references in this repository, and the issue
/// numbers its commit messages mention.
struct PullEntry {
    pull: RawPullRequest,
    closing: Vec<u64>,
    commit_mentions: Vec<u64>,
}

fn pull_entry(node: PullNode, repo: &crate::model::RepoSlug) -> PullEntry {
    let closing: BTreeSet<u64> = node
        .closing_issues_references
        .map(|references| references.nodes)
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .filter(|reference| reference.repository.name_with_owner.eq_ignore_ascii_case(&repo.to_string()))
        .map(|reference| reference.number)
        .collect();
    let mut commit_mentions = BTreeSet::new();
    for commit in node.commits.map(|commits| commits.nodes).unwrap_or_default().into_iter().flatten() {
        commit_mentions.extend(references::referenced_numbers(repo, &commit.commit.message));
    }
    let pull = RawPullRequest {
        number: node.number,
        title: node.title,
        body: node.body,
        // REST's two states: a merged PR is `closed` there.
        state: if node.state.eq_ignore_ascii_case("open") { "open".into() } else { "closed".into() },
        created_at: node.created_at,
        updated_at: node.updated_at,
        merged_at: node.merged_at,
        closed_at: node.closed_at,
        base_ref: node.base_ref_name,
        base_sha: node.base_ref_oid,
        head_ref: node.head_ref_name,
        head_sha: node.head_ref_oid,
        merge_commit_sha: node.merge_commit.map(|commit| commit.oid),
        author: node.author.map(|author| author.login),
        labels: names(node.labels),
    };
    PullEntry { pull, closing: closing.into_iter().collect(), commit_mentions: commit_mentions.into_iter().collect() }
}

fn comment(node: CommentNode, issue_number: u64) -> RawComment {
    RawComment {
        id: node.database_id,
        issue_number,
        body: node.body,
        created_at: node.created_at,
        updated_at: node.updated_at,
        author: node.author.map(|author| author.login),
    }
}

/// An issue with the comments of the listing, and where its comments continue.
struct IssueEntry {
    issue: RawIssue,
    comments: Vec<RawComment>,
    more_comments_after: Option<String>,
}

fn issue_entry(node: IssueNode) -> IssueEntry {
    let number = node.number;
    let more_comments_after =
        if node.comments.page_info.has_next_page { node.comments.page_info.end_cursor.clone() } else { None };
    IssueEntry {
        issue: RawIssue {
            number,
            title: node.title,
            body: node.body,
            state: node.state.to_ascii_lowercase(),
            created_at: node.created_at,
            updated_at: node.updated_at,
            closed_at: node.closed_at,
            author: node.author.map(|author| author.login),
            labels: names(node.labels),
        },
        comments: node.comments.nodes.into_iter().flatten().map(|node| comment(node, number)).collect(),
        more_comments_after,
    }
}

/// The repository-level checkpoint of the GraphQL crawl: which pass is running.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct GraphqlPass {
    number: u64,
    window: Window,
    in_progress: bool,
    /// When the pass started (this machine's clock); `None` in older checkpoints.
    #[serde(default)]
    started_at: Option<DateTime<Utc>>,
    /// Whether this pass lists the issues updated since `refresh_since` (all of them
    /// when `None`): every pass of a window but its first.
    #[serde(default)]
    refresh: bool,
    #[serde(default)]
    refresh_since: Option<DateTime<Utc>>,
}

/// The checkpoint of one GraphQL listing.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct GraphqlCursor {
    pass: u64,
    window: Window,
    /// The pass's lower bound on `updatedAt`.
    since: Option<DateTime<Utc>>,
    /// GitHub's `endCursor` of the last committed page; `None` before the first.
    after: Option<String>,
    pages_done: u64,
    /// The newest `updatedAt` on the pass's first page.
    watermark: Option<DateTime<Utc>>,
    complete: bool,
}

/// One GraphQL query's fate.
enum Answer<T> {
    Data(GraphqlAnswer<T>),
    /// GitHub's node limit or a timeout: the caller asks for less.
    TooLarge,
    /// Failed for good (recorded).
    Failed,
}

/// What a referenced number turned out to be.
enum Referenced {
    Issue(Box<IssueEntry>),
    Pull(PullStateNode),
}

impl RepoCrawl<'_> {
    /// One repository through GraphQL; see the module docs.
    pub(super) async fn run_graphql(&mut self) -> Result<(), CrawlError> {
        let repo = self.repo.clone();
        let previous: Option<GraphqlPass> = self.load(PASS)?;
        let pass = match previous {
            Some(pass) if pass.window == self.window && pass.in_progress => {
                tracing::info!(repo = %repo, pass = pass.number, "resuming the interrupted GraphQL crawl pass");
                pass
            }
            Some(pass) if pass.window == self.window => GraphqlPass {
                number: pass.number + 1,
                window: self.window.clone(),
                in_progress: true,
                started_at: Some(Utc::now()),
                refresh: true,
                // A pass of an older build did not say when it began: list the window's issues.
                refresh_since: pass.started_at.map(|at| at - CLOCK_MARGIN).or(self.window.since_time()),
            },
            other => {
                if other.is_some() {
                    tracing::info!(repo = %repo, "the --since/--until window changed: starting a full pass");
                    self.store.transaction(|tx| store::crawl::clear_failed_requests(tx, &repo))?;
                }
                GraphqlPass {
                    number: other.map_or(1, |pass| pass.number + 1),
                    window: self.window.clone(),
                    in_progress: true,
                    started_at: Some(Utc::now()),
                    refresh: false,
                    refresh_since: None,
                }
            }
        };
        self.save(PASS, &pass)?;
        self.summary.plan = Some(Plan::Referenced);

        let mut outcomes = vec![self.graphql_pulls(pass.number).await?];
        let referred = self.referred_issues()?;
        if pass.refresh {
            outcomes.push(self.graphql_updated_issues(pass.number, pass.refresh_since, &referred).await?);
        }
        outcomes.push(self.graphql_issues_by_number(&referred).await?);
        if outcomes.iter().all(|outcome| *outcome == Outcome::Complete) {
            self.save(PASS, &GraphqlPass { in_progress: false, ..pass })?;
        }
        Ok(())
    }

    /// The key a failed query is recorded under (and cleared by once it succeeds): its
    /// endpoint relative to the API root (as for REST's pages), the operation and
    /// what it asked for.
    fn query_key(&self, operation: &str, detail: &str) -> String {
        format!("{} {operation} {} {detail}", self.client.relative_url(&self.client.graphql_url()), self.repo)
    }

    /// The answer's repository; `None` when GitHub answered without it (the repository
    /// is gone or the token cannot read it), which is recorded as the query's failure.
    fn answered_repository<R>(
        &mut self,
        repository: Option<R>,
        operation: &str,
        key: &str,
    ) -> Result<Option<R>, CrawlError> {
        if repository.is_none() {
            let error = GithubError::Graphql {
                url: self.client.graphql_url(),
                operation: operation.into(),
                message: format!("the repository {} does not exist or the token cannot read it", self.repo),
            };
            self.record_failure(key, &error)?;
        }
        Ok(repository)
    }

    /// Runs one query once.
    async fn query_once<T: DeserializeOwned>(
        &mut self,
        operation: &str,
        query: &str,
        key: &str,
        variables: &Value,
    ) -> Result<Answer<T>, CrawlError> {
        match self.client.graphql::<T>(operation, query, variables).await {
            Ok(answer) => {
                for error in &answer.errors {
                    tracing::debug!(repo = %self.repo, operation, "partial answer: {error}");
                }
                Ok(Answer::Data(answer))
            }
            Err(error) if error.is_too_large() => {
                tracing::debug!(repo = %self.repo, operation, "{error}");
                Ok(Answer::TooLarge)
            }
            Err(error) => {
                self.record_failure(key, &error)?;
                Ok(Answer::Failed)
            }
        }
    }

    /// Runs one query, halving the page size while GitHub says it is too large.
    /// `None` when it failed for good (recorded under `key`).
    async fn query<T: DeserializeOwned>(
        &mut self,
        operation: &str,
        query: &str,
        key: &str,
        variables: impl Fn(u32) -> Value,
    ) -> Result<Option<GraphqlAnswer<T>>, CrawlError> {
        loop {
            match self.query_once::<T>(operation, query, key, &variables(self.graphql_page_size)).await? {
                Answer::Data(answer) => return Ok(Some(answer)),
                Answer::Failed => return Ok(None),
                Answer::TooLarge if self.graphql_page_size > 1 => {
                    self.graphql_page_size = (self.graphql_page_size / 2).max(1);
                    tracing::warn!(
                        repo = %self.repo,
                        operation,
                        page_size = self.graphql_page_size,
                        "GitHub found the query too large; asking for {} items per page from now on",
                        self.graphql_page_size
                    );
                }
                Answer::TooLarge => {
                    let error = GithubError::Graphql {
                        url: self.client.graphql_url(),
                        operation: operation.into(),
                        message: "too large for GitHub even with one item per page".into(),
                    };
                    self.record_failure(key, &error)?;
                    return Ok(None);
                }
            }
        }
    }

    /// The listing's cursor of this pass: resumed, or started at `since`.
    fn start_cursor(
        &self,
        resource: &str,
        pass_number: u64,
        since: impl FnOnce(Option<GraphqlCursor>) -> Option<DateTime<Utc>>,
    ) -> Result<GraphqlCursor, CrawlError> {
        let previous: Option<GraphqlCursor> =
            self.load::<GraphqlCursor>(resource)?.filter(|cursor| cursor.window == self.window);
        Ok(match previous {
            Some(cursor) if cursor.pass == pass_number => cursor,
            previous => GraphqlCursor {
                pass: pass_number,
                window: self.window.clone(),
                since: since(previous),
                after: None,
                pages_done: 0,
                watermark: None,
                complete: false,
            },
        })
    }

    async fn graphql_pulls(&mut self, pass_number: u64) -> Result<Outcome, CrawlError> {
        let window_since = self.window.since_time();
        let mut cursor = self.start_cursor(PULLS, pass_number, |previous| match previous {
            Some(cursor) if cursor.complete => cursor.watermark.or(cursor.since),
            _ => window_since,
        })?;
        if cursor.complete {
            return Ok(Outcome::Complete);
        }
        let (owner, name) = (self.repo.owner().to_string(), self.repo.name().to_string());
        let count = UnmergedCount::for_window(self.repo, &self.window);
        self.reporter.start(&format!("crawl {} merged pull requests (GraphQL)", self.repo), None);
        let outcome = loop {
            let key = self.query_key("PullRequests", &format!("after {}", cursor.after.as_deref().unwrap_or("start")));
            let after = cursor.after.clone();
            // The pass's first page also counts the closed-unmerged PRs.
            let first_page = cursor.pages_done == 0;
            let query = pulls_query(first_page.then_some(&count));
            let unmerged_query = match &count {
                UnmergedCount::Search(query) if first_page => Some(query.clone()),
                _ => None,
            };
            let Some(answer) = self
                .query::<PullsData>("PullRequests", &query, &key, |first| {
                    let mut variables = json!({"owner": owner, "name": name, "first": first, "after": after});
                    if let Some(query) = &unmerged_query {
                        variables["unmergedQuery"] = json!(query);
                    }
                    variables
                })
                .await?
            else {
                break Outcome::Incomplete;
            };
            let Some(repository) = self.answered_repository(answer.data.repository, "PullRequests", &key)? else {
                break Outcome::Incomplete;
            };
            let unmerged = repository
                .closed_unmerged
                .map(|count| count.total_count)
                .or(answer.data.closed_unmerged_in_window.map(|count| count.issue_count));
            let connection = repository.pull_requests;
            let entries: Vec<PullEntry> =
                connection.nodes.into_iter().flatten().map(|node| pull_entry(node, self.repo)).collect();
            if first_page {
                cursor.watermark = entries.iter().map(|entry| entry.pull.updated_at).max().or(cursor.since);
            }
            let bound = cursor.since;
            let reached_bound = bound.is_some_and(|bound| entries.iter().any(|entry| entry.pull.updated_at < bound));
            let fresh: Vec<&PullEntry> =
                entries.iter().filter(|entry| bound.is_none_or(|bound| entry.pull.updated_at >= bound)).collect();
            cursor.pages_done += 1;
            let has_next = connection.page_info.has_next_page && !reached_bound;
            if has_next {
                cursor.after = connection.page_info.end_cursor.clone();
            }
            cursor.complete = !has_next || cursor.after.is_none();
            let checkpoint = self.checkpoint(PULLS, &cursor);
            let repo = self.repo.clone();
            let window = self.window.clone();
            let counts = self.store.transaction(|tx| -> Result<(u64, u64), StoreError> {
                let mut counts = (0, 0);
                for entry in &fresh {
                    let (counted, merged) = <PullsListing as super::Listing>::store(tx, &repo, &window, &entry.pull)?;
                    counts.0 += counted;
                    counts.1 += merged;
                    if merged == 1 {
                        let number = entry.pull.number;
                        raw::replace_pull_request_references(
                            tx,
                            &repo,
                            number,
                            ReferenceSource::Closing,
                            &entry.closing,
                        )?;
                        raw::replace_pull_request_references(
                            tx,
                            &repo,
                            number,
                            ReferenceSource::CommitMessage,
                            &entry.commit_mentions,
                        )?;
                    }
                }
                if let Some(unmerged) = unmerged {
                    store::record_dropped_total(tx, CrawlDropReason::NotMerged, &repo, unmerged)?;
                }
                raw::save_checkpoint(tx, &checkpoint)?;
                raw::clear_failed_request(tx, &repo, &key)?;
                Ok(counts)
            })?;
            if unmerged.is_some() {
                self.summary.unmerged_counted = unmerged;
            }
            self.summary.pull_requests_seen += counts.0;
            self.summary.merged_seen += counts.1;
            self.reporter.advance(fresh.len() as u64);
            if cursor.complete {
                break Outcome::Complete;
            }
        };
        self.reporter.finish();
        Ok(outcome)
    }

    /// The refresh: issues updated since `since` (all when `None`), of which those in
    /// `referred` are stored and counted as fetched.
    async fn graphql_updated_issues(
        &mut self,
        pass_number: u64,
        since: Option<DateTime<Utc>>,
        referred: &BTreeSet<u64>,
    ) -> Result<Outcome, CrawlError> {
        let mut cursor = self.start_cursor(ISSUES, pass_number, |_| since)?;
        if cursor.complete {
            return Ok(Outcome::Complete);
        }
        let query = issues_query();
        let (owner, name) = (self.repo.owner().to_string(), self.repo.name().to_string());
        self.reporter.start(&format!("crawl {} issues updated since the last pass (GraphQL)", self.repo), None);
        let outcome = loop {
            let key = self.query_key("Issues", &format!("after {}", cursor.after.as_deref().unwrap_or("start")));
            let after = cursor.after.clone();
            let since = cursor.since.map(|since| since.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            let Some(answer) = self
                .query::<RepositoryData<IssuesField>>(
                    "Issues",
                    &query,
                    &key,
                    |first| json!({"owner": owner, "name": name, "first": first, "after": after, "since": since}),
                )
                .await?
            else {
                break Outcome::Incomplete;
            };
            let Some(repository) = self.answered_repository(answer.data.repository, "Issues", &key)? else {
                break Outcome::Incomplete;
            };
            let connection = repository.issues;
            let listed: Vec<IssueNode> = connection.nodes.into_iter().flatten().collect();
            if cursor.pages_done == 0 {
                cursor.watermark = listed.iter().map(|node| node.updated_at).max().or(cursor.since);
            }
            let mut entries: Vec<IssueEntry> =
                listed.into_iter().filter(|node| referred.contains(&node.number)).map(issue_entry).collect();
            if !self.complete_comments(&mut entries).await? {
                break Outcome::Incomplete;
            }
            cursor.pages_done += 1;
            if connection.page_info.has_next_page {
                cursor.after = connection.page_info.end_cursor.clone();
            }
            cursor.complete = !connection.page_info.has_next_page || cursor.after.is_none();
            let mut referenced = self.referenced_cursor(REFERENCED)?;
            referenced.done.extend(entries.iter().map(|entry| entry.issue.number));
            let checkpoints = [self.checkpoint(ISSUES, &cursor), self.checkpoint(REFERENCED, &referenced)];
            self.store_issues(&entries, &[], &checkpoints, &[key])?;
            self.reporter.advance(entries.len() as u64);
            if cursor.complete {
                break Outcome::Complete;
            }
        };
        self.reporter.finish();
        Ok(outcome)
    }

    /// Fetches the rest of the comments of issues with more than one page of them.
    /// `false` when a query failed for good (recorded).
    async fn complete_comments(&mut self, entries: &mut [IssueEntry]) -> Result<bool, CrawlError> {
        let query = issue_comments_query();
        let (owner, name) = (self.repo.owner().to_string(), self.repo.name().to_string());
        for entry in entries.iter_mut() {
            while let Some(after) = entry.more_comments_after.take() {
                let number = entry.issue.number;
                let key = self.query_key("IssueComments", &format!("#{number} after {after}"));
                let Some(answer) = self
                    .query::<RepositoryData<IssueCommentsField>>("IssueComments", &query, &key, |_| {
                        json!({"owner": owner, "name": name, "number": number, "first": COMMENTS_PER_PAGE, "after": after})
                    })
                    .await?
                else {
                    return Ok(false);
                };
                let Some(comments) = answer.data.repository.and_then(|repository| repository.issue) else { break };
                let connection = comments.comments;
                entry.comments.extend(connection.nodes.into_iter().flatten().map(|node| comment(node, number)));
                if connection.page_info.has_next_page {
                    entry.more_comments_after = connection.page_info.end_cursor;
                }
                let repo = self.repo.clone();
                self.store.transaction(|tx| raw::clear_failed_request(tx, &repo, &key))?;
            }
        }
        Ok(true)
    }

    /// Stores issues with their comments, and closed-unmerged PRs of the window as
    /// REST's listing records them, with checkpoints, clearing the given failures.
    fn store_issues(
        &mut self,
        entries: &[IssueEntry],
        unmerged: &[PullStateNode],
        checkpoints: &[crate::model::CrawlCheckpoint],
        succeeded: &[String],
    ) -> Result<(), CrawlError> {
        let repo = self.repo.clone();
        let window = self.window.clone();
        self.store.transaction(|tx| -> Result<(), StoreError> {
            for entry in entries {
                raw::upsert_issue(tx, &repo, &entry.issue)?;
                for comment in &entry.comments {
                    raw::upsert_comment(tx, &repo, comment)?;
                }
            }
            for pull in unmerged.iter().filter(|pull| window.contains(&pull.created_at)) {
                super::record_not_merged(tx, &repo, pull.number, pull.closed_at)?;
            }
            for checkpoint in checkpoints {
                raw::save_checkpoint(tx, checkpoint)?;
            }
            for key in succeeded {
                raw::clear_failed_request(tx, &repo, key)?;
            }
            Ok(())
        })?;
        self.summary.issues_seen += entries.len() as u64;
        self.summary.comments_seen += entries.iter().map(|entry| entry.comments.len() as u64).sum::<u64>();
        Ok(())
    }

    /// Issue numbers the window's merged PRs refer to: mentioned in title or body,
    /// in commit messages, or closed according to GitHub; minus PR numbers.
    fn referred_issues(&self) -> Result<BTreeSet<u64>, CrawlError> {
        let connection = self.store.connection();
        let mut numbers = self.mentioned_issues()?;
        let in_window: BTreeSet<u64> = raw::pull_requests(connection, self.repo)?
            .into_iter()
            .filter(|pull| pull.merged_at.is_some() && self.window.contains(&pull.created_at))
            .map(|pull| pull.number)
            .collect();
        for source in [ReferenceSource::Closing, ReferenceSource::CommitMessage] {
            let references: BTreeMap<u64, Vec<u64>> = raw::pull_request_references(connection, self.repo, source)?;
            for (pull, issues) in references {
                if in_window.contains(&pull) {
                    numbers.extend(issues);
                }
            }
        }
        let pull_numbers: BTreeSet<u64> =
            store::crawl::crawled_pull_numbers(connection, self.repo)?.into_iter().collect();
        numbers.retain(|number| !pull_numbers.contains(number));
        Ok(numbers)
    }

    /// The referenced numbers not fetched yet in this window, many per query: see the
    /// module docs.
    async fn graphql_issues_by_number(&mut self, referred: &BTreeSet<u64>) -> Result<Outcome, CrawlError> {
        let mut cursor = self.referenced_cursor(REFERENCED)?;
        let mut targets: Vec<u64> = referred.difference(&cursor.done).copied().collect();
        if targets.is_empty() {
            return Ok(Outcome::Complete);
        }
        self.reporter.start(&format!("crawl {} issues by number (GraphQL)", self.repo), Some(targets.len() as u64));
        let mut outcome = Outcome::Complete;
        let (owner, name) = (self.repo.owner().to_string(), self.repo.name().to_string());
        while !targets.is_empty() {
            let batch: Vec<u64> = targets.iter().take(self.graphql_batch_size as usize).copied().collect();
            let query = issues_by_number_query(&batch);
            let (first, last) = (batch[0], batch[batch.len() - 1]);
            let key = self.query_key("IssuesByNumber", &format!("#{first}..#{last}"));
            let variables = json!({"owner": owner, "name": name});
            let answer = match self
                .query_once::<RepositoryData<BTreeMap<String, Option<Value>>>>(
                    "IssuesByNumber",
                    &query,
                    &key,
                    &variables,
                )
                .await?
            {
                Answer::Data(answer) => answer,
                Answer::TooLarge if self.graphql_batch_size > 1 => {
                    self.graphql_batch_size = (self.graphql_batch_size / 2).max(1);
                    tracing::warn!(
                        repo = %self.repo,
                        batch = self.graphql_batch_size,
                        "GitHub found the query too large; asking for {} issues per query from now on",
                        self.graphql_batch_size
                    );
                    continue;
                }
                Answer::TooLarge => {
                    let error = GithubError::Graphql {
                        url: self.client.graphql_url(),
                        operation: "IssuesByNumber".into(),
                        message: format!("issue #{first} is too large for GitHub to answer"),
                    };
                    self.record_failure(&key, &error)?;
                    outcome = Outcome::Incomplete;
                    targets.drain(..batch.len());
                    continue;
                }
                Answer::Failed => {
                    outcome = Outcome::Incomplete;
                    targets.drain(..batch.len());
                    continue;
                }
            };
            let Some(repository) = self.answered_repository(answer.data.repository, "IssuesByNumber", &key)? else {
                outcome = Outcome::Incomplete;
                break;
            };
            let mut entries = Vec::new();
            let mut pulls = Vec::new();
            let mut open_pulls = BTreeSet::new();
            for (_, value) in repository {
                let Some(value) = value else { continue };
                match referenced(value) {
                    Ok(Referenced::Issue(entry)) => entries.push(*entry),
                    Ok(Referenced::Pull(pull)) if pull.state.eq_ignore_ascii_case("open") => {
                        open_pulls.insert(pull.number);
                    }
                    Ok(Referenced::Pull(pull)) => pulls.push(pull),
                    Err(error) => {
                        tracing::warn!(repo = %self.repo, "skipping an issue of an unexpected shape: {error}")
                    }
                }
            }
            if !self.complete_comments(&mut entries).await? {
                outcome = Outcome::Incomplete;
                targets.drain(..batch.len());
                continue;
            }
            // Numbers that resolve to nothing are done too; an open PR may yet close.
            cursor.done.extend(batch.iter().filter(|number| !open_pulls.contains(number)));
            let unmerged: Vec<PullStateNode> = pulls.into_iter().filter(|pull| pull.state == "CLOSED").collect();
            let checkpoint = self.checkpoint(REFERENCED, &cursor);
            self.store_issues(&entries, &unmerged, &[checkpoint], &[key])?;
            self.reporter.advance(batch.len() as u64);
            targets.drain(..batch.len());
        }
        self.reporter.finish();
        Ok(outcome)
    }
}

/// An `issueOrPullRequest` answer as an issue or a PR.
fn referenced(value: Value) -> Result<Referenced, serde_json::Error> {
    if value.get("__typename").and_then(Value::as_str) == Some("PullRequest") {
        return Ok(Referenced::Pull(serde_json::from_value(value)?));
    }
    Ok(Referenced::Issue(Box::new(issue_entry(serde_json::from_value::<IssueNode>(value)?))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_nodes_become_raw_pull_requests_with_their_references() {
        let node: PullNode = serde_json::from_value(json!({
            "number": 7, "title": "Fix", "body": "Fixes #3", "state": "MERGED",
            "createdAt": "2024-01-01T00:00:00Z", "updatedAt": "2024-01-02T00:00:00Z",
            "mergedAt": "2024-01-02T00:00:00Z", "closedAt": "2024-01-02T00:00:00Z",
            "baseRefName": "main", "baseRefOid": "a".repeat(40), "headRefName": "fix", "headRefOid": "b".repeat(40),
            "mergeCommit": {"oid": "c".repeat(40)}, "author": {"login": "dev"},
            "labels": {"nodes": [{"name": "bug"}]},
            "closingIssuesReferences": {"nodes": [
                {"number": 3, "repository": {"nameWithOwner": "Acme/Widgets"}},
                {"number": 9, "repository": {"nameWithOwner": "other/repo"}}
            ]},
            "commits": {"nodes": [{"commit": {"message": "fix\n\nsee #5 and other/repo#6"}}]}
        }))
        .unwrap();
        let entry = pull_entry(node, &"acme/widgets".parse().unwrap());
        assert_eq!(entry.closing, vec![3]);
        assert_eq!(entry.commit_mentions, vec![5]);
        assert_eq!(entry.pull.state, "closed");
        assert_eq!(entry.pull.merge_commit_sha, Some("c".repeat(40)));
        assert_eq!(entry.pull.labels, vec!["bug".to_string()]);
        assert_eq!(entry.pull.author.as_deref(), Some("dev"));
    }

    #[test]
    fn issue_nodes_keep_their_comments_and_where_they_continue() {
        let node: IssueNode = serde_json::from_value(json!({
            "number": 3, "title": "Bug", "body": null, "state": "CLOSED",
            "createdAt": "2024-01-01T00:00:00Z", "updatedAt": "2024-01-02T00:00:00Z", "closedAt": null,
            "author": null, "labels": {"nodes": []},
            "comments": {"totalCount": 101, "pageInfo": {"hasNextPage": true, "endCursor": "c100"},
                "nodes": [{"databaseId": 11, "body": "hi", "createdAt": "2024-01-01T01:00:00Z",
                    "updatedAt": "2024-01-01T01:00:00Z", "author": {"login": "x"}}]}
        }))
        .unwrap();
        let entry = issue_entry(node);
        assert_eq!(entry.issue.state, "closed");
        assert_eq!(entry.comments.len(), 1);
        assert_eq!(entry.comments[0].issue_number, 3);
        assert_eq!(entry.more_comments_after.as_deref(), Some("c100"));
    }

    #[test]
    fn auto_means_graphql_with_a_token_and_rest_without() {
        use crate::crawl::CrawlApi;
        let options = |api| super::super::CrawlOptions {
            since: None,
            until: None,
            per_page: 100,
            per_issue_fetch_ratio: 20,
            api,
            graphql_page_size: 100,
            graphql_issues_per_query: 100,
        };
        assert_eq!(options(CrawlApi::Auto).resolved_api(true), CrawlApi::Graphql);
        assert_eq!(options(CrawlApi::Auto).resolved_api(false), CrawlApi::Rest);
        assert_eq!(options(CrawlApi::Rest).resolved_api(true), CrawlApi::Rest);
        assert_eq!(options(CrawlApi::Graphql).resolved_api(false), CrawlApi::Graphql);
    }

    #[test]
    fn issues_by_number_are_aliased_fields_of_one_query() {
        let query = issues_by_number_query(&[4, 17]);
        assert!(query.contains("issue_4: issueOrPullRequest(number: 4)"), "{query}");
        assert!(query.contains("issue_17: issueOrPullRequest(number: 17)"), "{query}");
        assert!(query.contains("rateLimit"), "{query}");
        assert_eq!(query.matches("fragment IssueFields on Issue").count(), 1, "{query}");
    }

    #[test]
    fn the_unmerged_count_is_a_total_without_a_window_and_a_search_of_the_window_with_one() {
        let repo: RepoSlug = "acme/widgets".parse().unwrap();
        let day = |text: &str| Some(text.parse::<chrono::NaiveDate>().unwrap());
        let window = |since, until| Window { since, until };
        assert_eq!(UnmergedCount::for_window(&repo, &window(None, None)), UnmergedCount::Total);
        let search = |since, until| match UnmergedCount::for_window(&repo, &window(since, until)) {
            UnmergedCount::Search(query) => query,
            UnmergedCount::Total => panic!("a window is searched"),
        };
        // `--until` is exclusive; a search range is inclusive.
        assert_eq!(
            search(day("2024-01-01"), day("2024-07-01")),
            "repo:acme/widgets is:pr is:closed is:unmerged created:2024-01-01..2024-06-30"
        );
        assert!(search(day("2024-01-01"), None).ends_with("created:>=2024-01-01"));
        assert!(search(None, day("2024-07-01")).ends_with("created:<2024-07-01"));
        assert!(pulls_query(Some(&UnmergedCount::Total)).contains("closedUnmerged: pullRequests(states: [CLOSED])"));
        assert!(!pulls_query(None).contains("closedUnmerged"));
    }
}
