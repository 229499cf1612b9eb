//! `export`: candidates or tasks of the store written to a JSONL or parquet file, as
//! rows in the SWE-bench format with the release's extra columns ([`EXTRA_COLUMNS`]),
//! sorted by instance id. A candidate is exported as a task with empty FAIL_TO_PASS /
//! PASS_TO_PASS and no validation runs. Unlike a release, an export has no manifest
//! or card and may be overwritten.
//!
//! `--stage reviews` writes the review decisions instead ([`REVIEW_COLUMNS`]), one row
//! per task content judged, with `current` saying whether that is the content the
//! store's task has now.

use std::collections::HashMap;
use std::path::Path;

use super::{EXTRA_COLUMNS, task_row};
use crate::dataset::{Dataset, DatasetError};
use crate::model::{Candidate, Task};
use crate::store::{self, Store, StoreError};

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportStage {
    Candidates,
    Tasks,
    Reviews,
}

impl ExportStage {
    /// The plural noun, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            ExportStage::Candidates => "candidates",
            ExportStage::Tasks => "tasks",
            ExportStage::Reviews => "review decisions",
        }
    }
}

/// The file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Jsonl,
    Parquet,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("failed to export {what}")]
    Write {
        what: &'static str,
        #[source]
        source: DatasetError,
    },
}

/// A candidate as an unvalidated task.
pub fn candidate_as_task(candidate: &Candidate) -> Task {
    Task {
        candidate: candidate.clone(),
        fail_to_pass: Vec::new(),
        pass_to_pass: Vec::new(),
        flaky_tests: Vec::new(),
        needs_network: Vec::new(),
        fail_to_pass_no_result_before: Vec::new(),
        validation_runs: 0,
        image: None,
        environment_rung: None,
    }
}

/// The columns of `export --stage reviews`, every value a string.
pub const REVIEW_COLUMNS: [&str; 10] = [
    "instance_id",
    "content_hash",
    "decision",
    "reason",
    "note",
    "reviewer",
    "seconds_spent",
    "decided_at",
    "revision",
    "current",
];

/// Writes every candidate, task or review decision of the store to `out`; returns
/// how many rows.
pub fn export(store: &Store, stage: ExportStage, format: ExportFormat, out: &Path) -> Result<usize, ExportError> {
    let dataset = match stage {
        ExportStage::Candidates => task_dataset(
            stage,
            &store::candidates::candidates(store.connection(), &[])?.iter().map(candidate_as_task).collect::<Vec<_>>(),
        )?,
        ExportStage::Tasks => task_dataset(stage, &store::candidates::tasks(store.connection(), &[])?)?,
        ExportStage::Reviews => review_dataset(store)?,
    };
    match format {
        ExportFormat::Jsonl => dataset.write_jsonl(out),
        ExportFormat::Parquet => dataset.write_parquet(out),
    }
    .map_err(|source| ExportError::Write { what: stage.noun(), source })?;
    Ok(dataset.rows.len())
}

fn task_dataset(stage: ExportStage, tasks: &[Task]) -> Result<Dataset, ExportError> {
    let mut dataset = Dataset::with_extra_columns(&EXTRA_COLUMNS);
    for task in tasks {
        let (row, extra) = task_row(task);
        dataset.push_task(&row, extra).map_err(|source| ExportError::Write { what: stage.noun(), source })?;
    }
    dataset.sort_by_first_column();
    Ok(dataset)
}

fn review_dataset(store: &Store) -> Result<Dataset, ExportError> {
    let current: HashMap<String, String> = store::candidates::tasks(store.connection(), &[])?
        .iter()
        .map(|task| {
            let (row, _) = task_row(task);
            let hash = store::reviews::content_hash(&row);
            (row.instance_id, hash)
        })
        .collect();
    let mut dataset = Dataset { columns: REVIEW_COLUMNS.iter().map(ToString::to_string).collect(), rows: Vec::new() };
    for decision in store::reviews::all(store.connection())? {
        let is_current = current.get(&decision.instance_id) == Some(&decision.content_hash);
        let values = vec![
            decision.instance_id,
            decision.content_hash,
            decision.decision.as_str().to_string(),
            decision.reason.unwrap_or_default(),
            decision.note,
            decision.reviewer,
            format!("{:.0}", decision.seconds_spent),
            decision.decided_at,
            decision.revision.to_string(),
            is_current.to_string(),
        ];
        dataset.push(values).map_err(|source| ExportError::Write { what: ExportStage::Reviews.noun(), source })?;
    }
    Ok(dataset)
}
