//! The golden tests' change coverage per task (`validate --coverage`): measured, or
//! failed with the reason (not retried unless the task is validated again).

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::{Result, now};
pub use crate::model::GoldenCoverage;

pub fn upsert(connection: &Connection, instance_id: &str, coverage: &GoldenCoverage) -> Result<()> {
    connection.execute(
        "INSERT INTO task_coverage (instance_id, status, data, measured_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (instance_id) DO UPDATE SET status = excluded.status, data = excluded.data,
            measured_at = excluded.measured_at",
        params![instance_id, coverage.status(), serde_json::to_string(coverage).expect("coverage serializes"), now()],
    )?;
    Ok(())
}

pub fn delete(connection: &Connection, instance_id: &str) -> Result<()> {
    connection.execute("DELETE FROM task_coverage WHERE instance_id = ?1", [instance_id])?;
    Ok(())
}

/// Every task's coverage, by instance id.
pub fn all(connection: &Connection) -> Result<BTreeMap<String, GoldenCoverage>> {
    super::all_by_instance(connection, "task_coverage", "task coverage")
}

/// Labelled tasks with no coverage outcome yet: `validate --coverage` measures them.
pub fn labelled_without_coverage(connection: &Connection) -> Result<std::collections::BTreeSet<String>> {
    let mut statement = connection
        .prepare("SELECT instance_id FROM tasks WHERE instance_id NOT IN (SELECT instance_id FROM task_coverage)")?;
    let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
