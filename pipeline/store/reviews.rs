//! Review decisions (the `review` page; `release --reviewed-only / --exclude-rejected`;
//! `export --stage reviews`): one row per task content, the last write winning.
//!
//! A decision is keyed by the instance id and [`content_hash`], the hash of what a
//! reviewer reads (issue, hints, patches, base commit, the test lists). The same task
//! in another release, or in the store, has the same hash, so its decision follows
//! it; a task whose content changed has another hash and needs review again, while its
//! earlier decisions stay as history. Every write takes the next `revision` of the
//! whole table, which is how a page sees what was decided elsewhere since it looked.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::{Result, StoreError, now};
use crate::model::TaskRow;
use crate::model::review::{Decision, ReviewDecision};

/// The hash of what a reviewer judges in a task row. Length-prefixed parts, so that
/// moving text from one field to the next changes it.
pub fn content_hash(row: &TaskRow) -> String {
    let mut hasher = Sha256::new();
    for part in [
        "review-v1",
        &row.instance_id,
        &row.base_commit,
        &row.problem_statement,
        &row.hints_text,
        &row.patch,
        &row.test_patch,
        &row.fail_to_pass,
        &row.pass_to_pass,
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// A decision to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDecision<'a> {
    pub instance_id: &'a str,
    pub content_hash: &'a str,
    pub decision: Decision,
    pub reason: Option<&'a str>,
    pub note: &'a str,
    pub reviewer: &'a str,
    /// Seconds spent on the task since the page's last decision on it: added to the
    /// stored total.
    pub seconds_spent: f64,
}

/// What [`save`] wrote, and the decision it replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub decision: ReviewDecision,
    pub previous: Option<ReviewDecision>,
}

const COLUMNS: &str =
    "instance_id, content_hash, decision, reason, note, reviewer, seconds_spent, decided_at, revision";

fn decode(row: &rusqlite::Row<'_>) -> rusqlite::Result<(ReviewDecision, String)> {
    let decision: String = row.get(2)?;
    Ok((
        ReviewDecision {
            instance_id: row.get(0)?,
            content_hash: row.get(1)?,
            // Replaced below: a code this build does not know is a decode error.
            decision: Decision::Keep,
            reason: row.get(3)?,
            note: row.get(4)?,
            reviewer: row.get(5)?,
            seconds_spent: row.get(6)?,
            decided_at: row.get(7)?,
            revision: row.get(8)?,
        },
        decision,
    ))
}

fn load(connection: &Connection, query: &str, parameters: impl rusqlite::Params) -> Result<Vec<ReviewDecision>> {
    let mut statement = connection.prepare(query)?;
    let rows = statement.query_map(parameters, decode)?;
    let mut out = Vec::new();
    for row in rows {
        let (mut decision, code) = row?;
        decision.decision = code.parse().map_err(|_| StoreError::Decode {
            kind: "review decision",
            key: format!("{} {}", decision.instance_id, decision.content_hash),
            source: serde::de::Error::custom(format!("unknown decision `{code}`")),
        })?;
        out.push(decision);
    }
    Ok(out)
}

/// Records a decision on one task content (replacing the one before, whoever made
/// it): the time spent is added to the stored total, and the decision takes the next
/// revision. Call it in a write transaction.
pub fn save(connection: &Connection, new: &NewDecision<'_>) -> Result<Saved> {
    let previous = load(
        connection,
        &format!("SELECT {COLUMNS} FROM review_decisions WHERE instance_id = ?1 AND content_hash = ?2"),
        params![new.instance_id, new.content_hash],
    )?
    .pop();
    let revision = latest_revision(connection)? + 1;
    let decision = ReviewDecision {
        instance_id: new.instance_id.to_string(),
        content_hash: new.content_hash.to_string(),
        decision: new.decision,
        reason: new.reason.map(str::to_string),
        note: new.note.to_string(),
        reviewer: new.reviewer.to_string(),
        seconds_spent: previous.as_ref().map_or(0.0, |previous| previous.seconds_spent) + new.seconds_spent.max(0.0),
        decided_at: now(),
        revision,
    };
    connection.execute(
        &format!(
            "INSERT INTO review_decisions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (instance_id, content_hash) DO UPDATE SET decision = excluded.decision,
                reason = excluded.reason, note = excluded.note, reviewer = excluded.reviewer,
                seconds_spent = excluded.seconds_spent, decided_at = excluded.decided_at,
                revision = excluded.revision"
        ),
        params![
            decision.instance_id,
            decision.content_hash,
            decision.decision.as_str(),
            decision.reason,
            decision.note,
            decision.reviewer,
            decision.seconds_spent,
            decision.decided_at,
            decision.revision
        ],
    )?;
    Ok(Saved { decision, previous })
}

/// The highest revision written (0 when nothing was).
pub fn latest_revision(connection: &Connection) -> Result<i64> {
    Ok(connection.query_row("SELECT COALESCE(MAX(revision), 0) FROM review_decisions", [], |row| row.get(0))?)
}

/// Every decision, by instance id then revision.
pub fn all(connection: &Connection) -> Result<Vec<ReviewDecision>> {
    load(connection, &format!("SELECT {COLUMNS} FROM review_decisions ORDER BY instance_id, revision"), [])
}

/// The decisions written after `revision`, oldest first.
pub fn since(connection: &Connection, revision: i64) -> Result<Vec<ReviewDecision>> {
    load(
        connection,
        &format!("SELECT {COLUMNS} FROM review_decisions WHERE revision > ?1 ORDER BY revision"),
        [revision],
    )
}

/// Every decision on one task, whatever content it was about, newest first.
pub fn of_instance(connection: &Connection, instance_id: &str) -> Result<Vec<ReviewDecision>> {
    load(
        connection,
        &format!("SELECT {COLUMNS} FROM review_decisions WHERE instance_id = ?1 ORDER BY revision DESC"),
        [instance_id],
    )
}

/// The decision on exactly this content of a task, if any.
pub fn for_content(connection: &Connection, instance_id: &str, content_hash: &str) -> Result<Option<ReviewDecision>> {
    Ok(load(
        connection,
        &format!("SELECT {COLUMNS} FROM review_decisions WHERE instance_id = ?1 AND content_hash = ?2"),
        params![instance_id, content_hash],
    )?
    .pop())
}

/// Every decision by (instance id, content hash): what a release looks its tasks up in.
pub fn by_content(connection: &Connection) -> Result<HashMap<(String, String), ReviewDecision>> {
    Ok(all(connection)?
        .into_iter()
        .map(|decision| ((decision.instance_id.clone(), decision.content_hash.clone()), decision))
        .collect())
}

/// Whether any decision was ever recorded (cheap: no row is decoded).
pub fn any(connection: &Connection) -> Result<bool> {
    Ok(connection.query_row("SELECT 1 FROM review_decisions LIMIT 1", [], |_| Ok(())).optional()?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn row() -> TaskRow {
        TaskRow {
            instance_id: "a__b-1".into(),
            repo: "a/b".into(),
            base_commit: "a".repeat(40),
            patch: "gold".into(),
            test_patch: "tests".into(),
            problem_statement: "broken\n".into(),
            hints_text: String::new(),
            created_at: "2024-01-01T00:00:00Z".into(),
            version: "1.0".into(),
            fail_to_pass: "[\"t::a\"]".into(),
            pass_to_pass: "[]".into(),
            environment_setup_commit: "e".repeat(40),
        }
    }

    #[test]
    fn the_content_hash_follows_what_a_reviewer_reads_and_nothing_else() {
        let hash = content_hash(&row());
        let mut moved = row();
        moved.created_at = "2025-01-01T00:00:00Z".into();
        moved.version = "2.0".into();
        moved.environment_setup_commit = "f".repeat(40);
        assert_eq!(content_hash(&moved), hash, "dates, versions and environments are not judged");
        let changes: [fn(&mut TaskRow); 7] = [
            |row| row.problem_statement.push('!'),
            |row| row.hints_text.push('!'),
            |row| row.patch.push('!'),
            |row| row.test_patch.push('!'),
            |row| row.base_commit = "b".repeat(40),
            |row| row.fail_to_pass = "[\"t::b\"]".into(),
            |row| row.pass_to_pass = "[\"t::c\"]".into(),
        ];
        for change in changes {
            let mut changed = row();
            change(&mut changed);
            assert_ne!(content_hash(&changed), hash);
        }
        let (mut left, mut right) = (row(), row());
        left.patch = "ab".into();
        left.test_patch = "c".into();
        right.patch = "a".into();
        right.test_patch = "bc".into();
        assert_ne!(content_hash(&left), content_hash(&right));
    }

    #[test]
    fn the_last_write_on_a_content_wins_adds_up_time_and_takes_the_next_revision() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open_in(dir.path()).unwrap();
        let hash = content_hash(&row());
        let first = NewDecision {
            instance_id: "a__b-1",
            content_hash: &hash,
            decision: Decision::Keep,
            reason: None,
            note: "",
            reviewer: "ana",
            seconds_spent: 12.0,
        };
        let saved = store.transaction(|tx| save(tx, &first)).unwrap();
        assert_eq!((saved.decision.revision, saved.previous), (1, None));
        let second = NewDecision {
            decision: Decision::Reject,
            reason: Some("issue_too_thin"),
            note: "no expected behaviour",
            reviewer: "bo",
            seconds_spent: 30.0,
            ..first.clone()
        };
        let saved = store.transaction(|tx| save(tx, &second)).unwrap();
        assert_eq!(saved.previous.as_ref().map(|previous| previous.reviewer.as_str()), Some("ana"));
        assert_eq!(saved.decision.revision, 2);
        assert_eq!(saved.decision.seconds_spent, 42.0);
        let stored = for_content(store.connection(), "a__b-1", &hash).unwrap().unwrap();
        assert_eq!(
            (stored.decision, stored.reason.as_deref(), stored.reviewer.as_str()),
            (Decision::Reject, Some("issue_too_thin"), "bo")
        );

        // Another content of the same task: a decision of its own; the first stays as history.
        let other = NewDecision { content_hash: "other", ..first.clone() };
        store.transaction(|tx| save(tx, &other)).unwrap();
        assert_eq!(of_instance(store.connection(), "a__b-1").unwrap().len(), 2);
        assert_eq!(since(store.connection(), 2).unwrap().len(), 1);
        assert_eq!(latest_revision(store.connection()).unwrap(), 3);
        assert_eq!(by_content(store.connection()).unwrap().len(), 2);
        assert!(any(store.connection()).unwrap());
    }
}
