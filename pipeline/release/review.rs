//! What people decided about a release's tasks (the `review` page): `--reviewed-only`
//! keeps only tasks reviewed and kept, `--exclude-rejected` leaves out rejected ones,
//! and the counts of the released tasks' decisions go to the manifest and the card.
//!
//! A decision counts only for the content it was made on ([`content_hash`] of the task
//! as released): a task whose content changed since is not reviewed, so
//! `--reviewed-only` leaves it out and `--exclude-rejected` keeps it, until someone
//! reviews it again.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::Filters;
use crate::model::Task;
use crate::model::drop_reason::ReleaseDropReason;
use crate::model::review::{Decision, ReviewDecision};
use crate::store::StoreError;
use crate::store::reviews::{self, content_hash};

/// Decisions on the released tasks' current content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewCounts {
    pub kept: usize,
    pub rejected: usize,
    pub needs_work: usize,
    /// Never reviewed, or reviewed on content that has changed since.
    pub not_reviewed: usize,
    /// Decisions per reviewer.
    pub by_reviewer: BTreeMap<String, usize>,
}

impl ReviewCounts {
    pub fn reviewed(&self) -> usize {
        self.kept + self.rejected + self.needs_work
    }
}

/// Applies the review filters to `tasks`; returns the kept tasks and the counts of
/// their decisions, and adds what it left out to `dropped`.
pub fn select(
    connection: &Connection,
    tasks: Vec<Task>,
    filters: &Filters,
    dropped: &mut BTreeMap<String, u64>,
) -> Result<(Vec<Task>, ReviewCounts), StoreError> {
    let decisions = reviews::by_content(connection)?;
    let mut counts = ReviewCounts::default();
    let mut kept = Vec::with_capacity(tasks.len());
    for task in tasks {
        let decision = decision_on(&decisions, &task);
        let reason = match decision.map(|decision| decision.decision) {
            Some(Decision::Reject) if filters.exclude_rejected || filters.reviewed_only => {
                Some(ReleaseDropReason::RejectedInReview)
            }
            Some(Decision::NeedsWork) if filters.reviewed_only => Some(ReleaseDropReason::NeedsWorkInReview),
            None if filters.reviewed_only => Some(ReleaseDropReason::NotReviewed),
            _ => None,
        };
        if let Some(reason) = reason {
            *dropped.entry(reason.as_str().to_string()).or_default() += 1;
            continue;
        }
        match decision {
            Some(decision) => {
                match decision.decision {
                    Decision::Keep => counts.kept += 1,
                    Decision::Reject => counts.rejected += 1,
                    Decision::NeedsWork => counts.needs_work += 1,
                }
                *counts.by_reviewer.entry(decision.reviewer.clone()).or_default() += 1;
            }
            None => counts.not_reviewed += 1,
        }
        kept.push(task);
    }
    Ok((kept, counts))
}

/// The decision on the task's content as it would be released.
fn decision_on<'a>(
    decisions: &'a HashMap<(String, String), ReviewDecision>,
    task: &Task,
) -> Option<&'a ReviewDecision> {
    if decisions.is_empty() {
        return None;
    }
    let (row, _) = super::task_row(task);
    decisions.get(&(row.instance_id.clone(), content_hash(&row)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Task;
    use crate::model::review::Decision;
    use crate::store::Store;
    use crate::store::reviews::{NewDecision, save};

    fn task(number: u64) -> Task {
        Task::example("acme/widgets", number)
    }

    fn decide(store: &mut Store, task: &Task, decision: Decision, reviewer: &str) {
        let (row, _) = super::super::task_row(task);
        let hash = content_hash(&row);
        let new = NewDecision {
            instance_id: &row.instance_id,
            content_hash: &hash,
            decision,
            reason: (decision == Decision::Reject).then_some("issue_too_thin"),
            note: "",
            reviewer,
            seconds_spent: 5.0,
        };
        store.transaction(|tx| save(tx, &new)).unwrap();
    }

    #[test]
    fn review_filters_count_only_decisions_on_the_current_content() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open_in(dir.path()).unwrap();
        let tasks: Vec<Task> = (1..=5).map(task).collect();
        decide(&mut store, &tasks[0], Decision::Keep, "ana");
        decide(&mut store, &tasks[1], Decision::Reject, "ana");
        decide(&mut store, &tasks[2], Decision::NeedsWork, "bo");
        // Kept, then its gold patch changed: not reviewed any more.
        decide(&mut store, &tasks[3], Decision::Keep, "bo");
        let mut tasks = tasks;
        tasks[3].candidate.patch.push_str(" changed");

        let select_with = |reviewed_only: bool, exclude_rejected: bool| {
            let filters = Filters { reviewed_only, exclude_rejected, ..Filters::default() };
            let mut dropped = BTreeMap::new();
            let (kept, counts) = select(store.connection(), tasks.clone(), &filters, &mut dropped).unwrap();
            let ids: Vec<u64> = kept.iter().map(|task| task.candidate.pull_number).collect();
            (ids, counts, dropped)
        };

        let (ids, counts, dropped) = select_with(false, false);
        assert_eq!(ids, [1, 2, 3, 4, 5]);
        assert_eq!((counts.kept, counts.rejected, counts.needs_work, counts.not_reviewed), (1, 1, 1, 2));
        assert_eq!(counts.by_reviewer, BTreeMap::from([("ana".to_string(), 2), ("bo".to_string(), 1)]));
        assert!(dropped.is_empty());

        let (ids, counts, dropped) = select_with(false, true);
        assert_eq!(ids, [1, 3, 4, 5]);
        assert_eq!(counts.rejected, 0);
        assert_eq!(dropped, BTreeMap::from([("rejected_in_review".to_string(), 1)]));

        let (ids, counts, dropped) = select_with(true, false);
        assert_eq!(ids, [1]);
        assert_eq!((counts.kept, counts.reviewed()), (1, 1));
        assert_eq!(
            dropped,
            BTreeMap::from([
                ("needs_work_in_review".to_string(), 1),
                ("not_reviewed".to_string(), 2),
                ("rejected_in_review".to_string(), 1),
            ])
        );
    }
}
