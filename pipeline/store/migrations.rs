//! Versioned schema migrations. The store's version is SQLite's `user_version`;
//! each migration runs in its own transaction together with the version bump, so a
//! crash mid-migration leaves the store at the previous version, not in between.
//! Migrating is safe when several processes open the same store at once (a writer and
//! `status` on a fresh data dir): see [`migrate`].
//!
//! Append new migrations at the end; never edit one that has been released.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{Result, StoreError};

/// Migration `i` (0-based) brings the store from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: raw GitHub objects, per-repository crawl checkpoints, the HTTP cache.
    r#"
    CREATE TABLE repositories (
        repo TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        added_at TEXT NOT NULL
    );
    CREATE TABLE pull_requests (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        merged INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (repo, number)
    );
    CREATE TABLE issues (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (repo, number)
    );
    CREATE TABLE issue_comments (
        repo TEXT NOT NULL,
        id INTEGER NOT NULL,
        issue_number INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (repo, id)
    );
    CREATE INDEX issue_comments_by_issue ON issue_comments (repo, issue_number, created_at);
    CREATE TABLE checkpoints (
        repo TEXT NOT NULL,
        resource TEXT NOT NULL,
        cursor TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (repo, resource)
    );
    CREATE TABLE http_cache (
        url TEXT PRIMARY KEY,
        etag TEXT NOT NULL,
        body TEXT NOT NULL,
        fetched_at TEXT NOT NULL
    );
    CREATE TABLE failed_requests (
        repo TEXT NOT NULL,
        url TEXT NOT NULL,
        error TEXT NOT NULL,
        failed_at TEXT NOT NULL,
        PRIMARY KEY (repo, url)
    );
    "#,
    // 2: the funnel: every item a stage handled, with the reason when it was dropped.
    r#"
    CREATE TABLE stage_items (
        stage TEXT NOT NULL,
        repo TEXT NOT NULL,
        item TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'dropped')),
        reason TEXT,
        detail TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (stage, repo, item)
    );
    CREATE INDEX stage_items_by_repo ON stage_items (repo, stage);
    "#,
    // 3: stage outputs from extract on: candidates, environments, validation runs,
    // tasks, releases.
    r#"
    CREATE TABLE candidates (
        instance_id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        pull_number INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        version TEXT NOT NULL,
        data TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX candidates_by_repo ON candidates (repo, version);
    CREATE TABLE environments (
        key TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        environment_setup_commit TEXT NOT NULL,
        spec TEXT NOT NULL,
        image TEXT,
        status TEXT NOT NULL,
        detail TEXT,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE validation_runs (
        instance_id TEXT NOT NULL,
        phase TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (instance_id, phase, attempt)
    );
    CREATE TABLE tasks (
        instance_id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE releases (
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        path TEXT NOT NULL,
        manifest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (name, version)
    );
    "#,
    // 4: extract: the fingerprint of the inputs each PR was extracted from, so that a
    // rerun skips PRs whose inputs did not change.
    r#"
    CREATE TABLE extract_fingerprints (
        repo TEXT NOT NULL,
        pull_number INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        PRIMARY KEY (repo, pull_number)
    );
    "#,
    // 5: validate --coverage: per task, the golden tests' change coverage of the gold
    // patch (status `measured` or `failed`, the measurement as JSON).
    r#"
    CREATE TABLE task_coverage (
        instance_id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        data TEXT NOT NULL,
        measured_at TEXT NOT NULL
    );
    "#,
    // 6: validation runs keyed by the content they ran: `content_hash` is the hash of
    // the patches, base commit, environment commit, environment spec and image
    // (`store::validation::run_content_hash`), so a row of `validate --input` with a
    // known instance id but other content runs afresh. Runs stored before have no hash
    // (''): they are kept but never match, so they are treated as stale and run again.
    r#"
    CREATE TABLE validation_runs_by_content (
        instance_id TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        phase TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (instance_id, content_hash, phase, attempt)
    );
    INSERT INTO validation_runs_by_content (instance_id, content_hash, phase, attempt, data, created_at)
        SELECT instance_id, '', phase, attempt, data, created_at FROM validation_runs;
    DROP TABLE validation_runs;
    ALTER TABLE validation_runs_by_content RENAME TO validation_runs;
    "#,
    // 7: what GitHub itself says a pull request refers to (GraphQL crawl): the
    // issues it closes (`closingIssuesReferences`, source `closing`), and issue
    // numbers its commit messages mention (source `commit_message`).
    r#"
    CREATE TABLE pull_request_references (
        repo TEXT NOT NULL,
        pull_number INTEGER NOT NULL,
        source TEXT NOT NULL,
        issue_number INTEGER NOT NULL,
        PRIMARY KEY (repo, pull_number, source, issue_number)
    );
    "#,
    // 8: items a stage dropped that were counted, not listed one by one (the GraphQL
    // crawl counts closed-unmerged PRs from GitHub's `totalCount`): the funnel counts
    // `total` for the reason, of which the reason's `stage_items` rows are a part.
    r#"
    CREATE TABLE stage_totals (
        stage TEXT NOT NULL,
        repo TEXT NOT NULL,
        reason TEXT NOT NULL,
        total INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (stage, repo, reason)
    );
    "#,
    // 9: screen: one quality record per task (flags with evidence, score, verdict,
    // difficulty as JSON), with the hashes of the content and of the screen that made
    // it, so that an unchanged task is not screened again.
    r#"
    CREATE TABLE quality_records (
        instance_id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        screen_key TEXT NOT NULL,
        verdict TEXT NOT NULL,
        score REAL NOT NULL,
        data TEXT NOT NULL,
        screened_at TEXT NOT NULL
    );
    CREATE INDEX quality_records_by_repo ON quality_records (repo);
    "#,
    // 10: review decisions (the `review` page), one per task content: keyed by the
    // instance id and the hash of what the reviewer read (`store::reviews::content_hash`),
    // so that a decision survives new releases of the same task and a changed task needs
    // review again. `revision` grows with every write, for the page to see changes
    // made elsewhere.
    r#"
    CREATE TABLE review_decisions (
        instance_id TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('keep', 'reject', 'needs_work')),
        reason TEXT,
        note TEXT NOT NULL DEFAULT '',
        reviewer TEXT NOT NULL,
        seconds_spent REAL NOT NULL DEFAULT 0,
        decided_at TEXT NOT NULL,
        revision INTEGER NOT NULL,
        PRIMARY KEY (instance_id, content_hash)
    );
    CREATE INDEX review_decisions_by_revision ON review_decisions (revision);
    "#,
    // 11: probe: each task's mutant runs as they finish (so that a killed probe
    // resumes without running a finished mutant again), and its record (the score, the
    // survivors) once every mutant has a verdict; both keyed by the hash of the
    // content and settings they were made with (`probe::probe_hash`).
    r#"
    CREATE TABLE probe_mutant_runs (
        instance_id TEXT NOT NULL,
        probe_hash TEXT NOT NULL,
        mutant_id TEXT NOT NULL,
        status TEXT NOT NULL,
        data TEXT NOT NULL,
        ran_at TEXT NOT NULL,
        PRIMARY KEY (instance_id, probe_hash, mutant_id)
    );
    CREATE TABLE probe_records (
        instance_id TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        probe_hash TEXT NOT NULL,
        mutation_score REAL,
        survivors INTEGER NOT NULL,
        data TEXT NOT NULL,
        probed_at TEXT NOT NULL
    );
    CREATE INDEX probe_records_by_repo ON probe_records (repo);
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(super) fn migrate(connection: &mut Connection, path: &Path, target: u32) -> Result<()> {
    let target = target.min(SCHEMA_VERSION);
    // Up to date (the usual case): no write lock is taken, so opening the store never
    // waits for a writer.
    let found = user_version(connection, path)?;
    if found >= target {
        return Ok(());
    }
    loop {
        // Several processes may open a fresh or older store at once: each migration
        // takes the write lock first (IMMEDIATE; the busy timeout queues the others)
        // and reads the version again inside it, so a migration another process
        // applied meanwhile is seen, not applied twice.
        let migration_error =
            |version: u32| move |source| StoreError::Migrate { path: path.to_path_buf(), version, source };
        let transaction =
            connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(migration_error(found + 1))?;
        let found = user_version(&transaction, path)?;
        if found >= target {
            transaction.commit().map_err(migration_error(found))?;
            return Ok(());
        }
        let version = found + 1;
        transaction.execute_batch(MIGRATIONS[version as usize - 1]).map_err(migration_error(version))?;
        // PRAGMA takes no bound parameters; `version` is our own integer.
        transaction.execute_batch(&format!("PRAGMA user_version = {version}")).map_err(migration_error(version))?;
        transaction.commit().map_err(migration_error(version))?;
        tracing::debug!(path = %path.display(), version, "migrated the state store");
    }
}

/// The store's schema version; an error when it is newer than this build.
fn user_version(connection: &Connection, path: &Path) -> Result<u32> {
    let found: u32 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, supported: SCHEMA_VERSION });
    }
    Ok(found)
}
