//! Queries of the extract stage: which numbers are pull requests and which issues
//! the store holds (for linking), the input fingerprint of each extracted PR (so
//! that a rerun skips PRs whose inputs did not change), and the per-version
//! environment_setup_commit of candidates.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::Result;
use crate::model::{Candidate, RepoSlug};

/// Numbers known to be pull requests: every stored PR (merged or not) and every
/// numeric item that the crawl stage recorded in the funnel.
pub fn pull_request_numbers(connection: &Connection, repo: &RepoSlug) -> Result<HashSet<u64>> {
    let mut numbers = HashSet::new();
    let mut statement = connection.prepare("SELECT number FROM pull_requests WHERE repo = ?1")?;
    for number in statement.query_map([repo.to_string()], |row| row.get::<_, u64>(0))? {
        numbers.insert(number?);
    }
    let mut statement = connection.prepare("SELECT item FROM stage_items WHERE stage = 'crawl' AND repo = ?1")?;
    for item in statement.query_map([repo.to_string()], |row| row.get::<_, String>(0))? {
        if let Ok(number) = item?.trim_start_matches('#').parse::<u64>() {
            numbers.insert(number);
        }
    }
    Ok(numbers)
}

/// Numbers of the issues stored for a repository.
pub fn issue_numbers(connection: &Connection, repo: &RepoSlug) -> Result<HashSet<u64>> {
    let mut statement = connection.prepare("SELECT number FROM issues WHERE repo = ?1")?;
    let rows = statement.query_map([repo.to_string()], |row| row.get::<_, u64>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The fingerprint of the inputs a PR was last extracted from, if it was.
pub fn fingerprint(connection: &Connection, repo: &RepoSlug, pull_number: u64) -> Result<Option<String>> {
    Ok(connection
        .query_row(
            "SELECT f.fingerprint FROM extract_fingerprints f
             JOIN stage_items s ON s.stage = 'extract' AND s.repo = f.repo AND s.item = CAST(f.pull_number AS TEXT)
             WHERE f.repo = ?1 AND f.pull_number = ?2",
            params![repo.to_string(), pull_number],
            |row| row.get(0),
        )
        .optional()?)
}

pub fn save_fingerprint(connection: &Connection, repo: &RepoSlug, pull_number: u64, fingerprint: &str) -> Result<()> {
    connection.execute(
        "INSERT INTO extract_fingerprints (repo, pull_number, fingerprint) VALUES (?1, ?2, ?3)
         ON CONFLICT (repo, pull_number) DO UPDATE SET fingerprint = excluded.fingerprint",
        params![repo.to_string(), pull_number, fingerprint],
    )?;
    Ok(())
}

/// For each version of a repository's candidates, the base_commit of its newest
/// candidate (by PR creation time, then PR number).
pub fn environment_setup_commits(candidates: &[Candidate]) -> BTreeMap<String, String> {
    let mut newest: BTreeMap<String, &Candidate> = BTreeMap::new();
    for candidate in candidates {
        let entry = newest.entry(candidate.version.clone()).or_insert(candidate);
        if (candidate.created_at, candidate.pull_number) > (entry.created_at, entry.pull_number) {
            *entry = candidate;
        }
    }
    newest.into_iter().map(|(version, candidate)| (version, candidate.base_commit.clone())).collect()
}

/// Sets every candidate's environment_setup_commit of a repository from
/// [`environment_setup_commits`]; returns how many candidates changed.
pub fn update_environment_setup_commits(connection: &Connection, repo: &RepoSlug) -> Result<usize> {
    let candidates = super::candidates::candidates(connection, std::slice::from_ref(repo))?;
    let commits = environment_setup_commits(&candidates);
    let mut changed = 0;
    for mut candidate in candidates {
        let commit = &commits[&candidate.version];
        if &candidate.environment_setup_commit != commit {
            candidate.environment_setup_commit = commit.clone();
            super::candidates::upsert_candidate(connection, &candidate)?;
            changed += 1;
        }
    }
    Ok(changed)
}
