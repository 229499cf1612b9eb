//! Which tasks a release holds: creation-date window, repositories, and
//! decontamination against other datasets (by instance id, or by gold patch after
//! whitespace normalisation, so a task re-published under another id is caught).
//!
//! The date window is half-open: `created_after D` keeps tasks created on or after
//! `D` 00:00:00 UTC, `created_before D` keeps tasks created before `D` 00:00:00 UTC,
//! so consecutive monthly windows never overlap and never leave a gap.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use chrono::{DateTime, NaiveDate, Utc};
use sha2::{Digest, Sha256};

use crate::dataset::{DatasetError, read_records};
use crate::model::drop_reason::ReleaseDropReason;
use crate::model::{RepoSlug, Task};

/// The selection a release is cut with.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Filters {
    pub created_after: Option<NaiveDate>,
    pub created_before: Option<NaiveDate>,
    pub repos: Vec<RepoSlug>,
    pub exclude_datasets: Vec<PathBuf>,
    /// The screened split (`--max-quality-score`, `--exclude-flag`, `--only-kept`),
    /// applied by [`super::screen::select`].
    #[serde(default)]
    pub screen: super::screen::ScreenFilters,
    /// Only tasks whose mutation score is at least this (`--min-mutation-score`; see
    /// [`super::probe::select`]).
    #[serde(default)]
    pub min_mutation_score: Option<f64>,
    /// Only tasks a person reviewed and kept (`--reviewed-only`; see [`super::review`]).
    #[serde(default)]
    pub reviewed_only: bool,
    /// Leave out tasks a person rejected (`--exclude-rejected`).
    #[serde(default)]
    pub exclude_rejected: bool,
}

/// What other datasets already hold.
#[derive(Debug, Default)]
pub struct Exclusions {
    instance_ids: HashSet<String>,
    patch_hashes: HashSet<[u8; 32]>,
}

impl Exclusions {
    /// Reads the instance ids and gold patches of every dataset (parquet or JSONL).
    pub fn load(paths: &[PathBuf]) -> Result<Exclusions, DatasetError> {
        let mut exclusions = Exclusions::default();
        for path in paths {
            for record in read_records(path)? {
                if let Some(id) = record.get("instance_id").and_then(|value| value.as_str()) {
                    exclusions.instance_ids.insert(id.to_string());
                }
                if let Some(patch) = record.get("patch").and_then(|value| value.as_str()) {
                    if !patch.trim().is_empty() {
                        exclusions.patch_hashes.insert(patch_fingerprint(patch));
                    }
                }
            }
        }
        Ok(exclusions)
    }

    /// Why a task is excluded, if it is.
    pub fn reason(&self, task: &Task) -> Option<ReleaseDropReason> {
        if self.instance_ids.contains(&task.candidate.instance_id) {
            Some(ReleaseDropReason::InstanceIdInExcludedDataset)
        } else if !task.candidate.patch.trim().is_empty()
            && self.patch_hashes.contains(&patch_fingerprint(&task.candidate.patch))
        {
            Some(ReleaseDropReason::PatchInExcludedDataset)
        } else {
            None
        }
    }
}

/// A hash of a diff that ignores whitespace and `index` lines, which differ between
/// tools that produce the same change.
pub fn patch_fingerprint(patch: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for line in patch.lines() {
        if line.starts_with("index ") {
            continue;
        }
        let normalised: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if normalised.is_empty() {
            continue;
        }
        hasher.update(normalised.as_bytes());
        hasher.update(b"\n");
    }
    hasher.finalize().into()
}

fn start_of(day: NaiveDate) -> DateTime<Utc> {
    day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc()
}

/// Applies the filters; returns the kept tasks and counts of dropped ones by reason.
pub fn select(tasks: Vec<Task>, filters: &Filters, exclusions: &Exclusions) -> (Vec<Task>, BTreeMap<String, u64>) {
    let mut dropped: BTreeMap<String, u64> = BTreeMap::new();
    let mut kept = Vec::new();
    for task in tasks {
        let created = task.candidate.created_at;
        let reason = if filters.created_after.is_some_and(|day| created < start_of(day)) {
            Some(ReleaseDropReason::CreatedBeforeWindow)
        } else if filters.created_before.is_some_and(|day| created >= start_of(day)) {
            Some(ReleaseDropReason::CreatedAfterWindow)
        } else if !filters.repos.is_empty() && !filters.repos.contains(&task.candidate.repo) {
            Some(ReleaseDropReason::RepositoryNotSelected)
        } else {
            exclusions.reason(&task)
        };
        match reason {
            Some(reason) => *dropped.entry(reason.as_str().to_string()).or_default() += 1,
            None => kept.push(task),
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_ignores_whitespace_and_index_lines() {
        let a =
            "diff --git a/x.py b/x.py\nindex 1234..5678 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a  = 1\n+a = 2\n";
        let b = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n\n@@ -1 +1 @@\n-a = 1\r\n+a = 2   \n";
        let c = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 3\n";
        assert_eq!(patch_fingerprint(a), patch_fingerprint(b));
        assert_ne!(patch_fingerprint(a), patch_fingerprint(c));
    }
}
