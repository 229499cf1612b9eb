//! Probe's state: each mutant run as soon as its container ends (so a killed probe
//! resumes without running a finished mutant again), and each task's record once
//! every chosen mutant has a verdict. Both are keyed by the task's probe hash (its
//! content, labels, environment and probe's settings), so a changed task, or a probe
//! with other settings, starts afresh and `release` uses a record only for the
//! content it describes.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, decode, now};
use crate::model::probe::{MutantRun, ProbeOutcome, ProbeRecord, task_hash};
use crate::model::{RepoSlug, Task};

/// Stores mutant runs of a task under `probe_hash` (a run stored before is replaced).
pub fn insert_mutant_runs(
    connection: &Connection,
    instance_id: &str,
    probe_hash: &str,
    runs: &[MutantRun],
) -> Result<()> {
    let mut statement = connection.prepare(
        "INSERT INTO probe_mutant_runs (instance_id, probe_hash, mutant_id, status, data, ran_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (instance_id, probe_hash, mutant_id) DO UPDATE SET status = excluded.status,
            data = excluded.data, ran_at = excluded.ran_at",
    )?;
    for run in runs {
        statement.execute(params![
            instance_id,
            probe_hash,
            run.mutant.id,
            run.status.as_str(),
            serde_json::to_string(run).expect("mutant runs serialize"),
            now()
        ])?;
    }
    Ok(())
}

/// The mutant runs stored for a task under `probe_hash`, by mutant id.
pub fn mutant_runs(
    connection: &Connection,
    instance_id: &str,
    probe_hash: &str,
) -> Result<BTreeMap<String, MutantRun>> {
    let mut statement = connection.prepare(
        "SELECT mutant_id, data FROM probe_mutant_runs WHERE instance_id = ?1 AND probe_hash = ?2 ORDER BY mutant_id",
    )?;
    let rows = statement
        .query_map([instance_id, probe_hash], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
    rows.map(|row| {
        let (mutant_id, data) = row?;
        Ok((mutant_id, decode("mutant run", instance_id, &data)?))
    })
    .collect()
}

/// The probe hash a task's record was made under, if it has one.
pub fn record_hash(connection: &Connection, instance_id: &str) -> Result<Option<String>> {
    Ok(connection
        .query_row("SELECT probe_hash FROM probe_records WHERE instance_id = ?1", [instance_id], |row| row.get(0))
        .optional()?)
}

/// Writes (or replaces) a task's record, made under `probe_hash`; the mutant runs of
/// its other hashes go.
pub fn upsert(connection: &Connection, repo: &RepoSlug, probe_hash: &str, record: &ProbeRecord) -> Result<()> {
    connection.execute(
        "INSERT INTO probe_records (instance_id, repo, probe_hash, mutation_score, survivors, data, probed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (instance_id) DO UPDATE SET repo = excluded.repo, probe_hash = excluded.probe_hash,
            mutation_score = excluded.mutation_score, survivors = excluded.survivors, data = excluded.data,
            probed_at = excluded.probed_at",
        params![
            record.instance_id,
            repo.to_string(),
            probe_hash,
            record.mutation_score,
            record.survivors().len() as i64,
            serde_json::to_string(record).expect("records serialize"),
            now()
        ],
    )?;
    connection.execute(
        "DELETE FROM probe_mutant_runs WHERE instance_id = ?1 AND probe_hash != ?2",
        [record.instance_id.as_str(), probe_hash],
    )?;
    Ok(())
}

/// Every record, by instance id.
pub fn all(connection: &Connection) -> Result<BTreeMap<String, ProbeRecord>> {
    super::all_by_instance(connection, "probe_records", "probe record")
}

/// Probe's outcome of each of `tasks` whose record was made for the task as it is now
/// ([`task_hash`]), by instance id: what the screen, releases and the review page read.
pub fn current_outcomes(connection: &Connection, tasks: &[Task]) -> Result<BTreeMap<String, ProbeOutcome>> {
    let records = all(connection)?;
    Ok(tasks
        .iter()
        .filter_map(|task| {
            let record = records.get(&task.candidate.instance_id)?;
            let now = task_hash(&task.candidate, &task.fail_to_pass, &task.pass_to_pass, task.image.as_deref());
            (record.content_hash == now).then(|| (task.candidate.instance_id.clone(), ProbeOutcome::from(record)))
        })
        .collect())
}

/// A task's record, if it has one.
pub fn record(connection: &Connection, instance_id: &str) -> Result<Option<ProbeRecord>> {
    let data: Option<String> = connection
        .query_row("SELECT data FROM probe_records WHERE instance_id = ?1", [instance_id], |row| row.get(0))
        .optional()?;
    data.map(|data| decode("probe record", instance_id, &data)).transpose()
}

/// Forgets a task's record and mutant runs (its task changed or went away).
pub fn forget(connection: &Connection, instance_id: &str) -> Result<bool> {
    let records = connection.execute("DELETE FROM probe_records WHERE instance_id = ?1", [instance_id])?;
    let runs = connection.execute("DELETE FROM probe_mutant_runs WHERE instance_id = ?1", [instance_id])?;
    Ok(records + runs > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::probe::{Mutant, MutantStatus, MutationOperator};

    fn run(id: &str, status: MutantStatus) -> MutantRun {
        MutantRun {
            mutant: Mutant {
                id: id.into(),
                operator: MutationOperator::DropStatement,
                file: "a.py".into(),
                line: 1,
                function: String::new(),
                change: "x".into(),
                patch: "+x\n".into(),
            },
            status,
            killing_tests: Vec::new(),
            detail: String::new(),
            seconds: 0.5,
        }
    }

    #[test]
    fn mutant_runs_are_kept_per_hash_and_a_record_replaces_the_runs_of_other_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open_in(dir.path()).unwrap();
        let connection = store.connection();
        insert_mutant_runs(connection, "a__b-1", "h1", &[run("m1", MutantStatus::Killed)]).unwrap();
        insert_mutant_runs(
            connection,
            "a__b-1",
            "h2",
            &[run("m1", MutantStatus::Survived), run("m2", MutantStatus::Killed)],
        )
        .unwrap();
        assert_eq!(mutant_runs(connection, "a__b-1", "h1").unwrap().len(), 1);
        assert_eq!(mutant_runs(connection, "a__b-1", "h2").unwrap()["m1"].status, MutantStatus::Survived);
        let runs: Vec<MutantRun> = mutant_runs(connection, "a__b-1", "h2").unwrap().into_values().collect();
        let record = ProbeRecord {
            instance_id: "a__b-1".into(),
            content_hash: "h2".into(),
            probe_key: "k".into(),
            mutation_score: ProbeRecord::score_of(&runs),
            no_score_reason: String::new(),
            candidates: 2,
            runs,
            seconds: 1.0,
        };
        upsert(connection, &"a/b".parse().unwrap(), "h2", &record).unwrap();
        assert_eq!(record_hash(connection, "a__b-1").unwrap().as_deref(), Some("h2"));
        assert!(mutant_runs(connection, "a__b-1", "h1").unwrap().is_empty(), "the other hash's runs are gone");
        assert_eq!(all(connection).unwrap()["a__b-1"], record);
        assert!(forget(connection, "a__b-1").unwrap());
        assert_eq!(super::record(connection, "a__b-1").unwrap(), None);
    }
}
