//! The funnel: one row per (stage, repository, item) saying whether the item passed
//! the stage or was dropped, and why. Recording is an upsert, so a stage that redoes
//! an item after a crash, or refreshes it, never counts it twice. Items that a stage
//! only counted (GitHub's `totalCount` of closed-unmerged PRs) are a total per
//! (stage, repository, reason), of which that reason's listed items are a part: the
//! report counts the larger of the two.

use std::collections::BTreeMap;

use rusqlite::{Connection, params};
use serde::Serialize;

use super::{Result, now};
use crate::model::drop_reason::DropReason;
use crate::model::{Rejection, RepoSlug, Stage};

/// Records that `item` passed `stage`.
pub fn record_passed(connection: &Connection, stage: Stage, repo: &RepoSlug, item: &str) -> Result<()> {
    connection.execute(
        "INSERT INTO stage_items (stage, repo, item, outcome, reason, detail, updated_at)
         VALUES (?1, ?2, ?3, 'passed', NULL, NULL, ?4)
         ON CONFLICT (stage, repo, item) DO UPDATE SET
            outcome = 'passed', reason = NULL, detail = NULL, updated_at = excluded.updated_at",
        params![stage.as_str(), repo.to_string(), item, now()],
    )?;
    Ok(())
}

/// Records that an item was dropped at a stage, with the reason.
pub fn record_dropped(connection: &Connection, rejection: &Rejection) -> Result<()> {
    connection.execute(
        "INSERT INTO stage_items (stage, repo, item, outcome, reason, detail, updated_at)
         VALUES (?1, ?2, ?3, 'dropped', ?4, ?5, ?6)
         ON CONFLICT (stage, repo, item) DO UPDATE SET
            outcome = 'dropped', reason = excluded.reason, detail = excluded.detail,
            updated_at = excluded.updated_at",
        params![
            rejection.stage.as_str(),
            rejection.repo.to_string(),
            rejection.item,
            rejection.reason,
            rejection.detail,
            now()
        ],
    )?;
    Ok(())
}

/// Records that `total` items of `repo` were dropped for `reason` (at the stage that
/// owns it), counted rather than listed; the listed ones (see [`record_dropped`]) are
/// among them.
pub fn record_dropped_total(
    connection: &Connection,
    reason: impl Into<DropReason>,
    repo: &RepoSlug,
    total: u64,
) -> Result<()> {
    let reason = reason.into();
    connection.execute(
        "INSERT INTO stage_totals (stage, repo, reason, total, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (stage, repo, reason) DO UPDATE SET total = excluded.total, updated_at = excluded.updated_at",
        params![reason.stage().as_str(), repo.to_string(), reason.as_str(), total, now()],
    )?;
    Ok(())
}

/// Forgets how `stage` treated `item` (its outcome no longer holds, e.g. validate's
/// row of a candidate that extract changed or dropped); returns whether there was one.
pub fn forget(connection: &Connection, stage: Stage, repo: &RepoSlug, item: &str) -> Result<bool> {
    let deleted = connection.execute(
        "DELETE FROM stage_items WHERE stage = ?1 AND repo = ?2 AND item = ?3",
        params![stage.as_str(), repo.to_string(), item],
    )?;
    Ok(deleted > 0)
}

/// How one stage treated one repository's items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageFunnel {
    pub stage: Stage,
    pub entered: u64,
    pub passed: u64,
    pub dropped: u64,
    /// Dropped items by reason code, most frequent first when displayed.
    pub reasons: BTreeMap<String, u64>,
    /// The screen only: how many screened tasks carry each flag (kept ones too; a
    /// task with two flags counts for both).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flags: BTreeMap<String, u64>,
}

impl StageFunnel {
    /// The drop reasons, then (the screen) the flags: `flagged 2; flags: a 3, b 1`.
    pub fn reasons_and_flags(&self) -> String {
        let reasons = crate::model::drop_reason::format_counts(&self.reasons);
        if self.flags.is_empty() {
            return reasons;
        }
        let flags = format!("flags: {}", crate::model::drop_reason::format_counts(&self.flags));
        if reasons.is_empty() { flags } else { format!("{reasons}; {flags}") }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryFunnel {
    pub repo: String,
    pub stages: Vec<StageFunnel>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct FunnelReport {
    pub repositories: Vec<RepositoryFunnel>,
    /// The same counts summed over the repositories.
    pub total: Vec<StageFunnel>,
}

pub(super) fn report(connection: &Connection, repos: &[RepoSlug]) -> Result<FunnelReport> {
    let wanted: Vec<String> = repos.iter().map(ToString::to_string).collect();
    // Listed items, then the counted drops beyond the listed ones.
    let mut statement = connection.prepare(
        "SELECT repo, stage, outcome, COALESCE(reason, ''), COUNT(*)
         FROM stage_items GROUP BY repo, stage, outcome, reason
         UNION ALL
         SELECT repo, stage, 'dropped', reason, unlisted FROM (
             SELECT t.repo, t.stage, t.reason, t.total - (
                 SELECT COUNT(*) FROM stage_items s
                 WHERE s.repo = t.repo AND s.stage = t.stage AND s.outcome = 'dropped' AND s.reason = t.reason
             ) AS unlisted
             FROM stage_totals t
         ) WHERE unlisted > 0
         ORDER BY 1",
    )?;
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, u64>(4)?,
        ))
    })?;

    let mut by_repo: BTreeMap<String, BTreeMap<Stage, StageFunnel>> = BTreeMap::new();
    let mut total_by_stage: BTreeMap<Stage, StageFunnel> = BTreeMap::new();
    for row in rows {
        let (repo, stage, outcome, reason, count) = row?;
        if !wanted.is_empty() && !wanted.contains(&repo) {
            continue;
        }
        // A stage name this build does not know comes from a newer writer; skip it
        // rather than fail the whole report.
        let Ok(stage) = stage.parse::<Stage>() else { continue };
        for funnel in [
            by_repo.entry(repo.clone()).or_default().entry(stage).or_insert_with(|| empty(stage)),
            total_by_stage.entry(stage).or_insert_with(|| empty(stage)),
        ] {
            funnel.entered += count;
            if outcome == "passed" {
                funnel.passed += count;
            } else {
                funnel.dropped += count;
                *funnel.reasons.entry(reason.clone()).or_default() += count;
            }
        }
    }
    // The screen's row also counts its flags, from the quality records.
    for (repo, flags) in super::screen::flag_counts(connection, repos)? {
        for (flag, count) in flags {
            for funnel in [
                by_repo.entry(repo.clone()).or_default().entry(Stage::Screen).or_insert_with(|| empty(Stage::Screen)),
                total_by_stage.entry(Stage::Screen).or_insert_with(|| empty(Stage::Screen)),
            ] {
                *funnel.flags.entry(flag.clone()).or_default() += count;
            }
        }
    }
    Ok(FunnelReport {
        repositories: by_repo
            .into_iter()
            .map(|(repo, stages)| RepositoryFunnel { repo, stages: stages.into_values().collect() })
            .collect(),
        total: total_by_stage.into_values().collect(),
    })
}

fn empty(stage: Stage) -> StageFunnel {
    StageFunnel { stage, entered: 0, passed: 0, dropped: 0, reasons: BTreeMap::new(), flags: BTreeMap::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::drop_reason::CrawlDropReason;

    #[test]
    fn a_counted_total_adds_the_drops_that_were_not_listed_and_never_fewer() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open_in(dir.path()).unwrap();
        let connection = store.connection();
        let repo: RepoSlug = "acme/widgets".parse().unwrap();
        record_passed(connection, Stage::Crawl, &repo, "1").unwrap();
        let listed = Rejection::new(CrawlDropReason::NotMerged, repo.clone(), "2", "closed without being merged");
        record_dropped(connection, &listed).unwrap();
        let crawl =
            |report: &FunnelReport| report.total.iter().find(|stage| stage.stage == Stage::Crawl).cloned().unwrap();

        record_dropped_total(connection, CrawlDropReason::NotMerged, &repo, 5).unwrap();
        let stage = crawl(&report(connection, &[]).unwrap());
        assert_eq!((stage.entered, stage.passed, stage.dropped), (6, 1, 5));
        assert_eq!(stage.reasons.get("not_merged"), Some(&5));

        // A smaller total (more were listed since) never removes listed items.
        record_dropped_total(connection, CrawlDropReason::NotMerged, &repo, 0).unwrap();
        let stage = crawl(&report(connection, &[]).unwrap());
        assert_eq!((stage.entered, stage.dropped), (2, 1));
        // Another repository's totals stay out of a report for this one.
        let other: RepoSlug = "acme/other".parse().unwrap();
        record_dropped_total(connection, CrawlDropReason::NotMerged, &other, 9).unwrap();
        let only = report(connection, std::slice::from_ref(&repo)).unwrap();
        assert_eq!(crawl(&only).dropped, 1);
        assert_eq!(crawl(&report(connection, &[]).unwrap()).dropped, 10);
    }
}
