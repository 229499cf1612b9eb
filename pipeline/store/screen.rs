//! The screen's quality records: one per task, keyed by instance id, with the hash of
//! the content it was made from and of the screen that made it (`screen::record`), so
//! that the screen skips a task whose record still holds and `release` uses a record
//! only for the content it describes.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, now};
use crate::model::RepoSlug;
use crate::screen::QualityRecord;

/// The two hashes a task's record was made with, if it has one.
pub fn keys(connection: &Connection, instance_id: &str) -> Result<Option<(String, String)>> {
    Ok(connection
        .query_row(
            "SELECT content_hash, screen_key FROM quality_records WHERE instance_id = ?1",
            [instance_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?)
}

/// Writes (or replaces) a task's record.
pub fn upsert(connection: &Connection, repo: &RepoSlug, record: &QualityRecord) -> Result<()> {
    connection.execute(
        "INSERT INTO quality_records (instance_id, repo, content_hash, screen_key, verdict, score, data, screened_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (instance_id) DO UPDATE SET repo = excluded.repo, content_hash = excluded.content_hash,
            screen_key = excluded.screen_key, verdict = excluded.verdict, score = excluded.score,
            data = excluded.data, screened_at = excluded.screened_at",
        params![
            record.instance_id,
            repo.to_string(),
            record.content_hash,
            record.screen_key,
            record.quality_verdict.as_str(),
            record.quality_score,
            serde_json::to_string(record).expect("records serialize"),
            now()
        ],
    )?;
    Ok(())
}

/// Every record, by instance id.
pub fn all(connection: &Connection) -> Result<BTreeMap<String, QualityRecord>> {
    super::all_by_instance(connection, "quality_records", "quality record")
}

/// Forgets a task's record (its task changed or went away).
pub fn forget(connection: &Connection, instance_id: &str) -> Result<bool> {
    Ok(connection.execute("DELETE FROM quality_records WHERE instance_id = ?1", [instance_id])? > 0)
}

/// How many screened tasks of the given repositories (all when empty) carry each flag.
pub fn flag_counts(connection: &Connection, repos: &[RepoSlug]) -> Result<BTreeMap<String, BTreeMap<String, u64>>> {
    let wanted: Vec<String> = repos.iter().map(ToString::to_string).collect();
    let mut statement = connection.prepare(
        "SELECT q.repo, q.instance_id, q.data FROM quality_records q
         JOIN stage_items s ON s.stage = 'screen' AND s.repo = q.repo AND s.item = q.instance_id",
    )?;
    let rows = statement
        .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?)))?;
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for row in rows {
        let (repo, instance_id, data) = row?;
        if !wanted.is_empty() && !wanted.contains(&repo) {
            continue;
        }
        let record: QualityRecord = super::decode("quality record", &instance_id, &data)?;
        for flag in &record.quality_flags {
            *counts.entry(repo.clone()).or_default().entry(flag.code.as_str().to_string()).or_default() += 1;
        }
    }
    Ok(counts)
}
