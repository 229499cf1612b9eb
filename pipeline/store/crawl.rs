//! Queries of the crawl stage beyond the raw objects of [`super::raw`]: which pull
//! request numbers the crawl has seen, and the counts its summary prints.

use rusqlite::{Connection, params};

use super::Result;
use crate::model::{RepoSlug, Stage};

/// Every pull request number the crawl recorded in the funnel (merged or not).
pub fn crawled_pull_numbers(connection: &Connection, repo: &RepoSlug) -> Result<Vec<u64>> {
    let mut statement = connection.prepare("SELECT item FROM stage_items WHERE stage = ?1 AND repo = ?2")?;
    let rows = statement.query_map(params![Stage::Crawl.as_str(), repo.to_string()], |row| row.get::<_, String>(0))?;
    let mut numbers = Vec::new();
    for row in rows {
        if let Ok(number) = row?.parse::<u64>() {
            numbers.push(number);
        }
    }
    numbers.sort_unstable();
    Ok(numbers)
}

/// What the store holds for one repository.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RawCounts {
    pub pull_requests: u64,
    pub merged_pull_requests: u64,
    pub issues: u64,
    pub comments: u64,
}

pub fn raw_counts(connection: &Connection, repo: &RepoSlug) -> Result<RawCounts> {
    let repo = repo.to_string();
    let count = |sql: &str| -> Result<u64> { Ok(connection.query_row(sql, [&repo], |row| row.get(0))?) };
    Ok(RawCounts {
        pull_requests: count("SELECT COUNT(*) FROM pull_requests WHERE repo = ?1")?,
        merged_pull_requests: count("SELECT COUNT(*) FROM pull_requests WHERE repo = ?1 AND merged")?,
        issues: count("SELECT COUNT(*) FROM issues WHERE repo = ?1")?,
        comments: count("SELECT COUNT(*) FROM issue_comments WHERE repo = ?1")?,
    })
}

/// Forgets every failed request of a repository (when its crawl window changes,
/// the old window's failures are no longer what is missing).
pub fn clear_failed_requests(connection: &Connection, repo: &RepoSlug) -> Result<()> {
    connection.execute("DELETE FROM failed_requests WHERE repo = ?1", [repo.to_string()])?;
    Ok(())
}
