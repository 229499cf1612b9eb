//! Validation state: environment images (built or failed, per content key) and
//! validation runs (one row per instance, content, phase and attempt, so a killed
//! `validate` resumes at the first missing attempt).
//!
//! Runs are keyed by the content they ran ([`run_content_hash`]: the patches, the base
//! commit, the environment commit, the environment spec and the image), not by the
//! instance id alone: the same id with another gold patch (a `validate --input` row,
//! a re-extracted candidate) finds no stored runs and runs afresh. Runs stored before
//! the key existed have an empty hash and never match: they are stale.

use std::collections::BTreeSet;

use rusqlite::{Connection, params};
use sha2::{Digest, Sha256};

use super::{Result, now};
use crate::model::{Candidate, EnvironmentSpec, RepoSlug, RunPhase, ValidationRun};

/// Records an environment image: `status` is `built` or `failed`.
#[allow(clippy::too_many_arguments)] // one column each; a struct would only rename them
pub fn record_environment(
    connection: &Connection,
    key: &str,
    repo: &RepoSlug,
    environment_setup_commit: &str,
    spec: &EnvironmentSpec,
    image: Option<&str>,
    status: &str,
    detail: Option<&str>,
) -> Result<()> {
    connection.execute(
        "INSERT INTO environments (key, repo, environment_setup_commit, spec, image, status, detail, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (key) DO UPDATE SET spec = excluded.spec, image = excluded.image, status = excluded.status,
            detail = excluded.detail, updated_at = excluded.updated_at",
        params![
            key,
            repo.to_string(),
            environment_setup_commit,
            serde_json::to_string(spec).expect("specs serialize"),
            image,
            status,
            detail,
            now()
        ],
    )?;
    Ok(())
}

/// An environment whose build failed and that has not been built since (for the
/// same repository and environment commit): what `status` shows, with the diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FailedEnvironment {
    pub repo: String,
    pub environment_setup_commit: String,
    /// The error, with the failing step's last lines and the build log's path.
    pub detail: String,
    pub updated_at: String,
}

/// The environments that failed (to build, or the ladder's check: `unusable`) and
/// were not built since, of `repos` (all when empty), by repository then time.
pub fn failed_environments(connection: &Connection, repos: &[RepoSlug]) -> Result<Vec<FailedEnvironment>> {
    let wanted: Vec<String> = repos.iter().map(ToString::to_string).collect();
    let mut statement = connection.prepare(
        "SELECT repo, environment_setup_commit, COALESCE(detail, ''), updated_at FROM environments AS failed
         WHERE status IN ('failed', 'unusable') AND NOT EXISTS (
            SELECT 1 FROM environments AS built WHERE built.status = 'built' AND built.repo = failed.repo
                AND built.environment_setup_commit = failed.environment_setup_commit
                AND built.updated_at >= failed.updated_at)
         ORDER BY repo, updated_at",
    )?;
    let rows = statement.query_map([], |row| {
        Ok(FailedEnvironment {
            repo: row.get(0)?,
            environment_setup_commit: row.get(1)?,
            detail: row.get(2)?,
            updated_at: row.get(3)?,
        })
    })?;
    let mut failed = Vec::new();
    for row in rows {
        let row = row?;
        if wanted.is_empty() || wanted.contains(&row.repo) {
            failed.push(row);
        }
    }
    Ok(failed)
}

/// How many environments are recorded with `status`.
pub fn count_environments(connection: &Connection, status: &str) -> Result<u64> {
    Ok(connection.query_row("SELECT COUNT(*) FROM environments WHERE status = ?1", [status], |row| row.get(0))?)
}

fn phase_name(phase: RunPhase) -> &'static str {
    match phase {
        RunPhase::Pre => "pre",
        RunPhase::Post => "post",
    }
}

/// The key of stored runs: a hash of everything a run's outcome depends on.
pub fn run_content_hash(candidate: &Candidate, spec: &EnvironmentSpec, image: &str) -> String {
    let mut hasher = Sha256::new();
    // What the spec says of CI is why, not what runs: a run stands when only it changes.
    let spec = serde_json::to_string(&EnvironmentSpec { ci: Vec::new(), ..spec.clone() }).expect("specs serialize");
    for part in [
        "runs-v1",
        &candidate.patch,
        &candidate.test_patch,
        &candidate.base_commit,
        &candidate.environment_setup_commit,
        &spec,
        image,
    ] {
        // Length-prefixed, so that no two different part lists hash alike.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Stores the runs of one attempt (its pre and post run) together, under the hash of
/// the content they ran; runs of the same instance stored under another hash are
/// stale and removed.
pub fn insert_runs(connection: &Connection, content_hash: &str, runs: &[ValidationRun]) -> Result<()> {
    for run in runs {
        connection.execute(
            "DELETE FROM validation_runs WHERE instance_id = ?1 AND content_hash <> ?2",
            params![run.instance_id, content_hash],
        )?;
        connection.execute(
            "INSERT INTO validation_runs (instance_id, content_hash, phase, attempt, data, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (instance_id, content_hash, phase, attempt) DO UPDATE SET
                data = excluded.data, created_at = excluded.created_at",
            params![
                run.instance_id,
                content_hash,
                phase_name(run.phase),
                run.attempt,
                serde_json::to_string(run).expect("runs serialize"),
                now()
            ],
        )?;
    }
    Ok(())
}

/// The stored runs of one instance, whatever content they ran, by phase then attempt.
pub fn runs(connection: &Connection, instance_id: &str) -> Result<Vec<ValidationRun>> {
    load_runs(
        connection,
        "SELECT phase, attempt, data FROM validation_runs WHERE instance_id = ?1 ORDER BY phase, attempt",
        params![instance_id],
        instance_id,
    )
}

/// The stored runs of one instance that ran exactly this content
/// ([`run_content_hash`]), by phase then attempt: the runs that `validate` reuses.
pub fn runs_for_content(connection: &Connection, instance_id: &str, content_hash: &str) -> Result<Vec<ValidationRun>> {
    load_runs(
        connection,
        "SELECT phase, attempt, data FROM validation_runs WHERE instance_id = ?1 AND content_hash = ?2
         ORDER BY phase, attempt",
        params![instance_id, content_hash],
        instance_id,
    )
}

fn load_runs(
    connection: &Connection,
    query: &str,
    parameters: impl rusqlite::Params,
    instance_id: &str,
) -> Result<Vec<ValidationRun>> {
    let mut statement = connection.prepare(query)?;
    let rows = statement
        .query_map(parameters, |row| Ok((row.get::<_, String>(0)?, row.get::<_, u32>(1)?, row.get::<_, String>(2)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (phase, attempt, data) = row?;
        let run: ValidationRun = super::decode("validation run", &format!("{instance_id} {phase} {attempt}"), &data)?;
        out.push(run);
    }
    Ok(out)
}

/// Forgets the runs of one instance (before validating it again from scratch).
pub fn delete_runs(connection: &Connection, instance_id: &str) -> Result<()> {
    connection.execute("DELETE FROM validation_runs WHERE instance_id = ?1", [instance_id])?;
    Ok(())
}

/// Instances that the validate stage has finished (labelled or dropped).
pub fn finished_instances(connection: &Connection) -> Result<BTreeSet<String>> {
    let mut statement = connection.prepare("SELECT item FROM stage_items WHERE stage = 'validate'")?;
    let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The spec of the built environment whose image is `image`.
pub fn environment_spec_for_image(connection: &Connection, image: &str) -> Result<Option<EnvironmentSpec>> {
    let spec: Option<String> = rusqlite::OptionalExtension::optional(connection.query_row(
        "SELECT spec FROM environments WHERE image = ?1 AND status = 'built' ORDER BY updated_at DESC LIMIT 1",
        [image],
        |row| row.get(0),
    ))?;
    spec.map(|spec| super::decode("environment", image, &spec)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate() -> Candidate {
        crate::model::Task::example("a/b", 1).candidate
    }

    #[test]
    fn the_run_key_changes_with_every_part_a_run_depends_on_and_nothing_else() {
        let spec = EnvironmentSpec::default();
        let key = run_content_hash(&candidate(), &spec, "env:1");
        assert_eq!(key, run_content_hash(&candidate(), &spec, "env:1"));
        let mut problem = candidate();
        problem.problem_statement = "other words\n".into();
        assert_eq!(key, run_content_hash(&problem, &spec, "env:1"), "the problem statement runs nothing");
        let changes: [fn(&mut Candidate); 4] = [
            |candidate| candidate.patch.push('x'),
            |candidate| candidate.test_patch.push('x'),
            |candidate| candidate.base_commit = "b".repeat(40),
            |candidate| candidate.environment_setup_commit = "f".repeat(40),
        ];
        for change in changes {
            let mut changed = candidate();
            change(&mut changed);
            assert_ne!(key, run_content_hash(&changed, &spec, "env:1"));
        }
        let other_spec = EnvironmentSpec { runtime: "3.9".into(), ..EnvironmentSpec::default() };
        assert_ne!(key, run_content_hash(&candidate(), &other_spec, "env:1"));
        assert_ne!(key, run_content_hash(&candidate(), &spec, "env:2"));
        // What the spec says of CI is why, not what runs.
        let noted = EnvironmentSpec { ci: vec!["CI starts the service `redis`".into()], ..EnvironmentSpec::default() };
        assert_eq!(key, run_content_hash(&candidate(), &noted, "env:1"), "the CI record runs nothing");
        // Parts are length-prefixed: moving text from one part to the next changes the key.
        let (mut left, mut right) = (candidate(), candidate());
        left.patch = "ab".into();
        left.test_patch = "c".into();
        right.patch = "a".into();
        right.test_patch = "bc".into();
        assert_ne!(run_content_hash(&left, &spec, "env:1"), run_content_hash(&right, &spec, "env:1"));
    }
}
