//! Raw GitHub objects (pull requests, issues, issue comments, what a pull request
//! refers to according to GitHub), per-repository crawl
//! checkpoints, the HTTP cache of conditional requests, and requests that failed
//! for good. Written by crawl, read by extract.
//!
//! Objects are stored whole as JSON in `data`, with the columns that queries filter
//! on beside them. Every write is an upsert keyed by the object's GitHub identity,
//! so fetching a page twice never duplicates a row.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, StoreError, now};
use crate::model::{CrawlCheckpoint, RawComment, RawIssue, RawPullRequest, RepoSlug};

fn encode<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("model types always serialize")
}

fn decode<T: serde::de::DeserializeOwned>(kind: &'static str, key: String, data: &str) -> Result<T> {
    serde_json::from_str(data).map_err(|source| StoreError::Decode { kind, key, source })
}

fn time(value: &DateTime<Utc>) -> String {
    value.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn upsert_pull_request(connection: &Connection, repo: &RepoSlug, pull_request: &RawPullRequest) -> Result<()> {
    connection.execute(
        "INSERT INTO pull_requests (repo, number, merged, created_at, updated_at, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (repo, number) DO UPDATE SET merged = excluded.merged,
            created_at = excluded.created_at, updated_at = excluded.updated_at, data = excluded.data",
        params![
            repo.to_string(),
            pull_request.number,
            pull_request.merged_at.is_some(),
            time(&pull_request.created_at),
            time(&pull_request.updated_at),
            encode(pull_request)
        ],
    )?;
    Ok(())
}

/// Every stored pull request of a repository, by number.
pub fn pull_requests(connection: &Connection, repo: &RepoSlug) -> Result<Vec<RawPullRequest>> {
    let mut statement = connection.prepare("SELECT number, data FROM pull_requests WHERE repo = ?1 ORDER BY number")?;
    let rows = statement.query_map([repo.to_string()], |row| Ok((row.get::<_, u64>(0)?, row.get::<_, String>(1)?)))?;
    rows.map(|row| {
        let (number, data) = row?;
        decode("pull request", format!("{repo}#{number}"), &data)
    })
    .collect()
}

pub fn pull_request(connection: &Connection, repo: &RepoSlug, number: u64) -> Result<Option<RawPullRequest>> {
    by_number(connection, "pull_requests", "pull request", repo, number)
}

/// The object numbered `number` in `repo` that `table` (keyed by repository and
/// number, as pull requests and issues are) holds, decoded as a `kind`.
fn by_number<T: serde::de::DeserializeOwned>(
    connection: &Connection,
    table: &'static str,
    kind: &'static str,
    repo: &RepoSlug,
    number: u64,
) -> Result<Option<T>> {
    let data: Option<String> = connection
        .query_row(
            &format!("SELECT data FROM {table} WHERE repo = ?1 AND number = ?2"),
            params![repo.to_string(), number],
            |row| row.get(0),
        )
        .optional()?;
    data.map(|data| decode(kind, format!("{repo}#{number}"), &data)).transpose()
}

pub fn upsert_issue(connection: &Connection, repo: &RepoSlug, issue: &RawIssue) -> Result<()> {
    connection.execute(
        "INSERT INTO issues (repo, number, updated_at, data) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (repo, number) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data",
        params![repo.to_string(), issue.number, time(&issue.updated_at), encode(issue)],
    )?;
    Ok(())
}

pub fn issue(connection: &Connection, repo: &RepoSlug, number: u64) -> Result<Option<RawIssue>> {
    by_number(connection, "issues", "issue", repo, number)
}

pub fn upsert_comment(connection: &Connection, repo: &RepoSlug, comment: &RawComment) -> Result<()> {
    connection.execute(
        "INSERT INTO issue_comments (repo, id, issue_number, created_at, data) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (repo, id) DO UPDATE SET issue_number = excluded.issue_number,
            created_at = excluded.created_at, data = excluded.data",
        params![repo.to_string(), comment.id, comment.issue_number, time(&comment.created_at), encode(comment)],
    )?;
    Ok(())
}

/// The comments of one issue, oldest first.
pub fn comments(connection: &Connection, repo: &RepoSlug, issue_number: u64) -> Result<Vec<RawComment>> {
    let mut statement = connection
        .prepare("SELECT id, data FROM issue_comments WHERE repo = ?1 AND issue_number = ?2 ORDER BY created_at, id")?;
    let rows = statement.query_map(params![repo.to_string(), issue_number], |row| {
        Ok((row.get::<_, u64>(0)?, row.get::<_, String>(1)?))
    })?;
    rows.map(|row| {
        let (id, data) = row?;
        decode("comment", format!("{repo} comment {id}"), &data)
    })
    .collect()
}

crate::spelled::spelled_enum! {
    /// Where a pull request's stored references come from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ReferenceSource {
        /// GitHub's `closingIssuesReferences`: the issues merging the PR closes.
        Closing => "closing",
        /// Issue numbers that the PR's commit messages mention (`#N`, URLs).
        CommitMessage => "commit_message",
    }
}

/// Replaces the references of one source of one pull request.
pub fn replace_pull_request_references(
    connection: &Connection,
    repo: &RepoSlug,
    pull_number: u64,
    source: ReferenceSource,
    issue_numbers: &[u64],
) -> Result<()> {
    connection.execute(
        "DELETE FROM pull_request_references WHERE repo = ?1 AND pull_number = ?2 AND source = ?3",
        params![repo.to_string(), pull_number, source.as_str()],
    )?;
    let mut statement = connection.prepare(
        "INSERT OR IGNORE INTO pull_request_references (repo, pull_number, source, issue_number) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for number in issue_numbers {
        statement.execute(params![repo.to_string(), pull_number, source.as_str(), number])?;
    }
    Ok(())
}

/// The references of one source of every pull request of a repository: pull
/// number -> issue numbers, ascending. PRs without stored references are absent.
pub fn pull_request_references(
    connection: &Connection,
    repo: &RepoSlug,
    source: ReferenceSource,
) -> Result<std::collections::BTreeMap<u64, Vec<u64>>> {
    let mut statement = connection.prepare(
        "SELECT pull_number, issue_number FROM pull_request_references WHERE repo = ?1 AND source = ?2
         ORDER BY pull_number, issue_number",
    )?;
    let rows = statement.query_map(params![repo.to_string(), source.as_str()], |row| {
        Ok((row.get::<_, u64>(0)?, row.get::<_, u64>(1)?))
    })?;
    let mut references: std::collections::BTreeMap<u64, Vec<u64>> = std::collections::BTreeMap::new();
    for row in rows {
        let (pull_number, issue_number) = row?;
        references.entry(pull_number).or_default().push(issue_number);
    }
    Ok(references)
}

pub fn checkpoint(connection: &Connection, repo: &RepoSlug, resource: &str) -> Result<Option<CrawlCheckpoint>> {
    let row: Option<(String, String)> = connection
        .query_row(
            "SELECT cursor, updated_at FROM checkpoints WHERE repo = ?1 AND resource = ?2",
            params![repo.to_string(), resource],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    row.map(|(cursor, updated_at)| {
        let key = format!("{repo} {resource}");
        Ok(CrawlCheckpoint {
            repo: repo.clone(),
            resource: resource.to_string(),
            cursor: decode("checkpoint", key.clone(), &cursor)?,
            updated_at: decode("checkpoint", key, &format!("\"{updated_at}\""))?,
        })
    })
    .transpose()
}

pub fn save_checkpoint(connection: &Connection, checkpoint: &CrawlCheckpoint) -> Result<()> {
    connection.execute(
        "INSERT INTO checkpoints (repo, resource, cursor, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (repo, resource) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
        params![
            checkpoint.repo.to_string(),
            checkpoint.resource,
            encode(&checkpoint.cursor),
            time(&checkpoint.updated_at)
        ],
    )?;
    Ok(())
}

/// A cached answer of a conditional request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedResponse {
    pub etag: String,
    pub body: String,
}

pub fn cached_response(connection: &Connection, url: &str) -> Result<Option<CachedResponse>> {
    Ok(connection
        .query_row("SELECT etag, body FROM http_cache WHERE url = ?1", [url], |row| {
            Ok(CachedResponse { etag: row.get(0)?, body: row.get(1)? })
        })
        .optional()?)
}

pub fn save_cached_response(connection: &Connection, url: &str, response: &CachedResponse) -> Result<()> {
    connection.execute(
        "INSERT INTO http_cache (url, etag, body, fetched_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, body = excluded.body, fetched_at = excluded.fetched_at",
        params![url, response.etag, response.body, now()],
    )?;
    Ok(())
}

/// Records a request that failed for good, so the end of the run can say what is missing.
pub fn record_failed_request(connection: &Connection, repo: &RepoSlug, url: &str, error: &str) -> Result<()> {
    connection.execute(
        "INSERT INTO failed_requests (repo, url, error, failed_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (repo, url) DO UPDATE SET error = excluded.error, failed_at = excluded.failed_at",
        params![repo.to_string(), url, error, now()],
    )?;
    Ok(())
}

/// Forgets a failed request once it has succeeded.
pub fn clear_failed_request(connection: &Connection, repo: &RepoSlug, url: &str) -> Result<()> {
    connection.execute("DELETE FROM failed_requests WHERE repo = ?1 AND url = ?2", params![repo.to_string(), url])?;
    Ok(())
}

pub fn failed_requests(connection: &Connection, repo: &RepoSlug) -> Result<Vec<(String, String)>> {
    let mut statement = connection.prepare("SELECT url, error FROM failed_requests WHERE repo = ?1 ORDER BY url")?;
    let rows = statement.query_map([repo.to_string()], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
