//! Queries of the discover stage: the `repositories` table of candidate repositories.

use rusqlite::{Connection, params};

use super::{Result, now};
use crate::model::RepoSlug;

/// Inserts or refreshes a repository found by `source` (e.g. `discover`).
pub fn upsert_repository(
    connection: &Connection,
    repo: &RepoSlug,
    source: &str,
    data: &serde_json::Value,
) -> Result<()> {
    connection.execute(
        "INSERT INTO repositories (repo, source, data, added_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (repo) DO UPDATE SET source = excluded.source, data = excluded.data",
        params![repo.to_string(), source, data.to_string(), now()],
    )?;
    Ok(())
}

/// Every stored repository with its data, by name.
pub fn repositories(connection: &Connection) -> Result<Vec<(String, serde_json::Value)>> {
    let mut statement = connection.prepare("SELECT repo, data FROM repositories ORDER BY repo")?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (repo, data) = row?;
        out.push((repo, serde_json::from_str(&data).unwrap_or(serde_json::Value::Null)));
    }
    Ok(out)
}
