//! Task candidates (written by extract) and tasks (written by validate), and the
//! invalidation that ties them: when extract changes or drops a candidate, everything
//! validate derived from it goes in the same transaction ([`forget_validation`]).

use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, StoreError, now};
use crate::model::{Candidate, RepoSlug, Stage, Task};

fn decode<T: serde::de::DeserializeOwned>(kind: &'static str, key: &str, data: &str) -> Result<T> {
    serde_json::from_str(data).map_err(|source| StoreError::Decode { kind, key: key.to_string(), source })
}

pub fn upsert_candidate(connection: &Connection, candidate: &Candidate) -> Result<()> {
    connection.execute(
        "INSERT INTO candidates (instance_id, repo, pull_number, created_at, version, data, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (instance_id) DO UPDATE SET repo = excluded.repo, pull_number = excluded.pull_number,
            created_at = excluded.created_at, version = excluded.version, data = excluded.data,
            updated_at = excluded.updated_at",
        params![
            candidate.instance_id,
            candidate.repo.to_string(),
            candidate.pull_number,
            crate::model::format_swebench_time(&candidate.created_at),
            candidate.version,
            serde_json::to_string(candidate).expect("candidates serialize"),
            now()
        ],
    )?;
    Ok(())
}

pub fn delete_candidate(connection: &Connection, instance_id: &str) -> Result<()> {
    connection.execute("DELETE FROM candidates WHERE instance_id = ?1", [instance_id])?;
    Ok(())
}

/// Forgets what validate derived from one candidate: its validation runs, its task,
/// its coverage and validate's funnel row (and the screen's record and funnel row of
/// that task), so that `validate` validates it again and `release` no longer
/// publishes it. Environments are keyed by their content, not by
/// the candidate, and stay (other candidates share them). Call it in the transaction
/// that changes or deletes the candidate. Returns whether anything was there.
pub fn forget_validation(connection: &Connection, repo: &RepoSlug, instance_id: &str) -> Result<bool> {
    let mut deleted = 0;
    for query in [
        "DELETE FROM validation_runs WHERE instance_id = ?1",
        "DELETE FROM tasks WHERE instance_id = ?1",
        "DELETE FROM task_coverage WHERE instance_id = ?1",
    ] {
        deleted += connection.execute(query, [instance_id])?;
    }
    let funnel_row = super::funnel::forget(connection, Stage::Validate, repo, instance_id)?;
    let screened = super::screen::forget(connection, instance_id)?;
    let screen_row = super::funnel::forget(connection, Stage::Screen, repo, instance_id)?;
    let probed = super::probe::forget(connection, instance_id)?;
    let probe_row = super::funnel::forget(connection, Stage::Probe, repo, instance_id)?;
    Ok(deleted > 0 || funnel_row || screened || screen_row || probed || probe_row)
}

/// Candidates of the given repositories (all when empty), by instance id.
pub fn candidates(connection: &Connection, repos: &[RepoSlug]) -> Result<Vec<Candidate>> {
    load_by_repo(connection, "SELECT instance_id, repo, data FROM candidates ORDER BY instance_id", "candidate", repos)
}

/// Rows of `(instance_id, repo, data)` from `query`, decoded, for the given
/// repositories (all when empty).
fn load_by_repo<T: serde::de::DeserializeOwned>(
    connection: &Connection,
    query: &str,
    kind: &'static str,
    repos: &[RepoSlug],
) -> Result<Vec<T>> {
    let mut statement = connection.prepare(query)?;
    let wanted: Vec<String> = repos.iter().map(ToString::to_string).collect();
    let rows = statement
        .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (instance_id, repo, data) = row?;
        if wanted.is_empty() || wanted.contains(&repo) {
            out.push(decode(kind, &instance_id, &data)?);
        }
    }
    Ok(out)
}

pub fn candidate(connection: &Connection, instance_id: &str) -> Result<Option<Candidate>> {
    let data: Option<String> = connection
        .query_row("SELECT data FROM candidates WHERE instance_id = ?1", [instance_id], |row| row.get(0))
        .optional()?;
    data.map(|data| decode("candidate", instance_id, &data)).transpose()
}

pub fn upsert_task(connection: &Connection, task: &Task) -> Result<()> {
    let candidate = &task.candidate;
    connection.execute(
        "INSERT INTO tasks (instance_id, repo, created_at, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (instance_id) DO UPDATE SET repo = excluded.repo, created_at = excluded.created_at,
            data = excluded.data, updated_at = excluded.updated_at",
        params![
            candidate.instance_id,
            candidate.repo.to_string(),
            crate::model::format_swebench_time(&candidate.created_at),
            serde_json::to_string(task).expect("tasks serialize"),
            now()
        ],
    )?;
    Ok(())
}

pub fn delete_task(connection: &Connection, instance_id: &str) -> Result<()> {
    connection.execute("DELETE FROM tasks WHERE instance_id = ?1", [instance_id])?;
    Ok(())
}

/// Tasks of the given repositories (all when empty), by instance id.
pub fn tasks(connection: &Connection, repos: &[RepoSlug]) -> Result<Vec<Task>> {
    load_by_repo(connection, "SELECT instance_id, repo, data FROM tasks ORDER BY instance_id", "task", repos)
}
